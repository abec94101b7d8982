//! The course's text toolkit: the engine's template filling and number formatting
//! ([`trainer_engine::text`], [`trainer_engine::format`]) and a scenario file's placeholders
//! ([`trainer_engine::scenario::words`]), in one place. The placeholders only the course can
//! resolve, because they read the calculator (`{fig QUESTION/STEP}`, `{input QUESTION/NAME}`),
//! are the sizing module's ([`crate::sizing::figure`]).

pub use trainer_engine::format;
pub use trainer_engine::scenario::words::scenario_figure;
pub use trainer_engine::text::*;

/// The units a figure may be shown in ([`show`]).
pub const UNITS: [&str; 7] = [
    "s",
    "fraction",
    "dollars",
    "gpu_hours",
    "count",
    "rate",
    "tokens",
];

/// A moment's figure in its unit (the moments page, the mock's curveballs, the lesson's probes
/// and the filled reasons all show figures this way).
pub fn show(unit: &str, v: f64) -> String {
    use trainer_engine::format::{duration, fixed, int, money, percent, sig};
    match unit {
        "s" => duration(v, 3),
        "fraction" => percent(v),
        "dollars" => money(v),
        "gpu_hours" => format!("{} GPU-h", fixed(v, 2)),
        "count" => int(v),
        "rate" => format!("{} req/s", sig(v, 3)),
        "tokens" => format!("{} tokens", sig(v, 3)),
        _ => sig(v, 3),
    }
}

/// A number at a dotted path into a report's JSON (`pools.0.preemptions`: a number indexes an
/// array).
pub fn lookup(v: &serde_json::Value, path: &str) -> Option<f64> {
    path.split('.')
        .try_fold(v, |v, k| match k.parse::<usize>() {
            Ok(i) if v.is_array() => v.get(i),
            _ => v.get(k),
        })
        .and_then(|v| v.as_f64())
}
