//! Scenario files (TOML or JSON) for the replica and fleet simulators (being built).
