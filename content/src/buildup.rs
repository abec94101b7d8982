//! A build-up's script (`content/buildups/<id>.toml`): its title, a short introduction, and
//! six steps, each with a title and a narration whose `{name}` placeholders the app fills with
//! figures read from the simulation (see [`crate::words::fill`]). A step about an event the
//! run may not have (a preemption, a 429, a scale-up, an overflow) also has an `absent` text
//! for a run without it, so the narration never pretends. A phrase that states a count which
//! can be zero or one ("{cached_tokens} tokens were found in the prefix cache") is written once
//! per case in `counted`, and [`StepScript::narration`] chooses it from the figure, so no
//! narration says "0 tokens were found" or "1 chunks".

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
    /// The narration when the followed request took a disaggregated fleet's way (prefill on
    /// one replica, its KV cache moved, decode on another).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<String>,
    /// What to watch or tune, shown under the narration (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<String>,
    /// Phrases that state a count, one sentence per case, chosen by the count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counted: Vec<Counted>,
}

/// A phrase of a narration that states a count: `{name}` in `text` or `absent` becomes `zero`,
/// `one` or `many` as the figure `count` is 0, 1 or more (a missing case falls back to
/// `many`). Each may hold the figures' own `{placeholders}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counted {
    /// The placeholder the phrase fills.
    pub name: String,
    /// The figure that counts (a figure of the step's chapter).
    pub count: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one: Option<String>,
    pub many: String,
}

impl Counted {
    /// The phrase for a count of `n`.
    pub fn choose(&self, n: f64) -> &str {
        let case = if n == 0.0 {
            self.zero.as_ref()
        } else if n == 1.0 {
            self.one.as_ref()
        } else {
            None
        };
        case.unwrap_or(&self.many)
    }
}

/// Which of a step's texts a run calls for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Told {
    /// `text`: the step's event happened.
    Happened,
    /// `absent`: it did not (`text` when the step has none).
    Absent,
    /// `split`: the request took split pools (`text` when the step has none).
    Split,
}

impl StepScript {
    /// The narration for a run: `text`, or `absent` when the run lacked the step's event (and
    /// the step has one), with each counted phrase chosen by its figure's value (`value` reads
    /// a figure by name; a phrase whose figure is missing reads as `many`). The figures'
    /// own `{placeholders}` stay for the page to fill.
    pub fn narration(&self, told: Told, value: impl Fn(&str) -> Option<f64>) -> String {
        let mut text = match (told, &self.absent, &self.split) {
            (Told::Absent, Some(t), _) | (Told::Split, _, Some(t)) => t.clone(),
            _ => self.text.clone(),
        };
        for c in &self.counted {
            let n = value(&c.count).unwrap_or(f64::NAN);
            text = text.replace(&format!("{{{}}}", c.name), c.choose(n));
        }
        text
    }
}

impl Script {
    /// The step with this id.
    pub fn step(&self, id: &str) -> Option<&StepScript> {
        self.steps.iter().find(|s| s.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counted_phrase_follows_its_figure() {
        let step = StepScript {
            id: "x".into(),
            title: "X".into(),
            text: "Done; {hits}.".into(),
            absent: Some("Nothing; {hits}.".into()),
            split: Some("Split; {hits}.".into()),
            watch: None,
            counted: vec![Counted {
                name: "hits".into(),
                count: "n".into(),
                zero: Some("none hit".into()),
                one: Some("one hit".into()),
                many: "{n} hits".into(),
            }],
        };
        let at = |v: f64| move |name: &str| (name == "n").then_some(v);
        assert_eq!(step.narration(Told::Happened, at(0.0)), "Done; none hit.");
        assert_eq!(step.narration(Told::Happened, at(1.0)), "Done; one hit.");
        assert_eq!(step.narration(Told::Absent, at(7.0)), "Nothing; {n} hits.");
        assert_eq!(step.narration(Told::Split, at(1.0)), "Split; one hit.");
        assert_eq!(step.narration(Told::Happened, |_| None), "Done; {n} hits.");
    }
}
