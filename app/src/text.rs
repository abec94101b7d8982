//! The app's one text toolkit: template filling and number formatting are the course's
//! (`trainer_course::text`, which re-exports the engine's `text` and `format`). Pages take
//! them from here and write no scanner or unit formatter of their own; what is here only
//! adapts the course's to the shapes pages hold (named values, an optional figure); a narration
//! is split into elements by the engine's one brace scanner, [`pieces`].

use trainer_course::text::fill_or_dash;
pub use trainer_course::text::{format, pieces, Piece};

/// Fills each `{name}` of `template` from `values`. A name without a value stays as written,
/// `{name}`, so a later fill can still take it and a mistake shows instead of vanishing.
pub fn fill(template: &str, values: &[(&str, String)]) -> String {
    fill_or_dash(template, |name| {
        Ok(values
            .iter()
            .find(|(k, _)| *k == name)
            .map_or_else(|| format!("{{{name}}}"), |(_, v)| v.clone()))
    })
}

/// A duration in seconds to three significant figures, or an em dash when there is none.
pub fn duration_or_dash(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_string(), |v| format::duration(v, 3))
}
