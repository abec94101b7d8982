//! Speculation against load: a speculating set-up (the lab's, or the speculation question's
//! replica) run at a range of traffic levels, each once as set and once with speculation off,
//! so a page can plot the tokens a verifying step yields and the per-token speedup against the
//! arrival rate, and say where the speedup falls to one. Each point is a run of the fleet
//! simulator, the same runs a learner could start by hand at that load.

use serde::{Deserialize, Serialize};
use trainer_engine::error::ConfigError;
use trainer_engine::fleet::{FleetConfig, FleetReport, FleetSim, FleetVerdict};
use trainer_engine::format::{duration, sig};

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
    /// The traffic outran either run's fleet: it turned requests away, its clients gave up
    /// waiting, or it stopped at a work cap (then its figures cover the run up to there).
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
                overloaded: [on, off].iter().any(|r| outran(r)),
            }
        })
        .collect()
}

/// The words of the speculation sweep: `{name}`s are filled by the page from the sweep's points.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepText {
    pub title: String,
    pub intro: String,
    pub button: String,
    pub tokens_title: String,
    pub tokens_caption: String,
    pub speedup_title: String,
    pub speedup_caption: String,
    /// Where the speedup falls to one (`{rate}`).
    pub crossover: String,
    /// The speedup above one at every level swept (`{rate}`: the busiest).
    pub above: String,
    /// The speedup at or below one from the quietest level (`{rate}`).
    pub below: String,
    /// Some level outran the fleet (`{rates}`).
    pub overloaded: String,
    pub stale: String,
    /// No run measured a time per output token (replies of one token): there is nothing to
    /// compare, said instead of every other reading.
    #[serde(default)]
    pub no_decode: String,
    /// The calculator's check only: where the question's arithmetic put the crossover
    /// (`{derived}`) and the plain replica's time per token there (`{tpot}`), against the runs'
    /// at that rate (`{sim_tpot}`), said after the runs' own reading.
    #[serde(default)]
    pub derived: String,
    /// The calculator's check only, when the runs' crossover and the arithmetic's differ by
    /// more than [`CLOSE`], or the runs find none: why the two differ.
    #[serde(default)]
    pub derived_gap: String,
    /// As `derived_gap`, when the simulated plain replica was quicker per token than the
    /// arithmetic's (the reasons for the gap differ in direction).
    #[serde(default)]
    pub derived_gap_quicker: String,
}

/// How far apart (as a share of the arithmetic's figure) the runs' crossover and the
/// arithmetic's may be before the check says why they differ.
pub const CLOSE: f64 = 0.25;

/// The sweep of `cfg` run here, each run to its end, one after another (the pages run the same
/// runs in the simulators' workers and read them with [`points`]). Empty when nothing
/// speculates.
pub fn run(cfg: &FleetConfig) -> Result<Vec<SweepPoint>, ConfigError> {
    let reports = fleets(cfg)
        .into_iter()
        .map(|f| {
            let mut sim = FleetSim::new(f)?;
            sim.run();
            Ok(sim.report())
        })
        .collect::<Result<Vec<FleetReport>, ConfigError>>()?;
    Ok(points(cfg, &reports))
}

/// Whether the traffic outran `r`'s fleet: requests turned away or given up on, or a run
/// stopped at a work cap.
fn outran(r: &FleetReport) -> bool {
    r.verdict != FleetVerdict::Completed || r.outcomes.rejected() + r.outcomes.timed_out > 0
}

/// What the question's arithmetic said, for the check's reading to set beside the runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Derived {
    /// The arrival rate per replica where guessing stops paying, requests a second.
    pub rate: f64,
    /// The plain replica's time per output token there, seconds.
    pub tpot_s: f64,
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

/// What a sweep says, in words chosen from its points: where the speedup falls to one, or that
/// it stays above or below one; the levels that overloaded; and, given the arithmetic's
/// crossover `derived`, where that lies, what a plain token took there in the arithmetic and in
/// the runs, and why the runs differ when they are more than [`CLOSE`] apart (or found none).
pub fn reading(t: &SweepText, pts: &[SweepPoint], derived: Option<Derived>) -> String {
    let fill = |template: &str, values: &[(&str, String)]| {
        values.iter().fold(template.to_string(), |out, (k, v)| {
            out.replace(&format!("{{{k}}}"), v)
        })
    };
    if !pts.is_empty()
        && pts
            .iter()
            .all(|p| p.tpot_on_s <= 0.0 || p.tpot_off_s <= 0.0)
    {
        return t.no_decode.clone();
    }
    let measured = crossover(pts);
    let mut parts = vec![match (measured, pts.first(), pts.last()) {
        (Some(rate), _, _) => fill(&t.crossover, &[("rate", sig(rate, 3))]),
        (None, Some(first), _) if first.speedup <= 1.0 => {
            fill(&t.below, &[("rate", sig(first.rate, 3))])
        }
        (None, _, Some(last)) => fill(&t.above, &[("rate", sig(last.rate, 3))]),
        _ => String::new(),
    }];
    let over: Vec<String> = pts
        .iter()
        .filter(|p| p.overloaded)
        .map(|p| sig(p.rate, 3))
        .collect();
    if !over.is_empty() {
        parts.push(fill(&t.overloaded, &[("rates", over.join(", "))]));
    }
    if let Some(d) = derived.filter(|d| d.rate > 0.0 && !t.derived.is_empty()) {
        // The runs at the set-up's own load, which is the arithmetic's crossover.
        let at = pts.iter().find(|p| p.load == 1.0);
        parts.push(fill(
            &t.derived,
            &[
                ("derived", sig(d.rate, 3)),
                ("tpot", duration(d.tpot_s, 3)),
                (
                    "sim_tpot",
                    at.map_or_else(|| "—".into(), |p| duration(p.tpot_off_s, 3)),
                ),
            ],
        ));
        if measured.is_none_or(|m| (m - d.rate).abs() > CLOSE * d.rate) {
            let quicker = at.is_some_and(|p| p.tpot_off_s > 0.0 && p.tpot_off_s < d.tpot_s);
            parts.push(if quicker && !t.derived_gap_quicker.is_empty() {
                t.derived_gap_quicker.clone()
            } else {
                t.derived_gap.clone()
            });
        }
    }
    parts.retain(|p| !p.is_empty());
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The reading is chosen from the points: the runs' crossover, the overloaded levels, and
    /// the arithmetic's figure with the reason for a gap only when the two are far apart.
    #[test]
    fn the_reading_follows_the_points_and_the_arithmetic() {
        let t = SweepText {
            crossover: "cross {rate}.".into(),
            above: "above {rate}.".into(),
            below: "below {rate}.".into(),
            overloaded: "over {rates}.".into(),
            derived: "derived {derived} at {tpot}, ran {sim_tpot}.".into(),
            derived_gap: "gap.".into(),
            derived_gap_quicker: "quicker gap.".into(),
            ..crate::lab::text().expect("lab words").sweep
        };
        let mut p = [point(10.0, 1.6), point(20.0, 1.2), point(30.0, 0.8)];
        p[1].load = 1.0;
        p[2].overloaded = true;
        let near = Derived {
            rate: 24.0,
            tpot_s: 0.005,
        };
        assert_eq!(
            reading(&t, &p, Some(near)),
            "cross 25. over 30. derived 24 at 5 ms, ran 12 ms."
        );
        let far = Derived { rate: 12.0, ..near };
        let gap = reading(&t, &p, Some(far));
        assert!(gap.ends_with("gap.") && !gap.contains("quicker"), "{gap}");
        // The simulated plain replica quicker than the arithmetic's: the other reason.
        let slow = Derived {
            tpot_s: 0.05,
            ..far
        };
        assert!(reading(&t, &p, Some(slow)).ends_with("quicker gap."));
        assert_eq!(reading(&t, &p[..2], None), "above 20.");
        assert_eq!(reading(&t, &[point(10.0, 0.9)], None), "below 10.");
        // Replies of one token: no time per token to compare, and no figure read off zeros.
        let mut none = p;
        for q in &mut none {
            q.tpot_on_s = 0.0;
            q.tpot_off_s = 0.0;
            q.speedup = 0.0;
        }
        let t = SweepText {
            no_decode: "nothing to compare.".into(),
            ..t
        };
        assert_eq!(reading(&t, &none, Some(far)), "nothing to compare.");
        // The lab's words have no derived sentence: nothing is said of an arithmetic.
        let lab = crate::lab::text().expect("lab words").sweep;
        assert!(!reading(&lab, &p, Some(far)).contains("gap."));
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
        let pts = run(&cfg).expect("the sweep runs");
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
