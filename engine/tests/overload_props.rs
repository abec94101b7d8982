//! The simulators driven far past saturation: rates up to 1e9 requests per second, one
//! replica, huge prompts. Work and memory are measured by what the runs hold (events,
//! requests in flight, queued requests), never by wall time.

use proptest::prelude::*;
use trainer_engine::fleet::{FleetConfig, FleetSim, FleetVerdict, PoolConfig};
use trainer_engine::replica::{ReplicaSim, ReplicaSimConfig, Verdict, WorkLimits};
use trainer_engine::workload::{Arrival, LengthDist};

/// Rates from two a second to a billion, spread evenly over their logarithm.
fn rate() -> impl Strategy<Value = f64> {
    (0.3f64..9.0).prop_map(|e| libm::pow(10.0, e))
}

// Invariant: however high the rate and however long the prompts, a fleet run ends within its
// event cap, never holds more requests than its in-flight cap nor more on one replica than
// the gateway's per-replica bound, and a rate far past what its replicas can serve ends in
// an "overloaded" verdict or with the excess shed (429) or timed out, never queued without
// bound.
proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn a_fleet_past_saturation_stays_within_its_caps(
        rate in rate(),
        replicas in 1u32..3,
        prompt in prop_oneof![Just(1_000u32), Just(30_000u32), Just(120_000u32)],
        seed in 0u64..1_000,
    ) {
        let mut cfg = FleetConfig::seed();
        let w = &mut cfg.traffic[0].workload;
        w.arrival = Arrival::Poisson { rate };
        w.prompt_len = LengthDist::Constant { value: prompt };
        w.duration_s = 3600.0;
        w.seed = seed;
        cfg.pools = vec![PoolConfig::seed(replicas)];
        cfg.limits.max_events = 60_000;
        cfg.limits.max_in_flight = 5_000;
        let bound = cfg.gateway.max_outstanding_per_replica;
        let lim = cfg.limits;
        let mut sim = FleetSim::new(cfg).unwrap();
        let mut slices = 0u64;
        while !sim.is_done() && sim.advance_for(5_000) > 0 {
            slices += 1;
            let snap = sim.snapshot();
            prop_assert!(snap.in_flight <= lim.max_in_flight as u64 + 1, "{} in flight", snap.in_flight);
            for r in &snap.replicas {
                prop_assert!(r.load.outstanding <= bound, "{} on one replica", r.load.outstanding);
            }
        }
        prop_assert!(slices <= lim.max_events / 5_000 + 1);
        let r = sim.report();
        prop_assert!(r.events <= lim.max_events);
        prop_assert!(sim.is_done());
        let o = r.outcomes;
        // Far past saturation (the seed replica serves about 20 short requests a second).
        if rate > 1_000.0 * replicas as f64 {
            let turned_away = o.rejected() + o.timed_out;
            prop_assert!(
                matches!(r.verdict, FleetVerdict::Overloaded { .. }) || turned_away > o.completed,
                "{:?} {:?}", r.verdict, o
            );
        }
        if !matches!(r.verdict, FleetVerdict::Overloaded { .. }) {
            prop_assert_eq!(o.in_flight, 0);
        }
    }
}

// Invariant: however high the rate and however long the prompts, a replica run ends within
// its step and request caps with a bounded queue, and a rate no replica can take ends in an
// "overloaded" verdict.
proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn a_replica_past_saturation_stops_at_a_cap(
        rate in rate(),
        prompt in prop_oneof![Just(1_000u32), Just(100_000u32), Just(1_000_000u32)],
        seed in 0u64..1_000,
    ) {
        let mut cfg = ReplicaSimConfig::seed();
        cfg.workload.arrival = Arrival::Poisson { rate };
        cfg.workload.prompt_len = LengthDist::Constant { value: prompt };
        cfg.workload.seed = seed;
        cfg.limits = WorkLimits { max_steps: 50_000, max_waiting: 2_000, max_requests: 20_000 };
        let lim = cfg.limits;
        let r = ReplicaSim::new(cfg).unwrap().run();
        prop_assert!(r.steps <= lim.max_steps);
        prop_assert!(r.arrived <= lim.max_requests);
        prop_assert!(r.in_flight <= lim.max_waiting as u64 + 1_024, "{} in flight", r.in_flight);
        prop_assert!(!matches!(r.verdict, Verdict::Running));
        if rate >= 1e4 && r.rejected < r.arrived {
            prop_assert!(matches!(r.verdict, Verdict::Overloaded { .. }), "{:?}", r.verdict);
        }
    }
}
