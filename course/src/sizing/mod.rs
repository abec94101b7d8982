//! The back-of-the-envelope derivations behind "size it up".
//!
//! A learner picks a [`Question`], edits its typed [`Inputs`] (each described by an
//! [`InputSpec`] with a unit and a valid range), and taps through the ordered [`Step`]s of a
//! [`Derivation`]: each step shows its formula, the formula with the numbers in, the value and
//! one sentence on why it matters. A computed [`Verdict`] closes the derivation by naming what
//! bounds the answer.
//!
//! Every figure the cost model knows (prefill time per token, decode step, decode throughput,
//! KV pool, KV bytes per token, weight bytes, bytes per step) comes from [`CostModel`]; this
//! module only adds the arithmetic around it: rates times lengths, demand over a ceiling,
//! Little's law, cost, shares of the pool.
//!
//! The same inputs travel in a URL query string ([`Inputs::from_query`], [`Inputs::to_query`]),
//! so the app and the tests share one parser; [`PageQuery`] and [`page_query`] read and write a
//! question's page (its inputs and the [`Reveal`]ed steps). [`Drill`] poses a random but plausible variant
//! and grades an estimate; [`sensitivity`] shows which inputs move an answer most.
//!
//! [`CostModel`]: trainer_engine::cost::CostModel

mod check;
pub mod conclusions;
mod derive;
mod drill;
mod figure;
mod fit;
mod host_check;
mod inputs;
pub(crate) mod query;
mod reveal;
mod seed_words;
mod shown;
pub mod sweep;
mod words;

pub use check::{
    assumptions, assumptions_for, check_fleets, check_fleets_for, check_replicas, fleet_config,
    fleet_config_for, spec_check_fleet, Assumption, Fewer, SimCheck, SimCheckConfig, StreamsGap,
};

pub use derive::{
    derive, derive_on_engine, enable_speculation, host_check_text, precision_notes, prompt_prefill,
    roofline_plot, speculation_check_text, speculation_ready, split_link, Roofline,
    SPECULATION_LOADING,
};
pub use drill::{sensitivity, Drill, EntryUnit, Grade};
pub use figure::{figure, sizing_figure};
pub use fit::{misfit, smallest_fitting_tp, Misfit, MisfitKind, FIX_FIELD, TP_SIZES};
pub use host_check::{
    host_answer_holds, host_arms, host_check_fleets, host_check_seconds, spare as host_spare,
    HostArm, HostCheckText, HostRun, HOST_HOLDS_SHARE, HOST_SPARE,
};
pub use inputs::{is_preset_figure, ChoiceOption, InputGroup, InputKind, InputSpec, Inputs};
pub(crate) use query::write as write_query;
pub use query::{map_of, page_query, page_query_keeping, pairs as query_pairs, PageQuery, Reveal};
pub use reveal::{echoes, gives_away};
pub use seed_words::seed_words;

use serde::Serialize;

/// One of the "size it up" questions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Question {
    /// Size the fleet for the seed chat product (the brief's reference table).
    Fleet,
    /// How many 4K-token chats fit on a four-GPU 70B replica.
    ChatsPerReplica,
    /// How many GPU-hours a million output tokens take, and what they cost.
    GpuHours,
    /// The seed load as non-streaming batch work, sized beside the streaming fleet.
    Batch,
    /// At what decode batch, and so at what load, speculative decoding stops paying.
    Speculation,
    /// Half the replicas for the same traffic: which number formats still hold the per-token
    /// target.
    HalveCost,
    /// Why decode is memory-bound and prefill compute-bound, how large a decode batch may grow,
    /// and why the streaming fleet still needs the replicas the seed question found.
    Roofline,
    /// The seed's load on separate prefill and decode pools: how many replicas each, what the
    /// split costs beside replicas that do both, and the KV cache's move between them.
    Split,
    /// How much host memory keeps a day of chats' KV caches warm, what the fleet's hosts hold,
    /// and what the chats that will come back need (Little's law on the turns in between).
    Host,
}

/// One step of a derivation, as the learner taps through it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    /// Stable identifier, safe in URLs and tests, e.g. `prefill_per_token`.
    pub id: &'static str,
    /// Short human label, e.g. "Prefill time per token".
    pub label: &'static str,
    /// The formula in symbols, e.g. `2 × P / (F × MFU)`.
    pub formula: String,
    /// The formula with this derivation's numbers in it.
    pub substituted: String,
    /// The value, unrounded, in `unit`.
    pub value: f64,
    /// Unit of `value` (SI base units for time and bytes: seconds, bytes).
    pub unit: &'static str,
    /// The value formatted for people, with its unit, e.g. `32.5 µs`.
    pub display: String,
    /// One sentence on why the step matters.
    pub why: String,
    /// For a check step, whether the check passes; `None` for an ordinary figure.
    pub check: Option<bool>,
}

/// A step is built by name, never by position: `Step::new(id, label)`, then its formula, then
/// its value (or its check), then why it matters.
impl Step {
    /// The step `id`, shown as `label`, with nothing in it yet.
    pub(crate) fn new(id: &'static str, label: &'static str) -> Step {
        Step {
            id,
            label,
            formula: String::new(),
            substituted: String::new(),
            value: 0.0,
            unit: "",
            display: String::new(),
            why: String::new(),
            check: None,
        }
    }

    /// The formula in `symbols`, and with this derivation's `numbers` in it.
    pub(crate) fn formula(
        mut self,
        symbols: impl Into<String>,
        numbers: impl Into<String>,
    ) -> Step {
        self.formula = symbols.into();
        self.substituted = numbers.into();
        self
    }

    /// An ordinary figure: `value` in `unit`, shown as `display`.
    pub(crate) fn value(
        mut self,
        value: f64,
        unit: &'static str,
        display: impl Into<String>,
    ) -> Step {
        self.value = value;
        self.unit = unit;
        self.display = display.into();
        self
    }

    /// A check: its value is the `ratio` of the checked figure to its limit, and it passes when
    /// `ok`.
    pub(crate) fn check(mut self, ratio: f64, ok: bool) -> Step {
        self.value = ratio;
        self.unit = "";
        self.display = format!(
            "{} ({} of the limit)",
            if ok { "passes" } else { "fails" },
            crate::text::format::percent(ratio)
        );
        self.check = Some(ok);
        self
    }

    /// One sentence on why the step matters.
    pub(crate) fn why(mut self, why: impl Into<String>) -> Step {
        self.why = why.into();
        self
    }
}

/// A question worked through for one set of inputs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Derivation {
    /// The question worked through.
    pub question: Question,
    /// The steps in the order the learner taps through them.
    pub steps: Vec<Step>,
    /// What bounds the answer, computed from the steps.
    pub verdict: Verdict,
}

/// Something that can cap a serving fleet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Tensor-core throughput (prefill, or a compute-bound decode).
    Compute,
    /// HBM bandwidth (a memory-bound decode step reading weights and KV).
    HbmBandwidth,
    /// Room for the KV cache.
    KvCapacity,
    /// The per-token latency target and the concurrency it implies.
    LatencyTarget,
}

/// How hard a limit presses on the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pressure {
    /// This limit sets the answer.
    Binding,
    /// A real share of the load, but not the one that sets the answer.
    Secondary,
    /// Plenty of room left.
    Slack,
}

impl Pressure {
    /// Binding when `binds`, slack otherwise.
    pub fn binding_if(binds: bool) -> Pressure {
        if binds {
            Pressure::Binding
        } else {
            Pressure::Slack
        }
    }
}

/// One limit's reading, with the figure behind it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LimitReading {
    /// The limit read.
    pub limit: Limit,
    /// How hard it presses.
    pub pressure: Pressure,
    /// One sentence with the number that decided the pressure.
    pub reason: String,
}

/// The closing judgement of a derivation: which limits bind, which have slack.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// Every limit the question assesses, in [`Limit`] order.
    pub readings: Vec<LimitReading>,
    /// The first sentence of the summary: which limits set the answer, e.g. "KV capacity
    /// bounds the answer." (the rest of the summary repeats the readings).
    pub headline: String,
    /// The judgement in a sentence or two, starting with the headline.
    pub summary: String,
    /// The lesson's computed sentences on this derivation's figures (`{say q/id}`), each
    /// chosen from the figures with the same case as the reading on them.
    pub said: Vec<Said>,
}

/// A sentence the lesson reads from a derivation: one alternative of `content/verdict.toml`'s
/// `[say]`, chosen from the figures and filled.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Said {
    /// Stable id the lesson names (`{say fleet/decode}`).
    pub id: &'static str,
    /// The step whose figure it judges: a page holds the sentence back while that figure is.
    pub step: &'static str,
    /// The key of the alternative chosen (in `[say]`).
    pub key: &'static str,
    /// The sentence.
    pub text: String,
}

/// Every question, in the order the app lists them.
pub fn questions() -> Vec<Question> {
    Question::ALL.to_vec()
}

impl Question {
    pub const ALL: [Question; 9] = [
        Question::Fleet,
        Question::Roofline,
        Question::ChatsPerReplica,
        Question::GpuHours,
        Question::Batch,
        Question::Speculation,
        Question::HalveCost,
        Question::Split,
        Question::Host,
    ];

    /// Stable URL-safe identifier.
    pub fn id(self) -> &'static str {
        match self {
            Question::Fleet => "fleet",
            Question::ChatsPerReplica => "chats-per-replica",
            Question::GpuHours => "gpu-hours",
            Question::Batch => "batch",
            Question::Speculation => "speculation",
            Question::HalveCost => "halve-cost",
            Question::Roofline => "roofline",
            Question::Split => "split",
            Question::Host => "host",
        }
    }

    /// Finds a question by its [`Question::id`].
    pub fn from_id(id: &str) -> Option<Question> {
        Question::ALL.into_iter().find(|q| q.id() == id)
    }

    /// The question as a heading (from `content/sizing.toml`).
    pub fn title(self) -> &'static str {
        words::question(self.id()).map_or(self.id(), |w| w.title.as_str())
    }

    /// The question as the learner is given it, in one paragraph (from `content/sizing.toml`),
    /// its `{input NAME}`s filled with the question's defaults as the form shows them.
    pub fn prompt(self) -> String {
        let text = words::question(self.id()).map_or("", |w| w.prompt.as_str());
        crate::text::fill_or_dash(text, |inside| self.prompt_figure(inside))
    }

    /// One `{input NAME}` of the prompt, at the question's defaults.
    pub fn prompt_figure(self, inside: &str) -> Result<String, String> {
        match inside.split_once(' ') {
            Some(("input", name)) => Inputs::defaults(self)
                .shown(self, name.trim())
                .ok_or_else(|| format!("{} has no input {name:?}", self.id())),
            _ => Err("a question's prompt takes {input NAME}".into()),
        }
    }

    /// The inputs of this question with their default values (those of its default presets).
    pub fn inputs(self) -> Vec<InputSpec> {
        Inputs::defaults(self).specs(self)
    }

    /// The id of the step that answers the question.
    pub fn answer_step(self) -> &'static str {
        match self {
            Question::Fleet => "replicas",
            Question::ChatsPerReplica => "chats",
            Question::GpuHours => "gpu_hours_per_million",
            Question::Batch => "replicas",
            Question::Speculation => "crossover_rate",
            Question::HalveCost => "budget_tpot",
            Question::Roofline => "largest_batch",
            Question::Split => "split_gpus",
            Question::Host => "window_host_bytes",
        }
    }
}

impl Derivation {
    /// The step with this id, if the derivation has one.
    pub fn step(&self, id: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.id == id)
    }

    /// The step that answers the question.
    pub fn answer(&self) -> Option<&Step> {
        self.step(self.question.answer_step())
    }

    /// The lesson's sentence `id` on this derivation (`{say q/id}`), if the question has one.
    pub fn said(&self, id: &str) -> Option<&Said> {
        self.verdict.said.iter().find(|s| s.id == id)
    }
}

impl Limit {
    /// How the limit reads in a sentence.
    pub fn label(self) -> &'static str {
        words::verdict_word(
            "limits",
            match self {
                Limit::Compute => "compute",
                Limit::HbmBandwidth => "hbm_bandwidth",
                Limit::KvCapacity => "kv_capacity",
                Limit::LatencyTarget => "latency_target",
            },
        )
    }
}

impl Verdict {
    /// The limits that set the answer.
    pub fn binding(&self) -> Vec<Limit> {
        self.with(Pressure::Binding)
    }

    /// The limits with plenty of room.
    pub fn slack(&self) -> Vec<Limit> {
        self.with(Pressure::Slack)
    }

    /// The pressure on one limit, if the question assesses it.
    pub fn pressure(&self, limit: Limit) -> Option<Pressure> {
        self.readings
            .iter()
            .find(|r| r.limit == limit)
            .map(|r| r.pressure)
    }

    fn with(&self, p: Pressure) -> Vec<Limit> {
        self.readings
            .iter()
            .filter(|r| r.pressure == p)
            .map(|r| r.limit)
            .collect()
    }
}
