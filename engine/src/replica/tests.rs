//! The replica's unit tests: driving one replica by fine-grained syncs and by single steps
//! must show the same thing.

use super::*;
use crate::workload::{Arrival, LengthDist, RequestStream, WorkloadConfig};

/// One way of driving a replica through a workload, checked against another.
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
        assert_eq!(ev_fast, ev_quiet, "events without ITL samples by t = {t}");
        slow.drain_events(&mut ev_slow);
        while slow.next_event_time().is_some_and(|n| n < t) {
            slow.process_next(&mut ev_slow);
        }
        slow.advance_before(t, &mut ev_slow);
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
        assert!(m.fast_forward_steps == 0 && m.spec_accepted > 0);
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
        },
    ];
    for c in &cases {
        check_fine_syncs(c);
    }
}
