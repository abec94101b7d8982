//! The pure-Rust core of the serving trainer.
//!
//! Nothing in this crate knows about the DOM, WASM or a browser: it is plain Rust that the
//! `app` crate drives, that the `trainer-sim` binary drives, and that the tests and
//! benchmarks drive natively. One cost model ([`cost`]) serves every figure the product shows.

pub mod buildup;
pub mod catalog;
pub mod cost;
mod due;
pub mod engine;
pub mod error;
pub mod fill;
pub mod fleet;
pub mod format;
pub mod lab;
pub mod metrics;
pub mod mock;
pub mod moments;
pub mod probes;
pub mod replica;
pub mod scenario;
pub mod sizing;
pub mod stats;
pub mod study;
pub mod validation;
pub mod workload;

pub use error::ConfigError;
