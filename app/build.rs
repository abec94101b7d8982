//! Parses the Markdown in `content/` at build time, so the WASM carries the documents as data
//! (JSON the app reads once) and no Markdown parser. A content file that does not parse stops
//! the build with every problem and its line; `trainer-course`'s `content` test checks that each
//! directive and link resolves.

use std::path::Path;

/// The content files the app embeds, by name (`content/<name>.md`).
const DOCS: [&str; 1] = ["lesson"];

fn main() {
    // The linker keeps its relocations in the page's module: `wasm-split-cli` reads them to cut
    // it into the frame and a piece per page (tools/split.mjs, after Trunk's build), and
    // wasm-bindgen drops them from what ships. Only this crate's link: the worker's module is
    // not split.
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg=--emit-relocs");
    }
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
    // The words the pages fill (every key present, none unknown), each as a Rust expression
    // the app includes: a page that parsed them from JSON carried a deserialiser per struct,
    // inlined field by field (the calculator's alone was most of a 90 KB piece of the module).
    use trainer_content::{buildup::Script, words};
    to_rust::<words::LessonWords>("lesson-words.toml", "lesson-words.rs", &out);
    to_rust::<words::HomeWords>("home.toml", "home-words.rs", &out);
    to_rust::<words::SizeWords>("size-words.toml", "size-words.rs", &out);
    to_rust::<words::MomentsWords>("moments-page.toml", "moments-words.rs", &out);
    to_rust::<words::BannerWords>("banner.toml", "banner-words.rs", &out);
    to_rust::<words::EngineWords>("engines.toml", "engine-words.rs", &out);
    to_rust::<words::SiteWords>("site.toml", "site-words.rs", &out);
    // The build-ups' scripts (checked against the simulator natively), as JSON read once.
    for id in trainer_content::buildup::IDS {
        to_json::<Script>(
            &format!("buildups/{id}.toml"),
            &format!("buildup-{id}.json"),
            &out,
        );
    }
}

/// Reads `content/<src>` as a `T`: a file that does not parse stops the build with the reason.
fn read<T: serde::de::DeserializeOwned>(src: &str) -> T {
    let path = Path::new("../content").join(src);
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Reads `content/<src>` as a `T` and writes it as JSON to `<out>/<dst>`.
fn to_json<T: serde::de::DeserializeOwned + serde::Serialize>(src: &str, dst: &str, out: &str) {
    let json = serde_json::to_string(&read::<T>(src)).expect("the words serialise");
    std::fs::write(Path::new(out).join(dst), json).expect("OUT_DIR is writable");
}

/// Reads `content/<src>` as a `T` and writes it to `<out>/<dst>` as the Rust expression that
/// builds it, for `include!`: `T` is one of `trainer_content::words`' structs, whose fields are
/// strings or lists of structs of strings (named in `NESTED`).
fn to_rust<T: serde::de::DeserializeOwned + serde::Serialize>(src: &str, dst: &str, out: &str) {
    let value: T = read(src);
    let ty = std::any::type_name::<T>();
    let json = serde_json::to_value(&value).expect("the words serialise");
    std::fs::write(Path::new(out).join(dst), rust_struct(&json, ty, src))
        .expect("OUT_DIR is writable");
}

/// The lists of structs among the words' fields: (field, the type of its items).
const NESTED: [(&str, &str); 1] = [("parts", "trainer_content::words::HomePart")];

/// The structs among the words' fields: (field, its type).
const INNER: [(&str, &str); 1] = [("roofline", "trainer_content::words::RooflineWords")];

/// `ty { field: value, .. }` for a JSON object of strings and lists of such objects.
fn rust_struct(value: &serde_json::Value, ty: &str, src: &str) -> String {
    let serde_json::Value::Object(fields) = value else {
        panic!("{src}: {ty} is not a struct");
    };
    let fields: Vec<String> = fields
        .iter()
        .map(|(name, v)| {
            let v = match v {
                // A string's Debug form is a Rust string literal.
                serde_json::Value::String(s) => format!("String::from({s:?})"),
                serde_json::Value::Array(items) => {
                    let item = NESTED
                        .iter()
                        .find(|(field, _)| field == name)
                        .map(|&(_, t)| t)
                        .unwrap_or_else(|| panic!("{src}: {name} is a list of an unknown type"));
                    let items: Vec<String> =
                        items.iter().map(|i| rust_struct(i, item, src)).collect();
                    format!("vec![{}]", items.join(", "))
                }
                serde_json::Value::Object(_) => {
                    let inner = INNER
                        .iter()
                        .find(|(field, _)| field == name)
                        .map(|&(_, t)| t)
                        .unwrap_or_else(|| panic!("{src}: {name} is a struct of an unknown type"));
                    rust_struct(v, inner, src)
                }
                other => panic!("{src}: {name} is neither a string nor a list: {other}"),
            };
            format!("{name}: {v}")
        })
        .collect();
    format!("{ty} {{ {} }}", fields.join(", "))
}
