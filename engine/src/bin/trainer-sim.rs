//! `trainer-sim <scenario.toml|scenario.json> [--arm NAME] [--horizon SECONDS] [--compact]`:
//! runs a scenario file and prints its report as JSON on standard output.
//!
//! A replica scenario prints the replica's run report; a fleet scenario prints the report of
//! its first arm, or of the arm named by `--arm`. `--horizon` stops the traffic early (the
//! shipped fleet scenarios run for an hour). Bad input (a missing file, bad syntax, a bad
//! field) prints one line saying what is wrong on standard error and exits with status 2.

use std::io::{Read, Write};
use std::process::ExitCode;
use trainer_engine::scenario::{one_line, run_to_json, RunOptions, MAX_SCENARIO_BYTES};

/// Command-line options.
struct Options {
    path: String,
    run: RunOptions,
}

const USAGE: &str =
    "usage: trainer-sim <scenario.toml|scenario.json> [--arm NAME] [--horizon SECONDS] [--compact]";

fn main() -> ExitCode {
    let opts = match parse_args(std::env::args().skip(1)) {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("error: {} ({USAGE})", one_line(&msg));
            return ExitCode::from(2);
        }
    };
    let text = match read_bounded(&opts.path) {
        Ok(t) => t,
        Err(msg) => {
            eprintln!("error: {}: {}", one_line(&opts.path), one_line(&msg));
            return ExitCode::from(2);
        }
    };
    match run_to_json(&opts.path, &text, &opts.run) {
        Ok(json) => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (say, `| head`) is not an error worth reporting.
            let _ = out
                .write_all(json.as_bytes())
                .and_then(|_| out.write_all(b"\n"));
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("error: {}: {}", one_line(&opts.path), one_line(&msg));
            ExitCode::from(2)
        }
    }
}

/// Reads at most [`MAX_SCENARIO_BYTES`] of the file, so that `/dev/zero` or a huge file is
/// an error, not an allocation that never ends.
fn read_bounded(path: &str) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_SCENARIO_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() > MAX_SCENARIO_BYTES {
        return Err(format!(
            "larger than {MAX_SCENARIO_BYTES} bytes: not a scenario file"
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (byte {} is not valid UTF-8): not a scenario file",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Parses the arguments; None means help was asked for.
fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut path = None;
    let mut run = RunOptions::default();
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--compact" => run.compact = true,
            "--arm" => run.arm = Some(args.next().ok_or("--arm needs a name")?),
            "--horizon" => {
                let v = args.next().ok_or("--horizon needs a number of seconds")?;
                let h = v
                    .parse::<f64>()
                    .map_err(|_| format!("--horizon takes seconds, got {v:?}"))?;
                run.horizon_s = Some(h);
            }
            s if s.starts_with('-') && s.len() > 1 => return Err(format!("unknown option {s}")),
            _ if path.is_some() => return Err("give one scenario file".into()),
            _ => path = Some(a),
        }
    }
    let path = path.ok_or("no scenario file given")?;
    Ok(Some(Options { path, run }))
}
