//! Entry points called from the browser through `window.wasmBindings`, not by any page: the
//! timed run of the WASM build (`./dev bench`: the same simulations the native criterion
//! benchmarks time, so speed in the browser is measured, not guessed) and the determinism
//! test (a scenario run in WASM must give the native command's report byte for byte).

use trainer_engine::fleet::{FleetConfig, FleetSim};
use trainer_engine::replica::{ReplicaSim, ReplicaSimConfig};
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

/// Runs a scenario file's text exactly as the `trainer-sim` command does and returns the same
/// compact JSON report. The browser tests compare the two byte for byte: the simulation must
/// be deterministic across native code and WASM.
#[wasm_bindgen]
pub fn run_scenario(
    path: &str,
    text: &str,
    arm: Option<String>,
    horizon_s: Option<f64>,
) -> Result<String, String> {
    let opts = trainer_engine::scenario::RunOptions {
        arm,
        horizon_s,
        compact: true,
    };
    trainer_engine::scenario::run_to_json(path, text, &opts)
}

/// Panics on purpose, for the browser test that checks the learner then sees a notice rather
/// than a page that silently stops answering.
#[wasm_bindgen]
pub fn panic_for_test() {
    panic!("panic_for_test: a deliberate panic from the browser tests");
}

/// Makes the mock interview's clock run `factor` times faster, so a browser test sees a
/// whole mock time out without sleeping through it.
#[wasm_bindgen]
pub fn mock_clock_speed(factor: f64) {
    crate::components::set_clock_speed(factor);
}

/// Moves the app's "today" by `days`, so a browser test can see what the schedule brings back
/// on a later day. Applies to what is recorded and shown from the next page drawn.
#[wasm_bindgen]
pub fn progress_day_offset(days: i32) {
    crate::progress::set_day_offset(days as i64);
}

/// Runs a fleet scenario's arm (the first by default, cut at `horizon_s`) in the simulators'
/// worker, as the pages do, and resolves with its report as compact JSON: the browser tests
/// compare it byte for byte with `run_scenario` in the page and with the native command.
#[wasm_bindgen]
pub fn run_scenario_in_worker(
    path: &str,
    text: &str,
    arm: Option<String>,
    horizon_s: Option<f64>,
) -> js_sys::Promise {
    use trainer_course::jobs::{Job, Outcome, Reply};
    use trainer_engine::scenario::Scenario;
    let cfg = match Scenario::from_file_text(path, text) {
        Ok(Scenario::Fleet(f)) => f
            .arms
            .into_iter()
            .find(|(n, _)| arm.as_ref().is_none_or(|a| a == n))
            .map(|(_, c)| c)
            .ok_or_else(|| "no such arm".to_string()),
        Ok(Scenario::Replica(_)) => Err("a fleet scenario only".to_string()),
        Err(e) => Err(e.to_string()),
    };
    js_sys::Promise::new(&mut move |resolve, reject| {
        let mut cfg = match cfg.clone() {
            Ok(c) => c,
            Err(e) => {
                let _ = reject.call1(&JsValue::NULL, &JsValue::from_str(&e));
                return;
            }
        };
        if let Some(h) = horizon_s {
            cfg.truncate(h);
        }
        let job = Job::Fleets {
            configs: vec![cfg],
            series: true,
        };
        crate::sim_client::submit(job, move |reply| {
            let out = match reply {
                Reply::Done(Outcome::Reports(r)) => r
                    .first()
                    .and_then(|r| serde_json::to_string(r).ok())
                    .ok_or_else(|| "no report".to_string()),
                Reply::Failed(m) => Err(m),
                _ => return,
            };
            let _ = match out {
                Ok(json) => resolve.call1(&JsValue::NULL, &JsValue::from_str(&json)),
                Err(e) => reject.call1(&JsValue::NULL, &JsValue::from_str(&e)),
            };
        });
    })
}

/// Lets new simulation jobs use at most `n` workers (the moment benchmark times a batch on
/// one worker and on all of them).
#[wasm_bindgen]
pub fn set_worker_limit(n: u32) {
    crate::sim_client::set_worker_limit(n as usize);
}
