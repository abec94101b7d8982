//! The learner's progress, kept in the browser's `localStorage` under a versioned schema.
//!
//! The schema, its migrations and the spaced-repetition schedule are plain Rust in
//! `trainer_course::study`; this module only reads and writes storage, exports and imports a
//! file, and holds the progress in a signal. Stored progress is untrusted input: a missing
//! key means a fresh start; schema 1 (stored under [`LEGACY_KEY`]) is migrated; anything that
//! cannot be read gets a notice and a clean start, and the unreadable text is kept aside
//! under [`ASIDE_KEY`] rather than lost.

use leptos::prelude::*;
use std::cell::Cell;
use trainer_course::study::{self, day_from_ms};
pub use trainer_course::study::{
    FigureRecord, MockRecord, MomentAttempt, Progress, PushbackRecord,
};

/// Where the current schema lives.
pub const KEY: &str = "serving-trainer.progress";
/// Where schema 1 lived.
pub const LEGACY_KEY: &str = "serving-trainer.progress.v1";
/// Where unreadable progress is kept aside.
pub const ASIDE_KEY: &str = "serving-trainer.progress.unreadable";

thread_local! {
    /// Days added to the clock's date (only the test exports change it).
    static DAY_OFFSET: Cell<i64> = const { Cell::new(0) };
}

/// Today's day number, from the browser's clock.
pub fn today() -> i64 {
    day_from_ms(crate::browser::wall_ms()) + DAY_OFFSET.with(Cell::get)
}

/// Moves "today" by `days` (the browser tests' time travel).
#[cfg(feature = "test-exports")]
pub fn set_day_offset(days: i64) {
    DAY_OFFSET.with(|d| d.set(days));
}

/// The progress signal plus what went wrong reading it, provided as context at the root.
#[derive(Clone, Copy)]
pub struct ProgressStore {
    pub progress: RwSignal<Progress>,
    /// A message for the learner when stored progress could not be read or saved.
    pub problem: RwSignal<Option<String>>,
}

impl ProgressStore {
    pub fn install() -> ProgressStore {
        let (progress, problem) = load();
        let store = ProgressStore {
            progress: RwSignal::new(progress),
            problem: RwSignal::new(problem),
        };
        provide_context(store);
        store
    }

    /// Records that a part was done, and saves.
    pub fn mark_done(&self, id: &str) {
        let mut changed = false;
        self.progress.update(|p| {
            if !p.done.iter().any(|d| d == id) {
                p.done.push(id.to_string());
                changed = true;
            }
        });
        if changed {
            self.save();
        }
    }

    /// Records one drill attempt, schedules its step, and saves.
    pub fn record_drill(&self, question: &str, step: &str, correct: bool) {
        let day = today();
        self.progress
            .update(|p| p.record_drill(question, step, correct, day));
        self.save();
    }

    /// Remembers the inputs of a calculator (its query string), and saves when they changed.
    pub fn set_inputs(&self, question: &str, query: &str) {
        let mut changed = false;
        self.progress.update(|p| {
            if p.inputs.get(question).map(String::as_str) != Some(query) {
                p.inputs.insert(question.to_string(), query.to_string());
                changed = true;
            }
        });
        if changed {
            self.save();
        }
    }

    /// Forgets the inputs of every calculator, so pages that read them show the seed's.
    pub fn reset_inputs(&self) {
        let mut changed = false;
        self.progress.update(|p| {
            changed = !p.inputs.is_empty();
            p.inputs.clear();
        });
        if changed {
            self.save();
        }
    }

    /// Records an estimate committed in the lesson, and saves.
    pub fn record_estimate(&self, question: &str, step: &str, estimate: f64, derived: f64) {
        self.progress.update(|p| {
            p.estimates.push(study::EstimateRecord {
                question: question.to_string(),
                step: step.to_string(),
                estimate,
                derived,
            })
        });
        self.save();
    }

    /// Records a recall prompt as the learner graded it, schedules it, and saves; returns the
    /// day it is due again.
    pub fn record_recall(&self, prompt: &str, outcome: study::Outcome) -> i64 {
        let day = today();
        self.progress
            .update(|p| p.record_recall(prompt, outcome, day));
        self.save();
        self.progress.with_untracked(|p| {
            p.schedule
                .get(&study::Item::Recall(prompt.to_string()).key())
                .map_or(day, |c| c.due)
        })
    }

    /// Records an answer to a moment, schedules the moment, and saves.
    pub fn record_moment(&self, attempt: MomentAttempt) {
        let day = today();
        self.progress.update(|p| p.record_moment(attempt, day));
        self.save();
    }

    /// Schedules the figures just checked in a mock (each a step of sizing question
    /// `question`: a miss due today, a right one a box up), and saves.
    pub fn record_figures(&self, question: &str, marks: &[FigureRecord]) {
        let day = today();
        self.progress.update(|p| {
            for r in marks {
                p.record_figure(question, &r.id, r.right, day);
            }
        });
        self.save();
    }

    /// Records a finished mock interview, schedules its curveball, and saves.
    pub fn record_mock(&self, mock: MockRecord) {
        let day = today();
        self.progress.update(|p| p.record_mock(mock, day));
        self.save();
    }

    /// Forgets everything.
    pub fn reset(&self) {
        self.progress.set(Progress::default());
        self.problem.set(None);
        self.save();
    }

    /// Replaces the progress with an exported file's, or says why not (and keeps the current).
    pub fn import(&self, text: &str) -> Result<(), String> {
        let p = study::import(text, today())?;
        self.progress.set(p);
        self.save();
        Ok(())
    }

    /// Offers the progress as a JSON file download.
    pub fn export(&self) -> Result<(), String> {
        let text = self.progress.with_untracked(Progress::to_pretty_json);
        crate::browser::download("serving-trainer-progress.json", "application/json", &text)
    }

    fn save(&self) {
        let text = self.progress.with_untracked(Progress::to_json);
        let saved = storage()
            .map(|s| s.set_item(KEY, &text).is_ok())
            .unwrap_or(false);
        if !saved {
            self.problem.set(Some("Progress could not be saved in this browser (storage is off or full); it lasts until you close the tab.".into()));
        }
    }
}

pub fn use_progress() -> ProgressStore {
    expect_context::<ProgressStore>()
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}

/// Reads the current key, else schema 1's; unreadable text is set aside with a notice, and
/// saved calculator inputs that cannot be used are reset with a notice naming them.
fn load() -> (Progress, Option<String>) {
    let Some(s) = storage() else {
        return (Progress::default(), None);
    };
    let (key, text) = match s.get_item(KEY) {
        Ok(Some(t)) => (KEY, t),
        _ => match s.get_item(LEGACY_KEY) {
            Ok(Some(t)) => (LEGACY_KEY, t),
            _ => return (Progress::default(), None),
        },
    };
    let result = study::read(&text, today());
    let outcome = match result {
        Ok(mut p) => {
            // A calculator input no page can use is reset, and named, rather than ignored.
            let dropped = p.drop_bad_inputs();
            let notice = (!dropped.is_empty()).then(|| {
                format!(
                    "Some saved calculator inputs could not be used, so those questions use their own values again: {}.",
                    dropped.join("; ")
                )
            });
            (p, notice)
        }
        Err(e) => {
            let _ = s.set_item(ASIDE_KEY, &text);
            (Progress::default(), Some(e.notice()))
        }
    };
    // Whatever was read now lives under the current key; schema 1's key is retired.
    let _ = s.set_item(KEY, &outcome.0.to_json());
    if key == LEGACY_KEY {
        let _ = s.remove_item(LEGACY_KEY);
    }
    outcome
}
