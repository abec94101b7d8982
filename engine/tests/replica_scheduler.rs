//! Scheduler behaviour checked against vLLM V1's own scheduler tests and against the cost model.
//!
//! Scenarios mirror `tests/v1/core/test_scheduler.py` in vllm-project/vllm: chunk splitting
//! under the token budget, newest-first preemption by recompute, prefix-cache hits.

use trainer_engine::cost::{BatchItem, BatchTotals};
use trainer_engine::replica::{
    EngineRequest, Replica, ReplicaConfig, ReplicaEvent, SchedulerConfig, SeqPhase,
};
use trainer_engine::workload::Prompt;

/// One request of a hand-written scenario: (arrival, prompt content, prompt length, output length).
type Req = (f64, u64, u32, u32);

/// A replica with the seed model and the given scheduler knobs and pool size.
fn replica(budget: u32, max_seqs: u32, blocks: Option<u32>, caching: bool) -> Replica {
    let mut cfg = ReplicaConfig::seed();
    cfg.scheduler = SchedulerConfig {
        max_num_batched_tokens: budget,
        max_num_seqs: max_seqs,
        enable_prefix_caching: caching,
        ..SchedulerConfig::default()
    };
    cfg.kv_blocks_override = blocks;
    cfg.trace_capacity = 10_000;
    Replica::new(cfg).expect("valid config")
}

/// Feeds the requests in arrival order (ids 0, 1, ...) and runs to the end; returns all events.
/// Requests with equal arrival times are all submitted before the engine reaches that time, so
/// they join the same step.
fn run(r: &mut Replica, reqs: &[Req]) -> Vec<ReplicaEvent> {
    let mut events = Vec::new();
    for (id, &(t, content, p, o)) in reqs.iter().enumerate() {
        if t > r.now() {
            r.advance_to(t, &mut events);
        }
        r.submit(
            t,
            EngineRequest {
                id: id as u64,
                prompt: Prompt::unique(content, p),
                output_len: o,
                tenant: 0,
            },
        );
    }
    r.advance_to(f64::INFINITY, &mut events);
    events
}

/// The (id, new tokens) of each traced step.
fn batches(r: &Replica) -> Vec<Vec<(u64, u32)>> {
    r.trace()
        .iter()
        .map(|s| s.entries.iter().map(|e| (e.id, e.new_tokens)).collect())
        .collect()
}

fn first_token_time(events: &[ReplicaEvent], id: u64) -> Option<f64> {
    events.iter().find_map(|e| match *e {
        ReplicaEvent::FirstToken { id: i, t } if i == id => Some(t),
        _ => None,
    })
}

#[test]
fn lone_request_ttft_is_its_chunked_prefill_steps() {
    let mut r = replica(8192, 256, None, true);
    let events = run(&mut r, &[(0.0, 1, 20_000, 3)]);
    assert_eq!(
        batches(&r)[..3],
        [vec![(0, 8192)], vec![(0, 8192)], vec![(0, 3616)]]
    );
    let cost = r.cost_model().clone();
    let mut t = 0.0;
    for (new, ctx) in [(8192, 8192), (8192, 16_384), (3616, 20_000)] {
        let mut step = BatchTotals::of(&[BatchItem {
            new_tokens: new,
            context_len: ctx,
        }]);
        // The first chunk's step takes the request in.
        step.admitted = (ctx == new) as u64;
        t += cost.step_totals(&step).total_s;
    }
    assert_eq!(first_token_time(&events, 0), Some(t));
}

#[test]
fn chunks_split_under_the_token_budget() {
    // As vLLM's test_schedule_partial_requests: three 400-token prompts, a 1,000-token budget.
    let mut r = replica(1000, 256, None, false);
    run(
        &mut r,
        &[(0.0, 1, 400, 3), (0.0, 2, 400, 3), (0.0, 3, 400, 3)],
    );
    let b = batches(&r);
    assert_eq!(b[0], vec![(0, 400), (1, 400), (2, 200)]);
    // Running requests first, in order: two decodes, then the rest of the third prompt.
    assert_eq!(b[1], vec![(0, 1), (1, 1), (2, 200)]);
    assert_eq!(b[2], vec![(0, 1), (1, 1), (2, 1)]);
}

#[test]
fn long_prefill_threshold_caps_one_requests_chunk() {
    let mut cfg = ReplicaConfig::seed();
    cfg.scheduler.long_prefill_token_threshold = 300;
    cfg.trace_capacity = 100;
    let mut r = Replica::new(cfg).unwrap();
    run(&mut r, &[(0.0, 1, 700, 2), (0.0, 2, 100, 2)]);
    let b = batches(&r);
    assert_eq!(b[0], vec![(0, 300), (1, 100)]);
    assert_eq!(b[1], vec![(0, 300), (1, 1)]);
    assert_eq!(b[2], vec![(0, 100)]);
}

#[test]
fn max_num_seqs_bounds_the_batch() {
    let mut r = replica(8192, 2, None, false);
    run(&mut r, &[(0.0, 1, 10, 2), (0.0, 2, 10, 2), (0.0, 3, 10, 2)]);
    let b = batches(&r);
    assert_eq!(b[0], vec![(0, 10), (1, 10)]);
    assert_eq!(b[1], vec![(0, 1), (1, 1)]);
    // Both finish at the end of step 2; the third is admitted at step 3.
    assert_eq!(b[2], vec![(2, 10)]);
}

#[test]
fn newest_request_is_preempted_and_requeued_first() {
    // 4 blocks of 16 tokens. A and B take 32 tokens (2 blocks) each; A's 33rd token needs a
    // fifth block, so B (admitted last) is preempted by recompute, and nothing is admitted
    // in that step even though C waits.
    let mut r = replica(8192, 256, Some(4), false);
    let events = run(
        &mut r,
        &[(0.0, 1, 31, 10), (0.0, 2, 31, 10), (0.0, 3, 8, 2)],
    );
    let b = batches(&r);
    assert_eq!(b[0], vec![(0, 31), (1, 31)]);
    assert_eq!(b[1], vec![(0, 1), (1, 1)]);
    let tr = &r.trace()[2];
    assert_eq!(tr.preempted, vec![1]);
    assert_eq!(b[2], vec![(0, 1)]);
    assert!(tr.admitted.is_empty());
    assert_eq!(tr.blocks_freed, 2);
    // The preempted request is at the head of the queue and does not fit yet (3 blocks for
    // its 33 tokens, 1 free); first come first served, C waits behind it although C would fit.
    assert_eq!(b[3], vec![(0, 1)]);
    // When A finishes, B is readmitted ahead of C and recomputes its prompt plus the 2 tokens
    // it had produced (31 + 2), without producing them again.
    let back = 2 + b[2..]
        .iter()
        .position(|s| s.iter().any(|e| e.0 == 1))
        .expect("B runs again");
    assert_eq!(b[back], vec![(1, 33), (2, 8)]);
    let preempted: Vec<u64> = events
        .iter()
        .filter_map(|e| match *e {
            ReplicaEvent::Preempted { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    assert!(preempted.starts_with(&[1]));
    // Everybody still finishes with exactly their output length.
    for (id, want) in [(0, 10), (1, 10), (2, 2)] {
        assert!(events.contains(&ReplicaEvent::Finished {
            id,
            t: finish_time(&events, id),
            output_tokens: want
        }));
    }
}

fn admitted_at(events: &[ReplicaEvent], id: u64) -> Option<f64> {
    events.iter().find_map(|e| match *e {
        ReplicaEvent::Admitted { id: i, t } if i == id => Some(t),
        _ => None,
    })
}

fn finish_time(events: &[ReplicaEvent], id: u64) -> f64 {
    events
        .iter()
        .find_map(|e| match *e {
            ReplicaEvent::Finished { id: i, t, .. } if i == id => Some(t),
            _ => None,
        })
        .unwrap_or(f64::NAN)
}

#[test]
fn prefix_hits_skip_cached_blocks_but_compute_the_last_token() {
    // Same content twice: 70 tokens have 4 full blocks; the second request reuses all four.
    let mut r = replica(8192, 256, None, true);
    run(&mut r, &[(0.0, 7, 70, 2), (1.0, 7, 70, 2)]);
    let b = batches(&r);
    assert_eq!(b[0], vec![(0, 70)]);
    assert_eq!(*b.last().unwrap(), vec![(1, 1)]);
    assert_eq!(b[b.len() - 2], vec![(1, 6)]);
    // A prompt cached in full (64 tokens = 4 blocks) still computes its last token, so only
    // three blocks count as hits.
    let mut r = replica(8192, 256, None, true);
    run(&mut r, &[(0.0, 9, 64, 2), (1.0, 9, 64, 2)]);
    let b = batches(&r);
    assert_eq!(b[b.len() - 2], vec![(1, 16)]);
    let m = r.metrics();
    assert_eq!((m.prefix_hit_tokens, m.prefix_query_tokens), (48, 128));
    // Switched off, nothing hits.
    let mut r = replica(8192, 256, None, false);
    run(&mut r, &[(0.0, 9, 64, 2), (1.0, 9, 64, 2)]);
    assert_eq!(r.metrics().prefix_hit_tokens, 0);
    assert_eq!(r.cached_prefix_tokens(&Prompt::unique(9, 64)), 0);
}

#[test]
fn cached_prefix_tokens_reports_what_a_router_would_hit() {
    let mut r = replica(8192, 256, None, true);
    run(&mut r, &[(0.0, 5, 100, 2)]);
    assert_eq!(r.cached_prefix_tokens(&Prompt::unique(5, 100)), 96);
    assert_eq!(r.cached_prefix_tokens(&Prompt::unique(5, 40)), 32);
    assert_eq!(r.cached_prefix_tokens(&Prompt::unique(6, 100)), 0);
}

#[test]
fn steady_decode_throughput_equals_the_cost_model() {
    // 32 requests prefilled together, then 249 decode steps in lockstep at contexts
    // 1,001..1,249: mean context 1,125, as in the brief. The step time is linear in context, so
    // tokens / time equals the cost model's batch / step time at the mean context.
    let mut r = replica(32_768, 256, None, false);
    let reqs: Vec<Req> = (0..32).map(|i| (0.0, i, 1000, 250)).collect();
    let events = run(&mut r, &reqs);
    let (mut tokens, mut time) = (0u64, 0.0);
    for e in &events {
        if let ReplicaEvent::StepEnd {
            duration,
            decode_tokens,
            prefill_tokens: 0,
            ..
        } = *e
        {
            tokens += decode_tokens as u64;
            time += duration;
        }
    }
    assert_eq!(tokens, 32 * 249);
    let want = r.cost_model().decode_throughput(32, 1125);
    let got = tokens as f64 / time;
    assert!((got / want - 1.0).abs() < 0.01, "{got} vs {want}");
}

#[test]
fn a_request_arriving_mid_step_waits_only_for_the_step_boundary() {
    let mut r = replica(8192, 256, None, false);
    let mut events = Vec::new();
    r.submit(
        0.0,
        EngineRequest {
            id: 0,
            prompt: Prompt::unique(1, 100),
            output_len: 50,
            tenant: 0,
        },
    );
    r.advance_to(0.05, &mut events);
    let boundary = r.next_event_time().unwrap();
    assert!(r.load().busy && boundary > 0.05);
    r.submit(
        0.05,
        EngineRequest {
            id: 1,
            prompt: Prompt::unique(2, 2000),
            output_len: 5,
            tenant: 0,
        },
    );
    r.advance_to(boundary, &mut events);
    assert!(events.contains(&ReplicaEvent::Admitted { id: 1, t: boundary }));
}

#[test]
fn oversized_and_empty_requests_are_rejected_not_stuck() {
    let mut r = replica(8192, 256, Some(4), false);
    // 61 + 5 tokens need 61 + 5 - 1 = 65 slots, more than 4 blocks of 16 hold: never fits.
    let events = run(&mut r, &[(0.0, 1, 61, 5), (0.0, 2, 10, 0), (0.0, 3, 10, 2)]);
    assert!(events.contains(&ReplicaEvent::Finished {
        id: 0,
        t: 0.0,
        output_tokens: 0
    }));
    assert!(events.contains(&ReplicaEvent::Finished {
        id: 1,
        t: 0.0,
        output_tokens: 0
    }));
    assert_eq!(r.metrics().rejected, 2);
    assert_eq!(r.metrics().finished, 1);
}

/// Regression: a request was refused when its prompt plus output filled the pool exactly,
/// though its last sampled token never needs a KV slot (vLLM needs P + O - 1 slots; see
/// `max_model_len` against the KV cache in vllm/v1/core/kv_cache_utils.py).
#[test]
fn a_request_that_fills_the_pool_to_the_last_slot_fits() {
    let mut r = replica(8192, 256, Some(4), false);
    let events = run(&mut r, &[(0.0, 1, 60, 5)]);
    assert_eq!(r.metrics().rejected, 0);
    assert!(events.contains(&ReplicaEvent::Finished {
        id: 0,
        t: finish_time(&events, 0),
        output_tokens: 5
    }));
}

/// Mirrors vLLM's `scheduler_reserve_full_isl` (vllm/v1/core/sched/scheduler.py, the waiting
/// loop's `allocate_slots(full_sequence_must_fit=...)`): a waiting request is admitted only
/// when its whole prompt fits in the free blocks, though only its first chunk is allocated.
/// Off, it is admitted on its first chunk and thrashes: preempted, readmitted, preempted.
#[test]
fn a_waiting_request_is_admitted_only_when_its_whole_prompt_fits() {
    let run_gate = |gate: bool| {
        let mut cfg = ReplicaConfig::seed();
        cfg.scheduler = SchedulerConfig {
            max_num_batched_tokens: 256,
            scheduler_reserve_full_isl: gate,
            enable_prefix_caching: false,
            ..SchedulerConfig::default()
        };
        // 40 blocks (640 tokens); A decodes from 300 tokens; B has a 400-token prompt.
        cfg.kv_blocks_override = Some(40);
        cfg.trace_capacity = 10_000;
        let mut r = Replica::new(cfg).unwrap();
        let events = run(&mut r, &[(0.0, 1, 300, 60), (0.05, 2, 400, 20)]);
        (r, events)
    };
    let (on, events) = run_gate(true);
    // B waits until A finishes: its 25 blocks never fit beside A's 19 to 23.
    let a_done = finish_time(&events, 0);
    let b_in = admitted_at(&events, 1).expect("B is admitted");
    assert!(
        b_in >= a_done,
        "B admitted at {b_in}, A finished at {a_done}"
    );
    assert_eq!(on.metrics().preemptions, 0);
    // Without the gate B is admitted on its first 256-token chunk beside A, and the pool runs
    // out under them: recompute preemptions that the gate avoids.
    let (off, events) = run_gate(false);
    assert!(off.metrics().preemptions > 0);
    let b_in = admitted_at(&events, 1).expect("B is admitted");
    assert!(b_in < finish_time(&events, 0));
}

/// Mirrors vLLM's `long_prefill_token_threshold` (vllm/v1/core/sched/scheduler.py: `if 0 <
/// threshold < num_new_tokens: num_new_tokens = threshold`, in the running and the waiting
/// loop alike): it caps a request's chunk even when the request is alone in the step and the
/// budget would take the whole prompt.
#[test]
fn long_prefill_threshold_caps_a_request_alone_in_the_step() {
    let mut cfg = ReplicaConfig::seed();
    cfg.scheduler.long_prefill_token_threshold = 512;
    cfg.trace_capacity = 100;
    let mut r = Replica::new(cfg).unwrap();
    run(&mut r, &[(0.0, 1, 2000, 2)]);
    let b = batches(&r);
    assert_eq!(
        b[..4],
        [
            vec![(0, 512)],
            vec![(0, 512)],
            vec![(0, 512)],
            vec![(0, 464)]
        ]
    );
}

/// Mirrors vLLM caching blocks filled by generated tokens (`Request.append_output_token_ids`
/// hashes each newly full block; `KVCacheManager.allocate_slots` caches up to the computed
/// tokens): a chat's next turn, which resends the previous answer, hits the answer's blocks.
#[test]
fn blocks_filled_by_generated_tokens_are_cached_for_the_next_turn() {
    use trainer_engine::workload::{reply_content, Segment};
    let mut r = replica(8192, 256, None, true);
    let turn1 = Prompt::unique(42, 100);
    let mut turn2 = turn1.clone();
    turn2.segments.push(Segment {
        content: reply_content(&turn1),
        len: 80,
    });
    turn2.segments.push(Segment {
        content: 43,
        len: 30,
    });
    let mut events = Vec::new();
    for (id, at, prompt, out) in [(0u64, 0.0, turn1, 80u32), (1, 5.0, turn2, 10)] {
        r.submit(
            at,
            EngineRequest {
                id,
                prompt,
                output_len: out,
                tenant: 0,
            },
        );
        r.advance_to(at + 4.0, &mut events);
    }
    // Turn 1 held 100 + 79 = 179 tokens: 11 full blocks, prompt and answer. Turn 2 (210
    // tokens) finds all 11; only prompt blocks (6) would hit without output caching.
    let m = r.metrics();
    assert_eq!(m.prefix_hit_tokens, 11 * 16);
    assert!(r.audit().consistent);
}

#[test]
fn follow_one_chat_walkthrough_is_reproducible() {
    // Build-up 1: A, B, C decode; D (2,000 tokens) joins, is prefilled in 512-token chunks
    // beside their decodes, fills its block table, gets its first token, and memory then runs
    // out (a 220-block pool: D's whole prompt must fit when it is admitted), forcing a
    // preemption of the newest request.
    let mut r = replica(512, 256, Some(220), false);
    let mut events = Vec::new();
    for (id, p) in [(0u64, 300u32), (1, 400), (2, 500)] {
        r.submit(
            0.0,
            EngineRequest {
                id,
                prompt: Prompt::unique(id + 1, p),
                output_len: 900,
                tenant: 0,
            },
        );
    }
    r.advance_to(0.2, &mut events);
    let before = r.snapshot();
    assert!(before.running.iter().all(|s| s.phase == SeqPhase::Decode));
    r.submit(
        0.2,
        EngineRequest {
            id: 3,
            prompt: Prompt::unique(4, 2000),
            output_len: 400,
            tenant: 0,
        },
    );
    let mut saw_chunk_with_decodes = false;
    let mut d_blocks = 0;
    while first_token_time(&events, 3).is_none() {
        assert!(r.process_next(&mut events));
        let snap = r.snapshot();
        if let Some(d) = snap.running.iter().find(|s| s.id == 3) {
            d_blocks = d.blocks.len();
            let decodes = snap.batch.iter().filter(|e| e.id != 3).count();
            saw_chunk_with_decodes |= decodes == 3 && snap.batch.iter().any(|e| e.id == 3);
        }
    }
    assert!(saw_chunk_with_decodes);
    assert_eq!(d_blocks, 125);
    r.advance_to(f64::INFINITY, &mut events);
    assert!(r.metrics().preemptions > 0);
    let first_victim = events.iter().find_map(|e| match *e {
        ReplicaEvent::Preempted { id, .. } => Some(id),
        _ => None,
    });
    assert_eq!(first_victim, Some(3));
    assert_eq!(r.metrics().finished, 4);
}

#[test]
fn freed_cached_blocks_are_evicted_least_recently_freed_first() {
    // A (50 tokens: 3 full blocks cached, 4 blocks held) finishes and frees its blocks tail
    // first. B then needs 4 blocks from a 6-block pool: the 2 never-used ones, then A's
    // fourth and third blocks, in that order. A's prompt again hits only the first two.
    let mut r = replica(8192, 256, Some(6), true);
    run(&mut r, &[(0.0, 1, 50, 1), (1.0, 2, 64, 1), (2.0, 1, 50, 1)]);
    assert_eq!(r.metrics().prefix_hit_tokens, 32);
    let b = batches(&r);
    assert_eq!(*b.last().unwrap(), vec![(2, 18)]);
    // With room for everything, all three of A's full blocks hit (the cap is 49 / 16 = 3).
    let mut r = replica(8192, 256, Some(12), true);
    run(&mut r, &[(0.0, 1, 50, 1), (1.0, 2, 64, 1), (2.0, 1, 50, 1)]);
    assert_eq!(r.metrics().prefix_hit_tokens, 48);
}

/// A decode instance receiving a request whose KV cache was computed by a prefill instance
/// (vLLM's `tests/v1/kv_connector/unit/test_remote_decode_lifecycle.py` and
/// `test_remote_prefill_lifecycle.py`): its blocks are allocated for the whole prompt, only the
/// last prompt token is computed, and that step samples the first token; its full blocks
/// enter the prefix cache like computed ones. After a preemption the transferred KV is gone,
/// and the whole prompt is computed again.
#[test]
fn a_request_whose_kv_arrives_computes_only_its_last_prompt_token() {
    let mut r = replica(8192, 256, None, true);
    let mut events = Vec::new();
    let prompt = Prompt::unique(7, 1_000);
    r.submit_with_kv(
        0.0,
        EngineRequest {
            id: 0,
            prompt: prompt.clone(),
            output_len: 4,
            tenant: 0,
        },
        1_000,
    );
    r.advance_to(f64::INFINITY, &mut events);
    // One token, then one decode per step.
    assert_eq!(
        batches(&r)[..4],
        [vec![(0, 1)], vec![(0, 1)], vec![(0, 1)], vec![(0, 1)]]
    );
    let m = r.metrics();
    assert_eq!((m.prefill_tokens, m.transferred_tokens), (1, 999));
    assert_eq!(m.output_tokens, 4);
    // The first token comes at the end of the first step: one token's work, not a prompt's.
    let first = first_token_time(&events, 0).expect("a first token");
    // (The step also pays the CPU's work to take one request in.)
    let mut step = BatchTotals::of(&[BatchItem {
        new_tokens: 1,
        context_len: 1_000,
    }]);
    step.admitted = 1;
    let one = r.cost_model().step_totals(&step);
    assert!(
        (first - one.total_s).abs() < 1e-12,
        "{first} {}",
        one.total_s
    );
    // Its 62 full prompt blocks are in the prefix cache: the same prompt hits them.
    assert_eq!(r.cached_prefix_tokens(&prompt), 992);
    assert!(r.audit().consistent);

    // The newest request when the pool runs short, it is preempted, and on readmission it
    // computes its whole prompt again.
    let mut r = replica(8192, 256, Some(80), false);
    let mut events = Vec::new();
    r.submit(
        0.0,
        EngineRequest {
            id: 1,
            prompt: Prompt::unique(2, 60),
            output_len: 600,
            tenant: 0,
        },
    );
    r.advance_to(0.05, &mut events);
    r.submit_with_kv(
        0.05,
        EngineRequest {
            id: 0,
            prompt: Prompt::unique(1, 1_000),
            output_len: 200,
            tenant: 0,
        },
        1_000,
    );
    r.advance_to(f64::INFINITY, &mut events);
    let m = r.metrics();
    assert!(m.preemptions > 0, "80 blocks cannot hold both to the end");
    assert!(events
        .iter()
        .any(|e| matches!(e, ReplicaEvent::Preempted { id: 0, .. })));
    assert_eq!(m.transferred_tokens, 999, "the transferred KV counts once");
    assert!(
        m.prefill_tokens > 1_060,
        "the prompt was computed again: {}",
        m.prefill_tokens
    );
    assert_eq!(m.output_tokens, 800);
    assert!(r.audit().consistent);
}

/// A prefill instance keeps a finished request's blocks until its decode instance has pulled
/// the KV cache (vLLM's `NixlConnector` delays freeing them): meanwhile they count against
/// the pool, and a prompt that needs them waits, then runs once they are released.
#[test]
fn a_prefill_replica_holds_a_finished_requests_blocks_until_they_are_pulled() {
    let mut r = replica(8192, 256, Some(80), true);
    let mut events = Vec::new();
    r.submit_holding_kv(
        0.0,
        EngineRequest {
            id: 0,
            prompt: Prompt::unique(1, 1_000),
            output_len: 1,
            tenant: 0,
        },
    );
    r.advance_to(1.0, &mut events);
    let done = events
        .iter()
        .find_map(|e| match *e {
            ReplicaEvent::Finished { id: 0, t, .. } => Some(t),
            _ => None,
        })
        .expect("the prefill finished");
    // 1,000 tokens in 63 blocks, still taken after the request ended.
    assert_eq!(r.held_kv_blocks(), 63);
    assert_eq!(r.audit().allocated, 63);
    assert!(r.audit().consistent);
    // A 600-token prompt needs 38 blocks: only 17 are free, so it waits.
    r.submit(
        1.0,
        EngineRequest {
            id: 1,
            prompt: Prompt::unique(2, 600),
            output_len: 1,
            tenant: 0,
        },
    );
    r.advance_to(2.0, &mut events);
    assert!(first_token_time(&events, 1).is_none(), "nothing for it yet");
    assert!(r.audit().consistent);
    // Pulled at 2 s: the blocks go back, and the waiting prompt runs from there.
    assert!(r.release_kv(0, 2.0));
    assert!(!r.release_kv(0, 2.0), "released once");
    r.advance_to(f64::INFINITY, &mut events);
    let first = first_token_time(&events, 1).expect("it ran");
    assert!(first > 2.0 && done < 1.0, "{first} {done}");
    let a = r.audit();
    assert!(a.consistent && a.allocated == 0, "{a:?}");
}
