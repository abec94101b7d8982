//! Entry points for the timed run of the WASM build (`./dev bench`): the same simulations the
//! native criterion benchmarks time, called from the browser through `window.wasmBindings`.
//! They are not used by the pages; they exist so speed in the browser is measured, not guessed.

use trainer_core::fleet::{FleetConfig, FleetSim};
use trainer_core::replica::{ReplicaSim, ReplicaSimConfig};
use wasm_bindgen::prelude::*;

/// Simulates the seed replica (6.25 req/s, 1,000 in / 250 out) for one hour; returns a short
/// JSON summary so the caller can check the work was really done.
#[wasm_bindgen]
pub fn bench_replica_hour() -> String {
    match ReplicaSim::new(ReplicaSimConfig::seed()) {
        Ok(mut sim) => {
            let r = sim.run();
            let steps = sim.replica().metrics().steps;
            format!(r#"{{"requests":{},"steps":{}}}"#, r.finished, steps)
        }
        Err(e) => format!(r#"{{"error":"{e}"}}"#),
    }
}

/// Simulates the seed fleet (50 req/s over 8 replicas) for one hour; returns a JSON summary.
#[wasm_bindgen]
pub fn bench_fleet_hour() -> String {
    match FleetSim::new(FleetConfig::seed()) {
        Ok(mut sim) => {
            sim.run();
            let r = sim.report();
            let steps: u64 = r.pools.iter().map(|p| p.steps).sum();
            format!(
                r#"{{"requests":{},"steps":{},"events":{}}}"#,
                r.outcomes.arrived, steps, r.events
            )
        }
        Err(e) => format!(r#"{{"error":"{e}"}}"#),
    }
}
