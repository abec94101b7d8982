//! The questions' words, kept in `content/sizing.toml` so an author edits them without
//! touching Rust; read once.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The file, as shipped.
pub const SIZING: &str = trainer_engine::files::SIZING;

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
        .get_or_init(|| trainer_engine::files::read(SIZING).unwrap_or_default())
        .get(id)
}

/// The steps' sentences, as shipped.
pub const WHY: &str = trainer_engine::files::SIZING_WHY;

/// `content/sizing-why.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhyWords {
    /// By step id, for every question.
    pub steps: BTreeMap<String, String>,
    /// By question id, then step id: where a question's sentence differs.
    #[serde(default)]
    pub questions: BTreeMap<String, BTreeMap<String, String>>,
    /// Pieces of the sentences that name a figure, with `{name}` placeholders.
    pub parts: BTreeMap<String, String>,
}

fn why_words() -> &'static WhyWords {
    static WORDS: OnceLock<WhyWords> = OnceLock::new();
    WORDS.get_or_init(|| trainer_engine::files::read(WHY).unwrap_or_default())
}

/// Why step `step` of question `question` comes out as it does ("" when the file has no
/// sentence for it, which a test rules out).
pub fn why(question: &str, step: &str) -> &'static str {
    let w = why_words();
    w.questions
        .get(question)
        .and_then(|q| q.get(step))
        .or_else(|| w.steps.get(step))
        .map_or("", String::as_str)
}

/// The piece `name` as it stands, for a step's label (`""` when the file lacks it, which a
/// test rules out).
pub fn label(name: &str) -> &'static str {
    why_words().parts.get(name).map_or("", |s| s.trim())
}

/// The piece `name` with each `{key}` replaced by its value.
pub fn part(name: &str, values: &[(&str, String)]) -> String {
    let mut out = why_words().parts.get(name).cloned().unwrap_or_default();
    for (k, v) in values {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

/// The verdicts' and the lesson's conclusions, as shipped.
pub const VERDICT: &str = trainer_engine::files::VERDICT;

/// `content/verdict.toml`: by section (`limits`, `summary`, a question's readings, `say`),
/// then key, a sentence with `{name}` placeholders.
type VerdictWords = BTreeMap<String, BTreeMap<String, String>>;

fn verdict_words() -> &'static VerdictWords {
    static WORDS: OnceLock<VerdictWords> = OnceLock::new();
    WORDS.get_or_init(|| trainer_engine::files::read(VERDICT).unwrap_or_default())
}

/// The sentence `key` of section `section` of `content/verdict.toml` as it stands (`""` when
/// the file lacks it, which a test rules out).
pub fn verdict_word(section: &str, key: &str) -> &'static str {
    verdict_words()
        .get(section)
        .and_then(|s| s.get(key))
        .map_or("", |s| s.trim())
}

/// The sentence `key` of section `section` with each `{name}` replaced by its value.
pub fn conclude(section: &str, key: &str, values: &[(&str, String)]) -> String {
    let mut out = verdict_word(section, key).to_string();
    for (k, v) in values {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
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
            let filled = crate::text::fill(&w.prompt, |i| q.prompt_figure(i))
                .unwrap_or_else(|e| panic!("{}: {e:?}", q.id()));
            assert_eq!(q.prompt(), filled);
            assert!(!filled.contains('{') && !filled.contains('—'), "{filled}");
        }
    }

    #[test]
    fn every_step_of_every_question_has_its_sentence_and_every_sentence_is_used() {
        use crate::sizing::{derive, Drill, Inputs};
        let file: WhyWords = toml::from_str(WHY).expect("content/sizing-why.toml parses");
        let mut used = std::collections::BTreeSet::new();
        for q in Question::ALL {
            let mut runs = vec![derive(q, &Inputs::defaults(q)).expect("defaults derive")];
            runs.extend((0..60).map(|seed| Drill::new(q, seed).derivation));
            for d in runs {
                for s in &d.steps {
                    assert!(
                        s.why.len() > 20 && !s.why.contains('{'),
                        "{} / {}: {:?}",
                        q.id(),
                        s.id,
                        s.why
                    );
                    let own = file.questions.get(q.id()).and_then(|m| m.get(s.id));
                    used.insert(match own {
                        Some(_) => format!("{}/{}", q.id(), s.id),
                        None => s.id.to_string(),
                    });
                }
            }
        }
        for id in file.steps.keys() {
            assert!(
                used.contains(id),
                "step {id} has a sentence no question uses"
            );
        }
        for (q, m) in &file.questions {
            for id in m.keys() {
                assert!(
                    used.contains(&format!("{q}/{id}")),
                    "{q}/{id} is never used"
                );
            }
        }
        // Every part is picked by name somewhere in the derivations (and a part the code
        // names but the file lacks shows as an empty sentence, which the content test catches).
        let code = DERIVE_CODE.concat();
        assert!(file.parts.len() >= 12, "parts");
        for p in file.parts.keys() {
            assert!(
                code.contains(&format!("\"{p}\"")),
                "part {p} is never used by the calculator"
            );
        }
    }

    /// The code that picks sentences by name.
    const DERIVE_CODE: [&str; 10] = [
        include_str!("derive/mod.rs"),
        include_str!("derive/fleet.rs"),
        include_str!("derive/chats.rs"),
        include_str!("derive/gpu_hours.rs"),
        include_str!("derive/batch.rs"),
        include_str!("derive/speculation.rs"),
        include_str!("derive/halve_cost.rs"),
        include_str!("derive/roofline.rs"),
        include_str!("mod.rs"),
        include_str!("conclusions.rs"),
    ];

    #[test]
    fn every_conclusion_is_named_by_the_code_that_picks_it() {
        let file: VerdictWords = toml::from_str(VERDICT).expect("content/verdict.toml parses");
        let code = DERIVE_CODE.concat();
        assert!(file.len() >= 7, "sections");
        for (section, sentences) in &file {
            for (key, text) in sentences {
                assert!(!text.trim().is_empty(), "{section}.{key} is empty");
                assert!(
                    code.contains(&format!("\"{key}\"")),
                    "{section}.{key} is never picked"
                );
            }
        }
        // And the other way round: a section and key the code asks for exists.
        assert!(!verdict_word("summary", "binds_one").is_empty());
        assert!(verdict_word("summary", "no_such_key").is_empty());
    }
}
