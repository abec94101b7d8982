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
    // The words the pages fill (every key present, none unknown), and the build-ups' scripts
    // (checked against the simulator natively), each as JSON the app reads once.
    use trainer_content::{buildup::Script, words};
    to_json::<words::LessonWords>("lesson-words.toml", "lesson-words.json", &out);
    to_json::<words::HomeWords>("home.toml", "home-words.json", &out);
    to_json::<words::SizeWords>("size-words.toml", "size-words.json", &out);
    to_json::<words::MomentsWords>("moments-page.toml", "moments-words.json", &out);
    to_json::<words::BannerWords>("banner.toml", "banner-words.json", &out);
    to_json::<words::EngineWords>("engines.toml", "engine-words.json", &out);
    to_json::<words::SiteWords>("site.toml", "site-words.json", &out);
    for id in trainer_content::buildup::IDS {
        to_json::<Script>(
            &format!("buildups/{id}.toml"),
            &format!("buildup-{id}.json"),
            &out,
        );
    }
}

/// Reads `content/<src>` as a `T` (a file that does not parse stops the build with the reason)
/// and writes it as JSON to `<out>/<dst>`.
fn to_json<T: serde::de::DeserializeOwned + serde::Serialize>(src: &str, dst: &str, out: &str) {
    let path = Path::new("../content").join(src);
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let value: T = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json = serde_json::to_string(&value).expect("the words serialise");
    std::fs::write(Path::new(out).join(dst), json).expect("OUT_DIR is writable");
}
