//! One test per bug found by trying the simulators and the calculator as a hostile user
//! would, each headed by what the bug was.

use trainer_course::sizing::{derive, Inputs, Question};
use trainer_engine::catalog::model_by_id;
use trainer_engine::fleet::{
    FleetConfig, FleetOverload, FleetReport, FleetSim, FleetVerdict, PoolConfig,
};
use trainer_engine::replica::{ReplicaSim, ReplicaSimConfig, Verdict};
use trainer_engine::scenario::{run_to_json, FleetScenario, RunOptions, Scenario};
use trainer_engine::workload::{Arrival, LengthDist};

/// Runs a fleet to its end and reports.
fn run(cfg: FleetConfig) -> FleetReport {
    let mut sim = FleetSim::new(cfg).expect("valid fleet");
    sim.run();
    sim.report()
}

/// The seed fleet at `rate` req/s on `replicas` replicas for `horizon` seconds.
fn seed(rate: f64, replicas: u32, horizon: f64) -> FleetConfig {
    let mut cfg = FleetConfig::seed();
    cfg.traffic[0].workload.arrival = Arrival::Poisson { rate };
    cfg.traffic[0].workload.duration_s = horizon;
    cfg.pools = vec![PoolConfig::seed(replicas)];
    cfg
}

// The fleet had no work cap: at 1e4 req/s on one replica it grew about 55 MB a second until
// killed, and at 1e9 req/s it aborted on a failed allocation. Now the gateway's bounds shed,
// and a run past a cap stops with an "overloaded" verdict naming the cap and the time.
#[test]
fn an_overloaded_fleet_stops_at_a_cap_with_a_verdict() {
    let mut cfg = seed(1e4, 1, 3600.0);
    cfg.limits.max_events = 300_000;
    let r = run(cfg);
    match r.verdict {
        FleetVerdict::Overloaded { reason, at } => {
            assert_eq!(reason, FleetOverload::EventLimit);
            assert!(at > 0.0 && at < 3600.0, "stopped at {at}");
        }
        v => panic!("expected overloaded, got {v:?}"),
    }
    assert!(r.events <= 300_000);
    assert!(r.outcomes.rejected_gateway + r.outcomes.rejected_quota > 0);

    let r = run(seed(1e9, 1, 3600.0));
    assert!(
        matches!(r.verdict, FleetVerdict::Overloaded { .. }),
        "{:?}",
        r.verdict
    );
    assert!(r.outcomes.in_flight <= FleetConfig::seed().limits.max_in_flight as u64 + 1);
}

// 1,000 req/s on the seed's 8 replicas took about 50 s and 3.5 GB: every request queued on
// an engine. Now the gateway sheds with 429 once every replica holds its bound, so the
// queues, and the run, stay small.
#[test]
fn twenty_times_the_seed_load_is_shed_not_queued_without_bound() {
    let r = run(seed(1000.0, 8, 20.0));
    assert_eq!(r.verdict, FleetVerdict::Completed);
    assert!(r.outcomes.rejected_gateway > 0, "{:?}", r.outcomes);
    let bound = FleetConfig::seed().gateway.max_outstanding_per_replica as u64;
    let most_waiting = r.series.iter().map(|p| p.open_streams).max().unwrap_or(0) as u64;
    assert!(
        most_waiting <= 8 * bound + FleetConfig::seed().gateway.max_queued as u64,
        "{most_waiting} open streams"
    );
}

// A client waited forever: nothing gave up. Now a client with no first token after
// `clients.timeout_s` cancels, and the engine drops a request it only queued.
#[test]
fn clients_give_up_and_the_engine_frees_their_place() {
    let mut cfg = seed(40.0, 1, 60.0);
    cfg.clients.timeout_s = 5.0;
    cfg.gateway.max_outstanding_per_replica = 100_000;
    let r = run(cfg);
    let o = r.outcomes;
    assert!(o.timed_out > 0, "{o:?}");
    assert!(o.cancelled_in_engine > 0, "{o:?}");
    assert_eq!(o.in_flight, 0);
    assert_eq!(
        o.arrived,
        o.completed + o.rejected() + o.spilled() + o.timed_out
    );
    // No served request waited past the timeout for its first token.
    assert!(
        r.clocks.server_ttft.max <= 5.0 + 0.1,
        "{:?}",
        r.clocks.server_ttft
    );
}

// Fleet histograms clamped at 2^40 ns (about 1,100 s) silently: a one-replica seed fleet
// reported p50 = p99 = max = 1,100 s while its last requests waited about 5,700 s.
#[test]
fn latencies_past_eighteen_minutes_are_measured_not_clamped() {
    let mut cfg = seed(50.0, 1, 3600.0);
    cfg.clients.timeout_s = 86_400.0;
    cfg.gateway.max_outstanding_per_replica = 100_000;
    cfg.gateway.max_queued = 100_000;
    cfg.limits.max_in_flight = 2_000_000;
    let r = run(cfg);
    assert_eq!(r.verdict, FleetVerdict::Completed);
    let e2e = r.clocks.e2e;
    assert!(e2e.max > 2_000.0, "{e2e:?}");
    assert!(e2e.p50 < e2e.max, "{e2e:?}");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

// Work caps read from a file could be raised without end, switching them off.
#[test]
fn work_caps_in_a_file_are_bounded_above() {
    let replica = "kind = \"replica\"\n[limits]\nmax_steps = 9000000000000000000\n";
    let e = Scenario::from_toml(replica).unwrap_err();
    assert_eq!(e.field, "limits.max_steps");
    let fleet = "kind = \"fleet\"\n[limits]\nmax_events = 9000000000000000000\n";
    let e = Scenario::from_toml(fleet).unwrap_err();
    assert_eq!(e.field, "limits.max_events");
}

// Reading a huge file ran out of memory, and TOML errors printed the offending input over
// several lines.
#[test]
fn huge_files_and_bad_toml_give_one_short_line() {
    let huge = format!("a = \"{}\"\n", "x".repeat(2 << 20));
    let e = run_to_json("huge.toml", &huge, &RunOptions::default()).unwrap_err();
    assert!(e.contains("at most"), "{e}");
    let long_key = format!("kind = \"replica\"\n{} = 1\n", "k".repeat(100_000));
    let e = run_to_json("k.toml", &long_key, &RunOptions::default()).unwrap_err();
    assert!(!e.contains('\n') && e.chars().count() < 300, "{e}");
    let e = run_to_json("s.toml", "kind = \n", &RunOptions::default()).unwrap_err();
    assert!(!e.contains('\n') && e.contains("line 1"), "{e}");
}

// Each [[arms]] entry cloned the whole base, arms included: 10,000 arms took about 30 s.
// Arms now merge into the base alone (linear), and there are at most 256 of them.
#[test]
fn many_arms_parse_in_linear_time_and_too_many_are_refused() {
    let arm = "[[arms]]\nname = \"a\"\nrouter = { policy = { kind = \"round_robin\" } }\n";
    let ok = arm.repeat(256);
    assert_eq!(FleetScenario::from_toml(&ok).unwrap().arms.len(), 256);
    let too_many = arm.repeat(10_000);
    assert_eq!(
        FleetScenario::from_toml(&too_many).unwrap_err().field,
        "arms"
    );
}

// An empty TOML file silently ran the default scenario.
#[test]
fn an_empty_file_is_an_error() {
    for text in ["", "\n# only a comment\n"] {
        assert!(Scenario::from_toml(text).is_err(), "{text:?}");
    }
    assert!(Scenario::from_json("{}").is_err());
}

// `replicas = 0` was reported as a bad `max_replicas`, a field the user never wrote.
#[test]
fn zero_replicas_is_reported_on_replicas() {
    let e = FleetScenario::from_toml("[[pools]]\nreplicas = 0\n").unwrap_err();
    assert_eq!(e.field, "pools[0].replicas");
}

// A replica run in which every request was rejected said "completed".
#[test]
fn a_run_that_serves_nothing_says_so() {
    let mut cfg = ReplicaSimConfig::seed();
    cfg.workload.prompt_len = LengthDist::Constant { value: 10_000_000 };
    cfg.workload.duration_s = 10.0;
    let r = ReplicaSim::new(cfg).unwrap().run();
    assert!(r.arrived > 0 && r.rejected == r.arrived);
    assert_eq!(r.verdict, Verdict::NothingServed);
    let mut fleet = seed(5.0, 1, 10.0);
    fleet.traffic[0].workload.prompt_len = LengthDist::Constant { value: 10_000_000 };
    assert_eq!(run(fleet).verdict, FleetVerdict::NothingServed);
}

// Model shapes that overflow u64 arithmetic panicked in debug builds, although every input
// was within its allowed range.
#[test]
fn huge_shapes_do_not_overflow() {
    let mut m = model_by_id("llama-3.1-8b").unwrap();
    m.layers = 10_000;
    m.hidden = 1_048_576;
    m.heads = 65_536;
    m.kv_heads = 65_536;
    m.head_dim = 65_536;
    assert_eq!(m.params_from_shape(), None);
    let mut inputs = Inputs::defaults(Question::Fleet);
    for (name, v) in [
        ("layers", 10_000.0),
        ("hidden", 1_048_576.0),
        ("heads", 65_536.0),
        ("kv_heads", 65_536.0),
        ("head_dim", 65_536.0),
    ] {
        inputs.set(Question::Fleet, name, v).unwrap();
    }
    // Whatever it answers, it answers without a panic.
    let _ = derive(Question::Fleet, &inputs);
}

// The GPU-hours question answered for a model whose weights do not fit its GPUs (405B on
// one H100 gave "2.87 GPU-h" and "n/a of the KV pool").
#[test]
fn gpu_hours_refuses_a_model_that_does_not_fit() {
    let mut inputs = Inputs::defaults(Question::GpuHours);
    inputs
        .set_choice(Question::GpuHours, "model", "llama-3.1-405b")
        .unwrap();
    let errors = derive(Question::GpuHours, &inputs).unwrap_err();
    // On the field that fixes it (issue 29: the message named only the GPU's memory).
    assert_eq!(errors[0].field, "gpus_per_replica", "{errors:?}");
}

// A chat longer than the KV pool gave "0 chats", a "0 s" decode step and a passing check.
#[test]
fn a_chat_longer_than_the_pool_is_refused() {
    let mut inputs = Inputs::defaults(Question::ChatsPerReplica);
    inputs
        .set(Question::ChatsPerReplica, "chat_tokens", 10_000_000.0)
        .unwrap();
    let errors = derive(Question::ChatsPerReplica, &inputs).unwrap_err();
    assert_eq!(errors[0].field, "chat_tokens", "{errors:?}");
}

// Streams per replica were rounded two ways: "about 12" in one step and 13 in the next.
#[test]
fn streams_per_replica_round_the_same_way_in_both_steps() {
    for rate in [25.0, 37.0, 50.0, 61.0, 75.0, 99.0] {
        let mut inputs = Inputs::defaults(Question::Fleet);
        inputs.set(Question::Fleet, "rate", rate).unwrap();
        let d = derive(Question::Fleet, &inputs).unwrap();
        let spr = d.step("streams_per_replica").unwrap();
        let kv = d.step("kv_in_use").unwrap();
        let held = kv.substituted.split(" × ").next().unwrap().to_string();
        if spr.value.fract() != 0.0 {
            assert!(
                spr.display.contains(&format!("(about {held})")),
                "{} against {}",
                spr.display,
                kv.substituted
            );
        }
    }
}

// The decode step's tensor-parallel all-reduce departs from the textbook formula and turned
// 3 replicas into 4 for 70B on four H100s at 10 req/s without saying so.
#[test]
fn the_all_reduce_is_shown_beside_the_textbook_figure() {
    let mut inputs = Inputs::defaults(Question::Fleet);
    inputs
        .set_choice(Question::Fleet, "model", "llama-3.1-70b")
        .unwrap();
    inputs
        .set(Question::Fleet, "gpus_per_replica", 4.0)
        .unwrap();
    inputs.set(Question::Fleet, "rate", 10.0).unwrap();
    let d = derive(Question::Fleet, &inputs).unwrap();
    let step = d.step("decode_step").unwrap();
    assert!(step.display.contains("textbook"), "{}", step.display);
    assert!(step.why.contains("all-reduce"), "{}", step.why);
    let replicas = d.step("replicas").unwrap();
    assert_eq!(replicas.display, "4 replicas (textbook 3)");
    assert!(replicas.why.contains("all-reduce"), "{}", replicas.why);
}
