//! [`KNOBS`], the table: one entry a knob, in the order they are applied and shown.

use super::write::*;
use super::*;
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
    // Zero: every turn resends the whole chat. The engine bounds it above only.
    number("history_limit", Workload, "Most tokens of a chat a turn resends (0: all)", "tokens",
        Range { integer: true, min: Bound::Lab(0.0), max: Bound::Engine(MAX_LEN as f64) })
        .read(|c| wl(c).sessions.as_ref().map_or(String::new(), |s| s.history_limit.to_string()))
        .set(|c, v| sessions_mut(c).for_each(|s| s.history_limit = v as u32))
        .when(When::Inside(has_sessions, NO_SESSIONS))
        .errors(&["history_limit"])
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
    choice("weights", Replica, "Weights and matmuls", weight_options)
        .read(|c| rc(c).deployment.weight_format().name().into())
        .pick(set_weights)
        .errors(&["activation_dtype"]),
    choice("kv_format", Replica, "KV cache format", kv_options)
        .read(|c| rc(c).deployment.kv_dtype.name().into())
        .pick(set_kv_format),
    choice("spec", Replica, "Speculative decoding", spec_options)
        .read(spec_name)
        .pick(set_spec)
        .errors(&["speculative.method"]),
    number("spec_k", Replica, "Guesses per step", "tokens",
        Range { integer: true, ..real(&SpeculativeConfig::TOKENS_RANGE, 1.0) })
        .read(|c| rc(c).speculative.as_ref().map_or(String::new(), |s| s.num_speculative_tokens.to_string()))
        .set(|c, v| if let Some(s) = rc_mut(c).speculative.as_mut() { s.num_speculative_tokens = v as u32 })
        .when(When::Inside(speculating, NO_SPECULATION))
        .errors(&["num_speculative_tokens"])
        .context("spec=ngram"),
    number("spec_accept", Replica, "Acceptance rate per guess", "%",
        real(&SpeculativeConfig::ACCEPTANCE_RANGE, 100.0))
        .read(|c| rc(c).speculative.as_ref().map_or(String::new(), |s| num(s.acceptance_rate * 100.0)))
        .set(|c, v| if let Some(s) = rc_mut(c).speculative.as_mut() { s.acceptance_rate = v / 100.0 })
        .when(When::Inside(speculating, NO_SPECULATION))
        .errors(&["acceptance_rate"])
        .context("spec=ngram"),
    number("spec_off_at", Replica, "Stop guessing at this many running requests (0: never)", "requests",
        Range { integer: true, min: Bound::Lab(0.0), max: Bound::Engine(*SpeculativeConfig::DISABLE_BY_BATCH_SIZE_RANGE.end()) })
        .read(|c| rc(c).speculative.as_ref().map_or(String::new(), |s| s.disable_by_batch_size.unwrap_or(0).to_string()))
        .set(|c, v| if let Some(s) = rc_mut(c).speculative.as_mut() { s.disable_by_batch_size = (v >= 1.0).then_some(v as u32) })
        .when(When::Inside(speculating, NO_SPECULATION))
        .errors(&["disable_by_batch_size"])
        .context("spec=ngram"),
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
    number("kv_offload", Replica, "Host memory for the KV cache (0: none)", "GiB",
        real(&SchedulerConfig::KV_OFFLOADING_SIZE_RANGE, 1.0))
        .read(|c| num(rc(c).scheduler.kv_offloading_size))
        .set(|c, v| rc_mut(c).scheduler.kv_offloading_size = v)
        .errors(&["kv_offloading_size"]),
    // Zero serves the base model alone; the engine takes up to its most.
    number("max_loras", Replica, "LoRA adapters per step (0: none; each tenant has its own)", "adapters",
        Range { min: Bound::Lab(0.0), ..whole(&LoraConfig::MAX_LORAS_RANGE) })
        .read(|c| rc(c).lora.as_ref().map_or(0, |l| l.max_loras).to_string())
        .set(set_max_loras)
        .errors(&["lora", "max_loras", "max_cpu_loras"]),
    number("lora_rank", Replica, "Adapter rank", "", whole(&LoraConfig::RANK_RANGE))
        .read(|c| rc(c).lora.as_ref().map_or(String::new(), |l| l.max_lora_rank.to_string()))
        .set(|c, v| if let Some(l) = rc_mut(c).lora.as_mut() { l.max_lora_rank = v as u32 })
        .when(When::Inside(serving_adapters, NO_ADAPTERS))
        .errors(&["max_lora_rank"])
        .context("max_loras=4"),
    toggle("chunked", Replica, "Chunked prefill")
        .read(|c| on_off(rc(c).scheduler.chunked_prefill))
        .switch(|c, on| rc_mut(c).scheduler.chunked_prefill = on),
    number("mfu", Replica, "MFU (large matmuls)", "%", real(&Efficiency::MFU_RANGE, 100.0))
        .read(|c| num(rc(c).efficiency.mfu * 100.0))
        .set(|c, v| rc_mut(c).efficiency.mfu = v / 100.0)
        .errors(&["mfu"]),
    number("mfu_fp8", Replica, "MFU (FP8 matmuls, of the FP8 peak)", "%", real(&Efficiency::MFU_RANGE, 100.0))
        .read(|c| num(rc(c).efficiency.mfu_fp8 * 100.0))
        .set(|c, v| rc_mut(c).efficiency.mfu_fp8 = v / 100.0)
        .errors(&["mfu_fp8"]),
    number("gemm_half", Replica, "Small matmuls: tokens at half the MFU", "tokens",
        real(&Efficiency::GEMM_HALF_TOKENS_RANGE, 1.0))
        .read(|c| num(rc(c).efficiency.gemm_half_tokens))
        .set(|c, v| rc_mut(c).efficiency.gemm_half_tokens = v)
        .errors(&["gemm_half_tokens"]),
    number("mbu", Replica, "MBU (weights)", "%", real(&Efficiency::MBU_RANGE, 100.0))
        .read(|c| num(rc(c).efficiency.mbu * 100.0))
        .set(|c, v| rc_mut(c).efficiency.mbu = v / 100.0)
        .errors(&["mbu"]),
    number("mbu_kv", Replica, "MBU (KV cache)", "%", real(&Efficiency::MBU_RANGE, 100.0))
        .read(|c| num(rc(c).efficiency.mbu_kv * 100.0))
        .set(|c, v| rc_mut(c).efficiency.mbu_kv = v / 100.0)
        .errors(&["mbu_kv"]),
    number("step_overhead", Replica, "Fixed GPU time per step", "ms",
        real(&Efficiency::STEP_OVERHEAD_S_RANGE, 1e3))
        .read(|c| num(rc(c).efficiency.step_overhead_s * 1e3))
        .set(|c, v| rc_mut(c).efficiency.step_overhead_s = v / 1e3)
        .errors(&["step_overhead_s"]),
    number("layer_overhead", Replica, "Fixed GPU time per layer per step", "µs",
        real(&Efficiency::SMALL_OVERHEAD_S_RANGE, 1e6))
        .read(|c| num(rc(c).efficiency.layer_overhead_s * 1e6))
        .set(|c, v| rc_mut(c).efficiency.layer_overhead_s = v / 1e6)
        .errors(&["layer_overhead_s"]),
    number("seq_overhead", Replica, "GPU time per sequence per step", "µs",
        real(&Efficiency::SMALL_OVERHEAD_S_RANGE, 1e6))
        .read(|c| num(rc(c).efficiency.seq_overhead_s * 1e6))
        .set(|c, v| rc_mut(c).efficiency.seq_overhead_s = v / 1e6)
        .errors(&["seq_overhead_s"]),
    number("cpu_overhead", Replica, "CPU time per step", "ms",
        real(&Efficiency::CPU_OVERHEAD_S_RANGE, 1e3))
        .read(|c| num(rc(c).efficiency.cpu_overhead_s * 1e3))
        .set(|c, v| rc_mut(c).efficiency.cpu_overhead_s = v / 1e3)
        .errors(&["cpu_overhead_s"]),
    number("cpu_seq_overhead", Replica, "CPU time per sequence per step", "µs",
        real(&Efficiency::SMALL_OVERHEAD_S_RANGE, 1e6))
        .read(|c| num(rc(c).efficiency.cpu_seq_overhead_s * 1e6))
        .set(|c, v| rc_mut(c).efficiency.cpu_seq_overhead_s = v / 1e6)
        .errors(&["cpu_seq_overhead_s"]),
    number("cpu_admit", Replica, "CPU time per request taken in", "ms",
        real(&Efficiency::SMALL_OVERHEAD_S_RANGE, 1e3))
        .read(|c| num(rc(c).efficiency.cpu_admit_s * 1e3))
        .set(|c, v| rc_mut(c).efficiency.cpu_admit_s = v / 1e3)
        .errors(&["cpu_admit_s"]),
    // A pool may start empty (when it may grow), and grow to the engine's most.
    number("replicas", Fleet, "Replicas at the start", "replicas",
        replica_count(Bound::Lab(0.0)))
        .read(|c| c.pools[0].replicas.to_string())
        .try_set(set_replicas)
        .label_of(|c| if c.disaggregated() { "Prefill replicas at the start" } else { "Replicas at the start" })
        .errors(&["replicas"]),
    // After every knob of the first pool: a split copies it to the decode pool.
    number("decode_replicas", Fleet, "Decode replicas (0: every replica prefills and decodes)", "replicas",
        lab(true, 0.0, MAX_LAB_DECODE_REPLICAS))
        .read(|c| decode_pool(c).map_or(0, |p| p.replicas).to_string())
        .try_set(set_decode_replicas)
        .errors(&["role"]),
    choice("link", Fleet, "Link for KV caches, prefill to decode", |_| links().into_iter().map(|l| (l.id, l.name)).collect())
        .read(|c| c.disagg.link.clone())
        .pick(|c, t| { c.disagg.link = t.into(); Ok(()) })
        .when(When::If(FleetConfig::disaggregated))
        .errors(&["disagg.link"])
        .context("decode_replicas=4"),
    number("link_share", Fleet, "Share of the link's line rate a transfer reaches", "%",
        real(&DisaggConfig::LINK_SHARE_RANGE, 100.0))
        .read(|c| num(c.disagg.link_share * 100.0))
        .set(|c, v| c.disagg.link_share = v / 100.0)
        .when(When::If(FleetConfig::disaggregated))
        .errors(&["link_share"])
        .context("decode_replicas=4"),
    // The engine takes 0 to 10,000 $/h.
    number("price", Fleet, "Price per GPU-hour", "$/h", lab(false, 0.0, 10_000.0))
        .read(|c| num(c.pools[0].gpu_hour_price))
        .set(|c, v| c.pools[0].gpu_hour_price = v)
        .errors(&["gpu_hour_price"]),
    choice("policy", Fleet, "Router policy", policy_options)
        .read(|c| c.router.policy.name().into())
        .pick(set_policy),
    number("load_bound", Fleet, "Affinity load bound", "× mean",
        real(&RouterConfig::LOAD_BOUND_RANGE, 1.0))
        .read(|c| match c.router.policy {
            RoutingPolicy::PrefixAffinity { load_bound, .. }
            | RoutingPolicy::AdapterAffinity { load_bound, .. } => num(load_bound),
            _ => String::new(),
        })
        .set(|c, v| match &mut c.router.policy {
            RoutingPolicy::PrefixAffinity { load_bound, .. }
            | RoutingPolicy::AdapterAffinity { load_bound, .. } => *load_bound = v,
            _ => {}
        })
        .when(When::Inside(|c| matches!(c.router.policy,
                RoutingPolicy::PrefixAffinity { .. } | RoutingPolicy::AdapterAffinity { .. }),
            Text::Fixed("only the affinity policies have one")))
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
        replica_count(Bound::Lab(0.0)))
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
        .context("autoscaler=queued_tokens&replicas=256"),
    number("max_replicas", Fleet, "Most replicas", "replicas",
        replica_count(Bound::Engine(*PoolConfig::MAX_REPLICAS_RANGE.start() as f64)))
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
    number("leave", Fleet, "Clients who leave before their reply ends", "%",
        real(&ClientConfig::ABANDON_FRACTION_RANGE, 100.0))
        .read(|c| num(c.clients.abandon_fraction * 100.0))
        .set(|c, v| c.clients.abandon_fraction = v / 100.0)
        .errors(&["abandon_fraction"]),
    number("leave_after", Fleet, "They stay, on average, for", "s",
        real(&ClientConfig::ABANDON_AFTER_S_RANGE, 1.0))
        .read(|c| num(c.clients.abandon_after_s))
        .set(|c, v| c.clients.abandon_after_s = v)
        .when(When::If(|c| c.clients.abandon_fraction > 0.0))
        .errors(&["abandon_after_s"])
        .context("leave=30"),
    toggle("abort", Fleet, "Engine drops a departed client's request")
        .read(|c| on_off(c.gateway.abort_on_disconnect))
        .switch(|c, on| c.gateway.abort_on_disconnect = on),
    // Zero: no replica fails. The lab fails the first one; a file may name others.
    number("fail_at", Fleet, "Replica 0 fails at (0: never)", "s", lab(false, 0.0, MAX_LAB_DURATION))
        .read(|c| num(c.faults.first().map_or(0.0, |f| f.at_s)))
        .set(|c, v| c.faults = if v > 0.0 { vec![ReplicaFault { at_s: v, replica: 0 }] } else { Vec::new() })
        .when(When::Inside(|c| c.faults.len() <= 1 && c.faults.iter().all(|f| f.replica == 0),
            Text::Fixed("the file names its own faults")))
        .errors(&["faults"]),
    number("retries", Fleet, "Gateway retries when a replica fails", "times",
        Range { min: Bound::Lab(0.0), ..whole(&GatewayConfig::RETRIES_RANGE) })
        .read(|c| c.gateway.retries.to_string())
        .set(|c, v| c.gateway.retries = v as u32)
        .when(When::If(|c| !c.faults.is_empty()))
        .errors(&["retries"])
        .context("fail_at=30"),
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
