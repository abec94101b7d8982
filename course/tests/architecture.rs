//! ARCHITECTURE.md names files and folders; each one it names must exist, so the map cannot
//! keep a file that moved or was removed. A name in backticks with a path (`engine/src/cost.rs`,
//! `content/lab/lab.toml`) must exist from the repository's root; a bare file name
//! (`kv.rs`) must be some file's name in the tree.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every file name below `dir`, skipping build output and dependencies.
fn names(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if !["target", "node_modules", ".git", "dist"].contains(&name.as_str()) {
                names(&path, out);
            }
        } else {
            out.push(name);
        }
    }
}

/// What the document puts in backticks that reads as a file or folder of this repository.
fn named_paths(doc: &str) -> Vec<String> {
    let tops = [
        "engine/", "course/", "content/", "app/", "tests/", "style/", "tools/", "docs/",
    ];
    let exts = [".rs", ".toml", ".md", ".mjs", ".css", ".html"];
    doc.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| !s.contains(' ') && !s.contains('<') && !s.contains('*'))
        .filter(|s| tops.iter().any(|t| s.starts_with(t)) || exts.iter().any(|e| s.ends_with(e)))
        .map(String::from)
        .collect()
}

/// Files the build writes, which a clean checkout does not have.
const GENERATED: [&str; 1] = ["404.html"];

#[test]
fn every_file_the_architecture_names_exists() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let mut all = Vec::new();
    names(&root(), &mut all);
    let paths = named_paths(&doc);
    assert!(paths.len() > 50, "read {} names", paths.len());
    let missing: Vec<&String> = paths
        .iter()
        .filter(|p| {
            if GENERATED.contains(&p.as_str()) {
                return false;
            }
            if p.contains('/') {
                // A path under a crate's src may be written from the crate (`replica/kv.rs`).
                let from_crates = [
                    "",
                    "engine/src/",
                    "course/src/",
                    "app/src/",
                    "content/",
                    "tests/",
                ];
                !from_crates
                    .iter()
                    .any(|c| root().join(format!("{c}{p}")).exists())
            } else {
                !all.iter().any(|n| n == *p)
            }
        })
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what is not there: {missing:?}"
    );
}

#[test]
fn the_check_reads_paths_in_backticks() {
    let p = named_paths("see `engine/src/cost.rs` and `kv.rs`, not `Step::new` or `a b.rs`");
    assert_eq!(p, ["engine/src/cost.rs", "kv.rs"]);
}
