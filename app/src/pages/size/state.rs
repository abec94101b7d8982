//! The calculator's state: the inputs, the text typed into each field, the derivation and the
//! revealed steps, as signals and memos with the methods that change them. No view lives here
//! and nothing here imports one: the views (`calc.rs`, `simcheck.rs`, `drill.rs`,
//! `sensitivity.rs`) depend on this module, never the other way.

use crate::progress::{use_progress, ProgressStore};
use crate::route::{use_router, Router};
use leptos::prelude::*;
use std::collections::BTreeMap;
use trainer_core::error::ConfigError;
use trainer_core::format::round_sig;
use trainer_core::sizing::{derive, Derivation, InputKind, InputSpec, Inputs, Question};

/// Revealed-steps count that means "all of them".
pub const ALL: usize = usize::MAX;

/// The calculator's state, shared by its parts. Everything derived is a `Memo` over the inputs,
/// so revealed steps recompute as the learner types without any effect.
#[derive(Clone, Copy)]
pub struct Calc {
    pub q: Question,
    /// The inputs as last set: out-of-range values are kept so the form shows what was typed.
    pub inputs: RwSignal<Inputs>,
    /// The text of each numeric field as typed.
    texts: RwSignal<BTreeMap<String, String>>,
    /// Fields whose text is not a number (the inputs keep their previous value).
    parse_errors: RwSignal<BTreeMap<String, String>>,
    /// The derivation of the current inputs, or what is wrong with them.
    result: Memo<Result<Derivation, Vec<ConfigError>>>,
    /// The last inputs that derived, with their derivation: what the steps show. A memo over
    /// its own previous value, so bad input keeps the last good result.
    pub good: Memo<Option<(Inputs, Derivation)>>,
    /// Every field's message: parse errors and the derivation's errors.
    pub errors: Memo<BTreeMap<String, String>>,
    /// Steps revealed (`ALL` for every one).
    revealed: RwSignal<usize>,
    /// Taken from the context once: event handlers run outside the component's owner.
    router: Router,
    store: ProgressStore,
}

impl Calc {
    /// The state of question `q` from the page's query string.
    pub fn new(q: Question, query: &str) -> Calc {
        let (_, inputs, query_errors) = Inputs::from_query(&format!("{query}&question={}", q.id()));
        let raw = raw_pairs(query);
        let mut texts = texts_of(q, &inputs);
        let mut parse_errors = BTreeMap::new();
        for e in query_errors {
            // Show the bad text in its field, with the message, so a deep link says what is wrong.
            if let Some(t) = raw.get(&e.field) {
                texts.insert(e.field.clone(), t.clone());
            }
            parse_errors.insert(e.field, e.message);
        }
        let revealed = match raw.get("reveal").map(String::as_str) {
            Some("all") => ALL,
            Some(n) => n.trim().parse::<usize>().unwrap_or(0),
            None => 0,
        };
        let inputs = RwSignal::new(inputs);
        let result = Memo::new(move |_| inputs.with(|i| derive(q, i)));
        let good =
            Memo::new(
                move |prev: Option<&Option<(Inputs, Derivation)>>| match result.get() {
                    Ok(d) => Some((inputs.get_untracked(), d)),
                    Err(_) => prev.cloned().flatten(),
                },
            );
        let parse_errors = RwSignal::new(parse_errors);
        let errors = Memo::new(move |_| {
            let mut out = parse_errors.get();
            if let Err(errs) = result.get() {
                for e in errs {
                    out.entry(e.field).or_insert(e.message);
                }
            }
            out
        });
        let c = Calc {
            q,
            inputs,
            texts: RwSignal::new(texts),
            parse_errors,
            result,
            good,
            errors,
            revealed: RwSignal::new(revealed),
            router: use_router(),
            store: use_progress(),
        };
        if revealed == ALL {
            c.mark_done();
        }
        c
    }

    /// Whether the steps show an older result than the inputs (some input is bad).
    pub fn stale(&self) -> bool {
        self.result.with(|r| r.is_err()) || self.parse_errors.with(|p| !p.is_empty())
    }

    /// Steps in the derivation shown (tracked).
    pub fn step_count(&self) -> usize {
        self.good
            .with(|g| g.as_ref().map_or(0, |(_, d)| d.steps.len()))
    }

    /// Steps revealed, clamped to the derivation (tracked).
    pub fn shown(&self) -> usize {
        self.revealed.get().min(self.step_count())
    }

    /// The text a numeric field shows (tracked).
    pub fn text(&self, name: &str) -> String {
        self.texts
            .with(|t| t.get(name).cloned().unwrap_or_default())
    }

    /// The message of a field, if it has one (tracked).
    pub fn error(&self, name: &str) -> Option<String> {
        self.errors.with(|e| e.get(name).cloned())
    }

    /// The query string of the current state, without the question (the path names it).
    pub fn query(&self) -> String {
        let q = self.q;
        let full = self.inputs.with_untracked(|i| i.to_query(q));
        let mut out = full
            .strip_prefix(&format!("question={}", q.id()))
            .unwrap_or(&full)
            .trim_start_matches('&')
            .to_string();
        let r = self.revealed.get_untracked();
        if r > 0 {
            if !out.is_empty() {
                out.push('&');
            }
            if r >= self.step_count_untracked() {
                out.push_str("reveal=all");
            } else {
                out.push_str(&format!("reveal={r}"));
            }
        }
        out
    }

    /// The query string of the inputs alone, tracked (so a view can compare it with an
    /// earlier one).
    pub fn query_tracked(&self) -> String {
        self.inputs.track();
        self.query_without_reveal()
    }

    /// The query string of the inputs alone, untracked.
    pub fn query_without_reveal(&self) -> String {
        self.query()
            .split('&')
            .filter(|p| !p.starts_with("reveal="))
            .collect::<Vec<_>>()
            .join("&")
    }

    fn step_count_untracked(&self) -> usize {
        self.good
            .with_untracked(|g| g.as_ref().map_or(0, |(_, d)| d.steps.len()))
    }

    fn sync_url(&self) {
        self.router.replace_query(&self.query());
    }

    fn mark_done(&self) {
        self.store.mark_done(&format!("size/{}", self.q.id()));
    }

    /// Sets a numeric field from the text typed into it.
    pub fn type_into(&self, spec: &InputSpec, text: String) {
        let name = spec.name;
        self.texts.update(|t| {
            t.insert(name.to_string(), text.clone());
        });
        // A percentage field is typed in percent; the core stores the fraction.
        let typed = if spec.kind == InputKind::Percent
            && !text.trim().ends_with('%')
            && !text.trim().is_empty()
        {
            format!("{}%", text.trim())
        } else {
            text
        };
        let q = self.q;
        let mut next = self.inputs.get_untracked();
        let before = next.clone();
        match next.set_text(q, name, &typed) {
            Ok(()) => {
                self.parse_errors.update(|p| {
                    p.remove(name);
                });
            }
            Err(e) => {
                if next == before {
                    // The text is not a number: the input keeps its last value.
                    self.parse_errors.update(|p| {
                        p.insert(name.to_string(), e.message);
                    });
                } else {
                    // A number out of range: stored, and the derivation reports it.
                    self.parse_errors.update(|p| {
                        p.remove(name);
                    });
                }
            }
        }
        // Setting the parameters may move the active parameters along with them.
        if next.get("active_params") != before.get("active_params") && name != "active_params" {
            let v = next.get("active_params");
            self.texts.update(|t| {
                if let Some(v) = v {
                    t.insert("active_params".into(), field_text(InputKind::Integer, v));
                }
            });
        }
        self.inputs.set(next);
        self.sync_url();
    }

    /// Puts one numeric field back to its default (the preset's value).
    pub fn reset_field(&self, name: &str, kind: InputKind) {
        let q = self.q;
        let mut next = self.inputs.get_untracked();
        if let Some(d) = next.default_value(q, name) {
            let _ = next.set(q, name, d);
            self.texts.update(|t| {
                t.insert(name.to_string(), field_text(kind, d));
            });
            self.parse_errors.update(|p| {
                p.remove(name);
            });
            self.inputs.set(next);
            self.sync_url();
        }
    }

    /// Sets a choice (a preset); the figures it provides reset, so every field is refreshed.
    pub fn choose(&self, name: &str, id: &str) {
        let q = self.q;
        let mut next = self.inputs.get_untracked();
        if next.set_choice(q, name, id).is_ok() {
            self.load(next);
        }
    }

    /// Replaces every input (a choice, a reset or a drill's inputs) and refreshes the form.
    pub fn load(&self, inputs: Inputs) {
        self.texts.set(texts_of(self.q, &inputs));
        self.parse_errors.set(BTreeMap::new());
        self.inputs.set(inputs);
        self.sync_url();
    }

    /// Reveals the first `n` steps (`ALL`, or any count past the last, for every one).
    pub fn reveal_to(&self, n: usize) {
        let total = self.step_count_untracked();
        let n = if n >= total { ALL } else { n };
        self.revealed.set(n);
        self.sync_url();
        if n == ALL && total > 0 {
            self.mark_done();
        }
    }

    /// Reveals one more step.
    pub fn next(&self) {
        let shown = self
            .revealed
            .get_untracked()
            .min(self.step_count_untracked());
        self.reveal_to(shown + 1);
    }
}

/// The text a field shows for a value: percent for a percentage, the plain number otherwise.
fn field_text(kind: InputKind, v: f64) -> String {
    let shown = if kind == InputKind::Percent {
        v * 100.0
    } else {
        v
    };
    format!("{}", round_sig(shown, 12))
}

fn texts_of(q: Question, inputs: &Inputs) -> BTreeMap<String, String> {
    inputs
        .specs(q)
        .into_iter()
        .filter(|s| s.kind != InputKind::Choice)
        .filter_map(|s| {
            inputs
                .get(s.name)
                .map(|v| (s.name.to_string(), field_text(s.kind, v)))
        })
        .collect()
}

/// The query string's raw pairs (decoded), to echo bad values back into their fields.
fn raw_pairs(query: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Ok(params) = web_sys::UrlSearchParams::new_with_str(query) {
        for name in query
            .split('&')
            .filter_map(|p| p.split('=').next())
            .filter(|k| !k.is_empty())
        {
            if let Some(v) = params.get(name) {
                out.insert(name.to_string(), v);
            }
        }
    }
    out
}
