//! How the knobs read a configuration and write one back: the readers, writers and options
//! the entries of [`super::KNOBS`] name.

use super::*;

/// What a knob whose writer does not fit its field says (the table's test rules it out).
pub(super) const MISMATCH: &str = "the lab cannot set this";

pub(super) const NO_SESSIONS: Text = Text::Fixed("requests are independent; set chat turns first");

pub(super) fn wl(c: &FleetConfig) -> &WorkloadConfig {
    &c.traffic[0].workload
}

pub(super) fn rc(c: &FleetConfig) -> &ReplicaConfig {
    &c.pools[0].replica
}

pub(super) fn rc_mut(c: &mut FleetConfig) -> &mut ReplicaConfig {
    &mut c.pools[0].replica
}

pub(super) fn has_sessions(c: &FleetConfig) -> bool {
    wl(c).sessions.is_some()
}

pub(super) fn autoscaling(c: &FleetConfig) -> bool {
    c.autoscaler.enabled
}

pub(super) fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

/// The sessions of every source that has them.
pub(super) fn sessions_mut(c: &mut FleetConfig) -> impl Iterator<Item = &mut SessionConfig> {
    c.traffic
        .iter_mut()
        .filter_map(|s| s.workload.sessions.as_mut())
}

pub(super) fn set_turns(c: &mut FleetConfig, v: f64) {
    for s in &mut c.traffic {
        let w = &mut s.workload;
        if v == 0.0 {
            w.sessions = None;
        } else {
            w.sessions.get_or_insert_with(SessionConfig::default).turns = v as u32;
        }
    }
}

pub(super) fn set_seed(c: &mut FleetConfig, v: f64) {
    let new = v as u64;
    let shift = new.wrapping_sub(c.seed);
    c.seed = new;
    for s in &mut c.traffic {
        s.workload.seed = s.workload.seed.wrapping_add(shift);
    }
}

pub(super) fn set_replicas(c: &mut FleetConfig, v: f64) -> Result<(), String> {
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

/// The decode pool of a split fleet.
pub(super) fn decode_pool(c: &FleetConfig) -> Option<&PoolConfig> {
    c.pools.iter().find(|p| p.role == PoolRole::Decode)
}

/// Splits the fleet: the first pool prefills, and a pool of `v` replicas like it decodes
/// (0: the first pool does both again, and the decode pools go).
pub(super) fn set_decode_replicas(c: &mut FleetConfig, v: f64) -> Result<(), String> {
    c.split_first_pool(v as u32).map_err(|e| e.message)
}

/// A split fleet's decode pools run the first pool's engine at its price (the knobs set the
/// first pool): called after every knob's write.
pub(super) fn follow_first_pool(c: &mut FleetConfig) {
    if !c.disaggregated() {
        return;
    }
    let (replica, price) = (c.pools[0].replica.clone(), c.pools[0].gpu_hour_price);
    for p in c.pools.iter_mut().filter(|p| p.role == PoolRole::Decode) {
        p.replica = replica.clone();
        p.gpu_hour_price = price;
    }
}

pub(super) fn set_quota(c: &mut FleetConfig, v: f64) {
    let q = &mut c.quota;
    q.enabled = v != 0.0;
    if q.enabled {
        q.window_s = 60.0;
        q.tokens_per_window = v as u64;
    }
}

pub(super) fn policy_options(_: &FleetConfig) -> Vec<(String, String)> {
    pairs(&[
        ("round_robin", "round-robin"),
        ("random", "random"),
        ("least_outstanding", "fewest outstanding requests"),
        ("power_of_two", "fewer requests of two random replicas"),
        ("least_queued_tokens", "fewest queued prompt tokens"),
        ("kv_aware", "lowest KV usage"),
        ("prefix_affinity", "prefix affinity (bounded load)"),
        ("adapter_affinity", "adapter affinity (bounded load)"),
    ])
}

pub(super) fn autoscaler_options(_: &FleetConfig) -> Vec<(String, String)> {
    pairs(&[
        ("off", "off"),
        ("gpu_utilisation", "on GPU utilisation"),
        ("queued_tokens", "on queued prompt tokens"),
        ("kv_usage", "on KV usage"),
        ("ttft", "on server TTFT"),
    ])
}

pub(super) fn set_target(c: &mut FleetConfig, v: f64) -> Result<(), String> {
    let a = &mut c.autoscaler;
    let fraction = matches!(a.signal, ScaleSignal::GpuUtilisation | ScaleSignal::KvUsage);
    if fraction && v > 100.0 {
        return Err("must be at most 100 %".into());
    }
    a.target = v / target_scale(a.signal);
    Ok(())
}

pub(super) fn buffering_options(_: &FleetConfig) -> Vec<(String, String)> {
    pairs(&[
        ("off", "none (flush every event)"),
        ("proxy", "proxy buffering (4 KiB)"),
        ("gzip", "gzip on the stream"),
        ("coalescing_lb", "coalescing load balancer (100 ms)"),
    ])
}

pub(super) fn buffering_name(b: &Buffering) -> &'static str {
    match b {
        Buffering::Off => "off",
        Buffering::Proxy { .. } => "proxy",
        Buffering::Gzip { .. } => "gzip",
        Buffering::CoalescingLb { .. } => "coalescing_lb",
    }
}

pub(super) fn set_buffering(c: &mut FleetConfig, text: &str) -> Result<(), String> {
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

pub(super) fn overflow_name(a: &OverflowAction) -> &'static str {
    match a {
        OverflowAction::Queue => "queue",
        OverflowAction::Shed { .. } => "shed",
        OverflowAction::Hosted(_) => "hosted",
        OverflowAction::SpillToPool { .. } => "pool",
    }
}

pub(super) fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(v, l)| (v.to_string(), l.to_string()))
        .collect()
}

pub(super) fn rate_of(a: &Arrival) -> Option<f64> {
    match a {
        Arrival::Poisson { rate } | Arrival::Constant { rate } | Arrival::Gamma { rate, .. } => {
            Some(*rate)
        }
        Arrival::Trace { .. } => None,
    }
}

pub(super) fn rate_mut(a: &mut Arrival) -> Option<&mut f64> {
    match a {
        Arrival::Poisson { rate } | Arrival::Constant { rate } | Arrival::Gamma { rate, .. } => {
            Some(rate)
        }
        Arrival::Trace { .. } => None,
    }
}

pub(super) fn arrival_name(a: &Arrival) -> &'static str {
    match a {
        Arrival::Poisson { .. } => "poisson",
        Arrival::Constant { .. } => "constant",
        Arrival::Gamma { .. } => "gamma",
        Arrival::Trace { .. } => "trace",
    }
}

pub(super) fn arrival_options(c: &FleetConfig) -> Vec<(String, String)> {
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

pub(super) fn set_arrival(c: &mut FleetConfig, text: &str) -> Result<(), String> {
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

pub(super) fn set_duration(c: &mut FleetConfig, v: f64) -> Result<(), String> {
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

pub(super) fn listed(d: &LengthDist) -> bool {
    matches!(
        d,
        LengthDist::Empirical { .. } | LengthDist::Sequence { .. }
    )
}

pub(super) fn has_b(d: &LengthDist) -> bool {
    matches!(d, LengthDist::Uniform { .. } | LengthDist::LogNormal { .. })
}

pub(super) fn why_not(d: &LengthDist) -> &'static str {
    if listed(d) {
        "the lengths come from the file's list; pick a distribution first"
    } else {
        "every length is the same; pick uniform or lognormal first"
    }
}

/// The label of a parameter of the prompt's (or the output's) lengths: the first (`a`) or
/// the second.
pub(super) fn label(d: &LengthDist, prompt: bool, a: bool) -> &'static str {
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

pub(super) fn length_options(d: &LengthDist) -> Vec<(String, String)> {
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
pub(super) fn lengths_mut(
    c: &mut FleetConfig,
    prompt: bool,
) -> impl Iterator<Item = &mut LengthDist> {
    c.traffic.iter_mut().map(move |s| {
        let w = &mut s.workload;
        if prompt {
            &mut w.prompt_len
        } else {
            &mut w.output_len
        }
    })
}

pub(super) fn set_dist(c: &mut FleetConfig, prompt: bool, text: &str) -> Result<(), String> {
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
pub(super) fn set_length(c: &mut FleetConfig, prompt: bool, a: bool, v: f64) {
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
pub(super) fn set_deployment(
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
    let activations = d.activation_dtype;
    r.deployment = Deployment::from_ids(&model, &gpu, tp, d.weight_dtype, d.kv_dtype)
        .map_err(|e| e.message)?;
    r.deployment.activation_dtype = activations;
    Ok(())
}

/// Sets how the first pool's linear layers are stored and run (a [`WeightFormat`] id).
pub(super) fn set_weights(c: &mut FleetConfig, id: &str) -> Result<(), String> {
    let f = WeightFormat::from_name(id).ok_or_else(|| format!("no weight format \"{id}\""))?;
    let r = rc_mut(c);
    r.deployment = r.deployment.clone().with_weight_format(f);
    Ok(())
}

/// Sets the first pool's KV cache format (a [`Dtype`] id).
pub(super) fn set_kv_format(c: &mut FleetConfig, id: &str) -> Result<(), String> {
    rc_mut(c).deployment.kv_dtype =
        Dtype::from_name(id).ok_or_else(|| format!("no format \"{id}\""))?;
    Ok(())
}

/// The choices of [`set_weights`]: every weight format, by id and label.
pub(super) fn weight_options(_: &FleetConfig) -> Vec<(String, String)> {
    WeightFormat::ALL
        .iter()
        .map(|f| (f.name().into(), f.label().into()))
        .collect()
}

/// The choices of [`set_kv_format`].
pub(super) fn kv_options(_: &FleetConfig) -> Vec<(String, String)> {
    Dtype::ALL
        .iter()
        .map(|d| (d.name().into(), d.label().into()))
        .collect()
}

pub(super) fn set_policy(c: &mut FleetConfig, text: &str) -> Result<(), String> {
    c.router.policy = match text {
        "round_robin" => RoutingPolicy::RoundRobin,
        "random" => RoutingPolicy::Random,
        "least_outstanding" => RoutingPolicy::LeastOutstanding,
        "power_of_two" => RoutingPolicy::PowerOfTwo,
        "least_queued_tokens" => RoutingPolicy::LeastQueuedTokens,
        "kv_aware" => RoutingPolicy::KvAware,
        "adapter_affinity" => match c.router.policy {
            p @ RoutingPolicy::AdapterAffinity { .. } => p,
            _ => RoutingPolicy::adapter_affinity(1.5),
        },
        _ => match c.router.policy {
            p @ RoutingPolicy::PrefixAffinity { .. } => p,
            _ => RoutingPolicy::prefix_affinity(1.25),
        },
    };
    Ok(())
}

pub(super) fn signal_name(s: ScaleSignal) -> &'static str {
    match s {
        ScaleSignal::GpuUtilisation => "gpu_utilisation",
        ScaleSignal::QueuedTokens => "queued_tokens",
        ScaleSignal::KvUsage => "kv_usage",
        ScaleSignal::Ttft => "ttft",
    }
}

/// The autoscaler's target as the field shows it, per unit of the engine's.
pub(super) fn target_scale(s: ScaleSignal) -> f64 {
    match s {
        ScaleSignal::GpuUtilisation | ScaleSignal::KvUsage => 100.0,
        ScaleSignal::QueuedTokens => 1.0,
        ScaleSignal::Ttft => 1e3,
    }
}

pub(super) fn set_autoscaler(c: &mut FleetConfig, text: &str) -> Result<(), String> {
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
        p.max_replicas = (p.replicas * 4).clamp(1, MAX_LAB_REPLICAS.max(p.replicas));
    }
    Ok(())
}

pub(super) fn overflow_options(c: &FleetConfig) -> Vec<(String, String)> {
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

pub(super) fn set_overflow(c: &mut FleetConfig, text: &str) -> Result<(), String> {
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

pub(super) fn dist_kind(d: &LengthDist) -> &'static str {
    match d {
        LengthDist::Constant { .. } => "constant",
        LengthDist::Uniform { .. } => "uniform",
        LengthDist::LogNormal { .. } => "log_normal",
        LengthDist::Empirical { .. } => "empirical",
        LengthDist::Sequence { .. } => "sequence",
    }
}

pub(super) fn dist_a(d: &LengthDist) -> String {
    match d {
        LengthDist::Constant { value } => value.to_string(),
        LengthDist::Uniform { min, .. } => min.to_string(),
        LengthDist::LogNormal { mean, .. } => num(*mean),
        _ => String::new(),
    }
}

pub(super) fn dist_b(d: &LengthDist) -> String {
    match d {
        LengthDist::Uniform { max, .. } => max.to_string(),
        LengthDist::LogNormal { p99, .. } => num(*p99),
        _ => String::new(),
    }
}

pub(super) fn dist_mean(d: &LengthDist) -> f64 {
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

/// The speculative-decoding choices: off, or a proposer (n-gram lookup, an EAGLE-style head,
/// or each catalog draft model).
pub(super) fn spec_options(_: &FleetConfig) -> Vec<(String, String)> {
    let mut out = pairs(&[
        ("off", "Off"),
        ("ngram", "N-gram lookup (prompt copy)"),
        ("eagle", "EAGLE-style head"),
    ]);
    for m in draft_models() {
        out.push((
            format!("draft:{}", m.id),
            format!("Draft model: {}", m.name),
        ));
    }
    out
}

/// The first pool's proposer as [`spec_options`] names it.
pub(super) fn spec_name(c: &FleetConfig) -> String {
    match rc(c).speculative.as_ref().map(|s| &s.method) {
        None => "off".into(),
        Some(SpecMethod::Ngram) => "ngram".into(),
        Some(SpecMethod::Eagle) => "eagle".into(),
        Some(SpecMethod::DraftModel { model }) => format!("draft:{model}"),
    }
}

/// Guesses per step and acceptance rate when speculation is switched on from off.
const SPEC_DEFAULT_TOKENS: u32 = 3;
const SPEC_DEFAULT_ACCEPTANCE: f64 = 0.6;

/// Switches the first pool's speculative decoding off or to a proposer, keeping the guesses
/// per step and the acceptance rate already set.
pub(super) fn set_spec(c: &mut FleetConfig, id: &str) -> Result<(), String> {
    let method = match id {
        "off" => {
            rc_mut(c).speculative = None;
            return Ok(());
        }
        "ngram" => SpecMethod::Ngram,
        "eagle" => SpecMethod::Eagle,
        _ => match id.strip_prefix("draft:") {
            Some(m) if draft_models().iter().any(|d| d.id == m) => SpecMethod::DraftModel {
                model: m.to_string(),
            },
            _ => return Err(format!("no proposer \"{id}\"")),
        },
    };
    let r = rc_mut(c);
    let (k, a, off) =
        r.speculative
            .as_ref()
            .map_or((SPEC_DEFAULT_TOKENS, SPEC_DEFAULT_ACCEPTANCE, None), |s| {
                (
                    s.num_speculative_tokens,
                    s.acceptance_rate,
                    s.disable_by_batch_size,
                )
            });
    r.speculative = Some(SpeculativeConfig {
        method,
        num_speculative_tokens: k,
        acceptance_rate: a,
        disable_by_batch_size: off,
    });
    Ok(())
}

/// Adapters per step on the first pool: 0 serves the base model alone; from 1, each tenant's
/// requests run its own adapter, with the rank already set (vLLM's 16 at first).
pub(super) fn set_max_loras(c: &mut FleetConfig, v: f64) {
    let r = rc_mut(c);
    if v < 1.0 {
        r.lora = None;
    } else {
        r.lora.get_or_insert_with(LoraConfig::default).max_loras = v as u32;
    }
}

pub(super) fn serving_adapters(c: &FleetConfig) -> bool {
    rc(c).lora.is_some()
}

pub(super) const NO_ADAPTERS: Text =
    Text::Fixed("no adapters are served; set the adapters per step first");

pub(super) fn speculating(c: &FleetConfig) -> bool {
    rc(c).speculative.is_some()
}

pub(super) const NO_SPECULATION: Text =
    Text::Fixed("speculative decoding is off; choose a proposer first");
