//! Disaggregated prefill and decode: prefill pools hand each request's KV cache over a link
//! to decode pools. Conservation across the transfer, the transfer's cost, the TTFT split,
//! faults and bad configurations, and the trade-off the design is known for.

use proptest::prelude::*;
use trainer_engine::catalog::link_or_error;
use trainer_engine::cost::{BatchItem, BatchTotals, CostModel};
use trainer_engine::fleet::{
    AutoscalerConfig, FleetConfig, FleetReport, FleetSim, PoolConfig, PoolRole, ReplicaFault,
    ScaleSignal, TrafficSource,
};
use trainer_engine::workload::{Arrival, LengthDist};

fn pool(name: &str, role: PoolRole, replicas: u32) -> PoolConfig {
    let mut p = PoolConfig::seed(replicas);
    p.name = name.into();
    p.role = role;
    p.min_replicas = replicas;
    p.max_replicas = replicas;
    p
}

/// The seed's traffic (`rate` req/s, `prompt` in, `output` out) for `horizon` seconds on
/// `prefill` prefill and `decode` decode replicas.
fn split(
    rate: f64,
    prompt: u32,
    output: u32,
    horizon: f64,
    prefill: u32,
    decode: u32,
) -> FleetConfig {
    let mut cfg = FleetConfig::seed();
    let w = &mut cfg.traffic[0].workload;
    w.arrival = Arrival::Poisson { rate };
    w.prompt_len = LengthDist::Constant { value: prompt };
    w.output_len = LengthDist::Constant { value: output };
    w.duration_s = horizon;
    cfg.pools = vec![
        pool("prefill", PoolRole::Prefill, prefill),
        pool("decode", PoolRole::Decode, decode),
    ];
    cfg
}

/// The same traffic on `replicas` replicas that do both.
fn mixed(rate: f64, prompt: u32, output: u32, horizon: f64, replicas: u32) -> FleetConfig {
    let mut cfg = split(rate, prompt, output, horizon, 1, 1);
    cfg.pools = vec![PoolConfig::seed(replicas)];
    cfg
}

fn run(cfg: FleetConfig) -> (FleetReport, FleetSim) {
    let mut sim = FleetSim::new(cfg).expect("valid fleet");
    sim.run();
    (sim.report(), sim)
}

/// What any disaggregated run must satisfy; the first breach, described.
fn check(r: &FleetReport, sim: &FleetSim) -> Result<(), String> {
    let o = &r.outcomes;
    if o.in_flight != 0
        || o.arrived
            != o.completed + o.rejected() + o.spilled() + o.timed_out + o.abandoned + o.failed
    {
        return Err(format!("outcomes do not add up: {o:?}"));
    }
    // Every served request's TTFT is its four parts (the means are exact to the ns).
    let s = &r.ttft_split;
    let parts = s.queue.mean + s.prefill.mean + s.transfer.mean + s.first_decode.mean;
    if s.queue.count != r.clocks.engine_ttft.count
        || (parts - r.clocks.engine_ttft.mean).abs() > 4e-9
    {
        return Err(format!(
            "TTFT parts {parts} over {} requests, engine TTFT {} over {}",
            s.queue.count, r.clocks.engine_ttft.mean, r.clocks.engine_ttft.count
        ));
    }
    // Every block is back in its pool, and every pool's books agree.
    for (i, rep) in sim.replicas().enumerate() {
        let a = rep.audit();
        if !a.consistent || a.allocated != 0 || a.references != 0 {
            return Err(format!("replica {i}: {a:?}"));
        }
    }
    Ok(())
}

#[test]
fn every_request_prefills_moves_its_cache_and_decodes_with_tokens_conserved() {
    let (r, sim) = run(split(20.0, 1_000, 100, 60.0, 2, 3));
    check(&r, &sim).unwrap();
    let o = &r.outcomes;
    assert!(o.arrived > 1_000, "{o:?}");
    assert_eq!(o.completed, o.arrived);
    // One transfer per request, of its prompt's KV cache.
    let kv = r.kv_transfer.clone();
    assert_eq!(kv.link, "infiniband-ndr");
    assert_eq!(kv.transfers, o.completed);
    let per_token = CostModel::seed().kv_bytes_per_token();
    assert_eq!(kv.bytes, o.completed as f64 * 1_000.0 * per_token);
    // Each takes its bytes over the line rate plus the link's fixed cost.
    let ib = link_or_error("infiniband-ndr").unwrap();
    let took = ib.latency_s + 1_000.0 * per_token / ib.bandwidth;
    assert!(
        (kv.time.mean - took).abs() < 1e-9,
        "{} {took}",
        kv.time.mean
    );
    assert!(r.ttft_split.transfer.mean >= took);
    // Prefill replicas compute the prompts and sample one token each (dropped); decode
    // replicas compute one prompt token each and every reply token.
    let (pre, dec) = (&r.pools[0], &r.pools[1]);
    assert_eq!((pre.role, dec.role), (PoolRole::Prefill, PoolRole::Decode));
    assert_eq!(pre.output_tokens, o.completed);
    assert_eq!(dec.output_tokens, o.completed * 100);
    assert_eq!(r.cost.output_tokens, o.completed * 100);
    let mut prefill_computed = 0;
    let mut decode_prefill = 0;
    let mut transferred = 0;
    for (i, rep) in sim.replicas().enumerate() {
        let m = rep.metrics();
        if i < 2 {
            prefill_computed += m.prefill_tokens + m.prefix_hit_tokens;
            assert_eq!(m.transferred_tokens, 0);
        } else {
            decode_prefill += m.prefill_tokens;
            transferred += m.transferred_tokens + m.prefix_hit_tokens;
        }
    }
    assert_eq!(prefill_computed, o.completed * 1_000);
    assert_eq!(
        decode_prefill, o.completed,
        "one token per request, no preemption"
    );
    assert_eq!(transferred, o.completed * 999);
    // No prefill ever runs beside a decode, so the decode replicas' steps are one token
    // per running request plus one per newcomer.
    assert!(dec.link_busy_fraction > 0.0 && pre.link_busy_fraction > 0.0);
}

/// One request alone, timed by hand from the cost model: its prefill step on the prefill
/// replica, the gateway's new connection to the decode replica, the transfer of its 1,000
/// tokens' KV cache, and the decode replica's first step (one prompt token, which samples the
/// first token). The engine's TTFT is exactly their sum, and the split says which is which.
#[test]
fn one_requests_first_token_is_its_prefill_the_move_and_one_decode_step() {
    let mut cfg = split(1.0, 1_000, 5, 1.0, 1, 1);
    cfg.traffic[0].workload.arrival = Arrival::Trace { times: vec![0.0] };
    cfg.record_requests = true;
    cfg.gateway.auth_miss_fraction = 0.0;
    let (r, sim) = run(cfg.clone());
    assert_eq!(r.outcomes.completed, 1);
    let rec = &sim.records()[0];
    let cost = sim.replicas().next().unwrap().cost_model().clone();
    let step = |new: u32, ctx: u32| {
        let mut t = BatchTotals::of(&[BatchItem {
            new_tokens: new,
            context_len: ctx,
        }]);
        t.admitted = 1;
        cost.step_totals(&t).total_s
    };
    let prefill = step(1_000, 1_000);
    let ib = link_or_error("infiniband-ndr").unwrap();
    let moved = cfg.gateway.pool.connect_s + cost.kv_transfer_time(1_000, &ib, 1.0);
    let first = step(1, 1_000);
    let ttft = rec.first_token - rec.engine_in;
    assert!(
        (ttft - (prefill + moved + first)).abs() < 1e-9,
        "{ttft} against {}",
        prefill + moved + first
    );
    let s = &r.ttft_split;
    assert!(s.queue.max < 1e-9);
    assert!((s.prefill.mean - prefill).abs() < 1e-9);
    assert!((s.transfer.mean - moved).abs() < 1e-9);
    assert!((s.first_decode.mean - first).abs() < 1e-9);
    assert_eq!(
        rec.replica,
        Some(1),
        "the stream ends on its decode replica"
    );
    // Its record keeps the path: replica 0 prefilled from the moment it arrived, the move
    // began a connection later and took the cost model's time, replica 1 decoded at once.
    let p = rec.split.expect("a split path");
    assert_eq!((p.prefill_replica, p.decode_replica), (0, 1));
    assert_eq!(p.prefill_admitted, rec.engine_in);
    assert!((p.prefill_done - p.prefill_admitted - prefill).abs() < 1e-9);
    assert!((p.transfer_start - p.prefill_done - cfg.gateway.pool.connect_s).abs() < 1e-9);
    assert!(
        (p.kv_arrived - p.transfer_start - cost.kv_transfer_time(1_000, &ib, 1.0)).abs() < 1e-9
    );
    assert_eq!(p.decode_admitted, p.kv_arrived);
    assert!((rec.first_token - p.decode_admitted - first).abs() < 1e-9);
    assert_eq!(p.kv_bytes, cost.kv_transfer_bytes(1_000));
}

#[test]
fn the_same_fleet_gives_the_same_run() {
    let a = run(split(15.0, 800, 60, 30.0, 1, 2)).0;
    let b = run(split(15.0, 800, 60, 30.0, 1, 2)).0;
    assert_eq!(a, b);
}

#[test]
fn a_slower_link_costs_time_to_first_token_and_nothing_else() {
    let fast = run(split(10.0, 4_000, 50, 30.0, 2, 2)).0;
    let mut slow_cfg = split(10.0, 4_000, 50, 30.0, 2, 2);
    slow_cfg.disagg.link = "ethernet-25g".into();
    let slow = run(slow_cfg).0;
    let eth = link_or_error("ethernet-25g").unwrap();
    let took = eth.latency_s + 4_000.0 * CostModel::seed().kv_bytes_per_token() / eth.bandwidth;
    assert!((slow.kv_transfer.time.mean - took).abs() < 1e-9);
    assert!(slow.ttft_split.transfer.mean > fast.ttft_split.transfer.mean + 0.1);
    assert!(slow.clocks.engine_ttft.mean > fast.clocks.engine_ttft.mean + 0.1);
    assert_eq!(slow.outcomes.completed, fast.outcomes.completed);
    assert_eq!(slow.cost.output_tokens, fast.cost.output_tokens);
    // Half the line rate doubles the bytes' time.
    let mut half_cfg = split(10.0, 4_000, 50, 30.0, 2, 2);
    half_cfg.disagg.link = "ethernet-25g".into();
    half_cfg.disagg.link_share = 0.5;
    let half = run(half_cfg).0;
    let bytes_s = took - eth.latency_s;
    assert!((half.kv_transfer.time.mean - (eth.latency_s + 2.0 * bytes_s)).abs() < 1e-9);
}

#[test]
fn transfers_queue_for_a_busy_link() {
    // 16,000-token prompts over 25 Gb/s take 0.67 s each: two prefill replicas finishing
    // together share nothing, but a decode replica receives one cache at a time.
    let mut cfg = split(4.0, 16_000, 20, 30.0, 4, 1);
    cfg.disagg.link = "ethernet-25g".into();
    let (r, sim) = run(cfg);
    check(&r, &sim).unwrap();
    assert!(r.kv_transfer.wait.p99 > 0.0, "{:?}", r.kv_transfer.wait);
    // One link at the decode replica, busy for every transfer back to back.
    let busy = r.kv_transfer.time.mean * r.kv_transfer.transfers as f64;
    assert!(r.pools[1].link_busy_fraction * r.end_s > busy * 0.999);
}

#[test]
fn long_prompts_steady_the_reply_and_cost_the_first_token() {
    // The known trade-off, from the runs: with 6,000-token prompts a replica that also
    // prefills stalls its replies behind each prompt, so its inter-token latency has a long
    // tail; decode replicas never prefill, so theirs stays near one decode step. The price:
    // every first token waits for the KV cache's move.
    let (rate, prompt, output, horizon) = (6.0, 6_000, 200, 60.0);
    let m = run(mixed(rate, prompt, output, horizon, 4)).0;
    let d = run(split(rate, prompt, output, horizon, 2, 2)).0;
    assert_eq!(m.outcomes.completed, m.outcomes.arrived);
    assert_eq!(d.outcomes.completed, d.outcomes.arrived);
    assert!(
        d.clocks.engine_itl.p99 < 0.5 * m.clocks.engine_itl.p99,
        "ITL p99: disaggregated {} against mixed {}",
        d.clocks.engine_itl.p99,
        m.clocks.engine_itl.p99
    );
    assert!(d.ttft_split.transfer.mean > 0.0);
    assert_eq!(m.ttft_split.transfer.count, m.clocks.engine_ttft.count);
    assert_eq!(m.ttft_split.transfer.max, 0.0);
}

#[test]
fn a_failed_decode_replica_sends_its_requests_back_through_prefill() {
    let mut cfg = split(20.0, 1_000, 200, 30.0, 2, 3);
    cfg.faults = vec![ReplicaFault {
        at_s: 10.0,
        replica: 3,
    }];
    let (r, sim) = run(cfg);
    check(&r, &sim).unwrap();
    assert_eq!(r.outcomes.replicas_failed, 1);
    assert!(
        r.outcomes.retried + r.outcomes.failed > 0,
        "{:?}",
        r.outcomes
    );
    // A retried request moves its cache again.
    assert!(r.kv_transfer.transfers >= r.outcomes.completed);
}

#[test]
fn pools_whose_roles_do_not_fit_together_are_refused_by_name() {
    let mut cfg = split(5.0, 100, 10, 5.0, 1, 1);
    cfg.pools.pop();
    let e = FleetSim::new(cfg).err().expect("no decode pool");
    assert_eq!(e.field, "pools[0].role");
    let mut cfg = split(5.0, 100, 10, 5.0, 1, 1);
    cfg.pools.push(PoolConfig::seed(1));
    let e = FleetSim::new(cfg).err().expect("a serving mixed pool");
    assert_eq!(e.field, "pools[2].role");
    let mut cfg = split(5.0, 100, 10, 5.0, 1, 1);
    cfg.pools[1].replica.deployment.kv_dtype = trainer_engine::catalog::Dtype::Fp8;
    let e = FleetSim::new(cfg).err().expect("KV layouts differ");
    assert_eq!(e.field, "pools[1]");
    let mut cfg = split(5.0, 100, 10, 5.0, 1, 1);
    cfg.disagg.link = "smoke-signals".into();
    let e = FleetSim::new(cfg).err().expect("unknown link");
    assert_eq!(e.field, "disagg.link");
    let mut cfg = split(5.0, 100, 10, 5.0, 1, 1);
    cfg.disagg.link_share = 0.0;
    let e = FleetSim::new(cfg).err().expect("no share of the link");
    assert_eq!(e.field, "disagg.link_share");
}

#[test]
fn each_pool_scales_on_its_own_signal() {
    // Quiet, then three times the traffic from the second minute: the prefill pool grows on
    // its queued prompt tokens, the decode pool on the share of its KV cache in use.
    let mut cfg = split(4.0, 2_000, 400, 600.0, 1, 1);
    let mut peak = cfg.traffic[0].clone();
    peak.start_s = 120.0;
    peak.workload.duration_s = 480.0;
    peak.workload.arrival = Arrival::Poisson { rate: 12.0 };
    peak.workload.seed = 9;
    cfg.traffic.push(TrafficSource { ..peak });
    for p in &mut cfg.pools {
        p.max_replicas = 6;
    }
    let scaler = |pool: usize, signal: ScaleSignal, target: f64| AutoscalerConfig {
        enabled: true,
        pool,
        signal,
        target,
        interval_s: 10.0,
        scale_up_delay_s: 30.0,
        cooldown_s: 20.0,
        ..AutoscalerConfig::default()
    };
    cfg.autoscaler = scaler(0, ScaleSignal::QueuedTokens, 4_000.0);
    cfg.more_autoscalers = vec![scaler(1, ScaleSignal::KvUsage, 0.3)];
    let (r, sim) = run(cfg.clone());
    check(&r, &sim).unwrap();
    let grew = |pool: usize| {
        r.scale_events
            .iter()
            .any(|e| e.pool == pool && e.to > e.from)
    };
    assert!(grew(0), "prefill: {:?}", r.scale_events);
    assert!(grew(1), "decode: {:?}", r.scale_events);
    // Each evaluation is its own pool's.
    for pool in [0, 1] {
        assert!(
            r.autoscaler_signal
                .iter()
                .filter(|p| p.pool == pool)
                .count()
                >= 50
        );
    }
    assert_eq!(
        r.pools[0].peak_provisioned.max(2),
        r.pools[0].peak_provisioned
    );
    // Two autoscalers on one pool are refused, by name.
    let mut twice = cfg.clone();
    twice.more_autoscalers[0].pool = 0;
    let e = FleetSim::new(twice)
        .err()
        .expect("one pool, two autoscalers");
    assert_eq!(e.field, "more_autoscalers[0].pool");
    let mut none = cfg;
    none.more_autoscalers[0].pool = 7;
    assert_eq!(
        FleetSim::new(none).err().expect("no pool 7").field,
        "more_autoscalers[0].pool"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Over random disaggregated fleets, links, lengths and clients that give up, blocks
    /// and requests are conserved and the TTFT parts add up.
    #[test]
    fn random_disaggregated_fleets_conserve_blocks_and_requests(
        prefill in 1u32..3,
        decode in 1u32..3,
        rate in 1.0f64..25.0,
        max_prompt in 20u32..6_000,
        max_output in 1u32..300,
        link in 0usize..4,
        timeout in prop::sample::select(vec![0.3, 2.0, 600.0]),
        abort in any::<bool>(),
        seed in 0u64..1_000,
    ) {
        let mut cfg = split(rate, 1, 1, 12.0, prefill, decode);
        let w = &mut cfg.traffic[0].workload;
        w.prompt_len = LengthDist::Uniform { min: 1, max: max_prompt };
        w.output_len = LengthDist::Uniform { min: 1, max: max_output };
        w.seed = seed;
        cfg.seed = seed;
        cfg.clients.timeout_s = timeout;
        cfg.gateway.abort_on_disconnect = abort;
        cfg.disagg.link = trainer_engine::catalog::links()[link].id.clone();
        let (r, sim) = run(cfg);
        if let Err(e) = check(&r, &sim) {
            return Err(TestCaseError::fail(e));
        }
    }
}
