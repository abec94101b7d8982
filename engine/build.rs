//! Embeds the course's content files (`content/**/*.toml`) in the program, one constant per file
//! in `trainer_engine::files`.
//!
//! With the `parse` feature (the default: the command line, the native tests, the simulators'
//! worker) each constant is the file's TOML text, read at run time by the TOML parser. Without
//! it (the page's build) this script parses every file now and embeds it as JSON, so the page
//! carries no TOML parser: a file that does not parse stops the build, naming the file and why.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let content = manifest.join("../content");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let parse = std::env::var_os("CARGO_FEATURE_PARSE").is_some();
    println!("cargo:rerun-if-changed={}", content.display());
    let mut files = Vec::new();
    collect(&content, &content, &mut files);
    files.sort();
    let mut code = String::new();
    let mut all = String::new();
    for rel in files {
        let src = content.join(&rel);
        let name = rel
            .trim_end_matches(".toml")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect::<String>();
        let path = if parse {
            src.canonicalize().expect("a content file exists")
        } else {
            let text = std::fs::read_to_string(&src)
                .unwrap_or_else(|e| panic!("reading {}: {e}", src.display()));
            let table: toml::Table = toml::from_str(&text)
                .unwrap_or_else(|e| panic!("content/{rel} does not parse: {e}"));
            let json = serde_json::to_string(&table)
                .unwrap_or_else(|e| panic!("content/{rel} has no JSON form: {e}"));
            let dst = out.join(rel.replace('/', "__") + ".json");
            std::fs::write(&dst, json).expect("OUT_DIR is writable");
            dst
        };
        let how = if parse { "its TOML text" } else { "as JSON" };
        writeln!(
            code,
            "/// `content/{rel}`, {how}.\npub const {name}: &str = include_str!({:?});",
            path.display().to_string()
        )
        .expect("writing to a string");
        writeln!(all, "    ({rel:?}, {name}),").expect("writing to a string");
    }
    writeln!(
        code,
        "/// Every content file: its path under `content/` and its constant.\npub const ALL: &[(&str, &str)] = &[\n{all}];"
    )
    .expect("writing to a string");
    std::fs::write(out.join("files.rs"), code).expect("OUT_DIR is writable");
}

/// Every `.toml` file under `dir`, as a path relative to `root` with `/` between parts.
fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "toml") {
            let rel = path.strip_prefix(root).expect("under the root");
            let parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
}
