//! The `host` question: how much host memory keeps a day of chats warm. A finished chat's KV
//! cache is its whole history (every turn's prompt and reply) times the bytes a token takes;
//! a day of chats is the chats that finish in a day times that. Beside it, what the chats that
//! will come back need: a cache that lets the least recently used go keeps a returning turn's
//! history only while it holds everything used since, so the turns served within one gap
//! between turns, each with its history, less what the GPUs' pools keep beside the replies in
//! flight (Little's law on those). Copying
//! a history back over PCIe is priced against computing it again by the cost model the
//! simulator's host tier uses ([`CostModel::kv_reload_time`],
//! [`CostModel::prefill_compute_time`]).

use super::*;
use std::sync::OnceLock;

/// `content/sizing-host.toml`: why each step comes out as it does, and the readings.
fn words() -> &'static OwnWords {
    static WORDS: OnceLock<OwnWords> = OnceLock::new();
    WORDS.get_or_init(|| {
        trainer_engine::files::read(trainer_engine::files::SIZING_HOST).unwrap_or_default()
    })
}

/// The words of the question's simulator check, once its piece is linked.
pub fn check_text() -> Option<crate::sizing::HostCheckText> {
    words().check.clone()
}

/// Bytes in a decimal gigabyte, as the host memory per GPU is typed.
const GB: f64 = 1e9;

/// Host memory for a day of chats, what the fleet has, and what returning chats need.
pub(super) fn host(c: &Ctx) -> Derivation {
    let rate = c.v("rate");
    let lp = c.v("prompt_tokens");
    let lo = c.v("output_tokens");
    let turns = c.v("turns");
    let think = c.v("think_s");
    let hours = c.v("warm_hours");
    let tpot = c.v("tpot_ms") / 1e3;
    let replicas = c.v("fleet_replicas");
    let host_gb = c.v("host_gb");
    let tp = c.tp as f64;
    let mut s = Vec::new();

    let chat_rate = rate / turns;
    s.push(
        Step::new("chat_rate", "New chats a second")
            .formula("λ / turns", format!("{} / {}", num(rate), num(turns)))
            .value(
                chat_rate,
                "chats/s",
                format!("{} chats/s", count(chat_rate)),
            ),
    );
    let history = turns * (lp + lo);
    s.push(
        Step::new("history_tokens", "History after a chat's last reply")
            .formula(
                "turns × (prompt + reply)",
                format!("{} × ({} + {})", num(turns), num(lp), num(lo)),
            )
            .value(history, "tokens", format!("{} tokens", int(history))),
    );
    let kv_step = c.kv_per_token_step();
    let kv = kv_step.value;
    s.push(kv_step);
    let chat_bytes = history * kv;
    s.push(
        Step::new("chat_bytes", "KV cache of a finished chat")
            .formula("history × kv", format!("{} × {} B", int(history), int(kv)))
            .value(chat_bytes, "B", gb(chat_bytes, 3)),
    );
    let window_s = hours * 3600.0;
    let window_chats = chat_rate * window_s;
    s.push(
        Step::new("window_chats", "Chats that finish in the window")
            .formula(
                "chats/s × hours × 3,600",
                format!("{} × {} × 3,600", count(chat_rate), num(hours)),
            )
            .value(
                window_chats,
                "chats",
                format!("{} chats", int(window_chats)),
            ),
    );
    let window_bytes = window_chats * chat_bytes;
    s.push(
        Step::new("window_host_bytes", "Host memory to keep them all warm")
            .formula(
                "chats × KV cache of a chat",
                format!("{} × {}", int(window_chats), gb(chat_bytes, 3)),
            )
            .value(window_bytes, "B", bytes(window_bytes)),
    );
    let gpus = replicas * tp;
    let fleet_host = gpus * host_gb * GB;
    s.push(
        Step::new("fleet_host_bytes", "Host memory the fleet has for KV")
            .formula(
                format!("replicas × {}host memory per GPU", c.g()),
                format!("{} × {}{} GB", int(replicas), c.g_num(), num(host_gb)),
            )
            .value(fleet_host, "B", bytes(fleet_host)),
    );
    let window_fits = window_bytes <= fleet_host;
    s.push(
        Step::new("window_check", "The window fits in the fleet's host memory")
            .formula(
                "memory to keep them all ≤ host memory",
                format!("{} ≤ {}", bytes(window_bytes), bytes(fleet_host)),
            )
            .check(ratio(window_bytes, fleet_host), window_fits),
    );
    let kept_s = if chat_rate * chat_bytes > 0.0 {
        fleet_host / (chat_rate * chat_bytes)
    } else {
        f64::INFINITY
    };
    s.push(
        Step::new(
            "kept_for",
            "How long the fleet's host memory keeps a finished chat",
        )
        .formula(
            "host memory / (chats/s × KV cache of a chat)",
            format!(
                "{} / ({} × {})",
                bytes(fleet_host),
                count(chat_rate),
                gb(chat_bytes, 3)
            ),
        )
        .value(kept_s, "s", duration(kept_s, 2)),
    );

    // The chats that will come back: between two turns a user reads the reply and thinks.
    let gap = lo * tpot + think;
    s.push(
        Step::new("turn_gap", "Time between a chat's turns")
            .formula(
                "reply × TPOT + time before the next turn",
                format!(
                    "{} × {} + {}",
                    num(lo),
                    duration(tpot, 3),
                    duration(think, 2)
                ),
            )
            .value(gap, "s", duration(gap, 2)),
    );
    // Least recently used out first: a returning turn finds its history only while the
    // cache still holds everything used since, the chats that have ended included.
    let recent = rate * gap;
    s.push(
        Step::new("recent_turns", "Turns served within one gap")
            .formula(
                "λ × time between turns",
                format!("{} × {}", num(rate), duration(gap, 2)),
            )
            .value(recent, "turns", format!("{} turns", count(recent))),
    );
    let after = (turns + 1.0) / 2.0 * (lp + lo);
    s.push(
        Step::new("turn_history", "History after a turn, on average")
            .formula(
                "(turns + 1) / 2 × (prompt + reply)",
                format!("({} + 1) / 2 × ({} + {})", num(turns), num(lp), num(lo)),
            )
            .value(after, "tokens", format!("{} tokens", int(after))),
    );
    let recent_bytes = recent * after * kv;
    s.push(
        Step::new("recent_bytes", "KV cache used within one gap")
            .formula(
                "turns within one gap × history after a turn × kv",
                format!("{} × {} × {} B", count(recent), int(after), int(kv)),
            )
            .value(recent_bytes, "B", bytes(recent_bytes)),
    );
    let pool = c.cost.kv_pool_tokens(&c.memory);
    s.push(kv_pool_step(c, pool));
    // Little's law per replica: replies in flight hold their whole context.
    let running = rate / replicas * lo * tpot * after;
    s.push(
        Step::new(
            "running_tokens",
            "KV cache the replies in flight hold, per replica",
        )
        .formula(
            "λ / replicas × reply × TPOT × history after a turn",
            format!(
                "{} / {} × {} × {} × {}",
                num(rate),
                int(replicas),
                num(lo),
                duration(tpot, 3),
                int(after)
            ),
        )
        .value(running, "tokens", format!("{} tokens", int(running))),
    );
    let idle_bytes = replicas * (pool - running).max(0.0) * kv;
    s.push(
        Step::new(
            "gpu_idle_bytes",
            "What the fleet's KV pools keep beside them",
        )
        .formula(
            "replicas × max(0, KV pool − in flight) × kv",
            format!(
                "{} × max(0, {} − {}) × {} B",
                int(replicas),
                int(pool),
                int(running),
                int(kv)
            ),
        )
        .value(idle_bytes, "B", bytes(idle_bytes)),
    );
    let needed = (recent_bytes - idle_bytes).max(0.0) / gpus;
    s.push(
        Step::new(
            "host_per_gpu",
            "Host memory per GPU for the chats that come back",
        )
        .formula(
            "max(0, used within one gap − kept by the pools) / (replicas × G)",
            format!(
                "max(0, {} − {}) / ({} × {})",
                bytes(recent_bytes),
                bytes(idle_bytes),
                int(replicas),
                int(tp)
            ),
        )
        .value(needed, "B", gb(needed, 3)),
    );
    let ceiling = c.v("host_ceiling");
    let sized = needed / ceiling;
    s.push(
        Step::new("host_sized", "Host memory per GPU, with headroom")
            .formula(
                "host memory needed per GPU / ceiling",
                format!("{} / {}", gb(needed, 3), num(ceiling)),
            )
            .value(sized, "B", gb(sized, 3)),
    );
    let open_fits = sized <= host_gb * GB;
    s.push(
        Step::new("host_check", "It fits in each GPU's share of host memory")
            .formula(
                "host memory with headroom ≤ host memory per GPU",
                format!("{} ≤ {} GB", gb(sized, 3), num(host_gb)),
            )
            .check(ratio(sized, host_gb * GB), open_fits),
    );

    // What a returning turn saves: its history copied back against computed again.
    let waiting = turns / 2.0 * (lp + lo);
    s.push(
        Step::new(
            "waiting_history",
            "History a returning turn finds, on average",
        )
        .formula(
            "turns / 2 × (prompt + reply)",
            format!("{} / 2 × ({} + {})", num(turns), num(lp), num(lo)),
        )
        .value(waiting, "tokens", format!("{} tokens", int(waiting))),
    );
    let tokens = waiting.round().clamp(1.0, u32::MAX as f64) as u32;
    let reload = c.cost.kv_reload_time(tokens);
    s.push(
        Step::new("reload_time", "Copying a waiting chat's history back")
            .formula(
                format!("history × kv / ({}PCIe)", c.g()),
                format!(
                    "{} × {} B / ({}{} GB/s)",
                    int(waiting),
                    int(kv),
                    c.g_num(),
                    num(c.v("pcie_gb_s"))
                ),
            )
            .value(reload, "s", duration(reload, 2)),
    );
    let t_prefill = c.cost.prefill_time_per_token();
    let recompute = c.cost.prefill_compute_time(0, tokens);
    s.push(
        Step::new("recompute_time", "Computing it again")
            .formula(
                "prefill of the history (its parameters' and attention's arithmetic)",
                format!("{} × {} + attention", int(waiting), duration(t_prefill, 3)),
            )
            .value(recompute, "s", duration(recompute, 2)),
    );
    let speedup = ratio(recompute, reload);
    s.push(
        Step::new("reload_speedup", "Copying back against computing")
            .formula(
                "compute time / copy time",
                format!("{} / {}", duration(recompute, 2), duration(reload, 2)),
            )
            .value(speedup, "×", format!("{}×", sig(speedup, 3))),
    );

    let w = words();
    let figures = [
        ("window", bytes(window_bytes)),
        ("hours", num(hours)),
        ("fleet_host", bytes(fleet_host)),
        (
            "times",
            format!("{}×", sig(ratio(window_bytes, fleet_host), 3)),
        ),
        ("kept", duration(kept_s, 2)),
        ("recent", count(recent)),
        ("recent_bytes", bytes(recent_bytes)),
        ("gap", duration(gap, 2)),
        ("idle_bytes", bytes(idle_bytes)),
        ("needed", gb(needed, 3)),
        ("sized", gb(sized, 3)),
        ("host_gb", format!("{} GB", num(host_gb))),
        ("reload", duration(reload, 2)),
        ("recompute", duration(recompute, 2)),
        ("speedup", format!("{}×", sig(speedup, 3))),
    ];
    // The cache's bytes per token and the histories set the answer, fitting or not.
    let mut readings = vec![w.reading(
        Limit::KvCapacity,
        Pressure::Binding,
        if window_fits {
            "window_fits"
        } else {
            "window_outgrows"
        },
        &figures,
    )];
    readings.push(w.reading(
        Limit::LatencyTarget,
        share_pressure(open_fits, ratio(sized, host_gb * GB)),
        if needed <= 0.0 {
            "recent_on_gpus"
        } else if open_fits {
            "recent_fits"
        } else {
            "recent_short"
        },
        &figures,
    ));
    let copy_wins = reload < recompute;
    readings.push(w.reading(
        Limit::Compute,
        if copy_wins {
            Pressure::Slack
        } else {
            Pressure::Binding
        },
        if copy_wins {
            "copy_wins"
        } else {
            "compute_wins"
        },
        &figures,
    ));
    w.fill_why(&mut s);
    finish(Question::Host, s, readings)
}

/// `a / b`, infinite for a positive `a` over nothing and zero for nothing over nothing.
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else if a > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// Bytes in the largest decimal unit that keeps the figure at one or more: `708 TB`, `1.95 TB`,
/// `192 GB`, three significant figures.
fn bytes(b: f64) -> String {
    if b >= 1e15 {
        format!("{} PB", sig(b / 1e15, 3))
    } else if b >= 1e12 {
        format!("{} TB", sig(b / 1e12, 3))
    } else {
        gb(b, 3)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{derive, Inputs, Question};

    /// Every sentence of the question's file is used and every step has one.
    #[test]
    fn every_sentence_is_used_and_every_step_has_one() {
        super::super::own_words_are_all_used(
            Question::Host,
            include_str!("../../../../content/sizing-host.toml"),
            include_str!("host.rs"),
        );
    }

    /// The check's words parse, and every tier has a name.
    #[test]
    fn the_checks_words_are_there() {
        let t = super::check_text().expect("[check] of sizing-host.toml");
        for id in ["none", "exact", "answer", "double", "have"] {
            assert!(!t.arm(id).is_empty(), "{id}");
        }
    }

    /// The seed's day of chats by hand: 10 new chats a second, 6,250 tokens of history at
    /// 131,072 bytes each, for 86,400 seconds.
    #[test]
    fn a_day_of_the_seeds_chats_by_hand() {
        let d = derive(Question::Host, &Inputs::defaults(Question::Host)).expect("derives");
        let v = |id: &str| d.step(id).unwrap_or_else(|| panic!("step {id}")).value;
        assert_eq!(v("chat_rate"), 10.0);
        assert_eq!(v("history_tokens"), 6250.0);
        assert_eq!(v("chat_bytes"), 6250.0 * 131_072.0);
        assert_eq!(v("window_chats"), 864_000.0);
        assert_eq!(v("window_host_bytes"), 864_000.0 * 6250.0 * 131_072.0);
        assert_eq!(d.answer().map(|s| s.id), Some("window_host_bytes"));
        // Eight H100s with 192 GB each hold 1.536 TB: a day is some 460 times that.
        assert_eq!(v("fleet_host_bytes"), 8.0 * 192e9);
        assert_eq!(d.step("window_check").and_then(|s| s.check), Some(false));
        // 250 tokens read at 20 ms, then 45 s: 50 s between turns.
        assert!((v("turn_gap") - 50.0).abs() < 1e-9);
        assert!((v("recent_turns") - 50.0 * 50.0).abs() < 1e-9);
        assert_eq!(v("turn_history"), 3750.0);
        assert!((v("recent_bytes") - 50.0 * 50.0 * 3750.0 * 131_072.0).abs() < 1.0);
        // Fifty turns a second over eight replicas, each reply 5 s in flight with its history.
        assert!((v("running_tokens") - 50.0 / 8.0 * 250.0 * 0.02 * 3750.0).abs() < 1e-6);
        assert_eq!(v("waiting_history"), 3125.0);
        // H100's PCIe Gen5 at 64 GB/s each way.
        assert!((v("reload_time") - 3125.0 * 131_072.0 / 64e9).abs() < 1e-12);
        assert!(v("reload_speedup") > 1.0, "copying back beats computing");
    }
}
