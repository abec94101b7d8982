//! The lesson's dashboard (`content/dashboard.toml`, `{{dashboard}}`): one shipped fleet
//! scenario run for a short horizon and read the way a Prometheus dashboard over vLLM reads
//! its engines, each panel under the metric's own name with what it says and when to page.
//! Histograms show a percentile of the run, counters the run's total, gauges (per ready
//! replica) their mean and peak.

use serde::Deserialize;
use trainer_engine::error::ConfigError;
use trainer_engine::fleet::{FleetConfig, FleetReport};
use trainer_engine::scenario::fleet::FleetScenario;

/// The dashboard file, as shipped.
pub const DASHBOARD: &str = trainer_engine::files::DASHBOARD;

/// The dashboard: a run and its panels.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dashboard {
    /// A shipped fleet scenario's name, and the arm to run (its base when absent).
    pub scenario: String,
    #[serde(default)]
    pub arm: Option<String>,
    /// Simulated seconds of traffic.
    pub horizon_s: f64,
    #[serde(rename = "panel")]
    pub panels: Vec<Panel>,
}

/// One panel: a metric under its exported name.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Panel {
    /// The name the engine (or the gateway) exports it under, e.g.
    /// `vllm:time_to_first_token_seconds`.
    pub name: String,
    pub kind: Kind,
    /// What it measures, in a sentence.
    pub meaning: String,
    /// Where the simulator's figure is: a dotted path into the fleet report's JSON (a
    /// histogram's percentile, a counter's total; a gauge's names its mean and peak, as
    /// `gauges.running`).
    pub path: String,
    /// How to show the figure ([`crate::text::show`]): seconds unless the file says otherwise.
    #[serde(default = "seconds")]
    pub unit: String,
    /// What the figure shown is (`p99 over the run`, `total`, ...).
    pub shown: String,
    /// When it should page someone, or what it is for.
    pub alert: String,
}

/// A Prometheus metric's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Histogram,
    Counter,
    Gauge,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Histogram => "histogram",
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

fn seconds() -> String {
    "s".into()
}

/// A panel's figure in this run: one value, or a gauge's mean and peak.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reading {
    Value(f64),
    Gauge { mean: f64, peak: f64 },
}

/// The shipped dashboard.
pub fn dashboard() -> Result<Dashboard, ConfigError> {
    parse(DASHBOARD)
}

/// Reads a dashboard file: units, gauge fields and the scenario's arm are checked.
pub fn parse(text: &str) -> Result<Dashboard, ConfigError> {
    let d: Dashboard =
        trainer_engine::files::read(text).map_err(|e| ConfigError::new("dashboard", e))?;
    for p in &d.panels {
        let at = |f: &str| format!("dashboard.{}.{f}", p.name);
        if !crate::text::UNITS.contains(&p.unit.as_str()) {
            return Err(ConfigError::new(
                at("unit"),
                format!(
                    "{:?} is not a unit ({})",
                    p.unit,
                    crate::text::UNITS.join(", ")
                ),
            ));
        }
        if p.kind == Kind::Gauge && !p.path.starts_with("gauges.") {
            return Err(ConfigError::new(
                at("path"),
                "a gauge reads one of the report's gauges (gauges.running, ...)",
            ));
        }
    }
    if !(d.horizon_s.is_finite() && d.horizon_s > 0.0 && d.horizon_s <= 3600.0) {
        return Err(ConfigError::new(
            "dashboard.horizon_s",
            "between a second and an hour",
        ));
    }
    d.fleet()?;
    Ok(d)
}

impl Dashboard {
    /// The fleet to run, cut to the horizon.
    pub fn fleet(&self) -> Result<FleetConfig, ConfigError> {
        let s = FleetScenario::builtin(&self.scenario)?;
        let mut f = match &self.arm {
            Some(a) => s.arm(a).cloned().ok_or_else(|| {
                ConfigError::new(
                    "dashboard.arm",
                    format!("scenario {} has no arm {a:?}", self.scenario),
                )
            })?,
            None => s
                .arms
                .first()
                .map(|(_, f)| f.clone())
                .ok_or_else(|| ConfigError::new("dashboard.scenario", "has no fleet"))?,
        };
        f.truncate(self.horizon_s);
        Ok(f)
    }

    /// Each panel's figure in `report` (None where the run has none).
    pub fn read(&self, report: &FleetReport) -> Vec<Option<Reading>> {
        let json = serde_json::to_value(report).unwrap_or_default();
        let at = |path: &str| crate::text::lookup(&json, path);
        self.panels
            .iter()
            .map(|p| match p.kind {
                Kind::Gauge => Some(Reading::Gauge {
                    mean: at(&format!("{}.mean", p.path))?,
                    peak: at(&format!("{}.peak", p.path))?,
                }),
                _ => at(&p.path).map(Reading::Value),
            })
            .collect()
    }
}

impl Panel {
    /// The figure as shown: a dash when the run has none.
    pub fn show(&self, r: Option<Reading>) -> String {
        match r {
            None => "—".into(),
            Some(Reading::Value(v)) => crate::text::show(&self.unit, v),
            Some(Reading::Gauge { mean, peak }) => format!(
                "{} · {}",
                crate::text::show(&self.unit, mean),
                crate::text::show(&self.unit, peak)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trainer_engine::fleet::FleetSim;

    #[test]
    fn the_dashboard_reads_every_panel_from_one_run() {
        let d = dashboard().expect("content/dashboard.toml reads");
        assert!(d.panels.len() >= 8);
        let mut sim = FleetSim::new(d.fleet().unwrap()).unwrap();
        sim.run();
        let r = sim.report();
        let got = d.read(&r);
        for (p, v) in d.panels.iter().zip(&got) {
            assert!(v.is_some(), "{} ({}) has no figure", p.name, p.path);
            assert!(p.name.starts_with("vllm:") || p.name.starts_with("gateway_"));
        }
        // A gauge's peak is at least its mean; KV use is a fraction. The page's runs come
        // back without their series: the gauges do not need it.
        let mut lean = r.clone();
        lean.series.clear();
        assert_eq!(d.read(&lean), got);
        for v in got.iter().flatten() {
            if let Reading::Gauge { mean, peak } = *v {
                assert!(peak >= mean && mean >= 0.0);
            }
        }
        let kv = d
            .panels
            .iter()
            .position(|p| p.path == "gauges.kv_usage")
            .expect("a KV gauge");
        assert!(matches!(got[kv], Some(Reading::Gauge { peak, .. }) if peak <= 1.0));
    }

    #[test]
    fn a_bad_dashboard_is_refused_by_name() {
        let good = DASHBOARD;
        let bad_unit = good.replacen("unit = \"count\"", "unit = \"furlongs\"", 1);
        assert!(parse(&bad_unit).unwrap_err().to_string().contains("unit"));
        let bad_gauge = good.replacen("path = \"gauges.running\"", "path = \"sideways\"", 1);
        assert!(parse(&bad_gauge)
            .unwrap_err()
            .to_string()
            .contains("gauge reads"));
        let bad_scenario = good.replacen("scenario = \"fleet-seed\"", "scenario = \"nope\"", 1);
        assert!(parse(&bad_scenario).is_err());
    }
}
