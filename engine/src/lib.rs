//! The serving engine of the trainer: everything a run needs, and nothing about teaching.
//!
//! Layers, lowest first (a module imports only from the layers below it):
//!
//! 1. [`error`], [`format`], [`text`], [`files`]: the one error type for bad input, number
//!    formatting, template filling, the course's content files built in;
//! 2. [`catalog`] (models and GPUs), [`cost`] (**the one cost model**), [`workload`] and
//!    [`stats`] (seeded arrivals and lengths, exact weighted percentiles);
//! 3. [`replica`]: a vLLM V1-style engine on one replica, its scheduler, paged KV cache and
//!    the serve metrics of its records;
//! 4. [`fleet`]: the request path around the replicas (gateway, quotas, router, autoscaler,
//!    overflow, SSE relay, the three clocks) as a discrete-event simulation;
//! 5. [`engine`]: the two named engines a run can use (the brief's arithmetic, the validated
//!    one);
//! 6. [`scenario`]: scenario files for both simulators (TOML or JSON), the shipped ones, and
//!    their reports, which the `trainer-sim` command line prints.
//!
//! Nothing here knows about the DOM, WASM or a browser (a test checks the dependency tree), and
//! `course/tests/layers.rs` holds the layers.

pub mod catalog;
pub mod cost;
mod due;
pub mod engine;
pub mod error;
pub mod files;
pub mod fleet;
pub mod format;
pub mod replica;
pub mod scenario;
pub mod stats;
pub mod text;
pub mod workload;

pub use engine::Engine;
pub use error::ConfigError;
