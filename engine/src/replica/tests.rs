//! The replica's unit tests: driving one replica by fine-grained syncs and by single steps
//! must show the same thing.

use super::*;
use crate::workload::{Arrival, LengthDist, RequestStream, WorkloadConfig};

/// One way of driving a replica through a workload, checked against another.
#[derive(Clone)]
struct FineSyncCase {
    block_size: u32,
    kv_blocks: Option<u32>,
    caching: bool,
    rate: f64,
    /// Time between the driver's looks at the replica, as the fleet's routing syncs.
    sync_every_s: f64,
    /// Whether whole steps fit between looks (otherwise every step is composed in flight
    /// by the fast-forward and ended by the fast finish, and none is fast-forwarded).
    whole_steps_between_looks: bool,
    /// Speculative decoding (the fast-forward stands aside; the one-pass speculating step
    /// runs instead).
    speculative: Option<spec::SpeculativeConfig>,
    /// Every token's time kept (compared at every look).
    record_token_times: bool,
    /// Every this many looks, a client disconnects: a running request (and, at other looks,
    /// a waiting one) is cancelled in all three replicas alike (0 = never).
    cancel_every: u32,
}

/// Drives two identical replicas through the same arrivals, looking at both every
/// `sync_every_s`: one with `advance_before` (fast-forward, in-flight composition, fast
/// finishes), one with `process_next` alone. Everything a driver can see must agree at
/// every look.
fn check_fine_syncs(c: &FineSyncCase) {
    let mut cfg = ReplicaConfig::seed();
    cfg.scheduler.block_size = c.block_size;
    cfg.scheduler.enable_prefix_caching = c.caching;
    cfg.kv_blocks_override = c.kv_blocks;
    cfg.speculative = c.speculative.clone();
    cfg.record_token_times = c.record_token_times;
    let mut fast = Replica::new(cfg.clone()).unwrap();
    let mut slow = Replica::new(cfg.clone()).unwrap();
    // As `fast`, without ITL samples (as the fleet drives it): nothing else may differ.
    let mut quiet = Replica::new(cfg).unwrap();
    quiet.set_itl_samples(false);
    let mut ev_quiet = Vec::new();
    let workload = WorkloadConfig {
        arrival: Arrival::Poisson { rate: c.rate },
        prompt_len: LengthDist::Uniform { min: 20, max: 900 },
        output_len: LengthDist::Uniform { min: 1, max: 300 },
        duration_s: 20.0,
        ..WorkloadConfig::seed_replica()
    };
    let mut arrivals = RequestStream::new(&workload).unwrap().peekable();
    let (mut ev_fast, mut ev_slow) = (Vec::new(), Vec::new());
    let mut t = 0.0;
    let (mut looks, mut recorded) = (0, 0);
    let mut cancelled: Vec<u64> = Vec::new();
    while t < 40.0 {
        t += c.sync_every_s;
        while let Some(req) = arrivals.next_if(|r| r.arrival <= t) {
            for r in [&mut fast, &mut slow, &mut quiet] {
                r.submit(
                    req.arrival,
                    EngineRequest {
                        id: req.id,
                        prompt: req.prompt.clone(),
                        output_len: req.output_len,
                        tenant: req.tenant,
                    },
                );
            }
        }
        fast.advance_before(t, &mut ev_fast);
        quiet.advance_before(t, &mut ev_quiet);
        if c.cancel_every > 0 && looks > 0 {
            cancel_some(c.cancel_every, looks, t, &mut fast, &mut cancelled);
        }
        assert_eq!(ev_fast, ev_quiet, "events without ITL samples by t = {t}");
        slow.drain_events(&mut ev_slow);
        while slow.next_event_time().is_some_and(|n| n < t) {
            slow.process_next(&mut ev_slow);
        }
        slow.advance_before(t, &mut ev_slow);
        if c.cancel_every > 0 && looks > 0 {
            let before = cancelled.len();
            let mut again = Vec::new();
            cancel_some(c.cancel_every, looks, t, &mut slow, &mut again);
            assert_eq!(
                again,
                cancelled[before - again.len()..],
                "the same requests cancelled"
            );
            for &id in &again {
                assert!(quiet.cancel(id, t), "the quiet replica holds {id} too");
            }
        }
        assert_eq!(ev_fast, ev_slow, "events by t = {t}");
        assert_eq!(fast.load(), slow.load(), "load at t = {t}");
        assert_eq!(fast.snapshot(), slow.snapshot(), "snapshot at t = {t}");
        assert_eq!(fast.metrics().steps, slow.metrics().steps);
        let times = fast.drain_token_times();
        assert_eq!(times, slow.drain_token_times(), "token times by t = {t}");
        assert_eq!(times, quiet.drain_token_times(), "token times by t = {t}");
        recorded += times.iter().map(|(_, t)| t.len()).sum::<usize>();
        looks += 1;
    }
    if c.speculative.is_some() {
        let m = fast.metrics();
        assert!(
            m.fast_forward_steps == 0 && m.spec_accepted > 0,
            "{} fast-forwarded, {} accepted, {} steps, block size {}",
            m.fast_forward_steps,
            m.spec_accepted,
            m.steps,
            c.block_size
        );
        assert!(
            m.spec_fast_steps > m.steps / 2 && m.spec_fast_steps < m.steps,
            "{} of {} steps by the one-pass path",
            m.spec_fast_steps,
            m.steps
        );
        assert_eq!(slow.metrics().spec_fast_steps, 0);
    } else {
        assert_eq!(
            fast.metrics().fast_forward_steps > 0,
            c.whole_steps_between_looks,
            "whole steps fast-forwarded between looks"
        );
    }
    assert!(looks > 100);
    assert_eq!(recorded > 0, c.record_token_times, "token times kept");
    let (mf, ms) = (fast.metrics(), slow.metrics());
    assert_eq!(mf.itl.clone().summary(), ms.itl.clone().summary());
    assert!(!mf.itl.is_empty() && quiet.metrics().itl.is_empty());
    assert_eq!(quiet.snapshot(), fast.snapshot());
    assert_eq!(
        (
            mf.busy_time_s,
            mf.decode_tokens,
            mf.preemptions,
            mf.prefix_hit_tokens
        ),
        (
            ms.busy_time_s,
            ms.decode_tokens,
            ms.preemptions,
            ms.prefix_hit_tokens
        )
    );
    assert!(fast.audit().consistent && slow.audit().consistent);
    assert_eq!(mf.cancelled, cancelled.len() as u64);
    assert_eq!(
        (mf.cancelled, mf.cancelled_running, mf.cancelled_blocks),
        (ms.cancelled, ms.cancelled_running, ms.cancelled_blocks)
    );
    let (cancelled_n, cancelled_running) = (mf.cancelled, mf.cancelled_running);
    if c.cancel_every > 0 {
        assert!(
            cancelled_running > 5,
            "{} running requests cancelled",
            cancelled_running
        );
        if c.kv_blocks.is_some() {
            // A short pool keeps requests waiting: some of those are cancelled too.
            assert!(
                cancelled_n > cancelled_running,
                "waiting ones cancelled too"
            );
        }
        // Nothing is reported for a request after it is cancelled (ids are never reused).
        let mut gone = std::collections::BTreeSet::new();
        let mut ev = Vec::new();
        fast.advance_to(f64::INFINITY, &mut ev);
        ev_fast.extend(ev);
        for id in &cancelled {
            gone.insert(*id);
        }
        let finished: Vec<u64> = ev_fast
            .iter()
            .filter_map(|e| match e {
                ReplicaEvent::Finished { id, .. } => Some(*id),
                _ => None,
            })
            .collect();
        assert!(
            finished.iter().all(|id| !gone.contains(id)),
            "a cancelled request finished"
        );
        // Every request finished or was cancelled; nothing is left queued or held.
        assert_eq!(
            finished.len() as u64 + cancelled_n,
            fast.metrics().submitted
        );
        let load = fast.load();
        assert_eq!((load.outstanding, load.queued_prompt_tokens), (0, 0));
        assert!(fast.audit().consistent);
    }
}

/// Cancels, at look `look`, the running request at a position that moves with the looks
/// (every `every` looks) or the last waiting one (at the looks in between that are a multiple
/// of 3), recording the ids cancelled.
fn cancel_some(every: u32, look: u32, t: f64, r: &mut Replica, out: &mut Vec<u64>) {
    let snap = r.snapshot();
    let pick = if look % every == 0 && !snap.running.is_empty() {
        Some(snap.running[(look / every) as usize % snap.running.len()].id)
    } else if look % every == 3 {
        snap.waiting.last().map(|s| s.id)
    } else {
        None
    };
    if let Some(id) = pick {
        let held = r.load().kv_blocks_used;
        let blocks = snap
            .running
            .iter()
            .find(|s| s.id == id)
            .map_or(0, |s| s.blocks.len() as u32);
        assert!(r.cancel(id, t), "cancel {id}");
        assert!(!r.cancel(id, t), "{id} is no longer held");
        // Its blocks are free at once (shared prefix blocks stay held by the others).
        assert!(r.load().kv_blocks_used <= held);
        assert!(r.load().kv_blocks_used + blocks >= held);
        out.push(id);
    }
}

fn eagle(k: u32, acceptance_rate: f64) -> spec::SpeculativeConfig {
    spec::SpeculativeConfig {
        method: spec::SpecMethod::Eagle,
        num_speculative_tokens: k,
        acceptance_rate,
        disable_by_batch_size: None,
    }
}

#[test]
fn fine_grained_syncs_see_what_single_steps_see() {
    let cases = [
        // The seed replica looked at every 20 ms, as the seed fleet's routing does.
        FineSyncCase {
            block_size: 16,
            kv_blocks: None,
            caching: true,
            rate: 6.25,
            sync_every_s: 0.02,
            whole_steps_between_looks: true,
            speculative: None,
            record_token_times: false,
            cancel_every: 0,
        },
        // Odd block size, looks shorter than a step, no prefix caching.
        FineSyncCase {
            block_size: 5,
            kv_blocks: None,
            caching: false,
            rate: 4.0,
            sync_every_s: 0.003,
            whole_steps_between_looks: false,
            speculative: None,
            record_token_times: false,
            cancel_every: 0,
        },
        // A small pool: fast-forwards stop where blocks run out, and preemptions happen.
        FineSyncCase {
            block_size: 16,
            kv_blocks: Some(400),
            caching: true,
            rate: 8.0,
            sync_every_s: 0.011,
            whole_steps_between_looks: true,
            speculative: None,
            record_token_times: false,
            cancel_every: 0,
        },
        // Speculation (an EAGLE-style head, 3 guesses) on the seed replica, looked at as the
        // fleet does, and with looks shorter than a step.
        FineSyncCase {
            block_size: 16,
            kv_blocks: None,
            caching: true,
            rate: 6.25,
            sync_every_s: 0.02,
            whole_steps_between_looks: true,
            speculative: Some(eagle(3, 0.6)),
            record_token_times: false,
            cancel_every: 0,
        },
        // Every token's time kept, too.
        FineSyncCase {
            block_size: 5,
            kv_blocks: None,
            caching: false,
            rate: 4.0,
            sync_every_s: 0.003,
            whole_steps_between_looks: false,
            speculative: Some(eagle(6, 0.8)),
            record_token_times: true,
            cancel_every: 0,
        },
        // A small pool: the one-pass step stands aside where the pool could run short, and
        // rollbacks, preemptions and recomputes happen.
        FineSyncCase {
            block_size: 16,
            kv_blocks: Some(400),
            caching: true,
            rate: 8.0,
            sync_every_s: 0.011,
            whole_steps_between_looks: true,
            speculative: Some(eagle(2, 0.5)),
            record_token_times: false,
            cancel_every: 0,
        },
    ];
    for c in &cases {
        check_fine_syncs(c);
    }
}

/// Clients disconnect while the replica runs (fast-forwarded steps in flight, speculating
/// steps, a pool short enough to preempt): cancelling through fine syncs and through single
/// steps still shows the same thing, cancelled requests free their blocks at once and are
/// never heard of again.
#[test]
fn disconnects_free_their_requests_alike_on_every_path() {
    let base = FineSyncCase {
        block_size: 16,
        kv_blocks: None,
        caching: true,
        rate: 6.25,
        sync_every_s: 0.02,
        whole_steps_between_looks: true,
        speculative: None,
        record_token_times: false,
        cancel_every: 15,
    };
    check_fine_syncs(&base);
    check_fine_syncs(&FineSyncCase {
        kv_blocks: Some(400),
        rate: 8.0,
        sync_every_s: 0.011,
        cancel_every: 27,
        ..base.clone()
    });
    check_fine_syncs(&FineSyncCase {
        speculative: Some(eagle(3, 0.6)),
        ..base.clone()
    });
    check_fine_syncs(&FineSyncCase {
        block_size: 5,
        caching: false,
        rate: 4.0,
        sync_every_s: 0.003,
        whole_steps_between_looks: false,
        speculative: Some(eagle(6, 0.8)),
        record_token_times: true,
        cancel_every: 100,
        ..base.clone()
    });
}

/// As vLLM's scheduler tests abort a running request: two long replies decode side by side,
/// the client of one disconnects while a step is in flight. That step ends without a token
/// for it, its blocks are back in the pool at once, the next step runs the other alone, and
/// nothing more is ever reported for it.
#[test]
fn a_disconnect_mid_reply_frees_its_blocks_before_the_next_step() {
    let mut r = Replica::new(ReplicaConfig::seed()).unwrap();
    for id in 0..2 {
        r.submit(
            0.0,
            EngineRequest {
                id,
                prompt: Prompt::fresh(id, 1000),
                output_len: 400,
                tenant: 0,
            },
        );
    }
    let mut ev = Vec::new();
    r.advance_to(1.0, &mut ev);
    let snap = r.snapshot();
    assert_eq!(snap.running.len(), 2);
    assert!(snap.step.is_some(), "a step is in flight at the disconnect");
    let held: Vec<u32> = snap.running.iter().map(|s| s.blocks.len() as u32).collect();
    let used = r.load().kv_blocks_used;
    assert_eq!(used, held.iter().sum::<u32>());
    let tokens = snap.running[0].output_tokens;
    assert!(tokens > 10);
    assert!(r.cancel(0, 1.0));
    assert_eq!(
        r.load().kv_blocks_used,
        used - held[0],
        "freed at the disconnect"
    );
    assert_eq!(r.load().running, 1);
    let m = r.metrics();
    assert_eq!(
        (
            m.cancelled,
            m.cancelled_running,
            m.cancelled_blocks,
            m.cancelled_output_tokens
        ),
        (1, 1, held[0] as u64, tokens as u64)
    );
    ev.clear();
    r.advance_to(f64::INFINITY, &mut ev);
    let mut steps = 0;
    for e in &ev {
        match *e {
            ReplicaEvent::StepEnd { running, .. } => {
                steps += 1;
                // (The last step reports none: the other has just finished.)
                assert!(running <= 1, "the next step runs the other alone");
            }
            ReplicaEvent::FirstToken { id, .. } | ReplicaEvent::Finished { id, .. } => {
                assert_eq!(id, 1, "nothing more is heard of the cancelled request")
            }
            _ => {}
        }
    }
    assert!(steps > 100);
    assert_eq!(r.metrics().finished, 1);
    assert_eq!(r.load().kv_blocks_used, 0);
    assert!(r.audit().consistent);
    assert!(
        !r.cancel(0, 2.0),
        "a request cancelled twice is not held the second time"
    );
}
