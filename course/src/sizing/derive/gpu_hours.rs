//! The `gpu_hours` question: GPU-hours and the cost of a million output tokens from the
//! decode step and batch.

use super::*;

/// GPU-hours and cost of a million output tokens, from the decode step time and batch.
pub(super) fn gpu_hours(c: &Ctx) -> Derivation {
    let batch = c.v("batch") as u32;
    let ctx = c.v("context") as u32;
    let price = c.v("price");
    let tp = c.tp as f64;
    let mut s = vec![c.weight_bytes_step(), c.kv_per_token_step()];
    let (sc, thr, bytes) = c.decode_steps(&mut s, batch, ctx);
    let replica_s = 1e6 / thr;
    s.push(
        Step::new(
            "replica_seconds_per_million",
            "Replica time per million tokens",
        )
        .formula(
            "10⁶ / decode throughput",
            format!("1,000,000 / {}", count(thr)),
        )
        .value(replica_s, "s", duration(replica_s, 3)),
    );
    let gpu_h = replica_s * tp / 3600.0;
    s.push(
        Step::new(
            "gpu_hours_per_million",
            "GPU-hours per million output tokens",
        )
        .formula(
            "replica time × G / 3,600",
            format!("{} × {} / 3,600", duration(replica_s, 3), plural(tp, "GPU")),
        )
        .value(gpu_h, "GPU-h", format!("{} GPU-h", sig(gpu_h, 3))),
    );
    let per_million = gpu_h * price;
    s.push(
        Step::new("cost_per_million", "Cost per million output tokens")
            .formula(
                "GPU-hours × price",
                format!("{} × {}", sig(gpu_h, 3), money(price)),
            )
            .value(per_million, "$", money(per_million)),
    );

    let pool = c.cost.kv_pool_tokens(&c.memory);
    let kv = batch as f64 * ctx as f64;
    let kv_share = if pool > 0.0 { kv / pool } else { f64::INFINITY };
    let readings = vec![
        read(
            "gpu_hours",
            Limit::Compute,
            Pressure::binding_if(!(sc.memory_bound())),
            "compute",
            &[
                ("compute", duration(sc.compute_s, 2)),
                ("memory", duration(sc.memory_s, 2)),
            ],
        ),
        read(
            "gpu_hours",
            Limit::HbmBandwidth,
            Pressure::binding_if(sc.memory_bound()),
            "hbm",
            &[
                ("bytes", gb(bytes, 4)),
                ("memory", duration(sc.memory_s, 2)),
            ],
        ),
        read(
            "gpu_hours",
            Limit::KvCapacity,
            share_pressure(kv_share <= 1.0, kv_share),
            if kv_share <= 1.0 {
                "kv_fits"
            } else {
                "kv_over"
            },
            &[
                ("tokens", int(kv)),
                ("share", percent(kv_share)),
                ("util", percent(c.memory.gpu_memory_utilization)),
                ("reserve", gb(c.memory.reserve_bytes_per_gpu, 3)),
            ],
        ),
    ];
    finish(Question::GpuHours, s, readings)
}
