//! The trainer's teaching text as data.
//!
//! Authors write Markdown in `content/` (the lesson is `content/lesson.md`), with a few
//! directives for what only this app can show: a live figure from a sizing step, an input's
//! current value, and widgets (an estimate box, the request-path diagram, a probe's live run).
//! [`parse`] (feature `parse`) turns a file into a [`doc::Doc`]; the app's build script runs
//! it and embeds the result as JSON, so the WASM carries the document, not a Markdown parser.
//! Native tests in `trainer-course` resolve every directive and link against the real sizing
//! steps, scenarios and [`route::Route`]s.
//!
//! **Invariant:** no dependency on a browser or on `trainer-course`: the app's build script
//! compiles this crate for the host in seconds.

pub mod buildup;
pub mod doc;
#[cfg(feature = "parse")]
pub mod parse;
pub mod route;
pub mod words;
