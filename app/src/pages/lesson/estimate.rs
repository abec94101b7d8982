//! The lesson's estimate boxes: replicas, open streams and KV in use, each compared with the
//! derivation and with one simulator check shared by all three (the calculator's check: the
//! fleet question's inputs at the derived replica count and at one fewer).

use super::use_lesson;
use crate::components::{Compared, EstimateBox, SimFigure};
use crate::progress::use_progress;
use crate::route::use_router;
use crate::sim_runner::{run_fleets, RunStatus};
use crate::text::fill;
use crate::text::format::{duration, fixed, int, percent, sig};
use leptos::prelude::*;
use trainer_course::sizing::{
    assumptions, check_fleets, derive_on_engine, Assumption, Fewer, Question, SimCheck,
    SimCheckConfig, StreamsGap,
};

/// One finished check: what it ran on, and what it found.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckResult {
    /// The fleet question's query it ran on.
    pub query: String,
    pub checks: Vec<SimCheck>,
    pub assumptions: Vec<Assumption>,
}

/// The check the estimate boxes share.
#[derive(Clone, Copy)]
pub struct LessonSim {
    pub status: RwSignal<RunStatus>,
    pub result: RwSignal<Option<CheckResult>>,
}

impl LessonSim {
    pub fn new() -> LessonSim {
        LessonSim {
            status: RwSignal::new(RunStatus::Idle),
            result: RwSignal::new(None),
        }
    }
}

/// Starts the check for the learner's fleet inputs, unless one is running or already done
/// for these inputs.
fn start_check(sim: LessonSim, query: String) {
    if sim.status.get_untracked().running()
        || sim
            .result
            .with_untracked(|r| r.as_ref().is_some_and(|r| r.query == query))
    {
        return;
    }
    let q = Question::Fleet;
    let page = trainer_course::sizing::PageQuery::parse(q, &query);
    let inputs = page.inputs;
    let Ok(d) = trainer_course::sizing::derive(q, &inputs) else {
        sim.status.set(RunStatus::Failed(
            "Your inputs in the calculator do not derive; fix them there first.".into(),
        ));
        return;
    };
    let replicas = d.step("replicas").map_or(1.0, |s| s.value) as u32;
    let fleets = match check_fleets(&inputs, replicas, &SimCheckConfig::DEFAULT) {
        Ok(f) => f,
        Err(e) => {
            sim.status.set(RunStatus::Failed(format!(
                "The simulator cannot run these inputs: {} {}.",
                e.field, e.message
            )));
            return;
        }
    };
    let assumed = fleets
        .first()
        .map(|f| assumptions(&inputs, f))
        .unwrap_or_default();
    run_fleets(fleets, sim.status, move |runs| {
        let checks = runs
            .iter()
            .map(|(f, r)| SimCheck::from_report(f, r))
            .collect();
        let _ = sim.result.try_set(Some(CheckResult {
            query,
            checks,
            assumptions: assumed,
        }));
    });
}

/// An estimate box for step `step` of question `q` (the fleet question's replicas, open
/// streams or KV in use).
#[component]
pub fn Estimate(q: Question, step: String) -> impl IntoView {
    let lesson = use_lesson();
    let store = use_progress();
    let router = use_router();
    let words = lesson.words.get_value();
    let prompt = prompt(&words, &step);
    let s1 = step.clone();
    let unit = lesson
        .derivation_now(q)
        .and_then(|d| d.step(&s1).map(|s| s.unit.to_string()))
        .unwrap_or_default();
    // A time is estimated in milliseconds (a step's value is in seconds).
    let (unit, scale) = if unit == "s" {
        ("ms".to_string(), 1e3)
    } else {
        (unit, 1.0)
    };
    let s2 = step.clone();
    let note = words.derived_note.clone();
    let derived = Signal::derive(move || {
        lesson.derivation(q).and_then(|d| {
            d.step(&s2).map(|s| Compared {
                value: s.value * scale,
                shown: s.display.clone(),
                note: note.clone(),
            })
        })
    });
    let s3 = step.clone();
    let derived_href = Signal::derive(move || {
        format!(
            "{}?{}#step-{s3}",
            router.href(&crate::route::Route::Size(q.id().into())),
            lesson.step_query(q, &s3)
        )
    });
    if q != Question::Fleet {
        return engine_estimate(q, step, prompt, unit, scale, derived, derived_href).into_any();
    }
    let sim = lesson.sim;
    let s4 = step.clone();
    let w = words.clone();
    let current = move || {
        let query = lesson.query(Question::Fleet);
        sim.result
            .get()
            .filter(|r| r.query == query)
            .map(|r| (r, lesson.derivation(Question::Fleet)))
    };
    let simulated = Signal::derive(move || match sim.status.get() {
        RunStatus::Running {
            run,
            runs,
            progress,
        } => SimFigure::Running((run as f64 + progress) / runs.max(1) as f64),
        RunStatus::Failed(m) => SimFigure::Failed(m),
        _ => match current() {
            Some((r, d)) => simulated_figure(&s4, &r, d.as_deref(), &w),
            None => SimFigure::NotRun,
        },
    });
    let s5 = step.clone();
    let w2 = words.clone();
    let gap = Signal::derive(move || {
        current().and_then(|(r, d)| gap_text(&s5, &r, d.as_deref(), &lesson, &w2))
    });
    let on_simulate = Callback::new(move |_| start_check(sim, lesson.query(Question::Fleet)));
    let s6 = step.clone();
    let on_commit = Callback::new(move |v: f64| {
        let d = derived.get_untracked().map_or(0.0, |d| d.value);
        store.record_estimate(q.id(), &s6, v, d);
        lesson.open_estimate(q, &s6);
    });
    let s7 = step.clone();
    let on_reveal = Callback::new(move |_| lesson.open_estimate(q, &s7));
    view! {
        <EstimateBox
            testid=format!("estimate-{step}")
            prompt=prompt
            unit=unit
            derived=derived
            derived_href=derived_href
            simulated=simulated
            on_simulate=on_simulate
            gap=gap
            on_commit=on_commit
            reveal_text=words.estimate_peek.clone()
            on_reveal=on_reveal
        />
    }
    .into_any()
}

/// An estimate box of a question whose figure needs no run (the roofline's): the derivation
/// beside the same step on the simulator's engine (`derive_on_engine`), with why they differ.
fn engine_estimate(
    q: Question,
    step: String,
    prompt: String,
    unit: String,
    scale: f64,
    derived: Signal<Option<Compared>>,
    derived_href: Signal<String>,
) -> impl IntoView {
    let lesson = use_lesson();
    let store = use_progress();
    let words = lesson.words.get_value();
    let s1 = step.clone();
    let w = words.clone();
    let simulated = Signal::derive(move || {
        let inputs = lesson.inputs(q);
        match derive_on_engine(q, &inputs) {
            Ok(d) => match d.step(&s1) {
                Some(s) => SimFigure::Ready(Compared {
                    value: s.value * scale,
                    shown: s.display.clone(),
                    note: w.sim_engine.clone(),
                }),
                None => SimFigure::NotRun,
            },
            Err(e) => SimFigure::Failed(
                e.first()
                    .map(|e| format!("{} {}", e.field, e.message))
                    .unwrap_or_default(),
            ),
        }
    });
    let w2 = words.clone();
    let gap = Signal::derive(move || {
        let inputs = lesson.inputs(q);
        let eff = trainer_engine::cost::Efficiency::CALIBRATED;
        let layers = inputs.get("layers").unwrap_or(0.0);
        Some(fill(
            &w2.gap_engine,
            &[
                ("mbu", percent(inputs.get("mbu").unwrap_or(0.0))),
                ("engine_mbu", percent(eff.mbu)),
                (
                    "overhead",
                    duration(eff.step_overhead_s + layers * eff.layer_overhead_s, 2),
                ),
            ],
        ))
    });
    let s2 = step.clone();
    let on_commit = Callback::new(move |v: f64| {
        let d = derived.get_untracked().map_or(0.0, |d| d.value);
        store.record_estimate(q.id(), &s2, v, d);
        lesson.open_estimate(q, &s2);
    });
    let s3 = step.clone();
    let on_reveal = Callback::new(move |_| lesson.open_estimate(q, &s3));
    view! {
        <EstimateBox
            testid=format!("estimate-{step}")
            prompt=prompt
            unit=unit
            derived=derived
            derived_href=derived_href
            simulated=simulated
            gap=gap
            on_commit=on_commit
            reveal_text=words.estimate_peek.clone()
            on_reveal=on_reveal
        />
    }
}

/// The question an estimate box puts for step `step`.
pub fn prompt(words: &trainer_content::words::LessonWords, step: &str) -> String {
    match step {
        "replicas" => words.estimate_replicas.clone(),
        "open_streams" => words.estimate_open_streams.clone(),
        "kv_in_use" => words.estimate_kv_in_use.clone(),
        "weight_floor" => words.estimate_weight_floor.clone(),
        "tpot_batch" => words.estimate_tpot_batch.clone(),
        other => other.to_string(),
    }
}

/// The simulator's figure for `step`.
fn simulated_figure(
    step: &str,
    r: &CheckResult,
    d: Option<&trainer_course::sizing::Derivation>,
    w: &trainer_content::words::LessonWords,
) -> SimFigure {
    let Some(first) = r.checks.first() else {
        return SimFigure::NotRun;
    };
    let n = first.replicas;
    match step {
        "replicas" => {
            let fewer = r.checks.get(1).filter(|c| c.passes());
            let (value, note) = match (first.passes(), fewer) {
                (true, Some(c)) => (
                    c.replicas as f64,
                    fill(&w.sim_replicas_fewer, &[("n", c.replicas.to_string())]),
                ),
                (true, None) => (
                    n as f64,
                    fill(&w.sim_replicas_holds, &[("n", n.to_string())]),
                ),
                (false, _) => (
                    (n + 1) as f64,
                    fill(&w.sim_replicas_misses, &[("n", n.to_string())]),
                ),
            };
            SimFigure::Ready(Compared {
                value,
                shown: int(value),
                note,
            })
        }
        "open_streams" => SimFigure::Ready(Compared {
            value: first.open_streams,
            shown: sig(first.open_streams, 3),
            note: fill(&w.sim_open_streams, &[("n", n.to_string())]),
        }),
        "kv_in_use" => {
            let ctx = d
                .and_then(|d| d.step("avg_context"))
                .map_or(0.0, |s| s.value);
            let v = first.open_streams / n.max(1) as f64 * ctx;
            SimFigure::Ready(Compared {
                value: v,
                shown: format!("{} tokens", int(v)),
                note: w.sim_kv_in_use.clone(),
            })
        }
        _ => SimFigure::NotRun,
    }
}

/// Why the derivation and the simulation differ on `step`.
fn gap_text(
    step: &str,
    r: &CheckResult,
    d: Option<&trainer_course::sizing::Derivation>,
    lesson: &super::Lesson,
    w: &trainer_content::words::LessonWords,
) -> Option<String> {
    let first = r.checks.first()?;
    let get = |id: &str| r.assumptions.iter().find(|a| a.id == id).cloned();
    let inputs = lesson.inputs(Question::Fleet);
    match step {
        "replicas" => {
            let dec = get("decode_step");
            let pool = get("kv_pool");
            let mut text = fill(
                &w.gap_replicas,
                &[
                    (
                        "sim_step",
                        dec.as_ref()
                            .map_or("—".into(), |a| duration(a.simulator, 2)),
                    ),
                    (
                        "est_step",
                        dec.as_ref().map_or("—".into(), |a| duration(a.estimate, 2)),
                    ),
                    ("batch", int(inputs.get("batch").unwrap_or(0.0))),
                    (
                        "sim_pool",
                        pool.as_ref().map_or("—".into(), |a| int(a.simulator)),
                    ),
                    (
                        "est_pool",
                        pool.as_ref().map_or("—".into(), |a| int(a.estimate)),
                    ),
                ],
            );
            // One replica has no fewer to check.
            if let Some(fewer) = r.checks.get(1) {
                let result = match first.fewer(fewer) {
                    Fewer::Holds => &w.fewer_holds,
                    Fewer::Needed => &w.fewer_misses,
                    Fewer::MissesToo => &w.fewer_misses_too,
                };
                text.push(' ');
                text.push_str(&fill(
                    &w.gap_fewer,
                    &[
                        ("fewer", fewer.replicas.to_string()),
                        ("fewer_result", result.clone()),
                    ],
                ));
            }
            Some(text)
        }
        "open_streams" => {
            let reply = d.and_then(|d| d.step("time_per_reply"))?;
            let words = match first.streams_gap() {
                StreamsGap::Sooner => &w.gap_open_streams,
                StreamsGap::NoFewer => &w.gap_open_streams_more,
                StreamsGap::Lost => &w.gap_open_streams_lost,
            };
            Some(fill(
                words,
                &[
                    ("est_reply", reply.display.clone()),
                    ("sim_itl", duration(first.itl_mean_s, 2)),
                ],
            ))
        }
        "kv_in_use" => {
            let est = d.and_then(|d| d.step("streams_per_replica"))?;
            let spr = first.open_streams / first.replicas.max(1) as f64;
            Some(fill(
                &w.gap_kv_in_use,
                &[("sim_spr", fixed(spr, 1)), ("est_spr", est.display.clone())],
            ))
        }
        _ => None,
    }
}
