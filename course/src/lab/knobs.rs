//! The lab's knobs: every setting of a fleet run the parameter panel shows, as one table,
//! [`KNOBS`]. An entry is the whole knob: its key (its name in the URL and in the panel's
//! `data-testid`s), its label and unit, its section, what its field takes (a number
//! with its range, a choice with its options, or an on/off toggle), when it applies, the error
//! fields of the engine's validators that are its own, and a reader and a writer on
//! [`FleetConfig`]. **Adding a knob is one edit: one entry in [`KNOBS`]** (a knob that only
//! applies under another's choice names, in the same entry, the query that makes it apply,
//! for the table's test); the panel, the query string and the tests read the table, and
//! nothing matches on a knob.
//!
//! A number's range is the engine's: each bound is [`Bound::Engine`], read from the constant
//! the validator checks (`SchedulerConfig::MAX_NUM_BATCHED_TOKENS_RANGE`, ...), unless the lab
//! takes less ([`Bound::Lab`]: an arrival rate a browser tab can follow, zero as "off"). A test
//! walks the table against [`FleetConfig::validate`]: both bounds of every number validate,
//! and just beyond an engine bound does not, so the lab and the engine cannot disagree.
//!
//! A knob reads the configuration as the text its field shows and writes it back from the
//! text typed, so the panel, the URL and the tests go through the same two functions. Knobs
//! that act on the workload read the first traffic source and write every source (except the
//! rate, which is the first source's); knobs that act on a replica read and write the first
//! pool. [`KNOBS`] is in dependency order: a knob that only applies under another's choice
//! (burstiness under gamma arrivals) comes after it, so a query string applied in that order
//! sets the choice first.

use std::fmt;
use std::ops::RangeInclusive;
use trainer_engine::catalog::{gpus, models};
use trainer_engine::cost::{Deployment, Efficiency, MemoryConfig};
use trainer_engine::fleet::{
    AutoscalerConfig, Buffering, FleetConfig, HostedApi, OverflowAction, PoolConfig, RouterConfig,
    RoutingPolicy, ScaleSignal, SloConfig,
};
use trainer_engine::replica::{ReplicaConfig, SchedulerConfig};
use trainer_engine::workload::{Arrival, LengthDist, SessionConfig, WorkloadConfig, MAX_LEN};

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
    /// On or off.
    Toggle,
}

/// Largest arrival rate the lab takes, requests per second (the simulator takes more, but a
/// browser tab cannot follow it).
pub const MAX_LAB_RATE: f64 = 100_000.0;
/// Longest traffic the lab takes, seconds.
pub const MAX_LAB_DURATION: f64 = 86_400.0;

/// One bound of a number's range, in the knob's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// The engine's: its validator refuses anything beyond it.
    Engine(f64),
    /// The lab's own, inside what the engine takes (a browser's limit, zero meaning "off",
    /// the edge of the field's type).
    Lab(f64),
}

impl Bound {
    pub const fn value(self) -> f64 {
        match self {
            Bound::Engine(v) | Bound::Lab(v) => v,
        }
    }
}

/// A number's range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// Whole numbers only.
    pub integer: bool,
    pub min: Bound,
    pub max: Bound,
}

/// The engine's range of a whole number.
const fn whole(r: &RangeInclusive<u32>) -> Range {
    Range {
        integer: true,
        min: Bound::Engine(*r.start() as f64),
        max: Bound::Engine(*r.end() as f64),
    }
}

/// The engine's range of a real number, shown `scale` times larger (100 for a fraction in %).
const fn real(r: &RangeInclusive<f64>, scale: f64) -> Range {
    Range {
        integer: false,
        min: Bound::Engine(*r.start() * scale),
        max: Bound::Engine(*r.end() * scale),
    }
}

/// A range of the lab's own.
const fn lab(integer: bool, min: f64, max: f64) -> Range {
    Range {
        integer,
        min: Bound::Lab(min),
        max: Bound::Lab(max),
    }
}

/// A text, fixed or chosen by the configuration.
#[derive(Clone, Copy)]
pub enum Text {
    Fixed(&'static str),
    Of(fn(&FleetConfig) -> &'static str),
}

impl Text {
    pub fn of(self, cfg: &FleetConfig) -> &'static str {
        match self {
            Text::Fixed(t) => t,
            Text::Of(f) => f(cfg),
        }
    }
}

/// What a knob's field takes.
#[derive(Clone, Copy)]
pub enum Field {
    Number(Range),
    /// One of the options, as (value, label), for a configuration.
    Choice(fn(&FleetConfig) -> Vec<(String, String)>),
    Toggle,
}

/// How a knob writes the configuration: from a value already checked against its field (a
/// number in range, one of the options). A writer that may refuse gives a sentence for the
/// field and leaves the configuration unchanged.
#[derive(Clone, Copy)]
pub enum Write {
    Set(fn(&mut FleetConfig, f64)),
    TrySet(fn(&mut FleetConfig, f64) -> Result<(), String>),
    Pick(fn(&mut FleetConfig, &str) -> Result<(), String>),
    Switch(fn(&mut FleetConfig, bool)),
}

/// When a knob means something for a configuration. The panel shows the others disabled.
#[derive(Clone, Copy)]
pub enum When {
    Always,
    /// Only when this holds; the value is kept meanwhile.
    If(fn(&FleetConfig) -> bool),
    /// Only when this holds, and the value lives inside a choice (the burstiness of gamma
    /// arrivals, the p99 of a lognormal), so it cannot be set meanwhile; the text says why.
    Inside(fn(&FleetConfig) -> bool, Text),
}

/// One knob: an entry of [`KNOBS`].
#[derive(Clone, Copy)]
pub struct Spec {
    /// Its name in the URL, in `data-testid`s (`param-<key>`) and of its help.
    pub key: &'static str,
    pub section: Section,
    /// The field's label (the length fields name what they hold under the distribution).
    pub label: Text,
    /// The unit the field is typed in ("" for choices and plain counts).
    pub unit: Text,
    pub field: Field,
    /// The field's text for a configuration ("" when there is nothing to show).
    pub read: fn(&FleetConfig) -> String,
    pub write: Write,
    pub when: When,
    /// Parts of the engine's error field paths that are this knob's
    /// (`max_num_seqs` in `pools[0].replica.scheduler.max_num_seqs`); the longest match wins.
    pub errors: &'static [&'static str],
    /// A query that makes the knob apply, from the seed fleet, with the other knobs where the
    /// whole of its range is valid ("" when the seed is such a place). The table's test
    /// starts there.
    pub context: &'static str,
}

const fn spec(key: &'static str, section: Section, label: &'static str, field: Field) -> Spec {
    Spec {
        key,
        section,
        label: Text::Fixed(label),
        unit: Text::Fixed(""),
        field,
        read: |_| String::new(),
        write: Write::Pick(|_, _| Err(MISMATCH.into())),
        when: When::Always,
        errors: &[],
        context: "",
    }
}

/// A number knob, in `unit`, within `range`.
const fn number(
    key: &'static str,
    section: Section,
    label: &'static str,
    unit: &'static str,
    range: Range,
) -> Spec {
    spec(key, section, label, Field::Number(range)).unit(unit)
}

/// A choice knob.
const fn choice(
    key: &'static str,
    section: Section,
    label: &'static str,
    options: fn(&FleetConfig) -> Vec<(String, String)>,
) -> Spec {
    spec(key, section, label, Field::Choice(options))
}

/// An on/off knob.
const fn toggle(key: &'static str, section: Section, label: &'static str) -> Spec {
    spec(key, section, label, Field::Toggle)
}

impl Spec {
    const fn read(mut self, read: fn(&FleetConfig) -> String) -> Spec {
        self.read = read;
        self
    }
    const fn set(mut self, write: fn(&mut FleetConfig, f64)) -> Spec {
        self.write = Write::Set(write);
        self
    }
    const fn try_set(mut self, write: fn(&mut FleetConfig, f64) -> Result<(), String>) -> Spec {
        self.write = Write::TrySet(write);
        self
    }
    const fn pick(mut self, write: fn(&mut FleetConfig, &str) -> Result<(), String>) -> Spec {
        self.write = Write::Pick(write);
        self
    }
    const fn switch(mut self, write: fn(&mut FleetConfig, bool)) -> Spec {
        self.write = Write::Switch(write);
        self
    }
    const fn when(mut self, when: When) -> Spec {
        self.when = when;
        self
    }
    const fn errors(mut self, errors: &'static [&'static str]) -> Spec {
        self.errors = errors;
        self
    }
    const fn context(mut self, context: &'static str) -> Spec {
        self.context = context;
        self
    }
    const fn unit(mut self, unit: &'static str) -> Spec {
        self.unit = Text::Fixed(unit);
        self
    }
    const fn label_of(mut self, f: fn(&FleetConfig) -> &'static str) -> Spec {
        self.label = Text::Of(f);
        self
    }
    const fn unit_of(mut self, f: fn(&FleetConfig) -> &'static str) -> Spec {
        self.unit = Text::Of(f);
        self
    }
}

use Section::{Fleet, Replica, Workload};

/// Every knob, in the order they are applied and shown. (Laid out by hand, one knob a block.)
#[rustfmt::skip]
pub const KNOBS: &[Spec] = &[
    choice("arrival", Workload, "Arrival process", arrival_options)
        .read(|c| arrival_name(&wl(c).arrival).into())
        .pick(set_arrival)
        .errors(&["arrival"]),
    number("rate", Workload, "Arrival rate", "req/s", lab(false, 0.001, MAX_LAB_RATE))
        .read(|c| rate_of(&wl(c).arrival).map_or(String::new(), num))
        .set(|c, v| if let Some(r) = rate_mut(&mut c.traffic[0].workload.arrival) { *r = v })
        .when(When::Inside(|c| rate_of(&wl(c).arrival).is_some(),
            Text::Fixed("the arrival times come from the file")))
        .errors(&["arrival.rate"]),
    number("cv", Workload, "Burstiness (gap CV)", "", real(&Arrival::CV_RANGE, 1.0))
        .read(|c| match wl(c).arrival { Arrival::Gamma { cv, .. } => num(cv), _ => String::new() })
        .set(|c, v| for s in &mut c.traffic {
            if let Arrival::Gamma { cv, .. } = &mut s.workload.arrival { *cv = v }
        })
        .when(When::Inside(|c| matches!(wl(c).arrival, Arrival::Gamma { .. }),
            Text::Fixed("only bursty (gamma) arrivals have one")))
        .errors(&["arrival.cv"])
        .context("arrival=gamma"),
    number("duration", Workload, "Traffic for", "s", lab(false, 1.0, MAX_LAB_DURATION))
        .read(|c| num(c.horizon()))
        .try_set(set_duration)
        .errors(&["duration_s", "start_s"]),
    lengths::<Prompt>("prompt", "Prompt lengths"),
    length::<Prompt, true>("prompt_a").errors(&["prompt_len"]),
    length::<Prompt, false>("prompt_b").context("prompt=uniform&prompt_a=1"),
    lengths::<Output>("output", "Output lengths"),
    length::<Output, true>("output_a").errors(&["output_len"]),
    length::<Output, false>("output_b").context("output=uniform&output_a=1"),
    // Zero turns: requests without sessions.
    number("turns", Workload, "Chat turns per session", "turns",
        Range { min: Bound::Lab(0.0), ..whole(&SessionConfig::TURNS_RANGE) })
        .read(|c| wl(c).sessions.as_ref().map_or(0, |s| s.turns).to_string())
        .set(set_turns)
        .errors(&["sessions.turns"]),
    number("think", Workload, "Think time between turns", "s",
        real(&SessionConfig::THINK_TIME_S_RANGE, 1.0))
        .read(|c| wl(c).sessions.as_ref().map_or(String::new(), |s| num(s.think_time_s)))
        .set(|c, v| sessions_mut(c).for_each(|s| s.think_time_s = v))
        .when(When::Inside(has_sessions, NO_SESSIONS))
        .errors(&["think_time_s"])
        .context("turns=4"),
    // The engine bounds it above only.
    number("system_prompt", Workload, "Shared system prompt", "tokens",
        Range { integer: true, min: Bound::Lab(0.0), max: Bound::Engine(MAX_LEN as f64) })
        .read(|c| wl(c).sessions.as_ref().map_or(String::new(), |s| s.system_prompt_len.to_string()))
        .set(|c, v| sessions_mut(c).for_each(|s| s.system_prompt_len = v as u32))
        .when(When::Inside(has_sessions, NO_SESSIONS))
        .errors(&["system_prompt_len"])
        .context("turns=4"),
    number("tenants", Workload, "Tenants", "", whole(&WorkloadConfig::TENANTS_RANGE))
        .read(|c| wl(c).tenants.to_string())
        .set(|c, v| c.traffic.iter_mut().for_each(|s| s.workload.tenants = v as u32))
        .errors(&["tenants"]),
    number("seed", Workload, "Seed", "", lab(true, 0.0, 4_294_967_295.0))
        .read(|c| c.seed.to_string())
        .set(set_seed),
    choice("model", Replica, "Model", |_| models().into_iter().map(|m| (m.id, m.name)).collect())
        .read(|c| rc(c).deployment.model.id.clone())
        .pick(|c, t| set_deployment(c, Some(t), None, 0))
        .errors(&["deployment"]),
    choice("gpu", Replica, "GPU", |_| gpus().into_iter().map(|g| (g.id, g.name)).collect())
        .read(|c| rc(c).deployment.gpu.id.clone())
        .pick(|c, t| set_deployment(c, None, Some(t), 0)),
    choice("tp", Replica, "Tensor parallelism", |_| pairs(&[("1", "1"), ("2", "2"), ("4", "4"), ("8", "8")]))
        .unit("GPUs")
        .read(|c| rc(c).deployment.tp.to_string())
        .pick(|c, t| {
            let tp = t.parse().map_err(|_| "must be 1, 2, 4 or 8".to_string())?;
            set_deployment(c, None, None, tp)
        })
        .errors(&["deployment.tp"]),
    number("budget", Replica, "Token budget per step", "tokens",
        whole(&SchedulerConfig::MAX_NUM_BATCHED_TOKENS_RANGE))
        .read(|c| rc(c).scheduler.max_num_batched_tokens.to_string())
        .set(|c, v| rc_mut(c).scheduler.max_num_batched_tokens = v as u32)
        .errors(&["max_num_batched_tokens"]),
    number("max_seqs", Replica, "Max sequences per step", "seqs",
        whole(&SchedulerConfig::MAX_NUM_SEQS_RANGE))
        .read(|c| rc(c).scheduler.max_num_seqs.to_string())
        .set(|c, v| rc_mut(c).scheduler.max_num_seqs = v as u32)
        .errors(&["max_num_seqs"]),
    number("mem_util", Replica, "GPU memory utilisation", "%",
        real(&MemoryConfig::GPU_MEMORY_UTILIZATION_RANGE, 100.0))
        .read(|c| num(rc(c).memory.gpu_memory_utilization * 100.0))
        .set(|c, v| rc_mut(c).memory.gpu_memory_utilization = v / 100.0)
        .errors(&["gpu_memory_utilization", "memory"])
        // The least leaves room for the weights of a model split over large GPUs only.
        .context("gpu=b200&tp=8"),
    toggle("prefix_cache", Replica, "Prefix caching")
        .read(|c| on_off(rc(c).scheduler.enable_prefix_caching))
        .switch(|c, on| rc_mut(c).scheduler.enable_prefix_caching = on),
    toggle("chunked", Replica, "Chunked prefill")
        .read(|c| on_off(rc(c).scheduler.chunked_prefill))
        .switch(|c, on| rc_mut(c).scheduler.chunked_prefill = on),
    number("mfu", Replica, "MFU (prefill)", "%", real(&Efficiency::MFU_RANGE, 100.0))
        .read(|c| num(rc(c).efficiency.mfu * 100.0))
        .set(|c, v| rc_mut(c).efficiency.mfu = v / 100.0)
        .errors(&["mfu"]),
    number("mbu", Replica, "MBU (decode)", "%", real(&Efficiency::MBU_RANGE, 100.0))
        .read(|c| num(rc(c).efficiency.mbu * 100.0))
        .set(|c, v| rc_mut(c).efficiency.mbu = v / 100.0)
        .errors(&["mbu"]),
    number("step_overhead", Replica, "Fixed GPU time per step", "ms",
        real(&Efficiency::STEP_OVERHEAD_S_RANGE, 1e3))
        .read(|c| num(rc(c).efficiency.step_overhead_s * 1e3))
        .set(|c, v| rc_mut(c).efficiency.step_overhead_s = v / 1e3)
        .errors(&["step_overhead_s"]),
    number("cpu_overhead", Replica, "CPU time per step", "ms",
        real(&Efficiency::CPU_OVERHEAD_S_RANGE, 1e3))
        .read(|c| num(rc(c).efficiency.cpu_overhead_s * 1e3))
        .set(|c, v| rc_mut(c).efficiency.cpu_overhead_s = v / 1e3)
        .errors(&["cpu_overhead_s"]),
    // A pool may start empty (when it may grow), and grow to the engine's most.
    number("replicas", Fleet, "Replicas at the start", "replicas",
        Range { min: Bound::Lab(0.0), ..whole(&PoolConfig::MAX_REPLICAS_RANGE) })
        .read(|c| c.pools[0].replicas.to_string())
        .try_set(set_replicas)
        .errors(&["replicas"]),
    choice("policy", Fleet, "Router policy", policy_options)
        .read(|c| c.router.policy.name().into())
        .pick(set_policy),
    number("load_bound", Fleet, "Affinity load bound", "× mean",
        real(&RouterConfig::LOAD_BOUND_RANGE, 1.0))
        .read(|c| match c.router.policy {
            RoutingPolicy::PrefixAffinity { load_bound, .. } => num(load_bound),
            _ => String::new(),
        })
        .set(|c, v| {
            if let RoutingPolicy::PrefixAffinity { load_bound, .. } = &mut c.router.policy { *load_bound = v }
        })
        .when(When::Inside(|c| matches!(c.router.policy, RoutingPolicy::PrefixAffinity { .. }),
            Text::Fixed("only prefix affinity has one")))
        .errors(&["load_bound"])
        .context("policy=prefix_affinity"),
    number("router_ms", Fleet, "Router decision time", "ms",
        real(&RouterConfig::DECISION_S_RANGE, 1e3))
        .read(|c| num(c.router.decision_s * 1e3))
        .set(|c, v| c.router.decision_s = v / 1e3)
        .errors(&["decision_s"]),
    // Zero switches the quota off.
    number("quota", Fleet, "Quota per tenant", "tokens/min", lab(true, 0.0, 1e12))
        .read(|c| {
            let q = &c.quota;
            if q.enabled { num(q.tokens_per_window as f64 * 60.0 / q.window_s) } else { "0".into() }
        })
        .set(set_quota)
        .errors(&["quota"]),
    choice("autoscaler", Fleet, "Autoscaler", autoscaler_options)
        .read(|c| {
            let a = &c.autoscaler;
            if a.enabled { signal_name(a.signal) } else { "off" }.into()
        })
        .pick(set_autoscaler),
    // In the signal's unit, so the lab's own bounds (a utilisation is checked when written).
    number("scale_target", Fleet, "Autoscaler target", "", lab(false, 0.001, 1e9))
        .unit_of(|c| match c.autoscaler.signal {
            ScaleSignal::GpuUtilisation | ScaleSignal::KvUsage => "%",
            ScaleSignal::QueuedTokens => "tokens/replica",
            ScaleSignal::Ttft => "ms",
        })
        .read(|c| num(c.autoscaler.target * target_scale(c.autoscaler.signal)))
        .try_set(set_target)
        .when(When::If(autoscaling))
        .errors(&["autoscaler.target"])
        .context("autoscaler=queued_tokens"),
    number("min_replicas", Fleet, "Fewest replicas", "replicas",
        Range { min: Bound::Lab(0.0), ..whole(&PoolConfig::MAX_REPLICAS_RANGE) })
        .read(|c| c.pools[0].min_replicas.to_string())
        .try_set(|c, v| {
            let p = &mut c.pools[0];
            if v as u32 > p.replicas {
                return Err(format!("must be at most the replicas at the start ({})", p.replicas));
            }
            p.min_replicas = v as u32;
            Ok(())
        })
        .when(When::If(autoscaling))
        .errors(&["min_replicas"])
        .context("autoscaler=queued_tokens&replicas=4096"),
    number("max_replicas", Fleet, "Most replicas", "replicas",
        whole(&PoolConfig::MAX_REPLICAS_RANGE))
        .read(|c| c.pools[0].max_replicas.to_string())
        .try_set(|c, v| {
            let p = &mut c.pools[0];
            let least = p.replicas.max(1);
            if (v as u32) < least {
                return Err(format!("must be at least the replicas at the start ({least})"));
            }
            p.max_replicas = v as u32;
            Ok(())
        })
        .when(When::If(autoscaling))
        .errors(&["max_replicas"])
        .context("autoscaler=queued_tokens&replicas=1"),
    number("scale_delay", Fleet, "New replica ready after", "s",
        real(&AutoscalerConfig::SCALE_UP_DELAY_S_RANGE, 1.0))
        .read(|c| num(c.autoscaler.scale_up_delay_s))
        .set(|c, v| c.autoscaler.scale_up_delay_s = v)
        .when(When::If(autoscaling))
        .errors(&["scale_up_delay_s"])
        .context("autoscaler=queued_tokens"),
    choice("buffering", Fleet, "Relay buffering", buffering_options)
        .read(|c| buffering_name(&c.relay.buffering).into())
        .pick(set_buffering),
    choice("overflow", Fleet, "Overflow", overflow_options)
        .read(|c| overflow_name(&c.overflow.action).into())
        .pick(set_overflow),
    // The engine takes any count (zero: not used).
    number("overflow_waiting", Fleet, "Overflow when every replica has waiting", "requests",
        lab(true, 0.0, 1_000_000.0))
        .read(|c| c.overflow.waiting_trigger.to_string())
        .set(|c, v| c.overflow.waiting_trigger = v as u32)
        .when(When::If(|c| !matches!(c.overflow.action, OverflowAction::Queue)))
        .context("overflow=shed"),
    // The engine takes any positive target up to its most.
    number("slo_ttft", Fleet, "SLO: server TTFT", "ms",
        Range { integer: false, min: Bound::Lab(1.0), max: Bound::Engine(SloConfig::MAX_TTFT_S * 1e3) })
        .read(|c| num(c.slo.ttft_s * 1e3))
        .set(|c, v| c.slo.ttft_s = v / 1e3)
        .errors(&["slo.ttft_s"]),
    number("slo_tpot", Fleet, "SLO: time per output token", "ms",
        Range { integer: false, min: Bound::Lab(0.1), max: Bound::Engine(SloConfig::MAX_TPOT_S * 1e3) })
        .read(|c| num(c.slo.tpot_s * 1e3))
        .set(|c, v| c.slo.tpot_s = v / 1e3)
        .errors(&["slo.tpot_s"]),
];

/// The prompt's or the output's lengths, for the knobs of either.
trait Side {
    const PROMPT: bool;
}

struct Prompt;
struct Output;

impl Side for Prompt {
    const PROMPT: bool = true;
}

impl Side for Output {
    const PROMPT: bool = false;
}

fn dist<S: Side>(c: &FleetConfig) -> &LengthDist {
    let w = wl(c);
    if S::PROMPT {
        &w.prompt_len
    } else {
        &w.output_len
    }
}

/// The choice of a side's distribution.
const fn lengths<S: Side>(key: &'static str, label: &'static str) -> Spec {
    choice(key, Workload, label, |c| length_options(dist::<S>(c)))
        .read(|c| dist_kind(dist::<S>(c)).into())
        .pick(|c, t| set_dist(c, S::PROMPT, t))
}

/// A parameter of a side's distribution: the first (`A`: the constant, the least, the mean)
/// or the second (the most, the p99).
const fn length<S: Side, const A: bool>(key: &'static str) -> Spec {
    let range = whole(&LengthDist::LEN_RANGE);
    number(key, Workload, "", "tokens", range)
        .label_of(|c| label(dist::<S>(c), S::PROMPT, A))
        .read(|c| if A { dist_a } else { dist_b }(dist::<S>(c)))
        .set(|c, v| set_length(c, S::PROMPT, A, v))
        .when(When::Inside(
            |c| {
                if A {
                    !listed(dist::<S>(c))
                } else {
                    has_b(dist::<S>(c))
                }
            },
            Text::Of(|c| why_not(dist::<S>(c))),
        ))
}

/// How many knobs there are.
pub const COUNT: usize = KNOBS.len();

/// One knob: its place in [`KNOBS`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Knob(u8);

impl fmt::Debug for Knob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl Knob {
    /// Every knob, in the order they are applied and shown.
    pub const ALL: [Knob; COUNT] = {
        let mut all = [Knob(0); COUNT];
        let mut i = 0;
        while i < all.len() {
            all[i] = Knob(i as u8);
            i += 1;
        }
        all
    };

    /// The knob's entry.
    pub fn spec(self) -> &'static Spec {
        &KNOBS[self.0 as usize]
    }

    /// The knob's name in the URL and in `data-testid`s.
    pub fn key(self) -> &'static str {
        self.spec().key
    }

    /// The knob with this key.
    pub fn from_key(key: &str) -> Option<Knob> {
        Knob::ALL.into_iter().find(|k| k.key() == key)
    }

    pub fn section(self) -> Section {
        self.spec().section
    }

    /// The field's label for this configuration.
    pub fn label(self, cfg: &FleetConfig) -> &'static str {
        self.spec().label.of(cfg)
    }

    /// The unit the field is typed in ("" for choices and plain counts).
    pub fn unit(self, cfg: &FleetConfig) -> &'static str {
        self.spec().unit.of(cfg)
    }

    /// What the field takes.
    pub fn kind(self) -> Kind {
        match self.spec().field {
            Field::Number(range) => Kind::Number {
                integer: range.integer,
                min: range.min.value(),
                max: range.max.value(),
            },
            Field::Choice(_) => Kind::Choice,
            Field::Toggle => Kind::Toggle,
        }
    }

    /// Whether the knob means something for this configuration (burstiness only under
    /// gamma arrivals, and so on). The panel shows the others disabled.
    pub fn applies(self, cfg: &FleetConfig) -> bool {
        match self.spec().when {
            When::Always => true,
            When::If(f) | When::Inside(f, _) => f(cfg),
        }
    }

    /// The options of a choice or toggle, as (value, label), for this configuration (an
    /// option that only a scenario file can set is listed while the file sets it).
    pub fn options(self, cfg: &FleetConfig) -> Vec<(String, String)> {
        match self.spec().field {
            Field::Number(_) => Vec::new(),
            Field::Choice(options) => options(cfg),
            Field::Toggle => pairs(&[("on", "on"), ("off", "off")]),
        }
    }

    /// The field's text for this configuration.
    pub fn get(self, cfg: &FleetConfig) -> String {
        (self.spec().read)(cfg)
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
        let spec = self.spec();
        if let When::Inside(applies, why) = spec.when {
            if !applies(cfg) {
                let label = self.label(cfg);
                return Err(format!("{label} does not apply here: {}", why.of(cfg)));
            }
        }
        if let Field::Number(r) = spec.field {
            let (min, max) = (r.min.value(), r.max.value());
            let v = parse_number(text, r.integer, min, max, self.unit(cfg))?;
            return self.write_number(cfg, v);
        }
        let options = self.options(cfg);
        if !options.iter().any(|(v, _)| v == text) {
            let names: Vec<String> = options.into_iter().map(|(v, _)| v).collect();
            return Err(format!("must be one of {}, got {text:?}", names.join(", ")));
        }
        match spec.write {
            Write::Pick(write) => write(cfg, text),
            Write::Switch(write) => {
                write(cfg, text == "on");
                Ok(())
            }
            Write::Set(_) | Write::TrySet(_) => Err(MISMATCH.into()),
        }
    }

    /// Writes a number knob's value, unchecked against its range (the table's test writes
    /// just beyond it).
    fn write_number(self, cfg: &mut FleetConfig, v: f64) -> Result<(), String> {
        match self.spec().write {
            Write::Set(write) => {
                write(cfg, v);
                Ok(())
            }
            Write::TrySet(write) => write(cfg, v),
            Write::Pick(_) | Write::Switch(_) => Err(MISMATCH.into()),
        }
    }

    /// The knob whose field a validation error belongs to, from the error's field path
    /// (`traffic[0].workload.arrival.rate`, `pools[0].replica.scheduler.max_num_seqs`, ...):
    /// the knob with the longest part of the path in its [`Spec::errors`].
    pub fn for_error_field(field: &str) -> Option<Knob> {
        Knob::ALL
            .into_iter()
            .flat_map(|k| k.spec().errors.iter().map(move |p| (k, p.len(), *p)))
            .filter(|(_, _, p)| field.contains(p))
            .max_by_key(|(_, len, _)| *len)
            .map(|(k, _, _)| k)
    }
}

/// What a knob whose writer does not fit its field says (the table's test rules it out).
const MISMATCH: &str = "the lab cannot set this";

const NO_SESSIONS: Text = Text::Fixed("requests are independent; set chat turns first");

fn wl(c: &FleetConfig) -> &WorkloadConfig {
    &c.traffic[0].workload
}

fn rc(c: &FleetConfig) -> &ReplicaConfig {
    &c.pools[0].replica
}

fn rc_mut(c: &mut FleetConfig) -> &mut ReplicaConfig {
    &mut c.pools[0].replica
}

fn has_sessions(c: &FleetConfig) -> bool {
    wl(c).sessions.is_some()
}

fn autoscaling(c: &FleetConfig) -> bool {
    c.autoscaler.enabled
}

fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

/// The sessions of every source that has them.
fn sessions_mut(c: &mut FleetConfig) -> impl Iterator<Item = &mut SessionConfig> {
    c.traffic
        .iter_mut()
        .filter_map(|s| s.workload.sessions.as_mut())
}

fn set_turns(c: &mut FleetConfig, v: f64) {
    for s in &mut c.traffic {
        let w = &mut s.workload;
        if v == 0.0 {
            w.sessions = None;
        } else {
            w.sessions.get_or_insert_with(SessionConfig::default).turns = v as u32;
        }
    }
}

fn set_seed(c: &mut FleetConfig, v: f64) {
    let new = v as u64;
    let shift = new.wrapping_sub(c.seed);
    c.seed = new;
    for s in &mut c.traffic {
        s.workload.seed = s.workload.seed.wrapping_add(shift);
    }
}

fn set_replicas(c: &mut FleetConfig, v: f64) -> Result<(), String> {
    let (p, u) = (&mut c.pools[0], v as u32);
    if u == 0 && p.max_replicas == 0 {
        return Err("a fleet needs at least one replica".into());
    }
    p.replicas = u;
    // Keep the autoscaler's bounds around the starting count.
    p.min_replicas = p.min_replicas.min(u);
    p.max_replicas = p.max_replicas.max(u).max(1);
    Ok(())
}

fn set_quota(c: &mut FleetConfig, v: f64) {
    let q = &mut c.quota;
    q.enabled = v != 0.0;
    if q.enabled {
        q.window_s = 60.0;
        q.tokens_per_window = v as u64;
    }
}

fn policy_options(_: &FleetConfig) -> Vec<(String, String)> {
    pairs(&[
        ("round_robin", "round-robin"),
        ("random", "random"),
        ("least_outstanding", "fewest outstanding requests"),
        ("power_of_two", "fewer requests of two random replicas"),
        ("least_queued_tokens", "fewest queued prompt tokens"),
        ("kv_aware", "lowest KV usage"),
        ("prefix_affinity", "prefix affinity (bounded load)"),
    ])
}

fn autoscaler_options(_: &FleetConfig) -> Vec<(String, String)> {
    pairs(&[
        ("off", "off"),
        ("gpu_utilisation", "on GPU utilisation"),
        ("queued_tokens", "on queued prompt tokens"),
        ("kv_usage", "on KV usage"),
        ("ttft", "on server TTFT"),
    ])
}

fn set_target(c: &mut FleetConfig, v: f64) -> Result<(), String> {
    let a = &mut c.autoscaler;
    let fraction = matches!(a.signal, ScaleSignal::GpuUtilisation | ScaleSignal::KvUsage);
    if fraction && v > 100.0 {
        return Err("must be at most 100 %".into());
    }
    a.target = v / target_scale(a.signal);
    Ok(())
}

fn buffering_options(_: &FleetConfig) -> Vec<(String, String)> {
    pairs(&[
        ("off", "none (flush every event)"),
        ("proxy", "proxy buffering (4 KiB)"),
        ("gzip", "gzip on the stream"),
        ("coalescing_lb", "coalescing load balancer (100 ms)"),
    ])
}

fn buffering_name(b: &Buffering) -> &'static str {
    match b {
        Buffering::Off => "off",
        Buffering::Proxy { .. } => "proxy",
        Buffering::Gzip { .. } => "gzip",
        Buffering::CoalescingLb { .. } => "coalescing_lb",
    }
}

fn set_buffering(c: &mut FleetConfig, text: &str) -> Result<(), String> {
    c.relay.buffering = match text {
        "proxy" => Buffering::Proxy { buffer_bytes: 4096 },
        "gzip" => Buffering::Gzip {
            flush_bytes: 1024,
            ratio: 6.0,
        },
        "coalescing_lb" => Buffering::CoalescingLb { interval_s: 0.1 },
        _ => Buffering::Off,
    };
    Ok(())
}

fn overflow_name(a: &OverflowAction) -> &'static str {
    match a {
        OverflowAction::Queue => "queue",
        OverflowAction::Shed { .. } => "shed",
        OverflowAction::Hosted(_) => "hosted",
        OverflowAction::SpillToPool { .. } => "pool",
    }
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(v, l)| (v.to_string(), l.to_string()))
        .collect()
}

fn rate_of(a: &Arrival) -> Option<f64> {
    match a {
        Arrival::Poisson { rate } | Arrival::Constant { rate } | Arrival::Gamma { rate, .. } => {
            Some(*rate)
        }
        Arrival::Trace { .. } => None,
    }
}

fn rate_mut(a: &mut Arrival) -> Option<&mut f64> {
    match a {
        Arrival::Poisson { rate } | Arrival::Constant { rate } | Arrival::Gamma { rate, .. } => {
            Some(rate)
        }
        Arrival::Trace { .. } => None,
    }
}

fn arrival_name(a: &Arrival) -> &'static str {
    match a {
        Arrival::Poisson { .. } => "poisson",
        Arrival::Constant { .. } => "constant",
        Arrival::Gamma { .. } => "gamma",
        Arrival::Trace { .. } => "trace",
    }
}

fn arrival_options(c: &FleetConfig) -> Vec<(String, String)> {
    let mut v = pairs(&[
        ("poisson", "Poisson"),
        ("constant", "evenly spaced"),
        ("gamma", "bursty (gamma)"),
    ]);
    if matches!(wl(c).arrival, Arrival::Trace { .. }) {
        v.push(("trace".into(), "the file's arrival times".into()));
    }
    v
}

fn set_arrival(c: &mut FleetConfig, text: &str) -> Result<(), String> {
    for s in &mut c.traffic {
        let rate = match (&s.workload.arrival, text) {
            (Arrival::Trace { .. }, "trace") => continue,
            (Arrival::Trace { times }, _) => {
                (times.len() as f64 / s.workload.duration_s.max(1e-9)).max(0.001)
            }
            (a, _) => rate_of(a).unwrap_or(1.0),
        };
        s.workload.arrival = match text {
            "poisson" => Arrival::Poisson { rate },
            "constant" => Arrival::Constant { rate },
            "gamma" => Arrival::Gamma { rate, cv: 2.0 },
            _ => continue,
        };
    }
    Ok(())
}

fn set_duration(c: &mut FleetConfig, v: f64) -> Result<(), String> {
    let old = c.horizon();
    if let Some(s) = c.traffic.iter().find(|s| s.start_s >= v) {
        return Err(format!(
            "a source of this scenario starts at {} s; the traffic must run past it",
            num(s.start_s)
        ));
    }
    for s in &mut c.traffic {
        let end = s.start_s + s.workload.duration_s;
        if end >= old || end > v {
            s.workload.duration_s = v - s.start_s;
        }
    }
    Ok(())
}

fn listed(d: &LengthDist) -> bool {
    matches!(
        d,
        LengthDist::Empirical { .. } | LengthDist::Sequence { .. }
    )
}

fn has_b(d: &LengthDist) -> bool {
    matches!(d, LengthDist::Uniform { .. } | LengthDist::LogNormal { .. })
}

fn why_not(d: &LengthDist) -> &'static str {
    if listed(d) {
        "the lengths come from the file's list; pick a distribution first"
    } else {
        "every length is the same; pick uniform or lognormal first"
    }
}

/// The label of a parameter of the prompt's (or the output's) lengths: the first (`a`) or
/// the second.
fn label(d: &LengthDist, prompt: bool, a: bool) -> &'static str {
    let uniform = matches!(d, LengthDist::Uniform { .. });
    let lognormal = matches!(d, LengthDist::LogNormal { .. });
    match (prompt, a, uniform, lognormal) {
        (true, true, true, _) => "Prompt, fewest",
        (true, true, _, true) => "Prompt, mean",
        (true, true, _, _) => "Prompt length",
        (true, false, true, _) => "Prompt, most",
        (true, false, _, _) => "Prompt, p99",
        (false, true, true, _) => "Output, fewest",
        (false, true, _, true) => "Output, mean",
        (false, true, _, _) => "Output length",
        (false, false, true, _) => "Output, most",
        (false, false, _, _) => "Output, p99",
    }
}

fn length_options(d: &LengthDist) -> Vec<(String, String)> {
    let mut v = pairs(&[
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
}

/// The prompt's (or the output's) lengths of every source.
fn lengths_mut(c: &mut FleetConfig, prompt: bool) -> impl Iterator<Item = &mut LengthDist> {
    c.traffic.iter_mut().map(move |s| {
        let w = &mut s.workload;
        if prompt {
            &mut w.prompt_len
        } else {
            &mut w.output_len
        }
    })
}

fn set_dist(c: &mut FleetConfig, prompt: bool, text: &str) -> Result<(), String> {
    for d in lengths_mut(c, prompt) {
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
    Ok(())
}

/// Sets the first (`a`) or second parameter of the prompt's or the output's lengths.
fn set_length(c: &mut FleetConfig, prompt: bool, a: bool, v: f64) {
    let u = v as u32;
    for d in lengths_mut(c, prompt) {
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

/// Changes the model, the GPU or the tensor parallelism (`tp` when not 0) of the first pool.
fn set_deployment(
    c: &mut FleetConfig,
    model: Option<&str>,
    gpu: Option<&str>,
    tp: u32,
) -> Result<(), String> {
    let r = rc_mut(c);
    let d = &r.deployment;
    let tp = if tp == 0 { d.tp } else { tp };
    let model = model.unwrap_or(&d.model.id).to_string();
    let gpu = gpu.unwrap_or(&d.gpu.id).to_string();
    r.deployment = Deployment::from_ids(&model, &gpu, tp, d.weight_dtype, d.kv_dtype)
        .map_err(|e| e.message)?;
    Ok(())
}

fn set_policy(c: &mut FleetConfig, text: &str) -> Result<(), String> {
    c.router.policy = match text {
        "round_robin" => RoutingPolicy::RoundRobin,
        "random" => RoutingPolicy::Random,
        "least_outstanding" => RoutingPolicy::LeastOutstanding,
        "power_of_two" => RoutingPolicy::PowerOfTwo,
        "least_queued_tokens" => RoutingPolicy::LeastQueuedTokens,
        "kv_aware" => RoutingPolicy::KvAware,
        _ => match c.router.policy {
            p @ RoutingPolicy::PrefixAffinity { .. } => p,
            _ => RoutingPolicy::prefix_affinity(1.25),
        },
    };
    Ok(())
}

fn signal_name(s: ScaleSignal) -> &'static str {
    match s {
        ScaleSignal::GpuUtilisation => "gpu_utilisation",
        ScaleSignal::QueuedTokens => "queued_tokens",
        ScaleSignal::KvUsage => "kv_usage",
        ScaleSignal::Ttft => "ttft",
    }
}

/// The autoscaler's target as the field shows it, per unit of the engine's.
fn target_scale(s: ScaleSignal) -> f64 {
    match s {
        ScaleSignal::GpuUtilisation | ScaleSignal::KvUsage => 100.0,
        ScaleSignal::QueuedTokens => 1.0,
        ScaleSignal::Ttft => 1e3,
    }
}

fn set_autoscaler(c: &mut FleetConfig, text: &str) -> Result<(), String> {
    let a = &mut c.autoscaler;
    if text == "off" {
        a.enabled = false;
        return Ok(());
    }
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
            ScaleSignal::Ttft => c.slo.ttft_s / 2.0,
        };
    }
    a.enabled = true;
    a.pool = 0;
    a.signal = signal;
    let p = &mut c.pools[0];
    if p.max_replicas <= p.replicas {
        let most = *PoolConfig::MAX_REPLICAS_RANGE.end();
        p.max_replicas = (p.replicas * 4).clamp(1, most.max(p.replicas));
    }
    Ok(())
}

fn overflow_options(c: &FleetConfig) -> Vec<(String, String)> {
    let mut v = pairs(&[
        ("queue", "queue on the fleet"),
        ("shed", "shed with 429"),
        ("hosted", "spill to a hosted API"),
    ]);
    if let OverflowAction::SpillToPool { pool } = c.overflow.action {
        v.push(("pool".into(), format!("spill to pool {pool}")));
    }
    v
}

fn set_overflow(c: &mut FleetConfig, text: &str) -> Result<(), String> {
    let o = &mut c.overflow;
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
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::Setup;

    /// The seed set-up with the knob's context applied: the knob applies there.
    fn at(k: Knob) -> FleetConfig {
        let s = Setup::from_query(k.spec().context);
        assert!(s.errors.is_empty(), "{k:?}'s context: {:?}", s.errors);
        assert!(k.applies(&s.config), "{k:?} does not apply in its context");
        s.config
    }

    /// Sets the knob from `text` on `cfg`, checks the fleet is valid and reads `text` back.
    fn write_read(k: Knob, cfg: &FleetConfig, text: &str, validate: bool) {
        let mut c = cfg.clone();
        k.set(&mut c, text)
            .unwrap_or_else(|e| panic!("{k:?} = {text}: {e}"));
        if validate {
            c.validate()
                .unwrap_or_else(|e| panic!("{k:?} = {text} is refused by the engine: {e}"));
        }
        assert_eq!(k.get(&c), text, "{k:?} reads back what was written");
    }

    /// Walks the table against the engine's validators: both ends of every number's range
    /// validate, and just beyond an end that is the engine's, the lab or the engine refuses
    /// (so the lab takes neither more nor, unless it says so with [`Bound::Lab`], less).
    #[test]
    fn every_number_knob_takes_the_engines_range() {
        let mut checked = 0;
        for k in Knob::ALL {
            let Field::Number(range) = k.spec().field else {
                continue;
            };
            let cfg = at(k);
            for (bound, below) in [(range.min, true), (range.max, false)] {
                write_read(k, &cfg, &num(bound.value()), true);
                let Bound::Engine(v) = bound else {
                    continue;
                };
                let step = if range.integer {
                    1.0
                } else {
                    (v.abs() * 1e-6).max(1e-9)
                };
                let beyond = if below { v - step } else { v + step };
                let mut c = cfg.clone();
                let refused = k.write_number(&mut c, beyond).is_err() || c.validate().is_err();
                assert!(
                    refused,
                    "{k:?}: {beyond} is beyond the lab's bound {v} but the engine takes it"
                );
                checked += 1;
            }
        }
        assert!(checked >= 25, "only {checked} engine bounds checked");
    }

    /// Every knob reads back what it wrote: each option of a choice or toggle, and the middle
    /// of a number's range.
    #[test]
    fn every_knob_reads_back_what_it_writes() {
        for k in Knob::ALL {
            let cfg = at(k);
            match k.kind() {
                Kind::Number { integer, min, max } => {
                    let mid = if integer {
                        ((min + max) / 2.0).round()
                    } else {
                        min + (max - min) / 3.0
                    };
                    write_read(k, &cfg, &num(mid), false);
                }
                Kind::Choice | Kind::Toggle => {
                    let options = k.options(&cfg);
                    assert!(options.len() >= 2, "{k:?} has {options:?}");
                    for (v, _) in options {
                        write_read(k, &cfg, &v, false);
                    }
                }
            }
        }
    }

    #[test]
    fn the_table_has_one_entry_a_key_and_one_owner_a_error_field() {
        for (i, k) in Knob::ALL.into_iter().enumerate() {
            assert_eq!(Knob::from_key(k.key()), Some(k));
            assert_eq!(k.key(), KNOBS[i].key);
            for p in k.spec().errors {
                assert_eq!(Knob::for_error_field(p), Some(k), "{p}");
            }
        }
        let key = |f: &str| Knob::for_error_field(f).map(|k| k.key());
        for (field, want) in [
            ("traffic[0].workload.arrival.rate", "rate"),
            ("traffic[0].workload.arrival.cv", "cv"),
            ("pools[0].replica.deployment.tp", "tp"),
            ("pools[0].replica.deployment.model", "model"),
            ("pools[0].min_replicas", "min_replicas"),
            ("pools[0].replicas", "replicas"),
            ("slo.tpot_s", "slo_tpot"),
        ] {
            assert_eq!(key(field), Some(want), "{field}");
        }
        assert_eq!(key("gateway.regions"), None);
        // Choices and toggles refuse what they do not list.
        let mut cfg = FleetConfig::seed();
        let listed: Vec<Knob> = Knob::ALL
            .into_iter()
            .filter(|k| !matches!(k.kind(), Kind::Number { .. }))
            .collect();
        for k in listed {
            assert!(k.set(&mut cfg, "bogus").is_err(), "{k:?}");
        }
    }
}
