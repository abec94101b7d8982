//! The two named engines a run can use, so every page can say which one ran it.
//!
//! The *brief's* engine is the calculator's arithmetic made to run: the content brief's MFU
//! and MBU, no fixed cost per step, and a KV pool from the brief's share of the datasheet's
//! memory ([`Efficiency::REFERENCE`], [`MemoryConfig::REFERENCE`]). The *validated* engine is
//! the one `/simulator` replays against published vLLM measurements: the calibrated fixed
//! costs and vLLM's memory split ([`Efficiency::CALIBRATED`], [`MemoryConfig::VLLM`]). A run
//! whose replicas match neither (a lab knob, a scenario file's own values, pools that differ)
//! runs a custom engine, and a page says so rather than name one it did not use.

use crate::cost::{Efficiency, MemoryConfig};
use crate::fleet::FleetConfig;
use crate::replica::ReplicaConfig;
use serde::{Deserialize, Serialize};

/// A named engine: its efficiencies and its memory split.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// The content brief's assumptions, as the calculator computes.
    Brief,
    /// The engine calibrated against published vLLM measurements.
    Validated,
}

impl Engine {
    pub const ALL: [Engine; 2] = [Engine::Brief, Engine::Validated];

    /// Stable URL-safe identifier.
    pub fn id(self) -> &'static str {
        match self {
            Engine::Brief => "brief",
            Engine::Validated => "validated",
        }
    }

    /// Finds an engine by its [`Engine::id`].
    pub fn from_id(id: &str) -> Option<Engine> {
        Engine::ALL.into_iter().find(|e| e.id() == id)
    }

    /// The engine's efficiencies.
    pub fn efficiency(self) -> Efficiency {
        match self {
            Engine::Brief => Efficiency::REFERENCE,
            Engine::Validated => Efficiency::CALIBRATED,
        }
    }

    /// The engine's memory split.
    pub fn memory(self) -> MemoryConfig {
        match self {
            Engine::Brief => MemoryConfig::REFERENCE,
            Engine::Validated => MemoryConfig::VLLM,
        }
    }

    /// The named engine a replica runs, if its efficiencies and memory split are exactly one
    /// engine's (never a mix of the two).
    pub fn of_replica(r: &ReplicaConfig) -> Option<Engine> {
        Engine::ALL
            .into_iter()
            .find(|e| r.efficiency == e.efficiency() && r.memory == e.memory())
    }

    /// The named engine every pool of a fleet runs, if they all run the same one.
    pub fn of_fleet(f: &FleetConfig) -> Option<Engine> {
        let first = Engine::of_replica(&f.pools.first()?.replica)?;
        f.pools
            .iter()
            .all(|p| Engine::of_replica(&p.replica) == Some(first))
            .then_some(first)
    }

    /// Puts every replica of the fleet on this engine; nothing else changes.
    pub fn apply(self, f: &mut FleetConfig) {
        for p in &mut f.pools {
            p.replica.efficiency = self.efficiency();
            p.replica.memory = self.memory();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fleet_names_its_engine_only_when_every_pool_runs_it() {
        let mut f = FleetConfig::seed();
        Engine::Brief.apply(&mut f);
        assert_eq!(Engine::of_fleet(&f), Some(Engine::Brief));
        Engine::Validated.apply(&mut f);
        assert_eq!(Engine::of_fleet(&f), Some(Engine::Validated));
        // One field of the other engine makes it a custom one, not a mislabelled named one.
        f.pools[0].replica.memory = MemoryConfig::REFERENCE;
        assert_eq!(Engine::of_fleet(&f), None);
        Engine::Brief.apply(&mut f);
        f.pools[0].replica.efficiency.step_overhead_s = 1e-3;
        assert_eq!(Engine::of_fleet(&f), None);
        for e in Engine::ALL {
            assert_eq!(Engine::from_id(e.id()), Some(e));
        }
        assert_eq!(Engine::from_id("nonsense"), None);
    }
}

/// Reads the `engine` key of a scenario file's replica or pool table (`default` when absent)
/// and completes its `efficiency` and `memory` tables from that engine: a table the file
/// leaves out is the engine's whole, and a key it leaves out is the engine's value, so a file
/// that sets one efficiency never mixes in the other engine's. `at` names the table in errors.
pub(crate) fn complete_tables(
    table: &mut toml::Table,
    default: Engine,
    at: &str,
) -> Result<(), crate::error::ConfigError> {
    use crate::error::ConfigError;
    let engine = match table.get("engine") {
        None => default,
        Some(toml::Value::String(s)) => Engine::from_id(s).ok_or_else(|| {
            ConfigError::new(
                format!("{at}.engine"),
                format!("is \"brief\" or \"validated\", got {s:?}"),
            )
        })?,
        Some(_) => {
            return Err(ConfigError::new(
                format!("{at}.engine"),
                "is \"brief\" or \"validated\"",
            ))
        }
    };
    table.insert("engine".into(), toml::Value::String(engine.id().into()));
    let whole = |v: toml::Value| match v {
        toml::Value::Table(t) => t,
        _ => toml::Table::new(),
    };
    let eff = whole(toml::Value::try_from(engine.efficiency()).expect("efficiency serialises"));
    let mem = whole(toml::Value::try_from(engine.memory()).expect("memory serialises"));
    for (key, full) in [("efficiency", eff), ("memory", mem)] {
        match table.get_mut(key) {
            None => {
                table.insert(key.into(), toml::Value::Table(full));
            }
            Some(toml::Value::Table(t)) => {
                for (k, v) in full {
                    t.entry(k).or_insert(v);
                }
            }
            // Not a table: left for the parser to refuse with its own words.
            Some(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod file_tests {
    use super::*;
    use crate::scenario::{ReplicaScenario, Scenario};

    #[test]
    fn a_partial_efficiency_table_is_completed_from_the_files_engine() {
        // One efficiency set on the brief's engine: everything else is the brief's.
        let text =
            "kind = \"fleet\"\n[[pools]]\nengine = \"brief\"\n[pools.efficiency]\nmfu = 0.4\n";
        let Scenario::Fleet(f) = Scenario::from_toml(text).unwrap() else {
            panic!("a fleet")
        };
        let r = &f.arms[0].1.pools[0].replica;
        assert_eq!(r.efficiency.mfu, 0.4);
        assert_eq!(r.efficiency.step_overhead_s, 0.0);
        assert_eq!(
            r.efficiency.allreduce_latency_s,
            Efficiency::REFERENCE.allreduce_latency_s
        );
        assert_eq!(r.memory, MemoryConfig::REFERENCE);
        // The same on the validated engine takes the validated engine's fixed costs and memory.
        let text = text.replace("\"brief\"", "\"validated\"");
        let Scenario::Fleet(f) = Scenario::from_toml(&text).unwrap() else {
            panic!("a fleet")
        };
        let r = &f.arms[0].1.pools[0].replica;
        assert_eq!(r.efficiency.mfu, 0.4);
        assert_eq!(
            r.efficiency.step_overhead_s,
            Efficiency::CALIBRATED.step_overhead_s
        );
        assert_eq!(r.memory, MemoryConfig::VLLM);
        // A fleet pool without the key runs the validated engine, whole.
        let Scenario::Fleet(f) = Scenario::from_toml("kind = \"fleet\"\n[[pools]]\n").unwrap()
        else {
            panic!("a fleet")
        };
        assert_eq!(Engine::of_fleet(&f.arms[0].1), Some(Engine::Validated));
        // A bad engine is named on its field.
        let e =
            Scenario::from_toml("kind = \"fleet\"\n[[pools]]\nengine = \"fast\"\n").unwrap_err();
        assert!(e.field.ends_with("engine"), "{e:?}");
        assert!(e.message.contains("brief"), "{e:?}");
    }

    #[test]
    fn every_shipped_scenario_runs_one_named_engine() {
        let files = crate::scenario::REPLICA_BUILTIN
            .iter()
            .chain(crate::scenario::fleet::BUILTIN.iter());
        for (name, text) in files {
            match Scenario::from_toml(text).unwrap() {
                Scenario::Fleet(f) => {
                    for (arm, cfg) in &f.arms {
                        assert!(
                            Engine::of_fleet(cfg).is_some(),
                            "{name}, arm {arm}: a mix of the two engines"
                        );
                    }
                }
                Scenario::Replica(r) => {
                    assert!(
                        Engine::of_replica(&r.config.replica).is_some(),
                        "{name}: a mix of the two engines"
                    );
                }
            }
        }
        let _ = ReplicaScenario::builtin("replica-seed").unwrap();
    }
}
