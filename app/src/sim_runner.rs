//! Runs fleet simulations in slices between animation frames, so the page stays responsive:
//! each slice advances the current run a few hundred events at a time for at most
//! [`SLICE_MS`] of wall time, then yields to the browser. [`run_fleets`] hands back reports;
//! [`run_sims`] the finished simulations, for a page that reads more than the report (the
//! fleet build-up reads its records and routing trace).

use crate::browser::now_ms;
use leptos::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use trainer_engine::fleet::{FleetConfig, FleetReport, FleetSim};

/// Longest a slice runs before the page gets the main thread back, milliseconds.
pub const SLICE_MS: f64 = 12.0;

/// Where a batch of runs stands.
#[derive(Clone, Debug, PartialEq)]
pub enum RunStatus {
    Idle,
    /// Which run (0-based) of how many, and how far through its simulated time (0 to 1).
    Running {
        run: usize,
        runs: usize,
        progress: f64,
    },
    /// Wall time of the whole batch and of its longest slice, milliseconds.
    Done {
        wall_ms: f64,
        longest_ms: f64,
    },
    Failed(String),
}

impl RunStatus {
    pub fn running(&self) -> bool {
        matches!(self, RunStatus::Running { .. })
    }
}

struct Job {
    runs: Vec<(FleetConfig, FleetSim)>,
    /// Runs finished so far (the first so many).
    finished: usize,
    started: f64,
    longest_ms: f64,
}

/// Starts `configs` one after another in slices, reporting progress in `status`, and hands
/// each fleet with its report to `done` when the last finishes. A config the simulator
/// refuses sets `status` to `Failed` with its message. If the page that owns `status` goes
/// away, the runs stop.
pub fn run_fleets(
    configs: Vec<FleetConfig>,
    status: RwSignal<RunStatus>,
    done: impl FnOnce(Vec<(FleetConfig, FleetReport)>) + 'static,
) {
    let mut sims = Vec::new();
    for f in configs {
        match FleetSim::new(f) {
            Ok(s) => sims.push(s),
            Err(e) => {
                status.set(RunStatus::Failed(failure(&e)));
                return;
            }
        }
    }
    run_sims(sims, status, move |sims| {
        done(
            sims.into_iter()
                .map(|s| (s.config().clone(), s.report()))
                .collect(),
        )
    });
}

/// The message for a fleet the simulator refuses.
pub fn failure(e: &trainer_engine::error::ConfigError) -> String {
    format!("The simulator cannot run this: {} {}.", e.field, e.message)
}

/// Runs fleets already set up (with tracing switched on, say) one after another in slices,
/// as [`run_fleets`] does, and hands the finished simulations to `done`, to be read.
pub fn run_sims(
    sims: Vec<FleetSim>,
    status: RwSignal<RunStatus>,
    done: impl FnOnce(Vec<FleetSim>) + 'static,
) {
    let runs: Vec<(FleetConfig, FleetSim)> =
        sims.into_iter().map(|s| (s.config().clone(), s)).collect();
    status.set(RunStatus::Running {
        run: 0,
        runs: runs.len(),
        progress: 0.0,
    });
    let job = Rc::new(RefCell::new(Job {
        runs,
        finished: 0,
        started: now_ms(),
        longest_ms: 0.0,
    }));
    request_animation_frame(move || slice(job, status, Box::new(done)));
}

type Done = Box<dyn FnOnce(Vec<FleetSim>)>;

fn slice(job: Rc<RefCell<Job>>, status: RwSignal<RunStatus>, done: Done) {
    let t0 = now_ms();
    let update;
    {
        let mut j = job.borrow_mut();
        while now_ms() - t0 < SLICE_MS {
            let cur = j.finished;
            let Some((_, sim)) = j.runs.get_mut(cur) else {
                break;
            };
            sim.advance_for(500);
            if sim.is_done() {
                j.finished += 1;
            }
        }
        j.longest_ms = j.longest_ms.max(now_ms() - t0);
        let (cur, runs) = (j.finished, j.runs.len());
        update = if cur >= runs {
            RunStatus::Done {
                wall_ms: now_ms() - j.started,
                longest_ms: j.longest_ms,
            }
        } else {
            let (cfg, sim) = &j.runs[cur];
            RunStatus::Running {
                run: cur,
                runs,
                progress: (sim.now() / cfg.horizon().max(1e-9)).clamp(0.0, 1.0),
            }
        };
    }
    let finished = matches!(update, RunStatus::Done { .. });
    // The page may have gone away; then the job stops.
    if status.try_set(update).is_some() {
        return;
    }
    if finished {
        let j = Rc::try_unwrap(job).map(RefCell::into_inner);
        if let Ok(j) = j {
            done(j.runs.into_iter().map(|(_, s)| s).collect());
        }
        return;
    }
    request_animation_frame(move || slice(job, status, done));
}
