//! The KV cache's host-memory tier: chats whose history the GPU pool has evicted come back
//! and find it in host memory; a copy back is chosen only when the cost model says it is
//! quicker than computing the tokens again; blocks and requests are conserved.

use proptest::prelude::*;
use trainer_engine::replica::{ReplicaConfig, ReplicaSim, ReplicaSimConfig, RunReport};
use trainer_engine::workload::{Arrival, LengthDist, SessionConfig, WorkloadConfig};

/// Chats on one seed replica whose GPU pool holds `blocks` blocks, with `host_gib` GiB of
/// host memory for the KV cache: `rate` new chats a second, `turns` turns each of `text`
/// new tokens and `reply` reply tokens, `think_s` seconds between turns.
fn chats(blocks: u32, host_gib: f64, rate: f64, turns: u32, think_s: f64) -> ReplicaSimConfig {
    let mut replica = ReplicaConfig::seed();
    replica.kv_blocks_override = Some(blocks);
    replica.scheduler.kv_offloading_size = host_gib;
    ReplicaSimConfig {
        replica,
        workload: WorkloadConfig {
            arrival: Arrival::Poisson { rate },
            prompt_len: LengthDist::Constant { value: 1_500 },
            output_len: LengthDist::Constant { value: 150 },
            sessions: Some(SessionConfig {
                turns,
                think_time_s: think_s,
                system_prompt_len: 0,
                reply_time_per_token_s: 0.02,
                history_limit: 0,
            }),
            tenants: 1,
            duration_s: 120.0,
            seed: 3,
        },
        limits: Default::default(),
        sample_interval_s: 1.0,
        max_concurrency: None,
    }
}

fn run(cfg: ReplicaSimConfig) -> (RunReport, ReplicaSim) {
    let mut sim = ReplicaSim::new(cfg).expect("valid");
    let r = sim.run();
    (r, sim)
}

#[test]
fn chats_that_come_back_after_eviction_reload_their_history_instead_of_recomputing_it() {
    // 2,000 blocks hold 32,000 tokens: a few chats' histories. Turns come back after a
    // minute, by when other chats have pushed them out of the GPU.
    let (none, a) = run(chats(2_000, 0.0, 1.0, 4, 60.0));
    let (host, b) = run(chats(2_000, 64.0, 1.0, 4, 60.0));
    let (ma, mb) = (a.replica().metrics(), b.replica().metrics());
    assert_eq!(none.finished, host.finished);
    assert!(mb.host_hit_tokens > 10_000, "{mb:?}");
    assert_eq!(ma.host_hit_tokens, 0);
    // What was copied back was not computed again.
    assert!(mb.prefill_tokens + mb.host_hit_tokens <= ma.prefill_tokens + 16 * none.finished);
    assert!(mb.prefill_tokens < ma.prefill_tokens);
    assert!(mb.reload_s > 0.0 && mb.reload_saved_s > mb.reload_s);
    assert!(
        host.ttft.mean < none.ttft.mean,
        "{} {}",
        host.ttft.mean,
        none.ttft.mean
    );
    // The tier holds what the GPU let go, up to its size.
    let (held, stored, _) = b.replica().host_tier().expect("a host tier");
    assert!(held > 0 && stored >= held as u64);
    assert!(a.replica().host_tier().is_none());
    assert!(b.replica().audit().consistent);
}

#[test]
fn a_copy_back_slower_than_recomputing_is_never_chosen() {
    // A host link of one megabyte a second: every block found in host memory is computed
    // again, and the run is the run without the tier, to the bit.
    let mut slow = chats(2_000, 64.0, 1.0, 4, 60.0);
    slow.replica.deployment.gpu.host_bw = 1e6;
    let (with, s) = run(slow);
    let (without, _) = run(chats(2_000, 0.0, 1.0, 4, 60.0));
    let m = s.replica().metrics();
    assert!(m.host_recomputed_tokens > 10_000, "{m:?}");
    assert_eq!((m.host_hit_tokens, m.reload_s), (0, 0.0));
    assert_eq!(with, without);
}

#[test]
fn a_tier_too_small_for_a_history_drops_the_oldest_and_hits_less() {
    let (_, big) = run(chats(2_000, 64.0, 1.0, 4, 60.0));
    let (_, small) = run(chats(2_000, 0.5, 1.0, 4, 60.0));
    let (hb, hs) = (
        big.replica().metrics().host_hit_tokens,
        small.replica().metrics().host_hit_tokens,
    );
    assert!(hs < hb, "{hs} {hb}");
    let (held, _, dropped) = small.replica().host_tier().unwrap();
    // Half a GiB of 2 MiB blocks (16 tokens of 128 KiB).
    assert!(held <= 256, "{held}");
    assert!(dropped > 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Over random chats, pools and tiers: every request finishes with its tokens, blocks
    /// are conserved, and no more is copied back than was looked up.
    #[test]
    fn random_chats_with_a_host_tier_conserve_blocks_and_tokens(
        blocks in 300u32..3_000,
        host_gib in prop::sample::select(vec![0.0, 0.25, 4.0, 64.0]),
        rate in 0.2f64..2.0,
        turns in 1u32..5,
        think in 1.0f64..90.0,
        seed in 0u64..1_000,
    ) {
        let mut cfg = chats(blocks, host_gib, rate, turns, think);
        cfg.workload.seed = seed;
        cfg.workload.duration_s = 60.0;
        let (r, sim) = run(cfg);
        let m = sim.replica().metrics();
        let a = sim.replica().audit();
        prop_assert!(a.consistent && a.allocated == 0 && a.references == 0, "{a:?}");
        prop_assert_eq!(m.finished + m.rejected, m.submitted);
        // The run's "finished" counts every request that ended, refused ones included.
        prop_assert_eq!(r.finished, m.finished + m.rejected);
        prop_assert_eq!(r.rejected, m.rejected);
        prop_assert!(m.prefix_hit_tokens + m.host_hit_tokens + m.host_recomputed_tokens
            <= m.prefix_query_tokens + m.preemptions * 20_000);
        if host_gib == 0.0 {
            prop_assert_eq!(m.host_hit_tokens + m.host_recomputed_tokens, 0);
        }
    }
}
