//! The build-ups: step-through walkthroughs whose every frame is a simulator's state.
//!
//! [`replica`] follows request D through one replica (`/buildups/replica`) and [`fleet`]
//! follows one request through the fleet (`/buildups/fleet`). Each runs its simulator with
//! tracing on and cuts the run into six [`Chapter`]s of frames; each chapter carries the
//! [`Figure`]s its narration (in `content/buildups/`) names by `{placeholder}`, every one read
//! from the run, and a [`Variant`] saying which of the narration's texts applies (a change
//! that removes the preemption gets the text that says so).

pub mod fleet;
pub mod query;
pub mod replica;

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A number the narration shows, read from the run, with its text as shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// The placeholder it fills (`{name}` in the narration).
    pub name: Cow<'static, str>,
    /// The value in base units (seconds, tokens, blocks, bytes), for tests and `data-value`.
    pub value: f64,
    pub text: String,
}

/// Which of a step's narration texts fits what the run did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// The event the step is about happened.
    Happened,
    /// It did not happen in this run (no preemption, no 429, no scale-up, no overflow).
    Absent,
    /// The followed request took a disaggregated fleet's way: prefill on one replica, its
    /// KV cache moved, decode on another.
    Split,
}

/// One of a build-up's six steps: which frames it covers, the figures its narration names,
/// and which text applies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Chapter {
    /// The step's id, as in its narration file.
    pub id: Cow<'static, str>,
    /// First frame (inclusive).
    pub first: usize,
    /// Last frame (inclusive).
    pub last: usize,
    pub figures: Vec<Figure>,
    pub variant: Variant,
}

impl Chapter {
    /// Frames in this chapter (at least one).
    pub fn len(&self) -> usize {
        self.last + 1 - self.first
    }

    /// Never empty; here for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The figure called `name`.
    pub fn figure(&self, name: &str) -> Option<&Figure> {
        self.figures.iter().find(|f| f.name == name)
    }
}

/// The names and values of `figures`, as the narration's `fill` takes them.
pub fn figure_texts(figures: &[Figure]) -> Vec<(&str, String)> {
    figures
        .iter()
        .map(|f| (f.name.as_ref(), f.text.clone()))
        .collect()
}

/// Builds a chapter's figure list.
pub(crate) struct Figures(Vec<Figure>);

impl Figures {
    pub(crate) fn new() -> Figures {
        Figures(Vec::new())
    }

    pub(crate) fn add(&mut self, name: &'static str, value: f64, text: String) -> &mut Figures {
        self.0.push(Figure {
            name: Cow::Borrowed(name),
            value,
            text,
        });
        self
    }

    /// A duration in seconds, shown in ms or s to three significant figures.
    pub(crate) fn secs(&mut self, name: &'static str, v: f64) -> &mut Figures {
        self.add(name, v, trainer_engine::format::duration(v, 3))
    }

    /// A count, shown whole with thousands separators.
    pub(crate) fn count(&mut self, name: &'static str, v: f64) -> &mut Figures {
        self.add(name, v, trainer_engine::format::int(v))
    }

    /// A fraction, shown as a percentage.
    pub(crate) fn pct(&mut self, name: &'static str, v: f64) -> &mut Figures {
        self.add(name, v, trainer_engine::format::percent(v))
    }

    /// A name (a request, a replica): value is its index.
    pub(crate) fn name(&mut self, name: &'static str, index: f64, text: String) -> &mut Figures {
        self.add(name, index, text)
    }

    pub(crate) fn done(&mut self) -> Vec<Figure> {
        std::mem::take(&mut self.0)
    }
}
