//! The calculator's state: the inputs, the text typed into each field, the derivation and the
//! revealed steps, as signals and memos with the methods that change them. No view lives here
//! and nothing here imports one: the views (`calc.rs`, `simcheck.rs`, `drill.rs`,
//! `sensitivity.rs`) depend on this module, never the other way.

use crate::components::link_sentence;
use crate::progress::{use_progress, ProgressStore};
use crate::url_state::{pairs, use_url_state, UrlState};
use leptos::prelude::*;
use std::collections::BTreeMap;
use trainer_course::sizing::{
    derive, map_of, misfit, page_query, page_query_keeping, Derivation, InputKind, InputSpec,
    Inputs, Misfit, PageQuery, Question, Reveal, FIX_FIELD,
};
use trainer_engine::error::ConfigError;

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
    /// Set once the piece below the steps has linked in the derivations the first load leaves
    /// out (`trainer_course::sizing::enable_speculation`): the derivation reruns then.
    pub linked: RwSignal<bool>,
    /// The last inputs that derived, with their derivation: what the steps show. A memo over
    /// its own previous value, so bad input keeps the last good result.
    pub good: Memo<Option<(Inputs, Derivation)>>,
    /// Every field's message: parse errors and the derivation's errors.
    pub errors: Memo<BTreeMap<String, String>>,
    /// What the replica cannot hold, with the smallest GPUs per replica that would.
    pub misfit: Memo<Option<Misfit>>,
    /// Whether the inputs panel is open (it starts folded on a narrow screen, unless a field
    /// needs fixing).
    pub inputs_open: RwSignal<bool>,
    /// Steps revealed.
    revealed: RwSignal<Reveal>,
    /// The step the sensitivity plot shows, when the learner picked one (`sens=` in the URL).
    pub sens: RwSignal<Option<String>>,
    /// The seed of the drill on show, if any (`drill=` in the URL: a link poses the same drill).
    pub drill: RwSignal<Option<u64>>,
    /// What the link said that the page does not use (`reveal`, `sens`, `drill`), as sentences.
    pub link_errors: StoredValue<Vec<String>>,
    /// Taken from the context once: event handlers run outside the component's owner.
    url: UrlState,
    store: ProgressStore,
}

impl Calc {
    /// The state of question `q` from the page's query string.
    pub fn new(q: Question, wide: bool) -> Calc {
        let url = use_url_state();
        let page = url.read(|query| PageQuery::parse(q, query));
        let mut extra = url.read(pairs);
        let mut link_errors = Vec::new();
        if let (Some(e), Some(t)) = (&page.reveal_error, extra.get("reveal")) {
            link_errors.push(link_sentence("reveal", t, &e.message));
        }
        // A step id is a word; anything else is not one (and would not write back as typed).
        let sens_text = extra.remove(SENS_KEY).filter(|s| !s.is_empty());
        let sens = sens_text
            .clone()
            .filter(|s| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        let drill_text = extra.remove(DRILL_KEY).filter(|s| !s.is_empty());
        let drill = drill_text.as_ref().and_then(|s| s.trim().parse().ok());
        if let (Some(t), None) = (&drill_text, drill) {
            link_errors.push(link_sentence(
                DRILL_KEY,
                t,
                "must be a drill's number (a whole number), so no drill is posed",
            ));
        }
        let mut texts = texts_of(q, &page.inputs);
        // Show the bad text in its field, with the message, so a deep link says what is wrong.
        texts.extend(page.bad_text);
        let parse_errors: BTreeMap<String, String> =
            map_of(page.errors.into_iter().map(|e| (e.field, e.message)));
        let (inputs, revealed) = (page.inputs, page.reveal);
        let inputs = RwSignal::new(inputs);
        let linked = RwSignal::new(false);
        let result = Memo::new(move |_| {
            linked.track();
            inputs.with(|i| derive(q, i))
        });
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
        let misfit = Memo::new(move |_| inputs.with(|i| misfit(q, i)));
        // The sensitivity shows a plain step of the derivation; a link naming anything else
        // gets the question's default step, and says so.
        let sens_step = |t: &str| {
            good.with_untracked(|g| {
                g.as_ref()
                    .is_none_or(|(_, d)| d.step(t).is_some_and(|s| s.check.is_none()))
            })
        };
        if let Some(t) = sens_text.filter(|t| sens.as_deref() != Some(t.as_str()) || !sens_step(t))
        {
            link_errors.push(link_sentence(
                SENS_KEY,
                &t,
                "is not a step of this question, so the plot shows the usual one",
            ));
        }
        let open = wide || errors.with_untracked(|e| !e.is_empty());
        let c = Calc {
            q,
            inputs,
            misfit,
            inputs_open: RwSignal::new(open),
            texts: RwSignal::new(texts),
            parse_errors,
            result,
            linked,
            good,
            errors,
            revealed: RwSignal::new(revealed),
            sens: RwSignal::new(sens),
            drill: RwSignal::new(drill),
            link_errors: StoredValue::new(link_errors),
            url,
            store: use_progress(),
        };
        if revealed == Reveal::All {
            c.mark_done();
        }
        c.store.set_inputs(q.id(), &c.query_without_reveal());
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
        self.revealed.get().shown(self.step_count())
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

    /// The query string of the current state, without the question (the path names it): the
    /// inputs and revealed steps (a field whose text is not a value keeps that text, so a
    /// reload shows it again with its message), then the sensitivity's step and the drill.
    pub fn query(&self) -> String {
        let reveal = self.revealed.get_untracked();
        let steps = self.step_count_untracked();
        let bad = self.bad_texts();
        let mut query = self
            .inputs
            .with_untracked(|i| page_query_keeping(self.q, i, &bad, reveal, steps));
        let sens = self.sens.get_untracked().map(|s| (SENS_KEY, s));
        let drill = self
            .drill
            .get_untracked()
            .map(|d| (DRILL_KEY, d.to_string()));
        for (k, v) in sens.into_iter().chain(drill) {
            if !query.is_empty() {
                query.push('&');
            }
            query.push_str(&format!("{k}={v}"));
        }
        query
    }

    /// Shows the sensitivity of step `id` (`None`: the question's default step).
    pub fn set_sens(&self, id: Option<String>) {
        self.sens.set(id);
        self.sync_url();
    }

    /// Poses the drill of `seed`.
    pub fn set_drill(&self, seed: u64) {
        self.drill.set(Some(seed));
        self.sync_url();
    }

    /// The text of every field that holds no usable value: text that is not a number (or an
    /// unknown choice), and numbers the inputs refuse (out of range, or against another
    /// field), as the query string gives them (a percentage with its `%`).
    fn bad_texts(&self) -> BTreeMap<String, String> {
        let q = self.q;
        let mut names: Vec<String> = self
            .parse_errors
            .with_untracked(|p| p.keys().cloned().collect());
        self.inputs.with_untracked(|i| {
            names.extend(i.validate(q).into_iter().map(|e| e.field));
            let specs = i.specs(q);
            self.texts.with_untracked(|t| {
                map_of(names.into_iter().filter_map(|name| {
                    let spec = specs.iter().find(|s| s.name == name)?;
                    let text = t.get(&name)?;
                    let text = if self.parse_errors.with_untracked(|p| p.contains_key(&name)) {
                        text.clone()
                    } else {
                        spec.kind.typed(text)
                    };
                    Some((name, text))
                }))
            })
        })
    }

    /// The query string of the inputs alone, tracked (so a view can compare it with an
    /// earlier one).
    pub fn query_tracked(&self) -> String {
        self.inputs.track();
        self.query_without_reveal()
    }

    /// The query string of the inputs alone, untracked.
    pub fn query_without_reveal(&self) -> String {
        self.inputs
            .with_untracked(|i| page_query(self.q, i, Reveal::NONE, 0))
    }

    fn step_count_untracked(&self) -> usize {
        self.good
            .with_untracked(|g| g.as_ref().map_or(0, |(_, d)| d.steps.len()))
    }

    fn sync_url(&self) {
        self.url.replace(&self.query());
        // The lesson computes its figures from the inputs last used here.
        self.store
            .set_inputs(self.q.id(), &self.query_without_reveal());
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
        let typed = spec.kind.typed(&text);
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
                    t.insert("active_params".into(), InputKind::Integer.field_text(v));
                }
            });
        }
        self.inputs.set(next);
        self.sync_url();
    }

    /// Sets the GPUs per replica to `tp` (the fix the misfit banner offers).
    pub fn set_gpus_per_replica(&self, tp: u32) {
        let q = self.q;
        let mut next = self.inputs.get_untracked();
        if next.set(q, FIX_FIELD, tp as f64).is_ok() {
            self.texts.update(|t| {
                t.insert(FIX_FIELD.to_string(), tp.to_string());
            });
            self.parse_errors.update(|p| {
                p.remove(FIX_FIELD);
            });
            self.inputs.set(next);
            self.sync_url();
        }
    }

    /// Puts one numeric field back to its default (the preset's value).
    pub fn reset_field(&self, name: &str, kind: InputKind) {
        let q = self.q;
        let mut next = self.inputs.get_untracked();
        if let Some(d) = next.default_value(q, name) {
            let _ = next.set(q, name, d);
            self.texts.update(|t| {
                t.insert(name.to_string(), kind.field_text(d));
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

    /// Reveals the first `n` steps (any count past the last reveals every one).
    pub fn reveal_to(&self, n: usize) {
        let total = self.step_count_untracked();
        let r = Reveal::up_to(n, total);
        self.revealed.set(r);
        self.sync_url();
        if r == Reveal::All && total > 0 {
            self.mark_done();
        }
    }

    /// Reveals every step.
    pub fn reveal_all(&self) {
        self.reveal_to(usize::MAX);
    }

    /// Reveals one more step.
    pub fn next(&self) {
        let shown = self
            .revealed
            .get_untracked()
            .shown(self.step_count_untracked());
        self.reveal_to(shown + 1);
    }
}

/// The query key of the sensitivity's step.
const SENS_KEY: &str = "sens";
/// The query key of the drill's seed.
const DRILL_KEY: &str = "drill";

/// The text of every numeric field for these inputs.
fn texts_of(q: Question, inputs: &Inputs) -> BTreeMap<String, String> {
    map_of(
        inputs
            .specs(q)
            .into_iter()
            .filter(|s| s.kind != InputKind::Choice)
            .filter_map(|s| {
                inputs
                    .get(s.name)
                    .map(|v| (s.name.to_string(), s.kind.field_text(v)))
            }),
    )
}
