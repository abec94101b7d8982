//! A lab run: the fleet simulator advanced a bounded number of events at a time, and what a
//! page shows of it (headline figures, latency curves, series, each replica's share), with
//! exports as CSV and JSON and the difference between two runs.

use serde::Serialize;
use trainer_engine::error::ConfigError;
use trainer_engine::fleet::{
    Distributions, FleetConfig, FleetReport, FleetSim, FleetVerdict, ReplicaSummary,
};
use trainer_engine::format::{duration, int, money, percent, sig};

/// A run in progress.
pub struct LabRun {
    sim: FleetSim,
    horizon: f64,
}

impl LabRun {
    /// Validates the configuration and sets the fleet up at time zero.
    pub fn new(cfg: FleetConfig) -> Result<LabRun, ConfigError> {
        let horizon = cfg.horizon().max(1e-9);
        Ok(LabRun {
            sim: FleetSim::new(cfg)?,
            horizon,
        })
    }

    /// Processes at most `events` events; returns how many were processed (0 once done).
    pub fn advance(&mut self, events: u64) -> u64 {
        self.sim.advance_for(events)
    }

    pub fn is_done(&self) -> bool {
        self.sim.is_done()
    }

    /// Simulated time reached, seconds.
    pub fn now(&self) -> f64 {
        self.sim.now()
    }

    /// When the traffic stops, seconds.
    pub fn horizon(&self) -> f64 {
        self.horizon
    }

    /// How far through the traffic the run is (0 to 1; 1 while the last streams drain).
    pub fn progress(&self) -> f64 {
        if self.is_done() {
            1.0
        } else {
            (self.sim.now() / self.horizon).clamp(0.0, 1.0)
        }
    }

    /// Everything the page shows, for the run so far.
    pub fn result(&self) -> LabResult {
        LabResult::new(
            self.sim.report(),
            self.sim.distributions(),
            self.sim.replica_summaries(),
        )
    }
}

/// What a run measured, as the page shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LabResult {
    pub headline: Vec<Figure>,
    pub report: FleetReport,
    pub distributions: Distributions,
    pub replicas: Vec<ReplicaSummary>,
}

/// How a figure is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Seconds,
    Count,
    /// Per second.
    Rate,
    /// 0 to 1, shown as a percentage.
    Fraction,
    Dollars,
}

/// One headline figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    /// Stable id for `data-testid`s and exports.
    pub id: &'static str,
    pub label: &'static str,
    pub value: f64,
    pub unit: Unit,
    /// Whether a larger value is better (`None`: neither).
    pub higher_is_better: Option<bool>,
}

impl Figure {
    /// The value as people read it, with its unit.
    pub fn shown(&self) -> String {
        show(self.value, self.unit)
    }
}

fn show(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Seconds => duration(v, 3),
        Unit::Count => int(v),
        Unit::Rate => format!("{}/s", sig(v, 4)),
        Unit::Fraction => percent(v),
        Unit::Dollars => money(v),
    }
}

impl LabResult {
    pub fn new(
        report: FleetReport,
        distributions: Distributions,
        replicas: Vec<ReplicaSummary>,
    ) -> LabResult {
        let r = &report;
        let c = &r.clocks;
        let o = &r.outcomes;
        let peak = r
            .series
            .iter()
            .map(|p| p.provisioned_replicas)
            .max()
            .unwrap_or(0);
        let f = |id, label, value, unit, better| Figure {
            id,
            label,
            value,
            unit,
            higher_is_better: better,
        };
        use Unit::*;
        let headline = vec![
            f(
                "server_ttft_p99",
                "p99 server TTFT",
                c.server_ttft.p99,
                Seconds,
                Some(false),
            ),
            f(
                "engine_ttft_p99",
                "p99 engine TTFT",
                c.engine_ttft.p99,
                Seconds,
                Some(false),
            ),
            f(
                "user_ttft_p99",
                "p99 user TTFT",
                c.user_ttft.p99,
                Seconds,
                Some(false),
            ),
            f(
                "server_ttft_p50",
                "median server TTFT",
                c.server_ttft.p50,
                Seconds,
                Some(false),
            ),
            f(
                "client_itl_p99",
                "p99 ITL at the client",
                c.client_itl.p99,
                Seconds,
                Some(false),
            ),
            f(
                "engine_itl_p99",
                "p99 ITL at the engine",
                c.engine_itl.p99,
                Seconds,
                Some(false),
            ),
            f(
                "tpot_p99",
                "p99 time per output token",
                c.tpot.p99,
                Seconds,
                Some(false),
            ),
            f(
                "output_throughput",
                "output tokens per second",
                r.vllm.output_throughput,
                Rate,
                Some(true),
            ),
            f(
                "completed",
                "requests served",
                o.completed as f64,
                Count,
                Some(true),
            ),
            f("rejected", "429s", o.rejected() as f64, Count, Some(false)),
            f("spilled", "spilled", o.spilled() as f64, Count, None),
            f(
                "timed_out",
                "clients that gave up",
                o.timed_out as f64,
                Count,
                Some(false),
            ),
            f(
                "ttft_attainment",
                "server TTFT within the SLO",
                r.slo.server_ttft_attainment,
                Fraction,
                Some(true),
            ),
            f(
                "open_streams",
                "open streams (mean)",
                r.streams.open_mean,
                Count,
                None,
            ),
            f(
                "peak_replicas",
                "most replicas at once",
                peak as f64,
                Count,
                None,
            ),
            f(
                "gpu_hours",
                "GPU-hours",
                r.cost.gpu_hours,
                Count,
                Some(false),
            ),
            f(
                "dollars_per_m",
                "$ per million output tokens",
                r.cost.dollars_per_million_output_tokens,
                Dollars,
                Some(false),
            ),
            // Speculative decoding (zero when it is off): what each verifying step yields.
            f(
                "spec_tokens_per_step",
                "tokens per decoding step (speculation)",
                r.pools.first().map_or(0.0, |p| p.spec_tokens_per_step),
                Count,
                Some(true),
            ),
            f(
                "spec_acceptance",
                "guesses accepted (speculation)",
                r.pools.first().map_or(0.0, |p| p.spec_acceptance),
                Fraction,
                Some(true),
            ),
            // The prefix cache's two tiers (the first pool's): the GPU's, and host memory's.
            f(
                "prefix_hit_rate",
                "prompt tokens found cached on the GPU",
                r.pools.first().map_or(0.0, |p| p.prefix_hit_rate),
                Fraction,
                Some(true),
            ),
            f(
                "host_hit_rate",
                "prompt tokens copied back from host memory",
                r.pools.first().map_or(0.0, |p| p.host_hit_rate),
                Fraction,
                Some(true),
            ),
            // LoRA adapters (zero without them): misses, and requests the limit held back.
            f(
                "lora_loads",
                "adapters loaded into a GPU slot",
                r.pools.first().map_or(0.0, |p| p.lora_loads as f64),
                Count,
                Some(false),
            ),
            f(
                "lora_passed_over",
                "requests passed over for their adapter",
                r.pools.first().map_or(0.0, |p| p.lora_passed_over as f64),
                Count,
                Some(false),
            ),
        ];
        LabResult {
            headline,
            report,
            distributions,
            replicas,
        }
    }

    /// The headline figure `id`.
    pub fn figure(&self, id: &str) -> Option<&Figure> {
        self.headline.iter().find(|f| f.id == id)
    }

    /// Whether the run reached its end (rather than a work cap, or still running).
    pub fn completed(&self) -> bool {
        matches!(
            self.report.verdict,
            FleetVerdict::Completed | FleetVerdict::NothingServed
        )
    }

    /// Output tokens per second and requests served per second between consecutive points
    /// of the series, at the later point's time.
    pub fn throughput(&self) -> Vec<(f64, f64, f64)> {
        self.report
            .series
            .windows(2)
            .map(|w| {
                let dt = (w[1].t - w[0].t).max(1e-9);
                (
                    w[1].t,
                    w[1].output_tokens.saturating_sub(w[0].output_tokens) as f64 / dt,
                    w[1].completed.saturating_sub(w[0].completed) as f64 / dt,
                )
            })
            .collect()
    }

    /// The headline figures as CSV (`id,label,value,unit`).
    pub fn figures_csv(&self) -> String {
        let mut out = String::from("id,label,value,unit\n");
        for f in &self.headline {
            let unit = serde_json::to_value(f.unit)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            out.push_str(&format!("{},{},{},{}\n", f.id, f.label, f.value, unit));
        }
        out
    }

    /// The time series as CSV, one row per point.
    pub fn series_csv(&self) -> String {
        let mut out = String::from(
            "t_s,open_streams,ready_replicas,provisioned_replicas,queued_prompt_tokens,running,waiting,kv_blocks_used,kv_blocks_total,completed,rejected,spilled,output_tokens\n",
        );
        for p in &self.report.series {
            out.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                p.t,
                p.open_streams,
                p.ready_replicas,
                p.provisioned_replicas,
                p.queued_prompt_tokens,
                p.running,
                p.waiting,
                p.kv_blocks_used,
                p.kv_blocks_total,
                p.completed,
                p.rejected,
                p.spilled,
                p.output_tokens
            ));
        }
        out
    }

    /// Everything as one JSON object, with the query string of the set-up that made it.
    pub fn to_json(&self, query: &str) -> String {
        #[derive(Serialize)]
        struct Export<'a> {
            query: &'a str,
            #[serde(flatten)]
            result: &'a LabResult,
        }
        serde_json::to_string_pretty(&Export {
            query,
            result: self,
        })
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

/// One headline figure of two runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Delta {
    pub id: &'static str,
    pub label: &'static str,
    pub a: f64,
    pub b: f64,
    /// B minus A, in the figure's unit.
    pub diff: f64,
    /// B against A as a fraction (B / A - 1); `None` when A is zero.
    pub relative: Option<f64>,
    /// Whether B is better than A (`None` when equal or neither way is better).
    pub b_better: Option<bool>,
    unit: Unit,
}

impl Delta {
    /// The difference as people read it: `+12 ms (+8 %)`.
    pub fn shown(&self) -> String {
        let sign = if self.diff > 0.0 {
            "+"
        } else if self.diff < 0.0 {
            "−"
        } else {
            ""
        };
        let mag = show(self.diff.abs(), self.unit);
        match self.relative {
            Some(r) if self.diff != 0.0 => {
                format!("{sign}{mag} ({sign}{})", percent(r.abs()))
            }
            _ if self.diff == 0.0 => "same".into(),
            _ => format!("{sign}{mag}"),
        }
    }

    pub fn a_shown(&self) -> String {
        show(self.a, self.unit)
    }

    pub fn b_shown(&self) -> String {
        show(self.b, self.unit)
    }
}

/// Every headline figure of run A beside run B's.
pub fn compare(a: &LabResult, b: &LabResult) -> Vec<Delta> {
    a.headline
        .iter()
        .filter_map(|fa| {
            let fb = b.figure(fa.id)?;
            let diff = fb.value - fa.value;
            Some(Delta {
                id: fa.id,
                label: fa.label,
                a: fa.value,
                b: fb.value,
                diff,
                relative: (fa.value != 0.0).then(|| fb.value / fa.value - 1.0),
                b_better: match fa.higher_is_better {
                    Some(_) if diff == 0.0 => None,
                    Some(h) => Some((diff > 0.0) == h),
                    None => None,
                },
                unit: fa.unit,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::{Knob, Setup};

    /// The set-up of `q` with its traffic cut to 20 s (or just past its last source's
    /// start).
    fn short(q: &str) -> FleetConfig {
        let mut s = Setup::from_query(q);
        let last_start = s
            .config
            .traffic
            .iter()
            .map(|t| t.start_s)
            .fold(0.0, f64::max);
        s.set(
            Knob::from_key("duration").unwrap(),
            &(last_start + 20.0).to_string(),
        )
        .unwrap();
        s.config
    }

    /// Invariant: a run advanced in slices of any size gives the report, curves and
    /// replica summaries of a run in one go, bit for bit.
    #[test]
    fn a_run_in_slices_equals_a_run_in_one_go() {
        for q in [
            "preset=fleet-seed",
            "preset=fleet-evening-peak&arm=ttft",
            "preset=replica-chat-prefix-cache",
        ] {
            let cfg = short(q);
            let mut whole = LabRun::new(cfg.clone()).unwrap();
            while whole.advance(u64::MAX) > 0 {}
            let whole = whole.result();
            for slice in [1, 37, 1000] {
                let mut run = LabRun::new(cfg.clone()).unwrap();
                let mut last = 0.0;
                while run.advance(slice) > 0 {
                    assert!(run.progress() >= last);
                    last = run.progress();
                }
                let r = run.result();
                let json = |r: &LabResult| serde_json::to_string(r).unwrap();
                assert_eq!(json(&r), json(&whole), "{q}, slices of {slice}");
            }
            assert!(whole.completed());
            assert!(whole.report.outcomes.completed > 0);
        }
    }

    #[test]
    fn the_curves_agree_with_the_report() {
        let mut run = LabRun::new(short("preset=fleet-seed")).unwrap();
        while run.advance(10_000) > 0 {}
        let r = run.result();
        let c = &r.report.clocks;
        let d = &r.distributions;
        for (cdf, s) in [
            (&d.server_ttft, &c.server_ttft),
            (&d.engine_ttft, &c.engine_ttft),
            (&d.user_ttft, &c.user_ttft),
            (&d.client_itl, &c.client_itl),
            (&d.gateway_itl, &c.gateway_itl),
            (&d.engine_itl, &c.engine_itl),
        ] {
            assert_eq!(cdf.count, s.count);
            assert_eq!(cdf.at(0.5), s.p50);
            assert_eq!(cdf.at(0.99), s.p99);
            assert_eq!(cdf.at(1.0), s.max);
            assert!(cdf.points.windows(2).all(|w| w[0].0 <= w[1].0));
        }
        assert_eq!(r.replicas.len(), 8);
        let routed: u64 = r.replicas.iter().map(|x| x.routed).sum();
        assert_eq!(routed, r.report.pools[0].routed);
        // The series' running counts end where the outcomes do.
        let last = r.report.series.last().unwrap();
        assert!(last.completed <= r.report.outcomes.completed);
        assert!(r.throughput().iter().any(|p| p.1 > 0.0));
        assert_eq!(r.series_csv().lines().count(), r.report.series.len() + 1);
        assert_eq!(r.figures_csv().lines().count(), r.headline.len() + 1);
        let json: serde_json::Value =
            serde_json::from_str(&r.to_json("preset=fleet-seed")).unwrap();
        assert_eq!(json["query"], "preset=fleet-seed");
        assert_eq!(
            json["headline"][0]["value"].as_f64().unwrap(),
            c.server_ttft.p99
        );
    }

    #[test]
    fn compare_says_which_way_each_figure_moved() {
        let run = |q: &str| {
            let mut r = LabRun::new(short(q)).unwrap();
            while r.advance(10_000) > 0 {}
            r.result()
        };
        let a = run("preset=fleet-seed");
        let b = run("preset=fleet-seed&replicas=4");
        let d = compare(&a, &b);
        assert_eq!(d.len(), a.headline.len());
        let ttft = d.iter().find(|d| d.id == "server_ttft_p99").unwrap();
        assert!(ttft.b > ttft.a, "fewer replicas, slower first tokens");
        assert_eq!(ttft.b_better, Some(false));
        assert!(ttft.shown().starts_with('+'), "{}", ttft.shown());
        let same = compare(&a, &a);
        assert!(same.iter().all(|d| d.diff == 0.0 && d.b_better.is_none()));
        assert_eq!(same[0].shown(), "same");
    }
}
