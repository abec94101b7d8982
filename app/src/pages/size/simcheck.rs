//! "Check it with the simulator": runs the fleet simulator at the computed replica count and at
//! one fewer, a slice per animation frame so the page never freezes, and sets what it
//! measured beside the estimate.

use super::state::Calc;
use crate::components::LiveFigure;
use crate::sim_runner::{run_fleets, RunStatus as Status};
use leptos::prelude::*;
use trainer_core::format::{duration, fixed, int, percent, sig};
use trainer_core::sizing::{assumptions, check_fleets, Assumption, SimCheck, SimCheckConfig};

/// What a finished check was run on, to notice when the inputs have moved on since.
#[derive(Clone, Debug, PartialEq)]
struct Outcome {
    query: String,
    rate: f64,
    output_tokens: f64,
    tpot_s: f64,
    batch: f64,
    checks: Vec<SimCheck>,
    /// Where the simulated replica departs from the estimate's assumptions.
    assumptions: Vec<Assumption>,
}

#[component]
pub fn SimCheckPanel(c: Calc) -> impl IntoView {
    let status = RwSignal::new(Status::Idle);
    let outcome: RwSignal<Option<Outcome>> = RwSignal::new(None);
    let start = move |_| {
        let Some((inputs, d)) = c.good.get_untracked() else {
            return;
        };
        if matches!(status.get_untracked(), Status::Running { .. }) {
            return;
        }
        let replicas = d.step("replicas").map_or(1.0, |s| s.value) as u32;
        let fleets = match check_fleets(&inputs, replicas, &SimCheckConfig::DEFAULT) {
            Ok(f) => f,
            Err(e) => {
                status.set(Status::Failed(format!(
                    "The simulator cannot run these inputs: {} {}.",
                    e.field, e.message
                )));
                return;
            }
        };
        let v = |n: &str| inputs.get(n).unwrap_or(0.0);
        let mut meta = Outcome {
            query: c.query_without_reveal(),
            rate: v("rate"),
            output_tokens: v("output_tokens"),
            tpot_s: v("tpot_ms") / 1e3,
            batch: v("batch"),
            checks: Vec::new(),
            assumptions: fleets
                .first()
                .map(|f| assumptions(&inputs, f))
                .unwrap_or_default(),
        };
        outcome.set(None);
        run_fleets(fleets, status, move |runs| {
            meta.checks = runs
                .iter()
                .map(|(f, r)| SimCheck::from_report(f, r))
                .collect();
            let _ = outcome.try_set(Some(meta));
        });
    };
    let running = move || matches!(status.get(), Status::Running { .. });
    let stale = move || outcome.with(|o| o.as_ref().is_some_and(|o| o.query != c.query_tracked()));
    view! {
        <section class="simcheck" aria-labelledby="simcheck-h" data-testid="simcheck">
            <h2 id="simcheck-h">"Check it with the simulator"</h2>
            <p class="muted">
                "Runs the fleet simulator with the same workload, model, GPU and efficiencies for "
                {format!("{} simulated seconds", SimCheckConfig::DEFAULT.duration_s)}
                " at the replica count above and at one replica fewer: Poisson arrivals, the engine's own continuous batching and chunked prefill, the gateway and its streams."
            </p>
            <button class="button primary" data-testid="check-sim" disabled=running on:click=start>
                {move || if running() { "Simulating…" } else { "Check it with the simulator" }}
            </button>
            {move || match status.get() {
                Status::Running { run, runs, progress } => view! {
                    <p class="sim-status" role="status" data-testid="sim-running">
                        {format!("Run {} of {runs}: {} simulated", run + 1, percent(progress))}
                        <progress max="1" value=progress></progress>
                    </p>
                }.into_any(),
                Status::Failed(m) => view! { <p class="field-error" role="alert" data-testid="sim-error">{m}</p> }.into_any(),
                Status::Done { wall_ms, longest_ms } => view! {
                    <p class="muted sim-status" data-testid="sim-time" data-value=format!("{wall_ms}") data-longest=format!("{longest_ms}")>
                        {format!("Simulated in {} of wall time, in slices between frames.", duration(wall_ms / 1e3, 2))}
                    </p>
                }.into_any(),
                Status::Idle => ().into_any(),
            }}
            {move || stale().then(|| view! {
                <p class="stale-note" data-testid="sim-stale">"The inputs have changed since this check: run it again to check them."</p>
            })}
            {move || outcome.get().map(results_view)}
        </section>
    }
}

fn results_view(o: Outcome) -> impl IntoView {
    let rows = o
        .checks
        .iter()
        .map(|k| {
            let mark = |ok: bool| if ok { "meets" } else { "misses" };
            let cls = |ok: bool| if ok { "ok" } else { "miss" };
            let n = k.replicas;
            let spr = k.open_streams / n as f64;
            view! {
                <tr data-testid=format!("sim-row-{n}") data-pass=k.passes().to_string()>
                    <th scope="row">{format!("{n} replica{}", if n == 1 { "" } else { "s" })}</th>
                    <td class=cls(k.ttft_ok()) data-testid=format!("sim-ttft-{n}") data-value=format!("{}", k.ttft_p99_s)>
                        {duration(k.ttft_p99_s, 3)} <span class="mark">{mark(k.ttft_ok())}</span>
                    </td>
                    <td class=cls(k.tpot_ok()) data-testid=format!("sim-tpot-{n}") data-value=format!("{}", k.tpot_p99_s)>
                        {duration(k.tpot_p99_s, 3)} <span class="mark">{mark(k.tpot_ok())}</span>
                    </td>
                    <td class=cls(k.itl_ok()) data-testid=format!("sim-itl-{n}") data-value=format!("{}", k.itl_p99_s)>
                        {duration(k.itl_p99_s, 3)} <span class="mark">{mark(k.itl_ok())}</span>
                    </td>
                    <td data-testid=format!("sim-util-{n}") data-value=format!("{}", k.utilisation)>{percent(k.utilisation)}</td>
                    <td data-testid=format!("sim-spr-{n}") data-value=format!("{spr}")>{fixed(spr, 1)}</td>
                    <td data-testid=format!("sim-verdict-{n}") class=cls(k.passes())>
                        {if k.passes() { "✓ meets the targets" } else if k.rejected > 0 { "✗ turns requests away" } else { "✗ misses a target" }}
                    </td>
                </tr>
            }
        })
        .collect_view();
    let first = o.checks.first().copied();
    let targets = first.map(|k| {
        format!(
            "Targets: p99 server TTFT ≤ {} (the simulator's default; the question sets none) and p99 time per output token ≤ {}. ITL is the engine's gap between two tokens of a stream.",
            duration(k.ttft_target_s, 3),
            duration(k.tpot_target_s, 3)
        )
    });
    let streams = first.map(|k| {
        let reply_est = o.output_tokens * o.tpot_s;
        let lesson = if k.open_streams < k.open_streams_estimate {
            format!(
                "The estimate keeps each reply open {} ({} tokens × {}), as if every token took the whole target. \
                 In the simulation a decode step took {} on average, so a stream stayed open only {} from the gateway's first byte in to its last byte out, \
                 and Little's law on that ({} req/s × {}) gives about the {} streams measured. \
                 With fewer streams each replica decodes a batch of about {} rather than the {} assumed, which shortens each step further.",
                duration(reply_est, 2),
                int(o.output_tokens),
                duration(o.tpot_s, 3),
                duration(k.itl_mean_s, 2),
                duration(k.mean_stream_s, 2),
                sig(o.rate, 3),
                duration(k.mean_stream_s, 2),
                sig(k.open_streams, 3),
                fixed(k.open_streams / k.replicas as f64, 1),
                int(o.batch),
            )
        } else {
            format!(
                "Here the simulated streams stay open longer than the {} the estimate assumes per reply: tokens come slower than the target, so more streams pile up.",
                duration(reply_est, 2)
            )
        };
        view! {
            <div class="streams-compare" data-testid="sim-streams">
                <LiveFigure
                    testid="sim-open-streams"
                    value=k.open_streams
                    shown=sig(k.open_streams, 3)
                    label=format!("open streams, simulated at {} replicas (time-weighted mean)", k.replicas)
                />
                <LiveFigure
                    testid="sim-estimate-streams"
                    value=k.open_streams_estimate
                    shown=sig(k.open_streams_estimate, 3)
                    label="open streams, Little's law at the TPOT target"
                />
                <p class="streams-lesson" data-testid="sim-lesson">{lesson}</p>
            </div>
        }
    });
    // A fleet far short of the load: say what the run saw, not only that targets were missed.
    let shortfall = o
        .checks
        .iter()
        .filter(|k| k.overloaded() || k.timed_out > 0 || k.rejected > 0)
        .map(|k| {
            let mut parts = Vec::new();
            if k.timed_out > 0 {
                parts.push(format!(
                    "{} of {} requests gave up waiting for a first token",
                    int(k.timed_out as f64),
                    int(k.arrived as f64)
                ));
            }
            if k.rejected > 0 {
                parts.push(format!("{} were refused", int(k.rejected as f64)));
            }
            let mut text = format!("At {} replica{}: ", k.replicas, if k.replicas == 1 { "" } else { "s" });
            text.push_str(&parts.join(", and "));
            if let trainer_core::fleet::FleetVerdict::Overloaded { at, .. } = k.verdict {
                if !parts.is_empty() {
                    text.push_str("; ");
                }
                text.push_str(&format!(
                    "the simulation stopped at {} of simulated time, at its work cap, because the queue kept growing",
                    duration(at, 3)
                ));
            }
            text.push_str(". The fleet is far short of this load.");
            view! { <p class="field-error" role="status" data-testid=format!("sim-shortfall-{}", k.replicas)>{text}</p> }
        })
        .collect_view();
    let verdict_note = match (o.checks.first(), o.checks.get(1)) {
        (Some(a), Some(b)) if a.passes() && b.passes() => Some(format!(
            "At {} replicas the fleet still meets the targets: the utilisation ceiling in the estimate is headroom for bursts and failures, not something the average load needs. Whether to keep it is a judgement about risk, which is the point to make in an interview.",
            b.replicas
        )),
        (Some(a), Some(b)) if a.passes() => Some(format!(
            "{} replicas is the smallest fleet that holds: at {} it misses a target.",
            a.replicas, b.replicas
        )),
        (Some(a), _) if !a.passes() => Some(format!(
            "Even {} replicas miss a target: the estimate is optimistic for these inputs (look at which check failed above).",
            a.replicas
        )),
        _ => None,
    };
    let itl_note = first
        .filter(|k| k.tpot_ok() && !k.itl_ok())
        .map(|_| "p99 ITL misses while TPOT meets the target: a step that also carries a new prompt's prefill stretches a few gaps between tokens, and TPOT averages those over the whole reply. Chunked prefill with a smaller chunk would trade some TTFT for smoother streams.");
    let gaps = o
        .assumptions
        .iter()
        .map(|a| {
            let (what, fmt): (&str, fn(f64) -> String) = match a.id {
                "kv_pool" => (
                    "KV pool per replica: the simulator sizes it as vLLM does, from the memory the device reports at 90 % utilisation less the reserve vLLM measures, not from the datasheet's round figure.",
                    |v| format!("{} tokens", int(v)),
                ),
                "decode_step" => (
                    "Decode step at your batch and average context: the simulator adds the fixed cost of every step (launches, sampling) that the arithmetic leaves out, calibrated against published vLLM runs.",
                    |v| duration(v, 3),
                ),
                _ => (
                    "Most sequences in one step: vLLM's default max_num_seqs for this GPU, against the batch the estimate assumes.",
                    |v| int(v),
                ),
            };
            view! {
                <li data-testid=format!("sim-assumption-{}", a.id)>
                    {what} " Estimate " <strong>{fmt(a.estimate)}</strong> ", simulator " <strong>{fmt(a.simulator)}</strong> "."
                </li>
            }
        })
        .collect_view();
    let busy_note = "Utilisation is the share of time a replica had a step in flight. Continuous batching runs steps back to back whenever any stream is open, so it reads high even when each step carries far fewer streams than the batch allows; the streams per replica show how full the steps were.";
    view! {
        <div class="sim-results" data-testid="sim-results">
            <p class="muted">{targets}</p>
            <div class="table-scroll">
                <table class="sim-table">
                    <thead>
                        <tr>
                            <th scope="col">"Fleet"</th>
                            <th scope="col">"p99 TTFT"</th>
                            <th scope="col">"p99 TPOT"</th>
                            <th scope="col">"p99 ITL"</th>
                            <th scope="col">"Utilisation"</th>
                            <th scope="col">"Streams / replica"</th>
                            <th scope="col">"Verdict"</th>
                        </tr>
                    </thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            {shortfall}
            {verdict_note.map(|t| view! { <p data-testid="sim-verdict-note">{t}</p> })}
            {itl_note.map(|t| view! { <p class="muted small" data-testid="sim-itl-note">{t}</p> })}
            <p class="muted small">{busy_note}</p>
            <h4>"Where the simulator's replica differs from the estimate"</h4>
            <ul class="small" data-testid="sim-assumptions">{gaps}</ul>
            {streams}
        </div>
    }
}
