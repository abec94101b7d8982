//! Parses the Markdown in `content/` at build time, so the WASM carries the documents as data
//! (JSON the app reads once) and no Markdown parser. A content file that does not parse stops
//! the build with every problem and its line; `trainer-core`'s `content` test checks that each
//! directive and link resolves.

use std::path::Path;

/// The content files the app embeds, by name (`content/<name>.md`).
const DOCS: [&str; 1] = ["lesson"];

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    for name in DOCS {
        let src = Path::new("../content").join(format!("{name}.md"));
        println!("cargo:rerun-if-changed={}", src.display());
        let text = std::fs::read_to_string(&src)
            .unwrap_or_else(|e| panic!("reading {}: {e}", src.display()));
        let doc = trainer_content::parse::parse(&text).unwrap_or_else(|errors| {
            panic!(
                "{} does not parse:\n  {}",
                src.display(),
                errors.join("\n  ")
            )
        });
        let json = serde_json::to_string(&doc).expect("a document serialises");
        std::fs::write(Path::new(&out).join(format!("{name}.json")), json)
            .expect("OUT_DIR is writable");
    }
    // The widgets' sentences: every key present, none unknown.
    let src = Path::new("../content/lesson-words.toml");
    println!("cargo:rerun-if-changed={}", src.display());
    let text = std::fs::read_to_string(src).expect("content/lesson-words.toml is readable");
    let words: trainer_content::words::LessonWords =
        toml::from_str(&text).unwrap_or_else(|e| panic!("content/lesson-words.toml: {e}"));
    let json = serde_json::to_string(&words).expect("the words serialise");
    std::fs::write(Path::new(&out).join("lesson-words.json"), json).expect("OUT_DIR is writable");
    // The start page's words.
    let src = Path::new("../content/home.toml");
    println!("cargo:rerun-if-changed={}", src.display());
    let text = std::fs::read_to_string(src).expect("content/home.toml is readable");
    let home: trainer_content::words::HomeWords =
        toml::from_str(&text).unwrap_or_else(|e| panic!("content/home.toml: {e}"));
    let json = serde_json::to_string(&home).expect("the words serialise");
    std::fs::write(Path::new(&out).join("home-words.json"), json).expect("OUT_DIR is writable");
    // The calculator's simulator check.
    let src = Path::new("../content/size-words.toml");
    println!("cargo:rerun-if-changed={}", src.display());
    let text = std::fs::read_to_string(src).expect("content/size-words.toml is readable");
    let size: trainer_content::words::SizeWords =
        toml::from_str(&text).unwrap_or_else(|e| panic!("content/size-words.toml: {e}"));
    let json = serde_json::to_string(&size).expect("the words serialise");
    std::fs::write(Path::new(&out).join("size-words.json"), json).expect("OUT_DIR is writable");
    // The interview moments pages' own sentences.
    let src = Path::new("../content/moments-page.toml");
    println!("cargo:rerun-if-changed={}", src.display());
    let text = std::fs::read_to_string(src).expect("content/moments-page.toml is readable");
    let words: trainer_content::words::MomentsWords =
        toml::from_str(&text).unwrap_or_else(|e| panic!("content/moments-page.toml: {e}"));
    let json = serde_json::to_string(&words).expect("the words serialise");
    std::fs::write(Path::new(&out).join("moments-words.json"), json).expect("OUT_DIR is writable");
    // The build-ups' scripts: every key known, checked against the simulator natively.
    for id in trainer_content::buildup::IDS {
        let src = Path::new("../content/buildups").join(format!("{id}.toml"));
        println!("cargo:rerun-if-changed={}", src.display());
        let text = std::fs::read_to_string(&src)
            .unwrap_or_else(|e| panic!("reading {}: {e}", src.display()));
        let script: trainer_content::buildup::Script =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        let json = serde_json::to_string(&script).expect("a script serialises");
        std::fs::write(Path::new(&out).join(format!("buildup-{id}.json")), json)
            .expect("OUT_DIR is writable");
    }
}
