//! The lesson's probes (`content/probes.toml`): a shipped fleet scenario run twice, the broken
//! design and the fixed one, on the same traffic for a short horizon, read through named
//! figures of the fleet report. The app runs them in slices; the `content` test runs them
//! natively and checks each probe reproduces what the lesson says it does.

use serde::Deserialize;
use trainer_engine::error::ConfigError;
use trainer_engine::fleet::{FleetConfig, FleetReport};
use trainer_engine::scenario::fleet::FleetScenario;

/// The probes file, as shipped.
pub const PROBES: &str = trainer_engine::files::PROBES;

/// One probe.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// Its id in `{{probe ID}}`.
    pub id: String,
    /// A shipped fleet scenario's name (`fleet-ttft-gap`).
    pub scenario: String,
    /// The arm with the failure, and the arm without it.
    pub broken: String,
    pub fixed: String,
    /// Simulated seconds of traffic per arm.
    pub horizon_s: f64,
    /// The id of the figure the probe is about.
    pub key: String,
    /// A prompt length whose prefill time the probe shows, if any.
    #[serde(default)]
    pub prefill_tokens: Option<u32>,
    #[serde(rename = "figure")]
    pub figures: Vec<ProbeFigure>,
}

/// A figure a probe shows from each arm's report.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeFigure {
    pub id: String,
    pub label: String,
    /// A dotted path into the report's JSON, e.g. `clocks.server_ttft.p99` (seconds).
    pub path: String,
    /// How to show it, as a moment's figures are shown ([`crate::text::show`]): seconds
    /// unless the file says otherwise.
    #[serde(default = "seconds")]
    pub unit: String,
}

fn seconds() -> String {
    "s".into()
}

impl ProbeFigure {
    /// `v` in the figure's unit, a dash when the run has none.
    pub fn show(&self, v: Option<f64>) -> String {
        v.map_or("—".to_string(), |v| crate::text::show(&self.unit, v))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    probe: Vec<Probe>,
}

/// Every shipped probe.
pub fn probes() -> Result<Vec<Probe>, ConfigError> {
    parse(PROBES)
}

/// Reads a probes file.
pub fn parse(text: &str) -> Result<Vec<Probe>, ConfigError> {
    let f: File = trainer_engine::files::read(text).map_err(|e| ConfigError::new("probes", e))?;
    for p in &f.probe {
        for fig in &p.figures {
            if !crate::text::UNITS.contains(&fig.unit.as_str()) {
                return Err(ConfigError::new(
                    format!("probe {}.{}.unit", p.id, fig.id),
                    format!(
                        "{:?} is not a unit ({})",
                        fig.unit,
                        crate::text::UNITS.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(f.probe)
}

/// The probe called `id`.
pub fn probe(id: &str) -> Result<Probe, ConfigError> {
    probes()?
        .into_iter()
        .find(|p| p.id == id)
        .ok_or_else(|| ConfigError::new("probe", format!("no probe called {id:?}")))
}

impl Probe {
    /// The two fleets to run, broken first, cut to the probe's horizon.
    pub fn fleets(&self) -> Result<[FleetConfig; 2], ConfigError> {
        let s = FleetScenario::builtin(&self.scenario)?;
        let arm = |name: &str| {
            let mut f = s.arm(name).cloned().ok_or_else(|| {
                ConfigError::new(
                    "arm",
                    format!("scenario {} has no arm {name:?}", self.scenario),
                )
            })?;
            f.truncate(self.horizon_s);
            Ok::<FleetConfig, ConfigError>(f)
        };
        Ok([arm(&self.broken)?, arm(&self.fixed)?])
    }

    /// Each figure's value in `report`, in order (None where the path names no number).
    pub fn read(&self, report: &FleetReport) -> Vec<Option<f64>> {
        let json = serde_json::to_value(report).unwrap_or_default();
        self.figures
            .iter()
            .map(|f| lookup(&json, &f.path))
            .collect()
    }

    /// The key figure's index in `figures`.
    pub fn key_index(&self) -> Option<usize> {
        self.figures.iter().position(|f| f.id == self.key)
    }
}

use crate::text::lookup;
