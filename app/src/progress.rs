//! The learner's progress, kept in the browser's `localStorage`.
//!
//! Stored progress is untrusted input: a missing key means a fresh start, and anything that
//! does not parse is reported once and replaced, never allowed to break the app.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

const KEY: &str = "serving-trainer.progress.v1";

/// What the learner has done so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Progress {
    /// Ids of the parts visited or completed, e.g. `lesson`, `size/fleet`, `moments/routing`.
    pub done: Vec<String>,
    /// Drill attempts: (question id, step id, within the band).
    pub drills: Vec<DrillResult>,
    /// The inputs last used in each calculator, as its query string (question id to query):
    /// the lesson's live figures are computed from them.
    pub inputs: std::collections::BTreeMap<String, String>,
    /// Estimates committed in the lesson before the answer was shown.
    pub estimates: Vec<EstimateRecord>,
    /// Answers given to interview moments, oldest first.
    pub moments: Vec<MomentAttempt>,
}

/// One answer to an interview moment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MomentAttempt {
    pub moment: String,
    pub option: String,
    /// `weak`, `acceptable` or `strong`.
    pub grade: String,
    /// The learner's estimate, where the moment asks for one.
    #[serde(default)]
    pub estimate: Option<f64>,
}

/// One estimate, with the derived figure it was compared with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EstimateRecord {
    pub question: String,
    pub step: String,
    pub estimate: f64,
    pub derived: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DrillResult {
    pub question: String,
    pub step: String,
    pub correct: bool,
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
        let (progress, problem) = match load() {
            Ok(p) => (p, None),
            Err(msg) => (Progress::default(), Some(msg)),
        };
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

    /// Records one drill attempt, and saves.
    pub fn record_drill(&self, question: &str, step: &str, correct: bool) {
        self.progress.update(|p| {
            p.drills.push(DrillResult {
                question: question.to_string(),
                step: step.to_string(),
                correct,
            })
        });
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

    /// Records an estimate committed in the lesson, and saves.
    pub fn record_estimate(&self, question: &str, step: &str, estimate: f64, derived: f64) {
        self.progress.update(|p| {
            p.estimates.push(EstimateRecord {
                question: question.to_string(),
                step: step.to_string(),
                estimate,
                derived,
            })
        });
        self.save();
    }

    /// Records an answer to a moment, and saves.
    pub fn record_moment(&self, attempt: MomentAttempt) {
        self.progress.update(|p| p.moments.push(attempt));
        self.save();
    }

    /// Forgets everything.
    pub fn reset(&self) {
        self.progress.set(Progress::default());
        self.problem.set(None);
        self.save();
    }

    fn save(&self) {
        let text = self
            .progress
            .with_untracked(|p| serde_json::to_string(p).unwrap_or_default());
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

fn load() -> Result<Progress, String> {
    let Some(s) = storage() else {
        return Ok(Progress::default());
    };
    match s.get_item(KEY) {
        Ok(Some(text)) => serde_json::from_str(&text)
            .map_err(|_| "Your saved progress could not be read, so this session starts fresh. It will be saved again as you go.".to_string()),
        _ => Ok(Progress::default()),
    }
}
