//! Drills: fresh random inputs, an estimate of one step graded within a band, then the worked
//! steps. Each attempt is recorded in the learner's progress.

use super::state::Calc;
use crate::progress::use_progress;
use crate::text::format::percent;
use leptos::prelude::*;
use trainer_course::sizing::{Drill, Grade, InputGroup, InputKind};

#[component]
pub fn Drills(c: Calc) -> impl IntoView {
    let q = c.q;
    let store = use_progress();
    // The drill of the seed in the URL, so a link or a reload poses the same one.
    let drill = Memo::new(move |_| c.drill.get().map(|seed| Drill::new(q, seed)));
    let estimate = RwSignal::new(String::new());
    let graded: RwSignal<Option<Result<Grade, String>>> = RwSignal::new(None);
    let new_drill = move |_| {
        c.set_drill(crate::browser::random_seed());
        estimate.set(String::new());
        graded.set(None);
    };
    let check = move || {
        let Some(d) = drill.get_untracked() else {
            return;
        };
        if matches!(graded.get_untracked(), Some(Ok(_))) {
            return;
        }
        match d.grade_text(&estimate.get_untracked()) {
            Some(g) => {
                store.record_drill(q.id(), d.target, g.within_band);
                graded.set(Some(Ok(g)));
            }
            None => graded.set(Some(
                Err("Enter your estimate as a positive number.".into()),
            )),
        }
    };
    let body = move || {
        drill.get().map(|d| {
            let step = d.target_step().cloned();
            let label = step.as_ref().map_or("", |s| s.label);
            let eunit = d.entry_unit().label;
            let given = given_view(&d);
            let result = move || {
                graded.get().map(|g| match g {
                    Err(m) => view! { <p class="field-error" data-testid="drill-error">{m}</p> }.into_any(),
                    Ok(g) => {
                        let shown = step.as_ref().map(|s| s.display.clone()).unwrap_or_default();
                        let off = (g.ratio - 1.0) * 100.0;
                        view! {
                            <p class=if g.within_band { "drill-result ok" } else { "drill-result miss" }
                               data-testid="drill-result" data-correct=g.within_band.to_string()>
                                <strong>{if g.within_band { "Within the band. " } else { "Outside the band. " }}</strong>
                                {format!(
                                    "The answer is {shown}; your estimate is {} {} it (the band is ±{}).",
                                    percent(off.abs() / 100.0),
                                    if off >= 0.0 { "above" } else { "below" },
                                    percent(g.band)
                                )}
                            </p>
                        }
                        .into_any()
                    }
                })
            };
            let worked = move || {
                matches!(graded.get(), Some(Ok(_))).then(|| {
                    let drill_inputs = d.inputs.clone();
                    let steps = d
                        .derivation
                        .steps
                        .iter()
                        .map(|s| {
                            let target = s.id == d.target;
                            view! {
                                <li class:target=target data-testid=format!("drill-step-{}", s.id) data-value=format!("{}", s.value)>
                                    <span class="ws-label">{s.label}</span>
                                    <code class="ws-numbers">{s.substituted.clone()}</code>
                                    <span class="ws-value">{s.display.clone()}</span>
                                </li>
                            }
                        })
                        .collect_view();
                    view! {
                        <div class="drill-worked" data-testid="drill-worked">
                            <h4>"Worked steps for these inputs"</h4>
                            <ol class="worked-steps">{steps}</ol>
                            <button class="button" data-testid="drill-load" on:click=move |_| c.load(drill_inputs.clone())>
                                "Open these inputs in the calculator above"
                            </button>
                        </div>
                    }
                })
            };
            let on_submit = move |ev: leptos::ev::SubmitEvent| {
                ev.prevent_default();
                check();
            };
            view! {
                <div class="drill-card" data-testid="drill-card" data-target=d.target data-seed=d.seed.to_string()>
                    {given}
                    <form class="drill-form" on:submit=on_submit>
                        <label for="drill-answer">
                            "Estimate: " <strong data-testid="drill-target">{label}</strong>
                            {format!(" (accepted within ±{})", percent(d.band))}
                        </label>
                        <div class="field-input">
                            <input id="drill-answer" type="text" inputmode="decimal" autocomplete="off"
                                data-testid="drill-answer"
                                prop:value=move || estimate.get()
                                on:input=move |ev| estimate.set(event_target_value(&ev))/>
                            <span class="unit" data-testid="drill-unit">{eunit}</span>
                        </div>
                        <button class="button primary" type="submit" data-testid="drill-check"
                            disabled=move || matches!(graded.get(), Some(Ok(_)))>"Check my estimate"</button>
                    </form>
                    {result}
                    {worked}
                </div>
            }
        })
    };
    let tally = move || {
        store.progress.with(|p| {
            let mine: Vec<_> = p.drills.iter().filter(|d| d.question == q.id()).collect();
            let right = mine.iter().filter(|d| d.correct).count();
            (right, mine.len())
        })
    };
    view! {
        <section class="drill" aria-labelledby="drill-h" data-testid="drill">
            <h2 id="drill-h">"Drill"</h2>
            <p class="muted">
                "A fresh variant of this question with random but plausible inputs. Estimate the step it asks for, then see the worked steps."
                {move || {
                    let (r, n) = tally();
                    (n > 0).then(|| format!(" So far: {r} of {n} within the band."))
                }}
            </p>
            <button class="button" data-testid="drill-new" on:click=new_drill>
                {move || if drill.with(Option::is_some) { "Another drill" } else { "New drill" }}
            </button>
            {body}
        </section>
    }
}

/// The drill's inputs as a compact list (the model and GPU stand for their shape and datasheet).
fn given_view(d: &Drill) -> impl IntoView {
    let q = d.question;
    let i = &d.inputs;
    let specs = i.specs(q);
    let choice_label = |name: &str, id: &str| {
        specs
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.options.iter().find(|o| o.id == id))
            .map_or_else(|| id.to_string(), |o| o.label.clone())
    };
    let mut items = vec![
        ("Model".to_string(), choice_label("model", i.model())),
        ("GPU".to_string(), choice_label("gpu", i.gpu())),
        ("Weights".to_string(), i.weight_format().label().to_string()),
        ("KV cache".to_string(), i.kv_dtype().label().to_string()),
    ];
    for s in specs.iter() {
        if s.kind == InputKind::Choice || matches!(s.group, InputGroup::Model) {
            continue;
        }
        if matches!(s.name, "peak_tflops" | "hbm_tb_s" | "gpu_mem_gb") {
            continue;
        }
        let Some(shown) = i.shown(q, s.name) else {
            continue;
        };
        items.push((s.label.to_string(), shown));
    }
    let items = items
        .into_iter()
        .map(|(k, v)| view! { <div><dt>{k}</dt><dd>{v}</dd></div> })
        .collect_view();
    view! { <dl class="drill-given" data-testid="drill-given">{items}</dl> }
}
