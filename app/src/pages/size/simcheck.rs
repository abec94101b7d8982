//! "Check it with the simulator": runs the fleet simulator at the computed replica count and at
//! one fewer, a slice per animation frame so the page never freezes, and sets what it
//! measured beside the estimate.

use super::state::Calc;
use crate::components::{ColumnHeads, EngineNote, Figure, SpecSweep, SweepSetup};
use crate::sim_runner::{run_fleets, RunStatus as Status};
use crate::text::fill;
use crate::text::format::{duration, fixed, int, percent, sig};
use leptos::prelude::*;
use trainer_content::words::SizeWords;
use trainer_course::sizing::sweep::Derived;
use trainer_course::sizing::{
    assumptions_for, check_fleets_for, check_replicas, spec_check_fleet, speculation_check_text,
    Assumption, SimCheck, SimCheckConfig, StreamsGap,
};

/// The calculator's sentences (the check's, the misfit banner's, the inputs' summary), built
/// from `content/size-words.toml` by the build (which refuses a file that does not parse).
pub(super) fn words() -> &'static SizeWords {
    static WORDS: std::sync::OnceLock<SizeWords> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| include!(concat!(env!("OUT_DIR"), "/size-words.rs")))
}

/// What a finished check was run on, to notice when the inputs have moved on since.
#[derive(Clone, Debug, PartialEq)]
struct Outcome {
    query: String,
    /// The replica count checked is a budget (the halve-the-cost question), not an answer.
    budget: bool,
    /// The split question's prefill replicas (the rest decode).
    prefill: Option<f64>,
    rate: f64,
    output_tokens: f64,
    tpot_s: f64,
    batch: f64,
    checks: Vec<SimCheck>,
    /// Where the simulated replica departs from the estimate's assumptions.
    assumptions: Vec<Assumption>,
}

/// The speculation question's check: one replica of its inputs swept from a fraction of the
/// crossover rate it worked out to a multiple of it, guessing and not, with the runs' crossover
/// beside the arithmetic's.
#[component]
pub fn SpecCheck(c: Calc) -> impl IntoView {
    let Some(text) = speculation_check_text() else {
        return ().into_any();
    };
    // The set-up, or why the simulator cannot run these inputs.
    let checked = Memo::new(move |_| {
        c.good.with(|g| {
            let (inputs, d) = g.as_ref()?;
            Some(
                spec_check_fleet(inputs, d, &SimCheckConfig::DEFAULT)
                    .map(|config| SweepSetup {
                        config,
                        key: c.query_without_reveal(),
                    })
                    .map_err(|e| format!("{} {}", e.field, e.message)),
            )
        })
    });
    let setup = Memo::new(move |_| checked.with(|r| r.as_ref().and_then(|r| r.clone().ok())));
    let refused = move || checked.with(|r| r.as_ref().and_then(|r| r.clone().err()));
    let derived = Signal::derive(move || {
        c.good.with(|g| {
            let (_, d) = g.as_ref()?;
            Some(Derived {
                rate: d.step("crossover_rate")?.value,
                tpot_s: d.step("crossover_tpot")?.value,
            })
        })
    });
    view! {
        <SpecSweep setup=setup text=text testid="spec-check" derived=derived/>
        {move || refused().map(|m| view! {
            <p class="field-error" role="alert" data-testid="spec-check-error">
                {fill(&words().check_refused, &[("reason", m)])}
            </p>
        })}
        {move || setup.with(Option::is_some).then(|| view! {
            <EngineNote testid="simcheck-engine" engine=Signal::derive(|| Some(trainer_engine::engine::Engine::Validated))/>
        })}
    }
    .into_any()
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
        let q = c.q;
        let replicas = check_replicas(q, &inputs, &d);
        let fleets = match check_fleets_for(q, &inputs, replicas, &SimCheckConfig::DEFAULT) {
            Ok(f) => f,
            Err(e) => {
                status.set(Status::Failed(refused(&e)));
                return;
            }
        };
        let v = |n: &str| inputs.get(n).unwrap_or(0.0);
        let mut meta = Outcome {
            query: c.query_without_reveal(),
            budget: q == trainer_course::sizing::Question::HalveCost,
            prefill: (q == trainer_course::sizing::Question::Split)
                .then(|| d.step("prefill_replicas").map_or(0.0, |s| s.value)),
            rate: v("rate"),
            output_tokens: v("output_tokens"),
            tpot_s: v("tpot_ms") / 1e3,
            // The batch the estimate assumed, or (halving the cost) the one it settled at.
            batch: inputs
                .get("batch")
                .or_else(|| d.step("chosen_batch").map(|s| s.value))
                .unwrap_or(0.0),
            checks: Vec::new(),
            assumptions: fleets
                .first()
                .map(|f| assumptions_for(q, &inputs, f, &d))
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
            <h2 id="simcheck-h">{words().check_title.clone()}</h2>
            <p class="muted">
                {fill(&words().check_intro, &[("seconds", SimCheckConfig::DEFAULT.duration_s.to_string())])}
            </p>
            <button class="button primary" data-testid="check-sim" disabled=running on:click=start>
                {move || if running() { words().check_running.clone() } else { words().check_button.clone() }}
            </button>
            {move || status_line(status.get(), "sim")}
            {move || stale().then(|| view! {
                <p class="stale-note" data-testid="sim-stale">{words().stale.clone()}</p>
            })}
            {move || outcome.get().map(results_view)}
            {move || outcome.with(Option::is_some).then(|| view! {
                <EngineNote testid="simcheck-engine" engine=Signal::derive(|| Some(trainer_engine::engine::Engine::Validated))/>
            })}
        </section>
    }
}

/// Why the simulator cannot run a check of these inputs, as the calculator says it.
pub(super) fn refused(e: &trainer_engine::error::ConfigError) -> String {
    fill(
        &words().check_refused,
        &[("reason", format!("{} {}", e.field, e.message))],
    )
}

/// A check's status as it runs (`{prefix}-running`), fails (`{prefix}-error`) or ends
/// (`{prefix}-time`, with the wall time and the longest read of a worker's reply, ms): the
/// calculator's checks share it.
pub(super) fn status_line(status: Status, prefix: &str) -> AnyView {
    match status {
        Status::Running { run, runs, progress } => view! {
            <p class="sim-status" role="status" data-testid=format!("{prefix}-running")>
                {fill(&words().run_progress, &[
                    ("run", (run + 1).to_string()),
                    ("runs", runs.to_string()),
                    ("progress", percent(progress)),
                ])}
                <progress max="1" value=progress></progress>
            </p>
        }.into_any(),
        Status::Failed(m) => view! { <p class="field-error" role="alert" data-testid=format!("{prefix}-error")>{m}</p> }.into_any(),
        Status::Done { wall_ms, longest_ms } => view! {
            <p class="muted sim-status" data-testid=format!("{prefix}-time") data-value=format!("{wall_ms}") data-longest=format!("{longest_ms}")>
                {fill(&words().wall_time, &[("wall", duration(wall_ms / 1e3, 2))])}
            </p>
        }.into_any(),
        Status::Idle => ().into_any(),
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
        fill(
            &words().targets,
            &[
                ("ttft", duration(k.ttft_target_s, 3)),
                ("tpot", duration(k.tpot_target_s, 3)),
            ],
        )
    });
    let streams = first.map(|k| {
        let reply_est = o.output_tokens * o.tpot_s;
        let batch_seen = k.open_streams / k.replicas.max(1) as f64;
        let lesson = match k.streams_gap() {
            StreamsGap::Sooner => {
                let mut text = fill(
                    &words().streams_shorter,
                    &[
                        ("reply", duration(reply_est, 2)),
                        ("tokens", int(o.output_tokens)),
                        ("tpot", duration(o.tpot_s, 3)),
                        ("itl", duration(k.itl_mean_s, 2)),
                        ("stream", duration(k.mean_stream_s, 2)),
                        ("rate", sig(o.rate, 3)),
                        ("streams", sig(k.open_streams, 3)),
                    ],
                );
                if batch_seen < o.batch {
                    text.push(' ');
                    text.push_str(&fill(
                        &words().streams_smaller_batch,
                        &[
                            ("batch_seen", fixed(batch_seen, 1)),
                            ("batch", int(o.batch)),
                        ],
                    ));
                }
                text
            }
            StreamsGap::NoFewer => fill(
                &words().streams_longer,
                &[("reply", duration(reply_est, 2))],
            ),
            StreamsGap::Lost => words().streams_lost.clone(),
        };
        view! {
            <div class="streams-compare" data-testid="sim-streams">
                <Figure
                    testid="sim-open-streams"
                    value=k.open_streams
                    shown=sig(k.open_streams, 3)
                    label=fill(&words().streams_simulated, &[("replicas", k.replicas.to_string())])
                />
                <Figure
                    testid="sim-estimate-streams"
                    value=k.open_streams_estimate
                    shown=sig(k.open_streams_estimate, 3)
                    label=words().streams_estimated.clone()
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
                parts.push(fill(
                    &words().shortfall_timed_out,
                    &[
                        ("timed_out", int(k.timed_out as f64)),
                        ("arrived", int(k.arrived as f64)),
                    ],
                ));
            }
            if k.rejected > 0 {
                parts.push(fill(&words().shortfall_rejected, &[("rejected", int(k.rejected as f64))]));
            }
            let fleet = format!("{} replica{}", k.replicas, if k.replicas == 1 { "" } else { "s" });
            let mut text = fill(&words().shortfall_at, &[("fleet", fleet)]);
            text.push_str(&parts.join(", and "));
            if let trainer_engine::fleet::FleetVerdict::Overloaded { at, .. } = k.verdict {
                if !parts.is_empty() {
                    text.push_str("; ");
                }
                text.push_str(&fill(&words().shortfall_stopped, &[("at", duration(at, 3))]));
            }
            text.push_str(&words().shortfall_end);
            view! { <p class="field-error" role="status" data-testid=format!("sim-shortfall-{}", k.replicas)>{text}</p> }
        })
        .collect_view();
    let verdict_note = match (o.checks.first(), o.checks.get(1)) {
        (Some(a), Some(b)) if a.passes() && b.passes() => Some(fill(
            if o.budget {
                &words().verdict_both_budget
            } else {
                &words().verdict_both
            },
            &[("fewer", b.replicas.to_string())],
        )),
        (Some(a), Some(b)) if a.passes() => Some(fill(
            &words().verdict_smallest,
            &[
                ("replicas", a.replicas.to_string()),
                ("fewer", b.replicas.to_string()),
            ],
        )),
        (Some(a), _) if !a.passes() => Some(fill(
            &words().verdict_even,
            &[("replicas", a.replicas.to_string())],
        )),
        _ => None,
    };
    let itl_note = first
        .filter(|k| k.tpot_ok() && !k.itl_ok())
        .map(|_| words().itl_note.clone());
    let gaps = o
        .assumptions
        .iter()
        .map(|a| {
            let (what, fmt): (String, fn(f64) -> String) = match a.id {
                "kv_pool" => (
                    fill(
                        &words().gap_kv_pool,
                        &[(
                            "mem_util",
                            percent(trainer_engine::cost::MemoryConfig::VLLM.gpu_memory_utilization),
                        )],
                    ),
                    |v| format!("{} tokens", int(v)),
                ),
                "decode_step" => (words().gap_decode_step.clone(), |v| duration(v, 3)),
                _ => (words().gap_max_seqs.clone(), |v| int(v)),
            };
            view! {
                <li data-testid=format!("sim-assumption-{}", a.id)>
                    {what} " Estimate " <strong>{fmt(a.estimate)}</strong> ", simulator " <strong>{fmt(a.simulator)}</strong> "."
                </li>
            }
        })
        .collect_view();
    let busy_note = words().busy_note.clone();
    view! {
        <div class="sim-results" data-testid="sim-results">
            <p class="muted">{targets}</p>
            <div class="table-scroll">
                <table class="sim-table">
                    <ColumnHeads columns=&["Fleet", "p99 TTFT", "p99 TPOT", "p99 ITL", "Utilisation", "Streams / replica", "Verdict"]/>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            {shortfall}
            {o.prefill.map(|p| view! { <p data-testid="sim-split-note">{fill(&words().check_split, &[("prefill", int(p))])}</p> })}
            {verdict_note.map(|t| view! { <p data-testid="sim-verdict-note">{t}</p> })}
            {itl_note.map(|t| view! { <p class="muted small" data-testid="sim-itl-note">{t}</p> })}
            <p class="muted small">{busy_note}</p>
            <h4>{words().differs_title.clone()}</h4>
            <ul class="small" data-testid="sim-assumptions">{gaps}</ul>
            {streams}
        </div>
    }
}
