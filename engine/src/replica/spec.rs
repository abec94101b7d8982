//! Speculative decoding, as vLLM's `--speculative-config` runs it: a proposer guesses `k`
//! tokens for every decoding sequence, the target model verifies them all in one step (the
//! sequence's last token plus its `k` guesses, each counted against the step's token budget),
//! the guesses are accepted up to the first wrong one, the target's own next token comes free
//! with them, and the rejected guesses are rolled back from the sequence's computed tokens.
//! As in vLLM's v1 scheduler (`num_computed_tokens -= num_rejected`; the KV cache manager
//! allocates up to `cdiv(tokens needing a slot, block size)` and frees only when a request
//! ends or is preempted), the blocks the rejected guesses' slots took stay with the request,
//! and its next guesses write over them.
//!
//! What a guess costs and how often it is right are the two things that decide whether it
//! pays: the proposer's time comes from the one cost model (a draft model's decode steps, an
//! EAGLE-style head the size of one of the target's layers, or nothing on the GPU for n-gram
//! lookup), and the acceptance rate is a property of the workload, given here. Acceptance is
//! drawn once per sequence and step from a hash of the request and its position, so a run is
//! the same whatever else shares its steps.

use crate::catalog::{draft_or_error, Dtype, ModelSpec};
use crate::cost::{
    BatchItem, BatchTotals, CostModel, Deployment, Efficiency, MemoryConfig, StepCost,
};
use crate::error::{check_in, ConfigError};
use serde::{Deserialize, Serialize};
use std::ops::RangeInclusive;

/// How the guesses are made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SpecMethod {
    /// A small model of the same family (a catalog draft model, by id) decodes `k` tokens ahead.
    DraftModel { model: String },
    /// An EAGLE-style head on the target's last hidden state: its cost is one of the target's
    /// layers per guess.
    Eagle,
    /// Prompt lookup: the guesses are copied from an earlier match in the sequence, on the CPU.
    Ngram,
}

/// Speculative decoding on a replica.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpeculativeConfig {
    pub method: SpecMethod,
    /// Guesses per sequence per step (vLLM's `num_speculative_tokens`).
    pub num_speculative_tokens: u32,
    /// Chance that a guess is right, given that the ones before it were (0-1): a property of
    /// the workload (code and templated text accept far more than open-ended chat).
    pub acceptance_rate: f64,
    /// Speculate only while fewer than this many requests are running (vLLM's
    /// `disable_by_batch_size`: at or above it, a step guesses for nobody), so a busy replica
    /// stops paying for guesses its compute-bound steps cannot afford. None: always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disable_by_batch_size: Option<u32>,
}

impl SpeculativeConfig {
    /// Guesses per step.
    pub const TOKENS_RANGE: RangeInclusive<f64> = 1.0..=16.0;
    /// The acceptance rate, a fraction.
    pub const ACCEPTANCE_RANGE: RangeInclusive<f64> = 0.0..=1.0;
    /// The running-request count that turns speculation off.
    pub const DISABLE_BY_BATCH_SIZE_RANGE: RangeInclusive<f64> = 1.0..=4096.0;

    pub fn validate(&self) -> Result<(), ConfigError> {
        check_in(
            "num_speculative_tokens",
            self.num_speculative_tokens as f64,
            &Self::TOKENS_RANGE,
        )?;
        check_in(
            "acceptance_rate",
            self.acceptance_rate,
            &Self::ACCEPTANCE_RANGE,
        )?;
        if let Some(n) = self.disable_by_batch_size {
            check_in(
                "disable_by_batch_size",
                n as f64,
                &Self::DISABLE_BY_BATCH_SIZE_RANGE,
            )?;
        }
        if let SpecMethod::DraftModel { model } = &self.method {
            draft_or_error(model).map_err(|e| e.within("method"))?;
        }
        Ok(())
    }

    /// Tokens a sequence gains per verifying step on average: the accepted guesses and the
    /// target's own token, `(1 - a^(k+1)) / (1 - a)` for acceptance `a` and `k` guesses.
    pub fn expected_tokens_per_step(&self) -> f64 {
        let (a, k) = (self.acceptance_rate, self.num_speculative_tokens as i32);
        if a >= 1.0 {
            (k + 1) as f64
        } else {
            (1.0 - a.powi(k + 1)) / (1.0 - a)
        }
    }
}

/// The proposer as the replica runs it: its cost model (none for n-gram lookup), the memory
/// it takes beside the target, and the draw of acceptances.
#[derive(Clone, Debug)]
pub(super) struct Proposer {
    pub k: u32,
    /// Running requests at which a step stops guessing.
    pub off_at: u32,
    /// The acceptance rate as the draw's thresholds.
    draws: Draws,
    /// A guess's pass (for an EAGLE head: its layer and the target's output head, since every
    /// guess is sampled from the whole vocabulary).
    cost: Option<CostModel>,
    /// The pass over the step's prompt tokens, whose logits nobody samples (an EAGLE head
    /// without the output head; a draft model's own, as the target's is costed).
    prompt_cost: Option<CostModel>,
    /// Bytes of those weights the target already holds (the output head an EAGLE head shares).
    shared_bytes: f64,
}

impl Proposer {
    /// The proposer for `cfg` on `target`, at the target's efficiencies.
    pub fn new(
        cfg: &SpeculativeConfig,
        target: &Deployment,
        eff: &Efficiency,
    ) -> Result<Proposer, ConfigError> {
        cfg.validate()?;
        let (guess, prompt, shared) = match &cfg.method {
            SpecMethod::Ngram => (None, None, 0),
            SpecMethod::DraftModel { model } => {
                let m = draft_or_error(model)?;
                (Some(m.clone()), Some(m), 0)
            }
            SpecMethod::Eagle => {
                let (head, shared) = eagle_head_of(&target.model);
                let layer = ModelSpec {
                    params: head.params - shared,
                    active_params: head.active_params - shared,
                    ..head.clone()
                };
                (Some(head), Some(layer), shared)
            }
        };
        // Its passes run inside the target's step: each pays its own layers' launch costs,
        // not the step's fixed costs or the CPU's work, which the target's step already counts.
        let passes = Efficiency {
            step_overhead_s: 0.0,
            cpu_overhead_s: 0.0,
            cpu_seq_overhead_s: 0.0,
            cpu_admit_s: 0.0,
            ..*eff
        };
        let cost_of = |model: Option<ModelSpec>| -> Result<Option<CostModel>, ConfigError> {
            model
                .map(|model| {
                    let d = Deployment {
                        model,
                        weight_dtype: Dtype::Bf16,
                        activation_dtype: None,
                        ..target.clone()
                    };
                    CostModel::new(d, passes)
                })
                .transpose()
        };
        Ok(Proposer {
            k: cfg.num_speculative_tokens,
            off_at: cfg.disable_by_batch_size.unwrap_or(u32::MAX),
            draws: Draws::new(cfg.acceptance_rate),
            cost: cost_of(guess)?,
            prompt_cost: cost_of(prompt)?,
            shared_bytes: shared as f64 * Dtype::Bf16.bytes(),
        })
    }

    /// GPU time to propose: `k` sequential decode passes of the proposer over the decoding
    /// sequences (`decodes`), plus one pass over the step's prompt tokens (`prefills`), which a
    /// draft model must see too.
    pub fn time(&self, decodes: &BatchTotals, prefills: &BatchTotals) -> f64 {
        let (Some(c), Some(p)) = (&self.cost, &self.prompt_cost) else {
            return 0.0;
        };
        let decode = if decodes.seqs > 0 {
            self.k as f64 * c.step_totals(decodes).total_s
        } else {
            0.0
        };
        // A step without prompt tokens costs no pass over them (`step_totals` says zero).
        let prompt = if prefills.seqs > 0 {
            p.step_totals(prefills).total_s
        } else {
            0.0
        };
        decode + prompt
    }

    /// Bytes of the proposer's weights on the replica, and of its KV cache per token of
    /// context (zero for n-gram lookup).
    pub fn memory(&self) -> (f64, f64) {
        self.cost.as_ref().map_or((0.0, 0.0), |c| {
            (c.weight_bytes() - self.shared_bytes, c.kv_bytes_per_token())
        })
    }

    /// How many of `k` guesses are accepted for the sequence `id` whose `generated` tokens are
    /// out ([`Draws::accepted`]).
    pub fn accepted(&self, id: u64, generated: u32, k: u32) -> u32 {
        self.draws.accepted(id, generated, k)
    }

    /// The draw of acceptances, for [`Draws::accepted`].
    pub(super) fn draws(&self) -> &Draws {
        &self.draws
    }
}

/// The draw of acceptances at one rate `a`: each guess is right with chance `a` given that the
/// ones before it were, so at least `n` of a step's guesses are kept with chance `a^n`. One
/// 53-bit draw per verifying sequence and step ([`draw`]) is compared with `ceil(a^n 2^53)` for
/// `n = 1, 2, ...` ([`threshold`]); the count it stays below is the number kept.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Draws {
    /// `threshold(a^(n + 1))` at index `n`, for every number of guesses a step may verify.
    below: [u64; MAX_GUESSES],
}

/// The most guesses a step verifies per sequence (the top of `TOKENS_RANGE`).
const MAX_GUESSES: usize = 16;

impl Draws {
    fn new(acceptance: f64) -> Draws {
        let a = acceptance.clamp(0.0, 1.0);
        let mut below = [0; MAX_GUESSES];
        // Powers by repeated multiplication, the same in every build (no `powi`).
        let mut power = 1.0;
        for b in &mut below {
            power *= a;
            *b = threshold(power);
        }
        Draws { below }
    }

    /// How many of `k` guesses are accepted for the sequence `id` whose `generated` tokens are
    /// out.
    #[inline(always)]
    pub(super) fn accepted(&self, id: u64, generated: u32, k: u32) -> u32 {
        let x = draw(id, generated);
        // The thresholds never rise (each power is the last times a <= 1, and rounding keeps
        // the order), so the count below them is the count up to the first it is not below;
        // counted without a branch on the draw, which no predictor could guess.
        let k = (k as usize).min(MAX_GUESSES);
        self.below[..k].iter().map(|&t| (x < t) as u32).sum()
    }
}

/// A steady speculating decode batch as the replica prices it: `batch` sequences whose caches
/// hold `context` tokens, each verifying its last token and its guesses in one step of the
/// target beside the step's prompt tokens (`prompt`, as chunked prefill mixes them in), after
/// the proposer's passes over both. Returns the target's step and the proposer's time, in
/// seconds, from the one cost model (the proposer at the target's efficiencies).
pub fn verify_step(
    cfg: &SpeculativeConfig,
    target: &CostModel,
    batch: u32,
    context: u32,
    prompt: &BatchTotals,
) -> Result<(StepCost, f64), ConfigError> {
    let p = Proposer::new(cfg, target.deployment(), target.efficiency())?;
    let k = cfg.num_speculative_tokens;
    let verify = BatchTotals::uniform(
        batch,
        BatchItem {
            new_tokens: k + 1,
            context_len: context + k,
        },
    )
    .plus(prompt);
    let guesses = BatchTotals::uniform(
        batch,
        BatchItem {
            new_tokens: 1,
            context_len: context,
        },
    );
    Ok((target.step_totals(&verify), p.time(&guesses, prompt)))
}

/// The KV pool in tokens of a replica that speculates as `cfg` says ([`pool_tokens`]).
pub fn pool_tokens_with(
    cfg: &SpeculativeConfig,
    target: &CostModel,
    memory: &MemoryConfig,
) -> Result<f64, ConfigError> {
    let p = Proposer::new(cfg, target.deployment(), target.efficiency())?;
    Ok(pool_tokens(target, memory, &p))
}

/// The KV pool in tokens when a proposer shares the replica: its weights come out of the
/// memory for the cache, and each cached token holds the proposer's K and V beside the target's.
pub(super) fn pool_tokens(cost: &CostModel, memory: &MemoryConfig, proposer: &Proposer) -> f64 {
    let (weights, kv) = proposer.memory();
    ((cost.kv_pool_bytes(memory) - weights) / (cost.kv_bytes_per_token() + kv))
        .floor()
        .max(0.0)
}

/// An EAGLE-style head on `m` as a model, and how many of its parameters the target holds
/// already: one of the target's decoder layers, the layer that folds the token's embedding into
/// the hidden state (2 x hidden by hidden), and the target's output head, read by every guess
/// (as vLLM's EAGLE proposer samples each guess from the target's vocabulary) but not stored
/// twice. Without the shape's detail, the layer alone.
fn eagle_head_of(m: &ModelSpec) -> (ModelSpec, u64) {
    let h = m.hidden as u64;
    let (per_layer, per_layer_active, head) = match &m.shape {
        Some(s) => {
            let embed = s.vocab * h;
            let head = if s.tied_embeddings {
                embed
            } else {
                s.vocab * h
            };
            let fixed = embed + if s.tied_embeddings { 0 } else { head } + h;
            let per = |p: u64| (p.saturating_sub(fixed) / m.layers.max(1) as u64).max(1);
            (per(m.params), per(m.active_params), head)
        }
        None => {
            let per = |p: u64| (p / m.layers.max(1) as u64).max(1);
            (per(m.params), per(m.active_params), 0)
        }
    };
    let fuse = if head > 0 { 2 * h * h } else { 0 };
    let head_model = ModelSpec {
        id: format!("{}-eagle-head", m.id),
        name: format!("{} EAGLE head", m.name),
        params: per_layer + fuse + head,
        active_params: per_layer_active + fuse + head,
        layers: 1,
        shape: None,
        ..m.clone()
    };
    (head_model, head)
}

/// 53 random bits from the request and its position (SplitMix64's finaliser over a seed mixing
/// both): the draw is `draw / 2^53`, a number in [0, 1).
#[inline(always)]
fn draw(id: u64, generated: u32) -> u64 {
    let mut z = id
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add((generated as u64).wrapping_mul(0xD1B5_4A32_D192_ED03));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    z >> 11
}

/// The integer a [`draw`] must stay below for an event of chance `acceptance`:
/// `draw / 2^53 < a` exactly when `draw < ceil(a * 2^53)` (both scalings by a power of two are
/// exact), so the comparison needs no conversion to floating point.
fn threshold(acceptance: f64) -> u64 {
    (acceptance.clamp(0.0, 1.0) * (1u64 << 53) as f64).ceil() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(method: SpecMethod, k: u32, a: f64) -> SpeculativeConfig {
        SpeculativeConfig {
            method,
            num_speculative_tokens: k,
            acceptance_rate: a,
            disable_by_batch_size: None,
        }
    }

    #[test]
    fn an_eagle_head_is_a_layer_a_fuse_and_the_shared_output_head() {
        // Llama 3.1 8B: a decoder layer of 218,112,000 parameters, the 2h x h fuse, and the
        // 128,256 x 4,096 output head every guess reads; only the first two are held anew.
        let l8 = crate::catalog::model_by_id("llama-3.1-8b").unwrap();
        let (head, shared) = eagle_head_of(&l8);
        assert_eq!(shared, 128_256 * 4096);
        assert_eq!(head.params, 218_112_000 + 2 * 4096 * 4096 + 128_256 * 4096);
        let p = Proposer::new(
            &cfg(SpecMethod::Eagle, 3, 0.6),
            &Deployment::seed(),
            &Efficiency::CALIBRATED,
        )
        .unwrap();
        assert_eq!(p.memory().0, (218_112_000.0 + 2.0 * 4096.0 * 4096.0) * 2.0);
    }

    #[test]
    fn acceptances_follow_the_rate_and_repeat() {
        let target = Deployment::seed();
        let p = Proposer::new(
            &cfg(SpecMethod::Ngram, 4, 0.7),
            &target,
            &Efficiency::CALIBRATED,
        )
        .unwrap();
        let n = 40_000;
        let total: u32 = (0..n).map(|i| p.accepted(i, (i % 97) as u32, 4)).sum();
        // The mean of accepted guesses: a + a^2 + ... + a^k.
        let want: f64 = (1..=4).map(|i| 0.7f64.powi(i)).sum();
        let got = total as f64 / n as f64;
        assert!((got - want).abs() < 0.02, "{got} against {want}");
        // Each guess right with chance a given the ones before it: at least j kept with
        // chance a^j, and fewer guesses asked for cut the count, never the draw.
        for j in 1..=4 {
            let at_least = (0..n).filter(|&i| p.accepted(i, 5, 4) >= j).count();
            let (got, want) = (at_least as f64 / n as f64, 0.7f64.powi(j as i32));
            assert!(
                (got - want).abs() < 0.01,
                "at least {j}: {got} against {want}"
            );
        }
        for i in 0..1000 {
            assert_eq!(p.accepted(i, 9, 2), p.accepted(i, 9, 4).min(2));
        }
        // The count of thresholds a draw is below is the count up to the first it is not
        // below: the thresholds never rise, at any rate.
        for a in [0.0, 1e-300, 0.1, 0.5, 0.6, 0.7, 0.9, 0.999_999, 1.0] {
            let d = Draws::new(a);
            assert!(d.below.windows(2).all(|w| w[1] <= w[0]), "rate {a}");
            for i in 0..2000 {
                let x = draw(i, 7);
                let first_miss = d.below.iter().take_while(|&&t| x < t).count() as u32;
                assert_eq!(d.accepted(i, 7, 16), first_miss, "rate {a}");
            }
        }
        assert_eq!(p.accepted(7, 3, 4), p.accepted(7, 3, 4));
        let none = Proposer::new(
            &cfg(SpecMethod::Ngram, 4, 0.0),
            &target,
            &Efficiency::CALIBRATED,
        )
        .unwrap();
        assert!((0..1000).all(|i| none.accepted(i, 1, 4) == 0));
        let all = Proposer::new(
            &cfg(SpecMethod::Ngram, 4, 1.0),
            &target,
            &Efficiency::CALIBRATED,
        )
        .unwrap();
        assert!((0..1000).all(|i| all.accepted(i, 1, 4) == 4));
    }

    #[test]
    fn the_integer_threshold_accepts_exactly_what_the_fraction_would() {
        // The draw as a fraction in [0, 1), compared with the rate as the draws were before
        // the threshold: every rate and draw must agree.
        let unit = |x: u64| x as f64 / (1u64 << 53) as f64;
        let rates = [
            0.0,
            1e-300,
            1e-9,
            0.1,
            0.5,
            0.6,
            0.7,
            1.0 / 3.0,
            0.999_999,
            1.0,
        ];
        for a in rates {
            let t = threshold(a);
            for i in 0..20_000u64 {
                let x = draw(i, (i % 301) as u32);
                assert_eq!(x < t, unit(x) < a, "rate {a}, draw {x}");
            }
            // Right at the edge: the draws either side of the threshold.
            for x in [t.saturating_sub(1), t, t + 1] {
                if x < 1 << 53 {
                    assert_eq!(x < t, unit(x) < a, "rate {a}, edge draw {x}");
                }
            }
        }
    }

    #[test]
    fn expected_tokens_per_step_is_the_geometric_sum() {
        let c = cfg(SpecMethod::Ngram, 3, 0.5);
        assert_eq!(c.expected_tokens_per_step(), 1.0 + 0.5 + 0.25 + 0.125);
        assert_eq!(
            cfg(SpecMethod::Ngram, 3, 0.0).expected_tokens_per_step(),
            1.0
        );
        assert_eq!(
            cfg(SpecMethod::Ngram, 3, 1.0).expected_tokens_per_step(),
            4.0
        );
    }

    #[test]
    fn a_bad_configuration_names_its_field() {
        let bad = |c: SpeculativeConfig| c.validate().unwrap_err().field;
        assert_eq!(
            bad(cfg(SpecMethod::Ngram, 0, 0.5)),
            "num_speculative_tokens"
        );
        assert_eq!(bad(cfg(SpecMethod::Ngram, 3, 1.5)), "acceptance_rate");
        let unknown = SpecMethod::DraftModel {
            model: "gpt-9".into(),
        };
        assert_eq!(bad(cfg(unknown, 3, 0.5)), "method.model");
    }

    #[test]
    fn a_draft_costs_its_own_decode_steps_and_takes_its_memory() {
        let target = Deployment::seed();
        let eff = Efficiency::CALIBRATED;
        let draft = SpecMethod::DraftModel {
            model: "llama-3.2-1b".into(),
        };
        let p = Proposer::new(&cfg(draft, 3, 0.7), &target, &eff).unwrap();
        let decodes = BatchTotals::of(&[crate::cost::BatchItem {
            new_tokens: 1,
            context_len: 1000,
        }]);
        let none = BatchTotals::default();
        let t = p.time(&decodes, &none);
        let passes = Efficiency {
            step_overhead_s: 0.0,
            cpu_overhead_s: 0.0,
            cpu_seq_overhead_s: 0.0,
            cpu_admit_s: 0.0,
            ..eff
        };
        let d = CostModel::new(
            Deployment {
                model: crate::catalog::draft_models()[0].clone(),
                ..target.clone()
            },
            passes,
        )
        .unwrap();
        // No fixed cost of a step: the draft's pass is its layers' work and launches only.
        assert!(
            d.step_totals(&decodes).total_s
                < CostModel::new(
                    Deployment {
                        model: crate::catalog::draft_models()[0].clone(),
                        ..target.clone()
                    },
                    eff
                )
                .unwrap()
                .step_totals(&decodes)
                .total_s
        );
        assert_eq!(t, 3.0 * d.step_totals(&decodes).total_s);
        let (w, kv) = p.memory();
        assert_eq!(w, d.weight_bytes());
        assert_eq!(kv, d.kv_bytes_per_token());
        // N-gram lookup costs the GPU nothing and takes no memory.
        let ng = Proposer::new(&cfg(SpecMethod::Ngram, 3, 0.7), &target, &eff).unwrap();
        assert_eq!(ng.time(&decodes, &decodes), 0.0);
        assert_eq!(ng.memory(), (0.0, 0.0));
        // The pool shrinks by the draft's weights and holds its cache beside the target's.
        let c = CostModel::new(target, eff).unwrap();
        let m = MemoryConfig::VLLM;
        assert!(pool_tokens(&c, &m, &p) < pool_tokens(&c, &m, &ng));
        assert_eq!(pool_tokens(&c, &m, &ng), c.kv_pool_tokens(&m));
    }
}
