//! Interview moments (`content/moments/*.toml`): an interviewer's question, three or four
//! approaches, and every approach run on the same traffic. A fleet moment maps each option to
//! an arm of a shipped fleet scenario, run for the moment's horizon and read through named
//! figures of the report; a break-even moment prices each option with the sizing engine (an
//! always-on self-hosted fleet against a hosted API's per-token prices); a search moment
//! names a configuration per option and the advisor's search ([`crate::advisor`]) finds the
//! smallest fleet of each that holds the targets, so the learner guesses the winner before
//! the search runs. The outcome ranks
//! the options on the figure the moment is about, among those that hold its SLO, and the
//! `content` test checks that the option the file calls strong is the one that wins.

use crate::advisor::{Form, Search};
use crate::sizing::{derive, Inputs, Question};
use crate::text::lookup;
pub use crate::text::{show, UNITS};
use serde::{Deserialize, Serialize};
use trainer_engine::cost::{CostModel, Deployment, Efficiency};
use trainer_engine::engine::Engine;
use trainer_engine::error::ConfigError;
use trainer_engine::files;
use trainer_engine::fleet::{FleetConfig, FleetReport, FleetSim};
use trainer_engine::scenario::fleet::FleetScenario;

/// The shipped moments, as (id, text: see [`trainer_engine::files`]), in the order the app
/// lists them.
pub const BUILTIN: [(&str, &str); 13] = [
    ("routing", files::MOMENTS_ROUTING),
    ("autoscaler", files::MOMENTS_AUTOSCALER),
    ("rag", files::MOMENTS_RAG),
    ("self-host", files::MOMENTS_SELF_HOST),
    ("long-prompts", files::MOMENTS_LONG_PROMPTS),
    ("ttft-gap", files::MOMENTS_TTFT_GAP),
    ("halve-cost", files::MOMENTS_HALVE_COST),
    ("spec-latency", files::MOMENTS_SPEC_LATENCY),
    ("cheapest-fleet", files::MOMENTS_CHEAPEST_FLEET),
    ("disconnect", files::MOMENTS_DISCONNECT),
    ("disaggregate", files::MOMENTS_DISAGGREGATE),
    ("long-chats", files::MOMENTS_LONG_CHATS),
    ("adapters", files::MOMENTS_ADAPTERS),
];

/// One moment.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Moment {
    pub id: String,
    pub title: String,
    /// The interviewer's question.
    pub prompt: String,
    /// What the interviewer says once the options are compared.
    pub closing: String,
    /// For a fleet moment: the shipped scenario whose arms the options are, and how long to run.
    #[serde(default)]
    pub scenario: Option<String>,
    #[serde(default)]
    pub horizon_s: Option<f64>,
    /// For a break-even moment: the traffic and the prices.
    #[serde(default)]
    pub break_even: Option<BreakEvenSpec>,
    /// For a search moment: the advisor's query for what every option shares (the percentile,
    /// the GPUs' prices; the traffic and targets stay the seed's, which its words read), each
    /// option naming one configuration in `settings`.
    #[serde(default)]
    pub search: Option<String>,
    /// The figure the moment is about, and which way is better.
    pub key: String,
    pub better: Better,
    /// A target every option must hold to count (a figure at most `max`).
    #[serde(default)]
    pub slo: Option<Slo>,
    /// How far behind the best an option that holds the target may be and still be acceptable,
    /// as a factor on the key figure (2: at most twice the best's when lower is better, at
    /// least half when higher is); beyond it the option is weak. None: any option that holds
    /// the target is acceptable.
    #[serde(default)]
    pub acceptable_within: Option<f64>,
    /// Whether the ranking changes with the load within the range the moment is checked at
    /// (25 % less to 25 % more traffic); the page then says where, from its runs.
    #[serde(default)]
    pub load_dependent: bool,
    /// A moment about two times of day: every option also runs at this fraction of the
    /// scenario's traffic (the quiet hour), and a figure whose path starts with `quiet.` reads
    /// that run's report.
    #[serde(default)]
    pub quiet_load: Option<f64>,
    /// A number the learner estimates before the runs are shown.
    #[serde(default)]
    pub estimate: Option<EstimateSpec>,
    #[serde(rename = "figure")]
    pub figures: Vec<Figure>,
    #[serde(rename = "option")]
    pub options: Vec<MomentOption>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Lower,
    Higher,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Slo {
    pub figure: String,
    pub max: f64,
}

/// An estimate the learner types first: the prefill time of a prompt of `tokens` on the
/// scenario's first pool, at the calculator's efficiencies.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EstimateSpec {
    pub prompt: String,
    pub unit: String,
    pub tokens: u32,
}

/// A figure shown for every option.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    pub id: String,
    pub label: String,
    /// A dotted path into the option's outcome as JSON (`clocks.server_ttft.p99`,
    /// `pools.0.prefix_hit_rate`; for a break-even moment, a field of [`BreakEven`]).
    pub path: String,
    /// How to show it: `s`, `fraction`, `dollars`, `gpu_hours`, `count`, `rate` or `tokens`.
    pub unit: String,
}

/// How an interviewer grades an approach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grade {
    Weak,
    Acceptable,
    Strong,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MomentOption {
    pub id: String,
    pub label: String,
    /// The scenario arm that runs this option (fleet moments).
    #[serde(default)]
    pub arm: Option<String>,
    /// Self-hosted replicas, 0 for the hosted API (break-even moments).
    #[serde(default)]
    pub replicas: Option<u32>,
    /// The advisor's query for one value of each axis (search moments): `tp=1&weights=fp8`.
    #[serde(default)]
    pub settings: Option<String>,
    pub grade: Grade,
    /// Why, in the interviewer's voice.
    pub why: String,
}

/// The traffic and prices of a break-even moment.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BreakEvenSpec {
    pub rate: f64,
    pub prompt_tokens: u32,
    pub output_tokens: u32,
    pub model: String,
    pub gpu: String,
    pub gpu_hour_price: f64,
    pub hours_per_month: f64,
    pub api_price_per_m_input: f64,
    pub api_price_per_m_output: f64,
}

/// One option of a break-even moment, priced.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BreakEven {
    /// What the option costs a month at the moment's traffic.
    pub monthly_dollars: f64,
    /// The traffic over what the option's replicas can carry at the calculator's ceiling
    /// (None for the hosted API).
    pub capacity_used: Option<f64>,
    /// Requests per second at which one always-on replica costs what the API costs.
    pub break_even_rate: f64,
    /// Requests per second one replica carries at the calculator's utilisation ceiling.
    pub replica_capacity_rate: f64,
}

/// What one option did: its figures, in the moment's order.
#[derive(Clone, Debug, PartialEq)]
pub struct OptionOutcome {
    pub figures: Vec<Option<f64>>,
}

/// Every shipped moment.
pub fn moments() -> Result<Vec<Moment>, ConfigError> {
    BUILTIN.iter().map(|(_, t)| parse(t)).collect()
}

/// The shipped moment `id`.
pub fn moment(id: &str) -> Result<Moment, ConfigError> {
    let (_, text) = BUILTIN
        .iter()
        .find(|(m, _)| *m == id)
        .ok_or_else(|| ConfigError::new("moment", format!("no moment called {id:?}")))?;
    parse(text)
}

/// Reads a moment file and checks it hangs together: one strong option, each option with
/// what runs it, the key and SLO naming figures.
pub fn parse(text: &str) -> Result<Moment, ConfigError> {
    let mut m: Moment = files::read(text).map_err(|e| ConfigError::new("moment", e))?;
    m.fill_words(text)?;
    m.check()?;
    Ok(m)
}

/// Whether a placeholder is one the runs fill (`{option.figure}`), not the file.
fn is_run_placeholder(inside: &str) -> bool {
    inside.contains('.') && !inside.contains(char::is_whitespace)
}

impl Moment {
    /// Fills the figures every text of the moment names from its parameters, so none is typed:
    /// `{param PATH}` (and `{times}`, `{per}`, `{prefill}`, `{fig}`, `{input}`, as a scenario's
    /// words take them, see [`crate::text`]) read the moment's scenario file as written (a
    /// break-even moment: its own file), `{target}` is the SLO's limit in its figure's unit,
    /// `{tokens}` the prompt length of the estimate.
    /// `{option.figure}` is left for the runs ([`Moment::fill`]).
    fn fill_words(&mut self, own: &str) -> Result<(), ConfigError> {
        let scenario = self.scenario.clone().or_else(|| {
            self.search
                .as_ref()
                .map(|_| crate::advisor::form::PRESET.to_string())
        });
        let (file, cost) = match &scenario {
            Some(name) => {
                let (_, text) = trainer_engine::scenario::fleet::BUILTIN
                    .iter()
                    .find(|(f, _)| f.trim_end_matches(".toml") == name)
                    .ok_or_else(|| {
                        ConfigError::new("scenario", format!("no fleet scenario called {name:?}"))
                    })?;
                let file: toml::Value =
                    files::read(text).map_err(|e| ConfigError::new("scenario", e))?;
                let s = FleetScenario::builtin(name)?;
                let cost = s
                    .arms
                    .first()
                    .and_then(|(_, f)| f.pools.first())
                    .and_then(|p| {
                        CostModel::new(p.replica.deployment.clone(), p.replica.efficiency).ok()
                    });
                (file, cost)
            }
            None => (
                files::read(own).map_err(|e| ConfigError::new("moment", e))?,
                None,
            ),
        };
        let target = self.slo.as_ref().and_then(|s| {
            let unit = &self.figures.get(self.figure_index(&s.figure)?)?.unit;
            Some(show(unit, s.max))
        });
        let tokens = self.estimate.as_ref().map(|e| e.tokens);
        let id = self.id.clone();
        let fill_one = |field: &str, text: &mut String| -> Result<(), ConfigError> {
            let filled = crate::text::fill(text, |inside| {
                if is_run_placeholder(inside) {
                    Ok(format!("{{{inside}}}"))
                } else if inside == "tokens" {
                    tokens
                        .map(|t| trainer_engine::format::int(t as f64))
                        .ok_or_else(|| "the moment has no estimate".to_string())
                } else if inside == "target" {
                    target
                        .clone()
                        .ok_or_else(|| "the moment has no target".to_string())
                } else {
                    crate::sizing::figure(inside, &file, cost.as_ref())
                }
            })
            .map_err(|e| ConfigError::new(format!("moment {id}.{field}"), e.join("; ")))?;
            *text = filled;
            Ok(())
        };
        fill_one("title", &mut self.title)?;
        fill_one("prompt", &mut self.prompt)?;
        fill_one("closing", &mut self.closing)?;
        if let Some(e) = &mut self.estimate {
            fill_one("estimate.prompt", &mut e.prompt)?;
        }
        for o in &mut self.options {
            fill_one("label", &mut o.label)?;
            fill_one("why", &mut o.why)?;
        }
        Ok(())
    }

    fn check(&self) -> Result<(), ConfigError> {
        let err = |msg: String| Err(ConfigError::new(format!("moment {}", self.id), msg));
        let strong = self
            .options
            .iter()
            .filter(|o| o.grade == Grade::Strong)
            .count();
        if strong != 1 {
            return err(format!("needs exactly one strong option, has {strong}"));
        }
        if !(3..=5).contains(&self.options.len()) {
            return err(format!(
                "offers three to five options, not {}",
                self.options.len()
            ));
        }
        if let Some(f) = self.acceptable_within {
            if !(f.is_finite() && f > 1.0) {
                return err(format!("acceptable_within is a factor above 1, not {f}"));
            }
        }
        if let Some(q) = self.quiet_load {
            if !(q.is_finite() && q > 0.0 && q < 1.0) {
                return err(format!("quiet_load is a fraction of the traffic, not {q}"));
            }
            if self.scenario.is_none() {
                return err("only a fleet moment has a quiet hour (quiet_load)".into());
            }
        } else if let Some(f) = self.figures.iter().find(|f| f.path.starts_with("quiet.")) {
            return err(format!(
                "figure {} reads the quiet hour's run, but the moment sets no quiet_load",
                f.id
            ));
        }
        if let Some(f) = self
            .figures
            .iter()
            .find(|f| !UNITS.contains(&f.unit.as_str()))
        {
            return err(format!(
                "figure {} has no unit called {:?} ({})",
                f.id,
                f.unit,
                UNITS.join(", ")
            ));
        }
        if self.figure_index(&self.key).is_none() {
            return err(format!("its key {:?} is not one of its figures", self.key));
        }
        if let Some(s) = &self.slo {
            if self.figure_index(&s.figure).is_none() {
                return err(format!(
                    "its SLO figure {:?} is not one of its figures",
                    s.figure
                ));
            }
        }
        for (what, text) in self.texts() {
            for name in crate::text::placeholders(text) {
                if self.placeholder(name).is_none() {
                    return err(format!(
                        "{what} fills {{{name}}}, which is not an option's figure (option.figure)"
                    ));
                }
            }
        }
        match (&self.scenario, &self.break_even, &self.search) {
            (Some(_), None, None) => {
                if let Some(o) = self.options.iter().find(|o| o.arm.is_none()) {
                    return err(format!("option {} names no arm", o.id));
                }
                if !self.horizon_s.is_some_and(|h| h > 0.0 && h <= 3600.0) {
                    return err("a fleet moment runs for 1 to 3,600 s (horizon_s)".into());
                }
            }
            (None, Some(_), None) => {
                if let Some(o) = self.options.iter().find(|o| o.replicas.is_none()) {
                    return err(format!("option {} names no replica count", o.id));
                }
            }
            (None, None, Some(q)) => {
                let d = Form::default();
                let shared = Form::from_query(q);
                if let Some((k, m)) = shared.errors.iter().next() {
                    return err(format!("search: {k}: {m}"));
                }
                if shared.traffic != d.traffic
                    || shared.ttft_ms != d.ttft_ms
                    || shared.tpot_ms != d.tpot_ms
                {
                    return err(
                        "search: the traffic and targets are the seed's (the words read its file)"
                            .into(),
                    );
                }
                for o in &self.options {
                    let Some(settings) = &o.settings else {
                        return err(format!("option {} names no settings", o.id));
                    };
                    let f = Form::from_query(&format!("{q}&{settings}"));
                    if let Some((k, m)) = f.errors.iter().next() {
                        return err(format!("option {}: {k}: {m}", o.id));
                    }
                    let space = f.space();
                    if space.axes.iter().any(|a| a.values.len() != 1) || space.prices.len() != 1 {
                        return err(format!(
                            "option {} names one value of every axis and one GPU",
                            o.id
                        ));
                    }
                }
            }
            _ => {
                return err("has one of a scenario, a break_even table or a search, not two".into())
            }
        }
        Ok(())
    }

    /// Every text the page fills from the runs: the closing and each option's reason.
    fn texts(&self) -> impl Iterator<Item = (String, &str)> {
        std::iter::once(("the closing".to_string(), self.closing.as_str())).chain(
            self.options
                .iter()
                .map(|o| (format!("option {}'s why", o.id), o.why.as_str())),
        )
    }

    /// The option and figure indices a `{option.figure}` placeholder names.
    fn placeholder(&self, name: &str) -> Option<(usize, usize)> {
        let (opt, fig) = name.split_once('.')?;
        Some((
            self.options.iter().position(|o| o.id == opt)?,
            self.figure_index(fig)?,
        ))
    }

    /// A text of the moment with every `{option.figure}` replaced by that option's figure as
    /// its run measured it (shown in the figure's unit; a dash when the run has none), so no
    /// figure in a reason or the closing is typed by hand.
    pub fn fill(&self, text: &str, outcomes: &[OptionOutcome]) -> String {
        crate::text::fill_or_dash(text, |name| {
            Ok(match self.placeholder(name) {
                Some((o, f)) => outcomes
                    .get(o)
                    .and_then(|x| x.figures.get(f).copied().flatten())
                    .map_or("—".to_string(), |v| show(&self.figures[f].unit, v)),
                // Not a run's figure (parsing refuses those): left as written.
                None => format!("{{{name}}}"),
            })
        })
    }

    /// The index of figure `id`.
    pub fn figure_index(&self, id: &str) -> Option<usize> {
        self.figures.iter().position(|f| f.id == id)
    }

    /// The option the file calls strong.
    pub fn strong(&self) -> Option<&MomentOption> {
        self.options.iter().find(|o| o.grade == Grade::Strong)
    }

    /// The fleets a fleet moment runs, one per option in order, cut to its horizon, on the
    /// engine that teaches (the validated one) at the scenario's own load and seeds (empty
    /// for a break-even moment).
    pub fn fleets(&self) -> Result<Vec<FleetConfig>, ConfigError> {
        self.fleets_for(Variant::default())
    }

    /// The fleets for one variant of the moment's runs: another engine, the traffic scaled,
    /// other seeds. The page and the tests that check a ranking holds both come here.
    pub fn fleets_for(&self, v: Variant) -> Result<Vec<FleetConfig>, ConfigError> {
        let Some(name) = &self.scenario else {
            return Ok(Vec::new());
        };
        let s = FleetScenario::builtin(name)?;
        let mut fleets = self
            .options
            .iter()
            .map(|o| {
                let arm = o.arm.as_deref().unwrap_or_default();
                let mut f = s.arm(arm).cloned().ok_or_else(|| {
                    ConfigError::new("arm", format!("scenario {name} has no arm {arm:?}"))
                })?;
                f.truncate(self.horizon_s.unwrap_or(60.0));
                v.apply(&mut f);
                Ok(f)
            })
            .collect::<Result<Vec<_>, ConfigError>>()?;
        if let Some(q) = self.quiet_load {
            // The same options at the quiet hour: the variant's traffic, scaled down again.
            let quiet = Variant {
                engine: v.engine,
                load: q,
                seed: 0,
            };
            let quiet: Vec<FleetConfig> = fleets
                .iter()
                .cloned()
                .map(|mut f| {
                    quiet.apply(&mut f);
                    f
                })
                .collect();
            fleets.extend(quiet);
        }
        Ok(fleets)
    }

    /// How many fleets one variant runs ([`Moment::fleets_for`]): one per option, twice over
    /// for a moment with a quiet hour.
    pub fn runs_per_variant(&self) -> usize {
        self.options.len() * if self.quiet_load.is_some() { 2 } else { 1 }
    }

    /// Every option's figures from the reports of one variant's fleets, in the order
    /// [`Moment::fleets_for`] gives them (an option's quiet-hour report is read under `quiet.`).
    pub fn outcomes<'a>(
        &self,
        reports: impl IntoIterator<Item = &'a FleetReport>,
    ) -> Vec<OptionOutcome> {
        let values: Vec<serde_json::Value> = reports
            .into_iter()
            .map(|r| serde_json::to_value(r).unwrap_or_default())
            .collect();
        let n = self.options.len();
        (0..n)
            .map(|i| {
                let mut v = values.get(i).cloned().unwrap_or_default();
                if self.quiet_load.is_some() {
                    if let (Some(o), Some(q)) = (v.as_object_mut(), values.get(n + i)) {
                        o.insert("quiet".into(), q.clone());
                    }
                }
                self.read(&v)
            })
            .collect()
    }

    /// Requests per second the scenario offers at its busiest (every source that runs at
    /// once, at `load` times its rate): what the page names a variant's load by.
    pub fn peak_rate(&self, load: f64) -> Option<f64> {
        let f = self.fleets().ok()?.into_iter().next()?;
        let rate = f.offered_rate();
        (rate > 0.0).then_some(rate * load)
    }

    /// Each option's grade, computed from what the runs show: an option that misses the SLO
    /// (or has no key figure) is weak; of those that hold it, the best on the key figure is
    /// strong, with every option whose figure equals it; the rest that hold it are acceptable
    /// (within `acceptable_within` of the best, when the moment sets it; weak beyond). Equal
    /// figures get equal grades, and no option that misses the target can
    /// outrank one that holds it.
    pub fn grades(&self, outcomes: &[OptionOutcome]) -> Vec<Grade> {
        let key = self.figure_index(&self.key).unwrap_or(0);
        let score = |o: &OptionOutcome| {
            o.figures[key].map(|v| match self.better {
                Better::Lower => v,
                Better::Higher => -v,
            })
        };
        let holds = |o: &OptionOutcome| self.holds_slo(o) && score(o).is_some();
        let best = outcomes
            .iter()
            .filter(|o| holds(o))
            .filter_map(score)
            .fold(f64::INFINITY, f64::min);
        // Within the factor of the best: lower is better, so the best's value times the factor
        // (higher is better: scores are negated, so the best's divided by it).
        let close = |s: f64| match self.acceptable_within {
            None => true,
            Some(f) => match self.better {
                Better::Lower => s <= best * f,
                Better::Higher => s <= best / f,
            },
        };
        outcomes
            .iter()
            .map(|o| match score(o) {
                Some(s) if holds(o) && same_figure(s, best) => Grade::Strong,
                Some(s) if holds(o) && close(s) => Grade::Acceptable,
                _ => Grade::Weak,
            })
            .collect()
    }

    fn read(&self, v: &serde_json::Value) -> OptionOutcome {
        OptionOutcome {
            figures: self.figures.iter().map(|f| lookup(v, &f.path)).collect(),
        }
    }

    /// Every option's figures under `v`, each run done here to its end (the app runs them in
    /// the workers instead, through [`Moment::rounds`]); a break-even moment prices its
    /// options.
    pub fn run_options(&self, v: Variant) -> Result<Vec<OptionOutcome>, ConfigError> {
        if let Some(priced) = self.break_even_outcomes() {
            return priced;
        }
        let mut r = self.rounds(v)?;
        loop {
            let fleets = r.due();
            if fleets.is_empty() {
                return Ok(r.outcomes(self));
            }
            let reports = fleets
                .into_iter()
                .map(|f| {
                    let mut sim = FleetSim::new(f)?;
                    sim.run();
                    Ok(sim.report())
                })
                .collect::<Result<Vec<_>, ConfigError>>()?;
            r.record(&reports);
        }
    }

    /// The runs of a fleet or search moment under `v`, in rounds: a fleet moment has one
    /// round, its fleets; a search moment as many as its options' searches ask for.
    pub fn rounds(&self, v: Variant) -> Result<Rounds, ConfigError> {
        let plan = match &self.search {
            Some(_) => Plan::Searches(self.searches_for(v)?),
            None => Plan::Fleets {
                fleets: self.fleets_for(v)?,
                reports: None,
            },
        };
        Ok(Rounds {
            plan,
            asked: Vec::new(),
        })
    }

    /// One search per option of a search moment, each of one configuration, on the variant's
    /// engine, traffic and seeds (empty for other moments).
    pub fn searches_for(&self, v: Variant) -> Result<Vec<Search>, ConfigError> {
        let Some(q) = &self.search else {
            return Ok(Vec::new());
        };
        self.options
            .iter()
            .map(|o| {
                let settings = o.settings.as_deref().unwrap_or_default();
                let space = Form::from_query(&format!("{q}&{settings}")).space();
                Search::varied(space, |f| v.apply(f))
                    .map_err(|m| ConfigError::new(format!("option {}", o.id), m))
            })
            .collect()
    }

    /// Option `i`'s configuration as the lab's panel names it, a "label: value" per axis
    /// (search moments; empty otherwise).
    pub fn option_settings(&self, i: usize) -> Vec<String> {
        let (Some(q), Some(settings)) = (
            &self.search,
            self.options.get(i).and_then(|o| o.settings.as_deref()),
        ) else {
            return Vec::new();
        };
        let space = Form::from_query(&format!("{q}&{settings}")).space();
        let cfg = crate::lab::Setup::from_query(&space.base).config;
        space
            .axes
            .iter()
            .filter_map(|a| {
                let v = a.values.first()?;
                Some(crate::advisor::answer::setting_text(&cfg, &a.knob, v))
            })
            .collect()
    }

    /// The link to the advisor with option `i`'s configuration alone (search moments).
    pub fn advisor_query(&self, i: usize) -> Option<String> {
        let q = self.search.as_ref()?;
        let settings = self.options.get(i)?.settings.as_deref()?;
        Some(Form::from_query(&format!("{q}&{settings}")).query())
    }

    /// Every option of a break-even moment, priced (None for a fleet moment).
    pub fn break_even_outcomes(&self) -> Option<Result<Vec<OptionOutcome>, ConfigError>> {
        let spec = self.break_even.as_ref()?;
        Some(
            self.options
                .iter()
                .map(|o| {
                    let b = break_even(spec, o.replicas.unwrap_or(0))?;
                    Ok(self.read(&serde_json::to_value(b).unwrap_or_default()))
                })
                .collect(),
        )
    }

    /// The derived answer to the moment's estimate, in its unit.
    pub fn estimate_answer(&self) -> Result<Option<f64>, ConfigError> {
        let Some(e) = &self.estimate else {
            return Ok(None);
        };
        let fleets = self.fleets()?;
        let pool = fleets
            .first()
            .and_then(|f| f.pools.first())
            .ok_or_else(|| ConfigError::new("estimate", "needs a fleet scenario with a pool"))?;
        let cost = CostModel::new(pool.replica.deployment.clone(), Efficiency::REFERENCE)?;
        // The parameter FLOPs and attention's, which grows with the square of the prompt.
        let seconds =
            e.tokens as f64 * cost.prefill_time_per_token() + cost.prompt_attention_time(e.tokens);
        Ok(Some(match e.unit.as_str() {
            "ms" => seconds * 1e3,
            _ => seconds,
        }))
    }

    /// The options ranked: indices of those that hold the SLO (all of them when the moment has
    /// none), best first on the key figure; then those that miss it.
    pub fn ranking(&self, outcomes: &[OptionOutcome]) -> Vec<usize> {
        let key = self.figure_index(&self.key).unwrap_or(0);
        let holds = |o: &OptionOutcome| match &self.slo {
            None => true,
            Some(s) => self
                .figure_index(&s.figure)
                .and_then(|i| o.figures[i])
                .is_some_and(|v| v <= s.max),
        };
        let score = |o: &OptionOutcome| {
            let v = o.figures[key].unwrap_or(f64::NAN);
            match self.better {
                Better::Lower => v,
                Better::Higher => -v,
            }
        };
        let mut idx: Vec<usize> = (0..outcomes.len()).collect();
        idx.sort_by(|&a, &b| {
            let (oa, ob) = (&outcomes[a], &outcomes[b]);
            holds(ob)
                .cmp(&holds(oa))
                .then(score(oa).total_cmp(&score(ob)))
        });
        idx
    }

    /// Whether option `i` holds the SLO in `outcome`.
    pub fn holds_slo(&self, outcome: &OptionOutcome) -> bool {
        match &self.slo {
            None => true,
            Some(s) => self
                .figure_index(&s.figure)
                .and_then(|i| outcome.figures[i])
                .is_some_and(|v| v <= s.max),
        }
    }
}

/// Prices `replicas` always-on self-hosted replicas (0: the hosted API) for the moment's
/// traffic. A replica's capacity comes from the fleet question's derivation at these lengths
/// (its prefill and decode demand at the calculator's ceiling), so the cost model is the
/// calculator's.
pub fn break_even(spec: &BreakEvenSpec, replicas: u32) -> Result<BreakEven, ConfigError> {
    let q = Question::Fleet;
    let mut inputs = Inputs::defaults(q);
    inputs.set_choice(q, "model", &spec.model)?;
    inputs.set_choice(q, "gpu", &spec.gpu)?;
    inputs.set(q, "rate", spec.rate)?;
    inputs.set(q, "prompt_tokens", spec.prompt_tokens as f64)?;
    inputs.set(q, "output_tokens", spec.output_tokens as f64)?;
    inputs.set(q, "price", spec.gpu_hour_price)?;
    let d = derive(q, &inputs).map_err(|e| {
        e.into_iter()
            .next()
            .unwrap_or_else(|| ConfigError::new("break_even", "does not derive"))
    })?;
    let exact = d
        .step("replicas_exact")
        .map(|s| s.value)
        .ok_or_else(|| ConfigError::new("break_even", "no replica demand"))?;
    let gpus = inputs.get("gpus_per_replica").unwrap_or(1.0);
    // Demand scales with the rate: one replica at the ceiling carries rate / exact.
    let capacity = if exact > 0.0 { spec.rate / exact } else { 0.0 };
    let per_request = (spec.prompt_tokens as f64 * spec.api_price_per_m_input
        + spec.output_tokens as f64 * spec.api_price_per_m_output)
        / 1e6;
    let seconds = spec.hours_per_month * 3600.0;
    let replica_month = gpus * spec.gpu_hour_price * spec.hours_per_month;
    let (monthly, used) = if replicas == 0 {
        (spec.rate * seconds * per_request, None)
    } else {
        (
            replicas as f64 * replica_month,
            Some(spec.rate / (replicas as f64 * capacity)),
        )
    };
    Ok(BreakEven {
        monthly_dollars: monthly,
        capacity_used: used,
        break_even_rate: replica_month / (seconds * per_request),
        replica_capacity_rate: capacity,
    })
}

/// The deployment a break-even moment self-hosts (for the app's words).
pub fn break_even_deployment(spec: &BreakEvenSpec) -> Result<Deployment, ConfigError> {
    Deployment::from_ids(
        &spec.model,
        &spec.gpu,
        1,
        trainer_engine::catalog::Dtype::Bf16,
        trainer_engine::catalog::Dtype::Bf16,
    )
}

/// What the runs at other loads say about the moment's strong option.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoadFinding {
    /// The strong option is graded strong at every load run.
    StrongHolds,
    /// At `load` times the scenario's traffic, option `best` does better.
    Better { load: f64, best: usize },
    /// At `load`, no option holds the target.
    NoneHolds { load: f64 },
}

impl Moment {
    /// The conclusions the runs at several loads support, from each load's computed grades
    /// (`(load, grades)`, in the order run): where the strong option stops being the best,
    /// where nothing holds, or that it holds everywhere.
    pub fn load_findings(&self, rows: &[(f64, Vec<Grade>)]) -> Vec<LoadFinding> {
        let Some(strong) = self.options.iter().position(|o| o.grade == Grade::Strong) else {
            return Vec::new();
        };
        let found: Vec<LoadFinding> = rows
            .iter()
            .filter_map(|(load, grades)| {
                let best = grades.iter().position(|&g| g == Grade::Strong);
                match best {
                    None => Some(LoadFinding::NoneHolds { load: *load }),
                    Some(_) if grades.get(strong) == Some(&Grade::Strong) => None,
                    Some(best) => Some(LoadFinding::Better { load: *load, best }),
                }
            })
            .collect();
        if found.is_empty() {
            vec![LoadFinding::StrongHolds]
        } else {
            found
        }
    }
}

/// How a moment's runs are varied to check that a ranking holds (and to show where it does
/// not): the engine, the traffic as a multiple of the scenario's, and an offset to every seed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Variant {
    pub engine: Engine,
    pub load: f64,
    pub seed: u64,
}

impl Default for Variant {
    fn default() -> Self {
        Variant {
            engine: Engine::Validated,
            load: 1.0,
            seed: 0,
        }
    }
}

impl Variant {
    /// The loads besides the scenario's own that a ranking must survive (or the page shows
    /// where it flips): a quarter less and a quarter more traffic.
    pub const OTHER_LOADS: [f64; 2] = [0.75, 1.25];

    /// Puts a fleet on the variant's engine, scales every source's rate by its load and moves
    /// every seed by its offset (offset 0 leaves the scenario's seeds as they are).
    pub fn apply(&self, f: &mut FleetConfig) {
        self.engine.apply(f);
        // Large odd multipliers, so that nearby offsets give unrelated streams.
        f.seed = f.seed.wrapping_add(self.seed.wrapping_mul(7_919));
        for t in &mut f.traffic {
            t.workload.seed = t
                .workload
                .seed
                .wrapping_add(self.seed.wrapping_mul(104_729));
        }
        f.scale_load(self.load);
    }
}

/// How a moment's runs are found: all at once, or by each option's search.
#[derive(Clone, Debug)]
enum Plan {
    Fleets {
        fleets: Vec<FleetConfig>,
        reports: Option<Vec<FleetReport>>,
    },
    Searches(Vec<Search>),
}

/// A moment's runs in rounds ([`Moment::rounds`]): [`Rounds::due`] gives the fleets due now
/// (independent: run them in any order, side by side), [`Rounds::record`] takes their
/// reports in the same order, until `due` is empty; then [`Rounds::outcomes`].
#[derive(Clone, Debug)]
pub struct Rounds {
    plan: Plan,
    /// The runs of the round in hand: the option's search and its run.
    asked: Vec<(usize, crate::advisor::RunSpec)>,
}

/// What a search moment reads for an option: the smallest fleet of its configuration that
/// held the targets over the confirming run, and that run's figures (`null`: none held).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SizedOption {
    pub replicas: u32,
    pub gpus: u32,
    pub dollars_per_hour: f64,
    pub dollars_per_million: f64,
    /// Server TTFT and time per output token at the targets' percentile, seconds.
    pub ttft_s: f64,
    pub tpot_s: f64,
    pub tokens_per_gpu_s: f64,
    /// Mean streams open per replica.
    pub streams_per_replica: f64,
    /// The count the short runs found (the confirming run may have needed more).
    pub short_replicas: Option<u32>,
}

impl Rounds {
    /// The fleets to run now; empty when every run is done.
    pub fn due(&mut self) -> Vec<FleetConfig> {
        match &mut self.plan {
            Plan::Fleets { fleets, reports } => {
                if reports.is_some() {
                    Vec::new()
                } else {
                    fleets.clone()
                }
            }
            Plan::Searches(searches) => {
                self.asked = searches
                    .iter_mut()
                    .enumerate()
                    .flat_map(|(k, s)| s.pending().into_iter().map(move |r| (k, r)))
                    .collect();
                self.asked
                    .iter()
                    .map(|(k, r)| searches[*k].fleet(r))
                    .collect()
            }
        }
    }

    /// The reports of the fleets [`Rounds::due`] gave, in its order.
    pub fn record(&mut self, got: &[FleetReport]) {
        match &mut self.plan {
            Plan::Fleets { reports, .. } => *reports = Some(got.to_vec()),
            Plan::Searches(searches) => {
                for ((k, run), report) in self.asked.drain(..).zip(got) {
                    searches[k].record(run, report);
                }
            }
        }
    }

    /// Every option's figures, once the runs are done.
    pub fn outcomes(&self, m: &Moment) -> Vec<OptionOutcome> {
        match &self.plan {
            Plan::Fleets { reports, .. } => m.outcomes(reports.iter().flatten()),
            Plan::Searches(searches) => searches
                .iter()
                .map(|s| {
                    let v = sized(s).map_or(serde_json::Value::Null, |o| {
                        serde_json::to_value(o).unwrap_or_default()
                    });
                    m.read(&v)
                })
                .collect(),
        }
    }

    /// The searches of a search moment (for the page's links and plots).
    pub fn searches(&self) -> &[Search] {
        match &self.plan {
            Plan::Searches(s) => s,
            Plan::Fleets { .. } => &[],
        }
    }
}

/// The smallest confirmed fleet of a one-configuration search, with its run's figures.
fn sized(s: &Search) -> Option<SizedOption> {
    let (i, n) = s.best()?;
    let p = s.run_at(i, n)?;
    let c = &s.candidates[i];
    Some(SizedOption {
        replicas: n,
        gpus: n * c.gpus_per_replica,
        dollars_per_hour: c.dollars_per_hour(n),
        dollars_per_million: p.dollars_per_million,
        ttft_s: p.ttft_s,
        tpot_s: p.tpot_s,
        tokens_per_gpu_s: p.tokens_per_gpu_s,
        streams_per_replica: p.open_streams / n as f64,
        short_replicas: match s.stages[i] {
            crate::advisor::Stage::Done { short, .. } => short,
            _ => None,
        },
    })
}

/// Whether two key figures are the same for grading: equal to nine significant digits, so
/// two runs that behaved identically tie however their sums were ordered.
fn same_figure(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_moment_parses_and_checks() {
        let all = moments().expect("the moments parse");
        assert_eq!(all.len(), BUILTIN.len());
        for (m, (id, _)) in all.iter().zip(BUILTIN) {
            assert_eq!(m.id, id);
        }
    }

    #[test]
    fn a_moment_without_one_strong_option_is_refused() {
        let text = BUILTIN[0]
            .1
            .replace("grade = \"strong\"", "grade = \"weak\"");
        let e = parse(&text).expect_err("no strong option");
        assert!(e.message.contains("exactly one strong"), "{e:?}");
    }

    #[test]
    fn reasons_are_filled_from_the_runs_and_a_bad_placeholder_is_refused() {
        let m = moment("routing").unwrap();
        let mut outcomes = vec![
            OptionOutcome {
                figures: vec![None; m.figures.len()]
            };
            m.options.len()
        ];
        let hit = m.figure_index("prefix_hit_rate").unwrap();
        outcomes[0].figures[hit] = Some(0.25);
        let text = m.fill(
            "{round-robin.prefix_hit_rate} and {least-outstanding.prefix_hit_rate}",
            &outcomes,
        );
        assert_eq!(text, "25 % and —");
        // Every shipped reason names only options and figures the moment has.
        for m in moments().unwrap() {
            for (what, t) in m.texts() {
                assert!(!m.fill(t, &[]).contains('{'), "{}: {what}", m.id);
            }
        }
        let bad = BUILTIN[0].1.replace(
            "{prefix-affinity.server_ttft_p99}",
            "{prefix-affinity.nonsense}",
        );
        assert!(parse(&bad).unwrap_err().message.contains("nonsense"));
    }

    #[test]
    fn grades_follow_the_runs_with_ties_shared() {
        let m = moment("autoscaler").unwrap();
        let (t, h) = (
            m.figure_index("server_ttft_p99").unwrap(),
            m.figure_index("gpu_hours").unwrap(),
        );
        let o = |ttft: f64, hours: Option<f64>| {
            let mut figures = vec![None; m.figures.len()];
            figures[t] = Some(ttft);
            figures[h] = hours;
            OptionOutcome { figures }
        };
        // The cheapest misses the target: weak, and it cannot outrank those that hold it.
        let runs = [
            o(9.0, Some(1.0)),
            o(0.1, Some(2.0)),
            o(0.1, Some(1.5)),
            o(0.2, Some(1.5)),
        ];
        assert_eq!(
            m.grades(&runs),
            vec![Grade::Weak, Grade::Acceptable, Grade::Strong, Grade::Strong]
        );
        assert_ne!(m.ranking(&runs)[0], 0);
        // No key figure: weak.
        let runs = [o(0.1, None), o(0.1, Some(2.0)), o(0.1, Some(3.0))];
        assert_eq!(
            m.grades(&runs),
            vec![Grade::Weak, Grade::Strong, Grade::Acceptable]
        );
    }

    #[test]
    fn the_findings_at_other_loads_name_where_the_answer_changes() {
        use Grade::*;
        let m = moment("autoscaler").unwrap();
        let strong = m.options.iter().position(|o| o.grade == Strong).unwrap();
        let at = |strong_grade: Grade, other: usize| {
            let mut g = vec![Acceptable; m.options.len()];
            g[strong] = strong_grade;
            if strong_grade != Strong {
                g[other] = Strong;
            }
            g
        };
        let other = (strong + 1) % m.options.len();
        let rows = vec![
            (0.75, at(Acceptable, other)),
            (1.0, at(Strong, 0)),
            (1.25, vec![Weak; m.options.len()]),
        ];
        assert_eq!(
            m.load_findings(&rows),
            vec![
                LoadFinding::Better {
                    load: 0.75,
                    best: other
                },
                LoadFinding::NoneHolds { load: 1.25 }
            ]
        );
        let rows = vec![(0.75, at(Strong, 0)), (1.25, at(Strong, 0))];
        assert_eq!(m.load_findings(&rows), vec![LoadFinding::StrongHolds]);
    }

    #[test]
    fn the_break_even_is_where_the_bills_meet() {
        let m = moment("self-host").unwrap();
        let spec = m.break_even.clone().unwrap();
        let one = break_even(&spec, 1).unwrap();
        let api = break_even(&spec, 0).unwrap();
        // At the break-even rate the API's bill equals one replica's.
        let at = BreakEvenSpec {
            rate: one.break_even_rate,
            ..spec.clone()
        };
        let api_at = break_even(&at, 0).unwrap();
        assert!((api_at.monthly_dollars - one.monthly_dollars).abs() < 1e-6 * one.monthly_dollars);
        assert_eq!(
            one.monthly_dollars,
            spec.gpu_hour_price * spec.hours_per_month
        );
        assert!(api.monthly_dollars < one.monthly_dollars);
        assert!(api.capacity_used.is_none());
        assert!(one.capacity_used.unwrap() < 0.5);
    }

    #[test]
    fn the_rag_estimate_is_the_briefs_prefill_arithmetic_with_attention() {
        let m = moment("rag").unwrap();
        let ms = m.estimate_answer().unwrap().unwrap();
        // 8,000 × 2 × 70.55e9 FLOPs for the parameters, plus attention: 4 × 80 layers ×
        // 8,192 query dimensions per attended position, 8,000 × 8,001 / 2 positions; over
        // 4 × 989e12 × 0.5 FLOP/s, in milliseconds.
        let flops = 8000.0 * 2.0 * 70_553_706_496.0 + 4.0 * 80.0 * 8192.0 * 8000.0 * 8001.0 / 2.0;
        let want = flops / (4.0 * 989e12 * 0.5) * 1e3;
        assert!((ms - want).abs() < 1e-6 * want, "{ms} vs {want}");
    }

    #[test]
    fn a_search_moment_names_one_configuration_per_option() {
        let text = files::MOMENTS_CHEAPEST_FLEET;
        let m = parse(text).unwrap();
        assert!(m.search.is_some());
        // Its words read the seed's file: no placeholder is left.
        assert!(!m.prompt.contains("{param"), "{}", m.prompt);
        let refused = |t: &str, what: &str| {
            let e = parse(t).expect_err(what);
            assert!(e.message.contains(what), "{what}: {e:?}");
        };
        refused(
            &text.replacen("max_seqs=32&", "max_seqs=32,64&", 1),
            "one value of every axis",
        );
        refused(&text.replacen("weights=bf16", "weights=int3", 1), "int3");
        refused(
            &text.replacen("search = \"\"", "search = \"rate=80\"", 1),
            "traffic and targets are the seed's",
        );
        refused(
            &text.replacen("settings = \"tp=2", "arm = \"tp=2", 1),
            "names no settings",
        );
        // Each option's link to the advisor searches that configuration alone.
        let q = m.advisor_query(0).unwrap();
        assert!(
            q.contains("max_seqs=32") && q.contains("weights=bf16"),
            "{q}"
        );
    }

    #[test]
    fn a_fleet_moment_runs_in_one_round_and_a_search_moment_in_several() {
        let m = moment("routing").unwrap();
        let mut r = m.rounds(Variant::default()).unwrap();
        assert_eq!(r.due().len(), m.options.len());
        r.record(&[]);
        assert!(r.due().is_empty());
        let m = moment("cheapest-fleet").unwrap();
        let mut r = m.rounds(Variant::default()).unwrap();
        let mut rounds = 0;
        loop {
            let fleets = r.due();
            if fleets.is_empty() {
                break;
            }
            rounds += 1;
            let reports: Vec<FleetReport> = fleets
                .into_iter()
                .map(|f| {
                    let mut sim = FleetSim::new(f).unwrap();
                    sim.run();
                    sim.report()
                })
                .collect();
            r.record(&reports);
        }
        assert!(rounds > 1, "{rounds} rounds");
        assert_eq!(r.searches().len(), m.options.len());
        let o = r.outcomes(&m);
        // The same figures as running them here in one go.
        assert_eq!(o, m.run_options(Variant::default()).unwrap());
    }
}
