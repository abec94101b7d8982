//! Speculative decoding in the replica engine, checked the way vLLM's own tests check it
//! (`tests/v1/core/test_scheduler.py`'s spec-decode cases, `tests/v1/spec_decode`): guesses
//! count against the token budget, the rejected guesses roll back while their blocks stay (as
//! vLLM's KV cache manager keeps them), a proposer that is never right only adds cost, and the
//! gain shrinks as the batch grows and the step turns compute-bound. Blocks and tokens are conserved with speculation on (property test).

use proptest::prelude::*;
use trainer_engine::replica::spec::{SpecMethod, SpeculativeConfig};
use trainer_engine::replica::{EngineRequest, Replica, ReplicaConfig, ReplicaEvent};
use trainer_engine::workload::Prompt;

fn spec(method: SpecMethod, k: u32, acceptance: f64) -> Option<SpeculativeConfig> {
    Some(SpeculativeConfig {
        method,
        num_speculative_tokens: k,
        acceptance_rate: acceptance,
        disable_by_batch_size: None,
    })
}

fn draft() -> SpecMethod {
    SpecMethod::DraftModel {
        model: "llama-3.2-1b".into(),
    }
}

/// The seed replica with speculation `s`, a token budget and a traced run.
fn replica(s: Option<SpeculativeConfig>, budget: u32) -> Replica {
    let mut cfg = ReplicaConfig::seed();
    cfg.speculative = s;
    cfg.scheduler.max_num_batched_tokens = budget;
    cfg.trace_capacity = 100_000;
    Replica::new(cfg).expect("valid config")
}

/// Submits `n` requests at time 0 (prompt `p`, output `o`, distinct prompts) and runs to the
/// end; returns the events.
fn run_all(r: &mut Replica, n: u64, p: u32, o: u32) -> Vec<ReplicaEvent> {
    for id in 0..n {
        r.submit(
            0.0,
            EngineRequest {
                id,
                prompt: Prompt::unique(id + 1, p),
                output_len: o,
                tenant: 0,
            },
        );
    }
    let mut events = Vec::new();
    r.advance_to(f64::INFINITY, &mut events);
    events
}

fn last_finish(events: &[ReplicaEvent]) -> f64 {
    events
        .iter()
        .filter_map(|e| match *e {
            ReplicaEvent::Finished { t, .. } => Some(t),
            _ => None,
        })
        .fold(0.0, f64::max)
}

#[test]
fn the_token_budget_counts_speculative_tokens() {
    // Four decoding requests, three guesses each (four tokens a request), a budget of ten: two
    // requests verify all their guesses, the third only as many as the budget leaves.
    let mut r = replica(spec(SpecMethod::Ngram, 3, 0.5), 10);
    run_all(&mut r, 4, 8, 40);
    let mut saw_truncated = false;
    for step in r.trace() {
        let used: u32 = step.entries.iter().map(|e| e.new_tokens).sum();
        assert!(used <= 10, "step {} used {used}", step.index);
        assert_eq!(step.budget_used, used);
        let decodes: Vec<u32> = step.entries.iter().map(|e| e.new_tokens).collect();
        if decodes == [4, 4, 2] {
            saw_truncated = true;
        }
    }
    assert!(saw_truncated, "a step of 4 + 4 + 2 tokens");
    // Every request still produces exactly its tokens.
    assert_eq!(r.metrics().output_tokens, 4 * 40);
}

#[test]
fn rollback_returns_the_rejected_tokens_but_keeps_their_blocks() {
    // A 15-token prompt fills a block but one slot; its first decode verifies 1 + 8 tokens,
    // which needs a second block. Every guess rejected: only the target's own token is kept
    // (16 computed tokens, one block's worth), but as in vLLM the second block stays with the
    // request (only `num_computed_tokens` rolls back), so the next step, verifying 9 tokens
    // from 16, needs no new block: it writes over the rejected guesses' slots. Every guess
    // accepted: 24 tokens are kept, both blocks hold them, and the next step (to 33) needs a
    // third.
    for (acceptance, computed, next_allocated) in [(0.0, 16, 0), (1.0, 24, 1)] {
        let mut r = replica(spec(SpecMethod::Ngram, 8, acceptance), 8192);
        run_all(&mut r, 1, 15, 40);
        let (step, next) = (&r.trace()[1], &r.trace()[2]);
        assert_eq!(step.entries[0].new_tokens, 9);
        assert_eq!(step.blocks_allocated, 1, "acceptance {acceptance}");
        assert_eq!(step.blocks_freed, 0, "acceptance {acceptance}");
        assert_eq!(step.kv_blocks_used, 2, "acceptance {acceptance}");
        assert_eq!(next.entries[0].new_tokens, 9);
        assert_eq!(
            next.entries[0].context_len,
            computed + 9,
            "acceptance {acceptance}"
        );
        assert_eq!(
            next.entries[0].blocks,
            2 + next_allocated,
            "acceptance {acceptance}"
        );
        assert_eq!(
            next.blocks_allocated, next_allocated,
            "acceptance {acceptance}"
        );
        assert_eq!(next.blocks_freed, 0, "acceptance {acceptance}");
        // Every block comes back at the end.
        let a = r.audit();
        assert!(a.consistent);
        assert_eq!(a.allocated, 0);
        assert_eq!(r.metrics().output_tokens, 40);
    }
}

#[test]
fn guesses_stop_at_the_last_token() {
    // Five tokens to produce, four guesses a step, all accepted: the first decode step
    // verifies only the three guesses that can still be used, and the request finishes there.
    let mut r = replica(spec(SpecMethod::Ngram, 4, 1.0), 8192);
    let events = run_all(&mut r, 1, 100, 5);
    let news: Vec<u32> = r.trace().iter().map(|s| s.entries[0].new_tokens).collect();
    assert_eq!(news, [100, 4]);
    assert!(events.iter().any(|e| matches!(
        *e,
        ReplicaEvent::Finished {
            output_tokens: 5,
            ..
        }
    )));
    let m = r.metrics();
    assert_eq!(
        (m.spec_proposed, m.spec_accepted, m.spec_verifies),
        (3, 3, 1)
    );
}

#[test]
fn an_acceptance_rate_of_zero_costs_more_than_no_speculation() {
    let plain = last_finish(&run_all(&mut replica(None, 8192), 1, 500, 200));
    let never = last_finish(&run_all(
        &mut replica(spec(draft(), 4, 0.0), 8192),
        1,
        500,
        200,
    ));
    let often = last_finish(&run_all(
        &mut replica(spec(draft(), 4, 0.8), 8192),
        1,
        500,
        200,
    ));
    assert!(never > plain, "{never} against {plain}");
    assert!(often < plain, "{often} against {plain}");
    // Free guesses (n-gram lookup) that are never right still verify extra tokens per step.
    let ngram = last_finish(&run_all(
        &mut replica(spec(SpecMethod::Ngram, 4, 0.0), 8192),
        1,
        500,
        200,
    ));
    assert!(ngram >= plain, "{ngram} against {plain}");
}

#[test]
fn the_speedup_falls_as_the_batch_grows() {
    // The same draft and acceptance, one request alone and many at once: alone, the decode is
    // bound by reading the weights and verifying four extra tokens is nearly free; in a large
    // batch the step is compute-bound and every rejected guess costs real work.
    let speedup = |n: u64| {
        let plain = last_finish(&run_all(&mut replica(None, 8192), n, 200, 256));
        let s = last_finish(&run_all(
            &mut replica(spec(draft(), 4, 0.7), 8192),
            n,
            200,
            256,
        ));
        plain / s
    };
    let (alone, many) = (speedup(1), speedup(256));
    println!("speculative speedup, draft 1B, 4 guesses at 0.7: alone {alone:.2}x, 256 at once {many:.2}x");
    assert!(alone > 1.3, "alone: {alone}");
    assert!(
        many < alone,
        "{many} at a batch of 256 against {alone} alone"
    );
}

#[test]
fn runs_with_speculation_are_deterministic() {
    let a = run_all(&mut replica(spec(draft(), 3, 0.6), 8192), 20, 300, 100);
    let b = run_all(&mut replica(spec(draft(), 3, 0.6), 8192), 20, 300, 100);
    assert_eq!(a, b);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// With speculation on, every request produces exactly its tokens, the output count is
    /// their sum, the guesses accepted never exceed those made, and every block comes back.
    #[test]
    fn blocks_and_tokens_are_conserved_with_speculation(
        k in 1u32..8,
        acceptance in 0.0f64..=1.0,
        budget in 16u32..2048,
        blocks in 40u32..400,
        reqs in prop::collection::vec((0.0f64..2.0, 1u32..300, 1u32..120), 1..24),
    ) {
        let mut cfg = ReplicaConfig::seed();
        cfg.speculative = spec(SpecMethod::Ngram, k, acceptance);
        cfg.scheduler.max_num_batched_tokens = budget;
        cfg.kv_blocks_override = Some(blocks);
        let mut r = Replica::new(cfg).unwrap();
        let mut sorted = reqs.clone();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut events = Vec::new();
        for (id, &(t, p, o)) in sorted.iter().enumerate() {
            r.advance_before(t, &mut events);
            r.submit(t, EngineRequest { id: id as u64, prompt: Prompt::unique(id as u64 + 1, p), output_len: o, tenant: 0 });
        }
        r.advance_to(f64::INFINITY, &mut events);
        let mut want = 0u64;
        for (id, &(_, p, o)) in sorted.iter().enumerate() {
            let got = events.iter().find_map(|e| match *e {
                ReplicaEvent::Finished { id: i, output_tokens, .. } if i == id as u64 => Some(output_tokens),
                _ => None,
            });
            // A request the pool can never hold is refused (0 tokens); every other finishes.
            let fits = (p + o - 1).div_ceil(16) <= blocks;
            prop_assert_eq!(got, Some(if fits { o } else { 0 }));
            if fits {
                want += o as u64;
            }
        }
        let m = r.metrics();
        prop_assert_eq!(m.output_tokens, want);
        prop_assert!(m.spec_accepted <= m.spec_proposed);
        let a = r.audit();
        prop_assert!(a.consistent);
        prop_assert_eq!(a.allocated, 0);
        prop_assert_eq!(a.free, a.total);
    }
}

#[test]
fn speculation_turns_off_while_the_batch_is_large() {
    // vLLM's `disable_by_batch_size`: with six requests running a step guesses for nobody, and
    // the proposer costs nothing; as they finish and fewer than four run, guessing resumes.
    let mut s = spec(SpecMethod::Eagle, 2, 0.5);
    s.as_mut().unwrap().disable_by_batch_size = Some(4);
    let mut r = replica(s, 8192);
    for id in 0..6u64 {
        r.submit(
            0.0,
            EngineRequest {
                id,
                prompt: Prompt::unique(id + 1, 8),
                output_len: 20 * (id as u32 + 1),
                tenant: 0,
            },
        );
    }
    let mut events = Vec::new();
    r.advance_to(f64::INFINITY, &mut events);
    let (mut quiet, mut busy) = (0, 0);
    for step in &r.trace()[1..] {
        let guessed = step.entries.iter().any(|e| e.new_tokens > 1);
        if step.entries.len() >= 4 {
            busy += 1;
            assert!(
                !guessed,
                "step {} guessed with {} running",
                step.index,
                step.entries.len()
            );
            assert_eq!(step.cost.draft_s, 0.0, "step {}", step.index);
        } else if step
            .entries
            .iter()
            .all(|e| e.context_len + 1 < 8 + 20 * (e.id as u32 + 1))
        {
            quiet += 1;
            assert!(guessed, "step {} did not guess", step.index);
            assert!(step.cost.draft_s > 0.0, "step {}", step.index);
        }
    }
    assert!(busy > 0 && quiet > 0, "busy {busy}, quiet {quiet}");
    assert_eq!(r.metrics().output_tokens, 20 * (1..=6).sum::<u64>());
    assert!(r.audit().consistent);
}
