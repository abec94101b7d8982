//! The fleet simulator: clients, gateway, quota store, router, GPU pools, the SSE relay,
//! the autoscaler and overflow, around the replica simulator.
//!
//! A replica is one hop; users feel the whole path. The fleet follows every request through
//! it and keeps four clocks: engine TTFT (engine receives to first token sampled), server
//! TTFT (gateway receives to first byte written), user TTFT (client sends to first byte at
//! the client), and inter-token latency at the engine, the gateway and the client, plus end
//! to end and the gap between server and engine TTFT broken down by hop.
//!
//! [`FleetSim`] is a discrete-event simulation in the style of dslab-core: events ordered by
//! (time, sequence number) in a binary heap, a closed [`sim::Event`] enum, one seeded
//! generator owned by the simulation, and `step` / `advance_to` / `advance_for` so a UI can
//! run it a slice per animation frame. Replicas run their own steps and are read when the
//! fleet needs their state (see [`sim`]). Work per request is kept to its milestones;
//! per-token quantities are accounted per engine step as weighted samples (see [`relay`]),
//! so an hour of the seed fleet (180,000 requests, 45 million tokens, 3.4 million engine
//! steps) costs the fleet about 900,000 events on top of the replicas' own steps.

pub mod autoscaler;
pub mod clocks;
pub mod gateway;
pub mod overflow;
pub mod quota;
pub mod relay;
pub mod report;
pub mod router;
pub mod sim;

pub use autoscaler::{AutoscalerConfig, ScaleEvent, ScaleSignal, SignalPoint};
pub use clocks::{Histogram, Hops, Outcome, RejectReason, RequestRecord, SpillTarget, SplitPath};
pub use gateway::{ClientConfig, GatewayConfig, PoolConnections, Region};
pub use overflow::{HostedApi, OverflowAction, OverflowConfig};
pub use quota::{QuotaConfig, QuotaWindow};
pub use relay::{Buffering, RelayConfig};
pub use report::{
    Cdf, Distributions, FleetReport, Gauge, Gauges, KvTransferReport, ReplicaSummary, TtftSplit,
    CDF_QUANTILES,
};
pub use router::{RouterConfig, RoutingPolicy};

pub use sim::{
    FleetOverload, FleetSim, FleetSnapshot, FleetVerdict, ReplicaState, RouteCandidate, RouteTrace,
    SeriesPoint,
};

use crate::error::{check_range, ConfigError};
use crate::replica::ReplicaConfig;
use crate::workload::WorkloadConfig;
use serde::{Deserialize, Serialize};

/// One stream of traffic: a workload whose clock starts at `start_s`. Several sources
/// overlap to make traffic that changes over time (the evening peak is a second source).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrafficSource {
    #[serde(default)]
    pub start_s: f64,
    pub workload: WorkloadConfig,
}

/// What a pool's replicas do with a request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoolRole {
    /// Prefill and decode on the same replica (the ordinary fleet).
    #[default]
    Mixed,
    /// Only prompts: a request is prefilled here, and its KV cache moves to a decode replica.
    Prefill,
    /// Only replies: requests arrive here with their prompt's KV cache already computed.
    Decode,
}

impl PoolRole {
    pub fn name(self) -> &'static str {
        match self {
            PoolRole::Mixed => "mixed",
            PoolRole::Prefill => "prefill",
            PoolRole::Decode => "decode",
        }
    }
}

/// Disaggregated prefill and decode: how a prompt's KV cache crosses from its prefill
/// replica to its decode replica. Used when some pool has the role `prefill`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DisaggConfig {
    /// The link between the pools, a catalog id ([`crate::catalog::links`]).
    pub link: String,
    /// Share of the link's line rate a transfer reaches (1 is the datasheet's rate; vLLM's
    /// 16-token pages, moved as many small reads, reach less).
    pub link_share: f64,
}

impl Default for DisaggConfig {
    fn default() -> Self {
        DisaggConfig {
            link: "infiniband-ndr".into(),
            link_share: 1.0,
        }
    }
}

impl DisaggConfig {
    /// The shares of the line rate a transfer may reach.
    pub const LINK_SHARE_RANGE: std::ops::RangeInclusive<f64> = 0.01..=1.0;

    pub fn validate(&self) -> Result<(), ConfigError> {
        crate::catalog::link_or_error(&self.link)?;
        crate::error::check_in("link_share", self.link_share, &Self::LINK_SHARE_RANGE)?;
        Ok(())
    }
}

/// A pool of identical replicas.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoolConfig {
    pub name: String,
    pub replica: ReplicaConfig,
    /// Replicas at the start.
    pub replicas: u32,
    /// Bounds for the autoscaler.
    pub min_replicas: u32,
    pub max_replicas: u32,
    /// Whether the router sends ordinary traffic here (false: an overflow pool only).
    pub serving: bool,
    /// Dollars per GPU-hour.
    pub gpu_hour_price: f64,
    /// Prefill and decode together (the default), or one of them in a disaggregated fleet.
    #[serde(default)]
    pub role: PoolRole,
}

/// The service-level objectives the report measures against.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SloConfig {
    /// Server TTFT target, seconds.
    pub ttft_s: f64,
    /// Time per output token target, seconds.
    pub tpot_s: f64,
}

impl SloConfig {
    /// The longest server TTFT target, seconds (any positive one up to it).
    pub const MAX_TTFT_S: f64 = 3_600.0;
    /// The longest time per output token target, seconds (any positive one up to it).
    pub const MAX_TPOT_S: f64 = 60.0;
}

impl Default for SloConfig {
    fn default() -> Self {
        SloConfig {
            ttft_s: 0.5,
            tpot_s: 0.02,
        }
    }
}

/// Everything that defines a fleet run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FleetConfig {
    /// Seeds the fleet's own draws (regions, connections, auth misses, random routing).
    pub seed: u64,
    pub traffic: Vec<TrafficSource>,
    pub clients: ClientConfig,
    pub gateway: GatewayConfig,
    pub quota: QuotaConfig,
    pub router: RouterConfig,
    pub pools: Vec<PoolConfig>,
    pub relay: RelayConfig,
    pub autoscaler: AutoscalerConfig,
    pub overflow: OverflowConfig,
    pub slo: SloConfig,
    /// Seconds between points of the open-streams series (raised so a run has at most
    /// 4,000 points).
    pub sample_interval_s: f64,
    /// Keep a [`RequestRecord`] for every request (tests and small runs; off for big ones).
    pub record_requests: bool,
    /// Work caps: a run that reaches one stops with an "overloaded" verdict.
    #[serde(default)]
    pub limits: FleetLimits,
    /// Replicas that fail during the run.
    #[serde(default)]
    pub faults: Vec<ReplicaFault>,
    /// How KV caches move between prefill and decode pools (read only when a pool has the
    /// role `prefill`).
    #[serde(default)]
    pub disagg: DisaggConfig,
    /// More autoscalers, each scaling its own pool on its own signal (a disaggregated fleet's
    /// prefill and decode pools, say), beside `autoscaler`.
    #[serde(default)]
    pub more_autoscalers: Vec<AutoscalerConfig>,
}

/// A replica that fails at a moment of the run (its GPU or its process dies): the requests
/// it holds are lost with it. The gateway sends again those of which the client has had
/// nothing yet (`gateway.retries`); a stream already under way breaks with an error event.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplicaFault {
    /// When, seconds from the start. A fault at or after the end of the traffic is not run:
    /// it would only stretch the run (and its bill) to that moment.
    pub at_s: f64,
    /// Which replica: its index among the replicas there at the start, all pools, in pool
    /// order (a replica already stopped then is left alone).
    pub replica: u32,
}

impl ReplicaFault {
    /// Most faults a fleet may have.
    pub const MAX: usize = 64;
}

/// Caps that stop a fleet run which would otherwise take far too long or hold far too much,
/// however hostile its input: the run ends with [`FleetVerdict::Overloaded`], naming the cap
/// and the simulated time. They can be lowered but not raised past [`FleetLimits::MAX`], so a
/// scenario file cannot switch them off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FleetLimits {
    /// Fleet events processed (an hour of the seed fleet takes about 900,000).
    pub max_events: u64,
    /// Engine steps, all replicas together (an hour of the seed fleet takes 3.4 million).
    pub max_engine_steps: u64,
    /// Requests in the fleet at once, from send to stream end: more means the fleet's
    /// queues are growing without bound.
    pub max_in_flight: u32,
    /// Per-request records kept with `record_requests`.
    pub max_records: u32,
}

impl Default for FleetLimits {
    fn default() -> Self {
        FleetLimits {
            max_events: 20_000_000,
            max_engine_steps: 100_000_000,
            max_in_flight: 200_000,
            max_records: 1_000_000,
        }
    }
}

impl FleetLimits {
    /// The highest each cap may be set to.
    pub const MAX: FleetLimits = FleetLimits {
        max_events: 200_000_000,
        max_engine_steps: 1_000_000_000,
        max_in_flight: 2_000_000,
        max_records: 10_000_000,
    };

    pub fn validate(&self) -> Result<(), ConfigError> {
        let m = FleetLimits::MAX;
        let caps = [
            ("max_events", self.max_events, m.max_events),
            (
                "max_engine_steps",
                self.max_engine_steps,
                m.max_engine_steps,
            ),
            (
                "max_in_flight",
                self.max_in_flight as u64,
                m.max_in_flight as u64,
            ),
            ("max_records", self.max_records as u64, m.max_records as u64),
        ];
        crate::error::check_caps(&caps)
    }
}

impl PoolConfig {
    /// `replicas` seed replicas (Llama 3.1 8B, BF16, one H100 each) at $2.50 per GPU-hour.
    pub fn seed(replicas: u32) -> PoolConfig {
        PoolConfig {
            name: "h100-llama-8b".into(),
            replica: ReplicaConfig::seed(),
            replicas,
            min_replicas: replicas.min(1),
            max_replicas: replicas.max(1) * 4,
            serving: true,
            gpu_hour_price: 2.5,
            role: PoolRole::Mixed,
        }
    }

    /// The most replicas a pool may grow to (and the fleet hold across its pools).
    pub const MAX_REPLICAS_RANGE: std::ops::RangeInclusive<u32> = 1..=4096;

    pub fn validate(&self) -> Result<(), ConfigError> {
        self.replica.validate().map_err(|e| e.within("replica"))?;
        let range = Self::MAX_REPLICAS_RANGE;
        if !range.contains(&self.max_replicas) {
            return Err(ConfigError::new(
                "max_replicas",
                format!(
                    "must be {} to {}, got {}",
                    range.start(),
                    range.end(),
                    self.max_replicas
                ),
            ));
        }
        if self.min_replicas > self.max_replicas {
            return Err(ConfigError::new(
                "min_replicas",
                "cannot exceed max_replicas",
            ));
        }
        if self.replicas < self.min_replicas || self.replicas > self.max_replicas {
            return Err(ConfigError::new(
                "replicas",
                format!(
                    "must be between min_replicas ({}) and max_replicas ({}), got {}",
                    self.min_replicas, self.max_replicas, self.replicas
                ),
            ));
        }
        check_range("gpu_hour_price", self.gpu_hour_price, 0.0, 1e4)?;
        Ok(())
    }
}

impl FleetConfig {
    /// The seed problem: 50 req/s of 1,000 prompt and 250 output tokens, streaming, for one
    /// hour, on 8 replicas of Llama 3.1 8B on H100, routed to the fewest outstanding requests.
    pub fn seed() -> FleetConfig {
        let mut workload = WorkloadConfig::seed_replica();
        workload.arrival = crate::workload::Arrival::Poisson { rate: 50.0 };
        workload.tenants = 10;
        FleetConfig {
            seed: 1,
            traffic: vec![TrafficSource {
                start_s: 0.0,
                workload,
            }],
            clients: ClientConfig::default(),
            gateway: GatewayConfig::default(),
            quota: QuotaConfig::default(),
            router: RouterConfig::default(),
            pools: vec![PoolConfig::seed(8)],
            relay: RelayConfig::default(),
            autoscaler: AutoscalerConfig::default(),
            overflow: OverflowConfig::default(),
            slo: SloConfig::default(),
            sample_interval_s: 1.0,
            record_requests: false,
            limits: FleetLimits::default(),
            faults: Vec::new(),
            disagg: DisaggConfig::default(),
            more_autoscalers: Vec::new(),
        }
    }

    /// Every autoscaler that is on, in order: `autoscaler`, then `more_autoscalers`.
    pub fn autoscalers(&self) -> Vec<AutoscalerConfig> {
        std::iter::once(self.autoscaler)
            .chain(self.more_autoscalers.iter().copied())
            .filter(|a| a.enabled)
            .collect()
    }

    /// Splits the fleet: the first pool prefills, and a pool of `decode` replicas like it
    /// decodes (0: the first pool does both again, and the decode pools go). Refused when
    /// another pool serves too, since a split fleet routes only to its prefill pool.
    pub fn split_first_pool(&mut self, decode: u32) -> Result<(), ConfigError> {
        if self.pools.is_empty() {
            return Err(ConfigError::new("pools", "there is no pool to split"));
        }
        self.pools.retain(|p| p.role != PoolRole::Decode);
        if decode == 0 {
            self.pools[0].role = PoolRole::Mixed;
            return Ok(());
        }
        if self.pools.iter().skip(1).any(|p| p.serving) {
            return Err(ConfigError::new(
                "role",
                "a split fleet routes only to its prefill pool: this fleet serves from more than one pool",
            ));
        }
        self.pools[0].role = PoolRole::Prefill;
        let mut d = self.pools[0].clone();
        d.name = "decode".into();
        d.role = PoolRole::Decode;
        d.replicas = decode;
        d.min_replicas = decode;
        d.max_replicas = decode;
        self.pools.push(d);
        Ok(())
    }

    /// Whether prefill and decode run on separate pools.
    pub fn disaggregated(&self) -> bool {
        self.pools.iter().any(|p| p.role == PoolRole::Prefill)
    }

    /// Checks the pools' roles: prefill pools need a serving decode pool and the other way
    /// round, a disaggregated fleet routes only to them (a mixed pool may stand by for
    /// overflow), and KV caches move only between replicas that lay them out alike.
    fn validate_roles(&self) -> Result<(), ConfigError> {
        let serving = |role: PoolRole| self.pools.iter().position(|p| p.serving && p.role == role);
        let (prefill, decode) = (serving(PoolRole::Prefill), serving(PoolRole::Decode));
        let any = |role: PoolRole| self.pools.iter().position(|p| p.role == role);
        if let Some(i) = any(PoolRole::Prefill).filter(|_| decode.is_none()) {
            return Err(ConfigError::new(
                format!("pools[{i}].role"),
                "a prefill pool needs a serving decode pool to hand its requests to",
            ));
        }
        if let Some(i) = any(PoolRole::Decode).filter(|_| prefill.is_none()) {
            return Err(ConfigError::new(
                format!("pools[{i}].role"),
                "a decode pool needs a serving prefill pool to receive requests from",
            ));
        }
        let Some(first) = prefill else {
            return Ok(());
        };
        if let Some(i) = serving(PoolRole::Mixed) {
            return Err(ConfigError::new(
                format!("pools[{i}].role"),
                "a disaggregated fleet routes to its prefill pools only: a mixed pool may \
                 stand by (serving = false) for overflow",
            ));
        }
        let layout = |p: &PoolConfig| {
            let d = &p.replica.deployment;
            (
                d.model.id.clone(),
                d.kv_dtype,
                p.replica.scheduler.block_size,
            )
        };
        let want = layout(&self.pools[first]);
        for (i, p) in self.pools.iter().enumerate() {
            if p.role != PoolRole::Mixed && layout(p) != want {
                return Err(ConfigError::new(
                    format!("pools[{i}]"),
                    "prefill and decode pools must serve the same model with the same KV \
                     format and block size, so that a KV cache can move between them",
                ));
            }
        }
        Ok(())
    }

    /// Checks every part; the error's field names the part (`pools[0].replicas`, ...).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.traffic.is_empty() {
            return Err(ConfigError::new("traffic", "needs at least one source"));
        }
        if self.traffic.len() > 64 {
            return Err(ConfigError::new("traffic", "at most 64 sources"));
        }
        for (i, s) in self.traffic.iter().enumerate() {
            let f = |e: ConfigError| e.within(&format!("traffic[{i}]"));
            check_range("start_s", s.start_s, 0.0, 1e7).map_err(f)?;
            s.workload.validate().map_err(|e| f(e.within("workload")))?;
        }
        self.clients.validate().map_err(|e| e.within("clients"))?;
        self.gateway.validate().map_err(|e| e.within("gateway"))?;
        self.quota.validate().map_err(|e| e.within("quota"))?;
        self.router.validate().map_err(|e| e.within("router"))?;
        if self.pools.is_empty() {
            return Err(ConfigError::new("pools", "needs at least one pool"));
        }
        if self.pools.len() > 16 {
            return Err(ConfigError::new("pools", "at most 16 pools"));
        }
        for (i, p) in self.pools.iter().enumerate() {
            p.validate().map_err(|e| e.within(&format!("pools[{i}]")))?;
        }
        if !self.pools.iter().any(|p| p.serving) {
            return Err(ConfigError::new(
                "pools",
                "at least one pool must serve traffic",
            ));
        }
        let total: u32 = self.pools.iter().map(|p| p.max_replicas).sum();
        let most = *PoolConfig::MAX_REPLICAS_RANGE.end();
        if total > most {
            return Err(ConfigError::new(
                "pools",
                format!("at most {most} replicas across all pools"),
            ));
        }
        self.disagg.validate().map_err(|e| e.within("disagg"))?;
        self.validate_roles()?;
        self.relay.validate().map_err(|e| e.within("relay"))?;
        self.autoscaler
            .validate()
            .map_err(|e| e.within("autoscaler"))?;
        if self.autoscaler.enabled && self.autoscaler.pool >= self.pools.len() {
            return Err(ConfigError::new(
                "autoscaler.pool",
                format!("there is no pool {}", self.autoscaler.pool),
            ));
        }
        if self.more_autoscalers.len() > 16 {
            return Err(ConfigError::new(
                "more_autoscalers",
                "at most 16 more autoscalers",
            ));
        }
        let mut scaled = vec![false; self.pools.len()];
        if self.autoscaler.enabled {
            scaled[self.autoscaler.pool] = true;
        }
        for (i, a) in self.more_autoscalers.iter().enumerate() {
            let within = |e: ConfigError| e.within(&format!("more_autoscalers[{i}]"));
            a.validate().map_err(within)?;
            if !a.enabled {
                continue;
            }
            match scaled.get_mut(a.pool) {
                None => {
                    return Err(within(ConfigError::new(
                        "pool",
                        format!("there is no pool {}", a.pool),
                    )))
                }
                Some(true) => {
                    return Err(within(ConfigError::new(
                        "pool",
                        format!("pool {} already has an autoscaler", a.pool),
                    )))
                }
                Some(s) => *s = true,
            }
        }
        self.overflow
            .validate(self.pools.len())
            .map_err(|e| e.within("overflow"))?;
        crate::error::check_positive("slo.ttft_s", self.slo.ttft_s, SloConfig::MAX_TTFT_S)?;
        crate::error::check_positive("slo.tpot_s", self.slo.tpot_s, SloConfig::MAX_TPOT_S)?;
        check_range("sample_interval_s", self.sample_interval_s, 0.01, 86_400.0)?;
        self.limits.validate().map_err(|e| e.within("limits"))?;
        if self.faults.len() > ReplicaFault::MAX {
            return Err(ConfigError::new(
                "faults",
                format!("at most {} faults", ReplicaFault::MAX),
            ));
        }
        let at_start: u32 = self.pools.iter().map(|p| p.replicas).sum();
        for (i, f) in self.faults.iter().enumerate() {
            let within = |e: ConfigError| e.within(&format!("faults[{i}]"));
            check_range("at_s", f.at_s, 0.0, 1e7).map_err(within)?;
            if at_start == 0 {
                return Err(within(ConfigError::new(
                    "replica",
                    "no replica is there at the start to fail",
                )));
            }
            if f.replica >= at_start {
                return Err(within(ConfigError::new(
                    "replica",
                    format!(
                        "there are {at_start} replicas at the start (0 to {})",
                        at_start - 1
                    ),
                )));
            }
        }
        Ok(())
    }

    /// The time the last source stops generating arrivals.
    pub fn horizon(&self) -> f64 {
        self.traffic
            .iter()
            .map(|s| s.start_s + s.workload.duration_s)
            .fold(0.0, f64::max)
    }
}
