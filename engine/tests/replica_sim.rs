//! The standalone replica driver: whole runs, their reports, and what they must never do.

use trainer_engine::replica::{OverloadReason, ReplicaSim, ReplicaSimConfig, Verdict};
use trainer_engine::workload::{Arrival, LengthDist};

/// The seed replica and load, shortened to `duration_s`.
fn seed_for(duration_s: f64) -> ReplicaSimConfig {
    let mut cfg = ReplicaSimConfig::seed();
    cfg.workload.duration_s = duration_s;
    cfg
}

#[test]
fn littles_law_holds_on_a_long_run() {
    let report = ReplicaSim::new(seed_for(900.0)).unwrap().run();
    assert_eq!(report.verdict, Verdict::Completed);
    assert_eq!(report.finished, report.arrived);
    let rate = report.arrived as f64 / report.sim_time_s;
    let little = rate * report.e2e.mean;
    assert!(
        (report.mean_in_system / little - 1.0).abs() < 0.05,
        "L = {} vs lambda W = {little}",
        report.mean_in_system
    );
}

#[test]
fn seed_load_meets_the_brief_and_every_request_gets_its_tokens() {
    let cfg = seed_for(300.0);
    let cost = trainer_engine::replica::Replica::new(cfg.replica.clone())
        .unwrap()
        .cost_model()
        .clone();
    let report = ReplicaSim::new(cfg).unwrap().run();
    assert!(report.requests.iter().all(|r| r.output_tokens == 250));
    // TTFT is about one 1,000-token prefill (32.5 ms of dense compute plus attention), and the
    // decode step stays under the calibrated step at batch 32 (the brief's 8.3 ms plus the
    // fixed per-step cost) because the batch is smaller.
    assert!(
        report.ttft.p50 > 0.030 && report.ttft.p50 < 0.060,
        "{:?}",
        report.ttft
    );
    let at_32 = cost.decode_step(32, 1125).total_s;
    assert!(
        report.itl.p50 > cost.decode_step(1, 1125).total_s && report.itl.p50 < at_32,
        "{:?} vs {at_32}",
        report.itl
    );
    assert_eq!(report.preemptions, 0);
    let out = report.output_tokens_per_s;
    assert!((out / (6.25 * 250.0) - 1.0).abs() < 0.1, "{out}");
}

#[test]
fn same_config_same_report_bit_for_bit() {
    let mut cfg = seed_for(60.0);
    cfg.workload.prompt_len = LengthDist::LogNormal {
        mean: 1000.0,
        p99: 8000.0,
    };
    cfg.replica.kv_blocks_override = Some(700);
    let a = ReplicaSim::new(cfg.clone()).unwrap().run();
    let b = ReplicaSim::new(cfg.clone()).unwrap().run();
    assert_eq!(a, b);
    assert!(a.preemptions > 0, "the small pool should preempt");
    cfg.workload.seed = 99;
    assert_ne!(ReplicaSim::new(cfg).unwrap().run().e2e, a.e2e);
}

#[test]
fn a_runaway_rate_stops_at_a_cap_with_an_overloaded_verdict() {
    let mut cfg = seed_for(3600.0);
    cfg.workload.arrival = Arrival::Poisson { rate: 1e6 };
    cfg.limits.max_waiting = 20_000;
    let report = ReplicaSim::new(cfg).unwrap().run();
    match report.verdict {
        Verdict::Overloaded { reason, .. } => assert_eq!(reason, OverloadReason::QueueLimit),
        v => panic!("expected overloaded, got {v:?}"),
    }
    assert_eq!(report.arrived, report.finished + report.in_flight);
}

#[test]
fn frame_loop_drivers_agree_with_a_plain_run() {
    let cfg = seed_for(20.0);
    let whole = ReplicaSim::new(cfg.clone()).unwrap().run();
    let mut by_time = ReplicaSim::new(cfg.clone()).unwrap();
    let mut t = 0.0;
    while !by_time.done() {
        t += 0.37;
        by_time.advance_to(t);
        let snap = by_time.snapshot();
        assert!(snap.now <= t + 1e-9 || snap.done);
        if by_time.next_time().is_none() {
            by_time.step_event();
        }
    }
    let mut by_work = ReplicaSim::new(cfg).unwrap();
    while by_work.advance_for_work(1000) > 0 {}
    assert_eq!(by_work.report(), whole);
    assert_eq!(by_time.report().requests, whole.requests);
}

/// A change to the seed configuration.
type Edit = fn(&mut ReplicaSimConfig);

#[test]
fn bad_configs_name_the_field() {
    let cases: Vec<(Edit, &str)> = vec![
        (
            |c| c.replica.scheduler.max_num_seqs = 0,
            "replica.scheduler.max_num_seqs",
        ),
        (
            |c| c.replica.scheduler.block_size = 0,
            "replica.scheduler.block_size",
        ),
        (
            |c| c.replica.kv_blocks_override = Some(0),
            "replica.kv_blocks_override",
        ),
        (
            |c| c.replica.memory.gpu_memory_utilization = f64::NAN,
            "replica.memory.gpu_memory_utilization",
        ),
        (
            |c| c.replica.memory.gpu_memory_utilization = 0.2,
            "replica.memory",
        ),
        (
            |c| c.replica.efficiency.mfu = -1.0,
            "replica.deployment.efficiency.mfu",
        ),
        (
            |c| c.workload.arrival = Arrival::Poisson { rate: 0.0 },
            "workload.arrival.rate",
        ),
        (|c| c.sample_interval_s = 0.0, "sample_interval_s"),
        (|c| c.limits.max_steps = 0, "limits.max_steps"),
    ];
    for (edit, field) in cases {
        let mut cfg = ReplicaSimConfig::seed();
        edit(&mut cfg);
        assert_eq!(ReplicaSim::new(cfg).unwrap_err().field, field);
    }
}

/// Runs a configuration twice, once event by event (no fast-forward) and once with `run`
/// (fast-forwarding decode-only runs), and checks the reports are identical.
fn check_fast_forward_is_exact(cfg: ReplicaSimConfig) {
    let mut fast_sim = ReplicaSim::new(cfg.clone()).unwrap();
    let fast = fast_sim.run();
    let m = fast_sim.replica().metrics();
    assert!(m.fast_forward_steps > 0 && m.fast_forward_steps < m.steps);
    let mut slow = ReplicaSim::new(cfg).unwrap();
    while slow.step_event() {}
    let slow = slow.report();
    assert_eq!(fast, slow);
    assert!(fast.finished > 0);
}

#[test]
fn fast_forward_equals_the_step_by_step_run() {
    use trainer_engine::workload::SessionConfig;
    let base = seed_for(120.0);
    check_fast_forward_is_exact(base.clone());
    let mut varied = base.clone();
    varied.workload.prompt_len = LengthDist::LogNormal {
        mean: 800.0,
        p99: 6000.0,
    };
    varied.workload.output_len = LengthDist::Uniform { min: 1, max: 600 };
    varied.replica.kv_blocks_override = Some(900);
    check_fast_forward_is_exact(varied.clone());
    for block_size in [1, 7, 32] {
        let mut odd = varied.clone();
        odd.replica.scheduler.block_size = block_size;
        odd.replica.kv_blocks_override = Some(14_400 / block_size);
        check_fast_forward_is_exact(odd);
    }
    let mut chat = base;
    chat.workload.arrival = Arrival::Gamma { rate: 3.0, cv: 3.0 };
    chat.workload.sessions = Some(SessionConfig {
        turns: 5,
        think_time_s: 3.0,
        system_prompt_len: 700,
        reply_time_per_token_s: 0.01,
        history_limit: 0,
    });
    chat.workload.output_len = LengthDist::Uniform { min: 20, max: 300 };
    chat.replica.kv_blocks_override = Some(2000);
    chat.replica.scheduler.max_num_seqs = 8;
    check_fast_forward_is_exact(chat);
}

#[test]
fn follow_one_chat_scenario_tells_the_build_up_story() {
    use trainer_engine::replica::TokenKind;
    use trainer_engine::scenario::ReplicaScenario;
    let s = ReplicaScenario::builtin("replica-follow-one-chat").unwrap();
    let r = s.run().unwrap();
    let d = &r.requests[3];
    // 1. D arrives at 0.2 s and is admitted at the next step boundary, not after the batch.
    let admitted = d.admitted.unwrap();
    assert!(admitted > 0.2 && admitted < 0.2 + 0.02, "{admitted}");
    // 2. Its prompt is prefilled in chunks under the 512-token budget beside three decodes.
    let chunks: Vec<_> = r
        .trace
        .iter()
        .filter(|s| s.start >= admitted && s.start < d.first_token.unwrap())
        .collect();
    assert_eq!(chunks.len(), 4);
    for step in &chunks {
        assert_eq!(step.entries.len(), 4);
        assert!(step.entries[..3]
            .iter()
            .all(|e| e.kind == TokenKind::Decode));
        assert_eq!(
            step.budget_used,
            step.entries.iter().map(|e| e.new_tokens).sum::<u32>()
        );
        assert!(step.budget_used <= 512);
    }
    // 3. and 4. Its block table covers the 2,000 tokens plus the chunk's own, and its first
    // token comes at the end of the last chunk.
    let last = chunks.last().unwrap();
    assert_eq!(last.entries[3].blocks, 2000u32.div_ceil(16));
    assert_eq!(last.first_tokens, vec![3]);
    assert_eq!(Some(last.end), d.first_token);
    // 5. The pool runs out once; the newest request (D) is preempted, nothing is admitted in
    // that step, and its blocks are freed.
    let pre: Vec<_> = r.trace.iter().filter(|s| !s.preempted.is_empty()).collect();
    assert_eq!(pre.len(), 1);
    assert_eq!(pre[0].preempted, vec![3]);
    assert!(pre[0].admitted.is_empty() && pre[0].blocks_freed >= 125);
    // 6. It is re-prefilled and finishes with all its tokens; the others never stall.
    assert_eq!((d.preemptions, d.output_tokens), (1, 200));
    assert!(r.requests[..3].iter().all(|q| q.preemptions == 0));
    assert_eq!(r.preemptions, 1);
}

#[test]
fn chat_history_hits_the_prefix_cache_and_cuts_ttft() {
    use trainer_engine::scenario::ReplicaScenario;
    let s = ReplicaScenario::builtin("replica-chat-prefix-cache").unwrap();
    let mut cfg = s.config.clone();
    cfg.workload.duration_s = 300.0;
    let on = ReplicaSim::new(cfg.clone()).unwrap().run();
    cfg.replica.scheduler.enable_prefix_caching = false;
    let off = ReplicaSim::new(cfg).unwrap().run();
    // Each turn resends system prompt and history: most prompt tokens are cached.
    assert!(on.prefix_hit_rate > 0.6, "{}", on.prefix_hit_rate);
    assert_eq!(off.prefix_hit_rate, 0.0);
    assert!(
        on.ttft.mean < 0.7 * off.ttft.mean,
        "{:?} vs {:?}",
        on.ttft,
        off.ttft
    );
    assert_eq!(on.arrived, off.arrived);
}

#[test]
fn the_report_carries_vllm_bench_metrics_that_agree_with_its_own_clocks() {
    let r = ReplicaSim::new(seed_for(120.0)).unwrap().run();
    let v = &r.vllm;
    assert_eq!(v.completed, r.finished);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1e-12);
    assert!(close(v.mean_ttft_ms, r.ttft.mean * 1e3), "{v:?}");
    assert!(close(v.mean_e2el_ms, r.e2e.mean * 1e3), "{v:?}");
    assert!(close(v.mean_tpot_ms, r.tpot.mean * 1e3), "{v:?}");
    assert_eq!(v.total_output_tokens, 250 * r.finished);
    assert!(close(
        v.output_throughput * v.duration,
        v.total_output_tokens as f64
    ));
    assert!(v.std_ttft_ms.is_some() && v.p99_ttft_ms >= v.median_ttft_ms);
    let json = serde_json::to_value(&r).unwrap();
    for key in [
        "median_ttft_ms",
        "p99_tpot_ms",
        "mean_itl_ms",
        "median_e2el_ms",
        "request_throughput",
    ] {
        assert!(json["vllm"][key].is_number(), "{key}");
    }
}

/// The seed replica scenario's description: on the brief's assumptions, decode-only steps come
/// in under the brief's decode step at batch 32 (a smaller batch reads less KV cache), steps
/// carrying a prompt's chunk over it, and the mean near it.
#[test]
fn seed_replica_scenario_tells_its_decode_step_story() {
    use trainer_engine::cost::{CostModel, Efficiency};
    use trainer_engine::scenario::ReplicaScenario;
    let s = ReplicaScenario::builtin("replica-seed").unwrap();
    let mut cfg = s.config.clone();
    cfg.workload.duration_s = 600.0;
    let e = cfg.replica.efficiency;
    assert_eq!(
        (e.mfu, e.mbu),
        (Efficiency::REFERENCE.mfu, Efficiency::REFERENCE.mbu)
    );
    assert_eq!((e.step_overhead_s, e.cpu_overhead_s), (0.0, 0.0));
    // The brief's step: batch 32 at the mean context of a 1,000 + 250 request.
    let brief = CostModel::new(cfg.replica.deployment.clone(), Efficiency::REFERENCE)
        .unwrap()
        .decode_step(32, 1_125)
        .total_s;
    let r = ReplicaSim::new(cfg).unwrap().run();
    assert!(r.itl.p50 < brief, "median ITL {} vs {brief}", r.itl.p50);
    assert!(r.itl.p99 > brief, "p99 ITL {} vs {brief}", r.itl.p99);
    assert!(
        (r.itl.mean / brief - 1.0).abs() < 0.1,
        "mean ITL {} vs {brief}",
        r.itl.mean
    );
}

/// `vllm bench serve --max-concurrency C`: at most C requests in flight; one that is due while C
/// are unfinished is sent when one finishes, and its clocks start then.
#[test]
fn a_client_concurrency_cap_sends_a_held_request_when_one_finishes() {
    let mut cfg = seed_for(1.0);
    cfg.workload.arrival = Arrival::Trace {
        times: vec![0.0; 12],
    };
    cfg.workload.prompt_len = LengthDist::Uniform { min: 50, max: 400 };
    cfg.workload.output_len = LengthDist::Uniform { min: 5, max: 60 };
    cfg.max_concurrency = Some(3);
    let report = ReplicaSim::new(cfg.clone()).unwrap().run();
    assert_eq!(report.verdict, Verdict::Completed);
    assert_eq!(report.finished, 12);
    let recs = &report.requests;
    let mut finishes: Vec<f64> = recs.iter().map(|r| r.finish.unwrap()).collect();
    finishes.sort_by(f64::total_cmp);
    for (k, r) in recs.iter().enumerate() {
        // In flight when it was sent: those sent before it and not yet finished.
        let open = recs[..k]
            .iter()
            .filter(|o| o.finish.unwrap() > r.arrival)
            .count();
        assert!(open < 3, "request {k} sent with {open} others in flight");
        if k >= 3 {
            // Sent the moment the (k-2)th finish freed a place: exactly at a finish time.
            assert_eq!(r.arrival, finishes[k - 3], "request {k}");
        } else {
            assert_eq!(r.arrival, 0.0);
        }
        // Its clocks start when it is sent: its TTFT is not the time it was held.
        assert!(r.first_token.unwrap() - r.arrival < 0.2, "request {k}");
    }
    // Without the cap the same requests all go at once.
    cfg.max_concurrency = None;
    let open = ReplicaSim::new(cfg).unwrap().run();
    assert!(open.requests.iter().all(|r| r.arrival == 0.0));
    assert_eq!(
        open.requests.iter().map(|r| r.output_tokens).sum::<u32>(),
        recs.iter().map(|r| r.output_tokens).sum::<u32>()
    );
    // A cap of zero can never send anything: refused with the field named.
    let mut bad = seed_for(1.0);
    bad.max_concurrency = Some(0);
    assert_eq!(ReplicaSim::new(bad).unwrap_err().field, "max_concurrency");
}
