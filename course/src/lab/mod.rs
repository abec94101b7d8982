//! The lab: every knob of the fleet simulator, the shipped scenarios as presets, the whole
//! set-up in a query string, and a run that advances in slices and reports headline figures,
//! curves and series a page can plot and compare.
//!
//! The page holds none of this logic: it keeps a [`Setup`] in a signal, calls
//! [`Setup::set`] when a field changes and [`Setup::query`] to write the URL, drives a
//! [`LabRun`] a slice per animation frame, and draws what [`LabResult`] holds. A replica
//! scenario runs as a fleet of one replica (the gateway, quota, router and relay around it at
//! their defaults), so one simulator and one set of plots serve every preset.

pub mod knobs;
mod run;
mod setup;

/// The speculation sweep the lab runs (the calculator's speculation check runs the same).
pub use crate::sizing::sweep::{self, SweepText};
pub use knobs::{Kind, Knob, Section};
pub use run::{compare, Delta, Figure, LabResult, LabRun, Unit};
pub use setup::{needs_reading, remember_read, Setup, Source, READING};

use serde::Deserialize;
use trainer_engine::error::ConfigError;
use trainer_engine::fleet::{FleetConfig, PoolConfig, TrafficSource};
use trainer_engine::scenario::fleet::{FleetScenario, BUILTIN};
use trainer_engine::scenario::{ReplicaScenario, Scenario, REPLICA_BUILTIN};

/// The lab's words (no figures): `content/lab/lab.toml`.
pub const TEXT: &str = trainer_engine::files::LAB_LAB;

/// [`TEXT`], parsed.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabText {
    pub title: String,
    pub intro: String,
    /// What a replica preset becomes in the lab.
    pub replica_note: String,
    pub compare: String,
    pub share: String,
    /// One help text per section of the panel, by [`Section::id`].
    pub section: Vec<Entry>,
    /// One caption per plot, by plot id.
    pub plot: Vec<Entry>,
    /// Words added to a shipped preset's description, by preset id (see [`preset`]).
    #[serde(default)]
    pub preset_note: Vec<Entry>,
    /// The speculation sweep's words ([`sweep`]).
    pub sweep: SweepText,
}

/// An id and its words.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub id: String,
    pub text: String,
}

/// The plots the lab draws, by id (each has a caption in [`TEXT`] and a table beside it).
pub const PLOTS: [&str; 10] = [
    "ttft",
    "itl",
    "engine",
    "kv",
    "replicas",
    "throughput",
    "outcomes",
    "fleet",
    "ttft_split",
    "caches",
];

impl LabText {
    /// The words of the section or plot `id` ("" when there are none).
    pub fn of<'a>(list: &'a [Entry], id: &str) -> &'a str {
        list.iter()
            .find(|e| e.id == id)
            .map_or("", |e| e.text.as_str())
    }
}

/// Parses the lab's words.
pub fn text() -> Result<LabText, ConfigError> {
    trainer_engine::files::read(TEXT).map_err(|e| ConfigError::new("", format!("lab.toml: {e}")))
}

/// One shipped scenario as the lab offers it.
#[derive(Clone, Debug, PartialEq)]
pub struct Preset {
    /// The file name without `.toml` (`fleet-seed`).
    pub id: String,
    pub title: String,
    pub description: String,
    /// Whether it is a replica scenario (run as a fleet of one replica).
    pub replica: bool,
    /// Its arms with their fleets (one, `base`, when it has none).
    pub arms: Vec<(String, FleetConfig)>,
}

/// The preset the lab opens with.
pub const DEFAULT_PRESET: &str = "fleet-seed";

/// Every shipped scenario, fleets first, each parsed from its embedded file.
pub fn presets() -> Result<Vec<Preset>, ConfigError> {
    let mut out = Vec::new();
    for (file, text) in BUILTIN.iter().chain(REPLICA_BUILTIN.iter()) {
        let id = file.trim_end_matches(".toml").to_string();
        out.push(builtin(id, text)?);
    }
    Ok(out)
}

/// The shipped scenario `id` from its file's `text`, with the lab's note on it (the
/// calculator's figures filled in).
fn builtin(id: String, text: &str) -> Result<Preset, ConfigError> {
    let s = Scenario::builtin_text(text).map_err(|e| e.within(&id))?;
    let words = self::text()?;
    let note = LabText::of(&words.preset_note, &id);
    let mut p = preset_of(id, s);
    if !note.is_empty() {
        let file: toml::Value =
            trainer_engine::files::read(text).map_err(|e| ConfigError::new("", e))?;
        let note = crate::text::fill(note, |inside| crate::sizing::figure(inside, &file, None))
            .map_err(|e| ConfigError::new("preset_note", e.join("; ")).within(&p.id))?;
        p.description = format!("{} {note}", p.description);
    }
    Ok(p)
}

/// A shipped scenario as a list of them names it.
#[derive(Clone, Debug, PartialEq)]
pub struct PresetName {
    pub id: String,
    pub title: String,
    /// Whether it is a replica scenario (run as a fleet of one replica).
    pub replica: bool,
}

/// Every shipped scenario's name, in [`presets`]'s order, building only those whose title
/// holds a figure to fill in (the lab's list of presets reads these, not [`presets`]).
pub fn preset_names() -> Result<Vec<PresetName>, ConfigError> {
    BUILTIN
        .iter()
        .chain(REPLICA_BUILTIN.iter())
        .map(|(file, text)| {
            let id = file.trim_end_matches(".toml").to_string();
            let (fleet, title) = Scenario::builtin_head(text).map_err(|e| e.within(&id))?;
            if title.is_empty() || title.contains('{') {
                let p = builtin(id, text)?;
                return Ok(PresetName {
                    id: p.id,
                    title: p.title,
                    replica: p.replica,
                });
            }
            Ok(PresetName {
                id,
                title,
                replica: !fleet,
            })
        })
        .collect()
}

/// The shipped scenario `id`, parsing only its own file.
pub fn preset(id: &str) -> Result<Preset, ConfigError> {
    let (_, text) = BUILTIN
        .iter()
        .chain(REPLICA_BUILTIN.iter())
        .find(|(file, _)| file.trim_end_matches(".toml") == id)
        .ok_or_else(|| ConfigError::new("preset", format!("there is no preset called {id:?}")))?;
    builtin(id.to_string(), text)
}

/// The preset made of a parsed scenario.
pub fn preset_of(id: String, s: Scenario) -> Preset {
    match s {
        Scenario::Fleet(FleetScenario {
            title,
            description,
            arms,
            ..
        }) => Preset {
            id,
            title,
            description,
            replica: false,
            arms,
        },
        Scenario::Replica(r) => Preset {
            id,
            title: r.title.clone(),
            description: r.description.clone(),
            replica: true,
            arms: vec![("base".into(), fleet_of_replica(&r))],
        },
    }
}

/// A replica scenario as a fleet of one replica: the scenario's replica and workload, with
/// the fleet's defaults around them (gateway, quota, router, relay; no autoscaler).
pub fn fleet_of_replica(r: &ReplicaScenario) -> FleetConfig {
    let mut cfg = FleetConfig::seed();
    let w = r.config.workload.clone();
    cfg.seed = w.seed;
    cfg.traffic = vec![TrafficSource {
        start_s: 0.0,
        workload: w,
    }];
    let mut pool = PoolConfig::seed(1);
    pool.replica = r.config.replica.clone();
    pool.replica.trace_capacity = 0;
    pool.replica.record_token_times = false;
    pool.min_replicas = 1;
    pool.max_replicas = 1;
    cfg.pools = vec![pool];
    cfg.sample_interval_s = r.config.sample_interval_s.clamp(0.01, 86_400.0);
    cfg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_every_arm_is_a_valid_fleet() {
        let p = presets().unwrap();
        assert_eq!(p.len(), BUILTIN.len() + REPLICA_BUILTIN.len());
        assert_eq!(p[0].id, DEFAULT_PRESET);
        for one in &p {
            assert_eq!(&preset(&one.id).unwrap(), one);
        }
        assert_eq!(preset("nope").unwrap_err().field, "preset");
        // The names a list shows, read without building the presets, are theirs.
        let names: Vec<PresetName> = p
            .iter()
            .map(|x| PresetName {
                id: x.id.clone(),
                title: x.title.clone(),
                replica: x.replica,
            })
            .collect();
        assert_eq!(preset_names().unwrap(), names);
        for preset in &p {
            assert!(!preset.title.is_empty(), "{}", preset.id);
            for (arm, cfg) in &preset.arms {
                cfg.validate()
                    .unwrap_or_else(|e| panic!("{} / {arm}: {e}", preset.id));
            }
        }
        assert_eq!(p.iter().filter(|p| p.replica).count(), 4);
    }

    #[test]
    fn the_words_name_every_section_and_plot() {
        let t = text().unwrap();
        assert!(!t.intro.is_empty() && !t.replica_note.is_empty());
        for s in Section::ALL {
            assert!(!LabText::of(&t.section, s.id()).is_empty(), "{}", s.id());
        }
        for p in PLOTS {
            assert!(!LabText::of(&t.plot, p).is_empty(), "plot {p}");
        }
        assert_eq!(t.section.len(), Section::ALL.len(), "no stray section");
        assert_eq!(t.plot.len(), PLOTS.len(), "no stray plot");
    }

    #[test]
    fn a_preset_note_names_a_preset_and_fills_with_the_calculators_figures() {
        let t = text().unwrap();
        assert!(!t.preset_note.is_empty());
        for n in &t.preset_note {
            let p = preset(&n.id).unwrap_or_else(|e| panic!("note on {}: {e}", n.id));
            assert!(
                p.description.len() > n.text.len(),
                "{}: the note follows the file's words",
                n.id
            );
            assert!(!p.description.contains('{'), "{}: {}", n.id, p.description);
        }
        let seed = preset("replica-seed").unwrap();
        let step = crate::sizing::sizing_figure("fig", "fleet/decode_step").unwrap();
        assert!(seed.description.contains(&step), "{}", seed.description);
    }
}
