//! The split question: the seed's load on separate prefill and decode pools. Its figures are
//! the fleet question's demands split in two and each rounded up, the KV cache's move is the
//! cost model's (the one the fleet simulator runs a split fleet with), and the simulator check
//! runs the answer as a split fleet.

use proptest::prelude::*;
use trainer_course::sizing::{
    check_fleets_for, check_replicas, derive, split_link, Derivation, Inputs, Question, SimCheck,
    SimCheckConfig,
};
use trainer_engine::catalog::link_or_error;
use trainer_engine::cost::CostModel;
use trainer_engine::fleet::{FleetSim, PoolRole};

const Q: Question = Question::Split;

fn with(pairs: &[(&str, f64)]) -> (Inputs, Derivation) {
    let mut inputs = Inputs::defaults(Q);
    for &(name, v) in pairs {
        inputs.set(Q, name, v).expect("in range");
    }
    let d = derive(Q, &inputs).expect("derives");
    (inputs, d)
}

fn value(d: &Derivation, id: &str) -> f64 {
    d.step(id).unwrap_or_else(|| panic!("step {id}")).value
}

#[test]
fn the_reference_figures_are_the_fleet_questions_demands_split() {
    let (_, d) = with(&[]);
    let (_, fleet) = {
        let inputs = Inputs::defaults(Question::Fleet);
        let d = derive(Question::Fleet, &inputs).expect("derives");
        (inputs, d)
    };
    // The same demands as the seed question, from the same steps.
    for id in [
        "prompt_tps",
        "prefill_demand",
        "decode_step",
        "decode_throughput",
        "decode_demand",
    ] {
        assert_eq!(value(&d, id), value(&fleet, id), "{id}");
    }
    // 50 req/s × 1,000 tokens × 32.5 µs = 1.62 replica-seconds a second of prefill; at a 65 %
    // ceiling, 2.5 replicas: three. Decode, 3.23 of 4.97: five. Replicas that do both: eight,
    // the seed fleet; the split costs no GPU more at this load.
    assert_eq!(value(&d, "prefill_replicas"), 3.0);
    assert_eq!(value(&d, "decode_replicas"), 5.0);
    assert_eq!(value(&d, "split_gpus"), 8.0);
    assert_eq!(value(&d, "mixed_replicas"), value(&fleet, "replicas"));
    assert_eq!(value(&d, "extra_gpus"), 0.0);
    // The move: 1,000 tokens of 128 KiB over InfiniBand NDR at its line rate.
    let cost = CostModel::new(
        trainer_engine::cost::Deployment::seed(),
        trainer_engine::cost::Efficiency::brief(0.5, 0.75),
    )
    .expect("seed");
    assert_eq!(value(&d, "kv_moved"), 1_000.0 * 131_072.0);
    let ib = link_or_error("infiniband-ndr").expect("catalog");
    assert_eq!(
        value(&d, "transfer_time"),
        cost.kv_transfer_time(1_000, &ib, 1.0)
    );
    assert_eq!(
        value(&d, "first_token"),
        1_000.0 * value(&d, "prefill_per_token")
            + value(&d, "transfer_time")
            + value(&d, "decode_step")
    );
    assert!(
        d.verdict.summary.contains("3 replicas"),
        "{}",
        d.verdict.summary
    );
}

#[test]
fn a_slower_link_costs_the_move_and_nothing_else() {
    let (_, fast) = with(&[]);
    let (_, slow) = with(&[("link_gbps", 25.0)]);
    let (l, share) = split_link(25.0);
    assert_eq!(share, 25.0 / 400.0);
    assert_eq!(l.id, "infiniband-ndr");
    assert!(value(&slow, "transfer_time") > 10.0 * value(&fast, "transfer_time"));
    for id in ["prefill_replicas", "decode_replicas", "split_gpus"] {
        assert_eq!(value(&slow, id), value(&fast, id), "{id}");
    }
}

#[test]
fn a_load_whose_pools_round_up_apart_costs_a_gpu_more() {
    // Two pools round up apart; one fleet rounds their sum once. Across loads the two must
    // sometimes differ by a replica, and never by more.
    let mut found = false;
    for rate in (5..=200).map(|r| r as f64) {
        let (_, d) = with(&[("rate", rate)]);
        let extra = value(&d, "extra_gpus");
        assert!(extra >= 0.0, "{rate}: the split never needs fewer");
        assert!(
            extra <= 1.0,
            "{rate}: two roundings cost at most one replica"
        );
        if extra > 0.0 {
            found = true;
            assert!(
                d.verdict.summary.contains("more than"),
                "{}",
                d.verdict.summary
            );
        }
    }
    assert!(found, "some load rounds the pools up apart");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever the load and lengths: each pool at least one replica, the split at least the
    /// replicas that do both and at most one more, the link's share of time its load.
    #[test]
    fn the_split_is_never_smaller_than_one_fleet_and_at_most_one_replica_more(
        rate in 0.5f64..500.0,
        prompt in 50.0f64..16_000.0,
        output in 10.0f64..2_000.0,
        gbps in 4.0f64..400.0,
    ) {
        let (_, d) = with(&[
            ("rate", rate.round().max(1.0)),
            ("prompt_tokens", prompt.round()),
            ("output_tokens", output.round()),
            ("link_gbps", gbps),
        ]);
        let (p, dr, mixed) = (
            value(&d, "prefill_replicas"),
            value(&d, "decode_replicas"),
            value(&d, "mixed_replicas"),
        );
        prop_assert!(p >= 1.0 && dr >= 1.0);
        prop_assert!(p + dr >= mixed && p + dr <= mixed + 1.0, "{p} + {dr} against {mixed}");
        let busy = rate.round().max(1.0) * value(&d, "transfer_time") / p;
        let check = d.step("link_check").and_then(|s| s.check).expect("a check");
        prop_assert_eq!(check, busy <= 0.65, "the default ceiling");
    }
}

#[test]
fn the_simulator_check_runs_the_answer_as_a_split_fleet() {
    let (inputs, d) = with(&[]);
    let n = check_replicas(Q, &inputs, &d);
    assert_eq!(n, 8);
    let cfg = SimCheckConfig {
        duration_s: 20.0,
        ..SimCheckConfig::DEFAULT
    };
    let fleets = check_fleets_for(Q, &inputs, n, &cfg).expect("fleets");
    assert_eq!(fleets.len(), 2, "the answer and one decode replica fewer");
    let pools = |i: usize| {
        fleets[i]
            .pools
            .iter()
            .map(|p| (p.role, p.replicas))
            .collect::<Vec<_>>()
    };
    assert_eq!(pools(0), [(PoolRole::Prefill, 3), (PoolRole::Decode, 5)]);
    assert_eq!(pools(1), [(PoolRole::Prefill, 3), (PoolRole::Decode, 4)]);
    let (_, share) = split_link(400.0);
    assert_eq!(fleets[0].disagg.link, "infiniband-ndr");
    assert_eq!(fleets[0].disagg.link_share, share);
    let mut sim = FleetSim::new(fleets[0].clone()).expect("valid");
    sim.run();
    let r = sim.report();
    let k = SimCheck::from_report(&fleets[0], &r);
    assert_eq!(k.replicas, 8, "both pools' replicas");
    assert!(r.outcomes.completed > 500);
    // The simulator moves each cache in the derivation's time (its engine's KV layout is the
    // same: the bytes and the link do not depend on the efficiencies).
    assert!((r.kv_transfer.time.mean - value(&d, "transfer_time")).abs() < 1e-9);
    // A split at the beginning of the range with one decode replica has no fewer to try.
    let (inputs, d) = with(&[("rate", 1.0)]);
    let n = check_replicas(Q, &inputs, &d);
    assert_eq!(n, 2);
    assert_eq!(
        check_fleets_for(Q, &inputs, n, &cfg).expect("fleets").len(),
        1
    );
}
