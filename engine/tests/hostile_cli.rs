//! A hostile-input corpus for `trainer-sim`: empty, binary, huge and deeply nested files, and
//! every numeric field of a replica and a fleet scenario set to 0, -1, NaN and 1e300. Bad
//! input must end with exit status 2 and one line on standard error; never a crash, a hang or
//! an out-of-memory abort.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};
use trainer_engine::scenario::fleet::FleetFile;
use trainer_engine::scenario::ReplicaFile;

fn run(path: &PathBuf, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer-sim"))
        .arg(path)
        .args(extra)
        .output()
        .expect("the binary runs")
}

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, bytes).expect("temporary directory is writable");
    path
}

/// Asserts exit status 2 and exactly one short line on standard error.
fn assert_refused(case: &str, out: &Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{case}: {err}");
    assert_eq!(err.lines().count(), 1, "{case}: {err:?}");
    assert!(err.len() < 600, "{case}: {} bytes of message", err.len());
    assert!(out.stdout.is_empty(), "{case}");
}

#[test]
fn malformed_files_are_refused_in_one_line() {
    let nested_toml = format!("a = {}{}", "[".repeat(10_000), "]".repeat(10_000));
    let nested_json = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let dotted = format!("kind = \"replica\"\n{}b = 1\n", "a.".repeat(100_000));
    let huge_line = format!("kind = \"replica\"\nname = \"{}\"\n", "x".repeat(50 << 20));
    let mut binary = vec![0u8, 159, 146, 150, 255];
    binary.extend((0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty.toml", Vec::new()),
        ("blank.toml", b"\n\n# nothing\n".to_vec()),
        ("empty.json", b"{}".to_vec()),
        ("binary.toml", binary),
        ("nul.toml", vec![0u8; 4096]),
        ("nested.toml", nested_toml.into_bytes()),
        ("nested.json", nested_json.into_bytes()),
        ("dotted.toml", dotted.into_bytes()),
        ("huge.toml", huge_line.into_bytes()),
        ("unterminated.toml", b"kind = \"replica\nname = ".to_vec()),
        ("array.json", b"[1, 2, 3]".to_vec()),
    ];
    for (name, bytes) in cases {
        let out = run(&temp_file(name, &bytes), &[]);
        assert_refused(name, &out);
    }
    let out = run(&PathBuf::from("/dev/zero"), &[]);
    assert_refused("/dev/zero", &out);
    let out = run(&PathBuf::from("/no/such/file.toml"), &[]);
    assert_refused("missing", &out);
}

/// Every path to a number in `v`, as keys and array indices.
fn numeric_paths(v: &Value, path: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match v {
        Value::Number(_) => out.push(path.clone()),
        Value::Object(m) => {
            for (k, x) in m {
                path.push(Value::String(k.clone()));
                numeric_paths(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                path.push(Value::from(i));
                numeric_paths(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// `v` with the number at `path` replaced by the raw TOML text `raw` (kept as a string
/// marker and written unquoted by [`to_toml`]).
fn with_value(v: &Value, path: &[Value], raw: &str) -> Value {
    let mut v = v.clone();
    let mut at = &mut v;
    for p in path {
        at = match p {
            Value::String(k) => &mut at[k.as_str()],
            Value::Number(i) => &mut at[i.as_u64().unwrap() as usize],
            _ => unreachable!(),
        };
    }
    *at = Value::String(format!("\u{1}{raw}"));
    v
}

/// A JSON value as TOML: top-level keys as `key = value`, everything nested inline.
fn to_toml(v: &Value) -> String {
    fn inline(v: &Value) -> String {
        match v {
            Value::String(s) if s.starts_with('\u{1}') => s[1..].to_string(),
            Value::String(s) => Value::String(s.clone()).to_string(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Array(a) => format!("[{}]", a.iter().map(inline).collect::<Vec<_>>().join(", ")),
            Value::Object(m) => format!(
                "{{ {} }}",
                m.iter()
                    .filter(|(_, x)| !x.is_null())
                    .map(|(k, x)| format!("{} = {}", Value::String(k.clone()), inline(x)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Value::Null => unreachable!("nulls are left out"),
        }
    }
    let mut out = String::new();
    for (k, x) in v.as_object().unwrap() {
        if !x.is_null() {
            out.push_str(&format!("{} = {}\n", Value::String(k.clone()), inline(x)));
        }
    }
    out
}

/// Sets every numeric field of `base` in turn to each hostile value and runs the binary. A
/// value the field cannot take must be refused in one line; 0 may be valid for some fields,
/// and then the (short) run must succeed.
fn every_numeric_field(kind: &str, base: Value) {
    let mut paths = Vec::new();
    numeric_paths(&base, &mut Vec::new(), &mut paths);
    assert!(
        paths.len() > 20,
        "{kind}: only {} numeric fields",
        paths.len()
    );
    let mut refused = 0;
    for (i, path) in paths.iter().enumerate() {
        for (j, raw) in ["-1", "nan", "1e300", "0"].iter().enumerate() {
            let text = format!(
                "kind = \"{kind}\"\n{}",
                to_toml(&with_value(&base, path, raw))
            );
            let file = temp_file(&format!("{kind}-{i}-{j}.toml"), text.as_bytes());
            let out = run(&file, &["--horizon", "1", "--compact"]);
            let case = format!("{kind} {path:?} = {raw}");
            if *raw == "0" && out.status.success() {
                serde_json::from_slice::<Value>(&out.stdout).expect("a report");
            } else {
                assert_refused(&case, &out);
                refused += 1;
            }
        }
    }
    assert!(
        refused >= 3 * paths.len(),
        "{kind}: -1, NaN and 1e300 are always refused"
    );
}

#[test]
fn every_numeric_replica_field_at_hostile_values() {
    let mut base = serde_json::to_value(ReplicaFile::default()).unwrap();
    base.as_object_mut().unwrap().remove("kind");
    every_numeric_field("replica", base);
}

#[test]
fn every_numeric_fleet_field_at_hostile_values() {
    let base = serde_json::to_value(FleetFile::default()).unwrap();
    every_numeric_field("fleet", base);
}
