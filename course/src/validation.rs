//! The simulator against published measurements.
//!
//! `content/validation/measurements.toml` holds measured figures from public benchmarks of
//! vLLM (and one other serving framework where vLLM published none), each with its source,
//! the conditions it was measured under and the figure. [`run_row`] replays a row's
//! conditions through the replica simulator with the default (calibrated) efficiencies and
//! vLLM's defaults, computes the same figure under `vllm bench`'s definition
//! ([`trainer_engine::replica::metrics::ServeMetrics`]), and says how far it lands from the measurement. The
//! test `validation` fails when a row leaves its band; the app shows the same table.
//!
//! Nothing in a row tunes the model: a row gives only what its source states (model, GPU,
//! GPUs per replica, number formats, scheduler settings of that engine version, the request
//! pattern and lengths). The efficiencies are the same [`Efficiency::CALIBRATED`] for all.

use serde::{Deserialize, Serialize};
use trainer_engine::catalog::Dtype;
use trainer_engine::cost::{Deployment, Efficiency, MemoryConfig};
use trainer_engine::error::ConfigError;
use trainer_engine::replica::metrics::ServeMetrics;
use trainer_engine::replica::{
    ReplicaConfig, ReplicaSim, ReplicaSimConfig, SchedulerConfig, WorkLimits,
};
use trainer_engine::workload::{Arrival, LengthDist, WorkloadConfig};

/// The words of the page that shows the table (no figures).
pub const ABOUT: &str = trainer_engine::files::VALIDATION_ABOUT;

/// [`ABOUT`], parsed.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct About {
    pub title: String,
    pub intro: String,
    pub band: String,
    /// What fitted and held out mean.
    pub roles: String,
    /// The residual plot's section heading, its title and how to read it.
    pub residuals_heading: String,
    pub residuals_title: String,
    pub residuals_caption: String,
    /// The note a simulated figure carries: a heading, a line per regime, and the regimes'
    /// names.
    pub confidence: ConfidenceWords,
    pub models: Vec<String>,
    pub leaves_out: Vec<String>,
    /// The metrics' definitions, as `vllm bench serve` defines them.
    pub metric: Vec<MetricDefinition>,
}

/// The words of the confidence note: `line` takes `{regime}`, `{rows}`, `{held_out}`,
/// `{worst}` and `{mean}`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfidenceWords {
    pub summary: String,
    pub intro: String,
    pub line: String,
    pub waiting: String,
    pub small: String,
    pub mid: String,
    pub large: String,
    pub fp8: String,
}

/// One metric's name and definition.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricDefinition {
    pub key: String,
    pub name: String,
    pub definition: String,
}

/// Parses the page's words and fills their figures: `{band}` ([`BAND`]), `{block_size}` (the
/// KV block the simulator's scheduler uses by default) and `{gpu_memory_utilization}` (vLLM's
/// default share, [`trainer_engine::cost::MemoryConfig::VLLM`]).
pub fn about() -> Result<About, ConfigError> {
    let mut a: About = trainer_engine::files::read(ABOUT)
        .map_err(|e| ConfigError::new("", format!("about: {e}")))?;
    let block = trainer_engine::replica::SchedulerConfig::default().block_size as f64;
    let figure = |inside: &str| match inside {
        "band" => Ok(trainer_engine::format::percent(BAND)),
        "block_size" => Ok(trainer_engine::format::int(block)),
        "gpu_memory_utilization" => Ok(trainer_engine::format::percent(
            trainer_engine::cost::MemoryConfig::VLLM.gpu_memory_utilization,
        )),
        _ => Err("not a figure of this page (band, block_size, gpu_memory_utilization)".into()),
    };
    let fill = |field: &str, t: &mut String| {
        crate::text::fill(t, figure)
            .map(|f| *t = f)
            .map_err(|e| ConfigError::new(format!("about.{field}"), e.join("; ")))
    };
    fill("title", &mut a.title)?;
    fill("intro", &mut a.intro)?;
    fill("band", &mut a.band)?;
    fill("roles", &mut a.roles)?;
    fill("residuals_heading", &mut a.residuals_heading)?;
    fill("residuals_title", &mut a.residuals_title)?;
    fill("residuals_caption", &mut a.residuals_caption)?;
    let c = &mut a.confidence;
    for (field, t) in [
        ("summary", &mut c.summary),
        ("intro", &mut c.intro),
        ("waiting", &mut c.waiting),
        ("small", &mut c.small),
        ("mid", &mut c.mid),
        ("large", &mut c.large),
        ("fp8", &mut c.fp8),
    ] {
        fill(&format!("confidence.{field}"), t)?;
    }
    for t in a.models.iter_mut() {
        fill("models", t)?;
    }
    for t in a.leaves_out.iter_mut() {
        fill("leaves_out", t)?;
    }
    for m in a.metric.iter_mut() {
        fill("metric", &mut m.name)?;
        fill("metric", &mut m.definition)?;
    }
    Ok(a)
}

/// The shipped measurements file.
pub const MEASUREMENTS: &str = trainer_engine::files::VALIDATION_MEASUREMENTS;

/// The measurements file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measurements {
    pub row: Vec<Row>,
}

/// One published measurement and the conditions it was taken under.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    pub id: String,
    /// Whether the calibrated efficiencies were fitted on this row or it was held out.
    pub role: Role,
    /// Where the figure was published (repository and file, or pull request).
    pub source: String,
    /// Engine and version, and scheduling mode.
    pub engine: String,
    /// The conditions in words, as the source states them.
    pub conditions: String,
    pub model: String,
    pub gpu: String,
    pub tp: u32,
    #[serde(default = "bf16")]
    pub weight_dtype: Dtype,
    #[serde(default = "bf16")]
    pub kv_dtype: Dtype,
    /// `latency` or `throughput`.
    pub kind: String,
    /// The `vllm bench` JSON key of the figure (e.g. `median_tpot_ms`, `request_throughput`).
    pub metric: String,
    pub measured: f64,
    pub max_num_seqs: u32,
    pub max_num_batched_tokens: u32,
    /// Whether the engine kept the CPU's per-step work off the GPU's critical path (async
    /// scheduling, or the multi-step scheduling of vLLM 0.6).
    pub async_scheduling: bool,
    /// Whether prompts were chunked and mixed with decodes (vLLM V1, or V0 with chunked
    /// prefill on); false for V0's separate prefill steps.
    #[serde(default = "yes")]
    pub chunked_prefill: bool,
    #[serde(default = "default_util")]
    pub gpu_memory_utilization: f64,
    /// Requests sent.
    pub requests: u32,
    /// Poisson arrivals at this rate (requests per second); absent: all at once.
    #[serde(default)]
    pub rate: Option<f64>,
    /// The client's cap on requests in flight (`--max-concurrency`); absent: none.
    #[serde(default)]
    pub max_concurrency: Option<u32>,
    pub prompt_len: LengthDist,
    pub output_len: LengthDist,
    /// The multi-step scheduling the source ran (`--num-scheduler-steps`), for the row's
    /// words; the simulator models its effect as async scheduling.
    #[serde(default)]
    pub scheduler_steps: Option<u32>,
    /// The context limit the source served with (`--max_model_len`), for the row's words.
    #[serde(default)]
    pub max_model_len: Option<u32>,
    /// Why the row is shown but not held to the band (a mechanism the simulator leaves out).
    #[serde(default)]
    pub excluded: Option<String>,
    /// Speculative decoding as the source ran it (its acceptance rate from the source's own
    /// measured mean acceptance length); absent: off.
    #[serde(default)]
    pub speculative: Option<trainer_engine::replica::spec::SpeculativeConfig>,
}

/// Whether a row was used to fit the calibrated efficiencies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The calibrated efficiencies were fitted on it.
    Fitted,
    /// Kept back: no parameter was tuned on it.
    HeldOut,
}

fn yes() -> bool {
    true
}

fn bf16() -> Dtype {
    Dtype::Bf16
}

fn default_util() -> f64 {
    0.9
}

/// The band every row must land in: within 15 % of its measurement.
pub const BAND: f64 = 0.15;

/// What the simulator made of one row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub id: String,
    pub metric: String,
    pub measured: f64,
    pub simulated: f64,
    /// simulated / measured - 1.
    pub error: f64,
    pub within_band: bool,
    /// The row's reason for not being held to the band, if any.
    pub excluded: Option<String>,
    /// Fitted on or held out.
    pub role: Role,
    /// The row's weights' number format.
    pub weight_dtype: Dtype,
    /// The batch the simulated run kept: output tokens per engine step, a mean over the run.
    pub batch: f64,
    /// Every figure of the simulated run, under vLLM's names.
    pub metrics: ServeMetrics,
}

/// Parses the shipped measurements.
pub fn shipped() -> Result<Measurements, ConfigError> {
    parse(MEASUREMENTS)
}

/// Parses a measurements file. A row's words (`engine`, `conditions`, `excluded`) name its
/// figures as `{param KEY}` (a number of the row itself, see [`crate::text`]), filled here.
pub fn parse(text: &str) -> Result<Measurements, ConfigError> {
    let de = |e: String| ConfigError::new("", format!("measurements: {e}"));
    let mut m: Measurements = trainer_engine::files::read(text).map_err(de)?;
    let written: toml::Value = trainer_engine::files::read(text).map_err(de)?;
    for (i, row) in m.row.iter_mut().enumerate() {
        let Some(table) = written.get("row").and_then(|r| r.get(i)) else {
            continue;
        };
        let figure = |inside: &str| {
            let words: Vec<&str> = inside.split_whitespace().collect();
            match words.as_slice() {
                ["param", path] => crate::text::shown(crate::text::param(table, path)?, None),
                ["param", path, how] => {
                    crate::text::shown(crate::text::param(table, path)?, Some(how))
                }
                _ => Err("a row's words take {param KEY}".to_string()),
            }
        };
        let at = |field: &str| format!("row[{i}].{field}");
        let fill = |field: &str, t: &str| {
            crate::text::fill(t, figure).map_err(|e| ConfigError::new(at(field), e.join("; ")))
        };
        row.engine = fill("engine", &row.engine)?;
        row.conditions = fill("conditions", &row.conditions)?;
        if let Some(x) = &row.excluded {
            row.excluded = Some(fill("excluded", x)?);
        }
    }
    Ok(m)
}

impl Row {
    /// The replica simulation that replays this row.
    pub fn config(&self) -> Result<ReplicaSimConfig, ConfigError> {
        self.config_with(Efficiency::CALIBRATED)
    }

    /// The same with other efficiencies (for calibrating them).
    pub fn config_with(&self, efficiency: Efficiency) -> Result<ReplicaSimConfig, ConfigError> {
        let deployment = Deployment::from_ids(
            &self.model,
            &self.gpu,
            self.tp,
            self.weight_dtype,
            self.kv_dtype,
        )?;
        let replica = ReplicaConfig {
            deployment,
            efficiency,
            memory: MemoryConfig {
                gpu_memory_utilization: self.gpu_memory_utilization,
                ..MemoryConfig::VLLM
            },
            scheduler: SchedulerConfig {
                max_num_seqs: self.max_num_seqs,
                max_num_batched_tokens: self.max_num_batched_tokens,
                async_scheduling: self.async_scheduling,
                chunked_prefill: self.chunked_prefill,
                // Benchmark prompts are distinct: nothing to hit.
                enable_prefix_caching: false,
                ..SchedulerConfig::default()
            },
            kv_blocks_override: None,
            trace_capacity: 0,
            record_token_times: false,
            speculative: self.speculative.clone(),
            lora: None,
        };
        let n = self.requests.max(1);
        let (arrival, duration_s) = match self.rate {
            Some(rate) => (Arrival::Poisson { rate }, n as f64 / rate),
            None => (
                Arrival::Trace {
                    times: vec![0.0; n as usize],
                },
                1.0,
            ),
        };
        let cfg = ReplicaSimConfig {
            replica,
            workload: WorkloadConfig {
                arrival,
                prompt_len: self.prompt_len.clone(),
                output_len: self.output_len.clone(),
                sessions: None,
                tenants: 1,
                duration_s,
                seed: 1,
            },
            limits: WorkLimits {
                max_steps: 5_000_000,
                max_waiting: 1_000_000,
                max_requests: 1_000_000,
            },
            sample_interval_s: 1.0,
            max_concurrency: self.max_concurrency,
        };
        cfg.validate().map_err(|e| e.within(&self.id))?;
        Ok(cfg)
    }
}

/// Replays one row and compares.
pub fn run_row(row: &Row) -> Result<Outcome, ConfigError> {
    run_row_with(row, Efficiency::CALIBRATED)
}

/// Replays one row with other efficiencies.
pub fn run_row_with(row: &Row, efficiency: Efficiency) -> Result<Outcome, ConfigError> {
    let mut sim = ReplicaSim::new(row.config_with(efficiency)?)?;
    let report = sim.run();
    let metrics = report.vllm;
    let batch = metrics.total_output_tokens as f64 / report.steps.max(1) as f64;
    let simulated = metrics.get(&row.metric).ok_or_else(|| {
        ConfigError::new(
            format!("{}.metric", row.id),
            format!("{:?} is not a vllm bench metric", row.metric),
        )
    })?;
    let error = simulated / row.measured - 1.0;
    Ok(Outcome {
        id: row.id.clone(),
        metric: row.metric.clone(),
        measured: row.measured,
        simulated,
        error,
        within_band: error.abs() <= BAND,
        excluded: row.excluded.clone(),
        role: row.role,
        weight_dtype: row.weight_dtype,
        batch,
        metrics,
    })
}

/// A part of the operating range, for the confidence a simulated figure carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Regime {
    /// BF16, at most [`Regime::SMALL_BATCH`] sequences per step.
    SmallBatch,
    /// BF16, between the two.
    MidBatch,
    /// BF16, at least [`Regime::LARGE_BATCH`] sequences per step.
    LargeBatch,
    /// FP8 weights and activations, any batch.
    Fp8,
}

impl Regime {
    pub const ALL: [Regime; 4] = [
        Regime::SmallBatch,
        Regime::MidBatch,
        Regime::LargeBatch,
        Regime::Fp8,
    ];
    /// The largest batch counted small.
    pub const SMALL_BATCH: f64 = 8.0;
    /// The smallest batch counted large.
    pub const LARGE_BATCH: f64 = 64.0;

    /// The regime a run with this batch (output tokens per step) and weight format is in.
    pub fn of(batch: f64, weight_dtype: Dtype) -> Regime {
        if weight_dtype == Dtype::Fp8 {
            Regime::Fp8
        } else if batch <= Self::SMALL_BATCH {
            Regime::SmallBatch
        } else if batch < Self::LARGE_BATCH {
            Regime::MidBatch
        } else {
            Regime::LargeBatch
        }
    }

    /// Its name in the note's words.
    pub fn name(self, w: &ConfidenceWords) -> &str {
        match self {
            Regime::SmallBatch => &w.small,
            Regime::MidBatch => &w.mid,
            Regime::LargeBatch => &w.large,
            Regime::Fp8 => &w.fp8,
        }
    }
}

/// How far the simulator landed from the rows of one regime (those held to the band).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RegimeFit {
    pub regime: Regime,
    pub rows: usize,
    pub held_out: usize,
    /// The largest gap, a fraction.
    pub worst: f64,
    /// The mean size of the gaps, a fraction.
    pub mean: f64,
}

/// Each regime's fit, from the replayed rows; a regime with no row is left out.
pub fn regimes(outcomes: &[Outcome]) -> Vec<RegimeFit> {
    Regime::ALL
        .iter()
        .filter_map(|&regime| {
            let rows: Vec<&Outcome> = outcomes
                .iter()
                .filter(|o| o.excluded.is_none() && Regime::of(o.batch, o.weight_dtype) == regime)
                .collect();
            if rows.is_empty() {
                return None;
            }
            let gaps = rows.iter().map(|o| o.error.abs());
            Some(RegimeFit {
                regime,
                rows: rows.len(),
                held_out: rows.iter().filter(|o| o.role == Role::HeldOut).count(),
                worst: gaps.clone().fold(0.0, f64::max),
                mean: gaps.sum::<f64>() / rows.len() as f64,
            })
        })
        .collect()
}

/// A regime's line of the note, filled from its fit.
pub fn regime_line(w: &ConfidenceWords, fit: &RegimeFit) -> String {
    use trainer_engine::format::{int, percent};
    crate::text::fill_or_dash(&w.line, |inside| match inside {
        "regime" => Ok(fit.regime.name(w).to_string()),
        "rows" => Ok(int(fit.rows as f64)),
        "held_out" => Ok(int(fit.held_out as f64)),
        "worst" => Ok(percent(fit.worst)),
        "mean" => Ok(percent(fit.mean)),
        _ => Err("not a figure of the note (regime, rows, held_out, worst, mean)".into()),
    })
}
