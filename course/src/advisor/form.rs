//! The advisor page's inputs and their URL: the traffic, the targets and the choices to
//! search, read from a query string (never panicking: every bad value is named on its field
//! and the field keeps its default) and written back, so a search has a link.

use super::{Axis, Percentile, Space, Targets};
use crate::lab::{Knob, Setup};
use crate::sizing::{query_pairs, write_query};
use std::collections::BTreeMap;
use trainer_engine::catalog::{gpu_by_id, model_by_id, models};

/// The scenario whose traffic the form changes unless the learner picks another.
pub const PRESET: &str = "fleet-seed";

/// The shipped fleet scenarios a search may take its traffic from, by id.
pub fn scenarios() -> Vec<String> {
    trainer_engine::scenario::fleet::BUILTIN
        .iter()
        .map(|(f, _)| f.trim_end_matches(".toml").to_string())
        .collect()
}

/// A traffic field: the form's key and the lab knob it sets on the preset.
pub const TRAFFIC: [(&str, &str); 3] = [
    ("rate", "rate"),
    ("prompt", "prompt_a"),
    ("output", "output_a"),
];

/// The axes the form offers: the key (the lab knob's), and every value a learner may tick.
pub const CHOICES: [(&str, &[&str]); 5] = [
    ("tp", &["1", "2", "4", "8"]),
    ("weights", &["bf16", "fp8-weight-only", "fp8"]),
    ("max_seqs", &["32", "64", "128", "256", "512"]),
    ("budget", &["2048", "8192", "16384"]),
    ("spec", &["off", "ngram", "eagle"]),
];

/// What each axis searches when the URL does not say.
const DEFAULT_TICKED: [(&str, &[&str]); 5] = [
    ("tp", &["1", "2"]),
    ("weights", &["bf16", "fp8-weight-only", "fp8"]),
    ("max_seqs", &["64", "128", "256"]),
    ("budget", &["2048", "8192"]),
    ("spec", &["off"]),
];

/// Axes left out of the search while only the preset's own value is ticked, so a choice
/// most searches do not make (speculation) adds nothing to every candidate's description.
const OMITTED_AT_PRESET: [&str; 1] = ["spec"];

/// What the advisor page keeps in its URL beside the form: the guess as typed (committed when
/// the search starts) and whether the search ran, so a link to a result runs it again (the
/// same runs give the same figures).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageState {
    pub guess: String,
    pub run: bool,
}

/// The advisor's inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    /// Traffic fields as typed (`rate`, `prompt`, `output`), in the knobs' units.
    pub traffic: BTreeMap<String, String>,
    /// Targets, milliseconds, and the percentile.
    pub ttft_ms: f64,
    pub tpot_ms: f64,
    pub percentile: Percentile,
    /// The values ticked on each axis of [`CHOICES`].
    pub ticked: BTreeMap<String, Vec<String>>,
    /// GPUs searched, each with its price per GPU-hour.
    pub gpus: Vec<(String, f64)>,
    /// The model served (a catalog id).
    pub model: String,
    /// The shipped fleet scenario the traffic (and the defaults) come from.
    pub scenario: String,
    /// Messages by field key.
    pub errors: BTreeMap<String, String>,
}

impl Default for Form {
    fn default() -> Self {
        Form::from_query("")
    }
}

fn preset_setup(scenario: &str) -> Setup {
    Setup::from_query(&format!("preset={scenario}"))
}

impl Form {
    /// The form a query string describes; a bad value is named in `errors` and its field keeps
    /// the default.
    pub fn from_query(query: &str) -> Form {
        Form::from_pairs(query_pairs(query))
    }

    /// The page's query: the form, and the page's own state beside it ([`PageState`]: the
    /// guess and whether the search ran). A `run` other than `1` is named in `errors`.
    pub fn from_page_query(query: &str) -> (Form, PageState) {
        let mut pairs = query_pairs(query);
        let guess = pairs.remove("guess").unwrap_or_default();
        let run = pairs.remove("run");
        let mut f = Form::from_pairs(pairs);
        match run.as_deref() {
            None | Some("1") => {}
            Some(v) => {
                f.errors.insert(
                    "run".into(),
                    format!("must be 1 (run the search), got “{v}”"),
                );
            }
        }
        let run = run.as_deref() == Some("1");
        (f, PageState { guess, run })
    }

    /// The page's query string: [`Form::query`] with the page's state after it.
    pub fn page_query(&self, page: &PageState) -> String {
        let mut q = self.query();
        let guess = page.guess.trim();
        let mut extra: Vec<(&str, String)> = Vec::new();
        if !guess.is_empty() {
            extra.push(("guess", guess.to_string()));
        }
        if page.run {
            extra.push(("run", "1".into()));
        }
        if !extra.is_empty() {
            if !q.is_empty() {
                q.push('&');
            }
            q.push_str(&write_query(&extra));
        }
        q
    }

    fn from_pairs(mut pairs: BTreeMap<String, String>) -> Form {
        // The scenario first: the other fields' defaults are its.
        let mut f = Form::defaults(PRESET);
        if let Some(v) = pairs.remove("scenario") {
            if let Err(m) = f.set("scenario", &v) {
                f.errors.insert("scenario".into(), m);
            }
        }
        for (key, value) in &pairs {
            if let Err(m) = f.set(key, value) {
                f.errors.insert(key.clone(), m);
            }
        }
        f
    }

    /// The form with every field at `scenario`'s values (a shipped fleet scenario).
    fn defaults(scenario: &str) -> Form {
        let base = preset_setup(scenario);
        let cfg = &base.config;
        Form {
            traffic: TRAFFIC
                .iter()
                .map(|(key, knob)| {
                    let v = Knob::from_key(knob).map_or(String::new(), |k| k.get(cfg));
                    (key.to_string(), v)
                })
                .collect(),
            ttft_ms: cfg.slo.ttft_s * 1e3,
            tpot_ms: cfg.slo.tpot_s * 1e3,
            percentile: Percentile::P99,
            ticked: DEFAULT_TICKED
                .iter()
                .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
                .collect(),
            gpus: cfg
                .pools
                .first()
                .map(|p| vec![(p.replica.deployment.gpu.id.clone(), p.gpu_hour_price)])
                .unwrap_or_default(),
            model: cfg
                .pools
                .first()
                .map_or(String::new(), |p| p.replica.deployment.model.id.clone()),
            scenario: scenario.to_string(),
            errors: BTreeMap::new(),
        }
    }

    /// Sets one field from its text; an unknown key or a bad value is refused with a message
    /// and changes nothing.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let value = value.trim();
        if key == "scenario" {
            if !scenarios().iter().any(|s| s == value) {
                return Err(format!(
                    "“{value}” is not one of {}",
                    scenarios().join(", ")
                ));
            }
            // The traffic, the targets, the model and the GPU become the scenario's; the
            // choices ticked and the percentile stay.
            let mut d = Form::defaults(value);
            d.ticked = std::mem::take(&mut self.ticked);
            d.percentile = self.percentile;
            d.errors = std::mem::take(&mut self.errors);
            *self = d;
        } else if let Some((_, knob)) = TRAFFIC.iter().find(|(k, _)| *k == key) {
            let mut s = preset_setup(&self.scenario);
            let k = Knob::from_key(knob).ok_or("no such knob")?;
            s.set(k, value)?;
            self.traffic.insert(key.into(), value.into());
        } else if key == "ttft" || key == "tpot" {
            let v: f64 = value
                .parse()
                .map_err(|_| format!("must be a number of milliseconds, got “{value}”"))?;
            if !(v.is_finite() && v > 0.0 && v <= 60_000.0) {
                return Err(format!(
                    "must be more than 0 and at most 60,000 ms, got {value}"
                ));
            }
            if key == "ttft" {
                self.ttft_ms = v;
            } else {
                self.tpot_ms = v;
            }
        } else if key == "pct" {
            self.percentile = [
                Percentile::P50,
                Percentile::P90,
                Percentile::P95,
                Percentile::P99,
            ]
            .into_iter()
            .find(|p| p.name() == value)
            .ok_or_else(|| format!("must be p50, p90, p95 or p99, got “{value}”"))?;
        } else if let Some((_, allowed)) = CHOICES.iter().find(|(k, _)| *k == key) {
            let mut vals: Vec<String> = Vec::new();
            for v in value.split(',').map(str::trim).filter(|v| !v.is_empty()) {
                if !allowed.contains(&v) {
                    return Err(format!("“{v}” is not one of {}", allowed.join(", ")));
                }
                if !vals.iter().any(|x| x == v) {
                    vals.push(v.to_string());
                }
            }
            if vals.is_empty() {
                return Err("tick at least one value".into());
            }
            // In the order the form lists them.
            vals.sort_by_key(|v| allowed.iter().position(|a| a == v));
            self.ticked.insert(key.into(), vals);
        } else if key == "model" {
            if model_by_id(value).is_none() {
                let ids: Vec<String> = models().into_iter().map(|m| m.id).collect();
                return Err(format!("“{value}” is not one of {}", ids.join(", ")));
            }
            self.model = value.to_string();
        } else if key == "gpus" {
            let mut gpus = Vec::new();
            for item in value.split(',').map(str::trim).filter(|v| !v.is_empty()) {
                let (id, price) = item.split_once(':').ok_or_else(|| {
                    format!("“{item}” must be a GPU and its price, as h100-sxm:2.5")
                })?;
                if gpu_by_id(id).is_none() {
                    return Err(format!("“{id}” is not a GPU of the catalog"));
                }
                let p: f64 = price
                    .parse()
                    .ok()
                    .filter(|p: &f64| p.is_finite() && *p > 0.0 && *p <= 1000.0)
                    .ok_or_else(|| {
                        format!(
                            "{id}'s price must be more than 0 and at most 1,000 $/h, got “{price}”"
                        )
                    })?;
                if !gpus.iter().any(|(g, _): &(String, f64)| g == id) {
                    gpus.push((id.to_string(), p));
                }
            }
            if gpus.is_empty() {
                return Err("name at least one GPU with its price".into());
            }
            self.gpus = gpus;
        } else {
            return Err(format!("“{key}” is not a field of the advisor"));
        }
        self.errors.remove(key);
        Ok(())
    }

    /// The query string: every field that differs from the default.
    pub fn query(&self) -> String {
        let d = Form::defaults(&self.scenario);
        let mut pairs: Vec<(&str, String)> = Vec::new();
        if self.scenario != PRESET {
            pairs.push(("scenario", self.scenario.clone()));
        }
        for (key, _) in TRAFFIC {
            if self.traffic.get(key) != d.traffic.get(key) {
                pairs.push((key, self.traffic.get(key).cloned().unwrap_or_default()));
            }
        }
        if self.ttft_ms != d.ttft_ms {
            pairs.push(("ttft", crate::lab::knobs::num(self.ttft_ms)));
        }
        if self.tpot_ms != d.tpot_ms {
            pairs.push(("tpot", crate::lab::knobs::num(self.tpot_ms)));
        }
        if self.model != d.model {
            pairs.push(("model", self.model.clone()));
        }
        if self.percentile != Percentile::P99 {
            pairs.push(("pct", self.percentile.name().into()));
        }
        let ticked = Form::defaults(PRESET).ticked;
        for (key, _) in CHOICES {
            if self.ticked.get(key) != ticked.get(key) {
                pairs.push((
                    key,
                    self.ticked.get(key).map_or(String::new(), |v| v.join(",")),
                ));
            }
        }
        if self.gpus != d.gpus {
            let list: Vec<String> = self
                .gpus
                .iter()
                .map(|(g, p)| format!("{g}:{}", crate::lab::knobs::num(*p)))
                .collect();
            pairs.push(("gpus", list.join(",")));
        }
        write_query(&pairs)
    }

    /// The lab query of the traffic: the preset with the traffic fields that differ from it.
    pub fn base_query(&self) -> String {
        let d = Form::defaults(&self.scenario);
        let mut pairs = vec![("preset", self.scenario.clone())];
        for (key, knob) in TRAFFIC {
            if self.traffic.get(key) != d.traffic.get(key) {
                pairs.push((knob, self.traffic.get(key).cloned().unwrap_or_default()));
            }
        }
        write_query(&pairs)
    }

    /// The search these inputs ask for. The GPU axis appears when more than one GPU is named.
    pub fn space(&self) -> Space {
        let cfg = preset_setup(&self.scenario).config;
        let mut axes: Vec<Axis> = CHOICES
            .iter()
            .map(|(key, _)| Axis {
                knob: key.to_string(),
                values: self.ticked.get(*key).cloned().unwrap_or_default(),
            })
            .filter(|a| {
                let at_preset = Knob::from_key(&a.knob)
                    .is_some_and(|k| a.values.len() == 1 && a.values[0] == k.get(&cfg));
                !(OMITTED_AT_PRESET.contains(&a.knob.as_str()) && at_preset)
            })
            .collect();
        // The model is one value, set with the axes (in the lab's order, retried after the
        // tensor parallelism that lets a large model fit), so a combination it does not fit is
        // ruled out with the knob's reason instead of the whole search.
        if self.model != preset_model(&self.scenario) {
            axes.insert(
                0,
                Axis {
                    knob: "model".into(),
                    values: vec![self.model.clone()],
                },
            );
        }
        if self.gpus.len() > 1
            || self
                .gpus
                .first()
                .is_some_and(|(g, _)| *g != preset_gpu(&self.scenario))
        {
            axes.insert(
                0,
                Axis {
                    knob: "gpu".into(),
                    values: self.gpus.iter().map(|(g, _)| g.clone()).collect(),
                },
            );
        }
        Space {
            base: self.base_query(),
            targets: Targets {
                ttft_s: self.ttft_ms / 1e3,
                tpot_s: self.tpot_ms / 1e3,
                percentile: self.percentile,
            },
            axes,
            prices: self.gpus.clone(),
            max_replicas: super::MAX_REPLICAS,
            short_s: super::SHORT_S,
            confirm_s: super::CONFIRM_S,
            confirm: super::CONFIRM,
        }
    }
}

fn preset_model(scenario: &str) -> String {
    preset_setup(scenario)
        .config
        .pools
        .first()
        .map_or(String::new(), |p| p.replica.deployment.model.id.clone())
}

fn preset_gpu(scenario: &str) -> String {
    preset_setup(scenario)
        .config
        .pools
        .first()
        .map_or(String::new(), |p| p.replica.deployment.gpu.id.clone())
}
