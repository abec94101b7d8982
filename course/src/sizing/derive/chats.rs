//! The `chats_per_replica` question: how many chats of a length one replica's KV pool holds,
//! and how many of them it decodes within the latency target.

use super::*;

/// How many chats of a given length the KV pool of one replica holds, and how many of them
/// it can decode within the latency target.
pub(super) fn chats_per_replica(c: &Ctx) -> Derivation {
    let len = c.v("chat_tokens");
    let len_u = len as u32;
    let tpot = c.v("tpot_ms") / 1e3;
    let mut s = vec![c.kv_per_token_step(), c.weight_bytes_step()];
    let pool_bytes = c.cost.kv_pool_bytes(&c.memory);
    s.push(
        Step::new("kv_pool_bytes", "Memory left for the KV cache")
            .formula(
                format!("{0}M × u − {0}R − W", c.g()),
                format!(
                    "{}{} GB × {} − {}{} GB − {}",
                    c.g_num(),
                    num(c.v("gpu_mem_gb")),
                    num(c.v("mem_util")),
                    c.g_num(),
                    num(c.v("reserve_gb")),
                    gb(c.cost.weight_bytes(), 4)
                ),
            )
            .value(pool_bytes, "B", gb(pool_bytes, 4)),
    );
    let pool = c.cost.kv_pool_tokens(&c.memory);
    s.push(
        Step::new("kv_pool", "KV pool")
            .formula(
                "memory for KV / kv",
                format!(
                    "{} / {} B",
                    gb(pool_bytes, 4),
                    int(c.cost.kv_bytes_per_token())
                ),
            )
            .value(pool, "tokens", format!("{} tokens", int(pool))),
    );
    let chats = (pool / len).floor().min(u32::MAX as f64);
    s.push(
        Step::new("chats", "Chats that fit")
            .formula(
                "⌊KV pool / chat length⌋",
                format!("⌊{} / {}⌋", int(pool), num(len)),
            )
            .value(chats, "chats", plural(chats, "chat")),
    );
    let full = c.cost.decode_step(chats as u32, len_u);
    let full_bytes = c.cost.decode_bytes(chats as u32, len_u);
    s.push(c.decode_step_step(
        "full_decode_step",
        "Decode step with every chat at full length",
        &full,
        full_bytes,
    ));
    let full_ok = full.total_s <= tpot;
    s.push(
        Step::new("tpot_check", "Full house meets the TPOT target")
            .formula(
                "t_step ≤ TPOT",
                format!("{} ≤ {}", duration(full.total_s, 2), duration(tpot, 3)),
            )
            .check(full.total_s / tpot, full_ok),
    );
    let within = largest_batch_within(&c.cost, chats as u32, len_u, tpot);
    s.push(
        Step::new("chats_within_tpot", "Chats that decode within the target")
            .formula(
                "largest B with t_step(B, chat length) ≤ TPOT",
                format!(
                    "largest B ≤ {} with t_step(B, {}) ≤ {}",
                    int(chats),
                    num(len),
                    duration(tpot, 3)
                ),
            )
            .value(within as f64, "chats", plural(within as f64, "chat")),
    );

    let latency_binds = (within as f64) < chats;
    let readings = vec![
        read(
            "chats",
            Limit::Compute,
            Pressure::binding_if(latency_binds && !full.memory_bound()),
            "compute",
            &[
                ("compute", duration(full.compute_s, 2)),
                ("memory", duration(full.memory_s, 2)),
            ],
        ),
        read(
            "chats",
            Limit::HbmBandwidth,
            Pressure::binding_if(latency_binds && full.memory_bound()),
            "hbm",
            &[("bytes", gb(full_bytes, 4))],
        ),
        read(
            "chats",
            Limit::KvCapacity,
            Pressure::Binding,
            "kv",
            &[
                ("pool", int(pool)),
                ("chats", plural(chats, "chat")),
                ("length", num(len)),
            ],
        ),
        read(
            "chats",
            Limit::LatencyTarget,
            Pressure::binding_if(latency_binds),
            if !latency_binds {
                "latency_within"
            } else if within == 0 {
                "latency_none"
            } else {
                "latency_over"
            },
            &[
                ("step", duration(full.total_s, 2)),
                ("tpot", duration(tpot, 3)),
                ("within", plural(within as f64, "chat")),
            ],
        ),
    ];
    finish(Question::ChatsPerReplica, s, readings)
}
