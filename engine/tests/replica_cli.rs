//! The `trainer-sim` command line: a report on success, one clear line and status 2 on bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the binary with these arguments from the crate directory.
fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer-sim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

/// Runs the binary, requires success, and parses what it printed as JSON.
fn run_json(args: &[&str]) -> serde_json::Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

/// Writes `text` to a fresh file in the target's temporary directory and returns its path.
fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(name);
    std::fs::write(&path, text).expect("temporary directory is writable");
    path
}

#[test]
fn a_replica_scenario_prints_its_report_as_json() {
    let v = run_json(&[
        "../content/scenarios/replica-follow-one-chat.toml",
        "--compact",
    ]);
    assert_eq!(v["verdict"], "completed");
    assert_eq!(v["finished"], 4);
    assert_eq!(v["preemptions"], 1);
    assert_eq!(v["requests"].as_array().map(|r| r.len()), Some(4));
}

#[test]
fn a_runaway_scenario_reports_overloaded() {
    let v = run_json(&["../content/scenarios/replica-runaway.toml"]);
    assert_eq!(v["verdict"], "overloaded");
    assert_eq!(v["reason"], "queue_limit");
}

#[test]
fn bad_input_exits_with_status_2_and_names_the_problem() {
    let bad_field = temp_file(
        "bad-field.json",
        r#"{"kind": "replica", "replica": {"scheduler": {"max_num_seqs": 0}}}"#,
    );
    let bad_syntax = temp_file("bad-syntax.toml", "kind = ");
    let bad_kind = temp_file("bad-kind.toml", "kind = \"cluster\"");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![], "no scenario file given"),
        (vec!["/no/such/file.toml"], "cannot read"),
        (
            vec![bad_field.to_str().unwrap()],
            "replica.scheduler.max_num_seqs",
        ),
        (vec![bad_syntax.to_str().unwrap()], "not valid TOML"),
        (vec![bad_kind.to_str().unwrap()], "kind"),
        (vec!["a.toml", "--bogus"], "unknown option"),
        (
            vec!["a.toml", "--horizon", "soon"],
            "--horizon takes seconds",
        ),
        (
            vec!["../content/scenarios/fleet-seed.toml", "--horizon", "-1"],
            "horizon",
        ),
        (
            vec!["../content/scenarios/fleet-seed.toml", "--arm", "nope"],
            "no arm called",
        ),
    ];
    for (args, needle) in cases {
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_horizon_cuts_a_fleet_scenario_short() {
    let v = run_json(&[
        "../content/scenarios/fleet-seed.toml",
        "--horizon",
        "4",
        "--compact",
    ]);
    // 50 req/s for 4 s: about 200 arrivals, nowhere near the hour's 180,000.
    let arrived = v["outcomes"]["arrived"].as_u64().expect("a count");
    assert!((120..=300).contains(&arrived), "{arrived} arrivals");
}
