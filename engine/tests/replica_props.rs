//! Property tests of the replica over thousands of small random configurations and workloads.

use proptest::prelude::*;
use trainer_engine::replica::{
    EngineRequest, Replica, ReplicaConfig, ReplicaEvent, ReplicaSim, ReplicaSimConfig,
    SchedulerConfig, WorkLimits,
};
use trainer_engine::workload::{Arrival, LengthDist, Prompt, Segment, SessionConfig};

/// One request of a case: (arrival, prompt as (content, length) segment picks, output length).
type CaseRequest = (f64, Vec<(u8, u16)>, u32);

/// A small engine and a handful of requests to push through it.
#[derive(Clone, Debug)]
struct Case {
    sched: SchedulerConfig,
    blocks: u32,
    reqs: Vec<CaseRequest>,
}

fn case() -> impl Strategy<Value = Case> {
    let sched = (
        1u32..300,
        1u32..8,
        prop::sample::select(vec![1u32, 2, 4, 16]),
        any::<bool>(),
        prop::sample::select(vec![0u32, 0, 7, 64]),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        // A host tier of none, a few blocks, or plenty.
        prop::sample::select(vec![0.0f64, 0.0, 0.000_1, 1.0]),
    )
        .prop_map(
            |(budget, seqs, bs, caching, thr, full_isl, async_s, chunked, host)| SchedulerConfig {
                max_num_batched_tokens: budget,
                max_num_seqs: seqs,
                block_size: bs,
                enable_prefix_caching: caching,
                long_prefill_token_threshold: thr,
                scheduler_reserve_full_isl: full_isl,
                async_scheduling: async_s,
                chunked_prefill: chunked,
                kv_offloading_size: host,
            },
        );
    // Prompts are made of segments picked from a small pool, so prefixes repeat often.
    let req = (
        0.0f64..0.5,
        prop::collection::vec((0u8..4, 1u16..120), 1..4),
        0u32..40,
    );
    (sched, 1u32..200, prop::collection::vec(req, 1..25)).prop_map(|(sched, blocks, mut reqs)| {
        reqs.sort_by(|a, b| a.0.total_cmp(&b.0));
        Case {
            sched,
            blocks,
            reqs,
        }
    })
}

fn prompt(picks: &[(u8, u16)]) -> Prompt {
    Prompt {
        segments: picks
            .iter()
            .map(|&(c, len)| Segment {
                content: c as u64,
                len: len as u32,
            })
            .collect(),
        fresh: false,
    }
}

/// What one case did, with every invariant checked on the way.
struct Outcome {
    events: Vec<ReplicaEvent>,
}

/// The seed replica with the case's scheduler and pool, tracing every step.
fn replica_of(c: &Case) -> Result<Replica, TestCaseError> {
    let mut cfg = ReplicaConfig::seed();
    cfg.scheduler = c.sched.clone();
    cfg.kv_blocks_override = Some(c.blocks);
    cfg.trace_capacity = 100_000;
    Replica::new(cfg).map_err(|e| TestCaseError::fail(e.to_string()))
}

/// Runs a case one engine action at a time, auditing the KV pool and the batch after each.
fn run_case(c: &Case) -> Result<Outcome, TestCaseError> {
    let mut r = replica_of(c)?;
    let mut events = Vec::new();
    let mut next = 0;
    let mut guard = 0u32;
    loop {
        guard += 1;
        prop_assert!(guard < 200_000, "the engine does not terminate");
        let arrival = c.reqs.get(next).map(|q| q.0);
        let engine = r.next_event_time();
        match (arrival, engine) {
            (None, None) => break,
            (Some(a), e) if e.is_none_or(|e| a <= e) => {
                let (t, picks, out) = &c.reqs[next];
                r.submit(
                    *t,
                    EngineRequest {
                        id: next as u64,
                        prompt: prompt(picks),
                        output_len: *out,
                        tenant: 0,
                    },
                );
                r.drain_events(&mut events);
                next += 1;
            }
            _ => {
                prop_assert!(r.process_next(&mut events));
            }
        }
        let a = r.audit();
        prop_assert!(a.consistent, "{a:?}");
        prop_assert_eq!(a.allocated + a.free, a.total);
        prop_assert_eq!(r.load().kv_blocks_used, a.allocated);
        let load = r.load();
        prop_assert!(load.running <= c.sched.max_num_seqs);
        let in_flight = next as u64 - r.metrics().finished - r.metrics().rejected;
        prop_assert_eq!(load.outstanding as u64, in_flight);
    }
    for step in r.trace() {
        let used: u32 = step.entries.iter().map(|e| e.new_tokens).sum();
        prop_assert!(used <= c.sched.max_num_batched_tokens);
        prop_assert_eq!(used, step.budget_used);
        prop_assert!(step.entries.len() as u32 <= c.sched.max_num_seqs);
        if c.sched.long_prefill_token_threshold > 0 {
            prop_assert!(step
                .entries
                .iter()
                .all(|e| e.new_tokens <= c.sched.long_prefill_token_threshold));
        }
        prop_assert!(step.end > step.start);
    }
    Ok(Outcome { events })
}

/// The time of an event.
fn time(e: &ReplicaEvent) -> f64 {
    match *e {
        ReplicaEvent::Admitted { t, .. }
        | ReplicaEvent::FirstToken { t, .. }
        | ReplicaEvent::Finished { t, .. }
        | ReplicaEvent::Preempted { t, .. }
        | ReplicaEvent::StepEnd { t, .. } => t,
    }
}

// Invariant: for any small engine and workload, the KV pool always balances (allocated + free =
// total, reference counts match the block tables), no step exceeds the token budget or
// max_num_seqs, event times never go back, no request is lost, and every request that fits
// the pool finishes with exactly its output length (the rest are rejected with none).
proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
    #[test]
    fn engine_invariants_hold(c in case()) {
        let out = run_case(&c)?;
        prop_assert!(out.events.windows(2).all(|w| time(&w[0]) <= time(&w[1])));
        let bs = c.sched.block_size as u64;
        for (id, (_, picks, want)) in c.reqs.iter().enumerate() {
            let finishes: Vec<u32> = out.events.iter().filter_map(|e| match *e {
                ReplicaEvent::Finished { id: i, output_tokens, .. } if i == id as u64 => Some(output_tokens),
                _ => None,
            }).collect();
            prop_assert_eq!(finishes.len(), 1, "request {} finished {} times", id, finishes.len());
            let p = prompt(picks).len() as u64;
            // The last sampled token needs no KV slot: P + O - 1 tokens must fit.
            let fits = *want > 0
                && (p + *want as u64 - 1).div_ceil(bs) <= c.blocks as u64
                && (c.sched.chunked_prefill
                    || p + *want as u64 - 1 <= c.sched.max_num_batched_tokens as u64);
            prop_assert_eq!(finishes[0], if fits { *want } else { 0 });
        }
    }
}

/// A random small workload for the whole driver.
fn sim_config() -> impl Strategy<Value = ReplicaSimConfig> {
    (
        0.5f64..40.0,
        prop::sample::select(vec![0.5f64, 1.0, 3.0]),
        any::<bool>(),
        (1u32..3000, 1u32..400),
        prop::option::of(30u32..2000),
        (1u32..600, 1u32..64, any::<bool>()),
        any::<u64>(),
    )
        .prop_map(
            |(rate, cv, sessions, (p, o), blocks, (budget, seqs, caching), seed)| {
                let mut cfg = ReplicaSimConfig::seed();
                cfg.workload.arrival = Arrival::Gamma { rate, cv };
                cfg.workload.prompt_len = LengthDist::Uniform { min: 1, max: p };
                cfg.workload.output_len = LengthDist::Uniform { min: 1, max: o };
                cfg.workload.duration_s = 3.0;
                cfg.workload.seed = seed;
                cfg.workload.sessions = sessions.then_some(SessionConfig {
                    turns: 3,
                    think_time_s: 0.2,
                    system_prompt_len: 100,
                    reply_time_per_token_s: 0.001,
                    history_limit: 0,
                });
                cfg.replica.kv_blocks_override = blocks;
                cfg.replica.scheduler.max_num_batched_tokens = budget;
                cfg.replica.scheduler.max_num_seqs = seqs;
                cfg.replica.scheduler.enable_prefix_caching = caching;
                cfg.limits = WorkLimits {
                    max_steps: 200_000,
                    ..WorkLimits::default()
                };
                cfg
            },
        )
}

// Invariant: a whole run is deterministic, identical whether it is fast-forwarded or stepped
// one event at a time, and accounts for every request (arrived = finished + in flight).
proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn runs_are_deterministic_and_fast_forward_is_exact(cfg in sim_config()) {
        let a = ReplicaSim::new(cfg.clone()).unwrap().run();
        let b = ReplicaSim::new(cfg.clone()).unwrap().run();
        prop_assert_eq!(&a, &b);
        let mut slow = ReplicaSim::new(cfg).unwrap();
        while slow.step_event() {}
        prop_assert_eq!(&slow.report(), &a);
        prop_assert_eq!(a.arrived, a.finished + a.in_flight);
        for r in &a.requests {
            if r.finish.is_some() && !r.rejected {
                prop_assert_eq!(r.output_tokens, r.output_len);
                prop_assert!(r.arrival <= r.admitted.unwrap_or(f64::NAN));
                prop_assert!(r.admitted.unwrap_or(f64::NAN) < r.first_token.unwrap_or(f64::NAN));
                prop_assert!(r.first_token.unwrap_or(f64::NAN) <= r.finish.unwrap_or(f64::NAN));
            }
        }
    }
}

/// Runs a case whose every request has content of its own (request `i`'s segments carry
/// content ids no other request uses), its prompts marked fresh or not, returning everything
/// the engine shows after each action: events, snapshots, free cached blocks, metrics, trace.
fn run_own_content(c: &Case, fresh: bool) -> Result<Vec<String>, TestCaseError> {
    let mut r = replica_of(c)?;
    let mut seen = Vec::new();
    let mut events = Vec::new();
    let mut next = 0;
    let mut guard = 0u32;
    loop {
        guard += 1;
        prop_assert!(guard < 200_000, "the engine does not terminate");
        let arrival = c.reqs.get(next).map(|q| q.0);
        match (arrival, r.next_event_time()) {
            (None, None) => break,
            (Some(a), e) if e.is_none_or(|e| a <= e) => {
                let (t, picks, out) = &c.reqs[next];
                let mut p = prompt(picks);
                for (j, s) in p.segments.iter_mut().enumerate() {
                    s.content = (next as u64) << 8 | j as u64;
                }
                p.fresh = fresh;
                let id = next as u64;
                r.submit(
                    *t,
                    EngineRequest {
                        id,
                        prompt: p,
                        output_len: *out,
                        tenant: 0,
                    },
                );
                r.drain_events(&mut events);
                next += 1;
            }
            _ => prop_assert!(r.process_next(&mut events)),
        }
        let a = r.audit();
        prop_assert!(a.consistent, "{a:?}");
        seen.push(format!(
            "{:?} {:?} {:?}",
            r.snapshot(),
            r.free_cached_blocks(),
            a
        ));
    }
    seen.push(format!("{events:?} {:?} {:?}", r.metrics(), r.trace()));
    Ok(seen)
}

// A fresh prompt's blocks are cached out of the shared prefix index (only its own request can
// hit them, after a preemption). For requests that share no content, the engine must behave
// exactly as with every block hashed and indexed: same events, block tables, free queue
// contents, prefix hits and preemptions, after every action. Small pools force preemptions and
// re-admissions that hit (or half hit) their own blocks.
proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]
    #[test]
    fn fresh_prompts_behave_as_hashed_ones(c in case()) {
        // Without a host tier: a fresh prompt's private blocks are not kept there, so a
        // preempted fresh request computes again what a hashed one may copy back.
        let mut c = c;
        c.sched.kv_offloading_size = 0.0;
        let hashed = run_own_content(&c, false)?;
        let fresh = run_own_content(&c, true)?;
        prop_assert_eq!(hashed.len(), fresh.len());
        for (i, (h, f)) in hashed.iter().zip(&fresh).enumerate() {
            prop_assert_eq!(h, f, "differs after action {}", i);
        }
    }
}
