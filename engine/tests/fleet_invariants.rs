//! Invariants of the fleet simulator over random fleets, and the behaviour of its parts
//! (quota, overflow, slicing, bad input) through whole runs.

use proptest::prelude::*;
use trainer_engine::fleet::{
    Buffering, FleetConfig, FleetReport, FleetSim, HostedApi, Outcome, OverflowAction, PoolConfig,
    QuotaWindow, RejectReason, ReplicaFault, RequestRecord, RoutingPolicy, SpillTarget,
};
use trainer_engine::replica::lora::LoraConfig;
use trainer_engine::workload::{Arrival, LengthDist, SessionConfig};

/// A small seed-like fleet: `rate` req/s of short requests for `horizon` seconds.
fn small(rate: f64, replicas: u32, horizon: f64) -> FleetConfig {
    let mut cfg = FleetConfig::seed();
    let w = &mut cfg.traffic[0].workload;
    w.arrival = Arrival::Poisson { rate };
    w.prompt_len = LengthDist::Uniform { min: 50, max: 1500 };
    w.output_len = LengthDist::Uniform { min: 1, max: 120 };
    w.duration_s = horizon;
    cfg.pools = vec![PoolConfig::seed(replicas)];
    cfg.record_requests = true;
    cfg
}

fn run(cfg: FleetConfig) -> (FleetReport, Vec<RequestRecord>) {
    let mut sim = FleetSim::new(cfg).expect("valid fleet");
    sim.run();
    (sim.report(), sim.records().to_vec())
}

/// Checks what must hold at the end of any run; returns a description of the first breach.
fn check_run(r: &FleetReport, recs: &[RequestRecord]) -> Result<(), String> {
    let o = &r.outcomes;
    if o.in_flight != 0
        || o.arrived
            != o.completed + o.rejected() + o.spilled() + o.timed_out + o.abandoned + o.failed
    {
        return Err(format!("outcomes do not add up: {o:?}"));
    }
    // Every arrival has exactly one record.
    let mut seen = vec![0u32; o.arrived as usize];
    for rec in recs {
        match seen.get_mut(rec.seq as usize) {
            Some(n) => *n += 1,
            None => return Err(format!("record for an unknown request {}", rec.seq)),
        }
    }
    if let Some(i) = seen.iter().position(|&n| n != 1) {
        return Err(format!("request {i} has {} records", seen[i]));
    }
    if r.streams.opened != o.arrived || r.streams.closed != r.streams.opened {
        return Err(format!("streams double-counted: {:?}", r.streams));
    }
    let count = |f: &dyn Fn(&Outcome) -> bool| recs.iter().filter(|x| f(&x.outcome)).count() as u64;
    let by_kind = [
        (count(&|x| *x == Outcome::Completed), o.completed),
        (
            count(&|x| matches!(x, Outcome::Rejected { .. })),
            o.rejected(),
        ),
        (count(&|x| matches!(x, Outcome::Spilled(_))), o.spilled()),
        (count(&|x| *x == Outcome::TimedOut), o.timed_out),
        (count(&|x| *x == Outcome::Abandoned), o.abandoned),
        (count(&|x| *x == Outcome::Failed), o.failed),
    ];
    if by_kind.iter().any(|(a, b)| a != b) {
        return Err(format!("records disagree with counters: {by_kind:?}"));
    }
    for rec in recs {
        let order = [
            rec.sent,
            rec.gateway_in,
            rec.first_byte_written,
            rec.first_byte_at_client,
            rec.last_byte_at_client,
        ];
        if order.windows(2).any(|w| w[1] < w[0] - 1e-12) {
            return Err(format!("times out of order: {rec:?}"));
        }
        if let Outcome::Rejected { .. } | Outcome::TimedOut | Outcome::Abandoned | Outcome::Failed =
            rec.outcome
        {
            continue;
        }
        let (e, s, u) = (rec.engine_ttft(), rec.server_ttft(), rec.user_ttft());
        if !(e >= 0.0 && s >= e - 1e-12 && u >= s - 1e-12) {
            return Err(format!(
                "clocks out of order: engine {e} server {s} user {u}"
            ));
        }
        if rec.engine_in < rec.gateway_in || rec.first_token < rec.engine_in {
            return Err(format!("engine times out of order: {rec:?}"));
        }
    }
    Ok(())
}

fn policy(i: u8) -> RoutingPolicy {
    match i % 7 {
        0 => RoutingPolicy::RoundRobin,
        6 => RoutingPolicy::PowerOfTwo,
        1 => RoutingPolicy::Random,
        2 => RoutingPolicy::LeastOutstanding,
        3 => RoutingPolicy::LeastQueuedTokens,
        4 => RoutingPolicy::KvAware,
        _ => RoutingPolicy::prefix_affinity(1.25),
    }
}

fn buffering(i: u8) -> Buffering {
    match i % 4 {
        0 => Buffering::Off,
        1 => Buffering::Proxy { buffer_bytes: 2048 },
        2 => Buffering::Gzip {
            flush_bytes: 512,
            ratio: 3.0,
        },
        _ => Buffering::CoalescingLb { interval_s: 0.05 },
    }
}

fn overflow(i: u8) -> OverflowAction {
    match i % 4 {
        0 => OverflowAction::Queue,
        1 => OverflowAction::Shed { retry_after_s: 2 },
        2 => OverflowAction::Hosted(HostedApi::default()),
        _ => OverflowAction::SpillToPool { pool: 1 },
    }
}

// Whatever the fleet (small KV pools and preemption included, clients leaving early with or
// without the engine told, a replica failing), every request that arrives ends as exactly one
// of completed, rejected with a reason, spilled, timed out, abandoned or failed (none is
// left in flight after the drain), no stream is counted twice, and user >= server >= engine
// TTFT.
proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_request_ends_once_with_ordered_clocks(
        rate in 2.0f64..60.0,
        replicas in 1u32..4,
        horizon in 3.0f64..12.0,
        pol in 0u8..6,
        buf in 0u8..4,
        ovf in 0u8..4,
        streaming in 0.3f64..1.0,
        budget in 2_000u64..200_000,
        sessions in any::<bool>(),
        small_kv in any::<bool>(),
        leave in 0u8..3,
        fail_at in proptest::option::of(0.0f64..12.0),
        adapters in 0u32..4,
        seed in 0u64..1_000,
    ) {
        let mut cfg = small(rate, replicas, horizon);
        cfg.seed = seed;
        cfg.traffic[0].workload.seed = seed;
        cfg.traffic[0].workload.tenants = 3;
        if sessions {
            cfg.traffic[0].workload.sessions = Some(SessionConfig {
                turns: 3,
                think_time_s: 1.0,
                system_prompt_len: 100,
                reply_time_per_token_s: 0.01,
                // A third of the chats' clients drop their oldest turns past 600 tokens.
                history_limit: if seed % 3 == 0 { 600 } else { 0 },
            });
        }
        if small_kv {
            // 300 blocks of 16 tokens: replicas preempt, and the longest requests are refused.
            cfg.pools[0].replica.kv_blocks_override = Some(300);
        }
        cfg.router.policy = policy(pol);
        if adapters > 0 {
            // Each tenant its own adapter, `adapters` of them in a step; half the time routed
            // by adapter.
            cfg.pools[0].replica.lora = Some(LoraConfig {
                max_loras: adapters,
                ..LoraConfig::default()
            });
            if seed % 2 == 1 {
                cfg.router.policy = RoutingPolicy::adapter_affinity(1.5);
            }
        }
        cfg.relay.buffering = buffering(buf);
        cfg.clients.streaming_fraction = streaming;
        cfg.clients.max_tokens = 100;
        cfg.quota.tokens_per_window = budget;
        cfg.quota.window = if seed % 2 == 0 { QuotaWindow::Fixed } else { QuotaWindow::Sliding };
        cfg.overflow.action = overflow(ovf);
        cfg.overflow.waiting_trigger = 2;
        if leave > 0 {
            cfg.clients.abandon_fraction = 0.4;
            cfg.clients.abandon_after_s = 1.0;
            cfg.gateway.abort_on_disconnect = leave == 1;
        }
        if let Some(at_s) = fail_at {
            cfg.faults = vec![ReplicaFault { at_s, replica: 0 }];
            cfg.gateway.retries = (seed % 3) as u32;
        }
        let mut spill = PoolConfig::seed(1);
        spill.serving = false;
        cfg.pools.push(spill);
        let (r, recs) = run(cfg);
        prop_assert_eq!(check_run(&r, &recs), Ok(()));
    }
}

#[test]
fn the_same_seed_gives_the_same_run_and_slicing_does_not_change_it() {
    let cfg = small(30.0, 2, 10.0);
    let (whole, _) = run(cfg.clone());
    let mut sim = FleetSim::new(cfg).unwrap();
    let mut slices = 0;
    while sim.advance_for(97) > 0 {
        let snap = sim.snapshot();
        assert_eq!(
            snap.arrived,
            snap.completed + snap.rejected + snap.spilled + snap.in_flight
        );
        slices += 1;
    }
    assert!(slices > 10);
    let json = |r: &FleetReport| serde_json::to_string(r).unwrap();
    assert_eq!(json(&sim.report()), json(&whole));
    let mut by_time = FleetSim::new(small(30.0, 2, 10.0)).unwrap();
    by_time.advance_to(5.0);
    assert_eq!(by_time.now(), 5.0);
    assert!(by_time.snapshot().in_flight > 0 && !by_time.is_done());
    by_time.run();
    assert_eq!(json(&by_time.report()), json(&whole));
    // Reading every replica every 20 ms (as a UI does each frame) changes nothing either:
    // replicas advanced lazily give the same run as replicas advanced step by step.
    let mut frames = FleetSim::new(small(30.0, 2, 10.0)).unwrap();
    let mut t = 0.0;
    while !frames.is_done() {
        t += 0.02;
        frames.advance_to(t);
    }
    let (a, b) = (frames.report(), whole);
    assert_eq!(a.clocks, b.clocks);
    assert_eq!(a.outcomes, b.outcomes);
    assert_eq!(a.gap, b.gap);
    assert_eq!(a.streams, b.streams);
}

#[test]
fn an_over_budget_tenant_gets_429_with_retry_after_and_others_do_not() {
    let mut cfg = small(20.0, 2, 20.0);
    cfg.traffic[0].workload.tenants = 2;
    cfg.clients.max_tokens = 200;
    // Tenant 1 may spend 20,000 tokens a minute: about twelve requests.
    cfg.quota.overrides = vec![(1, 20_000)];
    let (r, recs) = run(cfg);
    check_run(&r, &recs).unwrap();
    let t0 = &r.tenants[0];
    let t1 = &r.tenants[1];
    assert_eq!(t0.quota.rejected, 0);
    assert!(t1.quota.rejected > 50, "{t1:?}");
    assert!(t1.quota.tokens_charged <= 20_000);
    assert_eq!(r.outcomes.rejected_quota, t1.quota.rejected);
    for rec in recs
        .iter()
        .filter(|x| matches!(x.outcome, Outcome::Rejected { .. }))
    {
        let Outcome::Rejected {
            reason,
            retry_after_s,
        } = rec.outcome
        else {
            unreachable!()
        };
        assert_eq!(reason, RejectReason::Quota);
        assert!((1..=60).contains(&retry_after_s));
        assert_eq!(rec.tenant, 1);
        // The 429 comes back at once: no engine, no router.
        assert!(rec.last_byte_at_client - rec.sent < 0.1);
    }
}

#[test]
fn overflow_actions_shed_spill_or_send_to_the_hosted_api() {
    // One replica, far more traffic than it can prefill: the queue trigger fires.
    let cases = [
        (OverflowAction::Shed { retry_after_s: 3 }, "shed"),
        (OverflowAction::Hosted(HostedApi::default()), "hosted"),
        (OverflowAction::SpillToPool { pool: 1 }, "pool"),
    ];
    for (action, name) in cases {
        let mut cfg = small(80.0, 1, 8.0);
        cfg.traffic[0].workload.prompt_len = LengthDist::Constant { value: 4000 };
        cfg.overflow.action = action;
        cfg.overflow.queued_tokens_trigger = 16_000;
        let mut spare = PoolConfig::seed(2);
        spare.serving = false;
        cfg.pools.push(spare);
        let (r, recs) = run(cfg);
        check_run(&r, &recs).unwrap();
        let o = &r.outcomes;
        let hit = match name {
            "shed" => o.rejected_shed,
            "hosted" => o.spilled_to_hosted,
            _ => o.spilled_to_pool,
        };
        assert!(hit > 20, "{name}: {o:?}");
        assert!(o.completed > 0, "{name}");
        match name {
            "hosted" => assert!(r.cost.hosted_dollars > 0.0),
            "pool" => {
                // The spare pool serves nothing but the spills.
                assert_eq!(r.pools[1].routed, o.spilled_to_pool);
                assert!(r.pools[1].output_tokens > 0);
                assert!(recs
                    .iter()
                    .any(|x| x.outcome == Outcome::Spilled(SpillTarget::Pool(1))
                        && x.replica.is_some_and(|i| i >= 1)));
            }
            _ => assert_eq!(r.cost.hosted_dollars, 0.0),
        }
    }
}

#[test]
fn non_streaming_replies_have_their_first_byte_at_the_end() {
    let mut cfg = small(10.0, 2, 10.0);
    cfg.clients.streaming_fraction = 0.0;
    let (r, recs) = run(cfg);
    check_run(&r, &recs).unwrap();
    assert_eq!(r.clocks.gateway_itl.count, 0);
    assert!(r.clocks.engine_itl.count > 0);
    for rec in &recs {
        assert!(!rec.streaming);
        assert!((rec.first_byte_at_client - rec.last_byte_at_client).abs() < 1e-12);
    }
}

#[test]
fn bad_fleets_are_errors_that_name_the_field() {
    type Breaks = fn(&mut FleetConfig);
    let cases: [(&str, Breaks); 6] = [
        ("traffic", |c| c.traffic.clear()),
        ("pools", |c| c.pools.clear()),
        ("pools[0].replicas", |c| c.pools[0].replicas = 99),
        ("router.policy.load_bound", |c| {
            c.router.policy = RoutingPolicy::prefix_affinity(0.0)
        }),
        ("overflow.action.pool", |c| {
            c.overflow.action = OverflowAction::SpillToPool { pool: 5 }
        }),
        ("clients.regions[0].rtt_s", |c| {
            c.clients.regions[0].rtt_s = f64::NAN
        }),
    ];
    for (field, breaks) in cases {
        let mut cfg = FleetConfig::seed();
        breaks(&mut cfg);
        let err = FleetSim::new(cfg).err().expect("rejected");
        assert_eq!(err.field, field);
    }
}

#[test]
fn a_request_no_replica_can_hold_is_refused_not_lost() {
    // A 100-block pool holds 1,600 tokens; prompts of up to 3,000 tokens sometimes exceed it.
    let mut cfg = small(10.0, 2, 10.0);
    cfg.traffic[0].workload.prompt_len = LengthDist::Uniform {
        min: 100,
        max: 3_000,
    };
    cfg.pools[0].replica.kv_blocks_override = Some(100);
    let (r, recs) = run(cfg);
    check_run(&r, &recs).unwrap();
    assert!(r.outcomes.rejected_no_replica > 0 && r.outcomes.completed > 0);
    assert!(recs.iter().all(|x| match x.outcome {
        Outcome::Rejected { reason, .. } => reason == RejectReason::NoReplica,
        _ => x.prompt_tokens as u64 + x.output_tokens as u64 <= 1_600,
    }));
}

#[test]
fn the_report_carries_the_clients_view_under_vllm_bench_names() {
    let mut cfg = FleetConfig::seed();
    cfg.truncate(30.0);
    let mut sim = FleetSim::new(cfg).unwrap();
    sim.run();
    let r = sim.report();
    let v = &r.vllm;
    assert_eq!(v.completed, r.outcomes.completed);
    assert!((v.mean_ttft_ms - r.clocks.user_ttft.mean * 1e3).abs() < 1e-9);
    assert!((v.median_itl_ms - r.clocks.client_itl.p50 * 1e3).abs() < 1e-9);
    assert!((v.p99_e2el_ms - r.clocks.e2e.p99 * 1e3).abs() < 1e-9);
    assert!(v.request_throughput > 0.0 && v.std_ttft_ms.is_none());
}
