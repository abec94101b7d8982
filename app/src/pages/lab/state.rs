//! The lab's state and its runner: the set-up (from the URL, changed by the panel), the run
//! in progress advanced a slice per animation frame, the last result and the pinned run.
//! No view lives here; the views depend on this module, never the other way.

use crate::browser::now_ms;
use crate::url_state::{use_url_state, UrlState};
use leptos::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use trainer_course::lab::{Knob, LabResult, LabRun, Setup, Source};

/// Wall time one slice of simulation may take before it yields to the browser, ms: well
/// under the 50 ms of a long task, with room for the frame's own work.
pub const SLICE_MS: f64 = 10.0;
/// Wall time between live redraws of the plots while a run goes, ms.
const LIVE_MS: f64 = 1000.0;
/// Events between two looks at the clock inside a slice.
const EVENTS_PER_CHECK: u64 = 64;

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

struct Job {
    run: LabRun,
    role: Role,
    query: String,
    generation: u64,
    started: f64,
    busy_ms: f64,
    longest_ms: f64,
    last_frame: f64,
    last_live: f64,
    live_due: bool,
    paused: bool,
    /// The run has reached its end (its result is worked out in the next frame).
    finished: bool,
    /// A result worked out in one frame, to show in the next.
    worked_out: Option<Arc<LabResult>>,
}

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
    job: StoredValue<Option<Job>, LocalStorage>,
    generation: StoredValue<u64>,
    url: UrlState,
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
            job: StoredValue::new_local(None),
            generation: StoredValue::new(0),
            url,
        };
        lab.start();
        url.follow(Setup::from_query, move |s| lab.follow(s));
        lab
    }

    /// Shows and runs a set-up the URL now holds.
    fn follow(&self, setup: Setup) {
        self.setup.set(setup);
        self.texts.set(BTreeMap::new());
        self.pinned.set(None);
        self.start();
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
    /// result is not here yet).
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
        match LabRun::new(first) {
            Ok(run) => {
                let generation = self.generation.get_value() + 1;
                self.generation.set_value(generation);
                let t = now_ms();
                self.status.set(Status::Running {
                    role,
                    progress: 0.0,
                    now: 0.0,
                    horizon: run.horizon(),
                });
                self.job.set_value(Some(Job {
                    run,
                    role,
                    query: query_first,
                    generation,
                    started: t,
                    busy_ms: 0.0,
                    longest_ms: 0.0,
                    last_frame: t,
                    last_live: t,
                    live_due: false,
                    paused: false,
                    finished: false,
                    worked_out: None,
                }));
                let lab = *self;
                request_animation_frame(move || lab.frame(generation));
            }
            Err(e) => self.status.set(Status::Failed(format!(
                "The simulator cannot run this set-up: {e}"
            ))),
        }
    }

    pub fn pause(&self) {
        let mut paused = None;
        self.job.update_value(|j| {
            if let Some(j) = j {
                j.paused = true;
                paused = Some((j.role, j.run.progress(), j.run.now(), j.run.horizon()));
            }
        });
        if let Some((role, progress, now, horizon)) = paused {
            self.status.set(Status::Paused {
                role,
                progress,
                now,
                horizon,
            });
            self.live_update();
        }
    }

    pub fn resume(&self) {
        let mut generation = None;
        self.job.update_value(|j| {
            if let Some(j) = j.as_mut().filter(|j| j.paused) {
                j.paused = false;
                j.last_frame = now_ms();
                generation = Some(j.generation);
            }
        });
        if let Some(g) = generation {
            let lab = *self;
            request_animation_frame(move || lab.frame(g));
        }
    }

    /// Stops the run and clears its result.
    pub fn reset(&self) {
        self.generation.set_value(self.generation.get_value() + 1);
        self.job.set_value(None);
        self.result.set(None);
        self.status.set(Status::Idle);
    }

    /// Shows the run so far.
    fn live_update(&self) {
        let mut out = None;
        self.job.with_value(|j| {
            if let Some(j) = j {
                out = Some((j.run.result(), j.query.clone(), j.role));
            }
        });
        if let Some((r, q, role)) = out {
            if role == Role::Current {
                self.result.set(Some(Arc::new(r)));
                self.result_query.set(q);
            }
        }
    }

    /// One animation frame of the run. A frame does one of three things, so no frame's task
    /// holds the main thread for long: a slice of simulation; working out the result so far
    /// (after a slice that ended the run, or when a live redraw is due); or showing a result
    /// worked out in the frame before (the views render; the charts draw in tasks of their
    /// own).
    fn frame(self, generation: u64) {
        // The page may have gone (another page, or the lab drawn again for a new entry).
        if self.generation.try_get_value() != Some(generation) {
            return;
        }
        let Some(speed) = self.speed.try_get_untracked() else {
            return;
        };
        let mut publish = None;
        let mut status = None;
        let mut go_on = false;
        self.job.update_value(|j| {
            let Some(j) = j.as_mut() else { return };
            if let Some(r) = j.worked_out.take() {
                publish = Some((r, j.query.clone(), j.role, j.finished));
                go_on = !j.finished;
                return;
            }
            if j.paused {
                return;
            }
            go_on = true;
            let t0 = now_ms();
            if j.live_due || j.finished {
                j.live_due = false;
                j.worked_out = Some(Arc::new(j.run.result()));
                return;
            }
            let budget_sim = match speed {
                Speed::Times(n) => Some(j.run.now() + f64::from(n) * (t0 - j.last_frame) / 1e3),
                Speed::Max => None,
            };
            j.last_frame = t0;
            loop {
                if budget_sim.is_some_and(|b| j.run.now() >= b) {
                    break;
                }
                if j.run.advance(EVENTS_PER_CHECK) == 0 || j.run.is_done() {
                    j.finished = true;
                    break;
                }
                if now_ms() - t0 >= SLICE_MS {
                    break;
                }
            }
            let took = now_ms() - t0;
            j.busy_ms += took;
            j.longest_ms = j.longest_ms.max(took);
            if !j.finished && t0 - j.last_live > LIVE_MS {
                j.last_live = t0;
                j.live_due = true;
            }
            status = Some(Status::Running {
                role: j.role,
                progress: j.run.progress(),
                now: j.run.now(),
                horizon: j.run.horizon(),
            });
        });
        if let Some((r, query, role, finished)) = publish {
            if finished {
                self.finish(r);
                return;
            }
            if role == Role::Current {
                self.result.set(Some(r));
                self.result_query.set(query);
            }
        }
        if let Some(s) = status {
            if self.status.try_set(s).is_some() {
                return; // The page has gone.
            }
        }
        if go_on {
            request_animation_frame(move || self.frame(generation));
        }
    }

    /// The job has ended with result `r`: show it, and start the current run after a
    /// pinned one.
    fn finish(&self, r: Arc<LabResult>) {
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
                self.result.set(Some(r));
                self.result_query.set(j.query.clone());
                self.status.set(Status::Done {
                    wall_ms: now_ms() - j.started,
                    busy_ms: j.busy_ms,
                    longest_ms: j.longest_ms,
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
