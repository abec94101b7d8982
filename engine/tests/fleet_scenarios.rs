//! Each shipped fleet scenario's diagnosis, asserted from the metrics of a short run.
//!
//! The files run for an hour; the tests cut the traffic to a few simulated minutes, which is
//! enough for every effect to show and keeps the file fast in the dev profile.

use trainer_engine::fleet::{FleetReport, FleetSim, RequestRecord};
use trainer_engine::scenario::FleetScenario;

/// Runs one arm of a shipped scenario for `horizon_s` seconds of traffic, then drains it.
fn run(scenario: &str, arm: &str, horizon_s: f64) -> (FleetReport, Vec<RequestRecord>) {
    let s = FleetScenario::builtin(scenario).expect("shipped scenarios parse");
    let mut cfg = s
        .arm(arm)
        .unwrap_or_else(|| panic!("{scenario} has an arm {arm}"))
        .clone();
    cfg.truncate(horizon_s);
    cfg.record_requests = true;
    let mut sim = FleetSim::new(cfg).expect("shipped scenarios are valid");
    sim.run();
    (sim.report(), sim.records().to_vec())
}

fn within(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

#[test]
fn every_shipped_scenario_parses_with_its_arms() {
    let want = [
        ("fleet-seed", vec!["base"]),
        (
            "fleet-ttft-gap",
            vec![
                "slow-router-cold-pool",
                "fixed",
                "more-replicas",
                "warm-pool-only",
            ],
        ),
        (
            "fleet-buffering",
            vec!["direct", "proxy-buffering", "gzip", "coalescing-lb"],
        ),
        (
            "fleet-long-prompts",
            vec!["request-count", "token-aware", "token-aware-no-cap"],
        ),
        (
            "fleet-evening-peak",
            vec![
                "gpu-utilisation",
                "queued-tokens",
                "ttft",
                "scheduled-floor",
            ],
        ),
        (
            "fleet-chat-affinity",
            vec![
                "round-robin",
                "prefix-affinity",
                "least-outstanding",
                "sticky-unbounded",
                "power-of-two",
            ],
        ),
        (
            "fleet-rag-70b",
            vec!["as-is", "more-replicas", "tp8", "fp8", "trim-context"],
        ),
        (
            "fleet-halve-cost",
            vec!["bf16", "fp8-kv", "fp8-weight-only", "fp8", "h200"],
        ),
    ];
    for (name, arms) in want {
        let s = FleetScenario::builtin(name).unwrap();
        assert_eq!(s.name, name);
        assert!(!s.title.is_empty() && !s.description.is_empty(), "{name}");
        let got: Vec<&str> = s.arms.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(got, arms, "{name}");
    }
}

/// Scenario 1: the seed fleet meets a 20 ms TPOT, and its open streams obey Little's law,
/// well below the 250 estimated at the 20 ms TPOT target because its decode steps are faster.
#[test]
fn seed_fleet_meets_tpot_and_obeys_littles_law() {
    let (r, recs) = run("fleet-seed", "base", 120.0);
    assert_eq!(r.outcomes.completed, r.outcomes.arrived);
    assert!(r.clocks.tpot.p99 <= 0.020, "TPOT p99 {}", r.clocks.tpot.p99);
    assert!(
        within(r.streams.open_mean, r.streams.littles_law, 0.05),
        "open streams {} against rate x duration {}",
        r.streams.open_mean,
        r.streams.littles_law
    );
    // The brief's estimate: 50 req/s x 250 tokens x 20 ms = 250 streams.
    assert!(within(r.streams.estimate_at_tpot_target, 250.0, 0.03));
    assert!(r.streams.open_mean < 0.6 * r.streams.estimate_at_tpot_target);
    assert!(r.slo.server_ttft_attainment > 0.99);
    assert_eq!(recs.len() as u64, r.outcomes.arrived);
}

/// Scenario 2: server TTFT p99 far above engine TTFT p99, and the gap is the router queue and
/// the cold connection pool, not the engine.
#[test]
fn ttft_gap_is_explained_by_the_router_queue_and_cold_pool() {
    let (slow, recs) = run("fleet-ttft-gap", "slow-router-cold-pool", 120.0);
    let (fixed, _) = run("fleet-ttft-gap", "fixed", 120.0);
    let c = &slow.clocks;
    assert!(
        c.server_ttft.p99 > 5.0 * c.engine_ttft.p99 && c.server_ttft.p99 > 0.3,
        "server p99 {} engine p99 {}",
        c.server_ttft.p99,
        c.engine_ttft.p99
    );
    // For every request the gap is at least its router queue plus its connection setup.
    for rec in recs.iter().filter(|r| r.streaming) {
        let gap = rec.server_ttft() - rec.engine_ttft();
        assert!(gap + 1e-9 >= rec.hops.router + rec.hops.connect, "{rec:?}");
        assert!(
            rec.hops.connect >= 0.04 - 1e-12,
            "cold pool: every request connects"
        );
    }
    // The router is the largest hop, then the connection.
    let g = &slow.gap;
    assert!(g.router.p99 > g.connect.p99 && g.connect.p99 > g.auth.p99.max(g.quota.p99));
    assert!(g.server_minus_engine.p99 >= g.router.p99);
    // Fixed, the gap closes while the engines look the same as before.
    assert!(fixed.gap.server_minus_engine.p99 < 0.05);
    assert!(fixed.clocks.engine_ttft.p99 < 3.0 * c.engine_ttft.p99);
}

/// Scenario 3: with a buffer on the path the client's ITL p99 greatly exceeds the engine's,
/// while the engine's (and the gateway's) ITL stays exactly as it was.
#[test]
fn buffering_makes_the_client_stutter_while_the_engine_is_flat() {
    let (direct, _) = run("fleet-buffering", "direct", 60.0);
    let e = direct.clocks.engine_itl.p99;
    assert!(within(direct.clocks.client_itl.p99, e, 0.01));
    for arm in ["proxy-buffering", "gzip", "coalescing-lb"] {
        let (b, _) = run("fleet-buffering", arm, 60.0);
        let c = &b.clocks;
        assert_eq!(c.engine_itl, direct.clocks.engine_itl, "{arm}: same engine");
        assert_eq!(
            c.gateway_itl, direct.clocks.gateway_itl,
            "{arm}: same gateway"
        );
        assert!(
            c.client_itl.p99 > 3.0 * e,
            "{arm}: client p99 {}",
            c.client_itl.p99
        );
        assert_eq!(
            c.client_itl.p50, 0.0,
            "{arm}: most tokens arrive inside a burst"
        );
        // No gap is invented: the client sees at most the tokens the gateway wrote.
        assert!(c.client_itl.count <= c.gateway_itl.count);
        assert!(
            c.user_ttft.p50 > direct.clocks.user_ttft.p50 + 0.05,
            "{arm}"
        );
        assert_eq!(c.server_ttft, direct.clocks.server_ttft, "{arm}");
    }
}

/// Scenario 4: with a 32K prompt p99, token-aware routing with a per-step cap lowers p99 TTFT
/// against request-count routing.
#[test]
fn token_aware_routing_lowers_p99_ttft_with_long_prompts() {
    let (count, recs) = run("fleet-long-prompts", "request-count", 120.0);
    let (tokens, _) = run("fleet-long-prompts", "token-aware", 120.0);
    let mut lens: Vec<u32> = recs.iter().map(|r| r.prompt_tokens).collect();
    lens.sort_unstable();
    let p99 = lens[(lens.len() * 99).div_ceil(100) - 1] as f64;
    assert!(within(p99, 32_000.0, 0.25), "prompt p99 {p99}");
    assert!(
        tokens.clocks.server_ttft.p99 < count.clocks.server_ttft.p99 / 3.0,
        "token-aware p99 {} request-count p99 {}",
        tokens.clocks.server_ttft.p99,
        count.clocks.server_ttft.p99
    );
    assert!(tokens.clocks.engine_queue.p99 < count.clocks.engine_queue.p99);
}

/// Scenario 5: GPU utilisation reads near 100 % before and during the peak, so an autoscaler
/// on it buys the maximum before the peak; queued tokens and TTFT follow the load but pay the
/// scale-up lead time in TTFT.
#[test]
fn evening_peak_utilisation_cannot_tell_quiet_from_busy() {
    let peak = 300.0;
    let (util, _) = run("fleet-evening-peak", "gpu-utilisation", 900.0);
    let readings: Vec<f64> = util
        .autoscaler_signal
        .iter()
        .map(|p| p.value)
        .filter(|v| v.is_finite())
        .collect();
    assert!(!readings.is_empty());
    assert!(
        readings.iter().all(|&v| v > 0.9),
        "utilisation readings {readings:?}"
    );
    let max = 8;
    let first_at_max = util
        .scale_events
        .iter()
        .find(|e| e.to == max)
        .map(|e| e.t)
        .unwrap();
    assert!(first_at_max < peak, "bought the maximum before the peak");
    for arm in ["queued-tokens", "ttft"] {
        let (r, _) = run("fleet-evening-peak", arm, 900.0);
        let first_up = r
            .scale_events
            .iter()
            .find(|e| e.to > e.from)
            .map(|e| e.t)
            .unwrap();
        assert!(
            (peak..peak + 90.0).contains(&first_up),
            "{arm}: first scale-up at {first_up}"
        );
        assert!(
            r.cost.gpu_hours < 0.85 * util.cost.gpu_hours,
            "{arm}: {} GPU-hours against {}",
            r.cost.gpu_hours,
            util.cost.gpu_hours
        );
        // The lead time shows: TTFT climbs past the SLO while new replicas load.
        assert!(
            r.clocks.server_ttft.p99 > r.slo.ttft_s,
            "{arm}: p99 {} against {}",
            r.clocks.server_ttft.p99,
            r.slo.ttft_s
        );
        assert!(r.clocks.server_ttft.p50 < 0.1, "{arm}");
    }
    assert!(util.clocks.server_ttft.p99 < util.slo.ttft_s);
}

/// Scenario 6: prefix affinity raises the prefix hit rate and lowers TTFT against round-robin.
#[test]
fn prefix_affinity_raises_hits_and_lowers_ttft_for_chat() {
    let (rr, _) = run("fleet-chat-affinity", "round-robin", 300.0);
    let (aff, _) = run("fleet-chat-affinity", "prefix-affinity", 300.0);
    let hit = |r: &FleetReport| r.pools[0].prefix_hit_rate;
    assert!(hit(&aff) > hit(&rr) + 0.2, "{} vs {}", hit(&aff), hit(&rr));
    assert!(aff.clocks.engine_ttft.mean < 0.7 * rr.clocks.engine_ttft.mean);
    assert!(aff.clocks.server_ttft.p90 < rr.clocks.server_ttft.p90);
}
