//! The lab's knobs: every setting of a fleet run the parameter panel shows, each with a key
//! (its name in the URL), a label, a unit, a section, and a reader and a writer on
//! [`FleetConfig`].
//!
//! A knob reads the configuration as the text its field shows and writes it back from the
//! text typed, so the panel, the URL and the tests go through the same two functions. Knobs
//! that act on the workload read the first traffic source and write every source (except the
//! rate, which is the first source's); knobs that act on a replica read and write the first
//! pool. [`Knob::ALL`] is in dependency order: a knob that only applies under another's choice
//! (burstiness under gamma arrivals) comes after it, so a query string applied in that order
//! sets the choice first.

use trainer_engine::catalog::{gpus, models};
use trainer_engine::fleet::{
    Buffering, FleetConfig, HostedApi, OverflowAction, RoutingPolicy, ScaleSignal,
};
use trainer_engine::workload::{Arrival, LengthDist, SessionConfig};

/// Where a knob sits in the panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Workload,
    Replica,
    Fleet,
}

impl Section {
    pub const ALL: [Section; 3] = [Section::Workload, Section::Replica, Section::Fleet];

    pub fn id(self) -> &'static str {
        match self {
            Section::Workload => "workload",
            Section::Replica => "replica",
            Section::Fleet => "fleet",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Section::Workload => "Workload",
            Section::Replica => "Replica",
            Section::Fleet => "Fleet",
        }
    }
}

/// What a knob's field takes.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A number typed in the knob's unit, within `min..=max` (whole when `integer`).
    Number { integer: bool, min: f64, max: f64 },
    /// One of a list of options.
    Choice,
}

/// One setting of the lab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Knob {
    Rate,
    Arrival,
    Cv,
    Duration,
    Prompt,
    PromptA,
    PromptB,
    Output,
    OutputA,
    OutputB,
    Turns,
    Think,
    SystemPrompt,
    Tenants,
    Seed,
    Model,
    Gpu,
    Tp,
    Budget,
    MaxSeqs,
    MemUtil,
    PrefixCache,
    Chunked,
    Mfu,
    Mbu,
    StepOverhead,
    CpuOverhead,
    Replicas,
    Policy,
    LoadBound,
    RouterMs,
    Quota,
    Autoscaler,
    ScaleTarget,
    MinReplicas,
    MaxReplicas,
    ScaleDelay,
    Buffering,
    Overflow,
    OverflowWaiting,
    SloTtft,
    SloTpot,
}

/// Largest arrival rate the lab takes, requests per second (the simulator takes more, but a
/// browser tab cannot follow it).
pub const MAX_LAB_RATE: f64 = 100_000.0;
/// Longest traffic the lab takes, seconds.
pub const MAX_LAB_DURATION: f64 = 86_400.0;

impl Knob {
    /// Every knob, in the order they are applied and shown.
    pub const ALL: [Knob; 42] = [
        Knob::Arrival,
        Knob::Rate,
        Knob::Cv,
        Knob::Duration,
        Knob::Prompt,
        Knob::PromptA,
        Knob::PromptB,
        Knob::Output,
        Knob::OutputA,
        Knob::OutputB,
        Knob::Turns,
        Knob::Think,
        Knob::SystemPrompt,
        Knob::Tenants,
        Knob::Seed,
        Knob::Model,
        Knob::Gpu,
        Knob::Tp,
        Knob::Budget,
        Knob::MaxSeqs,
        Knob::MemUtil,
        Knob::PrefixCache,
        Knob::Chunked,
        Knob::Mfu,
        Knob::Mbu,
        Knob::StepOverhead,
        Knob::CpuOverhead,
        Knob::Replicas,
        Knob::Policy,
        Knob::LoadBound,
        Knob::RouterMs,
        Knob::Quota,
        Knob::Autoscaler,
        Knob::ScaleTarget,
        Knob::MinReplicas,
        Knob::MaxReplicas,
        Knob::ScaleDelay,
        Knob::Buffering,
        Knob::Overflow,
        Knob::OverflowWaiting,
        Knob::SloTtft,
        Knob::SloTpot,
    ];

    /// The knob's name in the URL and in `data-testid`s.
    pub fn key(self) -> &'static str {
        match self {
            Knob::Rate => "rate",
            Knob::Arrival => "arrival",
            Knob::Cv => "cv",
            Knob::Duration => "duration",
            Knob::Prompt => "prompt",
            Knob::PromptA => "prompt_a",
            Knob::PromptB => "prompt_b",
            Knob::Output => "output",
            Knob::OutputA => "output_a",
            Knob::OutputB => "output_b",
            Knob::Turns => "turns",
            Knob::Think => "think",
            Knob::SystemPrompt => "system_prompt",
            Knob::Tenants => "tenants",
            Knob::Seed => "seed",
            Knob::Model => "model",
            Knob::Gpu => "gpu",
            Knob::Tp => "tp",
            Knob::Budget => "budget",
            Knob::MaxSeqs => "max_seqs",
            Knob::MemUtil => "mem_util",
            Knob::PrefixCache => "prefix_cache",
            Knob::Chunked => "chunked",
            Knob::Mfu => "mfu",
            Knob::Mbu => "mbu",
            Knob::StepOverhead => "step_overhead",
            Knob::CpuOverhead => "cpu_overhead",
            Knob::Replicas => "replicas",
            Knob::Policy => "policy",
            Knob::LoadBound => "load_bound",
            Knob::RouterMs => "router_ms",
            Knob::Quota => "quota",
            Knob::Autoscaler => "autoscaler",
            Knob::ScaleTarget => "scale_target",
            Knob::MinReplicas => "min_replicas",
            Knob::MaxReplicas => "max_replicas",
            Knob::ScaleDelay => "scale_delay",
            Knob::Buffering => "buffering",
            Knob::Overflow => "overflow",
            Knob::OverflowWaiting => "overflow_waiting",
            Knob::SloTtft => "slo_ttft",
            Knob::SloTpot => "slo_tpot",
        }
    }

    /// The knob with this key.
    pub fn from_key(key: &str) -> Option<Knob> {
        Knob::ALL.into_iter().find(|k| k.key() == key)
    }

    pub fn section(self) -> Section {
        use Knob::*;
        match self {
            Rate | Arrival | Cv | Duration | Prompt | PromptA | PromptB | Output | OutputA
            | OutputB | Turns | Think | SystemPrompt | Tenants | Seed => Section::Workload,
            Model | Gpu | Tp | Budget | MaxSeqs | MemUtil | PrefixCache | Chunked | Mfu | Mbu
            | StepOverhead | CpuOverhead => Section::Replica,
            _ => Section::Fleet,
        }
    }

    /// The field's label for this configuration (the length fields name what they hold
    /// under the distribution chosen).
    pub fn label(self, cfg: &FleetConfig) -> &'static str {
        let w = &cfg.traffic[0].workload;
        match self {
            Knob::Rate => "Arrival rate",
            Knob::Arrival => "Arrival process",
            Knob::Cv => "Burstiness (gap CV)",
            Knob::Duration => "Traffic for",
            Knob::Prompt => "Prompt lengths",
            Knob::PromptA => match w.prompt_len {
                LengthDist::Uniform { .. } => "Prompt, fewest",
                LengthDist::LogNormal { .. } => "Prompt, mean",
                _ => "Prompt length",
            },
            Knob::PromptB => match w.prompt_len {
                LengthDist::Uniform { .. } => "Prompt, most",
                _ => "Prompt, p99",
            },
            Knob::Output => "Output lengths",
            Knob::OutputA => match w.output_len {
                LengthDist::Uniform { .. } => "Output, fewest",
                LengthDist::LogNormal { .. } => "Output, mean",
                _ => "Output length",
            },
            Knob::OutputB => match w.output_len {
                LengthDist::Uniform { .. } => "Output, most",
                _ => "Output, p99",
            },
            Knob::Turns => "Chat turns per session",
            Knob::Think => "Think time between turns",
            Knob::SystemPrompt => "Shared system prompt",
            Knob::Tenants => "Tenants",
            Knob::Seed => "Seed",
            Knob::Model => "Model",
            Knob::Gpu => "GPU",
            Knob::Tp => "Tensor parallelism",
            Knob::Budget => "Token budget per step",
            Knob::MaxSeqs => "Max sequences per step",
            Knob::MemUtil => "GPU memory utilisation",
            Knob::PrefixCache => "Prefix caching",
            Knob::Chunked => "Chunked prefill",
            Knob::Mfu => "MFU (prefill)",
            Knob::Mbu => "MBU (decode)",
            Knob::StepOverhead => "Fixed GPU time per step",
            Knob::CpuOverhead => "CPU time per step",
            Knob::Replicas => "Replicas at the start",
            Knob::Policy => "Router policy",
            Knob::LoadBound => "Affinity load bound",
            Knob::RouterMs => "Router decision time",
            Knob::Quota => "Quota per tenant",
            Knob::Autoscaler => "Autoscaler",
            Knob::ScaleTarget => "Autoscaler target",
            Knob::MinReplicas => "Fewest replicas",
            Knob::MaxReplicas => "Most replicas",
            Knob::ScaleDelay => "New replica ready after",
            Knob::Buffering => "Relay buffering",
            Knob::Overflow => "Overflow",
            Knob::OverflowWaiting => "Overflow when every replica has waiting",
            Knob::SloTtft => "SLO: server TTFT",
            Knob::SloTpot => "SLO: time per output token",
        }
    }

    /// The unit the field is typed in ("" for choices and plain counts).
    pub fn unit(self, cfg: &FleetConfig) -> &'static str {
        match self {
            Knob::Rate => "req/s",
            Knob::Duration | Knob::Think | Knob::ScaleDelay => "s",
            Knob::PromptA | Knob::PromptB | Knob::OutputA | Knob::OutputB => "tokens",
            Knob::SystemPrompt | Knob::Budget => "tokens",
            Knob::Turns => "turns",
            Knob::MaxSeqs => "seqs",
            Knob::MemUtil | Knob::Mfu | Knob::Mbu => "%",
            Knob::Tp => "GPUs",
            Knob::Replicas | Knob::MinReplicas | Knob::MaxReplicas => "replicas",
            Knob::LoadBound => "× mean",
            Knob::RouterMs | Knob::SloTtft | Knob::SloTpot => "ms",
            Knob::StepOverhead | Knob::CpuOverhead => "ms",
            Knob::Quota => "tokens/min",
            Knob::OverflowWaiting => "requests",
            Knob::ScaleTarget => match cfg.autoscaler.signal {
                ScaleSignal::GpuUtilisation | ScaleSignal::KvUsage => "%",
                ScaleSignal::QueuedTokens => "tokens/replica",
                ScaleSignal::Ttft => "ms",
            },
            _ => "",
        }
    }

    /// What the field takes.
    pub fn kind(self) -> Kind {
        let n = |integer, min, max| Kind::Number { integer, min, max };
        match self {
            Knob::Rate => n(false, 0.001, MAX_LAB_RATE),
            Knob::Cv => n(false, 0.05, 20.0),
            Knob::Duration => n(false, 1.0, MAX_LAB_DURATION),
            Knob::PromptA | Knob::PromptB | Knob::OutputA | Knob::OutputB => {
                n(true, 1.0, 1_000_000.0)
            }
            Knob::Turns => n(true, 0.0, 64.0),
            Knob::Think => n(false, 0.0, 3_600.0),
            Knob::SystemPrompt => n(true, 0.0, 100_000.0),
            Knob::Tenants => n(true, 1.0, 10_000.0),
            Knob::Seed => n(true, 0.0, 4_294_967_295.0),
            Knob::Budget => n(true, 16.0, 1_048_576.0),
            Knob::MaxSeqs => n(true, 1.0, 65_536.0),
            Knob::MemUtil => n(false, 10.0, 99.0),
            Knob::Mfu | Knob::Mbu => n(false, 1.0, 100.0),
            // The engine's own bound on either: one second a step.
            Knob::StepOverhead | Knob::CpuOverhead => n(false, 0.0, 1_000.0),
            Knob::Replicas | Knob::MinReplicas | Knob::MaxReplicas => n(true, 0.0, 256.0),
            Knob::LoadBound => n(false, 1.0, 10.0),
            Knob::RouterMs => n(false, 0.0, 10_000.0),
            Knob::Quota => n(true, 0.0, 1e12),
            Knob::ScaleTarget => n(false, 0.001, 1e9),
            Knob::ScaleDelay => n(false, 0.0, 86_400.0),
            Knob::OverflowWaiting => n(true, 0.0, 1_000_000.0),
            Knob::SloTtft => n(false, 1.0, 3_600_000.0),
            Knob::SloTpot => n(false, 0.1, 60_000.0),
            _ => Kind::Choice,
        }
    }

    /// Whether the knob means something for this configuration (burstiness only under
    /// gamma arrivals, and so on). The panel shows the others disabled.
    pub fn applies(self, cfg: &FleetConfig) -> bool {
        let w = &cfg.traffic[0].workload;
        let listed = |d: &LengthDist| {
            matches!(
                d,
                LengthDist::Empirical { .. } | LengthDist::Sequence { .. }
            )
        };
        match self {
            Knob::Rate => !matches!(w.arrival, Arrival::Trace { .. }),
            Knob::Cv => matches!(w.arrival, Arrival::Gamma { .. }),
            Knob::PromptA => !listed(&w.prompt_len),
            Knob::PromptB => matches!(
                w.prompt_len,
                LengthDist::Uniform { .. } | LengthDist::LogNormal { .. }
            ),
            Knob::OutputA => !listed(&w.output_len),
            Knob::OutputB => matches!(
                w.output_len,
                LengthDist::Uniform { .. } | LengthDist::LogNormal { .. }
            ),
            Knob::Think | Knob::SystemPrompt => w.sessions.is_some(),
            Knob::LoadBound => matches!(cfg.router.policy, RoutingPolicy::PrefixAffinity { .. }),
            Knob::ScaleTarget | Knob::MinReplicas | Knob::MaxReplicas | Knob::ScaleDelay => {
                cfg.autoscaler.enabled
            }
            Knob::OverflowWaiting => !matches!(cfg.overflow.action, OverflowAction::Queue),
            _ => true,
        }
    }

    /// The options of a choice, as (value, label), for this configuration (an option that
    /// only a scenario file can set is listed while the file sets it).
    pub fn options(self, cfg: &FleetConfig) -> Vec<(String, String)> {
        let o = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(v, l)| (v.to_string(), l.to_string()))
                .collect()
        };
        let w = &cfg.traffic[0].workload;
        let lengths = |d: &LengthDist| {
            let mut v = o(&[
                ("constant", "every one the same"),
                ("uniform", "uniform between two"),
                ("log_normal", "lognormal (mean, p99)"),
            ]);
            match d {
                LengthDist::Empirical { .. } => {
                    v.push(("empirical".into(), "drawn from the file's list".into()))
                }
                LengthDist::Sequence { .. } => {
                    v.push(("sequence".into(), "the file's list, in order".into()))
                }
                _ => {}
            }
            v
        };
        match self {
            Knob::Arrival => {
                let mut v = o(&[
                    ("poisson", "Poisson"),
                    ("constant", "evenly spaced"),
                    ("gamma", "bursty (gamma)"),
                ]);
                if matches!(w.arrival, Arrival::Trace { .. }) {
                    v.push(("trace".into(), "the file's arrival times".into()));
                }
                v
            }
            Knob::Prompt => lengths(&w.prompt_len),
            Knob::Output => lengths(&w.output_len),
            Knob::Model => models().into_iter().map(|m| (m.id, m.name)).collect(),
            Knob::Gpu => gpus().into_iter().map(|g| (g.id, g.name)).collect(),
            Knob::Tp => ["1", "2", "4", "8"]
                .iter()
                .map(|n| (n.to_string(), n.to_string()))
                .collect(),
            Knob::PrefixCache | Knob::Chunked => o(&[("on", "on"), ("off", "off")]),
            Knob::Policy => o(&[
                ("round_robin", "round-robin"),
                ("random", "random"),
                ("least_outstanding", "fewest outstanding requests"),
                ("power_of_two", "fewer requests of two random replicas"),
                ("least_queued_tokens", "fewest queued prompt tokens"),
                ("kv_aware", "lowest KV usage"),
                ("prefix_affinity", "prefix affinity (bounded load)"),
            ]),
            Knob::Autoscaler => o(&[
                ("off", "off"),
                ("gpu_utilisation", "on GPU utilisation"),
                ("queued_tokens", "on queued prompt tokens"),
                ("kv_usage", "on KV usage"),
                ("ttft", "on server TTFT"),
            ]),
            Knob::Buffering => o(&[
                ("off", "none (flush every event)"),
                ("proxy", "proxy buffering (4 KiB)"),
                ("gzip", "gzip on the stream"),
                ("coalescing_lb", "coalescing load balancer (100 ms)"),
            ]),
            Knob::Overflow => {
                let mut v = o(&[
                    ("queue", "queue on the fleet"),
                    ("shed", "shed with 429"),
                    ("hosted", "spill to a hosted API"),
                ]);
                if let OverflowAction::SpillToPool { pool } = cfg.overflow.action {
                    v.push(("pool".into(), format!("spill to pool {pool}")));
                }
                v
            }
            _ => Vec::new(),
        }
    }

    /// The field's text for this configuration.
    pub fn get(self, cfg: &FleetConfig) -> String {
        let w = &cfg.traffic[0].workload;
        let p = &cfg.pools[0];
        let r = &p.replica;
        match self {
            Knob::Rate => match w.arrival {
                Arrival::Poisson { rate }
                | Arrival::Constant { rate }
                | Arrival::Gamma { rate, .. } => num(rate),
                Arrival::Trace { .. } => String::new(),
            },
            Knob::Arrival => match w.arrival {
                Arrival::Poisson { .. } => "poisson",
                Arrival::Constant { .. } => "constant",
                Arrival::Gamma { .. } => "gamma",
                Arrival::Trace { .. } => "trace",
            }
            .into(),
            Knob::Cv => match w.arrival {
                Arrival::Gamma { cv, .. } => num(cv),
                _ => String::new(),
            },
            Knob::Duration => num(cfg.horizon()),
            Knob::Prompt => dist_kind(&w.prompt_len).into(),
            Knob::PromptA => dist_a(&w.prompt_len),
            Knob::PromptB => dist_b(&w.prompt_len),
            Knob::Output => dist_kind(&w.output_len).into(),
            Knob::OutputA => dist_a(&w.output_len),
            Knob::OutputB => dist_b(&w.output_len),
            Knob::Turns => w.sessions.as_ref().map_or(0, |s| s.turns).to_string(),
            Knob::Think => w
                .sessions
                .as_ref()
                .map_or(String::new(), |s| num(s.think_time_s)),
            Knob::SystemPrompt => w
                .sessions
                .as_ref()
                .map_or(String::new(), |s| s.system_prompt_len.to_string()),
            Knob::Tenants => w.tenants.to_string(),
            Knob::Seed => cfg.seed.to_string(),
            Knob::Model => r.deployment.model.id.clone(),
            Knob::Gpu => r.deployment.gpu.id.clone(),
            Knob::Tp => r.deployment.tp.to_string(),
            Knob::Budget => r.scheduler.max_num_batched_tokens.to_string(),
            Knob::MaxSeqs => r.scheduler.max_num_seqs.to_string(),
            Knob::MemUtil => num(r.memory.gpu_memory_utilization * 100.0),
            Knob::PrefixCache => on_off(r.scheduler.enable_prefix_caching),
            Knob::Chunked => on_off(r.scheduler.chunked_prefill),
            Knob::Mfu => num(r.efficiency.mfu * 100.0),
            Knob::Mbu => num(r.efficiency.mbu * 100.0),
            Knob::StepOverhead => num(r.efficiency.step_overhead_s * 1e3),
            Knob::CpuOverhead => num(r.efficiency.cpu_overhead_s * 1e3),
            Knob::Replicas => p.replicas.to_string(),
            Knob::Policy => cfg.router.policy.name().into(),
            Knob::LoadBound => match cfg.router.policy {
                RoutingPolicy::PrefixAffinity { load_bound, .. } => num(load_bound),
                _ => String::new(),
            },
            Knob::RouterMs => num(cfg.router.decision_s * 1e3),
            Knob::Quota => {
                if cfg.quota.enabled {
                    num(cfg.quota.tokens_per_window as f64 * 60.0 / cfg.quota.window_s)
                } else {
                    "0".into()
                }
            }
            Knob::Autoscaler => {
                if cfg.autoscaler.enabled {
                    signal_name(cfg.autoscaler.signal).into()
                } else {
                    "off".into()
                }
            }
            Knob::ScaleTarget => {
                let t = cfg.autoscaler.target;
                match cfg.autoscaler.signal {
                    ScaleSignal::GpuUtilisation | ScaleSignal::KvUsage => num(t * 100.0),
                    ScaleSignal::QueuedTokens => num(t),
                    ScaleSignal::Ttft => num(t * 1e3),
                }
            }
            Knob::MinReplicas => p.min_replicas.to_string(),
            Knob::MaxReplicas => p.max_replicas.to_string(),
            Knob::ScaleDelay => num(cfg.autoscaler.scale_up_delay_s),
            Knob::Buffering => match cfg.relay.buffering {
                Buffering::Off => "off",
                Buffering::Proxy { .. } => "proxy",
                Buffering::Gzip { .. } => "gzip",
                Buffering::CoalescingLb { .. } => "coalescing_lb",
            }
            .into(),
            Knob::Overflow => match cfg.overflow.action {
                OverflowAction::Queue => "queue",
                OverflowAction::Shed { .. } => "shed",
                OverflowAction::Hosted(_) => "hosted",
                OverflowAction::SpillToPool { .. } => "pool",
            }
            .into(),
            Knob::OverflowWaiting => cfg.overflow.waiting_trigger.to_string(),
            Knob::SloTtft => num(cfg.slo.ttft_s * 1e3),
            Knob::SloTpot => num(cfg.slo.tpot_s * 1e3),
        }
    }

    /// Sets the knob from the text typed into its field. The error is a sentence for the
    /// field; the configuration is unchanged when it fails. Ranges that only the whole
    /// configuration can judge (a model too large for its GPUs) are left to
    /// [`FleetConfig::validate`].
    pub fn set(self, cfg: &mut FleetConfig, text: &str) -> Result<(), String> {
        let text = text.trim();
        // Writing back what the field shows changes nothing (a knob that another set as a
        // side effect reads back in a query without complaint).
        if text == self.get(cfg) {
            return Ok(());
        }
        if !self.applies(cfg) && self.nested() {
            return Err(format!(
                "{} does not apply here: {}",
                self.label(cfg),
                self.why_not(cfg)
            ));
        }
        match self.kind() {
            Kind::Number { integer, min, max } => {
                let v = parse_number(text, integer, min, max, self.unit(cfg))?;
                self.set_number(cfg, v)
            }
            Kind::Choice => {
                if !self.options(cfg).iter().any(|(v, _)| v == text) {
                    let names: Vec<String> =
                        self.options(cfg).into_iter().map(|(v, _)| v).collect();
                    return Err(format!("must be one of {}, got {text:?}", names.join(", ")));
                }
                self.set_choice(cfg, text)
            }
        }
    }

    /// Whether the knob's value lives inside a choice (the burstiness of gamma arrivals, the
    /// p99 of a lognormal), so there is nowhere to keep it while the choice is another.
    fn nested(self) -> bool {
        matches!(
            self,
            Knob::Rate
                | Knob::Cv
                | Knob::PromptA
                | Knob::PromptB
                | Knob::OutputA
                | Knob::OutputB
                | Knob::Think
                | Knob::SystemPrompt
                | Knob::LoadBound
        )
    }

    fn why_not(self, cfg: &FleetConfig) -> &'static str {
        match self {
            Knob::Rate => "the arrival times come from the file",
            Knob::Cv => "only bursty (gamma) arrivals have one",
            Knob::PromptA | Knob::PromptB | Knob::OutputA | Knob::OutputB => {
                if self.applies_kind_listed(cfg) {
                    "the lengths come from the file's list; pick a distribution first"
                } else {
                    "every length is the same; pick uniform or lognormal first"
                }
            }
            Knob::Think | Knob::SystemPrompt => "requests are independent; set chat turns first",
            Knob::LoadBound => "only prefix affinity has one",
            Knob::OverflowWaiting => "overflow queues on the fleet; pick shed or hosted first",
            _ => "the autoscaler is off",
        }
    }

    fn applies_kind_listed(self, cfg: &FleetConfig) -> bool {
        let w = &cfg.traffic[0].workload;
        let d = if matches!(self, Knob::PromptA | Knob::PromptB) {
            &w.prompt_len
        } else {
            &w.output_len
        };
        matches!(
            d,
            LengthDist::Empirical { .. } | LengthDist::Sequence { .. }
        )
    }

    fn set_number(self, cfg: &mut FleetConfig, v: f64) -> Result<(), String> {
        let u = v as u32;
        match self {
            Knob::Rate => {
                let w = &mut cfg.traffic[0].workload;
                match &mut w.arrival {
                    Arrival::Poisson { rate }
                    | Arrival::Constant { rate }
                    | Arrival::Gamma { rate, .. } => *rate = v,
                    Arrival::Trace { .. } => {}
                }
            }
            Knob::Cv => {
                if let Arrival::Gamma { cv, .. } = &mut cfg.traffic[0].workload.arrival {
                    *cv = v;
                }
                for s in &mut cfg.traffic {
                    if let Arrival::Gamma { cv, .. } = &mut s.workload.arrival {
                        *cv = v;
                    }
                }
            }
            Knob::Duration => {
                let old = cfg.horizon();
                if let Some(s) = cfg.traffic.iter().find(|s| s.start_s >= v) {
                    return Err(format!(
                        "a source of this scenario starts at {} s; the traffic must run past it",
                        num(s.start_s)
                    ));
                }
                for s in &mut cfg.traffic {
                    let end = s.start_s + s.workload.duration_s;
                    if end >= old || end > v {
                        s.workload.duration_s = v - s.start_s;
                    }
                }
            }
            Knob::PromptA | Knob::OutputA | Knob::PromptB | Knob::OutputB => {
                let a = matches!(self, Knob::PromptA | Knob::OutputA);
                for s in &mut cfg.traffic {
                    let w = &mut s.workload;
                    let d = if matches!(self, Knob::PromptA | Knob::PromptB) {
                        &mut w.prompt_len
                    } else {
                        &mut w.output_len
                    };
                    match (d, a) {
                        (LengthDist::Constant { value }, true) => *value = u,
                        (LengthDist::Uniform { min, .. }, true) => *min = u,
                        (LengthDist::Uniform { max, .. }, false) => *max = u,
                        (LengthDist::LogNormal { mean, .. }, true) => *mean = v,
                        (LengthDist::LogNormal { p99, .. }, false) => *p99 = v,
                        _ => {}
                    }
                }
            }
            Knob::Turns => {
                for s in &mut cfg.traffic {
                    let w = &mut s.workload;
                    if u == 0 {
                        w.sessions = None;
                    } else {
                        w.sessions.get_or_insert_with(SessionConfig::default).turns = u;
                    }
                }
            }
            Knob::Think | Knob::SystemPrompt => {
                for s in &mut cfg.traffic {
                    if let Some(sess) = &mut s.workload.sessions {
                        if self == Knob::Think {
                            sess.think_time_s = v;
                        } else {
                            sess.system_prompt_len = u;
                        }
                    }
                }
            }
            Knob::Tenants => {
                for s in &mut cfg.traffic {
                    s.workload.tenants = u;
                }
            }
            Knob::Seed => {
                let new = v as u64;
                let shift = new.wrapping_sub(cfg.seed);
                cfg.seed = new;
                for s in &mut cfg.traffic {
                    s.workload.seed = s.workload.seed.wrapping_add(shift);
                }
            }
            Knob::Budget => cfg.pools[0].replica.scheduler.max_num_batched_tokens = u,
            Knob::MaxSeqs => cfg.pools[0].replica.scheduler.max_num_seqs = u,
            Knob::MemUtil => cfg.pools[0].replica.memory.gpu_memory_utilization = v / 100.0,
            Knob::Mfu => cfg.pools[0].replica.efficiency.mfu = v / 100.0,
            Knob::Mbu => cfg.pools[0].replica.efficiency.mbu = v / 100.0,
            Knob::StepOverhead => cfg.pools[0].replica.efficiency.step_overhead_s = v / 1e3,
            Knob::CpuOverhead => cfg.pools[0].replica.efficiency.cpu_overhead_s = v / 1e3,
            Knob::Replicas => {
                let p = &mut cfg.pools[0];
                if u == 0 && p.max_replicas == 0 {
                    return Err("a fleet needs at least one replica".into());
                }
                p.replicas = u;
                // Keep the autoscaler's bounds around the starting count.
                p.min_replicas = p.min_replicas.min(u);
                p.max_replicas = p.max_replicas.max(u).max(1);
            }
            Knob::MinReplicas => {
                let p = &mut cfg.pools[0];
                if u > p.replicas {
                    return Err(format!(
                        "must be at most the replicas at the start ({})",
                        p.replicas
                    ));
                }
                p.min_replicas = u;
            }
            Knob::MaxReplicas => {
                let p = &mut cfg.pools[0];
                if u < p.replicas.max(1) {
                    return Err(format!(
                        "must be at least the replicas at the start ({})",
                        p.replicas.max(1)
                    ));
                }
                p.max_replicas = u;
            }
            Knob::LoadBound => {
                if let RoutingPolicy::PrefixAffinity { load_bound, .. } = &mut cfg.router.policy {
                    *load_bound = v;
                }
            }
            Knob::RouterMs => cfg.router.decision_s = v / 1e3,
            Knob::Quota => {
                if v == 0.0 {
                    cfg.quota.enabled = false;
                } else {
                    cfg.quota.enabled = true;
                    cfg.quota.window_s = 60.0;
                    cfg.quota.tokens_per_window = v as u64;
                }
            }
            Knob::ScaleTarget => {
                cfg.autoscaler.target = match cfg.autoscaler.signal {
                    ScaleSignal::GpuUtilisation | ScaleSignal::KvUsage => {
                        if v > 100.0 {
                            return Err("must be at most 100 %".into());
                        }
                        v / 100.0
                    }
                    ScaleSignal::QueuedTokens => v,
                    ScaleSignal::Ttft => v / 1e3,
                }
            }
            Knob::ScaleDelay => cfg.autoscaler.scale_up_delay_s = v,
            Knob::OverflowWaiting => cfg.overflow.waiting_trigger = u,
            Knob::SloTtft => cfg.slo.ttft_s = v / 1e3,
            Knob::SloTpot => cfg.slo.tpot_s = v / 1e3,
            _ => {}
        }
        Ok(())
    }

    fn set_choice(self, cfg: &mut FleetConfig, text: &str) -> Result<(), String> {
        match self {
            Knob::Arrival => {
                for s in &mut cfg.traffic {
                    let rate = match s.workload.arrival {
                        Arrival::Poisson { rate }
                        | Arrival::Constant { rate }
                        | Arrival::Gamma { rate, .. } => rate,
                        Arrival::Trace { .. } if text == "trace" => continue,
                        Arrival::Trace { ref times } => {
                            (times.len() as f64 / s.workload.duration_s.max(1e-9)).max(0.001)
                        }
                    };
                    s.workload.arrival = match text {
                        "poisson" => Arrival::Poisson { rate },
                        "constant" => Arrival::Constant { rate },
                        "gamma" => Arrival::Gamma { rate, cv: 2.0 },
                        _ => continue,
                    };
                }
            }
            Knob::Prompt | Knob::Output => {
                for s in &mut cfg.traffic {
                    let w = &mut s.workload;
                    let d = if self == Knob::Prompt {
                        &mut w.prompt_len
                    } else {
                        &mut w.output_len
                    };
                    if dist_kind(d) == text {
                        continue;
                    }
                    let m = dist_mean(d).max(1.0);
                    *d = match text {
                        "constant" => LengthDist::Constant {
                            value: m.round() as u32,
                        },
                        "uniform" => LengthDist::Uniform {
                            min: (m / 2.0).round().max(1.0) as u32,
                            max: (m * 1.5).round().max(2.0) as u32,
                        },
                        // Whole tokens, as the fields take them.
                        "log_normal" => LengthDist::LogNormal {
                            mean: m.round(),
                            p99: m.round() * 4.0,
                        },
                        _ => continue,
                    };
                }
            }
            Knob::Model | Knob::Gpu | Knob::Tp => {
                let r = &mut cfg.pools[0].replica;
                let d = &r.deployment;
                let (mut model, mut gpu, mut tp) = (d.model.id.clone(), d.gpu.id.clone(), d.tp);
                match self {
                    Knob::Model => model = text.into(),
                    Knob::Gpu => gpu = text.into(),
                    _ => {
                        tp = text
                            .parse()
                            .map_err(|_| "must be 1, 2, 4 or 8".to_string())?
                    }
                }
                r.deployment = trainer_engine::cost::Deployment::from_ids(
                    &model,
                    &gpu,
                    tp,
                    d.weight_dtype,
                    d.kv_dtype,
                )
                .map_err(|e| e.message)?;
            }
            Knob::PrefixCache => {
                cfg.pools[0].replica.scheduler.enable_prefix_caching = text == "on";
            }
            Knob::Chunked => cfg.pools[0].replica.scheduler.chunked_prefill = text == "on",
            Knob::Policy => {
                cfg.router.policy = match text {
                    "round_robin" => RoutingPolicy::RoundRobin,
                    "random" => RoutingPolicy::Random,
                    "least_outstanding" => RoutingPolicy::LeastOutstanding,
                    "power_of_two" => RoutingPolicy::PowerOfTwo,
                    "least_queued_tokens" => RoutingPolicy::LeastQueuedTokens,
                    "kv_aware" => RoutingPolicy::KvAware,
                    _ => match cfg.router.policy {
                        p @ RoutingPolicy::PrefixAffinity { .. } => p,
                        _ => RoutingPolicy::prefix_affinity(1.25),
                    },
                }
            }
            Knob::Autoscaler => {
                let a = &mut cfg.autoscaler;
                if text == "off" {
                    a.enabled = false;
                } else {
                    let signal = match text {
                        "gpu_utilisation" => ScaleSignal::GpuUtilisation,
                        "queued_tokens" => ScaleSignal::QueuedTokens,
                        "kv_usage" => ScaleSignal::KvUsage,
                        _ => ScaleSignal::Ttft,
                    };
                    if !a.enabled || a.signal != signal {
                        a.target = match signal {
                            ScaleSignal::GpuUtilisation => 0.65,
                            ScaleSignal::QueuedTokens => 1_000.0,
                            ScaleSignal::KvUsage => 0.5,
                            ScaleSignal::Ttft => cfg.slo.ttft_s / 2.0,
                        };
                    }
                    a.enabled = true;
                    a.pool = 0;
                    a.signal = signal;
                    let p = &mut cfg.pools[0];
                    if p.max_replicas <= p.replicas {
                        p.max_replicas = (p.replicas * 4).max(1);
                    }
                }
            }
            Knob::Buffering => {
                cfg.relay.buffering = match text {
                    "proxy" => Buffering::Proxy { buffer_bytes: 4096 },
                    "gzip" => Buffering::Gzip {
                        flush_bytes: 1024,
                        ratio: 6.0,
                    },
                    "coalescing_lb" => Buffering::CoalescingLb { interval_s: 0.1 },
                    _ => Buffering::Off,
                }
            }
            Knob::Overflow => {
                let o = &mut cfg.overflow;
                o.action = match text {
                    "queue" => OverflowAction::Queue,
                    "shed" => OverflowAction::Shed { retry_after_s: 1 },
                    "hosted" => OverflowAction::Hosted(HostedApi::default()),
                    _ => o.action,
                };
                if !matches!(o.action, OverflowAction::Queue)
                    && o.waiting_trigger == 0
                    && o.queued_tokens_trigger == 0
                {
                    o.waiting_trigger = 8;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The knob whose field a validation error belongs to, from the error's field path
    /// (`traffic[0].workload.arrival.rate`, `pools[0].replica.scheduler.max_num_seqs`, ...).
    pub fn for_error_field(field: &str) -> Option<Knob> {
        let table: [(&str, Knob); 31] = [
            ("arrival.rate", Knob::Rate),
            ("arrival.cv", Knob::Cv),
            ("arrival", Knob::Arrival),
            ("duration_s", Knob::Duration),
            ("start_s", Knob::Duration),
            ("prompt_len", Knob::PromptA),
            ("output_len", Knob::OutputA),
            ("sessions.turns", Knob::Turns),
            ("think_time_s", Knob::Think),
            ("system_prompt_len", Knob::SystemPrompt),
            ("tenants", Knob::Tenants),
            ("max_num_batched_tokens", Knob::Budget),
            ("max_num_seqs", Knob::MaxSeqs),
            ("gpu_memory_utilization", Knob::MemUtil),
            ("memory", Knob::MemUtil),
            ("mfu", Knob::Mfu),
            ("mbu", Knob::Mbu),
            ("step_overhead_s", Knob::StepOverhead),
            ("cpu_overhead_s", Knob::CpuOverhead),
            (".tp", Knob::Tp),
            ("deployment", Knob::Model),
            ("min_replicas", Knob::MinReplicas),
            ("max_replicas", Knob::MaxReplicas),
            ("replicas", Knob::Replicas),
            ("load_bound", Knob::LoadBound),
            ("decision_s", Knob::RouterMs),
            ("quota", Knob::Quota),
            ("autoscaler.target", Knob::ScaleTarget),
            ("scale_up_delay_s", Knob::ScaleDelay),
            ("slo.ttft_s", Knob::SloTtft),
            ("slo.tpot_s", Knob::SloTpot),
        ];
        table
            .iter()
            .find(|(pat, _)| field.contains(pat))
            .map(|(_, k)| *k)
    }
}

fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

fn signal_name(s: ScaleSignal) -> &'static str {
    match s {
        ScaleSignal::GpuUtilisation => "gpu_utilisation",
        ScaleSignal::QueuedTokens => "queued_tokens",
        ScaleSignal::KvUsage => "kv_usage",
        ScaleSignal::Ttft => "ttft",
    }
}

fn dist_kind(d: &LengthDist) -> &'static str {
    match d {
        LengthDist::Constant { .. } => "constant",
        LengthDist::Uniform { .. } => "uniform",
        LengthDist::LogNormal { .. } => "log_normal",
        LengthDist::Empirical { .. } => "empirical",
        LengthDist::Sequence { .. } => "sequence",
    }
}

fn dist_a(d: &LengthDist) -> String {
    match d {
        LengthDist::Constant { value } => value.to_string(),
        LengthDist::Uniform { min, .. } => min.to_string(),
        LengthDist::LogNormal { mean, .. } => num(*mean),
        _ => String::new(),
    }
}

fn dist_b(d: &LengthDist) -> String {
    match d {
        LengthDist::Uniform { max, .. } => max.to_string(),
        LengthDist::LogNormal { p99, .. } => num(*p99),
        _ => String::new(),
    }
}

fn dist_mean(d: &LengthDist) -> f64 {
    let mean = |v: &[u32]| {
        if v.is_empty() {
            1.0
        } else {
            v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64
        }
    };
    match d {
        LengthDist::Constant { value } => *value as f64,
        LengthDist::Uniform { min, max } => (*min as f64 + *max as f64) / 2.0,
        LengthDist::LogNormal { mean, .. } => *mean,
        LengthDist::Empirical { values } | LengthDist::Sequence { values } => mean(values),
    }
}

/// A number as a field shows it: the shortest text that reads back as the same value, after
/// rounding away the noise of a unit conversion (0.019 s × 1,000 is 19 ms, not
/// 19.000000000000004).
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let rounded: f64 = format!("{v:.12e}").parse().unwrap_or(v);
    format!("{rounded}")
}

/// Reads a number typed in a field: thousands separators and spaces are allowed.
fn parse_number(text: &str, integer: bool, min: f64, max: f64, unit: &str) -> Result<f64, String> {
    let clean: String = text
        .chars()
        .filter(|c| !matches!(c, ',' | '_' | ' ' | '\u{a0}'))
        .collect();
    if clean.is_empty() {
        return Err("needs a value".into());
    }
    let v: f64 = clean
        .parse()
        .map_err(|_| format!("must be a number, got {text:?}"))?;
    if !v.is_finite() {
        return Err(format!("must be a finite number, got {text:?}"));
    }
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    if v < min || v > max {
        return Err(format!(
            "must be between {}{unit} and {}{unit}, got {}",
            trainer_engine::format::num(min),
            trainer_engine::format::num(max),
            text
        ));
    }
    if integer && v.fract() != 0.0 {
        return Err(format!("must be a whole number, got {text}"));
    }
    Ok(v)
}
