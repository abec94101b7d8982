//! Recall prompts (`content/recall.toml`): short questions set where the material is taught
//! (a lesson section, a calculator, a build-up), answered with one tap and graded by the
//! learner. Each is an item of the study schedule on its own (`study::Item::Recall`), so the
//! home page brings back the ones the learner missed. An answer may carry the learner's own
//! figures: `{fig <question>/<step>}` is that step at the inputs last used in its calculator.

use crate::sizing::{derive, PageQuery, Question};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use trainer_engine::error::ConfigError;

/// One prompt.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prompt {
    /// Stable id, safe in URLs and in stored progress.
    pub id: String,
    /// Where it is set: `lesson#<section>`, `size/<question>` or `buildups/<id>`.
    pub place: String,
    /// The question, as the learner reads it.
    pub question: String,
    /// The answer, with `{fig q/step}` placeholders.
    pub answer: String,
}

/// The words of a prompt's card and of the home page's review of due prompts.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Words {
    pub label: String,
    pub show: String,
    pub grade: String,
    pub right: String,
    pub partly: String,
    pub missed: String,
    /// After a miss: the prompt is due again today.
    pub due_today: String,
    /// After an answer: the day it comes back (`{date}`).
    pub due_in: String,
    pub review_heading: String,
    pub review_intro: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    words: Words,
    prompt: Vec<Prompt>,
}

/// The cards' words.
pub fn words() -> &'static Words {
    static WORDS: OnceLock<Words> = OnceLock::new();
    WORDS.get_or_init(|| {
        trainer_engine::files::read::<File>(trainer_engine::files::RECALL)
            .map(|f| f.words)
            .unwrap_or_default()
    })
}

/// Where a prompt is set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// A section of the lesson, by its heading's id.
    Lesson(String),
    /// A calculator.
    Size(Question),
    /// A build-up, by id.
    BuildUp(String),
}

/// The build-ups a prompt may be set in (`content/buildups/<id>.toml`).
pub const BUILDUPS: [&str; 2] = ["replica", "fleet"];

impl Place {
    /// Reads a place; `None` for one that names no page of the kinds above.
    pub fn parse(text: &str) -> Option<Place> {
        if let Some(section) = text.strip_prefix("lesson#") {
            return (!section.is_empty()).then(|| Place::Lesson(section.to_string()));
        }
        if let Some(q) = text.strip_prefix("size/") {
            return Question::from_id(q).map(Place::Size);
        }
        let id = text.strip_prefix("buildups/")?;
        BUILDUPS
            .contains(&id)
            .then(|| Place::BuildUp(id.to_string()))
    }
}

/// Every prompt, in the file's order (an empty list if the file cannot be read). Read without
/// the checks of [`parse`], which derive every question the answers name: the home page reads
/// the prompts to list what is due and must not carry the calculator for it. The native tests
/// run [`parse`] on the shipped file.
pub fn prompts() -> &'static [Prompt] {
    static ALL: OnceLock<Vec<Prompt>> = OnceLock::new();
    ALL.get_or_init(|| {
        trainer_engine::files::read::<File>(trainer_engine::files::RECALL)
            .map(|f| f.prompt)
            .unwrap_or_default()
    })
}

/// The prompt `id`, if there is one.
pub fn prompt(id: &str) -> Option<&'static Prompt> {
    prompts().iter().find(|p| p.id == id)
}

/// The prompts set at `place` (as the file writes it), in order.
pub fn at(place: &str) -> Vec<&'static Prompt> {
    prompts().iter().filter(|p| p.place == place).collect()
}

/// Reads a prompts file: every id unique and safe in a key, every place a page, every
/// placeholder a step of a question.
pub fn parse(text: &str) -> Result<Vec<Prompt>, ConfigError> {
    let f: File = trainer_engine::files::read(text).map_err(|e| ConfigError::new("recall", e))?;
    let mut seen = std::collections::BTreeSet::new();
    for p in &f.prompt {
        let at = |field: &str| format!("recall.{}.{field}", p.id);
        if p.id.is_empty()
            || !p
                .id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(ConfigError::new(
                "recall.id",
                format!(
                    "{:?} is not an id (lowercase letters, digits and dashes)",
                    p.id
                ),
            ));
        }
        if !seen.insert(p.id.clone()) {
            return Err(ConfigError::new(at("id"), "is used twice"));
        }
        if Place::parse(&p.place).is_none() {
            return Err(ConfigError::new(
                at("place"),
                format!(
                    "{:?} is not lesson#<section>, size/<question> or buildups/<id>",
                    p.place
                ),
            ));
        }
        if p.question.trim().is_empty() || p.answer.trim().is_empty() {
            return Err(ConfigError::new(
                at("answer"),
                "a prompt needs a question and an answer",
            ));
        }
        for name in figures(&p.answer) {
            let (q, step) = name.split_once('/').unwrap_or((name.as_str(), ""));
            let Some(q) = Question::from_id(q) else {
                return Err(ConfigError::new(at("answer"), format!("no question {q:?}")));
            };
            let d = derive(q, &crate::sizing::Inputs::defaults(q))
                .map_err(|_| ConfigError::new(at("answer"), "the question does not derive"))?;
            if d.step(step).is_none() {
                return Err(ConfigError::new(
                    at("answer"),
                    format!("{} has no step {step:?}", q.id()),
                ));
            }
        }
    }
    Ok(f.prompt)
}

/// The `q/step` of every `{fig q/step}` in `text`.
fn figures(text: &str) -> Vec<String> {
    trainer_engine::text::pieces(text)
        .into_iter()
        .filter_map(|piece| match piece {
            trainer_engine::text::Piece::Name(inside) => {
                inside.strip_prefix("fig ").map(|n| n.trim().to_string())
            }
            _ => None,
        })
        .collect()
}

/// The prompt's answer with its figures at the learner's inputs: `queries` holds the query
/// string last used in each calculator (question id to query; a question not there is at its
/// defaults). A figure that does not derive shows as a dash.
pub fn answer(p: &Prompt, queries: &BTreeMap<String, String>) -> String {
    let mut derived = BTreeMap::new();
    trainer_engine::text::fill_or_dash(&p.answer, |inside| {
        let name = inside
            .strip_prefix("fig ")
            .ok_or_else(|| format!("{inside:?} is not a figure"))?;
        let (q, step) = name.split_once('/').ok_or("no step")?;
        let q = Question::from_id(q).ok_or("no question")?;
        let d = derived.entry(q).or_insert_with(|| {
            let query = queries.get(q.id()).map_or("", String::as_str);
            derive(q, &PageQuery::parse(q, query).inputs).ok()
        });
        d.as_ref()
            .and_then(|d| d.step(step))
            .map(|s| s.display.clone())
            .ok_or_else(|| "no such figure".to_string())
    })
}

/// The places that hold at least one prompt, for a page that lists what to look for.
pub fn places() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for p in prompts() {
        if !out.contains(&p.place.as_str()) {
            out.push(p.place.as_str());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_prompts_read_and_fill_at_the_seed() {
        let all = parse(trainer_engine::files::RECALL).expect("content/recall.toml reads");
        assert!(all.len() >= 12, "{} prompts", all.len());
        assert_eq!(prompts().len(), all.len());
        let seed = BTreeMap::new();
        for p in &all {
            let a = answer(p, &seed);
            assert!(!a.contains('{') && !a.contains('—'), "{}: {a}", p.id);
        }
        // Every kind of place holds some.
        for kind in ["lesson#", "size/", "buildups/"] {
            assert!(all.iter().any(|p| p.place.starts_with(kind)), "{kind}");
        }
        assert!(places().contains(&"lesson#roofline"));
        assert!(!words().show.is_empty() && words().due_in.contains("{date}"));
    }

    #[test]
    fn an_answer_follows_the_learners_inputs() {
        let p = prompt("streams-littles-law").unwrap();
        let seed = answer(p, &BTreeMap::new());
        assert!(seed.contains("250 streams"), "{seed}");
        let mine = BTreeMap::from([("fleet".to_string(), "rate=100".to_string())]);
        assert!(answer(p, &mine).contains("500 streams"));
        // Inputs that do not derive show a dash, never a panic or a raw placeholder.
        let bad = BTreeMap::from([("fleet".to_string(), "gpu=nope&rate=-1".to_string())]);
        let text = answer(p, &bad);
        assert!(!text.contains('{'), "{text}");
    }

    /// A `[words]` table for the files below.
    const WORDS: &str = "[words]\nlabel = \"\"\nshow = \"\"\ngrade = \"\"\nright = \"\"\npartly = \"\"\nmissed = \"\"\ndue_today = \"\"\ndue_in = \"\"\nreview_heading = \"\"\nreview_intro = \"\"\n";

    #[test]
    fn bad_files_are_refused_by_name() {
        let one = |id: &str, place: &str, answer: &str| {
            format!("[[prompt]]\nid = {id:?}\nplace = {place:?}\nquestion = \"Q?\"\nanswer = {answer:?}\n")
        };
        for (text, field) in [
            (one("Bad Id", "lesson#answer", "A."), "recall.id"),
            (one("a", "nowhere", "A."), "recall.a.place"),
            (one("a", "size/nope", "A."), "recall.a.place"),
            (one("a", "buildups/nope", "A."), "recall.a.place"),
            (
                one("a", "lesson#answer", "{fig fleet/nope}"),
                "recall.a.answer",
            ),
            (
                one("a", "lesson#answer", "{fig nope/replicas}"),
                "recall.a.answer",
            ),
            (one("a", "lesson#answer", ""), "recall.a.answer"),
            (
                format!(
                    "{}{}",
                    one("a", "lesson#answer", "A."),
                    one("a", "size/fleet", "B.")
                ),
                "recall.a.id",
            ),
        ] {
            let text = format!("{WORDS}{text}");
            let e = parse(&text).expect_err(&text);
            assert_eq!(e.field, field, "{text}");
        }
        assert_eq!(
            Place::parse("size/fleet"),
            Some(Place::Size(Question::Fleet))
        );
        assert_eq!(Place::parse("lesson#"), None);
    }
}
