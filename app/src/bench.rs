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

/// A scenario file as this build reads it, then `then` with its (path, text): a TOML file is
/// read by the simulators' worker (the page has no TOML parser) and comes back as JSON.
fn read_file(
    path: &str,
    text: &str,
    then: impl FnOnce(Result<(String, String), String>) + 'static,
) {
    use trainer_course::jobs::{Job, Outcome, Reply};
    if path.to_ascii_lowercase().ends_with(".json") {
        return then(Ok((path.to_string(), text.to_string())));
    }
    let json_path = format!("{path}.json");
    let mut then = Some(then);
    crate::sim_client::submit(Job::ReadScenario(text.to_string()), move |reply| {
        let read = match reply {
            Reply::Done(Outcome::ScenarioJson(r)) => r.map(|json| (json_path.clone(), json)),
            Reply::Failed(m) => Err(m),
            _ => return,
        };
        if let Some(then) = then.take() {
            then(read);
        }
    });
}

/// Settles a promise with a result.
fn settle(resolve: &js_sys::Function, reject: &js_sys::Function, r: Result<String, String>) {
    let _ = match r {
        Ok(s) => resolve.call1(&JsValue::NULL, &JsValue::from_str(&s)),
        Err(e) => reject.call1(&JsValue::NULL, &JsValue::from_str(&e)),
    };
}

/// Runs a scenario file's text in the page exactly as the `trainer-sim` command does and
/// resolves with the same compact JSON report. The browser tests compare the two byte for
/// byte: the simulation must be deterministic across native code and WASM. (A TOML file is
/// read by the worker first, as the lab reads one.)
#[wasm_bindgen]
pub fn run_scenario(
    path: &str,
    text: &str,
    arm: Option<String>,
    horizon_s: Option<f64>,
) -> js_sys::Promise {
    let (path, text) = (path.to_string(), text.to_string());
    js_sys::Promise::new(&mut move |resolve, reject| {
        let opts = trainer_engine::scenario::RunOptions {
            arm: arm.clone(),
            horizon_s,
            compact: true,
        };
        read_file(&path, &text, move |read| {
            let out = read.and_then(|(path, text)| {
                trainer_engine::scenario::run_to_json(&path, &text, &opts)
            });
            settle(&resolve, &reject, out);
        });
    })
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
    let (path, text) = (path.to_string(), text.to_string());
    js_sys::Promise::new(&mut move |resolve, reject| {
        let arm = arm.clone();
        read_file(&path, &text, move |read| {
            let cfg = read.and_then(
                |(path, text)| match Scenario::from_file_text(&path, &text) {
                    Ok(Scenario::Fleet(f)) => f
                        .arms
                        .into_iter()
                        .find(|(n, _)| arm.as_ref().is_none_or(|a| a == n))
                        .map(|(_, c)| c)
                        .ok_or_else(|| "no such arm".to_string()),
                    Ok(Scenario::Replica(_)) => Err("a fleet scenario only".to_string()),
                    Err(e) => Err(e.to_string()),
                },
            );
            let mut cfg = match cfg {
                Ok(c) => c,
                Err(e) => return settle(&resolve, &reject, Err(e)),
            };
            if let Some(h) = horizon_s {
                cfg.truncate(h);
            }
            let job = Job::Fleets {
                configs: vec![cfg],
                series: true,
            };
            let (resolve, reject) = (resolve.clone(), reject.clone());
            crate::sim_client::submit(job, move |reply| {
                let out = match reply {
                    Reply::Done(Outcome::Reports(r)) => r
                        .first()
                        .and_then(|r| serde_json::to_string(r).ok())
                        .ok_or_else(|| "no report".to_string()),
                    Reply::Failed(m) => Err(m),
                    _ => return,
                };
                settle(&resolve, &reject, out);
            });
        });
    })
}

/// Lets new simulation jobs use at most `n` workers (the moment benchmark times a batch on
/// one worker and on all of them).
#[wasm_bindgen]
pub fn set_worker_limit(n: u32) {
    crate::sim_client::set_worker_limit(n as usize);
}
