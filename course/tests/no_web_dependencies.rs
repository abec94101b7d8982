//! The architecture invariant that the course, and the engine under it, never depend on anything
//! that assumes a browser: the course's normal dependency tree, on every target (the engine's
//! whole tree included), holds none of these crates.

use std::process::Command;

const FORBIDDEN: [&str; 4] = ["web-sys", "js-sys", "wasm-bindgen", "leptos"];

/// `name` is `family` or one of its crates (`wasm-bindgen-macro`, `leptos_dom`).
fn is_family(name: &str, family: &str) -> bool {
    name.strip_prefix(family)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '_']))
}

#[test]
fn crate_families_match_by_prefix() {
    assert!(is_family("leptos_dom", "leptos") && is_family("wasm-bindgen-macro", "wasm-bindgen"));
    assert!(is_family("js-sys", "js-sys") && !is_family("js-sysx", "js-sys"));
}

#[test]
fn the_engine_and_the_course_depend_on_nothing_that_assumes_a_browser() {
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "-p",
            "trainer-course",
            "-e",
            "normal",
            "--prefix",
            "none",
            // Dependencies behind `cfg(target_arch = "wasm32")` count too.
            "--target",
            "all",
            "--offline",
        ])
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).expect("UTF-8");
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        crates.contains(&"trainer-course")
            && crates.contains(&"trainer-engine")
            && crates.contains(&"serde"),
        "unexpected cargo tree output:\n{tree}"
    );
    let found: Vec<&str> = crates
        .iter()
        .copied()
        .filter(|c| FORBIDDEN.iter().any(|f| is_family(c, f)))
        .collect();
    assert!(
        found.is_empty(),
        "the course or the engine depends on {found:?}:\n{tree}"
    );
}
