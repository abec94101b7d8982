//! A probe's live run: the broken design and the fixed one on the same traffic, side by side
//! (`content/probes.toml`), with a link into the lab with that configuration.

use super::use_lesson;
use crate::components::{EngineNote, Link};
use crate::route::Route;
use crate::sim_runner::{run_fleets, RunStatus};
use crate::text::fill;
use crate::text::format::{duration, fixed, int};
use leptos::prelude::*;
use trainer_course::probes::probe;
use trainer_course::sizing::{prompt_prefill, Question};
use trainer_engine::engine::Engine;

/// The probe `id`, run on request.
#[component]
pub fn ProbeRun(id: String) -> impl IntoView {
    let lesson = use_lesson();
    let w = lesson.words.get_value();
    let p = match probe(&id) {
        Ok(p) => p,
        Err(e) => {
            return view! { <p class="field-error" role="alert">{e.to_string()}</p> }.into_any()
        }
    };
    let status = RwSignal::new(RunStatus::Idle);
    let results: RwSignal<Option<[Vec<Option<f64>>; 2]>> = RwSignal::new(None);
    // The engine both arms run on: the scenario's own until the learner picks the other.
    let engine_choice: RwSignal<Option<Engine>> = RwSignal::new(None);
    let ran_on: RwSignal<Option<Engine>> = RwSignal::new(None);
    let p1 = StoredValue::new(p.clone());
    let start = move || {
        if status.get_untracked().running() {
            return;
        }
        let p1 = p1.get_value();
        let mut fleets = match p1.fleets() {
            Ok(f) => f.to_vec(),
            Err(e) => {
                status.set(RunStatus::Failed(e.to_string()));
                return;
            }
        };
        if let Some(e) = engine_choice.get_untracked() {
            fleets.iter_mut().for_each(|f| e.apply(f));
        }
        ran_on.set(fleets.first().and_then(Engine::of_fleet));
        let p2 = p1.clone();
        run_fleets(fleets, status, move |runs| {
            if let [(_, b), (_, f)] = runs.as_slice() {
                let _ = results.try_set(Some([p2.read(b), p2.read(f)]));
            }
        });
    };
    let switch = Callback::new(move |e: Engine| {
        engine_choice.set(Some(e));
        results.set(None);
        start();
    });
    let testid = format!("probe-{}", p.id);
    let caption = fill(&w.probe_caption, &[("horizon", int(p.horizon_s))]);
    let arms = [p.broken.clone(), p.fixed.clone()];
    let w1 = w.clone();
    let running = move || match status.get() {
        RunStatus::Running { run, progress, .. } => Some(view! {
            <p role="status" class="sim-status">
                {fill(&w1.probe_running, &[("arm", arms[run.min(1)].clone())])}
                <progress max="1" value=progress></progress>
            </p>
        }),
        _ => None,
    };
    let failed = move || match status.get() {
        RunStatus::Failed(m) => Some(view! { <p class="field-error" role="alert">{m}</p> }),
        _ => None,
    };
    let p3 = p.clone();
    let w2 = w.clone();
    let tid = testid.clone();
    let table = move || {
        results.get().map(|[b, f]| {
            let rows = p3
                .figures
                .iter()
                .enumerate()
                .map(|(i, fig)| {
                    let key = fig.id == p3.key;
                    view! {
                        <tr class:key=key data-testid=format!("{tid}-row-{}", fig.id)>
                            <th scope="row">{fig.label.clone()}</th>
                            <td data-testid=format!("{tid}-broken-{}", fig.id) data-value=format!("{}", b[i].unwrap_or(f64::NAN))>{fig.show(b[i])}</td>
                            <td data-testid=format!("{tid}-fixed-{}", fig.id) data-value=format!("{}", f[i].unwrap_or(f64::NAN))>{fig.show(f[i])}</td>
                        </tr>
                    }
                })
                .collect_view();
            let ratio = p3.key_index().and_then(|k| match (b[k], f[k]) {
                (Some(x), Some(y)) if y > 0.0 => Some((x / y, p3.figures[k].label.clone())),
                _ => None,
            });
            let none = p3.key_index().and_then(|k| match (b[k], f[k]) {
                (Some(x), Some(y)) if y == 0.0 && x > 0.0 => Some(p3.figures[k].label.clone()),
                _ => None,
            });
            view! {
                <div class="table-wrap">
                    <table class="probe-table">
                        <caption>{caption.clone()}</caption>
                        <thead><tr>
                            <th scope="col">"Figure"</th>
                            <th scope="col">{format!("{} ({})", w2.probe_broken, p3.broken)}</th>
                            <th scope="col">{format!("{} ({})", w2.probe_fixed, p3.fixed)}</th>
                        </tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
                {ratio.map(|(r, label)| view! {
                    <p data-testid=format!("{tid}-ratio") data-value=format!("{r}")>
                        {fill(&w2.probe_ratio, &[("ratio", fixed(r, 1)), ("figure", label)])}
                    </p>
                })}
                {none.map(|label| view! {
                    <p data-testid=format!("{tid}-none")>
                        {fill(&w2.probe_none, &[("figure", label)])}
                    </p>
                })}
            }
        })
    };
    // A long prompt's prefill, from the learner's own prefill time per token.
    let w3 = w.clone();
    let prefill =
        p.prefill_tokens.map(|tokens| {
            let tid = testid.clone();
            move || {
                let q = Question::Fleet;
                prompt_prefill(q, &lesson.inputs(q), tokens).ok().map(|(params, attention)| {
                let t = params + attention;
                view! {
                    <p data-testid=format!("{tid}-prefill") data-value=format!("{t}")
                        data-params=format!("{params}") data-attention=format!("{attention}")>
                        {fill(&w3.probe_prefill, &[
                            ("tokens", int(tokens as f64)),
                            ("time", duration(t, 3)),
                            ("params", duration(params, 3)),
                            ("attention", duration(attention, 3)),
                        ])}
                    </p>
                }
            })
            }
        });
    let lab_query = format!("preset={}&arm={}", p.scenario, p.broken);
    view! {
        <section class="probe" data-testid=testid.clone() aria-label=format!("Live run: {}", p.scenario)>
            {prefill}
            <div class="probe-actions">
                <button class="button primary" data-testid=format!("{testid}-run") disabled=move || status.get().running() on:click=move |_| start()>
                    {w.probe_run.clone()}
                </button>
                <Link to=Route::Lab query=lab_query testid=format!("{testid}-lab") class="button">{w.probe_lab.clone()}</Link>
            </div>
            {running}
            {failed}
            {
                let tid = testid.clone();
                move || results.get().is_some().then(|| view! {
                    <EngineNote testid=format!("{tid}-engine") engine=Signal::derive(move || ran_on.get()) on_switch=switch/>
                })
            }
            {table}
        </section>
    }
    .into_any()
}
