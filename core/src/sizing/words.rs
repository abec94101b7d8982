//! The questions' words, kept in `content/sizing.toml` so an author edits them without
//! touching Rust; read once.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The file, as shipped.
pub const SIZING: &str = include_str!("../../../content/sizing.toml");

/// A question's heading and prompt.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuestionWords {
    pub title: String,
    pub prompt: String,
}

/// The words of the question `id`, if the file has them (a test checks it has every one).
pub fn question(id: &str) -> Option<&'static QuestionWords> {
    static WORDS: OnceLock<BTreeMap<String, QuestionWords>> = OnceLock::new();
    WORDS
        .get_or_init(|| toml::from_str(SIZING).unwrap_or_default())
        .get(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sizing::Question;

    #[test]
    fn every_question_has_a_title_and_a_prompt() {
        let parsed: BTreeMap<String, QuestionWords> =
            toml::from_str(SIZING).expect("content/sizing.toml parses");
        assert_eq!(parsed.len(), Question::ALL.len());
        for q in Question::ALL {
            let w = question(q.id()).unwrap_or_else(|| panic!("no words for {}", q.id()));
            assert!(
                !w.title.trim().is_empty() && w.prompt.len() > 80,
                "{}",
                q.id()
            );
            assert_eq!(q.title(), w.title);
        }
    }
}
