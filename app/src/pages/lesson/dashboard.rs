//! The lesson's dashboard (`content/dashboard.toml`): the seed fleet run on request and read
//! panel by panel under the names the engine and the gateway export, with what each says and
//! when it should page someone.

use super::use_lesson;
use crate::components::{EngineNote, Link};
use crate::route::Route;
use crate::sim_runner::{run_fleets, RunStatus};
use crate::text::fill;
use crate::text::format::int;
use leptos::prelude::*;
use trainer_course::dashboard::{dashboard, Reading};
use trainer_engine::engine::Engine;

/// The dashboard, run on request.
#[component]
pub fn DashboardRun() -> impl IntoView {
    let lesson = use_lesson();
    let w = lesson.words.get_value();
    let d = match dashboard() {
        Ok(d) => d,
        Err(e) => {
            return view! { <p class="field-error" role="alert">{e.to_string()}</p> }.into_any()
        }
    };
    let status = RwSignal::new(RunStatus::Idle);
    let results: RwSignal<Option<Vec<Option<Reading>>>> = RwSignal::new(None);
    let engine_choice: RwSignal<Option<Engine>> = RwSignal::new(None);
    let ran_on: RwSignal<Option<Engine>> = RwSignal::new(None);
    let d1 = StoredValue::new(d.clone());
    let start = move || {
        if status.get_untracked().running() {
            return;
        }
        let d1 = d1.get_value();
        let mut fleet = match d1.fleet() {
            Ok(f) => f,
            Err(e) => {
                status.set(RunStatus::Failed(e.to_string()));
                return;
            }
        };
        if let Some(e) = engine_choice.get_untracked() {
            e.apply(&mut fleet);
        }
        ran_on.set(Engine::of_fleet(&fleet));
        run_fleets(vec![fleet], status, move |runs| {
            if let Some((_, r)) = runs.first() {
                let _ = results.try_set(Some(d1.read(r)));
            }
        });
    };
    let switch = Callback::new(move |e: Engine| {
        engine_choice.set(Some(e));
        results.set(None);
        start();
    });
    let testid = "dashboard".to_string();
    let caption = fill(&w.dashboard_caption, &[("horizon", int(d.horizon_s))]);
    let w1 = w.clone();
    let running = move || match status.get() {
        RunStatus::Running { progress, .. } => Some(view! {
            <p role="status" class="sim-status">
                {w1.dashboard_running.clone()}
                <progress max="1" value=progress></progress>
            </p>
        }),
        _ => None,
    };
    let failed = move || match status.get() {
        RunStatus::Failed(m) => Some(view! { <p class="field-error" role="alert">{m}</p> }),
        _ => None,
    };
    let d2 = d.clone();
    let w2 = w.clone();
    let table = move || {
        results.get().map(|got| {
            let rows = d2
                .panels
                .iter()
                .zip(got)
                .map(|(p, r)| {
                    let id = p.name.replace(':', "-");
                    let (value, peak) = match r {
                        Some(Reading::Value(v)) => (v, v),
                        Some(Reading::Gauge { mean, peak }) => (mean, peak),
                        None => (f64::NAN, f64::NAN),
                    };
                    view! {
                        <tr data-testid=format!("dashboard-row-{id}")>
                            <th scope="row"><code>{p.name.clone()}</code><br/><span class="muted">{p.kind.name()}</span></th>
                            <td>{p.meaning.clone()}</td>
                            <td data-testid=format!("dashboard-value-{id}") data-value=format!("{value}") data-peak=format!("{peak}")>
                                {p.show(r)}<br/><span class="muted">{p.shown.clone()}</span>
                            </td>
                            <td>{p.alert.clone()}</td>
                        </tr>
                    }
                })
                .collect_view();
            view! {
                <div class="table-wrap">
                    <table class="probe-table dashboard-table">
                        <caption>{caption.clone()}</caption>
                        <thead><tr>
                            <th scope="col">{w2.dashboard_metric.clone()}</th>
                            <th scope="col">{w2.dashboard_meaning.clone()}</th>
                            <th scope="col">{w2.dashboard_value.clone()}</th>
                            <th scope="col">{w2.dashboard_alert.clone()}</th>
                        </tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            }
        })
    };
    let lab_query = format!("preset={}", d.scenario);
    view! {
        <section class="probe" data-testid=testid.clone() aria-label=format!("Live dashboard: {}", d.scenario)>
            <div class="probe-actions">
                <button class="button primary" data-testid="dashboard-run" disabled=move || status.get().running() on:click=move |_| start()>
                    {w.dashboard_run.clone()}
                </button>
                <Link to=Route::Lab query=lab_query testid="dashboard-lab".to_string() class="button">{w.dashboard_lab.clone()}</Link>
            </div>
            {running}
            {failed}
            {move || results.get().is_some().then(|| view! {
                <EngineNote testid="dashboard-engine".to_string() engine=Signal::derive(move || ran_on.get()) on_switch=switch/>
            })}
            {table}
        </section>
    }
    .into_any()
}
