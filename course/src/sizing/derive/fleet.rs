//! The seed question, `fleet`: size the fleet for the load, then check it against the streams
//! it keeps open, the latency target and the KV pool.

use super::*;

/// The seed problem: size the fleet, then check it against streams, latency and KV.
pub(super) fn fleet(c: &Ctx) -> Derivation {
    let rate = c.v("rate");
    let lp = c.v("prompt_tokens");
    let lo = c.v("output_tokens");
    let tpot = c.v("tpot_ms") / 1e3;
    let batch = c.v("batch") as u32;
    let ceiling = c.v("ceiling");
    let mut s = Vec::new();

    let load = c.load_steps(&mut s);
    let (t_pf, prefill_demand) = (load.t_prefill, load.prefill_demand);
    let ttft = lp * t_pf;
    s.push(
        Step::new("ttft_compute", "TTFT compute")
            .formula(
                "prompt tokens × t_prefill",
                format!("{} × {}", num(lp), duration(t_pf, 3)),
            )
            .value(ttft, "s", duration(ttft, 2)),
    );
    // Attention's share of that prefill, which the parameter FLOPs leave out and which grows
    // with the square of the prompt, then the two together.
    let attn = c
        .cost
        .prompt_attention_time(lp.round().clamp(1.0, u32::MAX as f64) as u32);
    s.push(
        Step::new("ttft_attention", "Attention in one prompt's prefill")
            .formula(
                format!(
                    "4 × layers × heads × d_head × L(L + 1)/2 / ({}F × MFU)",
                    c.g()
                ),
                format!(
                    "4 × {} × {} × {} × {} × {} / 2 / ({}{} TFLOP/s × {})",
                    num(c.v("layers")),
                    num(c.v("heads")),
                    num(c.v("head_dim")),
                    num(lp),
                    num(lp + 1.0),
                    c.g_num(),
                    num(c.v("peak_tflops")),
                    num(c.v("mfu")),
                ),
            )
            .value(
                attn,
                "s",
                format!("{} (+{})", duration(attn, 2), percent(attn / ttft)),
            ),
    );
    s.push(
        Step::new("ttft_with_attention", "TTFT compute, attention included")
            .formula(
                "TTFT compute + attention",
                format!("{} + {}", duration(ttft, 2), duration(attn, 2)),
            )
            .value(ttft + attn, "s", duration(ttft + attn, 2)),
    );
    let (avg_ctx, ctx) = c.avg_context_step(&mut s);
    s.push(c.weight_bytes_step());
    s.push(c.kv_per_token_step());
    let (sc, bytes, sized) = c.sized_fleet(&mut s, &load, batch, ceiling, ctx);
    let (decode_demand, replicas) = (sized.decode_demand, sized.replicas);
    let reply_s = lo * tpot;
    s.push(
        Step::new("time_per_reply", "Time per reply")
            .formula(
                "output tokens × TPOT",
                format!("{} × {}", num(lo), duration(tpot, 3)),
            )
            .value(reply_s, "s", duration(reply_s, 2)),
    );
    s.push(tpot_check_step(&sc, tpot));
    let open = rate * reply_s;
    s.push(
        Step::new("open_streams", "Open streams (Little's law)")
            .formula(
                "λ × time per reply",
                format!("{} × {}", num(rate), duration(reply_s, 2)),
            )
            .value(open, "streams", format!("{} streams", sig(open, 3))),
    );
    let spr = open / replicas;
    // One rounding for both this step and the KV step that uses it (half away from zero).
    let held = spr.round();
    let about = if spr.fract() != 0.0 {
        format!(" (about {})", int(held))
    } else {
        String::new()
    };
    s.push(
        Step::new("streams_per_replica", "Streams per replica")
            .formula(
                "open streams / replicas",
                format!("{} / {}", sig(open, 3), int(replicas)),
            )
            .value(spr, "streams", format!("{} streams{about}", fixed(spr, 2))),
    );
    let batch_ok = spr <= batch as f64;
    s.push(
        Step::new("batch_check", "Streams fit the assumed batch")
            .formula(
                "streams per replica ≤ B",
                format!("{} ≤ {}", fixed(spr, 2), int(batch as f64)),
            )
            .check(spr / batch as f64, batch_ok),
    );
    let pool = c.cost.kv_pool_tokens(&c.memory);
    s.push(kv_pool_step(c, pool));
    let in_use = held * avg_ctx;
    s.push(
        Step::new("kv_in_use", "KV in use per replica")
            .formula(
                "streams per replica × average context",
                format!("{} × {}", int(held), int(avg_ctx)),
            )
            .value(in_use, "tokens", format!("{} tokens", int(in_use))),
    );
    let share = in_use / pool;
    s.push(
        Step::new("kv_share", "Share of the KV pool in use")
            .formula(
                "KV in use / KV pool",
                format!("{} / {}", int(in_use), int(pool)),
            )
            .value(share, "", percent(share)),
    );

    // The verdict: which resource the load leans on, and whether latency or KV presses.
    let total = prefill_demand + decode_demand;
    let (compute_load, memory_load) = if sc.memory_bound() {
        (prefill_demand, decode_demand)
    } else {
        (total, 0.0)
    };
    let say =
        |section: &str, key: &str, values: &[(&str, String)]| words::conclude(section, key, values);
    let load_values = |load: f64| {
        vec![
            ("share", percent(load / total)),
            ("load", sig(load, 3)),
            ("total", sig(total, 3)),
        ]
    };
    let mut readings = vec![
        read(
            "fleet",
            Limit::Compute,
            load_pressure(compute_load, memory_load, total),
            if sc.memory_bound() {
                "compute_prefill"
            } else {
                "compute_all"
            },
            &load_values(compute_load),
        ),
        LimitReading {
            limit: Limit::HbmBandwidth,
            pressure: load_pressure(memory_load, compute_load, total),
            reason: if sc.memory_bound() {
                say(
                    "fleet",
                    "hbm_memory_bound",
                    &[
                        ("share", percent(memory_load / total)),
                        ("bytes", gb(bytes, 4)),
                        ("batch", int(batch as f64)),
                    ],
                )
            } else {
                say("fleet", "hbm_compute_bound", &[])
            },
        },
    ];
    // The latency target presses through the step (missed, or within a tenth of it, so that
    // a tighter target would fail at this batch) and through the streams it keeps open (more
    // than the batch, at a batch whose step misses the target). It never enters the replica
    // count itself, so nothing else makes it bind.
    let pace = conclusions::Pace::of(sc.total_s, tpot);
    let step_values = vec![
        ("step", duration(sc.total_s, 2)),
        ("tpot", duration(tpot, 3)),
        ("ratio", percent(sc.total_s / tpot)),
        ("batch", int(batch as f64)),
    ];
    let mut stream_values = vec![
        ("reply", duration(reply_s, 2)),
        ("streams", fixed(spr, 2)),
        ("batch", int(batch as f64)),
    ];
    let (streams_key, streams_pressure) = if batch_ok {
        ("streams_fit", Pressure::Slack)
    } else {
        let step_held = c
            .cost
            .decode_step(held.min(u32::MAX as f64) as u32, ctx)
            .total_s;
        stream_values.push(("held", int(held)));
        stream_values.push(("step_held", duration(step_held, 2)));
        if step_held <= tpot {
            ("streams_over_fit", Pressure::Slack)
        } else {
            ("streams_over_miss", Pressure::Binding)
        }
    };
    readings.push(LimitReading {
        limit: Limit::LatencyTarget,
        pressure: conclusions::stronger(pace.pressure(), streams_pressure),
        reason: format!(
            "{} {}",
            say("fleet", pace.reading_key(), &step_values),
            say("fleet", streams_key, &stream_values)
        ),
    });
    let batch_kv = batch as f64 * avg_ctx;
    let kv = conclusions::KvCase::of(share, batch_kv, pool);
    let kv_values = vec![
        ("share", percent(share)),
        ("in_use", int(in_use)),
        ("pool", int(pool)),
        ("batch", int(batch as f64)),
        ("batch_kv", int(batch_kv)),
    ];
    readings.push(read(
        "fleet",
        Limit::KvCapacity,
        kv.pressure(),
        kv.key(),
        &kv_values,
    ));
    let said = vec![
        Said {
            id: "decode",
            step: "decode_step",
            key: if sc.memory_bound() {
                "decode_memory"
            } else {
                "decode_compute"
            },
            text: String::new(),
        },
        Said {
            id: "streams",
            step: "streams_per_replica",
            key: if batch_ok {
                "streams_fit"
            } else {
                "streams_over"
            },
            text: String::new(),
        },
        Said {
            id: "kv",
            step: "kv_share",
            key: kv.key(),
            text: String::new(),
        },
        Said {
            id: "pace",
            step: "decode_step",
            key: pace.say_key(),
            text: String::new(),
        },
    ]
    .into_iter()
    .map(|mut x| {
        let values = match x.id {
            "pace" => &step_values,
            "kv" => &kv_values,
            _ => &stream_values,
        };
        x.text = say("say", x.key, values);
        x
    })
    .collect();
    finish_with(Question::Fleet, s, readings, said)
}
