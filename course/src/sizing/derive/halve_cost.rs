//! The `halve-cost` question: the same traffic on half the replicas. Each replica then carries
//! twice the tokens, so it holds a bigger batch, and a bigger batch is a longer step. Whether the
//! per-token target survives depends on what a step pays for, which is what the number formats
//! change: FP8 weights halve the weights' read, FP8 activations run the matmuls on FP8 tensor
//! cores, an FP8 cache halves the cache's read and doubles the pool. The learner's formats are
//! set beside BF16 at the same budget, both priced by the cost model the simulator runs.

use super::*;
use std::sync::OnceLock;
use trainer_engine::format::money;

/// The largest decode batch looked at (vLLM's `max_num_seqs` range).
const MAX_BATCH: u32 = 4096;

/// `content/sizing-halve-cost.toml`: why each step comes out as it does, and the readings.
fn words() -> &'static OwnWords {
    static WORDS: OnceLock<OwnWords> = OnceLock::new();
    WORDS.get_or_init(|| {
        trainer_engine::files::read(trainer_engine::files::SIZING_HALVE_COST).unwrap_or_default()
    })
}

/// How one replica carries its share of the traffic in one set of number formats.
#[derive(Clone, Copy, Debug)]
struct Held {
    /// The batch it settles at: the smallest whose output rate keeps up (or, when none that the
    /// pool holds does, the fullest the pool holds).
    batch: u32,
    /// The step at that batch, with its share of prompt tokens.
    step: StepCost,
    /// Whether that batch keeps up with the arrivals.
    keeps_up: bool,
    /// Whether no batch at all would keep up, however large the pool: the step's arithmetic
    /// grows as fast as its tokens.
    compute_short: bool,
    /// The most sequences the pool holds at the average context.
    pool_batch: u32,
    /// The pool, tokens.
    pool: f64,
    /// The average context, tokens.
    context: u32,
}

impl Held {
    /// The per-token time as shown, saying so when the replica falls behind.
    fn shown(&self) -> String {
        if self.keeps_up {
            duration(self.step.total_s, 2)
        } else {
            format!("{}, and falling behind", duration(self.step.total_s, 2))
        }
    }

    /// Output tokens a second at the settled batch.
    fn throughput(&self) -> f64 {
        if self.step.total_s > 0.0 {
            self.batch as f64 / self.step.total_s
        } else {
            0.0
        }
    }
}

/// The batch one replica of `cost` settles at when it must give `need` output tokens a second,
/// each decoding sequence bringing `share` prompt tokens to every step (chunked prefill) at an
/// average context of `context`: Little's law, streams held = arrivals × how long each lasts.
fn settle(
    cost: &CostModel,
    memory: &MemoryConfig,
    need: f64,
    context: u32,
    prompt: f64,
    output: f64,
) -> Held {
    let pool = cost.kv_pool_tokens(memory);
    let pool_batch = (pool / context as f64).floor().clamp(0.0, MAX_BATCH as f64) as u32;
    let step_at = |b: u32| plain_step(cost, b, context, prompt, output);
    let found = (1..=pool_batch).find(|&b| {
        let t = step_at(b).total_s;
        t > 0.0 && b as f64 / t >= need
    });
    let batch = found.unwrap_or(pool_batch.max(1));
    let most = step_at(MAX_BATCH).total_s;
    Held {
        batch,
        step: step_at(batch),
        keeps_up: found.is_some(),
        compute_short: found.is_none() && !(most > 0.0 && MAX_BATCH as f64 / most >= need),
        pool_batch,
        pool,
        context,
    }
}

/// The step of a settled batch: its time, and what it waits on, in a formula.
fn step_formula(held: &Held, share: f64) -> (String, String) {
    (
        "max(compute over B × (1 + prompt share) tokens, bytes / (BW × MBU))".to_string(),
        format!(
            "max({} over {} tokens, {})",
            duration(held.step.compute_s, 2),
            int((held.batch as f64 * (1.0 + share)).round()),
            duration(held.step.memory_s, 2)
        ),
    )
}

/// The settled batch as a step.
fn batch_step(id: &'static str, label: &'static str, held: &Held, need: f64) -> Step {
    let thr = held.throughput();
    let (formula, substituted, shown) = if held.keeps_up {
        (
            "smallest B with B / t_step(B) ≥ tokens per second per replica",
            format!(
                "{} / {} = {} tok/s ≥ {} tok/s",
                int(held.batch as f64),
                duration(held.step.total_s, 2),
                count(thr),
                count(need)
            ),
            format!("{} sequences", int(held.batch as f64)),
        )
    } else {
        (
            "B / t_step(B) < tokens per second per replica for every B the pool holds",
            format!(
                "{} / {} = {} tok/s < {} tok/s",
                int(held.batch as f64),
                duration(held.step.total_s, 2),
                count(thr),
                count(need)
            ),
            format!(
                "none keeps up (the pool's {} at most)",
                int(held.pool_batch as f64)
            ),
        )
    };
    Step::new(id, label)
        .formula(formula, substituted)
        .value(held.batch as f64, "sequences", shown)
}

/// The per-token time of a settled batch as a step.
fn tpot_step(id: &'static str, label: &'static str, held: &Held, share: f64) -> Step {
    let (formula, substituted) = step_formula(held, share);
    Step::new(id, label)
        .formula(formula, substituted)
        .value(held.step.total_s, "s", held.shown())
}

/// A per-token time against the target as a check step; its share of the limit is the worse
/// of the step against the target and the tokens asked for against those the batch gives.
fn target_check(
    id: &'static str,
    label: &'static str,
    held: &Held,
    target: f64,
    need: f64,
) -> Step {
    let ok = held.keeps_up && held.step.total_s <= target;
    let behind = if held.keeps_up {
        0.0
    } else if held.pool_batch == 0 {
        // Not one sequence of the average context fits: the share is of the pool it needs.
        held.context as f64 / held.pool.max(1.0)
    } else {
        need / held.throughput().max(f64::MIN_POSITIVE)
    };
    Step::new(id, label)
        .formula(
            "t_step ≤ TPOT target",
            format!(
                "{} ≤ {}",
                duration(held.step.total_s, 2),
                duration(target, 3)
            ),
        )
        .check((held.step.total_s / target).max(behind), ok)
}

/// Half the fleet for the same traffic: the learner's number formats against BF16.
pub(super) fn halve_cost(c: &Ctx) -> Derivation {
    let rate = c.v("rate");
    let (lp, lo) = (c.v("prompt_tokens"), c.v("output_tokens"));
    let target = c.v("tpot_ms") / 1e3;
    let price = c.v("price");
    let before = c.v("replicas_before");
    let after = c.v("replicas");
    let tp = c.tp as f64;
    let mut s = Vec::new();
    let (_, ctx) = c.avg_context_step(&mut s);

    let gpus = after * tp;
    s.push(
        Step::new("gpus", "GPUs after the cut")
            .formula(
                "replicas × G",
                format!("{} × {}", int(after), plural(tp, "GPU")),
            )
            .value(gpus, "GPUs", plural(gpus, "GPU")),
    );
    let output_tps = rate * lo;
    // Dollars per million output tokens for `n` replicas carrying the traffic.
    let per_million = |n: f64| n * tp * price / (output_tps * 3600.0 / 1e6);
    for (id, label, n) in [
        (
            "cost_before",
            "Cost per million output tokens before",
            before,
        ),
        ("cost_after", "Cost per million output tokens after", after),
    ] {
        let cost = per_million(n);
        s.push(
            Step::new(id, label)
                .formula(
                    "replicas × G × price / (λ × output tokens × 3,600 / 10⁶)",
                    format!(
                        "{} × {} × {} / ({} × {} × 3,600 / 1,000,000)",
                        int(n),
                        int(tp),
                        money(price),
                        num(rate),
                        num(lo)
                    ),
                )
                .value(cost, "$", money(cost)),
        );
    }
    let need = output_tps / after;
    s.push(
        Step::new("replica_rate", "Output tokens per second per replica")
            .formula(
                "λ × output tokens / replicas",
                format!("{} × {} / {}", num(rate), num(lo), int(after)),
            )
            .value(need, "tok/s", format!("{} tok/s", count(need))),
    );
    let share = lp / lo;
    s.push(
        Step::new(
            "prompt_share",
            "Prompt tokens per step, per decoding sequence",
        )
        .formula("prompt / output", format!("{} / {}", num(lp), num(lo)))
        .value(share, "tokens", format!("{} tokens", sig(share, 3))),
    );

    // BF16 on the same GPUs, the learner's other figures kept. The inputs were validated and
    // BF16 only ever needs more memory than FP8, so a refusal here is a replica whose BF16
    // weights leave no room: it holds nothing.
    let mut plain = c.inputs.clone();
    let _ = plain.set_choice(Question::HalveCost, "weight_dtype", "bf16");
    let _ = plain.set_choice(Question::HalveCost, "kv_dtype", "bf16");
    let bf16 = cost_and_memory(&plain)
        .ok()
        .filter(|(cost, memory, _)| cost.kv_pool_tokens(memory) >= ctx as f64)
        .map(|(cost, memory, _)| settle(&cost, &memory, need, ctx, lp, lo));
    if let Some(held) = &bf16 {
        s.push(batch_step(
            "bf16_batch",
            "Batch each replica holds in BF16",
            held,
            need,
        ));
        s.push(tpot_step(
            "bf16_tpot",
            "Per-token time in BF16",
            held,
            share,
        ));
        s.push(target_check(
            "bf16_check",
            "BF16 meets the per-token target",
            held,
            target,
            need,
        ));
    }

    s.push(c.weight_bytes_step());
    s.push(c.kv_per_token_step());
    let mine = settle(&c.cost, &c.memory, need, ctx, lp, lo);
    s.push(kv_pool_step(c, mine.pool));
    s.push(batch_step(
        "chosen_batch",
        "Batch each replica holds in your formats",
        &mine,
        need,
    ));
    s.push(tpot_step(
        "budget_tpot",
        "Per-token time in your formats",
        &mine,
        share,
    ));
    s.push(target_check(
        "budget_check",
        "Your formats meet the per-token target",
        &mine,
        target,
        need,
    ));

    // The verdict: the target against the step, what the step waits on, and the pool.
    let w = words();
    let formats = [
        ("weights", c.inputs.weight_format().label().to_string()),
        ("cache", c.inputs.kv_dtype().label().to_string()),
        ("fleet", plural(after, "replica")),
        ("batch", int(mine.batch as f64)),
        ("tpot", duration(mine.step.total_s, 2)),
        ("target", duration(target, 3)),
        (
            "bf16",
            bf16.map_or_else(|| "nothing".to_string(), |h| h.shown()),
        ),
    ];
    let ok = mine.keeps_up && mine.step.total_s <= target;
    let tight = share_pressure(ok, mine.step.total_s / target);
    let mut readings = vec![w.reading(
        Limit::LatencyTarget,
        tight,
        if !mine.keeps_up {
            "falls_behind"
        } else if ok {
            "target_holds"
        } else {
            "target_misses"
        },
        &formats,
    )];
    let bytes = c.cost.decode_bytes(mine.batch, ctx);
    let weights = c.cost.weight_bytes();
    let step_figures = [
        ("compute", duration(mine.step.compute_s, 2)),
        ("memory", duration(mine.step.memory_s, 2)),
        ("weights", percent(weights / bytes)),
        ("batch", int(mine.batch as f64)),
    ];
    let memory_bound = mine.step.memory_bound();
    readings.push(w.reading(
        Limit::HbmBandwidth,
        // What the step waits on sets the answer, the per-token time.
        Pressure::binding_if(memory_bound),
        if memory_bound {
            "hbm_sets_step"
        } else {
            "hbm_room"
        },
        &step_figures,
    ));
    readings.push(w.reading(
        Limit::Compute,
        Pressure::binding_if(!memory_bound),
        if memory_bound {
            "compute_room"
        } else {
            "compute_sets_step"
        },
        &step_figures,
    ));
    let in_use = mine.batch as f64 * ctx as f64;
    let kv_share = if mine.pool > 0.0 {
        in_use / mine.pool
    } else {
        f64::INFINITY
    };
    readings.push(w.reading(
        Limit::KvCapacity,
        if mine.compute_short {
            Pressure::Slack
        } else {
            share_pressure(mine.keeps_up, kv_share)
        },
        if mine.keeps_up {
            "kv_room"
        } else if mine.compute_short {
            "kv_not_first"
        } else {
            "kv_full"
        },
        &[
            ("share", percent(kv_share)),
            ("pool", int(mine.pool_batch as f64)),
            ("batch", int(mine.batch as f64)),
        ],
    ));
    w.fill_why(&mut s);
    finish(Question::HalveCost, s, readings)
}

#[cfg(test)]
mod tests {
    /// Every sentence of the question's file is used and every step has one.
    #[test]
    fn every_sentence_is_used_and_every_step_has_one() {
        super::super::own_words_are_all_used(
            super::Question::HalveCost,
            include_str!("../../../../content/sizing-halve-cost.toml"),
            include_str!("halve_cost.rs"),
        );
    }
}
