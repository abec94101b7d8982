//! Query strings: the one parser and writer of `key=value&…` pairs, and what the page of one
//! question keeps in its URL (the inputs that differ from the question's and how many steps
//! are revealed).

use super::{Inputs, Question};
use std::collections::BTreeMap;
use trainer_engine::error::ConfigError;

/// How many of a derivation's steps the learner has revealed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reveal {
    /// The first so many steps (possibly none).
    Steps(usize),
    /// Every step, however many the derivation has.
    All,
}

/// A question's page as its query string gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct PageQuery {
    /// The inputs; a bad value leaves its input at its default.
    pub inputs: Inputs,
    /// What is wrong with the query, one error per field.
    pub errors: Vec<ConfigError>,
    /// The text the query gave for each field named in `errors` (decoded), so the form can
    /// show what was written beside the message.
    pub bad_text: BTreeMap<String, String>,
    /// The steps revealed (`reveal=all`, `reveal=<n>`; anything else reveals none and is
    /// named in `reveal_error`).
    pub reveal: Reveal,
    /// What is wrong with the `reveal` value, if anything, apart from the inputs' errors (the
    /// steps still derive).
    pub reveal_error: Option<ConfigError>,
}

impl Reveal {
    /// No step revealed.
    pub const NONE: Reveal = Reveal::Steps(0);

    /// `n` steps of `total`: every step once `n` reaches `total`.
    pub fn up_to(n: usize, total: usize) -> Reveal {
        if n >= total {
            Reveal::All
        } else {
            Reveal::Steps(n)
        }
    }

    /// How many of `total` steps are shown.
    pub fn shown(self, total: usize) -> usize {
        match self {
            Reveal::Steps(n) => n.min(total),
            Reveal::All => total,
        }
    }

    /// Reads the value of a `reveal` key: `all`, a count of steps, or nothing (none).
    fn parse(text: &str) -> Result<Reveal, ConfigError> {
        match text.trim() {
            "all" => Ok(Reveal::All),
            "" => Ok(Reveal::NONE),
            n => n.parse().map(Reveal::Steps).map_err(|_| {
                ConfigError::new(
                    "reveal",
                    "must be all or a number of steps, so no step is revealed",
                )
            }),
        }
    }

    /// The value of the `reveal` key for a derivation of `total` steps, if any steps show.
    fn written(self, total: usize) -> Option<String> {
        match self {
            Reveal::Steps(0) => None,
            Reveal::Steps(n) if n < total => Some(n.to_string()),
            _ => Some("all".into()),
        }
    }
}

impl PageQuery {
    /// Reads the query string of question `q`'s page. The path names the question, so a
    /// `question` key is ignored; otherwise as [`Inputs::from_query`]. Never panics.
    pub fn parse(q: Question, query: &str) -> PageQuery {
        let pairs = pairs(query);
        let (inputs, errors) = Inputs::from_pairs(q, &pairs);
        let bad_text = map_of(
            errors
                .iter()
                .filter_map(|e| pairs.get(&e.field).map(|t| (e.field.clone(), t.clone()))),
        );
        let (reveal, reveal_error) = match pairs.get("reveal").map(|t| Reveal::parse(t)) {
            None => (Reveal::NONE, None),
            Some(Ok(r)) => (r, None),
            Some(Err(e)) => (Reveal::NONE, Some(e)),
        };
        PageQuery {
            inputs,
            errors,
            bad_text,
            reveal,
            reveal_error,
        }
    }
}

/// The query string of question `q`'s page: every input that differs from its default (as
/// [`Inputs::to_query`] writes them, without the question, which the path names), then
/// `reveal=<n>`, or `reveal=all` once the revealed steps reach the derivation's `steps`.
pub fn page_query(q: Question, inputs: &Inputs, reveal: Reveal, steps: usize) -> String {
    page_query_keeping(q, inputs, &BTreeMap::new(), reveal, steps)
}

/// As [`page_query`], but each field named in `bad` keeps the text the learner gave it (a
/// value that is not one, such as `rate=abc`), so a reload brings back the text and its
/// message rather than silently dropping it.
pub fn page_query_keeping(
    q: Question,
    inputs: &Inputs,
    bad: &BTreeMap<String, String>,
    reveal: Reveal,
    steps: usize,
) -> String {
    let mut pairs = inputs.changed_keeping(q, bad);
    if let Some(r) = reveal.written(steps) {
        pairs.push(("reveal", r));
    }
    write(&pairs)
}

impl PageQuery {
    /// This page's query string again, bad values included as they were given, for a
    /// derivation of `steps` steps.
    pub fn to_query(&self, q: Question, steps: usize) -> String {
        page_query_keeping(q, &self.inputs, &self.bad_text, self.reveal, steps)
    }
}

/// Splits a query string into decoded key-value pairs (`application/x-www-form-urlencoded`:
/// `+` is a space, `%XX` an escaped byte, a malformed escape stays as written and invalid
/// UTF-8 is replaced). A leading `?` is ignored. **When a key repeats, the last value wins**,
/// as it does for an object built from `URLSearchParams` entries.
pub fn pairs(query: &str) -> BTreeMap<String, String> {
    let query = query.trim().trim_start_matches('?');
    map_of(form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())))
}

/// Pairs in a map, a later pair replacing an earlier one with the same key (as `collect`
/// does), inserted one by one: `collect` sorts the pairs first, and every place in the
/// page's first load that collected a map brought its own copy of the sort (about 1 KB
/// gzipped each).
pub fn map_of<V>(items: impl IntoIterator<Item = (String, V)>) -> BTreeMap<String, V> {
    let mut m = BTreeMap::new();
    for (k, v) in items {
        m.insert(k, v);
    }
    m
}

/// Writes pairs as a query string, escaping what needs it (names, preset ids and numbers
/// need nothing, so they read as they are).
pub(crate) fn write(pairs: &[(&str, String)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str())))
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses a page's query and writes it back for a derivation of `steps` steps.
    fn round_trip(q: Question, query: &str, steps: usize) -> String {
        let p = PageQuery::parse(q, query);
        page_query(q, &p.inputs, p.reveal, steps)
    }

    #[test]
    fn the_page_query_writes_changed_inputs_then_the_revealed_steps() {
        let q = Question::Fleet;
        for (query, steps, written) in [
            ("", 10, ""),
            ("reveal=0", 10, ""),
            ("rate=60", 10, "rate=60"),
            ("rate=60&reveal=3", 10, "rate=60&reveal=3"),
            ("reveal=3", 10, "reveal=3"),
            ("reveal=10", 10, "reveal=all"),
            ("reveal=99", 10, "reveal=all"),
            ("reveal=all&rate=60", 10, "rate=60&reveal=all"),
            ("reveal=nope", 10, ""),
            // The path names the question: a `question` key is ignored.
            ("question=gpu-hours&rate=60", 10, "rate=60"),
        ] {
            assert_eq!(round_trip(q, query, steps), written, "{query}");
        }
    }

    #[test]
    fn a_reveal_that_is_not_a_count_is_named_not_silently_dropped() {
        for bad in ["nope", "-1", "1.5", "∞", "9999999999999999999999999"] {
            let p = PageQuery::parse(Question::Fleet, &format!("reveal={bad}"));
            assert_eq!(p.reveal, Reveal::NONE, "{bad}");
            let e = p.reveal_error.expect(bad);
            assert_eq!(e.field, "reveal");
            assert!(p.errors.is_empty(), "{bad}: the inputs have no error");
        }
        for good in ["", "all", " 3 ", "0", "99"] {
            let p = PageQuery::parse(Question::Fleet, &format!("reveal={good}"));
            assert_eq!(p.reveal_error, None, "{good:?}");
        }
    }

    #[test]
    fn reveal_counts_clamp_to_the_derivation() {
        assert_eq!(Reveal::up_to(3, 10), Reveal::Steps(3));
        assert_eq!(Reveal::up_to(10, 10), Reveal::All);
        assert_eq!(Reveal::Steps(12).shown(10), 10);
        assert_eq!(Reveal::All.shown(7), 7);
        assert_eq!(Reveal::NONE.shown(7), 0);
    }

    #[test]
    fn bad_values_keep_the_text_the_query_gave() {
        let p = PageQuery::parse(
            Question::Fleet,
            "rate=a%62c&batch=-3&gpu=nope&output_tokens=300&reveal=2",
        );
        let mut fields: Vec<&str> = p.errors.iter().map(|e| e.field.as_str()).collect();
        fields.sort_unstable();
        assert_eq!(fields, ["batch", "gpu", "rate"]);
        assert_eq!(p.bad_text.get("rate").map(String::as_str), Some("abc"));
        assert_eq!(p.bad_text.get("batch").map(String::as_str), Some("-3"));
        assert_eq!(p.bad_text.get("gpu").map(String::as_str), Some("nope"));
        assert_eq!(p.bad_text.get("output_tokens"), None);
        assert_eq!(p.bad_text.len(), p.errors.len());
        assert_eq!(p.inputs.get("output_tokens"), Some(300.0));
        assert_eq!(p.reveal, Reveal::Steps(2));
    }

    // Issue 29: after "Show all" the URL dropped the bad values, so a reload lost them and
    // their messages. Bad text is written back as given, in form order, and reads back the
    // same.
    #[test]
    fn bad_values_survive_a_rewrite_of_the_query() {
        let q = Question::Fleet;
        for (query, steps, written) in [
            ("rate=abc&reveal=2", 10, "rate=abc&reveal=2"),
            ("rate=abc&reveal=all", 10, "rate=abc&reveal=all"),
            (
                "reveal=3&batch=-3&gpu=nope&rate=a%26b&output_tokens=300",
                10,
                "gpu=nope&rate=a%26b&output_tokens=300&batch=-3&reveal=3",
            ),
            ("rate=&mfu=40%25", 10, "rate=&mfu=0.4"),
            ("rate=60", 10, "rate=60"),
        ] {
            let page = PageQuery::parse(q, query);
            let again = page.to_query(q, steps);
            assert_eq!(again, written, "{query}");
            let back = PageQuery::parse(q, &again);
            assert_eq!(back, page, "{query}");
        }
        // The plain writer still writes values only.
        let page = PageQuery::parse(q, "rate=abc&reveal=2");
        assert_eq!(page_query(q, &page.inputs, page.reveal, 10), "reveal=2");
        // Showing every step rewrites the reveal and keeps the bad text.
        let all = page_query_keeping(q, &page.inputs, &page.bad_text, Reveal::All, 10);
        assert_eq!(all, "rate=abc&reveal=all");
        assert_eq!(PageQuery::parse(q, &all).bad_text, page.bad_text);
    }

    #[test]
    fn a_repeated_key_takes_its_last_value() {
        let p = pairs("?rate=10&rate=20&model=a&rate=30");
        assert_eq!(p.get("rate").map(String::as_str), Some("30"));
        let page = PageQuery::parse(Question::Fleet, "rate=abc&rate=60&reveal=1&reveal=all");
        assert!(page.errors.is_empty(), "{:?}", page.errors);
        assert_eq!(
            (page.inputs.get("rate"), page.reveal),
            (Some(60.0), Reveal::All)
        );
        let page = PageQuery::parse(Question::Fleet, "rate=60&rate=abc");
        assert_eq!(page.bad_text.get("rate").map(String::as_str), Some("abc"));
    }

    #[test]
    fn pairs_are_decoded_and_written_escaped() {
        let p = pairs("a=1+2&b=%41%zz&c&=x&d=%E2%82%AC");
        let got: Vec<(&str, &str)> = p.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            got,
            [
                ("", "x"),
                ("a", "1 2"),
                ("b", "A%zz"),
                ("c", ""),
                ("d", "€")
            ]
        );
        assert_eq!(
            write(&[("model", "llama-3.1-8b".into()), ("rate", "0.5".into())]),
            "model=llama-3.1-8b&rate=0.5"
        );
        assert_eq!(write(&[("x", "a b&c".into())]), "x=a+b%26c");
    }
}
