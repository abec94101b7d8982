//! Speculation against load: the lab's set-up run at a range of traffic levels, each once as
//! set (speculating) and once with speculation off, so a page can plot the tokens a verifying
//! step yields and the per-token speedup against the arrival rate, and say where the speedup
//! falls to one. Each point is a run of the fleet simulator, the same runs a learner could
//! start by hand at that load.

use serde::Serialize;
use trainer_engine::fleet::{FleetConfig, FleetReport, FleetVerdict};

/// The traffic levels swept, as multiples of the set-up's own.
pub const LOADS: [f64; 7] = [0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0];

/// Simulated seconds of traffic per run (or the set-up's own, if shorter).
pub const HORIZON_S: f64 = 120.0;

/// One traffic level of the sweep.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SweepPoint {
    /// The multiple of the set-up's traffic.
    pub load: f64,
    /// Requests a second offered at that level.
    pub rate: f64,
    /// Tokens a decoding request gains per verifying step (its accepted guesses and the
    /// target's own token), while speculating.
    pub tokens_per_step: f64,
    /// Median time per output token with speculation as set, and off, seconds.
    pub tpot_on_s: f64,
    pub tpot_off_s: f64,
    /// `tpot_off_s / tpot_on_s`: above one, speculation makes each token sooner.
    pub speedup: f64,
    /// Either run stopped at a work cap (the traffic outran the fleet): its figures cover the
    /// run up to there.
    pub overloaded: bool,
}

/// Whether any pool of `cfg` speculates (else there is nothing to sweep).
pub fn speculates(cfg: &FleetConfig) -> bool {
    cfg.pools.iter().any(|p| p.replica.speculative.is_some())
}

/// The runs of the sweep, in pairs: at each of [`LOADS`], `cfg` as set, then the same with
/// speculation off, each cut to [`HORIZON_S`]. Empty when nothing speculates.
pub fn fleets(cfg: &FleetConfig) -> Vec<FleetConfig> {
    if !speculates(cfg) {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(2 * LOADS.len());
    for load in LOADS {
        let mut on = cfg.clone();
        on.truncate(HORIZON_S);
        on.scale_load(load);
        let mut off = on.clone();
        for p in &mut off.pools {
            p.replica.speculative = None;
        }
        out.push(on);
        out.push(off);
    }
    out
}

/// The sweep's points from its runs' reports, in the order [`fleets`] gives the runs (`cfg` is
/// the set-up swept, for the offered rate).
pub fn points(cfg: &FleetConfig, reports: &[FleetReport]) -> Vec<SweepPoint> {
    let base = cfg.offered_rate();
    LOADS
        .iter()
        .zip(reports.chunks_exact(2))
        .map(|(&load, pair)| {
            let (on, off) = (&pair[0], &pair[1]);
            let (tpot_on_s, tpot_off_s) = (on.clocks.tpot.p50, off.clocks.tpot.p50);
            // The speculating pools' figure (a fleet with one such pool reads it).
            let tokens_per_step = on
                .pools
                .iter()
                .map(|p| p.spec_tokens_per_step)
                .fold(0.0, f64::max);
            SweepPoint {
                load,
                rate: base * load,
                tokens_per_step,
                tpot_on_s,
                tpot_off_s,
                speedup: if tpot_on_s > 0.0 {
                    tpot_off_s / tpot_on_s
                } else {
                    0.0
                },
                overloaded: [on, off]
                    .iter()
                    .any(|r| r.verdict != FleetVerdict::Completed),
            }
        })
        .collect()
}

/// Where the speedup first falls to one, between two swept levels (interpolated linearly in
/// the rate), in requests a second; `None` when it stays above one throughout or is at or below
/// one from the first level.
pub fn crossover(points: &[SweepPoint]) -> Option<f64> {
    if points.first().is_none_or(|p| p.speedup <= 1.0) {
        return None;
    }
    points.windows(2).find_map(|w| {
        let (a, b) = (w[0], w[1]);
        (a.speedup > 1.0 && b.speedup <= 1.0).then(|| {
            let t = (a.speedup - 1.0) / (a.speedup - b.speedup);
            a.rate + t * (b.rate - a.rate)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use trainer_engine::fleet::FleetSim;

    fn point(rate: f64, speedup: f64) -> SweepPoint {
        SweepPoint {
            load: rate,
            rate,
            tokens_per_step: 2.0,
            tpot_on_s: 0.01,
            tpot_off_s: 0.01 * speedup,
            speedup,
            overloaded: false,
        }
    }

    #[test]
    fn the_crossover_is_interpolated_where_the_speedup_reaches_one() {
        let p = [point(10.0, 1.6), point(20.0, 1.2), point(30.0, 0.8)];
        assert_eq!(crossover(&p), Some(25.0));
        assert_eq!(crossover(&p[..2]), None);
        assert_eq!(crossover(&[point(10.0, 0.9), point(20.0, 0.7)]), None);
        assert_eq!(crossover(&[]), None);
    }

    #[test]
    fn a_set_up_without_speculation_has_nothing_to_sweep() {
        let cfg = crate::lab::preset("fleet-seed").expect("preset").arms[0]
            .1
            .clone();
        assert!(!speculates(&cfg));
        assert!(fleets(&cfg).is_empty());
    }

    /// The speculation moment's EAGLE fleet (three guesses, each right 60 % of the time): the
    /// pairs at each level differ only in speculation, the rates scale, every level gains the
    /// tokens a step the acceptance rate promises, and the speedup is large while the fleet is
    /// quiet and falls to one before the traffic doubles (the batches grow, the verifying step
    /// turns compute-bound).
    #[test]
    fn the_eagle_fleet_gains_while_quiet_and_stops_paying_before_double_the_traffic() {
        let s = trainer_engine::scenario::fleet::FleetScenario::builtin("fleet-spec-latency")
            .expect("scenario");
        let mut cfg = s.arm("eagle").cloned().expect("arm");
        cfg.truncate(60.0);
        let runs = fleets(&cfg);
        assert_eq!(runs.len(), 2 * LOADS.len());
        for pair in runs.chunks_exact(2) {
            assert!(speculates(&pair[0]) && !speculates(&pair[1]));
            let mut back = pair[1].clone();
            back.pools = pair[0].pools.clone();
            assert_eq!(back, pair[0]);
        }
        let reports: Vec<FleetReport> = runs
            .into_iter()
            .map(|f| {
                let mut sim = FleetSim::new(f).expect("sim");
                sim.run();
                sim.report()
            })
            .collect();
        let pts = points(&cfg, &reports);
        assert_eq!(pts.len(), LOADS.len());
        let base = cfg.offered_rate();
        for p in &pts {
            assert!((p.rate - base * p.load).abs() < 1e-9);
            assert!((p.tokens_per_step / 2.176 - 1.0).abs() < 0.03, "{p:?}");
        }
        assert!(pts[0].speedup > 1.5, "{:?}", pts[0]);
        let at = crossover(&pts).expect("a crossover");
        assert!(at > base && at < 2.0 * base, "{at} {pts:?}");
    }
}
