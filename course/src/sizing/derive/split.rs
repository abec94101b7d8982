//! The `split` question: the seed's load on separate prefill and decode pools. The prefill pool
//! carries the prompts' arithmetic, the decode pool the replies' memory-bound steps, each at the
//! utilisation ceiling; every prompt's KV cache then crosses a link to its decode replica. The
//! figures are the fleet question's own (its prefill demand and its decode chain), split in
//! two and each rounded up, beside the count of replicas that do both; the move is priced by
//! the cost model the fleet simulator uses for a split fleet ([`CostModel::kv_transfer_time`]).

use super::*;
use std::sync::OnceLock;
use trainer_engine::catalog::{link_or_error, LinkSpec};

/// `content/sizing-split.toml`: why each step comes out as it does, and the readings.
fn words() -> &'static OwnWords {
    static WORDS: OnceLock<OwnWords> = OnceLock::new();
    WORDS.get_or_init(|| {
        trainer_engine::files::read(trainer_engine::files::SIZING_SPLIT).unwrap_or_default()
    })
}

/// The catalog's link between nodes (InfiniBand NDR, one adapter per GPU) and the share of its
/// line rate that gives `gbps` per GPU: the link and share a split fleet in the simulator
/// runs with (`disagg.link`, `disagg.link_share`).
pub fn link(gbps: f64) -> (LinkSpec, f64) {
    let l = link_or_error("infiniband-ndr").expect("the catalog has InfiniBand NDR");
    let share = gbps * 1e9 / 8.0 / l.bandwidth;
    (l, share)
}

/// Prefill and decode replicas for the load, and what the split costs.
pub(super) fn split(c: &Ctx) -> Derivation {
    let rate = c.v("rate");
    let lp = c.v("prompt_tokens");
    let tpot = c.v("tpot_ms") / 1e3;
    let batch = c.v("batch") as u32;
    let ceiling = c.v("ceiling");
    let price = c.v("price");
    let gbps = c.v("link_gbps");
    let tp = c.tp as f64;
    let mut s = Vec::new();

    let load = c.load_steps(&mut s);
    let prefill_exact = load.prefill_demand / ceiling;
    s.push(
        Step::new("prefill_replicas_exact", "Prefill replicas at the ceiling")
            .formula(
                "prefill demand / ceiling",
                format!("{} / {}", sig(load.prefill_demand, 3), num(ceiling)),
            )
            .value(
                prefill_exact,
                "replicas",
                format!("{} replicas", fixed(prefill_exact, 2)),
            ),
    );
    let prefill = whole_up(prefill_exact).max(1.0);
    s.push(
        Step::new("prefill_replicas", "Prefill replicas")
            .formula(
                "⌈prefill replicas at the ceiling⌉",
                format!("⌈{}⌉", fixed(prefill_exact, 2)),
            )
            .value(prefill, "replicas", plural(prefill, "replica")),
    );

    let (avg_ctx, ctx) = c.avg_context_step(&mut s);
    s.push(c.weight_bytes_step());
    s.push(c.kv_per_token_step());
    let (sc, thr, _) = c.decode_steps(&mut s, batch, ctx);
    let tpot_ok = sc.total_s <= tpot;
    s.push(tpot_check_step(&sc, tpot));
    let demand = decode_demand_step(load.output_tps, thr);
    let decode_demand = demand.value;
    s.push(demand);
    let decode_exact = decode_demand / ceiling;
    s.push(
        Step::new("decode_replicas_exact", "Decode replicas at the ceiling")
            .formula(
                "decode demand / ceiling",
                format!("{} / {}", sig(decode_demand, 3), num(ceiling)),
            )
            .value(
                decode_exact,
                "replicas",
                format!("{} replicas", fixed(decode_exact, 2)),
            ),
    );
    let decode = whole_up(decode_exact).max(1.0);
    s.push(
        Step::new("decode_replicas", "Decode replicas")
            .formula(
                "⌈decode replicas at the ceiling⌉",
                format!("⌈{}⌉", fixed(decode_exact, 2)),
            )
            .value(decode, "replicas", plural(decode, "replica")),
    );
    let pool = c.cost.kv_pool_tokens(&c.memory);
    s.push(kv_pool_step(c, pool));
    let in_use = batch as f64 * avg_ctx;
    let kv_share = if pool > 0.0 {
        in_use / pool
    } else {
        f64::INFINITY
    };
    s.push(
        Step::new("kv_share", "Share of a decode replica's KV pool in use")
            .formula(
                "B × average context / KV pool",
                format!("{} × {} / {}", int(batch as f64), int(avg_ctx), int(pool)),
            )
            .value(kv_share, "", percent(kv_share)),
    );

    let gpus = (prefill + decode) * tp;
    s.push(
        Step::new("split_gpus", "GPUs, split")
            .formula(
                "(prefill + decode replicas) × G",
                format!(
                    "({} + {}) × {}",
                    int(prefill),
                    int(decode),
                    plural(tp, "GPU")
                ),
            )
            .value(gpus, "GPUs", plural(gpus, "GPU")),
    );
    let mixed = whole_up((load.prefill_demand + decode_demand) / ceiling).max(1.0);
    s.push(
        Step::new("mixed_replicas", "Replicas that do both, for the same load")
            .formula(
                "⌈(prefill + decode demand) / ceiling⌉",
                format!(
                    "⌈({} + {}) / {}⌉",
                    sig(load.prefill_demand, 3),
                    sig(decode_demand, 3),
                    num(ceiling)
                ),
            )
            .value(mixed, "replicas", plural(mixed, "replica")),
    );
    let extra = gpus - mixed * tp;
    s.push(
        Step::new("extra_gpus", "GPUs the split adds")
            .formula(
                "GPUs, split − replicas that do both × G",
                format!("{} − {} × {}", int(gpus), int(mixed), int(tp)),
            )
            .value(extra, "GPUs", plural(extra, "GPU")),
    );
    s.push(cost_per_hour_step(gpus, price));

    let tokens = lp.round().clamp(1.0, u32::MAX as f64) as u32;
    let moved = c.cost.kv_transfer_bytes(tokens);
    s.push(
        Step::new("kv_moved", "KV cache moved per request")
            .formula(
                "prompt tokens × KV bytes per token",
                format!("{} × {} B", num(lp), int(c.cost.kv_bytes_per_token())),
            )
            .value(moved, "bytes", gb(moved, 3)),
    );
    let (l, share) = link(gbps);
    let transfer = c.cost.kv_transfer_time(tokens, &l, share);
    s.push(
        Step::new("transfer_time", "Time to move it")
            .formula(
                format!("latency + bytes / ({}link)", c.g()),
                format!(
                    "{} + {} / ({}{} Gb/s)",
                    duration(l.latency_s, 2),
                    gb(moved, 3),
                    c.g_num(),
                    num(gbps)
                ),
            )
            .value(transfer, "s", duration(transfer, 2)),
    );
    let link_busy = rate * transfer / prefill;
    let link_ok = link_busy <= ceiling;
    s.push(
        Step::new("link_check", "Each prefill replica's link keeps up")
            .formula(
                "λ × move time / prefill replicas ≤ ceiling",
                format!(
                    "{} × {} / {} ≤ {}",
                    num(rate),
                    duration(transfer, 2),
                    int(prefill),
                    num(ceiling)
                ),
            )
            .check(link_busy / ceiling, link_ok),
    );
    let first = lp * load.t_prefill + transfer + sc.total_s;
    s.push(
        Step::new("first_token", "First token, before any queue")
            .formula(
                "prompt tokens × t_prefill + move + one decode step",
                format!(
                    "{} × {} + {} + {}",
                    num(lp),
                    duration(load.t_prefill, 3),
                    duration(transfer, 2),
                    duration(sc.total_s, 2)
                ),
            )
            .value(first, "s", duration(first, 2)),
    );

    // The verdict: compute sizes the prefill pool; the decode step, what it waits on and the
    // target, the decode pool; the pool holds the batch or not.
    let w = words();
    let figures = [
        ("prefill", plural(prefill, "replica")),
        ("decode", plural(decode, "replica")),
        ("mixed", plural(mixed, "replica")),
        ("extra", plural(extra, "GPU")),
        ("step", duration(sc.total_s, 2)),
        ("target", duration(tpot, 3)),
        ("compute", duration(sc.compute_s, 2)),
        ("memory", duration(sc.memory_s, 2)),
        ("transfer", duration(transfer, 2)),
        ("busy", percent(link_busy)),
        ("share", percent(kv_share)),
        ("batch", int(batch as f64)),
    ];
    let mut readings = vec![w.reading(
        Limit::Compute,
        Pressure::Binding,
        if extra > 0.0 {
            "compute_sizes_prefill_extra"
        } else {
            "compute_sizes_prefill"
        },
        &figures,
    )];
    let memory_bound = sc.memory_bound();
    readings.push(w.reading(
        Limit::HbmBandwidth,
        Pressure::binding_if(memory_bound),
        if memory_bound {
            "hbm_sizes_decode"
        } else {
            "hbm_room"
        },
        &figures,
    ));
    readings.push(w.reading(
        Limit::LatencyTarget,
        share_pressure(
            tpot_ok && link_ok,
            (sc.total_s / tpot).max(link_busy / ceiling),
        ),
        match (tpot_ok, link_ok) {
            (true, true) => "target_holds",
            (false, _) => "target_misses",
            (true, false) => "link_short",
        },
        &figures,
    ));
    let fits = kv_share <= 1.0;
    readings.push(w.reading(
        Limit::KvCapacity,
        share_pressure(fits, kv_share),
        if fits { "kv_room" } else { "kv_full" },
        &figures,
    ));
    w.fill_why(&mut s);
    finish(Question::Split, s, readings)
}

#[cfg(test)]
mod tests {
    /// Every sentence of the question's file is used and every step has one.
    #[test]
    fn every_sentence_is_used_and_every_step_has_one() {
        super::super::own_words_are_all_used(
            super::Question::Split,
            include_str!("../../../../content/sizing-split.toml"),
            include_str!("split.rs"),
        );
    }
}
