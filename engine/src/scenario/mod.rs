//! Scenario files (TOML or JSON) for the replica and fleet simulators.
//!
//! A scenario file says which simulator it is for with a top-level `kind`: `"replica"` for one
//! replica fed by one workload ([`ReplicaFile`], run by [`ReplicaSim`]), `"fleet"` for the
//! whole request path (the format of [`crate::scenario::fleet`]). A file without `kind` is a
//! fleet file when it has `pools`, `traffic` or `arms`, and a replica file otherwise.
//!
//! A replica file names its model and GPU from the catalog; every other field has the seed's
//! default, so the smallest file is `kind = "replica"`:
//!
//! ```toml
//! kind = "replica"
//! name = "replica-seed"
//! [replica]
//! model = "llama-3.1-8b"
//! gpu = "h100-sxm"
//! [replica.scheduler]
//! max_num_batched_tokens = 8192
//! [workload]
//! arrival = { type = "poisson", rate = 6.25 }
//! prompt_len = { type = "constant", value = 1000 }
//! output_len = { type = "constant", value = 250 }
//! duration_s = 3600.0
//! ```
//!
//! Unknown keys are errors, so a typo cannot silently fall back to a default.

use crate::catalog::Dtype;
use crate::cost::{Deployment, Efficiency, MemoryConfig};
use crate::engine::{complete_tables, Engine};
use crate::error::ConfigError;
pub mod fleet;
pub mod words;

use crate::replica::{ReplicaConfig, ReplicaSim, ReplicaSimConfig, SchedulerConfig, WorkLimits};
use crate::workload::WorkloadConfig;
pub use fleet::FleetScenario;
use serde::{Deserialize, Serialize};

/// The replica scenarios shipped with the product, as (file name, text: see [`crate::files`]).
pub const REPLICA_BUILTIN: [(&str, &str); 4] = [
    ("replica-seed.toml", crate::files::SCENARIOS_REPLICA_SEED),
    (
        "replica-follow-one-chat.toml",
        crate::files::SCENARIOS_REPLICA_FOLLOW_ONE_CHAT,
    ),
    (
        "replica-chat-prefix-cache.toml",
        crate::files::SCENARIOS_REPLICA_CHAT_PREFIX_CACHE,
    ),
    (
        "replica-runaway.toml",
        crate::files::SCENARIOS_REPLICA_RUNAWAY,
    ),
];

/// Largest scenario file read, bytes: the shipped ones are about 2 KB.
pub const MAX_SCENARIO_BYTES: usize = 1 << 20;

/// Largest report written, bytes (a replica run's per-request records can exceed it).
pub const MAX_REPORT_BYTES: usize = 64 << 20;

/// Longest message shown for a parse error, in characters: an error that quotes the input
/// cannot echo a huge line back.
const MAX_MESSAGE_CHARS: usize = 240;

/// A message on one line of at most [`MAX_MESSAGE_CHARS`] characters: line breaks and
/// other control characters become spaces, runs of spaces one space.
pub fn one_line(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len().min(MAX_MESSAGE_CHARS + 4));
    let mut chars = 0;
    let mut space = false;
    for c in msg.chars() {
        let c = if c.is_control() { ' ' } else { c };
        if c == ' ' && (space || out.is_empty()) {
            continue;
        }
        space = c == ' ';
        if chars == MAX_MESSAGE_CHARS {
            out.push('…');
            break;
        }
        out.push(c);
        chars += 1;
    }
    out.trim_end().to_string()
}

#[cfg(feature = "parse")]
/// A TOML error as one line: where it is (line and column, from its span) and what it is,
/// without the quoted input the error's own `Display` prints.
pub(crate) fn toml_error(text: &str, e: &toml::de::Error) -> ConfigError {
    let at = e.span().map(|span| {
        let before = &text.as_bytes()[..span.start.min(text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        format!(" at line {line}, column {col}")
    });
    ConfigError::new(
        "",
        one_line(&format!(
            "not valid TOML{}: {}",
            at.unwrap_or_default(),
            e.message()
        )),
    )
}

/// Refuses a file too large to be a scenario before any parser sees it.
pub(crate) fn check_size(text: &str) -> Result<(), ConfigError> {
    if text.len() > MAX_SCENARIO_BYTES {
        return Err(ConfigError::new(
            "",
            format!(
                "the file is {} bytes; a scenario file may be at most {} bytes",
                text.len(),
                MAX_SCENARIO_BYTES
            ),
        ));
    }
    Ok(())
}

/// A parsed scenario of either kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Scenario {
    Replica(Box<ReplicaScenario>),
    Fleet(FleetScenario),
}

/// A replica scenario, ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplicaScenario {
    pub name: String,
    pub title: String,
    pub description: String,
    pub config: ReplicaSimConfig,
    pub output: OutputOptions,
}

/// A replica scenario as its file writes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplicaFile {
    /// Always `"replica"` here.
    pub kind: String,
    pub name: String,
    pub title: String,
    pub description: String,
    pub replica: ReplicaSpec,
    pub workload: WorkloadConfig,
    pub limits: WorkLimits,
    /// Spacing of the KV usage and queue time series, seconds.
    pub sample_interval_s: f64,
    pub output: OutputOptions,
}

/// A replica as a scenario file writes it: catalog ids instead of full shapes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplicaSpec {
    pub model: String,
    pub gpu: String,
    pub tp: u32,
    pub weight_dtype: Dtype,
    pub kv_dtype: Dtype,
    /// The matmuls' input format when it is not the weights' own: `"bf16"` with FP8 weights
    /// is weight-only FP8 (W8A16). Absent: FP8 weights run FP8 matmuls (W8A8).
    pub activation_dtype: Option<Dtype>,
    /// Speculative decoding (off when absent): `{ method = { kind = "ngram" },
    /// num_speculative_tokens = 3, acceptance_rate = 0.6 }`.
    pub speculative: Option<crate::replica::spec::SpeculativeConfig>,
    /// LoRA adapters, one per tenant (off when absent).
    pub lora: Option<crate::replica::lora::LoraConfig>,
    /// The named engine: the validated one when absent (what `vllm serve` does, as
    /// calibrated); `"brief"` runs the calculator's assumptions.
    pub engine: Engine,
    /// The engine's efficiencies; a key the file sets replaces the engine's value, and every
    /// other key stays the engine's (see [`crate::engine`]).
    pub efficiency: Efficiency,
    pub memory: MemoryConfig,
    pub scheduler: SchedulerConfig,
    pub kv_blocks_override: Option<u32>,
    pub trace_capacity: usize,
    pub record_token_times: bool,
}

/// Which of the long lists a run's report keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OutputOptions {
    /// Every request's record.
    pub requests: bool,
    /// The KV usage and queue time series.
    pub series: bool,
    /// The per-step trace (as long as `replica.trace_capacity` allows).
    pub trace: bool,
}

impl Default for ReplicaFile {
    fn default() -> Self {
        let seed = ReplicaSimConfig::seed();
        ReplicaFile {
            kind: "replica".into(),
            name: String::new(),
            title: String::new(),
            description: String::new(),
            replica: ReplicaSpec::default(),
            workload: seed.workload,
            limits: seed.limits,
            sample_interval_s: seed.sample_interval_s,
            output: OutputOptions::default(),
        }
    }
}

impl Default for ReplicaSpec {
    fn default() -> Self {
        let seed = ReplicaConfig::seed();
        ReplicaSpec {
            model: seed.deployment.model.id.clone(),
            gpu: seed.deployment.gpu.id.clone(),
            tp: seed.deployment.tp,
            weight_dtype: seed.deployment.weight_dtype,
            kv_dtype: seed.deployment.kv_dtype,
            activation_dtype: seed.deployment.activation_dtype,
            speculative: None,
            lora: None,
            engine: Engine::Validated,
            efficiency: seed.efficiency,
            memory: seed.memory,
            scheduler: seed.scheduler,
            kv_blocks_override: seed.kv_blocks_override,
            trace_capacity: seed.trace_capacity,
            record_token_times: seed.record_token_times,
        }
    }
}

impl Default for OutputOptions {
    fn default() -> Self {
        OutputOptions {
            requests: false,
            series: true,
            trace: true,
        }
    }
}

impl ReplicaSpec {
    /// Looks the model and GPU up in the catalog and builds the replica's configuration.
    pub fn build(&self) -> Result<ReplicaConfig, ConfigError> {
        let cfg = ReplicaConfig {
            deployment: Deployment {
                activation_dtype: self.activation_dtype,
                ..Deployment::from_ids(
                    &self.model,
                    &self.gpu,
                    self.tp,
                    self.weight_dtype,
                    self.kv_dtype,
                )?
            },
            efficiency: self.efficiency,
            memory: self.memory,
            scheduler: self.scheduler.clone(),
            kv_blocks_override: self.kv_blocks_override,
            trace_capacity: self.trace_capacity,
            record_token_times: self.record_token_times,
            speculative: self.speculative.clone(),
            lora: self.lora.clone(),
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

impl ReplicaFile {
    /// Builds and validates the run's configuration; errors name the field at fault.
    pub fn build(&self) -> Result<ReplicaScenario, ConfigError> {
        if self.kind != "replica" {
            return Err(ConfigError::new(
                "kind",
                format!(
                    "a replica file must say kind = \"replica\", got {:?}",
                    self.kind
                ),
            ));
        }
        let config = ReplicaSimConfig {
            replica: self.replica.build().map_err(|e| e.within("replica"))?,
            workload: self.workload.clone(),
            limits: self.limits,
            sample_interval_s: self.sample_interval_s,
            max_concurrency: None,
        };
        config.validate()?;
        Ok(ReplicaScenario {
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            config,
            output: self.output,
        })
    }
}

impl ReplicaScenario {
    /// Runs the scenario to the end (or to a work cap) and keeps the lists `output` asks for.
    pub fn run(&self) -> Result<crate::replica::RunReport, ConfigError> {
        let mut report = ReplicaSim::new(self.config.clone())?.run();
        if !self.output.requests {
            report.requests.clear();
        }
        if !self.output.series {
            report.series.clear();
        }
        if !self.output.trace {
            report.trace.clear();
        }
        Ok(report)
    }

    /// A shipped replica scenario by file name, with or without `.toml`.
    pub fn builtin(name: &str) -> Result<ReplicaScenario, ConfigError> {
        let file = REPLICA_BUILTIN
            .iter()
            .find(|(f, _)| *f == name || f.trim_end_matches(".toml") == name)
            .ok_or_else(|| {
                ConfigError::new("", format!("no built-in replica scenario called {name:?}"))
            })?;
        match Scenario::builtin_text(file.1)? {
            Scenario::Replica(r) => Ok(*r),
            Scenario::Fleet(_) => Err(ConfigError::new("kind", "expected a replica scenario")),
        }
    }
}

/// A replica file from its top-level table: the replica's efficiency and memory completed
/// from its engine, then parsed and built.
fn replica_from_table(mut table: toml::Table) -> Result<Scenario, ConfigError> {
    let written = toml::Value::Table(table.clone());
    match table.get_mut("replica") {
        Some(toml::Value::Table(r)) => complete_tables(r, Engine::Validated, "replica")?,
        Some(_) => {}
        None => {
            let mut r = toml::Table::new();
            complete_tables(&mut r, Engine::Validated, "replica")?;
            table.insert("replica".into(), toml::Value::Table(r));
        }
    }
    let file: ReplicaFile = toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| ConfigError::new("", one_line(e.message())))?;
    let mut r = file.build()?;
    fill_words(
        &mut r.title,
        &mut r.description,
        &written,
        &r.config.replica,
    )?;
    Ok(Scenario::Replica(Box::new(r)))
}

/// Fills the placeholders of a scenario's title and description from the file as written
/// and the cost model of `replica` (see [`words`]).
pub(crate) fn fill_words(
    title: &mut String,
    description: &mut String,
    written: &toml::Value,
    replica: &crate::replica::ReplicaConfig,
) -> Result<(), ConfigError> {
    let cost = crate::cost::CostModel::new(replica.deployment.clone(), replica.efficiency).ok();
    *title = words::fill_scenario("title", title, written, cost.as_ref())?;
    *description = words::fill_scenario("description", description, written, cost.as_ref())?;
    Ok(())
}

/// Which simulator a file is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Replica,
    Fleet,
}

/// Reads `kind`, or guesses it from the top-level keys when it is absent.
fn kind_of(kind: Option<&str>, has_key: impl Fn(&str) -> bool) -> Result<Kind, ConfigError> {
    match kind {
        Some("replica") => Ok(Kind::Replica),
        Some("fleet") => Ok(Kind::Fleet),
        Some(other) => Err(ConfigError::new(
            "kind",
            format!("must be \"replica\" or \"fleet\", got {other:?}"),
        )),
        None if ["pools", "traffic", "arms"].iter().any(|k| has_key(k)) => Ok(Kind::Fleet),
        None => Ok(Kind::Replica),
    }
}

impl Scenario {
    /// A shipped scenario's text (one of [`BUILTIN`](fleet::BUILTIN) and [`REPLICA_BUILTIN`]):
    /// TOML or, in a build without the parser, the JSON its build script made of it.
    pub fn builtin_text(text: &str) -> Result<Scenario, ConfigError> {
        #[cfg(feature = "parse")]
        {
            Scenario::from_toml(text)
        }
        #[cfg(not(feature = "parse"))]
        {
            Scenario::from_json(text)
        }
    }

    /// A shipped scenario's kind (true for a fleet) and its title as written, placeholders
    /// unfilled, read without building it: a page's list of the shipped scenarios needs only
    /// their names, and building every one (its arms' fleets, its note's figures) was a
    /// long task on a phone.
    pub fn builtin_head(text: &str) -> Result<(bool, String), ConfigError> {
        use serde::de::IgnoredAny;
        #[derive(Deserialize)]
        struct Head {
            kind: Option<String>,
            #[serde(default)]
            title: String,
            pools: Option<IgnoredAny>,
            traffic: Option<IgnoredAny>,
            arms: Option<IgnoredAny>,
        }
        #[cfg(feature = "parse")]
        let head: Head =
            toml::from_str(text).map_err(|e| ConfigError::new("", one_line(e.message())))?;
        #[cfg(not(feature = "parse"))]
        let head: Head = serde_json::from_str(text)
            .map_err(|e| ConfigError::new("", one_line(&format!("not valid JSON: {e}"))))?;
        let kind = kind_of(head.kind.as_deref(), |k| match k {
            "pools" => head.pools.is_some(),
            "traffic" => head.traffic.is_some(),
            "arms" => head.arms.is_some(),
            _ => false,
        })?;
        Ok((kind == Kind::Fleet, head.title))
    }

    /// Parses a TOML scenario of either kind. An empty file is an error, not the seed: a
    /// scenario says at least what it is (`kind = "replica"` is the smallest).
    #[cfg(feature = "parse")]
    pub fn from_toml(text: &str) -> Result<Scenario, ConfigError> {
        check_size(text)?;
        let table: toml::Table = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
        if table.is_empty() {
            return Err(ConfigError::new(
                "",
                "the file has no settings; a scenario needs at least kind = \"replica\" or kind = \"fleet\"",
            ));
        }
        let kind = kind_of(table.get("kind").and_then(|v| v.as_str()), |k| {
            table.contains_key(k)
        })?;
        match kind {
            Kind::Fleet => FleetScenario::from_toml(text).map(Scenario::Fleet),
            Kind::Replica => replica_from_table(table),
        }
    }

    /// Parses a JSON scenario of either kind: the keys of the TOML formats, as one object.
    pub fn from_json(text: &str) -> Result<Scenario, ConfigError> {
        check_size(text)?;
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| ConfigError::new("", one_line(&format!("not valid JSON: {e}"))))?;
        let obj = value
            .as_object()
            .ok_or_else(|| ConfigError::new("", "a scenario must be a JSON object"))?;
        if obj.is_empty() {
            return Err(ConfigError::new(
                "",
                "the object has no settings; a scenario needs at least \"kind\": \"replica\"",
            ));
        }
        let kind = kind_of(obj.get("kind").and_then(|v| v.as_str()), |k| {
            obj.contains_key(k)
        })?;
        match kind {
            Kind::Fleet => FleetScenario::from_json_value(value).map(Scenario::Fleet),
            Kind::Replica => {
                let table: toml::Table = serde_json::from_value(value)
                    .map_err(|e| ConfigError::new("", one_line(&e.to_string())))?;
                replica_from_table(table)
            }
        }
    }

    /// Parses by file name: `.json` as JSON, anything else as TOML (in a build without the
    /// TOML parser, a TOML file is refused with that reason).
    pub fn from_file_text(path: &str, text: &str) -> Result<Scenario, ConfigError> {
        if path.to_ascii_lowercase().ends_with(".json") {
            Scenario::from_json(text)
        } else {
            #[cfg(feature = "parse")]
            {
                Scenario::from_toml(text)
            }
            #[cfg(not(feature = "parse"))]
            {
                Err(ConfigError::new(
                    "",
                    "this build reads scenario files as JSON; a TOML file is read by the simulators' worker",
                ))
            }
        }
    }

    /// A TOML scenario file as the same keys in one JSON object, for a build that reads only
    /// JSON (the page: the simulators' worker reads a learner's TOML file for it). Only the
    /// file's syntax is checked here; [`Scenario::from_json`] then reads it as
    /// [`Scenario::from_toml`] would, with the same messages for the same fields.
    #[cfg(feature = "parse")]
    pub fn toml_to_json(text: &str) -> Result<String, ConfigError> {
        check_size(text)?;
        let table: toml::Table = toml::from_str(text).map_err(|e| toml_error(text, &e))?;
        serde_json::to_string(&table).map_err(|e| ConfigError::new("", one_line(&e.to_string())))
    }
}

/// How to run a scenario file: which fleet arm, where to stop, how to print.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunOptions {
    /// The fleet arm to run; the first when `None`. Replica files have no arms.
    pub arm: Option<String>,
    /// Stop generating traffic at this simulated time, seconds (requests in flight finish).
    pub horizon_s: Option<f64>,
    /// One line of JSON instead of pretty-printed.
    pub compact: bool,
}

/// Parses, runs and serialises a scenario file's text as a JSON report. The command line and
/// the browser run scenarios through this one function, so their reports can be compared
/// byte for byte. The error is a sentence for the user, naming the field at fault.
pub fn run_to_json(path: &str, text: &str, opts: &RunOptions) -> Result<String, String> {
    let describe = |e: ConfigError| {
        one_line(&if e.field.is_empty() {
            e.message
        } else {
            e.to_string()
        })
    };
    if let Some(h) = opts.horizon_s {
        crate::error::check_positive("horizon", h, 1e7).map_err(describe)?;
    }
    let json = |v: &dyn erased::Json| v.to_json(opts.compact);
    match Scenario::from_file_text(path, text).map_err(describe)? {
        Scenario::Replica(mut r) => {
            if opts.arm.is_some() {
                return Err("--arm applies to fleet scenarios only".into());
            }
            if let Some(h) = opts.horizon_s {
                r.config.workload.duration_s = r.config.workload.duration_s.min(h);
            }
            json(&r.run().map_err(describe)?)
        }
        Scenario::Fleet(f) => {
            let (name, cfg) = match &opts.arm {
                Some(name) => f.arms.iter().find(|(n, _)| n == name).ok_or_else(|| {
                    let names: Vec<&str> = f.arms.iter().map(|(n, _)| n.as_str()).collect();
                    format!("no arm called {name:?} (arms: {})", names.join(", "))
                })?,
                None => f.arms.first().ok_or("the scenario has no arms")?,
            };
            let mut cfg = cfg.clone();
            if let Some(h) = opts.horizon_s {
                cfg.truncate(h);
            }
            let mut sim = crate::fleet::FleetSim::new(cfg).map_err(|e| describe(e.within(name)))?;
            sim.run();
            json(&sim.report())
        }
    }
}

/// Serialising either report through one closure.
mod erased {
    /// Anything that can be printed as JSON.
    pub trait Json {
        fn to_json(&self, compact: bool) -> Result<String, String>;
    }

    impl<T: serde::Serialize> Json for T {
        fn to_json(&self, compact: bool) -> Result<String, String> {
            let mut out = Bounded(Vec::new());
            let r = if compact {
                serde_json::to_writer(&mut out, self)
            } else {
                serde_json::to_writer_pretty(&mut out, self)
            };
            match r {
                Ok(()) => String::from_utf8(out.0).map_err(|e| e.to_string()),
                Err(e) if e.is_io() => Err(format!(
                    "the report would be larger than {} MB; turn off output.requests, \
                     output.trace or output.series, or shorten the run",
                    super::MAX_REPORT_BYTES >> 20
                )),
                Err(e) => Err(format!("cannot write the report as JSON: {e}")),
            }
        }
    }

    /// A buffer that refuses to grow past [`super::MAX_REPORT_BYTES`].
    struct Bounded(Vec<u8>);

    impl std::io::Write for Bounded {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.0.len() + buf.len() > super::MAX_REPORT_BYTES {
                return Err(std::io::Error::other("report too large"));
            }
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses a replica scenario from TOML, failing the test on a fleet one or an error.
    fn replica(text: &str) -> Result<ReplicaScenario, ConfigError> {
        match Scenario::from_toml(text)? {
            Scenario::Replica(r) => Ok(*r),
            Scenario::Fleet(_) => Err(ConfigError::new("kind", "parsed as a fleet")),
        }
    }

    #[test]
    fn smallest_file_is_the_seed() {
        let r = replica("kind = \"replica\"").unwrap();
        assert_eq!(r.config, ReplicaSimConfig::seed());
        let j = Scenario::from_json("{\"kind\": \"replica\"}").unwrap();
        assert_eq!(j, Scenario::Replica(Box::new(r)));
    }

    #[test]
    fn bad_files_give_an_error_naming_the_problem() {
        let cases = [
            ("kind = \"cluster\"", "kind"),
            ("[replica]\nmodel = \"gpt-9\"", "replica.model"),
            (
                "[replica.scheduler]\nmax_num_seqs = 0",
                "replica.scheduler.max_num_seqs",
            ),
            ("[workload]\nduration_s = -1.0", "workload.duration_s"),
            (
                "[workload]\narrival = { type = \"poisson\", rate = 1e30 }",
                "workload.arrival.rate",
            ),
            ("sample_interval_s = 0.0", "sample_interval_s"),
        ];
        for (text, field) in cases {
            assert_eq!(replica(text).unwrap_err().field, field, "{text}");
        }
        // Syntax errors, unknown keys and wrong types come back as messages, not panics.
        for text in [
            "kind = ",
            "[replica]\nmodle = \"llama-3.1-8b\"",
            "[workload]\narrival = { type = \"fibonacci\" }",
            "[replica.scheduler]\nblock_size = -16",
        ] {
            let e = replica(text).unwrap_err();
            assert!(!e.message.is_empty(), "{text}");
        }
        assert!(Scenario::from_json("[1, 2]").is_err());
    }

    #[test]
    fn a_fleet_file_may_say_its_kind_at_top_level_only() {
        let fleet = |text: &str| match Scenario::from_toml(text) {
            Ok(Scenario::Fleet(f)) => Ok(f),
            Ok(Scenario::Replica(_)) => panic!("parsed as a replica: {text}"),
            Err(e) => Err(e),
        };
        let with = fleet(
            "kind = \"fleet\"\nname = \"x\"\n[router]\npolicy = { kind = \"round_robin\" }\n[[pools]]\nreplicas = 2\n",
        );
        let without = fleet("name = \"x\"\n[router]\npolicy = { kind = \"round_robin\" }\n[[pools]]\nreplicas = 2\n");
        assert_eq!(with.unwrap(), without.unwrap());
        // The fleet parser reads the field itself, so it checks it too.
        let direct = FleetScenario::from_toml("kind = \"replica\"\n[[pools]]\nreplicas = 2\n");
        assert_eq!(direct.unwrap_err().field, "kind");
        // `kind` belongs to the file, not to a table or an arm.
        let nested = fleet("kind = \"fleet\"\n[[pools]]\nreplicas = 2\nkind = \"fleet\"\n");
        assert!(nested.is_err());
        let arm = fleet("kind = \"fleet\"\n[[arms]]\nname = \"a\"\nkind = \"fleet\"\n");
        assert_eq!(arm.unwrap_err().field, "arms[0].kind");
    }

    #[test]
    fn a_fleet_scenario_reads_the_same_from_json() {
        // Every shipped file, fleet and replica: the page reads each as its JSON form.
        for (file, text) in crate::scenario::fleet::BUILTIN
            .iter()
            .chain(REPLICA_BUILTIN.iter())
        {
            let json = Scenario::toml_to_json(text).unwrap();
            let from_toml = Scenario::from_toml(text).unwrap();
            assert_eq!(from_toml, Scenario::from_json(&json).unwrap(), "{file}");
            let fleet = matches!(from_toml, Scenario::Fleet(_));
            assert_eq!(fleet, file.starts_with("fleet-"), "{file}");
        }
        // A syntax error is placed, as the parser would place it.
        let e = Scenario::toml_to_json("kind = \"fleet\"\n[[pools]\n").unwrap_err();
        assert!(e.message.contains("line 2"), "{e:?}");
        let j = Scenario::from_json("{\"kind\": \"fleet\"}").unwrap();
        let t = Scenario::from_toml("kind = \"fleet\"").unwrap();
        assert!(matches!((&j, &t), (Scenario::Fleet(a), Scenario::Fleet(b)) if a == b));
    }

    /// The kind and title read without building a shipped scenario are the built one's (a
    /// title with a figure to fill in differs by its placeholder only).
    #[test]
    fn a_builtin_head_is_the_built_scenarios_kind_and_title() {
        let mut placeholders = 0;
        for (file, text) in crate::scenario::fleet::BUILTIN
            .iter()
            .chain(REPLICA_BUILTIN.iter())
        {
            let (fleet, title) = Scenario::builtin_head(text).unwrap();
            let (built_fleet, built_title) = match Scenario::builtin_text(text).unwrap() {
                Scenario::Fleet(f) => (true, f.title),
                Scenario::Replica(r) => (false, r.title),
            };
            assert_eq!(fleet, built_fleet, "{file}");
            if title.contains('{') {
                placeholders += 1;
                assert_ne!(title, built_title, "{file}");
            } else {
                assert_eq!(title, built_title, "{file}");
            }
        }
        assert!(placeholders <= 2, "{placeholders} titles to fill in");
        assert!(Scenario::builtin_head("{").is_err());
    }

    /// Every file in `content/scenarios` is shipped, under its own name (a file left out of
    /// the lists would be missing from the page and the lab).
    #[test]
    fn every_scenario_file_is_shipped() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../content/scenarios");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".toml"))
            .collect();
        on_disk.sort();
        let mut shipped: Vec<String> = crate::scenario::fleet::BUILTIN
            .iter()
            .chain(REPLICA_BUILTIN.iter())
            .map(|(n, _)| n.to_string())
            .collect();
        shipped.sort();
        assert_eq!(shipped, on_disk);
        let dir = std::path::Path::new(dir);
        for (name, text) in crate::scenario::fleet::BUILTIN
            .iter()
            .chain(REPLICA_BUILTIN.iter())
        {
            assert_eq!(
                std::fs::read_to_string(dir.join(name)).unwrap(),
                *text,
                "{name}"
            );
        }
    }

    #[test]
    fn shipped_replica_scenarios_parse() {
        for (file, _) in REPLICA_BUILTIN {
            let s = ReplicaScenario::builtin(file).unwrap();
            assert_eq!(format!("{}.toml", s.name), file);
            assert!(!s.title.is_empty() && !s.description.is_empty());
        }
    }
}
