//! Clients that leave early, replicas that drain and replicas that fail: the fleet frees what
//! a departed client held (or, when the gateway does not tell the engine, shows the work done
//! for nobody), a replica taken out on scale-down stops only once its last stream has ended,
//! and a failed replica's requests are sent again when their client has had nothing yet, its
//! streams under way broken.

use trainer_engine::fleet::{
    FleetConfig, FleetReport, FleetSim, Outcome, PoolConfig, ReplicaFault, ReplicaState,
    RequestRecord, ScaleSignal,
};
use trainer_engine::workload::{Arrival, LengthDist};

/// The seed fleet's traffic at `rate` on `replicas` replicas for `horizon` seconds, with a
/// share of clients leaving after a few seconds on average (replies take several).
fn leaving(rate: f64, replicas: u32, horizon: f64, share: f64, abort: bool) -> FleetConfig {
    let mut cfg = FleetConfig::seed();
    cfg.traffic[0].workload.arrival = Arrival::Poisson { rate };
    cfg.traffic[0].workload.duration_s = horizon;
    cfg.pools = vec![PoolConfig::seed(replicas)];
    cfg.clients.abandon_fraction = share;
    cfg.clients.abandon_after_s = 3.0;
    cfg.gateway.abort_on_disconnect = abort;
    cfg.record_requests = true;
    cfg.limits.max_records = 1_000_000;
    cfg
}

fn run(cfg: FleetConfig) -> (FleetReport, Vec<RequestRecord>) {
    let mut sim = FleetSim::new(cfg).expect("valid fleet");
    sim.run();
    (sim.report(), sim.records().to_vec())
}

fn mean_kv(r: &FleetReport) -> f64 {
    r.series
        .iter()
        .map(|p| p.kv_blocks_used as f64)
        .sum::<f64>()
        / r.series.len() as f64
}

#[test]
fn clients_who_leave_are_counted_once_and_their_engine_work_stops() {
    let (r, recs) = run(leaving(40.0, 6, 60.0, 0.3, true));
    let o = r.outcomes;
    assert_eq!(o.in_flight, 0);
    assert_eq!(
        o.arrived,
        o.completed + o.rejected() + o.spilled() + o.timed_out + o.abandoned
    );
    // Three in ten mean to leave; with three seconds' patience and replies of a few, most of
    // those leave before their reply ends, and of them most mid-reply.
    let share = o.abandoned as f64 / o.arrived as f64;
    assert!((0.1..0.3).contains(&share), "{share}");
    assert!(o.abandoned_mid_reply > o.abandoned / 2 && o.abandoned_mid_reply < o.abandoned);
    let left: Vec<&RequestRecord> = recs
        .iter()
        .filter(|x| x.outcome == Outcome::Abandoned)
        .collect();
    assert_eq!(left.len() as u64, o.abandoned);
    // Every departed client's request an engine held is dropped there at once (the others
    // left on their way in): nothing is sampled for anybody who has left.
    let in_engine = left.iter().filter(|x| x.engine_in > 0.0).count() as u64;
    assert!(in_engine > o.abandoned * 9 / 10);
    assert_eq!(o.cancelled_in_engine, in_engine);
    assert_eq!(o.tokens_for_nobody, 0);
    // Replies cut short are not served: the latency figures are the finished replies'.
    assert_eq!(r.clocks.server_ttft.count, o.completed);
}

#[test]
fn an_engine_not_told_generates_for_nobody_and_holds_its_blocks() {
    let (told, _) = run(leaving(40.0, 6, 60.0, 0.3, true));
    let (not_told, _) = run(leaving(40.0, 6, 60.0, 0.3, false));
    let (a, b) = (told.outcomes, not_told.outcomes);
    // The same clients arrive and the same ones mean to leave (leaving draws from its own
    // stream); as replies are slower with the engines' blocks taken, a few more leave before
    // their reply ends.
    assert_eq!(a.arrived, b.arrived);
    assert!(b.abandoned >= a.abandoned && b.abandoned < a.abandoned + a.abandoned / 10);
    assert_eq!(b.cancelled_in_engine, 0);
    // Each departed client's reply runs to its end: hundreds of tokens each, for nobody.
    assert!(
        b.tokens_for_nobody > 50 * b.abandoned_mid_reply,
        "{} tokens for {} departed clients",
        b.tokens_for_nobody,
        b.abandoned_mid_reply
    );
    assert!(mean_kv(&not_told) > 1.1 * mean_kv(&told));
    let (full, _) = run(leaving(40.0, 6, 60.0, 0.0, true));
    assert_eq!(full.outcomes.arrived, a.arrived);
    assert_eq!(full.outcomes.abandoned, 0);
    assert!(
        mean_kv(&full) > mean_kv(&told),
        "departed clients' blocks are freed"
    );
}

#[test]
fn leaving_is_the_same_run_however_the_fleet_is_read() {
    let cfg = leaving(30.0, 3, 20.0, 0.5, true);
    let json = |r: &FleetReport| serde_json::to_string(r).unwrap();
    let (whole, _) = run(cfg.clone());
    let mut sim = FleetSim::new(cfg).unwrap();
    while sim.advance_for(61) > 0 {
        let s = sim.snapshot();
        assert_eq!(
            s.arrived,
            s.completed + s.rejected + s.spilled + s.timed_out + s.abandoned + s.in_flight
        );
    }
    assert_eq!(json(&sim.report()), json(&whole));
}

/// As the fleet shrinks, each replica it takes out first stops taking traffic
/// and finishes what it holds: none is stopped while it still holds a request.
#[test]
fn a_replica_drained_on_scale_down_stops_only_with_no_stream_left() {
    let mut cfg = FleetConfig::seed();
    let w = &mut cfg.traffic[0].workload;
    w.arrival = Arrival::Poisson { rate: 30.0 };
    w.duration_s = 40.0;
    w.output_len = LengthDist::Uniform { min: 100, max: 600 };
    cfg.pools = vec![PoolConfig::seed(10)];
    cfg.pools[0].min_replicas = 1;
    cfg.autoscaler.enabled = true;
    // Ten replicas hold this traffic with most of their KV pools free: the autoscaler takes
    // replicas out until about half of each pool is in use.
    cfg.autoscaler.signal = ScaleSignal::KvUsage;
    cfg.autoscaler.target = 0.5;
    cfg.autoscaler.interval_s = 5.0;
    cfg.autoscaler.scale_down_cooldown_s = 5.0;
    let mut sim = FleetSim::new(cfg).unwrap();
    let mut draining_with_work = 0;
    let mut stopped_seen = [false; 64];
    while sim.advance_for(50) > 0 {
        for (i, v) in sim.snapshot().replicas.iter().enumerate() {
            match v.state {
                ReplicaState::Draining => {
                    assert!(!stopped_seen[i], "replica {i} came back from stopped");
                    if v.load.outstanding > 0 {
                        draining_with_work += 1;
                    }
                }
                ReplicaState::Stopped => {
                    stopped_seen[i] = true;
                    assert_eq!(
                        v.load.outstanding, 0,
                        "replica {i} stopped holding requests"
                    );
                    assert_eq!(
                        v.load.kv_blocks_used, 0,
                        "replica {i} stopped holding blocks"
                    );
                }
                _ => {}
            }
        }
    }
    let r = sim.report();
    assert!(
        r.scale_events.iter().any(|e| e.to < e.from),
        "the fleet shrinks"
    );
    assert!(
        draining_with_work > 0,
        "a replica drained with streams in it"
    );
    assert!(stopped_seen.iter().any(|&s| s), "a drained replica stopped");
    assert_eq!(r.outcomes.in_flight, 0);
    assert_eq!(r.outcomes.completed, r.outcomes.arrived);
}

/// The seed fleet at `rate` on 8 replicas for a minute, replica 0 failing half-way. Prompts
/// are long (a RAG-like 6,000 tokens), so that a replica has requests still waiting for their
/// first token when it fails.
fn failing(rate: f64, retries: u32, streaming: f64) -> FleetConfig {
    let mut cfg = FleetConfig::seed();
    cfg.traffic[0].workload.arrival = Arrival::Poisson { rate };
    cfg.traffic[0].workload.prompt_len = LengthDist::Constant { value: 6000 };
    cfg.traffic[0].workload.duration_s = 60.0;
    cfg.clients.streaming_fraction = streaming;
    cfg.gateway.retries = retries;
    cfg.faults = vec![ReplicaFault {
        at_s: 30.0,
        replica: 0,
    }];
    cfg.record_requests = true;
    cfg.limits.max_records = 1_000_000;
    cfg
}

#[test]
fn a_failed_replica_breaks_its_streams_and_its_unstarted_requests_go_elsewhere() {
    let (r, recs) = run(failing(40.0, 1, 1.0));
    let o = r.outcomes;
    assert_eq!(o.replicas_failed, 1);
    assert_eq!(o.in_flight, 0);
    assert_eq!(
        o.arrived,
        o.completed + o.rejected() + o.spilled() + o.timed_out + o.abandoned + o.failed
    );
    // A replica holds dozens of streams at this load: those under way break, those still
    // waiting for a first token are sent again and served.
    assert!(o.failed >= 5 && o.failed < 150, "{} broken", o.failed);
    assert!(o.retried >= 1, "{} sent again", o.retried);
    let broken: Vec<&RequestRecord> = recs
        .iter()
        .filter(|x| x.outcome == Outcome::Failed)
        .collect();
    assert_eq!(broken.len() as u64, o.failed);
    for b in &broken {
        assert_eq!(b.replica, Some(0));
        assert!(b.first_token > 0.0 && b.first_token < 30.0 && b.last_byte_written >= 30.0);
    }
    // After the failure nothing more goes to the failed replica.
    assert!(recs
        .iter()
        .filter(|x| x.replica == Some(0) && x.outcome == Outcome::Completed)
        .all(|x| x.last_byte_written <= 30.0 + 1e-9));
    assert!(recs
        .iter()
        .filter(|x| x.gateway_in > 30.0)
        .all(|x| x.replica != Some(0)));
    // With no retries, the requests sent again before are broken instead.
    let (none, _) = run(failing(40.0, 0, 1.0));
    assert_eq!(none.outcomes.retried, 0);
    assert_eq!(none.outcomes.failed, o.failed + o.retried);
    assert_eq!(none.outcomes.completed + o.retried, o.completed);
}

#[test]
fn whole_replies_are_sent_again_since_their_clients_have_had_nothing() {
    // Nobody streams: a client waits for its whole reply, so every request the failed
    // replica held can go elsewhere unseen.
    let (r, _) = run(failing(40.0, 1, 0.0));
    let o = r.outcomes;
    assert_eq!(o.failed, 0);
    assert!(o.retried > 10, "{} sent again", o.retried);
    assert_eq!(o.completed, o.arrived);
}

#[test]
fn a_fault_is_refused_for_a_replica_that_is_not_there() {
    let mut cfg = failing(40.0, 1, 1.0);
    cfg.faults[0].replica = 8;
    let e = FleetSim::new(cfg).err().expect("refused").to_string();
    assert!(e.contains("faults[0].replica"), "{e}");
    // A fault after the traffic is not run: it would stretch the run and its bill.
    let mut cfg = failing(40.0, 1, 1.0);
    cfg.faults[0].at_s = 5000.0;
    let (late, _) = run(cfg);
    assert_eq!(late.outcomes.replicas_failed, 0);
    assert!(late.end_s < 100.0, "the run ends at {}", late.end_s);
    let mut cfg = failing(40.0, 1, 1.0);
    cfg.pools[0].replicas = 0;
    cfg.pools[0].min_replicas = 0;
    let e = FleetSim::new(cfg).err().expect("refused").to_string();
    assert!(e.contains("no replica is there"), "{e}");
    let mut cfg = failing(40.0, 1, 1.0);
    cfg.gateway.retries = 11;
    let e = FleetSim::new(cfg).err().expect("refused").to_string();
    assert!(e.contains("gateway.retries"), "{e}");
}
