//! The opening minutes as a checklist: the questions that change the design (`[requirements]`
//! of `content/mock.toml`), each with what its answer changes and the terms that show it was
//! asked. The mock grades the candidate's notes at the clarifying stage against it: an item is
//! asked when the notes use one of its terms at the start of a word.

use serde::Deserialize;

/// The checklist and its words.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirements {
    /// The prompt whose notes are graded (the clarifying questions).
    pub prompt: String,
    pub heading: String,
    pub intro: String,
    /// Said of an item asked and of one not asked.
    pub asked: String,
    pub not_asked: String,
    /// The report's sentence: `{asked}` of `{total}` asked.
    pub summary: String,
    #[serde(rename = "item")]
    pub items: Vec<Requirement>,
}

/// One question that changes the design.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub id: String,
    /// The question, as a strong candidate would put it.
    pub ask: String,
    /// What its answer changes in the design.
    pub changes: String,
    /// Lowercase words or phrases whose use in the notes shows the question was asked.
    pub terms: Vec<String>,
}

/// One item graded against the notes.
#[derive(Clone, Debug, PartialEq)]
pub struct Covered {
    pub id: String,
    pub asked: bool,
    /// The term found, when asked.
    pub term: Option<String>,
}

impl Requirements {
    /// Checks the list: ids unique, every item with a question, a change and lowercase terms.
    pub fn check(&self) -> Result<(), String> {
        if self.items.len() < 4 {
            return Err("lists fewer than four questions".into());
        }
        for (i, r) in self.items.iter().enumerate() {
            if self.items[..i].iter().any(|o| o.id == r.id) {
                return Err(format!("lists {} twice", r.id));
            }
            if r.ask.trim().is_empty() || r.changes.trim().is_empty() || r.terms.is_empty() {
                return Err(format!("{} needs ask, changes and terms", r.id));
            }
            if let Some(t) = r
                .terms
                .iter()
                .find(|t| t.trim().is_empty() || t.to_lowercase() != **t)
            {
                return Err(format!("{}: the term {t:?} is not lowercase", r.id));
            }
        }
        Ok(())
    }

    /// Each item, asked or not in `notes`.
    pub fn grade(&self, notes: &str) -> Vec<Covered> {
        let text = notes.to_lowercase();
        self.items
            .iter()
            .map(|r| {
                let term = r.terms.iter().find(|t| uses(&text, t)).cloned();
                Covered {
                    id: r.id.clone(),
                    asked: term.is_some(),
                    term,
                }
            })
            .collect()
    }

    /// The report's sentence for `covered`.
    pub fn summary_of(&self, covered: &[Covered]) -> String {
        let asked = covered.iter().filter(|c| c.asked).count();
        self.summary
            .replace("{asked}", &asked.to_string())
            .replace("{total}", &covered.len().to_string())
    }
}

/// Whether `text` (lowercase) uses `term` at the start of a word.
fn uses(text: &str, term: &str) -> bool {
    text.match_indices(term).any(|(i, _)| {
        text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_checklist_grades_notes_by_the_terms_they_use() {
        let m = crate::mock::mock().expect("content/mock.toml reads");
        let r = &m.requirements;
        assert!(r.items.len() >= 6);
        assert!(m.prompts.iter().any(|p| p.id == r.prompt));
        // Nothing asked in empty notes; a careful opening asks most.
        assert!(r.grade("").iter().all(|c| !c.asked));
        let notes = "What is the distribution of prompt lengths, p99 too? Is the TTFT target \
                     measured at the client or in the engine? Peak vs average traffic? \
                     Multiple tenants with quotas? Budget per month?";
        let g = r.grade(notes);
        let asked: Vec<&str> = g
            .iter()
            .filter(|c| c.asked)
            .map(|c| c.id.as_str())
            .collect();
        for id in ["lengths", "where-measured", "peak", "tenants", "budget"] {
            assert!(asked.contains(&id), "{id} in {asked:?}");
        }
        assert!(r.summary_of(&g).contains(&asked.len().to_string()));
        // Only at the start of a word: "repeat" does not ask about the peak.
        assert!(!uses("we repeat it", "peak"));
        assert!(uses("the peak hour", "peak"));
        assert!(uses("peak", "peak"));
    }

    #[test]
    fn a_bad_checklist_is_refused() {
        let item = |id: &str, terms: &[&str]| Requirement {
            id: id.into(),
            ask: "Q?".into(),
            changes: "C.".into(),
            terms: terms.iter().map(|t| t.to_string()).collect(),
        };
        let mut r = Requirements {
            items: vec![
                item("a", &["x"]),
                item("b", &["y"]),
                item("c", &["z"]),
                item("d", &["w"]),
            ],
            ..Requirements::default()
        };
        assert!(r.check().is_ok());
        r.items[3] = item("a", &["w"]);
        assert!(r.check().unwrap_err().contains("twice"));
        r.items[3] = item("d", &["Peak"]);
        assert!(r.check().unwrap_err().contains("lowercase"));
        r.items[3] = item("d", &[]);
        assert!(r.check().is_err());
        r.items.truncate(2);
        assert!(r.check().is_err());
    }
}
