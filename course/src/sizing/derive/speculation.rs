//! The `speculation` question: at what decode batch, and so at what arrival rate, speculative
//! decoding with an EAGLE-style head stops paying. A verifying step checks each sequence's last
//! token and its guesses in one pass of the target, after the head's passes; it pays while the
//! tokens it gains per step outrun what it costs over a plain step. Both steps come from the
//! engine's own pricing of a speculating batch ([`verify_step`]), so the crossover here is the
//! one the replica simulator runs into.

use super::*;
use std::sync::OnceLock;
use trainer_engine::replica::spec::{pool_tokens_with, verify_step, SpecMethod, SpeculativeConfig};

/// The largest decode batch the crossover is looked for in (vLLM's `max_num_seqs` range).
pub const MAX_BATCH: u32 = 4096;

/// `content/sizing-speculation.toml`: why each step comes out as it does, and the readings.
fn words() -> &'static OwnWords {
    static WORDS: OnceLock<OwnWords> = OnceLock::new();
    WORDS.get_or_init(|| {
        trainer_engine::files::read(trainer_engine::files::SIZING_SPECULATION).unwrap_or_default()
    })
}

/// The words of the question's simulator check (the `[sweep]` table of its file): the load
/// swept around the crossover ([`crate::sizing::spec_check_fleet`]).
pub fn check_text() -> Option<crate::sizing::sweep::SweepText> {
    words().sweep.clone()
}

/// The speculation the inputs describe: an EAGLE-style head guessing `spec_k` tokens, each right
/// with probability `acceptance`.
fn config(c: &Ctx) -> SpeculativeConfig {
    SpeculativeConfig {
        method: SpecMethod::Eagle,
        num_speculative_tokens: c.v("spec_k") as u32,
        acceptance_rate: c.v("acceptance"),
        disable_by_batch_size: None,
    }
}

/// A plain step and a speculating one at `batch` sequences of `context` tokens, each with its
/// share of prompt tokens: (plain step, target's verifying step, proposer's time), seconds.
fn steps_at(
    c: &Ctx,
    cfg: &SpeculativeConfig,
    batch: u32,
    context: u32,
) -> (StepCost, StepCost, f64) {
    let (lp, lo) = (c.v("prompt_tokens"), c.v("output_tokens"));
    let plain = plain_step(&c.cost, batch, context, lp, lo);
    let chunk = prompt_chunk(batch, lp, lo, cfg.expected_tokens_per_step());
    // The inputs were validated, so the configuration is in range: a refusal prices nothing.
    let (verify, draft) = verify_step(cfg, &c.cost, batch, context, &chunk)
        .unwrap_or((StepCost::default(), f64::INFINITY));
    (plain, verify, draft)
}

/// Per-token speedup at `batch`: tokens gained per verifying step times the plain step's time,
/// over the speculating step's.
fn speedup(gained: f64, plain: &StepCost, verify: &StepCost, draft: f64) -> f64 {
    let spec = verify.total_s + draft;
    if spec > 0.0 {
        gained * plain.total_s / spec
    } else {
        0.0
    }
}

/// Where speculation stops paying, at what load, and how much it gains at the learner's batch.
pub(super) fn speculation(c: &Ctx) -> Derivation {
    let batch = c.v("batch") as u32;
    let lo = c.v("output_tokens");
    let cfg = config(c);
    let (k, a) = (cfg.num_speculative_tokens, cfg.acceptance_rate);
    let mut s = Vec::new();
    let (_, ctx) = c.avg_context_step(&mut s);
    let gained = cfg.expected_tokens_per_step();
    s.push(
        Step::new("tokens_per_step", "Tokens gained per verifying step")
            .formula(
                "(1 − a^(k+1)) / (1 − a)",
                format!("(1 − {}^{}) / (1 − {})", num(a), k + 1, num(a)),
            )
            .value(gained, "tokens", format!("{} tokens", fixed(gained, 2))),
    );
    let lp = c.v("prompt_tokens");
    let share = lp / lo;
    // Tokens a verifying step of `b` sequences computes: each one's token and guesses, and its
    // share of prompt tokens.
    let checked = |b: u32| (b as f64 * ((k + 1) as f64 + share * gained)).round();
    s.push(
        Step::new(
            "prompt_share",
            "Prompt tokens per step, per decoding sequence",
        )
        .formula("prompt / output", format!("{} / {}", num(lp), num(lo)))
        .value(share, "tokens", format!("{} tokens", sig(share, 3))),
    );
    let (plain, verify, draft) = steps_at(c, &cfg, batch, ctx);
    let plain_tokens = batch as f64 * (1.0 + share);
    s.push(
        Step::new("decode_step", "Plain step")
            .formula(
                "max(compute over B × (1 + prompt share) tokens, bytes / (BW × MBU))",
                format!(
                    "max({} over {} tokens, {})",
                    duration(plain.compute_s, 2),
                    int(plain_tokens.round()),
                    duration(plain.memory_s, 2)
                ),
            )
            .value(plain.total_s, "s", duration(plain.total_s, 2))
            // Memory-bound or not is read from this step's figures, as every question reads it.
            .why(words::part(
                if plain.memory_bound() {
                    "decode_memory_bound"
                } else {
                    "decode_compute_bound"
                },
                &[],
            )),
    );
    s.push(
        Step::new("verify_step", "Verifying step of the target")
            .formula(
                "max(compute over B × (k + 1 + prompt share × gained) tokens, bytes / (BW × MBU))",
                format!(
                    "max({} over {} tokens, {})",
                    duration(verify.compute_s, 2),
                    int(checked(batch)),
                    duration(verify.memory_s, 2)
                ),
            )
            .value(verify.total_s, "s", duration(verify.total_s, 2)),
    );
    s.push(
        Step::new("proposer_time", "The head's guesses")
            .formula(
                "k × (one layer + output head) over B sequences, one layer over the prompt tokens",
                format!("{} passes over {}", k, int(batch as f64)),
            )
            .value(draft, "s", duration(draft, 2)),
    );
    let spec_s = verify.total_s + draft;
    s.push(
        Step::new("spec_step", "Speculating step")
            .formula(
                "verifying step + guesses",
                format!("{} + {}", duration(verify.total_s, 2), duration(draft, 2)),
            )
            .value(spec_s, "s", duration(spec_s, 2)),
    );
    let here = speedup(gained, &plain, &verify, draft);
    s.push(
        Step::new("speedup", "Per-token speedup at this batch")
            .formula(
                "tokens per step × plain step / speculating step",
                format!(
                    "{} × {} / {}",
                    fixed(gained, 2),
                    duration(plain.total_s, 2),
                    duration(spec_s, 2)
                ),
            )
            .value(here, "×", format!("{}×", fixed(here, 2))),
    );

    // The most sequences the pool holds at this context, the head's weights and cache beside
    // the target's.
    let pool = pool_tokens_with(&cfg, &c.cost, &c.memory).unwrap_or(0.0);
    let most = (pool / ctx as f64).floor().clamp(0.0, MAX_BATCH as f64);
    s.push(
        Step::new("pool_batch", "Most sequences the KV pool holds")
            .formula(
                "pool tokens / context",
                format!("{} / {}", int(pool), int(ctx as f64)),
            )
            .value(most, "sequences", format!("{} sequences", int(most))),
    );
    // The smallest batch at which a speculating step gains no more than a plain one, among
    // those the pool can hold.
    let crossover = (1..=most as u32).find(|&b| {
        let (p, v, d) = steps_at(c, &cfg, b, ctx);
        speedup(gained, &p, &v, d) <= 1.0
    });
    // Without a crossover in the pool, the figures are read at the fullest batch it holds:
    // guessing pays at least that far.
    let at = crossover.unwrap_or((most as u32).max(1));
    let (cross_plain, cross_verify, _) = steps_at(c, &cfg, at, ctx);
    let b_star = at as f64;
    let found = crossover.is_some();
    s.push(
        Step::new("crossover_batch", "Batch where guessing stops paying")
            .formula(
                "smallest B with speedup(B) ≤ 1",
                if found {
                    format!("speedup({}) ≤ 1", int(b_star))
                } else {
                    format!("speedup(B) > 1 for every B up to {}", int(b_star))
                },
            )
            .value(
                b_star,
                "sequences",
                if found {
                    format!("{} sequences", int(b_star))
                } else {
                    format!("beyond the pool's {} sequences", int(b_star))
                },
            ),
    );
    let tpot = cross_plain.total_s;
    s.push(
        Step::new("crossover_tpot", "Per-token time at that batch")
            .formula("plain step at B*", format!("plain step at {}", int(b_star)))
            .value(
                tpot,
                "s",
                if found {
                    duration(tpot, 2)
                } else {
                    format!("{} (the pool full)", duration(tpot, 2))
                },
            ),
    );
    // Little's law on the decode alone: a replica holding B* streams, each lasting its output
    // tokens times the per-token time, takes B* / (output × TPOT) requests a second.
    let rate = if tpot > 0.0 {
        b_star / (lo * tpot)
    } else {
        0.0
    };
    s.push(
        Step::new(
            "crossover_rate",
            "Arrival rate per replica where it stops paying",
        )
        .formula(
            "B* / (output tokens × TPOT)",
            format!("{} / ({} × {})", int(b_star), num(lo), duration(tpot, 3)),
        )
        .value(
            rate,
            "req/s",
            if found {
                format!("{} req/s", sig(rate, 3))
            } else {
                format!("above {} req/s", sig(rate, 3))
            },
        ),
    );

    let bound = cross_verify.compute_s > cross_verify.memory_s;
    let times = [
        ("batch", int(b_star)),
        ("tokens", int(checked(at))),
        ("compute", duration(cross_verify.compute_s, 2)),
        ("memory", duration(cross_verify.memory_s, 2)),
    ];
    let mut readings = Vec::new();
    if found {
        readings.push(words().reading(
            Limit::Compute,
            Pressure::binding_if(bound),
            if bound {
                "compute_crossover"
            } else {
                "compute_room"
            },
            &times,
        ));
        readings.push(words().reading(
            Limit::HbmBandwidth,
            Pressure::binding_if(!bound),
            if bound { "hbm_room" } else { "hbm_guesses" },
            &times,
        ));
        let over = batch as f64 > most;
        readings.push(words().reading(
            Limit::KvCapacity,
            if over {
                Pressure::Secondary
            } else {
                Pressure::Slack
            },
            if over { "kv_batch_over" } else { "kv_room" },
            &[
                ("pool", int(most)),
                ("batch", int(batch as f64)),
                ("crossover", int(b_star)),
            ],
        ));
    } else {
        readings.push(words().reading(
            Limit::Compute,
            Pressure::Slack,
            "compute_never",
            &[("pool", int(most))],
        ));
        readings.push(words().reading(
            Limit::KvCapacity,
            Pressure::Binding,
            "kv_full",
            &[("pool", int(most)), ("rate", sig(rate, 3))],
        ));
    }
    // Each step's sentence from this question's own words (the shared average context's comes
    // from sizing-why.toml, as for every question).
    words().fill_why(&mut s);
    finish(Question::Speculation, s, readings)
}

#[cfg(test)]
mod tests {
    /// Every sentence of the question's file is used and every step has one.
    #[test]
    fn every_sentence_is_used_and_every_step_has_one() {
        super::super::own_words_are_all_used(
            super::Question::Speculation,
            include_str!("../../../../content/sizing-speculation.toml"),
            include_str!("speculation.rs"),
        );
    }
}
