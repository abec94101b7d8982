//! The app's one text toolkit: template filling and number formatting are the course's
//! (`trainer_course::text`, which re-exports the engine's `text` and `format`). Pages take
//! them from here and write no scanner or unit formatter of their own; what is here only
//! adapts the course's to the shapes pages hold (named values, an optional figure, a narration
//! split into elements).

use trainer_course::text::fill_or_dash;
pub use trainer_course::text::format;

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

/// What a template is made of, in order: `Text` between placeholders and each `Name`.
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    Text(String),
    Name(String),
}

/// Splits `template` into its text and its placeholders (the course's scanner finds them).
pub fn pieces(template: &str) -> Vec<Piece> {
    // Each placeholder is filled with a mark no template holds, then the text split at it.
    const MARK: char = '\u{1}';
    let mut names = Vec::new();
    let marked = fill_or_dash(template, |name| {
        names.push(name.to_string());
        Ok(MARK.to_string())
    });
    let mut out = Vec::new();
    let mut names = names.into_iter();
    for (i, text) in marked.split(MARK).enumerate() {
        if i > 0 {
            if let Some(n) = names.next() {
                out.push(Piece::Name(n));
            }
        }
        if !text.is_empty() {
            out.push(Piece::Text(text.to_string()));
        }
    }
    out
}
