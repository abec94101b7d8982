//! The lab's state and its runner: the set-up (from the URL, changed by the panel), the run
//! in progress in the simulators' worker (its progress and live results as they come), the
//! last result and the pinned run.
//! No view lives here; the views depend on this module, never the other way.

use crate::browser::now_ms;
use crate::sim_client::{control, submit, JobHandle};
use crate::url_state::{use_url_state, UrlState};
use leptos::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use trainer_course::jobs::{self, Control, LabSeries, Reply};
use trainer_course::lab::{needs_reading, remember_read, Knob, LabResult, Setup, Source};

/// Wall time between live redraws of the plots while a run goes, ms.
const LIVE_MS: f64 = 1000.0;

/// The regions of the results drawn from a new result each in a task of its own: 0, the
/// headline figures and the comparison; 1 to 9, each plot with its table (in the page's
/// order). Drawn all at once, a result was one task of about 300 ms with the CPU slowed 4x.
pub const REGIONS: usize = 11;

/// How fast simulated time runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Speed {
    /// Simulated seconds per wall second.
    Times(u32),
    /// As fast as the slices allow.
    Max,
}

impl Speed {
    pub const ALL: [Speed; 4] = [
        Speed::Times(1),
        Speed::Times(10),
        Speed::Times(100),
        Speed::Max,
    ];

    pub fn id(self) -> String {
        match self {
            Speed::Times(n) => format!("x{n}"),
            Speed::Max => "max".into(),
        }
    }

    pub fn label(self) -> String {
        match self {
            Speed::Times(1) => "real time".into(),
            Speed::Times(n) => format!("{n}× real time"),
            Speed::Max => "as fast as it goes".into(),
        }
    }

    /// Simulated seconds per wall second (`None`: as fast as it goes), as a lab job takes it.
    pub fn per_second(self) -> Option<f64> {
        match self {
            Speed::Times(n) => Some(f64::from(n)),
            Speed::Max => None,
        }
    }

    pub fn from_id(id: &str) -> Speed {
        Speed::ALL
            .into_iter()
            .find(|s| s.id() == id)
            .unwrap_or(Speed::Max)
    }
}

/// Which run a job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The pinned run, rerun from the link before the current one.
    Pinned,
    Current,
}

/// Where the run stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Idle,
    Running {
        role: Role,
        progress: f64,
        now: f64,
        horizon: f64,
    },
    Paused {
        role: Role,
        progress: f64,
        now: f64,
        horizon: f64,
    },
    /// Wall time from start to end, time spent simulating, the longest slice (ms), and
    /// the events processed.
    Done {
        wall_ms: f64,
        busy_ms: f64,
        longest_ms: f64,
        events: u64,
    },
    Failed(String),
}

impl Status {
    pub fn running(&self) -> bool {
        matches!(self, Status::Running { .. })
    }

    pub fn paused(&self) -> bool {
        matches!(self, Status::Paused { .. })
    }

    pub fn done(&self) -> bool {
        matches!(self, Status::Done { .. })
    }
}

/// The run in the simulators' worker.
struct Job {
    handle: JobHandle,
    role: Role,
    query: String,
    started: f64,
    paused: bool,
    /// Where it stands, from its last progress reply: (progress, now, horizon).
    at: (f64, f64, f64),
    /// When (wall ms) the status last showed a progress reply.
    shown: f64,
}

/// How often, at most, the status line shows the run's progress (wall ms). The worker replies
/// after every slice of simulation (25 ms); showing each one redrew the status line forty times
/// a second, each a layout and a paint of the page on its own task (a phone's blocking time
/// while the lab opens with a run). Ten a second still moves the bar smoothly; a pause shows
/// the last reply at once.
const PROGRESS_MS: f64 = 100.0;

/// The lab's state, shared by its views.
#[derive(Clone, Copy)]
pub struct Lab {
    pub setup: RwSignal<Setup>,
    /// The text typed into each field (a field not typed into shows the knob's value).
    texts: RwSignal<BTreeMap<Knob, String>>,
    pub status: RwSignal<Status>,
    /// The result shown (of the run going, while it goes) and the query it was run with.
    pub result: RwSignal<Option<Arc<LabResult>>>,
    pub result_query: RwSignal<String>,
    /// The pinned run A: its query and result.
    pub pinned: RwSignal<Option<(String, Arc<LabResult>)>>,
    pub speed: RwSignal<Speed>,
    /// A message for the import box.
    pub import_error: RwSignal<Option<String>>,
    /// Whether an imported file is being read (in the worker: the page has no TOML parser).
    pub reading: RwSignal<bool>,
    job: StoredValue<Option<Job>, LocalStorage>,
    /// The series of the run in hand, put back together from the worker's replies (each
    /// carries only the points the ones before did not).
    series: StoredValue<LabSeries, LocalStorage>,
    generation: StoredValue<u64>,
    url: UrlState,
    /// The result each region of the results shows (see [`REGIONS`]): the shown result,
    /// handed on one region per task.
    pub staged: [RwSignal<Option<Arc<LabResult>>>; REGIONS],
    /// Whether every region shows the shown result; until it does, the end of a run is not
    /// announced (so what a reader finds then is the run's end everywhere).
    pub staged_all: RwSignal<bool>,
    /// Which handing-on is current: a newer result starts again from region 0.
    stage_generation: StoredValue<u64>,
}

impl Lab {
    /// The lab as the URL's query string describes it; starts its run, and follows the URL
    /// when it changes from outside (Back, Forward).
    pub fn new() -> Lab {
        let url = use_url_state();
        let lab = Lab {
            setup: RwSignal::new(url.read(Setup::from_query)),
            texts: RwSignal::new(BTreeMap::new()),
            status: RwSignal::new(Status::Idle),
            result: RwSignal::new(None),
            result_query: RwSignal::new(String::new()),
            pinned: RwSignal::new(None),
            speed: RwSignal::new(Speed::Max),
            import_error: RwSignal::new(None),
            reading: RwSignal::new(false),
            job: StoredValue::new_local(None),
            series: StoredValue::new_local(LabSeries::default()),
            generation: StoredValue::new(0),
            url,
            staged: std::array::from_fn(|_| RwSignal::new(None)),
            staged_all: RwSignal::new(true),
            stage_generation: StoredValue::new(0),
        };
        Effect::new(move |_| {
            lab.result.track();
            lab.stage();
        });
        // The run starts in a task of its own, not in the one that draws the page: encoding
        // its set-up for the worker (and starting the worker) is work the page's first paint
        // need not wait for.
        set_timeout(
            move || {
                if lab.generation.try_get_value().is_some() {
                    lab.start_or_read();
                }
            },
            std::time::Duration::ZERO,
        );
        // Leaving the lab stops its run in the worker.
        on_cleanup(move || lab.stop());
        url.follow(Setup::from_query, move |s| lab.follow(s));
        lab
    }

    /// Shows and runs a set-up the URL now holds.
    fn follow(&self, setup: Setup) {
        self.setup.set(setup);
        self.texts.set(BTreeMap::new());
        self.pinned.set(None);
        self.start_or_read();
    }

    /// Runs the set-up, or, when the URL holds a TOML file the page cannot read (it has no
    /// TOML parser), has the simulators' worker read it and then reads the URL again.
    fn start_or_read(&self) {
        match self.setup.with_untracked(|s| s.unread.clone()) {
            None => self.start(),
            Some(text) => self.read_then(text, |lab| {
                lab.follow(lab.url.read(Setup::from_query));
            }),
        }
    }

    /// Has the simulators' worker read a TOML scenario file, keeps what it made of it (its
    /// JSON form, or why it is not TOML) for the set-up to read, then does `then`.
    fn read_then(&self, text: String, then: impl FnOnce(Lab) + 'static) {
        let lab = *self;
        let mut then = Some(then);
        let kept = text.clone();
        submit(jobs::Job::ReadScenario(text), move |reply| {
            let read = match reply {
                Reply::Done(jobs::Outcome::ScenarioJson(read)) => read,
                Reply::Failed(m) => Err(m),
                _ => return,
            };
            remember_read(kept.clone(), read);
            if let Some(then) = then.take() {
                then(lab);
            }
        });
    }

    /// The text a knob's field shows (tracked).
    pub fn text(&self, k: Knob) -> String {
        if let Some(t) = self.texts.with(|t| t.get(&k).cloned()) {
            return t;
        }
        self.setup.with(|s| {
            s.bad_text
                .get(k.key())
                .cloned()
                .unwrap_or_else(|| k.get(&s.config))
        })
    }

    /// A field's message (tracked).
    pub fn error(&self, key: &str) -> Option<String> {
        self.setup.with(|s| s.errors.get(key).cloned())
    }

    /// Whether any field has a message (tracked): then the run button waits.
    pub fn has_errors(&self) -> bool {
        self.setup
            .with(|s| s.errors.keys().any(|k| Knob::from_key(k).is_some()))
    }

    /// Sets a knob from its field's text and rewrites the URL (no history entry).
    pub fn type_into(&self, k: Knob, text: String) {
        self.texts.update(|t| {
            t.insert(k, text.clone());
        });
        let mut ok = false;
        self.setup.update(|s| ok = s.set(k, &text).is_ok());
        if ok && !matches!(k.kind(), trainer_course::lab::Kind::Number { .. }) {
            // A choice can change what other fields hold (a distribution's parameters).
            self.texts.set(BTreeMap::new());
        }
        self.sync_url();
    }

    /// Opens a preset (or another arm of the source) with no knob changed, as a new history
    /// entry, and runs it.
    pub fn open_source(&self, source: Source) -> Result<(), String> {
        let next = Setup::from_source(source).map_err(|(_, m)| m)?;
        let pin = self.setup.with_untracked(|s| s.pin.clone());
        self.setup.set(Setup { pin, ..next });
        self.texts.set(BTreeMap::new());
        self.url.push(&self.setup.with_untracked(|s| s.query()));
        self.start();
        Ok(())
    }

    /// Imports a scenario file's text; on success runs it, otherwise says why on the import box
    /// and keeps everything as it was.
    pub fn import(&self, text: String) {
        if needs_reading(&text) {
            self.reading.set(true);
            self.read_then(text.clone(), move |lab| lab.import(text));
            return;
        }
        self.reading.set(false);
        match self.open_source(Source::File {
            text,
            arm: String::new(),
        }) {
            Ok(()) => self.import_error.set(None),
            Err(m) => self.import_error.set(Some(m)),
        }
    }

    fn sync_url(&self) {
        self.url.replace(&self.setup.with_untracked(|s| s.query()));
    }

    /// Pins the shown run as A.
    pub fn pin(&self) {
        if let Some(r) = self.result.get_untracked() {
            let q = self.result_query.get_untracked();
            self.pinned.set(Some((q.clone(), r)));
            self.setup.update(|s| s.pin = Some(q));
            self.sync_url();
        }
    }

    pub fn unpin(&self) {
        self.pinned.set(None);
        self.setup.update(|s| s.pin = None);
        self.sync_url();
    }

    /// Starts a run of the current set-up (after its pinned run, when the pinned run's
    /// result is not here yet) in the simulators' worker, stopping any run going.
    pub fn start(&self) {
        let (cfg, query, pin) = self
            .setup
            .with_untracked(|s| (s.config.clone(), s.run_query(), s.pin.clone()));
        let have_pin = self
            .pinned
            .with_untracked(|p| p.as_ref().map(|(q, _)| q.clone()));
        let pinned_setup = match pin {
            Some(p) if have_pin.as_deref() != Some(p.as_str()) => Some((Setup::from_query(&p), p)),
            _ => None,
        };
        // The pinned run first; its end starts the current one (see `finish`).
        let (first, role, query_first) = match pinned_setup {
            Some((ps, pq)) => (ps.config, Role::Pinned, pq),
            None => (cfg, Role::Current, query),
        };
        self.stop();
        let generation = self.generation.get_value() + 1;
        self.generation.set_value(generation);
        let horizon = first.horizon().max(1e-9);
        self.status.set(Status::Running {
            role,
            progress: 0.0,
            now: 0.0,
            horizon,
        });
        let lab = *self;
        let handle = submit(
            jobs::Job::Lab {
                config: Box::new(first),
                speed: self.speed.get_untracked().per_second(),
                live_ms: LIVE_MS,
            },
            move |reply| lab.on_reply(generation, reply),
        );
        // A worker that could not start has already answered (and failed the run).
        if self.generation.get_value() == generation && self.status.with_untracked(Status::running)
        {
            self.job.set_value(Some(Job {
                handle,
                role,
                query: query_first,
                started: now_ms(),
                paused: false,
                at: (0.0, 0.0, horizon),
                shown: now_ms(),
            }));
        }
    }

    /// Cancels the run going, if any.
    fn stop(&self) {
        if let Some(j) = self.job.try_update_value(Option::take).flatten() {
            control(j.handle, Control::Cancel);
        }
    }

    pub fn pause(&self) {
        self.set_paused(true);
    }

    pub fn resume(&self) {
        self.set_paused(false);
    }

    /// Pauses or resumes the run going (if it is not already so), in the worker and the status.
    fn set_paused(&self, pause: bool) {
        let mut changed = None;
        self.job.update_value(|j| {
            if let Some(j) = j.as_mut().filter(|j| j.paused != pause) {
                j.paused = pause;
                control(
                    j.handle,
                    if pause {
                        Control::Pause
                    } else {
                        Control::Resume
                    },
                );
                changed = Some((j.role, j.at));
            }
        });
        if let Some((role, (progress, now, horizon))) = changed {
            self.status.set(if pause {
                Status::Paused {
                    role,
                    progress,
                    now,
                    horizon,
                }
            } else {
                Status::Running {
                    role,
                    progress,
                    now,
                    horizon,
                }
            });
        }
    }

    /// Changes how fast simulated time runs, for the run going too.
    pub fn set_speed(&self, speed: Speed) {
        self.speed.set(speed);
        self.job.with_value(|j| {
            if let Some(j) = j {
                control(j.handle, Control::Speed(speed.per_second()));
            }
        });
    }

    /// Hands the shown result on to the regions, one region per task, from region 0.
    fn stage(&self) {
        let generation = self.stage_generation.get_value() + 1;
        self.stage_generation.set_value(generation);
        self.staged_all.set(false);
        self.stage_from(0, generation);
    }

    fn stage_from(self, region: usize, generation: u64) {
        set_timeout(
            move || {
                if self.stage_generation.try_get_value() != Some(generation) {
                    return; // A newer result took over, or the lab has gone.
                }
                let shown = self.result.get_untracked();
                let _ = self.staged[region].try_set(shown);
                if region + 1 < REGIONS {
                    self.stage_from(region + 1, generation);
                } else {
                    let _ = self.staged_all.try_set(true);
                }
            },
            std::time::Duration::ZERO,
        );
    }

    /// Stops the run and clears its result, from every region at once: staging the cleared
    /// result a region per task left the last run's figures under the idle notice for a few
    /// tasks (a browser test saw them).
    pub fn reset(&self) {
        self.stop();
        self.generation.set_value(self.generation.get_value() + 1);
        self.stage_generation
            .set_value(self.stage_generation.get_value() + 1);
        for region in self.staged {
            region.set(None);
        }
        self.staged_all.set(true);
        self.result.set(None);
        self.status.set(Status::Idle);
    }

    /// A reply from the worker about run `generation` (replies about an earlier run, or
    /// after the page has gone, are dropped).
    fn on_reply(self, generation: u64, reply: Reply) {
        if self.generation.try_get_value() != Some(generation) {
            return;
        }
        match reply {
            Reply::Progress(p) => {
                let mut update = None;
                self.job.update_value(|j| {
                    if let Some(j) = j.as_mut() {
                        j.at = (p.progress, p.now, p.horizon);
                        let t = now_ms();
                        if !j.paused && t - j.shown >= PROGRESS_MS {
                            j.shown = t;
                            update = Some(Status::Running {
                                role: j.role,
                                progress: p.progress,
                                now: p.now,
                                horizon: p.horizon,
                            });
                        }
                    }
                });
                if let Some(u) = update {
                    self.status.set(u);
                }
            }
            // Points kept for the results that follow them; nothing is drawn.
            Reply::Series(part) => {
                if !self
                    .series
                    .try_update_value(|s| s.extend(part))
                    .unwrap_or(true)
                {
                    self.out_of_order();
                }
            }
            Reply::Live(r) => {
                let Some(r) = self.join(*r) else { return };
                let current = self.job.with_value(|j| {
                    j.as_ref()
                        .filter(|j| j.role == Role::Current)
                        .map(|j| j.query.clone())
                });
                if let Some(q) = current {
                    self.result.set(Some(Arc::new(r.lab())));
                    // Unchanged within a run: what reads it (the engine the run used, read
                    // from its set-up) is not worked out again with every live result.
                    if self.result_query.with_untracked(|shown| *shown != q) {
                        self.result_query.set(q);
                    }
                }
            }
            Reply::Done(jobs::Outcome::Lab {
                result,
                busy_ms,
                longest_ms,
            }) => {
                if let Some(r) = self.join(*result) {
                    self.finish(Arc::new(r.lab()), busy_ms, longest_ms);
                }
            }
            Reply::Failed(m) => {
                self.job.set_value(None);
                self.status.set(Status::Failed(m));
            }
            Reply::Done(_) => {
                self.job.set_value(None);
                self.status.set(Status::Failed(
                    "The simulator's worker answered with something else.".into(),
                ));
            }
        }
    }

    /// A reply's part of the run's results, whole; a part that does not follow on (which the
    /// worker's ordered replies never give) fails the run with a message.
    fn join(&self, part: jobs::RunResult) -> Option<jobs::RunResult> {
        let whole = self.series.try_update_value(|s| s.join(part)).flatten();
        if whole.is_none() {
            self.out_of_order();
        }
        whole
    }

    fn out_of_order(&self) {
        self.job.set_value(None);
        self.status.set(Status::Failed(
            "The simulator's worker sent its results out of order.".into(),
        ));
    }

    /// The job has ended with result `r`: show it, and start the current run after a
    /// pinned one.
    fn finish(&self, r: Arc<LabResult>, busy_ms: f64, longest_ms: f64) {
        let Some(j) = self.job.try_update_value(Option::take).flatten() else {
            return;
        };
        let events = r.report.events;
        match j.role {
            Role::Pinned => {
                self.pinned.set(Some((j.query.clone(), r)));
                self.start();
            }
            Role::Current => {
                // Not drawn until every region has it: the notice that the run is done waits
                // for the regions (set here, before the status, since the staging starts in an
                // effect that may run after the status is drawn; a browser test read the last
                // run's rows under "Done").
                self.staged_all.set(false);
                self.result.set(Some(r));
                if self.result_query.with_untracked(|shown| *shown != j.query) {
                    self.result_query.set(j.query.clone());
                }
                self.status.set(Status::Done {
                    wall_ms: now_ms() - j.started,
                    busy_ms,
                    longest_ms,
                    events,
                });
            }
        }
    }

    /// The set-up's query string (tracked): to compare with the shown result's.
    pub fn run_query(&self) -> String {
        self.setup.with(|s| s.run_query())
    }
}
