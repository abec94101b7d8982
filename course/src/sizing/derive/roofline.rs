//! The `roofline` question: why decode is memory-bound and prefill compute-bound (arithmetic
//! intensity against the GPU's ridge point), the weight-read floor of a decode step, the batch
//! at which decode would turn compute-bound, the largest batch the per-token target and the
//! KV pool allow, and why the streaming fleet still needs the replicas the seed question found.
//! Every intensity and time is the cost model's ([`CostModel::step_flops`],
//! [`CostModel::step_bytes`], [`CostModel::ridge_point`], [`CostModel::decode_step`]).

use super::*;
use trainer_engine::cost::BatchItem;

/// The largest batch any search here considers (the calculator's own cap on a batch input).
const MAX_BATCH: u32 = 16_384;

/// The figures the roofline plot draws, from the same cost model as the steps.
#[derive(Clone, Debug, PartialEq)]
pub struct Roofline {
    /// Sustained FLOP/s of the replica (the flat roof), FLOP/s.
    pub roof_flops: f64,
    /// Sustained bytes/s (the slope of the memory roof), B/s.
    pub bandwidth: f64,
    /// The ridge point, FLOP/B.
    pub ridge: f64,
    /// One prompt prefilled in one step: (intensity FLOP/B, attained FLOP/s).
    pub prefill: (f64, f64),
    /// Decode at the assumed batch: (batch, intensity, attained FLOP/s).
    pub assumed: (u32, f64, f64),
    /// Decode at the largest batch the target and the pool allow (batch, intensity, attained).
    pub largest: (u32, f64, f64),
    /// Decode at growing batches up to the pool's: (batch, intensity, attained FLOP/s).
    pub decode: Vec<(u32, f64, f64)>,
    /// Where decode's intensity levels off as the batch grows, FLOP/B.
    pub decode_limit: f64,
    /// The batch at which decode turns compute-bound, if the KV pool holds one.
    pub crossing: Option<u32>,
}

/// A step's intensity and the FLOP/s it attains (its FLOPs over its time).
fn point(cost: &CostModel, t: &BatchTotals) -> (f64, f64) {
    let sc = cost.step_totals(t);
    let attained = if sc.total_s > 0.0 {
        cost.step_flops(t) / sc.total_s
    } else {
        0.0
    };
    (cost.step_intensity(t), attained)
}

/// One prompt of `tokens` prefilled in a single step.
fn prompt_totals(tokens: u32) -> BatchTotals {
    BatchTotals::of(&[BatchItem {
        new_tokens: tokens,
        context_len: tokens,
    }])
}

/// The batches that fit the per-token target and the pool at `context` (the smaller is the
/// largest batch): (target's, pool's).
fn batch_limits(c: &Ctx, context: u32, tpot: f64) -> (u32, u32) {
    let pool = c.cost.kv_pool_tokens(&c.memory);
    let pool_batch = (pool / context as f64).floor().clamp(0.0, MAX_BATCH as f64) as u32;
    let tpot_batch = largest_batch_within(&c.cost, MAX_BATCH, context, tpot);
    (tpot_batch, pool_batch)
}

/// The plot's figures for validated inputs.
pub(super) fn plot(c: &Ctx) -> Roofline {
    let batch = c.v("batch") as u32;
    let tpot = c.v("tpot_ms") / 1e3;
    let lp = c.v("prompt_tokens");
    let lo = c.v("output_tokens");
    let context = (lp + lo / 2.0).round().clamp(1.0, u32::MAX as f64) as u32;
    let prompt = lp.round().clamp(1.0, u32::MAX as f64) as u32;
    let (tpot_batch, pool_batch) = batch_limits(c, context, tpot);
    let largest = tpot_batch.min(pool_batch).max(1);
    let at = |b: u32| {
        let (i, f) = point(&c.cost, &CostModel::decode_totals(b, context));
        (b, i, f)
    };
    // Doubling batches from one to the pool's, and the pool's itself.
    let top = pool_batch.max(batch).max(largest).max(1);
    let mut decode = Vec::new();
    let mut b = 1u32;
    while b < top {
        decode.push(at(b));
        b = b.saturating_mul(2);
    }
    decode.push(at(top));
    Roofline {
        roof_flops: c.cost.sustained_flops(),
        bandwidth: c.cost.sustained_bandwidth(),
        ridge: c.cost.ridge_point(),
        prefill: point(&c.cost, &prompt_totals(prompt)),
        assumed: at(batch.max(1)),
        largest: at(largest),
        decode,
        decode_limit: decode_limit(&c.cost, context),
        crossing: c.cost.compute_bound_batch(context, pool_batch.max(1)),
    }
}

/// Decode's intensity as the batch grows without end: each sequence adds its FLOPs and its
/// K and V, the weights' bytes are shared.
fn decode_limit(cost: &CostModel, context: u32) -> f64 {
    cost.step_flops(&CostModel::decode_totals(1, context))
        / (cost.kv_bytes_per_token() * context as f64)
}

/// Why decode is memory-bound and how large its batch may grow; why the streaming fleet is
/// still the size the seed question found.
pub(super) fn roofline(c: &Ctx) -> Derivation {
    let batch = c.v("batch") as u32;
    let tpot = c.v("tpot_ms") / 1e3;
    let lp = c.v("prompt_tokens");
    let lo = c.v("output_tokens");
    let rate = c.v("rate");
    let ceiling = c.v("ceiling");
    let mut s = Vec::new();

    s.push(c.weight_bytes_step());
    s.push(c.kv_per_token_step());
    let (_, context) = c.avg_context_step(&mut s);

    // The ridge: at the datasheet's peaks, then at the rates the engine sustains.
    // The same cost model at 100 % of each peak (the number format's own tensor-core peak).
    let peak_rates = CostModel::new(c.cost.deployment().clone(), Efficiency::brief(1.0, 1.0))
        .map(|m| (m.sustained_flops(), m.sustained_bandwidth()))
        .unwrap_or((f64::NAN, f64::NAN));
    let peak = peak_rates.0 / peak_rates.1;
    s.push(
        Step::new("ridge_peak", "Ridge point at the datasheet's peaks")
            .formula(
                "F / BW",
                format!("{} / {}", tflops(peak_rates.0), tb_s(peak_rates.1)),
            )
            .value(peak, "FLOP/B", flop_per_byte(peak)),
    );
    let ridge = c.cost.ridge_point();
    s.push(
        Step::new("ridge_point", "Ridge point at the rates the engine reaches")
            .formula(
                "(F × MFU) / (BW × MBU)",
                format!(
                    "({} × {}) / ({} × {})",
                    tflops(peak_rates.0),
                    num(c.v("mfu")),
                    tb_s(peak_rates.1),
                    num(c.v("mbu"))
                ),
            )
            .value(ridge, "FLOP/B", flop_per_byte(ridge)),
    );

    // Prefill: a whole prompt in one step reads the weights once for all its tokens.
    let prompt = lp.round().clamp(1.0, u32::MAX as f64) as u32;
    let pt = prompt_totals(prompt);
    let (prefill_i, _) = point(&c.cost, &pt);
    s.push(
        Step::new("prefill_intensity", "Intensity of one prompt's prefill")
            .formula(
                "(L × 2P + attention) / (W + L × kv)",
                format!(
                    "{} / ({} + {} × {} B)",
                    flops(c.cost.step_flops(&pt)),
                    gb(c.cost.weight_bytes(), 4),
                    num(lp),
                    int(c.cost.kv_bytes_per_token())
                ),
            )
            .value(prefill_i, "FLOP/B", flop_per_byte(prefill_i)),
    );
    let prefill_bound = prefill_i >= ridge;
    s.push(
        Step::new("prefill_bound", "Prefill sits above the ridge")
            .formula(
                "ridge ≤ prefill intensity",
                format!("{} ≤ {}", flop_per_byte(ridge), flop_per_byte(prefill_i)),
            )
            .check(ridge / prefill_i, prefill_bound)
            .why(words::part(
                if prefill_bound {
                    "prefill_above"
                } else {
                    "prefill_below"
                },
                &[],
            )),
    );

    // Decode at the assumed batch: every step reads the weights for one token per sequence.
    let dt = CostModel::decode_totals(batch, context);
    let decode_i = c.cost.step_intensity(&dt);
    s.push(
        Step::new(
            "decode_intensity",
            "Intensity of a decode step at the assumed batch",
        )
        .formula(
            "B × (2P + attention per sequence) / (W + B × C × kv)",
            format!(
                "{} / {}",
                flops(c.cost.step_flops(&dt)),
                gb(c.cost.step_bytes(&dt), 4)
            ),
        )
        .value(decode_i, "FLOP/B", flop_per_byte(decode_i)),
    );
    let decode_memory = decode_i < ridge;
    s.push(
        Step::new("decode_bound", "Decode sits below the ridge")
            .formula(
                "decode intensity < ridge",
                format!("{} < {}", flop_per_byte(decode_i), flop_per_byte(ridge)),
            )
            .check(decode_i / ridge, decode_memory)
            .why(words::part(
                if decode_memory {
                    "decode_below"
                } else {
                    "decode_above"
                },
                &[],
            )),
    );
    // One sequence with no context: the weights' read and the step's fixed costs, if any.
    let floor = c.cost.decode_step(1, 0).total_s;
    s.push(
        Step::new("weight_floor", "The weight-read floor of a decode step")
            .formula(
                format!("W / ({}BW × MBU)", c.g()),
                format!(
                    "{} / ({}{} TB/s × {})",
                    gb(c.cost.weight_bytes(), 4),
                    c.g_num(),
                    num(c.v("hbm_tb_s")),
                    num(c.v("mbu"))
                ),
            )
            .value(floor, "s", duration(floor, 3)),
    );

    // Where decode would cross the ridge: with the cache free, and at this context.
    let weights_only = c.cost.compute_bound_batch(1, MAX_BATCH);
    s.push(
        Step::new(
            "weights_only_batch",
            "Batch where decode turns compute-bound, cache aside",
        )
        .formula(
            "smallest B with compute ≥ memory, context ≈ 0",
            format!("ridge {} × W / 2P", flop_per_byte(ridge)),
        )
        .value(
            weights_only.map_or(0.0, f64::from),
            "sequences",
            batch_or_never(weights_only),
        )
        .why(words::part(
            if weights_only.is_some() {
                "weights_only_crosses"
            } else {
                "weights_only_never"
            },
            &[("ridge", flop_per_byte(ridge))],
        )),
    );
    let limit = decode_limit(&c.cost, context);
    s.push(
        Step::new("decode_limit", "Where decode's intensity levels off")
            .formula(
                "(2P + attention per sequence) / (C × kv)",
                format!(
                    "{} / ({} × {} B)",
                    flops(c.cost.step_flops(&CostModel::decode_totals(1, context))),
                    int(context as f64),
                    int(c.cost.kv_bytes_per_token())
                ),
            )
            .value(limit, "FLOP/B", flop_per_byte(limit)),
    );
    let (tpot_batch, pool_batch) = batch_limits(c, context, tpot);
    let crossing = c.cost.compute_bound_batch(context, pool_batch.max(1));
    s.push(
        Step::new(
            "compute_bound_batch",
            "Batch where decode turns compute-bound",
        )
        .formula(
            "smallest B ≤ pool's batch with compute ≥ memory",
            format!(
                "level-off {} against ridge {}",
                flop_per_byte(limit),
                flop_per_byte(ridge)
            ),
        )
        .value(
            crossing.map_or(0.0, f64::from),
            "sequences",
            batch_or_never(crossing),
        )
        .why(words::part(
            if crossing.is_some() {
                "crosses_in_pool"
            } else if limit >= ridge {
                "crosses_past_pool"
            } else {
                "never_crosses"
            },
            &[
                ("limit", flop_per_byte(limit)),
                ("ridge", flop_per_byte(ridge)),
            ],
        )),
    );

    // The largest batch: the per-token target, then the pool.
    s.push(
        Step::new("tpot_batch", "Largest batch within the per-token target")
            .formula(
                "largest B with t_step(B, C) ≤ TPOT",
                format!(
                    "t_step({}, {}) = {} ≤ {}",
                    int(tpot_batch as f64),
                    int(context as f64),
                    duration(c.cost.decode_step(tpot_batch, context).total_s, 3),
                    duration(tpot, 3)
                ),
            )
            .value(
                tpot_batch as f64,
                "sequences",
                format!("{} sequences", int(tpot_batch as f64)),
            ),
    );
    let pool = c.cost.kv_pool_tokens(&c.memory);
    s.push(kv_pool_step(c, pool));
    s.push(
        Step::new("pool_batch", "Largest batch the KV pool holds")
            .formula(
                "⌊KV pool / C⌋",
                format!("⌊{} / {}⌋", int(pool), int(context as f64)),
            )
            .value(
                pool_batch as f64,
                "sequences",
                format!("{} sequences", int(pool_batch as f64)),
            ),
    );
    let largest = tpot_batch.min(pool_batch);
    s.push(
        Step::new("largest_batch", "Largest batch a replica may run")
            .formula(
                "min(target's batch, pool's batch)",
                format!(
                    "min({}, {})",
                    int(tpot_batch as f64),
                    int(pool_batch as f64)
                ),
            )
            .value(
                largest as f64,
                "sequences",
                format!("{} sequences", int(largest as f64)),
            )
            .why(words::part(
                if tpot_batch <= pool_batch {
                    "largest_by_target"
                } else {
                    "largest_by_pool"
                },
                &[],
            )),
    );

    // Why the streaming fleet is the size it is: replicas at the assumed batch, at the largest,
    // and at the batch the traffic gives each replica.
    let load = c.load_steps(&mut s);
    let demand = |b: u32| {
        let thr = c.cost.decode_throughput(b.max(1), context);
        load.prefill_demand + load.output_tps / thr
    };
    let replicas_at = |b: u32| whole_up(demand(b) / ceiling).max(1.0);
    let assumed = replicas_at(batch);
    s.push(
        Step::new("replicas_assumed", "Replicas at the assumed batch")
            .formula(
                "⌈(prefill + decode demand at B) / ceiling⌉",
                format!(
                    "⌈({} + {}) / {}⌉",
                    sig(load.prefill_demand, 3),
                    sig(demand(batch) - load.prefill_demand, 3),
                    num(ceiling)
                ),
            )
            .value(assumed, "replicas", plural(assumed, "replica")),
    );
    let at_largest = replicas_at(largest.max(1));
    s.push(
        Step::new("replicas_largest", "Replicas at the largest batch")
            .formula(
                "⌈(prefill + decode demand at the largest B) / ceiling⌉",
                format!(
                    "⌈({} + {}) / {}⌉",
                    sig(load.prefill_demand, 3),
                    sig(demand(largest.max(1)) - load.prefill_demand, 3),
                    num(ceiling)
                ),
            )
            .value(at_largest, "replicas", plural(at_largest, "replica"))
            .why(words::part(
                match at_largest.partial_cmp(&assumed) {
                    Some(std::cmp::Ordering::Less) => "largest_fewer",
                    Some(std::cmp::Ordering::Greater) => "largest_more",
                    _ => "largest_same",
                },
                &[],
            )),
    );
    let open = rate * lo * tpot;
    s.push(
        Step::new("open_streams", "Open streams (Little's law)")
            .formula(
                "λ × output tokens × TPOT",
                format!("{} × {} × {}", num(rate), num(lo), duration(tpot, 3)),
            )
            .value(open, "streams", format!("{} streams", sig(open, 3))),
    );
    let held = open / at_largest;
    // The check as written (a largest batch of none is trivially filled); the sentence below
    // tells that case apart.
    let fills = held >= largest as f64;
    s.push(
        Step::new("fills_check", "The traffic fills the largest batch")
            .formula(
                "largest B ≤ open streams / replicas at it",
                format!(
                    "{} ≤ {} / {} = {}",
                    int(largest as f64),
                    sig(open, 3),
                    int(at_largest),
                    fixed(held, 1)
                ),
            )
            .check(largest as f64 / held.max(f64::MIN_POSITIVE), fills),
    );
    // The smallest fleet whose replicas, each holding its share of the open streams, carry
    // the load under the ceiling (the traffic, not the target, sets a streaming batch).
    let traffic = (1..=4096u32).find_map(|n| {
        let b = (open / n as f64).ceil().max(1.0) as u32;
        let fits = largest > 0 && b <= largest && demand(b) / ceiling <= n as f64;
        fits.then_some((n, b))
    });
    let (n_traffic, b_traffic) = traffic.unwrap_or((0, 0));
    s.push(
        Step::new(
            "replicas_traffic",
            "Replicas when the traffic sets the batch",
        )
        .formula(
            "smallest N with (prefill + decode demand at ⌈open / N⌉) / ceiling ≤ N",
            match traffic {
                Some((n, b)) => format!(
                    "N = {}: ({} + {}) / {} = {} ≤ {}",
                    int(n as f64),
                    sig(load.prefill_demand, 3),
                    sig(demand(b) - load.prefill_demand, 3),
                    num(ceiling),
                    fixed(demand(b) / ceiling, 2),
                    int(n as f64)
                ),
                None => "no fleet of up to 4,096 replicas".to_string(),
            },
        )
        .value(
            n_traffic as f64,
            "replicas",
            match traffic {
                Some((n, b)) => words::part(
                    "replicas_traffic_shown",
                    &[
                        ("replicas", plural(n as f64, "replica")),
                        ("batch", int(b as f64)),
                    ],
                ),
                None => words::part("replicas_traffic_none", &[]),
            },
        ),
    );

    let sc = c.cost.decode_step(batch, context);
    let readings = vec![
        read(
            "roofline",
            Limit::Compute,
            match (decode_memory, prefill_bound) {
                (false, _) => Pressure::Binding,
                (true, true) => Pressure::Secondary,
                (true, false) => Pressure::Slack,
            },
            match (decode_memory, prefill_bound) {
                (false, _) => "compute_decode",
                (true, true) => "compute_prefill",
                (true, false) => "compute_none",
            },
            &[
                ("prefill", flop_per_byte(prefill_i)),
                ("ridge", flop_per_byte(ridge)),
                ("batch", int(batch as f64)),
            ],
        ),
        read(
            "roofline",
            Limit::HbmBandwidth,
            Pressure::binding_if(decode_memory),
            if decode_memory {
                "hbm_binds"
            } else {
                "hbm_room"
            },
            &[
                ("decode", flop_per_byte(decode_i)),
                ("ridge", flop_per_byte(ridge)),
                ("floor", duration(floor, 3)),
                ("step", duration(sc.total_s, 3)),
            ],
        ),
        read(
            "roofline",
            Limit::KvCapacity,
            if pool_batch < tpot_batch {
                Pressure::Binding
            } else {
                Pressure::Slack
            },
            if pool_batch < tpot_batch {
                "kv_caps"
            } else {
                "kv_room"
            },
            &[
                ("pool_batch", int(pool_batch as f64)),
                ("tpot_batch", int(tpot_batch as f64)),
            ],
        ),
        read(
            "roofline",
            Limit::LatencyTarget,
            if tpot_batch <= pool_batch {
                Pressure::Binding
            } else {
                Pressure::Slack
            },
            if tpot_batch == 0 {
                "target_unreachable"
            } else if tpot_batch > pool_batch {
                "target_room"
            } else if traffic.is_some() {
                "target_caps"
            } else {
                "target_caps_no_fleet"
            },
            &[
                ("floor", duration(floor, 3)),
                ("tpot", duration(tpot, 3)),
                ("tpot_batch", int(tpot_batch as f64)),
                ("pool_batch", int(pool_batch as f64)),
                ("traffic_batch", int(b_traffic as f64)),
            ],
        ),
    ];
    // Whether the largest batch forms at the count it would need, and how the count the
    // traffic sets compares with the assumed batch's, each chosen from the figures.
    let fills_key = if largest == 0 {
        "fills_none"
    } else if fills {
        "fills_yes"
    } else {
        "fills_no"
    };
    let traffic_key = match traffic {
        None => "traffic_none",
        Some((n, _)) if (n as f64) < assumed => "traffic_fewer",
        Some((n, _)) if (n as f64) > assumed => "traffic_more",
        Some(_) => "traffic_same",
    };
    let say_values = [
        ("held", fixed(held, 1)),
        ("batch", int(largest as f64)),
        ("replicas", plural(at_largest, "replica")),
        ("assumed", int(batch as f64)),
        ("traffic_batch", int(b_traffic as f64)),
    ];
    let said = vec![
        Said {
            id: "fills",
            step: "fills_check",
            key: fills_key,
            text: words::conclude("say", fills_key, &say_values),
        },
        Said {
            id: "traffic",
            step: "replicas_traffic",
            key: traffic_key,
            text: words::conclude("say", traffic_key, &say_values),
        },
    ];
    finish_with(Question::Roofline, s, readings, said)
}

/// A batch found by a search, or the word for none.
fn batch_or_never(b: Option<u32>) -> String {
    match b {
        Some(b) => format!("{} sequences", int(b as f64)),
        None => words::part("never", &[]),
    }
}

/// A count of FLOPs as the steps show it.
fn flops(v: f64) -> String {
    if v >= 1e12 {
        format!("{} TFLOP", sig(v / 1e12, 4))
    } else {
        format!("{} GFLOP", sig(v / 1e9, 4))
    }
}

/// FLOP/s as the steps show them.
fn tflops(v: f64) -> String {
    format!("{} TFLOP/s", sig(v / 1e12, 4))
}

/// Bytes per second as the steps show them.
fn tb_s(v: f64) -> String {
    format!("{} TB/s", sig(v / 1e12, 4))
}

/// FLOPs per byte as the steps show them.
fn flop_per_byte(v: f64) -> String {
    format!("{} FLOP/B", count(v))
}
