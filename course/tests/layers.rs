//! The layers of the engine and of the course (the lists in `engine/src/lib.rs` and
//! `course/src/lib.rs`): a module imports only from layers below its own, so there is no import
//! circle and none running up a layer. A module's unit tests (what follows its
//! `#[cfg(test)]`) may use anything. (That the engine imports nothing of the course, and
//! neither imports the app, Cargo itself holds: neither depends on the crate above it.)

use std::collections::BTreeMap;
use std::path::Path;

/// Every top-level module of the engine, by layer, lowest first.
const ENGINE: [&[&str]; 9] = [
    &["error", "format", "due", "files"],
    &["text"],
    &["catalog"],
    &["cost", "workload"],
    &["stats"],
    &["replica"],
    &["fleet"],
    &["engine"],
    &["scenario"],
];

/// Every top-level module of the course, by layer, lowest first.
const COURSE: [&[&str]; 8] = [
    &["text", "precision"],
    &["sizing"],
    &["recall"],
    &[
        "study",
        "validation",
        "probes",
        "dashboard",
        "buildup",
        "lab",
    ],
    &["advisor"],
    &["moments"],
    &["mock"],
    &["jobs"],
];

fn layer(layers: &[&[&str]], module: &str) -> Option<usize> {
    layers.iter().position(|l| l.contains(&module))
}

/// The modules `crate::X` names in `code`, outside comments and the unit tests.
fn imports(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in code.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `crate::ConfigError` is the root's re-export of `error::ConfigError`.
            let name = if name == "ConfigError" {
                "error".into()
            } else {
                name
            };
            out.push(name);
        }
    }
    out
}

/// Every `.rs` file below `dir`, with the top-level module it belongs to.
fn files(dir: &Path, module: Option<&str>, out: &mut BTreeMap<String, (String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if name != "bin" {
                files(&path, Some(module.unwrap_or(&name)), out);
            }
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if module.is_none() && stem == "lib" {
                continue;
            }
            let m = module.unwrap_or(stem).to_string();
            let code = std::fs::read_to_string(&path).unwrap();
            out.insert(path.display().to_string(), (m, code));
        }
    }
}

/// What runs up a layer (or names a module in none) in the crate whose sources are at `src`.
fn wrong_imports(src: &str, layers: &[&[&str]]) -> Vec<String> {
    let mut all = BTreeMap::new();
    files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(src),
        None,
        &mut all,
    );
    assert!(all.len() > 10, "read {} files in {src}", all.len());
    let mut wrong = Vec::new();
    for (path, (module, code)) in &all {
        let Some(own) = layer(layers, module) else {
            wrong.push(format!("{module} ({path}) is in no layer"));
            continue;
        };
        for to in imports(code) {
            match layer(layers, &to) {
                None => wrong.push(format!("{path}: crate::{to} is in no layer")),
                Some(theirs) if to != *module && theirs >= own => {
                    wrong.push(format!("{path} ({module}) imports {to}, not below it"))
                }
                Some(_) => {}
            }
        }
    }
    wrong
}

#[test]
fn every_module_of_the_engine_imports_only_from_layers_below() {
    let wrong = wrong_imports("../engine/src", &ENGINE);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_module_of_the_course_imports_only_from_layers_below() {
    let wrong = wrong_imports("src", &COURSE);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_check_sees_an_import_running_up() {
    assert_eq!(
        imports("use crate::fleet::FleetConfig; // crate::scenario"),
        ["fleet"]
    );
    assert_eq!(
        imports("x\n#[cfg(test)]\nuse crate::scenario;"),
        Vec::<String>::new()
    );
    let at = |m| layer(&ENGINE, m);
    assert!(at("replica") < at("fleet") && at("fleet") < at("scenario"));
    assert_eq!(layer(&COURSE, "sizing"), Some(1));
}
