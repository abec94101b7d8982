//! A build-up's script (`content/buildups/<id>.toml`): its title, a short introduction, and
//! six steps, each with a title and a narration whose `{name}` placeholders the app fills with
//! figures read from the simulation (see [`crate::words::fill`]). A step about an event the
//! run may not have (a preemption, a 429, a scale-up, an overflow) also has an `absent` text
//! for a run without it, so the narration never pretends.

use serde::{Deserialize, Serialize};

/// The build-ups, by URL id, in the order the index lists them.
pub const IDS: [&str; 2] = ["replica", "fleet"];

/// One build-up's words.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    pub title: String,
    /// One or two sentences under the title.
    pub intro: String,
    pub steps: Vec<StepScript>,
}

/// One step's words.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepScript {
    /// Matches the simulator's chapter id.
    pub id: String,
    pub title: String,
    /// The narration when the step's event happened.
    pub text: String,
    /// The narration when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absent: Option<String>,
    /// What to watch or tune, shown under the narration (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<String>,
}

impl Script {
    /// The step with this id.
    pub fn step(&self, id: &str) -> Option<&StepScript> {
        self.steps.iter().find(|s| s.id == id)
    }
}
