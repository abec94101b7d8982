//! `trainer-sim <scenario.toml|scenario.json> [--arm NAME] [--compact]`: runs a scenario file
//! and prints its report as JSON on standard output.
//!
//! A replica scenario prints the replica's run report; a fleet scenario prints the report of
//! its first arm, or of the arm named by `--arm`. Bad input (a missing file, bad syntax, a bad
//! field) prints one line saying what is wrong on standard error and exits with status 2.

use std::io::Write;
use std::process::ExitCode;
use trainer_core::fleet::FleetSim;
use trainer_core::scenario::Scenario;
use trainer_core::ConfigError;

/// Command-line options.
struct Options {
    path: String,
    arm: Option<String>,
    compact: bool,
}

const USAGE: &str = "usage: trainer-sim <scenario.toml|scenario.json> [--arm NAME] [--compact]";

fn main() -> ExitCode {
    let opts = match parse_args(std::env::args().skip(1)) {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("error: {msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&opts) {
        Ok(json) => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (say, `| head`) is not an error worth reporting.
            let _ = out
                .write_all(json.as_bytes())
                .and_then(|_| out.write_all(b"\n"));
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("error: {}: {msg}", opts.path);
            ExitCode::from(2)
        }
    }
}

/// Parses the arguments; None means help was asked for.
fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut path = None;
    let mut arm = None;
    let mut compact = false;
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--compact" => compact = true,
            "--arm" => arm = Some(args.next().ok_or("--arm needs a name")?),
            s if s.starts_with('-') && s.len() > 1 => return Err(format!("unknown option {s}")),
            _ if path.is_some() => return Err("give one scenario file".into()),
            _ => path = Some(a),
        }
    }
    let path = path.ok_or("no scenario file given")?;
    Ok(Some(Options { path, arm, compact }))
}

/// Reads, runs and serialises; the error is a sentence for the user.
fn run(opts: &Options) -> Result<String, String> {
    let text = std::fs::read_to_string(&opts.path).map_err(|e| format!("cannot read: {e}"))?;
    let scenario = Scenario::from_file_text(&opts.path, &text).map_err(describe)?;
    let to_json = |v: &dyn erased::Json| v.to_json(opts.compact);
    match scenario {
        Scenario::Replica(r) => {
            if opts.arm.is_some() {
                return Err("--arm applies to fleet scenarios only".into());
            }
            let report = r.run().map_err(describe)?;
            to_json(&report)
        }
        Scenario::Fleet(f) => {
            let (name, cfg) = match &opts.arm {
                Some(name) => f.arms.iter().find(|(n, _)| n == name).ok_or_else(|| {
                    let names: Vec<&str> = f.arms.iter().map(|(n, _)| n.as_str()).collect();
                    format!("no arm called {name:?} (arms: {})", names.join(", "))
                })?,
                None => f.arms.first().ok_or("the scenario has no arms")?,
            };
            let mut sim = FleetSim::new(cfg.clone()).map_err(|e| describe(e.within(name)))?;
            sim.run();
            to_json(&sim.report())
        }
    }
}

fn describe(e: ConfigError) -> String {
    if e.field.is_empty() {
        e.message
    } else {
        e.to_string()
    }
}

/// Serialising either report through one closure.
mod erased {
    /// Anything that can be printed as JSON.
    pub trait Json {
        fn to_json(&self, compact: bool) -> Result<String, String>;
    }

    impl<T: serde::Serialize> Json for T {
        fn to_json(&self, compact: bool) -> Result<String, String> {
            let r = if compact {
                serde_json::to_string(self)
            } else {
                serde_json::to_string_pretty(self)
            };
            r.map_err(|e| format!("cannot write the report as JSON: {e}"))
        }
    }
}
