//! The host-memory question's check: the question's chats run on its replicas with host tiers
//! from none to twice the answer (`trainer_course::sizing::host_check_fleets`), in the
//! simulators' workers, and a table of what each tier found cached and how soon first tokens
//! came, with the sentence the runs support.

use super::simcheck::{refused, status_line, words};
use super::state::Calc;
use crate::components::EngineNote;
use crate::sim_runner::{run_fleets, RunStatus as Status};
use crate::text::fill;
use crate::text::format::{duration, gb, percent, sig};
use leptos::prelude::*;
use trainer_course::sizing::{
    host_answer_holds, host_check_fleets, host_check_seconds, host_check_text, host_spare,
    HostCheckText, HostRun, SimCheckConfig,
};
use trainer_engine::fleet::FleetVerdict;

/// What a finished check ran on and measured.
#[derive(Clone, Debug, PartialEq)]
struct Outcome {
    /// The calculator's query when it ran, to notice inputs that have moved on.
    query: String,
    runs: Vec<HostRun>,
}

/// The host-memory question's check (see the module's words).
#[component]
pub fn HostCheck(c: Calc) -> impl IntoView {
    let Some(text) = host_check_text() else {
        return ().into_any();
    };
    let status = RwSignal::new(Status::Idle);
    let outcome: RwSignal<Option<Outcome>> = RwSignal::new(None);
    // The set-up the inputs give: (replicas, new chats a second, simulated seconds).
    let intro = {
        let text = text.clone();
        move || {
            c.good.with(|g| {
                let (inputs, _) = g.as_ref()?;
                let v = |n: &str| inputs.get(n).unwrap_or(0.0);
                let (rate, turns) = (v("rate"), v("turns"));
                let seconds = host_check_seconds(inputs, &SimCheckConfig::DEFAULT);
                let replicas = v("fleet_replicas");
                Some(fill(
                    &text.intro,
                    &[
                        (
                            "replicas",
                            format!(
                                "{} replica{}",
                                replicas,
                                if replicas == 1.0 { "" } else { "s" }
                            ),
                        ),
                        ("chats", sig(rate / turns.max(1.0), 3)),
                        ("seconds", sig(seconds, 3)),
                        ("spare", host_spare()),
                    ],
                ))
            })
        }
    };
    let start = move |_| {
        let Some((inputs, d)) = c.good.get_untracked() else {
            return;
        };
        if matches!(status.get_untracked(), Status::Running { .. }) {
            return;
        }
        let fleets = match host_check_fleets(&inputs, &d, &SimCheckConfig::DEFAULT) {
            Ok(f) => f,
            Err(e) => {
                status.set(Status::Failed(refused(&e)));
                return;
            }
        };
        let arms: Vec<_> = fleets.iter().map(|(a, _)| *a).collect();
        let query = c.query_without_reveal();
        outcome.set(None);
        run_fleets(
            fleets.into_iter().map(|(_, f)| f).collect(),
            status,
            move |runs| {
                let runs = arms
                    .iter()
                    .zip(runs.iter())
                    .map(|(a, (_, r))| HostRun::from_report(*a, r))
                    .collect();
                let _ = outcome.try_set(Some(Outcome { query, runs }));
            },
        );
    };
    let running = move || matches!(status.get(), Status::Running { .. });
    let stale = move || outcome.with(|o| o.as_ref().is_some_and(|o| o.query != c.query_tracked()));
    let title = text.title.clone();
    let button = text.button.clone();
    let stale_text = text.stale.clone();
    view! {
        <section class="simcheck" aria-labelledby="host-check-h" data-testid="host-check">
            <h2 id="host-check-h">{title}</h2>
            <p class="muted" data-testid="host-check-intro">{intro}</p>
            <button class="button primary" data-testid="host-check-run" disabled=running on:click=start>
                {move || if running() { words().check_running.clone() } else { button.clone() }}
            </button>
            {move || status_line(status.get(), "host-check")}
            {move || stale().then(|| view! { <p class="stale-note" data-testid="host-check-stale">{stale_text.clone()}</p> })}
            {move || outcome.get().map(|o| results(&text, o.runs))}
            {move || outcome.with(Option::is_some).then(|| view! {
                <EngineNote testid="host-check-engine" engine=Signal::derive(|| Some(trainer_engine::engine::Engine::Validated))/>
            })}
        </section>
    }
    .into_any()
}

/// The runs' table and the sentences they support.
fn results(t: &HostCheckText, runs: Vec<HostRun>) -> impl IntoView {
    let rows = runs
        .iter()
        .map(|r| {
            let id = r.arm.id;
            view! {
                <tr data-testid=format!("host-row-{id}")>
                    <th scope="row">{t.arm(id)}</th>
                    <td data-testid=format!("host-size-{id}") data-value=format!("{}", r.arm.bytes_per_gpu)>{gb(r.arm.bytes_per_gpu, 3)}</td>
                    <td data-testid=format!("host-gpu-{id}") data-value=format!("{}", r.gpu_hit)>{percent(r.gpu_hit)}</td>
                    <td data-testid=format!("host-host-{id}") data-value=format!("{}", r.host_hit)>{percent(r.host_hit)}</td>
                    <td data-testid=format!("host-p50-{id}") data-value=format!("{}", r.ttft_p50_s)>{duration(r.ttft_p50_s, 3)}</td>
                    <td data-testid=format!("host-p95-{id}") data-value=format!("{}", r.ttft_p95_s)>{duration(r.ttft_p95_s, 3)}</td>
                </tr>
            }
        })
        .collect_view();
    let find = |id: &str| runs.iter().find(|r| r.arm.id == id);
    let mut said = Vec::new();
    match host_answer_holds(&runs) {
        Some((share, holds)) => {
            said.push((
                "host-check-verdict",
                fill(
                    if holds { &t.holds } else { &t.short },
                    &[("share", percent(share)), ("spare", host_spare())],
                ),
                holds,
            ));
            if let (Some(e), Some(a)) = (find("exact"), find("answer")) {
                said.push((
                    "host-check-exact",
                    fill(
                        &t.exact,
                        &[
                            ("exact", percent(e.cached())),
                            ("answer", percent(a.cached())),
                        ],
                    ),
                    holds,
                ));
            }
        }
        None => {
            if let (Some(n), Some(h)) = (find("none"), find("have")) {
                said.push((
                    "host-check-verdict",
                    fill(
                        &t.on_gpus,
                        &[("none", percent(n.cached())), ("have", percent(h.cached()))],
                    ),
                    true,
                ));
            }
        }
    }
    let capped: Vec<String> = runs
        .iter()
        .filter(|r| !matches!(r.verdict, FleetVerdict::Completed))
        .map(|r| t.arm(r.arm.id).to_lowercase())
        .collect();
    if !capped.is_empty() {
        said.push((
            "host-check-capped",
            fill(&t.capped, &[("tiers", capped.join(", "))]),
            false,
        ));
    }
    let said = said
        .into_iter()
        .map(|(testid, s, ok)| {
            view! { <p class="host-said" data-ok=ok.to_string() data-testid=testid>{s}</p> }
        })
        .collect_view();
    view! {
        // The caption shows above the scrolling table (inside it, a phone scrolls it away).
        <p class="muted small" aria-hidden="true">{t.caption.clone()}</p>
        <div class="table-scroll">
            <table class="sim-table" data-testid="host-check-table">
                <caption class="visually-hidden">{t.caption.clone()}</caption>
                <thead>
                    <tr>
                        <th scope="col">{t.col_tier.clone()}</th>
                        <th scope="col">{t.col_size.clone()}</th>
                        <th scope="col">{t.col_gpu.clone()}</th>
                        <th scope="col">{t.col_host.clone()}</th>
                        <th scope="col">{t.col_p50.clone()}</th>
                        <th scope="col">{t.col_p95.clone()}</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        {said}
    }
}
