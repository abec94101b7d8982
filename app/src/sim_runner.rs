//! Runs a batch of fleets in the simulators' workers ([`crate::sim_client`]), side by side
//! on as many workers as the machine has cores, and hands back their reports in order, with
//! the batch's progress in a signal. The main thread only reads the replies.

use crate::browser::now_ms;
use crate::sim_client::{control, longest_handling_ms, submit, JobHandle};
use leptos::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use trainer_course::jobs::{Control, Job, Outcome, Reply};
use trainer_course::moments::Rounds;
use trainer_engine::fleet::{FleetConfig, FleetReport};

/// Where a batch of runs stands.
#[derive(Clone, Debug, PartialEq)]
pub enum RunStatus {
    Idle,
    /// Runs finished (0-based: the run in hand) of how many, and how far the batch is (0 to 1).
    Running {
        run: usize,
        runs: usize,
        progress: f64,
    },
    /// Wall time of the whole batch, and the longest the main thread has spent reading (parsing)
    /// one reply from a worker, milliseconds.
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

type Done = Box<dyn FnOnce(Vec<(FleetConfig, FleetReport)>)>;

struct Running {
    configs: Vec<FleetConfig>,
    reports: Vec<Option<FleetReport>>,
    progress: Vec<f64>,
    handles: Vec<JobHandle>,
    started: f64,
    done: Option<Done>,
}

impl Running {
    fn cancel(&mut self) {
        self.done = None;
        for h in self.handles.drain(..) {
            control(h, Control::Cancel);
        }
    }
}

/// Runs `configs` in the workers, each fleet a job of its own, reporting progress in
/// `status`, and hands each fleet with its report to `done` when the last finishes. A config
/// the simulator refuses sets `status` to `Failed` with its message and stops the rest. If
/// the page that owns `status` goes away, the runs are cancelled.
pub fn run_fleets(
    configs: Vec<FleetConfig>,
    status: RwSignal<RunStatus>,
    done: impl FnOnce(Vec<(FleetConfig, FleetReport)>) + 'static,
) {
    start_fleets(configs, status, done);
}

/// Runs moments' fleets in rounds ([`Rounds`]: a fleet moment's one round, a search
/// moment's as many as its searches ask for), every round's fleets side by side in the
/// workers, and hands the finished rounds to `done`. `status` shows the round in hand; a
/// failed run stops the rest.
pub fn run_rounds(
    rounds: Vec<Rounds>,
    status: RwSignal<RunStatus>,
    done: impl FnOnce(Vec<Rounds>) + 'static,
) {
    rounds_from(now_ms(), rounds, status, done);
}

/// [`run_rounds`] from `started`: the wall time it reports at the end is every round's.
fn rounds_from(
    started: f64,
    mut rounds: Vec<Rounds>,
    status: RwSignal<RunStatus>,
    done: impl FnOnce(Vec<Rounds>) + 'static,
) {
    let counts: Vec<usize>;
    let fleets: Vec<FleetConfig> = {
        let due: Vec<Vec<FleetConfig>> = rounds.iter_mut().map(Rounds::due).collect();
        counts = due.iter().map(Vec::len).collect();
        due.into_iter().flatten().collect()
    };
    if fleets.is_empty() {
        let _ = status.try_update(|s| {
            if let RunStatus::Done { wall_ms, .. } = s {
                *wall_ms = now_ms() - started;
            }
        });
        done(rounds);
        return;
    }
    start_fleets(fleets, status, move |reports| {
        let mut reports = reports.into_iter().map(|(_, r)| r);
        for (r, n) in rounds.iter_mut().zip(counts) {
            let got: Vec<FleetReport> = reports.by_ref().take(n).collect();
            r.record(&got);
        }
        rounds_from(started, rounds, status, done);
    });
}

/// [`run_fleets`], with a handle that stops the batch.
pub fn start_fleets(
    configs: Vec<FleetConfig>,
    status: RwSignal<RunStatus>,
    done: impl FnOnce(Vec<(FleetConfig, FleetReport)>) + 'static,
) -> Batch {
    let n = configs.len();
    if n == 0 {
        status.set(RunStatus::Done {
            wall_ms: 0.0,
            longest_ms: 0.0,
        });
        done(Vec::new());
        return Batch(None);
    }
    status.set(RunStatus::Running {
        run: 0,
        runs: n,
        progress: 0.0,
    });
    let batch = Rc::new(RefCell::new(Running {
        configs: configs.clone(),
        reports: vec![None; n],
        progress: vec![0.0; n],
        handles: Vec::new(),
        started: now_ms(),
        done: Some(Box::new(done)),
    }));
    for (i, cfg) in configs.into_iter().enumerate() {
        let b = batch.clone();
        // The pages that run batches read figures, never the time series.
        let job = Job::Fleets {
            configs: vec![cfg],
            series: false,
        };
        let h = submit(job, move |reply| on_reply(&b, i, reply, status));
        batch.borrow_mut().handles.push(h);
    }
    Batch(Some(batch))
}

/// A batch sent by [`run_fleets`], to stop it.
pub struct Batch(Option<Rc<RefCell<Running>>>);

impl Batch {
    /// Stops the batch's runs; its `done` is never called.
    pub fn cancel(&self) {
        if let Some(b) = &self.0 {
            b.borrow_mut().cancel();
        }
    }
}

fn on_reply(batch: &Rc<RefCell<Running>>, i: usize, reply: Reply, status: RwSignal<RunStatus>) {
    let mut b = batch.borrow_mut();
    if b.done.is_none() {
        return;
    }
    let update = match reply {
        Reply::Progress(p) => {
            b.progress[i] = p.progress;
            None
        }
        Reply::Done(Outcome::Reports(mut r)) => {
            b.progress[i] = 1.0;
            b.reports[i] = r.pop();
            None
        }
        Reply::Failed(m) => Some(RunStatus::Failed(m)),
        Reply::Done(_) | Reply::Live(_) | Reply::Series(_) => Some(RunStatus::Failed(
            "The simulator's worker answered with something else.".into(),
        )),
    };
    let finished = b.reports.iter().filter(|r| r.is_some()).count();
    let runs = b.reports.len();
    let update = update.unwrap_or_else(|| {
        if finished == runs {
            RunStatus::Done {
                wall_ms: now_ms() - b.started,
                longest_ms: longest_handling_ms(),
            }
        } else {
            RunStatus::Running {
                run: finished,
                runs,
                progress: b.progress.iter().sum::<f64>() / runs as f64,
            }
        }
    });
    // The page may have gone away; then the runs stop.
    if status.try_set(update.clone()).is_some() {
        b.cancel();
        return;
    }
    match update {
        RunStatus::Failed(_) => b.cancel(),
        RunStatus::Done { .. } => {
            let done = b.done.take();
            let configs = std::mem::take(&mut b.configs);
            let reports: Vec<FleetReport> = b.reports.iter_mut().filter_map(Option::take).collect();
            b.handles.clear();
            drop(b);
            if let Some(done) = done {
                done(configs.into_iter().zip(reports).collect());
            }
        }
        _ => {}
    }
}
