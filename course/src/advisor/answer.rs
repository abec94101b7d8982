//! The answer in words, chosen from a finished search's figures: the cheapest configuration
//! that holds the targets, what binds it, how far the next cheaper one tried misses, and the
//! calculator's estimate beside it with the reason they differ. Words in
//! `content/advisor.toml`; every figure from the runs or the calculator's derivation.

use super::{Point, Pruned, Reason, Search};
use crate::lab::Knob;
use crate::sizing::{derive, Inputs, Question};
use serde::Deserialize;
use trainer_engine::error::ConfigError;
use trainer_engine::format::{duration, int, money, sig};

/// The page's words (`content/advisor.toml`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Words {
    pub title: String,
    pub eyebrow: String,
    pub intro: String,
    pub traffic_heading: String,
    pub targets_heading: String,
    pub choices_heading: String,
    pub gpus_heading: String,
    pub percentile_label: String,
    /// The field that picks the shipped scenario the traffic comes from.
    pub scenario_label: String,
    pub ttft_label: String,
    pub tpot_label: String,
    pub guess_label: String,
    pub guess_bad: String,
    pub run: String,
    pub cancel: String,
    pub running: String,
    pub stage_short: String,
    pub stage_confirm: String,
    pub stopped: String,
    pub stale: String,
    pub answer_heading: String,
    pub ruled_out: String,
    pub took: String,
    pub answer: AnswerWords,
    pub reasons: ReasonWords,
    pub plots: PlotWords,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct AnswerWords {
    pub best: String,
    pub none: String,
    pub binds_ttft: String,
    pub binds_tpot: String,
    pub binds_both: String,
    pub binds_refused: String,
    pub binds_floor: String,
    pub binds_one: String,
    pub cheaper: String,
    pub cheaper_lost: String,
    pub estimate_more: String,
    pub estimate_more_other: String,
    pub estimate_fewer: String,
    pub estimate_same: String,
    pub gpus_one: String,
    pub gpus_many: String,
    pub guess_right: String,
    pub guess_over: String,
    pub guess_under: String,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ReasonWords {
    pub invalid: String,
    pub no_price: String,
    pub no_room: String,
    pub step_too_slow: String,
    pub prefill_too_slow: String,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct PlotWords {
    pub cost_title: String,
    pub cost_caption: String,
    pub speed_title: String,
    pub speed_caption: String,
    pub cost_x: String,
    pub cost_y: String,
    pub speed_x: String,
    pub speed_y: String,
    pub frontier: String,
    pub beaten: String,
    pub ttft_line: String,
    pub tpot_line: String,
    pub col_replicas: String,
    pub col_per_hour: String,
    pub col_per_million: String,
    pub col_ttft: String,
    pub col_tpot: String,
    pub col_per_gpu: String,
    pub col_per_user: String,
    pub col_beaten: String,
    pub col_open: String,
    pub more: String,
}

/// The advisor's words.
pub fn words() -> Result<Words, ConfigError> {
    trainer_engine::files::read(trainer_engine::files::ADVISOR)
        .map_err(|e| ConfigError::new("", format!("advisor.toml: {e}")))
}

/// Fills `template` from `values`; a placeholder without a value becomes a dash (the
/// content test holds every template to the names given here).
pub fn say(template: &str, values: &[(&str, String)]) -> String {
    trainer_engine::text::fill_or_dash(template, |name| {
        values
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("no figure named {name}"))
    })
}

/// A candidate's settings as the lab's panel labels them ("Tensor parallelism: 1 GPUs; ...").
pub fn describe(search: &Search, i: usize) -> String {
    let cfg = &search.setup(i, 1).config;
    search.candidates[i]
        .settings
        .iter()
        .map(|(key, value)| setting_text(cfg, key, value))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One setting as the panel shows it: the knob's label and the option's label (or the value
/// and its unit).
pub fn setting_text(cfg: &trainer_engine::fleet::FleetConfig, key: &str, value: &str) -> String {
    let (label, shown) = setting_parts(cfg, key, value);
    format!("{label}: {shown}")
}

/// [`setting_text`]'s two halves: the knob's label, and the value as the panel shows it.
pub fn setting_parts(
    cfg: &trainer_engine::fleet::FleetConfig,
    key: &str,
    value: &str,
) -> (String, String) {
    let Some(k) = Knob::from_key(key) else {
        return (key.to_string(), value.to_string());
    };
    let shown = k
        .options(cfg)
        .into_iter()
        .find(|(id, _)| id == value)
        .map(|(_, label)| label)
        .unwrap_or_else(|| {
            let unit = k.unit(cfg);
            if unit.is_empty() {
                value.to_string()
            } else {
                format!("{value} {unit}")
            }
        });
    (k.label(cfg).to_string(), shown)
}

/// A pruned combination's reason in words.
pub fn reason(w: &ReasonWords, p: &Pruned) -> String {
    match &p.reason {
        Reason::Invalid { knob, message } => {
            let label = Knob::from_key(knob)
                .map(|k| {
                    k.label(&trainer_engine::fleet::FleetConfig::seed())
                        .to_string()
                })
                .unwrap_or_else(|| knob.clone());
            let value = p
                .settings
                .iter()
                .find(|(k, _)| k == knob)
                .map_or(String::new(), |(_, v)| v.clone());
            say(
                &w.invalid,
                &[
                    ("knob", label),
                    ("value", value),
                    ("message", message.clone()),
                ],
            )
        }
        Reason::NoPrice { gpu } => say(&w.no_price, &[("gpu", gpu.clone())]),
        Reason::NoRoom {
            pool_tokens,
            prompt_tokens,
        } => say(
            &w.no_room,
            &[
                ("pool", int(*pool_tokens)),
                ("prompt", int(*prompt_tokens as f64)),
            ],
        ),
        Reason::StepTooSlow { step_s, target_s } => say(
            &w.step_too_slow,
            &[
                ("step", duration(*step_s, 3)),
                ("target", duration(*target_s, 3)),
            ],
        ),
        Reason::PrefillTooSlow {
            prefill_s,
            target_s,
        } => say(
            &w.prefill_too_slow,
            &[
                ("prefill", duration(*prefill_s, 3)),
                ("target", duration(*target_s, 3)),
            ],
        ),
    }
}

/// The calculator's answer to the fleet question for the same traffic and per-token target,
/// on the first GPU searched at its price (its other inputs at their defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub replicas: f64,
    pub gpus: f64,
    pub dollars_per_hour: f64,
    /// The decode batch the estimate assumes per replica.
    pub batch: f64,
}

/// The calculator's estimate for `search`'s traffic and model (on its first candidate's
/// split), or `None` when the calculator refuses it.
pub fn estimate(search: &Search) -> Option<Estimate> {
    let q = Question::Fleet;
    let cfg = &search.setup(0, 1).config;
    let w = &cfg.traffic.first()?.workload;
    let mut inputs = Inputs::defaults(q);
    let (gpu, price) = search.space.prices.first()?;
    inputs.set_choice(q, "gpu", gpu).ok()?;
    // The model served, on the split of the first candidate (one GPU for the seed's 8B).
    let d = &cfg.pools.first()?.replica.deployment;
    inputs.set_choice(q, "model", &d.model.id).ok()?;
    inputs.set(q, "gpus_per_replica", d.tp as f64).ok()?;
    for (name, v) in [
        ("rate", w.arrival.mean_rate()),
        ("prompt_tokens", w.prompt_len.mean().round()),
        ("output_tokens", w.output_len.mean().round()),
        ("tpot_ms", search.space.targets.tpot_s * 1e3),
        ("price", *price),
    ] {
        inputs.set(q, name, v).ok()?;
    }
    let d = derive(q, &inputs).ok()?;
    Some(Estimate {
        replicas: d.step("replicas")?.value,
        gpus: d.step("gpus")?.value,
        dollars_per_hour: d.step("cost_per_hour")?.value,
        batch: inputs.get("batch")?,
    })
}

/// How the calculator's estimate stands beside the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EstimateCase {
    /// It costs more, and the runs held more streams per replica than the batch it assumes.
    MoreBatched,
    /// It costs more, though the runs held no more streams per replica than it assumes (its
    /// format, its ceiling or its prefill demand is what differs, not the batch).
    More,
    Fewer,
    Same,
}

/// Which sentence sets the estimate beside an answer costing `cost` an hour whose runs held
/// `streams` open per replica.
pub fn estimate_case(e: &Estimate, cost: f64, streams: f64) -> EstimateCase {
    if e.dollars_per_hour > cost {
        if streams > e.batch {
            EstimateCase::MoreBatched
        } else {
            EstimateCase::More
        }
    } else if e.dollars_per_hour < cost {
        EstimateCase::Fewer
    } else {
        EstimateCase::Same
    }
}

/// The figures every sentence may name.
fn common(search: &Search) -> Vec<(&'static str, String)> {
    let t = &search.space.targets;
    vec![
        ("pct", t.percentile.name().to_string()),
        ("ttft_target", duration(t.ttft_s, 3)),
        ("tpot_target", duration(t.tpot_s, 3)),
        ("max", int(search.space.max_replicas as f64)),
        ("confirm", duration(search.space.confirm_s, 3)),
    ]
}

/// The answer's sentences, in order, each with a key for the page's `data-testid`s.
pub fn answer(search: &Search, w: &AnswerWords) -> Vec<(&'static str, String)> {
    let mut v = common(search);
    let Some((best, n)) = search.best() else {
        return vec![("none", say(&w.none, &v))];
    };
    let c = &search.candidates[best];
    let Some(run) = search.run_at(best, n) else {
        return vec![("none", say(&w.none, &v))];
    };
    v.extend([
        ("config", describe(search, best)),
        ("replicas", int(n as f64)),
        ("gpus", int((n * c.gpus_per_replica) as f64)),
        ("per_hour", money(c.dollars_per_hour(n))),
        ("per_million", money(run.dollars_per_million)),
        ("ttft", duration(run.ttft_s, 3)),
        ("tpot", duration(run.tpot_s, 3)),
    ]);
    let mut out = vec![("best", say(&w.best, &v))];
    // What binds it: the run at one replica fewer, or the arithmetic that ruled it out.
    let binds = if n == 1 {
        ("binds", say(&w.binds_one, &v))
    } else if let Some(f) = search.run_at(best, n - 1) {
        let t = &search.space.targets;
        let lost = f.refused + f.timed_out;
        v.extend([
            ("fewer_ttft", duration(f.ttft_s, 3)),
            ("fewer_tpot", duration(f.tpot_s, 3)),
            ("fewer_lost", int(lost as f64)),
        ]);
        let (over_ttft, over_tpot) = (f.ttft_s / t.ttft_s, f.tpot_s / t.tpot_s);
        let template = if lost > 0 || f.overloaded {
            &w.binds_refused
        } else if over_ttft > 1.0 && over_tpot > 1.0 {
            &w.binds_both
        } else if over_ttft >= over_tpot {
            &w.binds_ttft
        } else {
            &w.binds_tpot
        };
        ("binds", say(template, &v))
    } else {
        v.extend([
            ("demand", format!("{} tokens", sig(c.floor.demand_tok_s, 3))),
            (
                "capacity",
                format!("{} tokens", sig(c.floor.capacity_tok_s, 3)),
            ),
        ]);
        ("binds", say(&w.binds_floor, &v))
    };
    out.push(binds);
    // The next cheaper configuration tried: the dearest run that costs less than the answer.
    let cost = c.dollars_per_hour(n);
    let cheaper = search
        .points
        .iter()
        .filter(|p| p.dollars_per_hour < cost && !p.holds)
        .max_by(|a, b| {
            a.dollars_per_hour
                .total_cmp(&b.dollars_per_hour)
                .then(b.miss(search).total_cmp(&a.miss(search)))
        });
    if let Some(p) = cheaper {
        let lost = p.refused + p.timed_out;
        v.extend([
            ("cheaper_config", describe(search, p.candidate)),
            ("cheaper_replicas", int(p.replicas as f64)),
            ("cheaper_per_hour", money(p.dollars_per_hour)),
            ("cheaper_ttft", duration(p.ttft_s, 3)),
            ("cheaper_tpot", duration(p.tpot_s, 3)),
            (
                "cheaper_lost",
                if lost > 0 {
                    say(&w.cheaper_lost, &[("lost", int(lost as f64))])
                } else {
                    String::new()
                },
            ),
        ]);
        out.push(("cheaper", say(&w.cheaper, &v)));
    }
    if let Some(e) = estimate(search) {
        v.extend([
            ("est_replicas", int(e.replicas)),
            ("est_per_hour", money(e.dollars_per_hour)),
            ("est_batch", int(e.batch)),
            ("run_batch", sig(run.open_streams / n as f64, 2)),
        ]);
        let template = match estimate_case(&e, cost, run.open_streams / n as f64) {
            EstimateCase::MoreBatched => &w.estimate_more,
            EstimateCase::More => &w.estimate_more_other,
            EstimateCase::Fewer => &w.estimate_fewer,
            EstimateCase::Same => &w.estimate_same,
        };
        out.push(("estimate", say(template, &v)));
    }
    out
}

/// The learner's guess of the GPUs in the cheapest fleet, set beside what the runs found and
/// what the calculator's arithmetic said; `None` when nothing held the targets.
pub fn guessed(search: &Search, w: &AnswerWords, guess: u32) -> Option<String> {
    let (best, n) = search.best()?;
    let found = n * search.candidates[best].gpus_per_replica;
    let est = estimate(search).map_or(String::from("—"), |e| int(e.gpus));
    let values = [
        (
            "guess",
            say(
                if guess == 1 {
                    &w.gpus_one
                } else {
                    &w.gpus_many
                },
                &[("n", int(guess as f64))],
            ),
        ),
        ("found", int(found as f64)),
        ("gap", int(guess.abs_diff(found) as f64)),
        ("est", est),
    ];
    let template = match guess.cmp(&found) {
        std::cmp::Ordering::Equal => &w.guess_right,
        std::cmp::Ordering::Greater => &w.guess_over,
        std::cmp::Ordering::Less => &w.guess_under,
    };
    Some(say(template, &values))
}

impl Point {
    /// How far the run is from the targets: the larger of its two latencies over its target
    /// (one or less holds them).
    pub fn miss(&self, search: &Search) -> f64 {
        let t = &search.space.targets;
        (self.ttft_s / t.ttft_s).max(self.tpot_s / t.tpot_s)
    }
}
