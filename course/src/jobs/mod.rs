//! What a page asks of the simulators, and the runner that does it a slice at a time.
//!
//! The app runs every simulation in a Web Worker: the page posts a [`ToWorker`] message (a
//! [`Job`] with an id, or a [`Control`] for a job already sent), and the worker answers with
//! [`FromWorker`] messages (progress, live results of a lab run, the outcome, or why it
//! failed). Both ends read and write these types as JSON, so this module is the one protocol
//! between them. [`Running`] is the worker's side: it starts a job and advances it for a
//! slice of wall time at a time, between which the worker reads new messages (a pause, a
//! cancel). Nothing here knows about a worker or a browser: native tests run jobs through the
//! same runner and check that a run's report is the one the simulator gives directly.

use crate::buildup::fleet::FleetStory;
use crate::buildup::replica::{ReplicaParams, ReplicaStory};
use crate::lab::LabResult;
use crate::validation;
use serde::{Deserialize, Serialize};
use trainer_engine::error::ConfigError;
use trainer_engine::fleet::sim::SeriesPoint;
use trainer_engine::fleet::{Distributions, FleetConfig, FleetReport, FleetSim, ReplicaSummary};

/// Events between two looks at the clock inside a slice.
const EVENTS_PER_CHECK: u64 = 64;

/// A piece of simulation work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Job {
    /// Run each fleet to its end: their reports, in order. Without `series` the reports come
    /// back without their time series (a point a second: most of an hour's report), for a page
    /// that reads only the figures.
    Fleets {
        configs: Vec<FleetConfig>,
        series: bool,
    },
    /// A lab run: its results so far every `live_ms` of wall time, at `speed` simulated seconds
    /// per wall second (`None`: as fast as it goes).
    Lab {
        config: Box<FleetConfig>,
        speed: Option<f64>,
        live_ms: f64,
    },
    /// The fleet build-up's run, read as its story: its pool split into prefill and `split`
    /// decode replicas when `split` is not 0.
    FleetStory { split: u32 },
    /// The replica build-up's run with the learner's changes.
    ReplicaStory(ReplicaParams),
    /// The published measurement at this index of the shipped file, replayed on the
    /// validated engine.
    Validation(usize),
    /// A learner's TOML scenario file read for the page, which has no TOML parser: its JSON
    /// form ([`Scenario::toml_to_json`](trainer_engine::scenario::Scenario::toml_to_json)),
    /// or the parser's message, which places the fault.
    ReadScenario(String),
}

/// Most series points one reply of a lab run carries: the page reads a reply in one task,
/// and an hour's series (3,600 points, about 900 KB as JSON) read at once was most of a long
/// task on a slow phone. The points go column by column ([`SeriesPart`]), about 70 bytes
/// each.
pub const PART_POINTS: usize = 300;

/// A change to a job already sent.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Control {
    /// Stop and forget it; no more messages come for it.
    Cancel,
    Pause,
    Resume,
    /// Simulated seconds per wall second (`None`: as fast as it goes).
    Speed(Option<f64>),
}

/// A message from the page to the worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ToWorker {
    Start { id: u64, job: Job },
    Control { id: u64, control: Control },
}

/// A message from the worker to the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum FromWorker {
    /// The worker has loaded and reads messages from now on.
    Ready,
    Reply {
        id: u64,
        reply: Reply,
    },
    /// A message the worker could not read (it names why).
    Unreadable(String),
}

/// What the worker says about one job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    Progress(Progress),
    /// Series points of a lab run that earlier replies did not carry, with nothing else: the
    /// page keeps them ([`LabSeries`]) for the next [`Reply::Live`] or the outcome, and draws
    /// nothing from them (a burst of points is read a part per task, and drawn once).
    Series(SeriesPart),
    /// A lab run's results so far, with only the series points earlier replies did not carry
    /// (a page puts them back together with [`LabSeries`]).
    Live(Box<RunResult>),
    /// The job has ended.
    Done(Outcome),
    /// The job cannot run; the message says why, in words for the page.
    Failed(String),
}

/// How far a job has gone.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Runs finished, of `runs`.
    pub finished: usize,
    pub runs: usize,
    /// How far through its traffic the run in hand is, 0 to 1.
    pub progress: f64,
    /// Simulated time reached by the run in hand, and its horizon, seconds.
    pub now: f64,
    pub horizon: f64,
}

/// What a fleet run measured, as the lab shows it (see [`LabResult`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub report: FleetReport,
    pub distributions: Distributions,
    pub replicas: Vec<ReplicaSummary>,
    /// Where `report.series` starts in the run's whole series; 0 for a whole series. A lab
    /// run's replies carry only the points the ones before did not (an hour's series is most
    /// of a report, and a page that read it whole every second spent its main thread parsing
    /// it), in [`Reply::Series`] parts before the figures, whose own series is then empty.
    pub series_from: usize,
}

/// Points of a lab run's series, from point `from` of the whole series on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesPart {
    pub from: usize,
    pub points: Columns,
}

/// Series points as columns, one list per field: the form they take between the worker and
/// the page, a third of the bytes of a list of objects (which names every field at every
/// point), and quicker to read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ColumnLists", into = "ColumnLists")]
pub struct Columns(pub Vec<SeriesPoint>);

/// [`Columns`] as written: a list per field of [`SeriesPoint`], each field named once here.
macro_rules! column_lists {
    ($($field:ident: $ty:ty),* $(,)?) => {
        #[derive(Clone, Default, Serialize, Deserialize)]
        struct ColumnLists {
            t: Vec<f64>,
            $($field: Vec<$ty>,)*
        }

        impl From<Columns> for ColumnLists {
            fn from(c: Columns) -> ColumnLists {
                let mut l = ColumnLists::default();
                for p in c.0 {
                    l.t.push(p.t);
                    $(l.$field.push(p.$field);)*
                }
                l
            }
        }

        impl TryFrom<ColumnLists> for Columns {
            type Error = String;

            fn try_from(l: ColumnLists) -> Result<Columns, String> {
                let n = l.t.len();
                let lengths = [$(l.$field.len()),*];
                if lengths.iter().any(|&k| k != n) {
                    return Err(format!(
                        "series columns of different lengths: {n} times, then {lengths:?}"
                    ));
                }
                Ok(Columns(
                    (0..n)
                        .map(|i| SeriesPoint {
                            t: l.t[i],
                            $($field: l.$field[i],)*
                        })
                        .collect(),
                ))
            }
        }
    };
}

column_lists! {
    open_streams: u32,
    ready_replicas: u32,
    provisioned_replicas: u32,
    queued_prompt_tokens: u64,
    running: u32,
    waiting: u32,
    kv_blocks_used: u64,
    kv_blocks_total: u64,
    completed: u64,
    rejected: u64,
    spilled: u64,
    output_tokens: u64,
}

/// A lab run's series put back together from its replies, on the page's side.
#[derive(Clone, Debug, Default)]
pub struct LabSeries {
    points: Vec<SeriesPoint>,
}

impl LabSeries {
    /// Keeps a reply's points for the results that follow; a part that starts at 0 starts the
    /// series again. False when the part does not follow on from the ones before (a reply
    /// lost).
    pub fn extend(&mut self, part: SeriesPart) -> bool {
        if part.from == 0 {
            self.points.clear();
        } else if part.from != self.points.len() {
            return false;
        }
        self.points.extend(part.points.0);
        true
    }

    /// The run's results so far, whole, from a reply's part of them. A part that starts at
    /// 0 starts the series again; one that does not follow on from the parts before (a reply
    /// lost) gives `None`.
    pub fn join(&mut self, mut part: RunResult) -> Option<RunResult> {
        if part.series_from == 0 {
            self.points.clear();
        } else if part.series_from != self.points.len() {
            return None;
        }
        self.points.append(&mut part.report.series);
        part.report.series = self.points.clone();
        part.series_from = 0;
        Some(part)
    }
}

impl RunResult {
    /// A run's results, with its series from point `from` on (the whole series when the run
    /// has fewer points than that, which a series that only grows never has).
    fn of(sim: &FleetSim, from: usize) -> RunResult {
        let mut report = sim.report();
        let from = if from <= report.series.len() { from } else { 0 };
        report.series.drain(..from);
        RunResult {
            report,
            distributions: sim.distributions(),
            replicas: sim.replica_summaries(),
            series_from: from,
        }
    }

    /// The next replies of a lab run: its series from point `sent` on (which it moves past),
    /// in parts of at most [`PART_POINTS`] points, then the run's figures so far with none of
    /// them (`series_from` past the last).
    fn parts(sim: &FleetSim, sent: &mut usize) -> (Vec<SeriesPart>, RunResult) {
        let mut whole = RunResult::of(sim, *sent);
        let from = whole.series_from;
        let points = std::mem::take(&mut whole.report.series);
        *sent = from + points.len();
        whole.series_from = *sent;
        let parts = points
            .chunks(PART_POINTS)
            .enumerate()
            .map(|(i, chunk)| SeriesPart {
                from: from + i * PART_POINTS,
                points: Columns(chunk.to_vec()),
            })
            .collect();
        (parts, whole)
    }

    /// [`RunResult::parts`] as replies: the series parts, then `last` made of the figures.
    fn replies(
        sim: &FleetSim,
        sent: &mut usize,
        last: impl FnOnce(RunResult) -> Reply,
    ) -> Vec<Reply> {
        let (parts, figures) = RunResult::parts(sim, sent);
        parts
            .into_iter()
            .map(Reply::Series)
            .chain(std::iter::once(last(figures)))
            .collect()
    }

    /// The lab's view of it.
    pub fn lab(self) -> LabResult {
        LabResult::new(self.report, self.distributions, self.replicas)
    }
}

/// What a finished job gives back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Outcome {
    Reports(Vec<FleetReport>),
    Lab {
        /// The run's results, with the series points no `Live` reply carried.
        result: Box<RunResult>,
        /// Wall time the worker spent simulating, and its longest slice, milliseconds.
        busy_ms: f64,
        longest_ms: f64,
    },
    FleetStory(Box<FleetStory>),
    ReplicaStory(Box<ReplicaStory>),
    /// A measurement's replay, or why it could not run.
    Validation(Result<Box<validation::Outcome>, String>),
    /// A TOML scenario file as JSON, or why it is not valid TOML.
    ScenarioJson(Result<String, String>),
}

/// The message for a set-up the simulator refuses.
pub fn failure(e: &ConfigError) -> String {
    format!("The simulator cannot run this: {} {}.", e.field, e.message)
}

/// What the worker does after a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// More work now.
    Now,
    /// Nothing to do until a message comes or a little wall time passes (paused, or ahead of
    /// a paced run's clock).
    Later,
    /// The job has ended (its last reply is `Done` or `Failed`).
    Finished,
}

enum Work {
    Fleets {
        sims: Vec<FleetSim>,
        finished: usize,
        series: bool,
    },
    Lab {
        sim: FleetSim,
        live_ms: f64,
        last_live: f64,
        /// Series points already sent.
        sent: usize,
    },
    FleetStory(FleetSim),
    /// Work that runs in one go (it takes a few milliseconds).
    Once(Job),
}

/// A job in the worker.
pub struct Running {
    work: Work,
    paused: bool,
    speed: Option<f64>,
    /// Wall time at the end of the last slice, for a paced run.
    last_wall: Option<f64>,
    busy_ms: f64,
    longest_ms: f64,
    /// A lab run was just paused: show its results so far once.
    show_paused: bool,
}

impl Running {
    /// Sets a job up; `Err` (the page's message) for a set-up the simulator refuses.
    pub fn start(job: Job, now_ms: f64) -> Result<Running, String> {
        let sim = |c: FleetConfig| FleetSim::new(c).map_err(|e| failure(&e));
        let mut speed = None;
        let work = match job {
            Job::Fleets { configs, series } => Work::Fleets {
                sims: configs.into_iter().map(sim).collect::<Result<_, _>>()?,
                finished: 0,
                series,
            },
            Job::Lab {
                config,
                speed: s,
                live_ms,
            } => {
                speed = s;
                Work::Lab {
                    sim: sim(*config)?,
                    live_ms,
                    last_live: now_ms,
                    sent: 0,
                }
            }
            Job::FleetStory { split } => Work::FleetStory(
                FleetStory::config_split(split)
                    .and_then(FleetStory::sim_of)
                    .map_err(|e| failure(&e))?,
            ),
            job => Work::Once(job),
        };
        Ok(Running {
            work,
            paused: false,
            speed,
            last_wall: None,
            busy_ms: 0.0,
            longest_ms: 0.0,
            show_paused: false,
        })
    }

    /// Applies a change (not `Cancel`, which the worker handles by dropping the job). A lab
    /// run paused shows its results so far in the next slice.
    pub fn control(&mut self, c: Control) {
        match c {
            Control::Cancel => {}
            Control::Pause => {
                self.show_paused = !self.paused;
                self.paused = true;
            }
            Control::Resume => {
                self.paused = false;
                self.last_wall = None;
            }
            Control::Speed(s) => {
                self.speed = s;
                self.last_wall = None;
            }
        }
    }

    /// Works until `clock` (wall milliseconds) has moved `slice_ms` on, or the job ends, and
    /// returns the replies to send with what to do next.
    pub fn slice(&mut self, clock: &mut dyn FnMut() -> f64, slice_ms: f64) -> (Vec<Reply>, Next) {
        if self.paused {
            let mut replies = Vec::new();
            if std::mem::take(&mut self.show_paused) {
                if let Work::Lab { sim, sent, .. } = &mut self.work {
                    replies.push(Reply::Progress(progress_of(sim, 0, 1)));
                    replies.extend(RunResult::replies(sim, sent, |r| Reply::Live(Box::new(r))));
                }
            }
            return (replies, Next::Later);
        }
        let t0 = clock();
        let mut replies = Vec::new();
        let next = match &mut self.work {
            Work::Fleets {
                sims,
                finished,
                series,
            } => {
                while *finished < sims.len() && clock() - t0 < slice_ms {
                    let sim = &mut sims[*finished];
                    if sim.advance_for(EVENTS_PER_CHECK) == 0 || sim.is_done() {
                        *finished += 1;
                    }
                }
                if *finished == sims.len() {
                    let reports = sims
                        .iter()
                        .map(|s| {
                            let mut r = s.report();
                            if !*series {
                                r.series = Vec::new();
                            }
                            r
                        })
                        .collect();
                    replies.push(Reply::Done(Outcome::Reports(reports)));
                    Next::Finished
                } else {
                    replies.push(Reply::Progress(progress_of(
                        &sims[*finished],
                        *finished,
                        sims.len(),
                    )));
                    Next::Now
                }
            }
            Work::FleetStory(sim) => {
                while !sim.is_done() && clock() - t0 < slice_ms {
                    sim.advance_for(EVENTS_PER_CHECK);
                }
                if sim.is_done() {
                    replies.push(match FleetStory::from_sim(sim) {
                        Ok(s) => Reply::Done(Outcome::FleetStory(Box::new(s))),
                        Err(e) => Reply::Failed(failure(&e)),
                    });
                    Next::Finished
                } else {
                    replies.push(Reply::Progress(progress_of(sim, 0, 1)));
                    Next::Now
                }
            }
            Work::Lab {
                sim,
                live_ms,
                last_live,
                sent,
            } => {
                // A paced run may go as far as its clock allows since the last slice.
                let budget = match (self.speed, self.last_wall) {
                    (Some(s), Some(w)) => Some(sim.now() + s * (t0 - w) / 1e3),
                    (Some(_), None) => Some(sim.now()),
                    (None, _) => None,
                };
                let mut ended = false;
                loop {
                    if budget.is_some_and(|b| sim.now() >= b) {
                        break;
                    }
                    if sim.advance_for(EVENTS_PER_CHECK) == 0 || sim.is_done() {
                        ended = true;
                        break;
                    }
                    if clock() - t0 >= slice_ms {
                        break;
                    }
                }
                let t1 = clock();
                self.last_wall = Some(t1);
                self.busy_ms += t1 - t0;
                self.longest_ms = self.longest_ms.max(t1 - t0);
                if ended {
                    // The points go first, in parts: the page reads each reply in a task of
                    // its own.
                    let (busy_ms, longest_ms) = (self.busy_ms, self.longest_ms);
                    replies.extend(RunResult::replies(sim, sent, |r| {
                        Reply::Done(Outcome::Lab {
                            result: Box::new(r),
                            busy_ms,
                            longest_ms,
                        })
                    }));
                    Next::Finished
                } else {
                    replies.push(Reply::Progress(progress_of(sim, 0, 1)));
                    if t1 - *last_live >= *live_ms {
                        *last_live = t1;
                        replies.extend(RunResult::replies(sim, sent, |r| Reply::Live(Box::new(r))));
                    }
                    if budget.is_some_and(|b| sim.now() >= b) {
                        Next::Later
                    } else {
                        Next::Now
                    }
                }
            }
            Work::Once(job) => {
                replies.push(once(job));
                Next::Finished
            }
        };
        (replies, next)
    }
}

fn progress_of(sim: &FleetSim, finished: usize, runs: usize) -> Progress {
    let horizon = sim.config().horizon().max(1e-9);
    Progress {
        finished,
        runs,
        progress: if sim.is_done() {
            1.0
        } else {
            (sim.now() / horizon).clamp(0.0, 1.0)
        },
        now: sim.now(),
        horizon,
    }
}

/// A TOML scenario file's JSON form, in a build with the TOML parser (the worker's).
fn read_scenario(text: &str) -> Result<String, String> {
    #[cfg(feature = "parse")]
    {
        trainer_engine::scenario::Scenario::toml_to_json(text).map_err(|e| e.message)
    }
    #[cfg(not(feature = "parse"))]
    {
        let _ = text;
        Err("this build has no TOML parser".into())
    }
}

fn once(job: &Job) -> Reply {
    match job {
        Job::ReplicaStory(params) => match ReplicaStory::run(*params) {
            Ok(s) => Reply::Done(Outcome::ReplicaStory(Box::new(s))),
            Err(e) => Reply::Failed(failure(&e)),
        },
        Job::Validation(i) => match validation::shipped() {
            Ok(m) => match m.row.get(*i) {
                Some(row) => Reply::Done(Outcome::Validation(
                    validation::run_row(row)
                        .map(Box::new)
                        .map_err(|e| e.to_string()),
                )),
                None => Reply::Failed(format!("There is no measurement {i}.")),
            },
            Err(e) => Reply::Failed(failure(&e)),
        },
        Job::ReadScenario(text) => Reply::Done(Outcome::ScenarioJson(read_scenario(text))),
        _ => Reply::Failed("This job runs in slices, not in one go.".into()),
    }
}

/// Runs a job to its end on `clock` in slices of `slice_ms`, as the worker does, and returns
/// every reply (for tests, the benchmark and the command line).
pub fn run_to_end(job: Job, clock: &mut dyn FnMut() -> f64, slice_ms: f64) -> Vec<Reply> {
    let mut running = match Running::start(job, clock()) {
        Ok(r) => r,
        Err(e) => return vec![Reply::Failed(e)],
    };
    let mut out = Vec::new();
    loop {
        let (replies, next) = running.slice(clock, slice_ms);
        out.extend(replies);
        if next == Next::Finished {
            return out;
        }
    }
}

#[cfg(test)]
mod tests;
