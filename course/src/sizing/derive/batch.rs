//! The `batch` question: the seed load as non-streaming batch work, set beside the streaming
//! fleet the same inputs size.

use super::*;

/// The seed load as non-streaming batch work: size the fleet for full decode batches at a
/// higher ceiling, check the batch against the KV pool and the completion time against its
/// target, and set the answer beside the streaming fleet the same inputs size.
pub(super) fn batch(c: &Ctx) -> Derivation {
    let rate = c.v("rate");
    let lp = c.v("prompt_tokens");
    let lo = c.v("output_tokens");
    let target = c.v("completion_s");
    let batch = c.v("job_batch") as u32;
    let ceiling = c.v("job_ceiling");
    let tp = c.tp as f64;
    let mut s = Vec::new();

    let load = c.load_steps(&mut s);
    let (t_pf, prefill_demand) = (load.t_prefill, load.prefill_demand);
    let (avg_ctx, ctx) = c.avg_context_step(&mut s);
    s.push(c.weight_bytes_step());
    s.push(c.kv_per_token_step());
    let pool = c.cost.kv_pool_tokens(&c.memory);
    s.push(kv_pool_step(c, pool));
    let batch_kv = batch as f64 * avg_ctx;
    s.push(
        Step::new("batch_kv", "KV for a full batch")
            .formula(
                "B_job × average context",
                format!("{} × {}", int(batch as f64), int(avg_ctx)),
            )
            .value(batch_kv, "tokens", format!("{} tokens", int(batch_kv))),
    );
    let kv_ok = batch_kv <= pool;
    s.push(
        Step::new("kv_check", "A full batch fits the KV pool")
            .formula(
                "B_job × context ≤ KV pool",
                format!("{} ≤ {}", int(batch_kv), int(pool)),
            )
            .check(batch_kv / pool, kv_ok),
    );
    let (sc, thr, bytes) = c.decode_steps(&mut s, batch, ctx);
    let sized = c.replica_steps(
        &mut s,
        &load,
        Sizing {
            batch,
            ceiling,
            step: &sc,
            throughput: thr,
        },
        "",
    );
    let (decode_demand, replicas) = (sized.decode_demand, sized.replicas);
    let service = lp * t_pf + lo * sc.total_s;
    s.push(
        Step::new("service_time", "One job back to back")
            .formula(
                "prompt tokens × t_prefill + output tokens × t_step",
                format!(
                    "{} × {} + {} × {}",
                    num(lp),
                    duration(t_pf, 3),
                    num(lo),
                    duration(sc.total_s, 3)
                ),
            )
            .value(service, "s", duration(service, 3)),
    );
    let in_flight = replicas * batch as f64;
    s.push(
        Step::new("jobs_in_flight", "Jobs in flight with every batch full")
            .formula(
                "replicas × B_job",
                format!("{} × {}", int(replicas), int(batch as f64)),
            )
            .value(in_flight, "jobs", format!("{} jobs", int(in_flight))),
    );
    let completion = in_flight / rate;
    s.push(
        Step::new("completion_time", "Completion time per job (Little's law)")
            .formula(
                "jobs in flight / λ",
                format!("{} / {} req/s", int(in_flight), num(rate)),
            )
            .value(completion, "s", duration(completion, 3)),
    );
    let completion_ok = completion <= target;
    s.push(
        Step::new("completion_check", "Completion time meets the target")
            .formula(
                "completion time ≤ target",
                format!("{} ≤ {}", duration(completion, 3), duration(target, 3)),
            )
            .check(completion / target, completion_ok),
    );

    // The streaming answer for the same inputs, worked by the fleet question's own code.
    let streaming = super::fleet::fleet(c);
    let sv = |id: &str| streaming.step(id).map_or(f64::NAN, |st| st.value);
    let ss = |id: &str| {
        streaming
            .step(id)
            .map_or_else(String::new, |st| st.substituted.clone())
    };
    let stream_replicas = sv("replicas");
    s.push(
        Step::new("streaming_replicas", "Replicas when streaming")
            .formula(
                "⌈(prefill + decode demand at B) / ceiling⌉",
                format!(
                    "⌈{} = {}⌉ at B = {}",
                    ss("replicas_exact"),
                    fixed(sv("replicas_exact"), 2),
                    num(c.v("batch"))
                ),
            )
            .value(
                stream_replicas,
                "replicas",
                plural(stream_replicas, "replica"),
            ),
    );
    // Batching usually saves GPUs; with a job batch or ceiling below the streaming one it
    // needs more, and the step says so rather than showing a negative saving.
    let saved = (stream_replicas - replicas) * tp;
    let more = saved < 0.0;
    let (first, second) = if more {
        (replicas, stream_replicas)
    } else {
        (stream_replicas, replicas)
    };
    let gpus_diff = saved.abs();
    s.push(
        Step::new(
            "gpus_saved",
            words::label(if more {
                "gpus_more_label"
            } else {
                "gpus_saved_label"
            }),
        )
        .formula(
            if more {
                "(replicas − streaming replicas) × G"
            } else {
                "(streaming replicas − replicas) × G"
            },
            format!("({} − {}) × {}", int(first), int(second), plural(tp, "GPU")),
        )
        .value(
            gpus_diff,
            "GPUs",
            words::part(
                if more {
                    "gpus_more"
                } else if gpus_diff == 0.0 {
                    "gpus_none"
                } else {
                    "gpus_saved"
                },
                &[
                    ("gpus", plural(gpus_diff, "GPU")),
                    ("share", percent(gpus_diff / (stream_replicas * tp))),
                ],
            ),
        )
        .why(&if more {
            words::part("gpus_more_why", &[])
        } else {
            String::new()
        }),
    );
    let stream_per_million = sv("cost_per_million");
    s.push(
        Step::new(
            "streaming_cost_per_million",
            "Cost per million output tokens when streaming",
        )
        .formula(
            "streaming cost per hour / (output tok/s × 3,600 / 10⁶)",
            ss("cost_per_million"),
        )
        .value(
            stream_per_million,
            "$",
            format!(
                "{} ({} here)",
                money(stream_per_million),
                money(sized.cost_per_million)
            ),
        )
        .why(&if more {
            words::part("streaming_cost_less_why", &[])
        } else if gpus_diff == 0.0 {
            words::part("streaming_cost_same_why", &[])
        } else {
            // The sentence of the file (`[steps] streaming_cost_per_million`).
            String::new()
        }),
    );
    s.push(
        Step::new("gateway_streams", "Open streams at the gateway")
            .formula(
                "none: a job's result returns whole",
                format!(
                    "0 (streaming: {} = {})",
                    ss("open_streams"),
                    sig(sv("open_streams"), 3)
                ),
            )
            .value(
                0.0,
                "streams",
                format!("0 streams (streaming: {})", sig(sv("open_streams"), 3)),
            ),
    );

    // The verdict: which resource the work at the larger batch leans on, and how the KV pool
    // and the completion target press.
    let total = prefill_demand + decode_demand;
    let (compute_load, memory_load) = if sc.memory_bound() {
        (prefill_demand, decode_demand)
    } else {
        (total, 0.0)
    };
    let kv_share = batch_kv / pool;
    let done_share = completion / target;
    let readings = vec![
        read(
            "batch",
            Limit::Compute,
            load_pressure(compute_load, memory_load, total),
            if sc.memory_bound() {
                "compute_prefill"
            } else {
                "compute_all"
            },
            &[
                ("share", percent(compute_load / total)),
                ("load", sig(compute_load, 3)),
                ("total", sig(total, 3)),
            ],
        ),
        read(
            "batch",
            Limit::HbmBandwidth,
            load_pressure(memory_load, compute_load, total),
            if sc.memory_bound() {
                "hbm_memory_bound"
            } else {
                "hbm_compute_bound"
            },
            &[
                ("share", percent(memory_load / total)),
                ("bytes", gb(bytes, 4)),
                ("batch", int(batch as f64)),
            ],
        ),
        LimitReading {
            limit: Limit::KvCapacity,
            pressure: share_pressure(kv_ok, kv_share),
            reason: {
                let jobs = (pool / avg_ctx).floor();
                words::conclude(
                    "batch",
                    if kv_ok {
                        "kv_fits"
                    } else if jobs < 1.0 {
                        "kv_none"
                    } else {
                        "kv_over"
                    },
                    &[
                        ("tokens", int(batch_kv)),
                        ("share", percent(kv_share)),
                        ("jobs", plural(jobs, "job")),
                    ],
                )
            },
        },
        read(
            "batch",
            Limit::LatencyTarget,
            share_pressure(completion_ok, done_share),
            if completion_ok {
                "latency_met"
            } else {
                "latency_missed"
            },
            &[
                ("completion", duration(completion, 3)),
                ("target", duration(target, 3)),
            ],
        ),
    ];
    finish(Question::Batch, s, readings)
}
