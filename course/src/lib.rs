//! The course the trainer teaches, built on [`trainer_engine`]: what a learner sizes, reads,
//! steps through, answers and is graded on. Every figure comes from the engine's cost model or
//! one of its runs; nothing here computes a step's time or simulates a request itself.
//!
//! - [`sizing`]: the back-of-the-envelope calculator (questions, steps, verdicts, drills);
//! - [`moments`], [`probes`]: interview moments and the lesson's probes, graded from runs;
//! - [`buildup`]: the build-ups' frames, each the state of a run;
//! - [`lab`]: the lab's set-up (presets, knobs, its URL) and runner;
//! - [`mock`], [`study`]: the mock interview and self-paced study with spaced practice;
//! - [`recall`]: the recall prompts set through the lesson, calculators and build-ups, each an
//!   item of the study schedule;
//! - [`validation`]: the engine against published measurements;
//! - [`jobs`]: what a page asks of the simulators (the app's worker protocol) and the runner
//!   that does it a slice at a time;
//! - [`text`]: the engine's template filling and formatting, plus the calculator's figures;
//! - [`precision`]: what each number format (FP8 weights only, FP8 weights and activations,
//!   an FP8 KV cache) changes, from the cost model, and its quality caveat with a source.
//!
//! - [`advisor`]: the search for the cheapest configuration that holds latency targets.
//!
//! Layers, lowest first (`tests/layers.rs` holds them): `text`, `precision`; `sizing`; `recall`; `study`,
//! `validation`, `probes`, `buildup`, `lab`; `advisor`; `moments`; `mock`; `jobs`.
//!
//! Like the engine, nothing here knows about the DOM, WASM or a browser.

pub mod advisor;
pub mod buildup;
pub mod dashboard;
pub mod jobs;
pub mod lab;
pub mod mock;
pub mod moments;
pub mod precision;
pub mod probes;
pub mod recall;
pub mod sizing;
pub mod study;
pub mod text;
pub mod validation;
