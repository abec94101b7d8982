//! Fleet scenario files: a base fleet and named arms that change parts of it.
//!
//! A file is TOML, or JSON with the same keys. Top-level keys describe the fleet
//! ([`FleetFile`]), with an optional `kind = "fleet"`; pools name a model and
//! a GPU from the catalog instead of spelling out their shapes. Each `[[arms]]` entry has a
//! `name` and any keys of the fleet, which replace the base's (tables merge key by key), so
//! "round-robin against prefix affinity" is one file with two arms of three lines each.
//!
//! ```toml
//! name = "fleet-chat-affinity"
//! title = "Chat with the whole history resent each turn"
//! [[traffic]]
//! workload = { arrival = { type = "poisson", rate = 4.0 }, duration_s = 120.0 }
//! [[pools]]
//! model = "llama-3.1-8b"
//! gpu = "h100-sxm"
//! replicas = 8
//! [[arms]]
//! name = "round-robin"
//! router = { policy = { kind = "round_robin" } }
//! ```

use crate::catalog::Dtype;
use crate::cost::{Deployment, Efficiency, MemoryConfig};
use crate::engine::{complete_tables, Engine};
use crate::error::ConfigError;
use crate::fleet::{
    AutoscalerConfig, ClientConfig, DisaggConfig, FleetConfig, FleetLimits, GatewayConfig,
    OverflowConfig, PoolConfig, PoolRole, QuotaConfig, RelayConfig, ReplicaFault, RouterConfig,
    SloConfig, TrafficSource,
};
use crate::replica::{ReplicaConfig, SchedulerConfig};
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};

/// The fleet scenarios shipped with the product, as (file name, text: see [`crate::files`]).
pub const BUILTIN: [(&str, &str); 14] = [
    ("fleet-seed.toml", crate::files::SCENARIOS_FLEET_SEED),
    (
        "fleet-ttft-gap.toml",
        crate::files::SCENARIOS_FLEET_TTFT_GAP,
    ),
    (
        "fleet-buffering.toml",
        crate::files::SCENARIOS_FLEET_BUFFERING,
    ),
    (
        "fleet-long-prompts.toml",
        crate::files::SCENARIOS_FLEET_LONG_PROMPTS,
    ),
    (
        "fleet-evening-peak.toml",
        crate::files::SCENARIOS_FLEET_EVENING_PEAK,
    ),
    (
        "fleet-chat-affinity.toml",
        crate::files::SCENARIOS_FLEET_CHAT_AFFINITY,
    ),
    ("fleet-rag-70b.toml", crate::files::SCENARIOS_FLEET_RAG_70B),
    (
        "fleet-follow-one-request.toml",
        crate::files::SCENARIOS_FLEET_FOLLOW_ONE_REQUEST,
    ),
    (
        "fleet-halve-cost.toml",
        crate::files::SCENARIOS_FLEET_HALVE_COST,
    ),
    (
        "fleet-spec-latency.toml",
        crate::files::SCENARIOS_FLEET_SPEC_LATENCY,
    ),
    (
        "fleet-disconnects.toml",
        crate::files::SCENARIOS_FLEET_DISCONNECTS,
    ),
    (
        "fleet-disaggregate.toml",
        crate::files::SCENARIOS_FLEET_DISAGGREGATE,
    ),
    (
        "fleet-long-chats.toml",
        crate::files::SCENARIOS_FLEET_LONG_CHATS,
    ),
    (
        "fleet-adapters.toml",
        crate::files::SCENARIOS_FLEET_ADAPTERS,
    ),
];

/// Most arms a scenario may have.
pub const MAX_ARMS: usize = 256;

/// A parsed scenario: its words and one fleet per arm (the base alone when it has no arms).
#[derive(Clone, Debug, PartialEq)]
pub struct FleetScenario {
    pub name: String,
    pub title: String,
    pub description: String,
    /// (arm name, fleet); the first is the one to show by default.
    pub arms: Vec<(String, FleetConfig)>,
}

/// The fleet as a scenario file writes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FleetFile {
    /// `"fleet"` when given (a file may say which simulator it is for; see
    /// [`crate::scenario`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub name: String,
    pub title: String,
    pub description: String,
    pub seed: u64,
    pub traffic: Vec<TrafficSource>,
    pub clients: ClientConfig,
    pub gateway: GatewayConfig,
    pub quota: QuotaConfig,
    pub router: RouterConfig,
    pub pools: Vec<PoolSpec>,
    pub relay: RelayConfig,
    pub autoscaler: AutoscalerConfig,
    pub overflow: OverflowConfig,
    pub slo: SloConfig,
    pub sample_interval_s: f64,
    /// Work caps (bounded above: a file can lower them, not switch them off).
    pub limits: FleetLimits,
    /// Replicas that fail during the run: `[[faults]]` tables of `at_s` and `replica`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<ReplicaFault>,
    /// How KV caches move between prefill and decode pools: `{ link = "infiniband-ndr",
    /// link_share = 1.0 }`.
    pub disagg: DisaggConfig,
    /// More autoscalers, one per pool: `[[more_autoscalers]]` tables like `[autoscaler]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub more_autoscalers: Vec<AutoscalerConfig>,
    /// Arms: each a table with a `name` and keys that replace the base's.
    pub arms: Vec<toml::Table>,
}

/// A pool as a scenario file writes it: catalog ids instead of full shapes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PoolSpec {
    pub name: String,
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
    /// LoRA adapters, one per tenant (off when absent): `{ max_loras = 8, max_lora_rank = 16 }`.
    pub lora: Option<crate::replica::lora::LoraConfig>,
    pub replicas: u32,
    /// Defaults to `replicas` (no scaling down) when absent.
    pub min_replicas: Option<u32>,
    /// Defaults to `replicas` (no scaling up) when absent.
    pub max_replicas: Option<u32>,
    pub serving: bool,
    pub gpu_hour_price: f64,
    /// `"mixed"` (prefill and decode together, the default), `"prefill"` or `"decode"`.
    pub role: PoolRole,
    /// The named engine the pool runs: the brief's when absent, so the teaching scenarios
    /// agree with the calculator; `"validated"` runs the engine `/simulator` validates.
    pub engine: Engine,
    /// The engine's efficiencies; a key the file sets replaces the engine's value, and every
    /// other key stays the engine's (see [`crate::engine`]).
    pub efficiency: Efficiency,
    /// The engine's memory split, completed the same way.
    pub memory: MemoryConfig,
    /// `vllm serve`'s scheduler on an H100 when absent.
    pub scheduler: SchedulerConfig,
    pub kv_blocks_override: Option<u32>,
}

impl Default for FleetFile {
    fn default() -> Self {
        let seed = FleetConfig::seed();
        FleetFile {
            kind: None,
            name: String::new(),
            title: String::new(),
            description: String::new(),
            seed: seed.seed,
            traffic: seed.traffic,
            clients: seed.clients,
            gateway: seed.gateway,
            quota: seed.quota,
            router: seed.router,
            pools: vec![PoolSpec::default()],
            relay: seed.relay,
            autoscaler: seed.autoscaler,
            overflow: seed.overflow,
            slo: seed.slo,
            sample_interval_s: seed.sample_interval_s,
            limits: seed.limits,
            faults: Vec::new(),
            disagg: seed.disagg,
            more_autoscalers: Vec::new(),
            arms: Vec::new(),
        }
    }
}

impl Default for PoolSpec {
    fn default() -> Self {
        PoolSpec {
            name: "h100-llama-8b".into(),
            model: "llama-3.1-8b".into(),
            gpu: "h100-sxm".into(),
            tp: 1,
            weight_dtype: Dtype::Bf16,
            kv_dtype: Dtype::Bf16,
            activation_dtype: None,
            speculative: None,
            lora: None,
            replicas: 8,
            min_replicas: None,
            max_replicas: None,
            serving: true,
            gpu_hour_price: 2.5,
            role: PoolRole::Mixed,
            engine: Engine::Validated,
            efficiency: Efficiency::CALIBRATED,
            memory: MemoryConfig::VLLM,
            scheduler: SchedulerConfig::default(),
            kv_blocks_override: None,
        }
    }
}

impl PoolSpec {
    /// Looks the model and GPU up in the catalog and builds the pool.
    pub fn build(&self) -> Result<PoolConfig, ConfigError> {
        // The bounds default to `replicas`: a bad count is reported on the field written.
        if self.max_replicas.is_none() && !(1..=4096).contains(&self.replicas) {
            return Err(ConfigError::new(
                "replicas",
                format!(
                    "must be 1 to 4096, got {} (a pool that starts empty needs max_replicas)",
                    self.replicas
                ),
            ));
        }
        let mut replica = ReplicaConfig::seed();
        replica.deployment = Deployment::from_ids(
            &self.model,
            &self.gpu,
            self.tp,
            self.weight_dtype,
            self.kv_dtype,
        )?;
        replica.deployment.activation_dtype = self.activation_dtype;
        replica.speculative = self.speculative.clone();
        replica.lora = self.lora.clone();
        replica.efficiency = self.efficiency;
        replica.memory = self.memory;
        replica.scheduler = self.scheduler.clone();
        replica.kv_blocks_override = self.kv_blocks_override;
        replica.trace_capacity = 0;
        replica.record_token_times = false;
        let pool = PoolConfig {
            name: self.name.clone(),
            replica,
            replicas: self.replicas,
            min_replicas: self.min_replicas.unwrap_or(self.replicas),
            max_replicas: self.max_replicas.unwrap_or(self.replicas),
            serving: self.serving,
            gpu_hour_price: self.gpu_hour_price,
            role: self.role,
        };
        pool.validate()?;
        Ok(pool)
    }
}

impl FleetFile {
    /// The fleet this file describes (its arms aside).
    pub fn build(&self) -> Result<FleetConfig, ConfigError> {
        let mut pools = Vec::with_capacity(self.pools.len());
        for (i, p) in self.pools.iter().enumerate() {
            pools.push(p.build().map_err(|e| e.within(&format!("pools[{i}]")))?);
        }
        let cfg = FleetConfig {
            seed: self.seed,
            traffic: self.traffic.clone(),
            clients: self.clients.clone(),
            gateway: self.gateway,
            quota: self.quota.clone(),
            router: self.router,
            pools,
            relay: self.relay,
            autoscaler: self.autoscaler,
            overflow: self.overflow,
            slo: self.slo,
            sample_interval_s: self.sample_interval_s,
            record_requests: false,
            limits: self.limits,
            faults: self.faults.clone(),
            disagg: self.disagg.clone(),
            more_autoscalers: self.more_autoscalers.clone(),
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

impl FleetScenario {
    /// Parses a scenario file; errors name the arm and field at fault.
    #[cfg(feature = "parse")]
    pub fn from_toml(text: &str) -> Result<FleetScenario, ConfigError> {
        crate::scenario::check_size(text)?;
        let base: toml::Table =
            toml::from_str(text).map_err(|e| crate::scenario::toml_error(text, &e))?;
        FleetScenario::from_table(base)
    }

    /// Parses a JSON scenario: the keys of the TOML format, as one JSON object.
    pub fn from_json(text: &str) -> Result<FleetScenario, ConfigError> {
        crate::scenario::check_size(text)?;
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            ConfigError::new(
                "",
                crate::scenario::one_line(&format!("not valid JSON: {e}")),
            )
        })?;
        FleetScenario::from_json_value(value)
    }

    /// The same from a parsed JSON value (an object).
    pub(crate) fn from_json_value(value: serde_json::Value) -> Result<FleetScenario, ConfigError> {
        let base: toml::Table = serde_json::from_value(value)
            .map_err(|e| ConfigError::new("", crate::scenario::one_line(&e.to_string())))?;
        FleetScenario::from_table(base)
    }

    /// The scenario from the file's top-level table.
    fn from_table(mut base: toml::Table) -> Result<FleetScenario, ConfigError> {
        let written = toml::Value::Table(base.clone());
        complete_pools(&mut base, "")?;
        // The arms come out of the base first, so that each arm merges into a copy of the
        // base alone: the whole file is read once, not once per arm.
        let arm_tables = match base.remove("arms") {
            None => Vec::new(),
            Some(toml::Value::Array(a)) => a,
            Some(_) => {
                return Err(ConfigError::new(
                    "arms",
                    "must be a list of [[arms]] tables",
                ));
            }
        };
        if arm_tables.len() > MAX_ARMS {
            return Err(ConfigError::new(
                "arms",
                format!("at most {MAX_ARMS} arms, got {}", arm_tables.len()),
            ));
        }
        let de = |e: toml::de::Error| crate::scenario::one_line(e.message());
        let file: FleetFile = toml::Value::Table(base.clone())
            .try_into()
            .map_err(|e| ConfigError::new("", de(e)))?;
        if let Some(kind) = file.kind.as_deref().filter(|k| *k != "fleet") {
            return Err(ConfigError::new(
                "kind",
                format!("a fleet file must say kind = \"fleet\", got {kind:?}"),
            ));
        }
        let mut arm_list = Vec::with_capacity(arm_tables.len());
        for (i, a) in arm_tables.into_iter().enumerate() {
            match a {
                toml::Value::Table(t) => arm_list.push(t),
                _ => {
                    return Err(ConfigError::new(
                        format!("arms[{i}]"),
                        "must be a table with a name",
                    ))
                }
            }
        }
        let mut arms = Vec::new();
        if arm_list.is_empty() {
            arms.push(("base".to_string(), file.build()?));
        }
        for (i, arm) in arm_list.iter().enumerate() {
            let name = match arm.get("name") {
                Some(toml::Value::String(s)) => s.clone(),
                _ => {
                    return Err(ConfigError::new(
                        format!("arms[{i}].name"),
                        "every arm needs a name",
                    ))
                }
            };
            if arm.contains_key("kind") {
                return Err(ConfigError::new(
                    format!("arms[{i}].kind"),
                    "an arm cannot change the kind of the file",
                ));
            }
            let mut merged = base.clone();
            let mut over = arm.clone();
            over.remove("name");
            merge(&mut merged, over);
            complete_pools(&mut merged, &format!("arms[{i}]."))?;
            let f: FleetFile = toml::Value::Table(merged)
                .try_into()
                .map_err(|e| ConfigError::new(format!("arms[{i}]"), de(e)))?;
            let cfg = f.build().map_err(|e| e.within(&format!("arms[{i}]")))?;
            arms.push((name, cfg));
        }
        let (mut title, mut description) = (file.title, file.description);
        if let Some(pool) = arms.first().and_then(|(_, f)| f.pools.first()) {
            crate::scenario::fill_words(&mut title, &mut description, &written, &pool.replica)?;
        }
        Ok(FleetScenario {
            name: file.name,
            title,
            description,
            arms,
        })
    }

    /// The arm called `name`.
    pub fn arm(&self, name: &str) -> Option<&FleetConfig> {
        self.arms.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    /// A shipped scenario by its name (`fleet-seed`, ...).
    pub fn builtin(name: &str) -> Result<FleetScenario, ConfigError> {
        let (_, text) = BUILTIN
            .iter()
            .find(|(file, _)| file.trim_end_matches(".toml") == name)
            .ok_or_else(|| {
                ConfigError::new("scenario", format!("no fleet scenario called {name:?}"))
            })?;
        match Scenario::builtin_text(text)? {
            Scenario::Fleet(f) => Ok(f),
            Scenario::Replica(_) => Err(ConfigError::new("kind", "expected a fleet scenario")),
        }
    }
}

impl FleetConfig {
    /// Scales every traffic source's rate by `load` (a trace is its own load: its times stay
    /// as recorded).
    pub fn scale_load(&mut self, load: f64) {
        use crate::workload::Arrival;
        for t in &mut self.traffic {
            match &mut t.workload.arrival {
                Arrival::Poisson { rate } | Arrival::Constant { rate } => *rate *= load,
                Arrival::Gamma { rate, .. } => *rate *= load,
                Arrival::Trace { .. } => {}
            }
        }
    }

    /// Requests a second the traffic sources offer together at their rates (a trace counts
    /// nothing).
    pub fn offered_rate(&self) -> f64 {
        use crate::workload::Arrival;
        self.traffic
            .iter()
            .map(|t| match t.workload.arrival {
                Arrival::Poisson { rate } | Arrival::Constant { rate } => rate,
                Arrival::Gamma { rate, .. } => rate,
                Arrival::Trace { .. } => 0.0,
            })
            .sum()
    }

    /// Stops every traffic source at `horizon_s` (for short tests and previews).
    pub fn truncate(&mut self, horizon_s: f64) {
        for s in &mut self.traffic {
            s.workload.duration_s = s.workload.duration_s.min((horizon_s - s.start_s).max(0.0));
        }
    }
}

/// Completes each pool's `efficiency` and `memory` from its engine (the validated one by
/// default, the engine that teaches; a pool names `engine = "brief"` to run the brief's).
fn complete_pools(file: &mut toml::Table, at: &str) -> Result<(), ConfigError> {
    if let Some(toml::Value::Array(pools)) = file.get_mut("pools") {
        for (i, p) in pools.iter_mut().enumerate() {
            if let toml::Value::Table(t) = p {
                complete_tables(t, Engine::Validated, &format!("{at}pools[{i}]"))?;
            }
        }
    }
    Ok(())
}

/// Replaces keys of `base` by those of `over`; tables merge key by key, everything else
/// (arrays included) is replaced whole.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arms_override_the_base_key_by_key() {
        let text = r#"
            name = "t"
            [router]
            decision_s = 0.002
            policy = { kind = "round_robin" }
            [[pools]]
            replicas = 2
            [[arms]]
            name = "affinity"
            router = { policy = { kind = "prefix_affinity", load_bound = 1.5 } }
            [[arms]]
            name = "rr"
        "#;
        let s = FleetScenario::from_toml(text).unwrap();
        assert_eq!(s.arms.len(), 2);
        let a = s.arm("affinity").unwrap();
        assert_eq!(
            a.router.policy,
            crate::fleet::RoutingPolicy::prefix_affinity(1.5)
        );
        assert_eq!(a.router.decision_s, 0.002);
        assert_eq!(a.pools[0].replicas, 2);
        assert_eq!(s.arm("rr").unwrap().router.policy.name(), "round_robin");
    }

    #[test]
    fn bad_files_name_the_field_at_fault() {
        let cases = [
            ("[[pools]]\nmodel = \"gpt-9\"", "pools[0].model"),
            ("[[arms]]\nrouter = {}", "arms[0].name"),
            (
                "[[arms]]\nname = \"x\"\n[arms.router]\ndecision_s = -1.0",
                "arms[0].router.decision_s",
            ),
            ("bogus = 3", ""),
        ];
        for (text, field) in cases {
            let e = FleetScenario::from_toml(text).unwrap_err();
            assert_eq!(e.field, field, "{text}: {e}");
        }
    }
}
