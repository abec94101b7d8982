//! `/lesson`: the strong answer, written in `content/lesson.md` and drawn here with every
//! figure live. Figures come from the sizing engine at the inputs the learner last used in
//! each calculator (kept in progress), and link to the step that derives them; widgets
//! (estimate boxes, the request-path diagram, the probes, the reversal, the one-page summary)
//! are drawn where the text names them.

mod dashboard;
mod estimate;
mod probe;
mod render;
mod reversal;
mod sheet;

use crate::components::{set_in_turn, InputsBanner};
use crate::progress::use_progress;
use leptos::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use trainer_content::doc::Block;
use trainer_content::doc::Doc;
use trainer_content::words::LessonWords;
use trainer_course::sizing::{derive, echoes, gives_away, Derivation, Inputs, PageQuery, Question};

const LESSON_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/lesson.json"));

/// What the lesson's parts share: the learner's inputs and derivations, the words, the runs.
#[derive(Clone, Copy)]
pub struct Lesson {
    /// Each question's query string as last used in its calculator.
    queries: Memo<BTreeMap<String, String>>,
    /// Each question's derivation at its inputs (None when they do not derive), worked out
    /// when a figure reads it and again when that question's inputs change. Shared, not
    /// copied: every live figure of the lesson reads one.
    derivations: StoredValue<BTreeMap<Question, Memo<Option<Arc<Derivation>>>>>,
    pub words: StoredValue<LessonWords>,
    /// The simulator check behind the estimate boxes.
    pub sim: estimate::LessonSim,
    /// The estimate boxes on the page not yet committed or shown: (question, step). Every
    /// figure that gives one of them away stays hidden meanwhile.
    pending: RwSignal<Vec<(Question, String)>>,
    /// Per question: set once the widgets' piece has linked in the follow-up questions'
    /// derivations (the roofline's among them), when its derivation is worked again.
    linked: StoredValue<BTreeMap<Question, RwSignal<bool>>>,
}

impl Lesson {
    /// The query string of question `q`'s inputs (tracked).
    pub fn query(&self, q: Question) -> String {
        self.queries.with(|m| stored_query(m, q))
    }

    /// Question `q`'s inputs (tracked).
    pub fn inputs(&self, q: Question) -> Inputs {
        PageQuery::parse(q, &self.query(q)).inputs
    }

    /// Question `q`'s derivation at the learner's inputs (tracked).
    pub fn derivation(&self, q: Question) -> Option<Arc<Derivation>> {
        self.derivations
            .with_value(|m| m.get(&q).copied())
            .and_then(|d| d.get())
    }

    /// Question `q`'s derivation for a part built now that reads it once (untracked): a
    /// follow-up question whose turn to be worked again with the follow-ups' piece has not
    /// come is worked now.
    pub fn derivation_now(&self, q: Question) -> Option<Arc<Derivation>> {
        if trainer_course::sizing::speculation_ready() {
            if let Some(flag) = self.linked.with_value(|m| m.get(&q).copied()) {
                if !flag.get_untracked() {
                    flag.set(true);
                }
            }
        }
        self.derivations
            .with_value(|m| m.get(&q).copied())
            .and_then(|d| d.get_untracked())
    }

    /// The follow-up questions' derivations are linked in: each question's derivation is
    /// worked again at its own turn in the first page's slices (all at once, they were one
    /// task of some 40 ms on a desktop, with the widget that linked them; one no figure reads
    /// waits to be read).
    pub fn link(&self) {
        for flag in self
            .linked
            .with_value(|m| m.values().copied().collect::<Vec<_>>())
        {
            set_in_turn(flag);
        }
    }

    /// The estimate box that hides step `step` of question `q` (its element id), while the
    /// learner has not committed an estimate that the step would give away (tracked).
    pub fn hidden_by(&self, q: Question, step: &str) -> Option<String> {
        self.pending.with(|p| {
            p.iter()
                .find(|(pq, ps)| {
                    (*pq == q && gives_away(q, ps).contains(&step))
                        || echoes(q, step).contains(&(*pq, ps.as_str()))
                })
                .map(|(_, ps)| format!("estimate-{ps}"))
        })
    }

    /// Whether an estimate box of question `q` is still open (tracked): its conclusions would
    /// give the estimate away.
    pub fn pending_for(&self, q: Question) -> bool {
        self.pending.with(|p| p.iter().any(|(pq, _)| *pq == q))
    }

    /// The learner committed, or asked to see, the estimate of step `step`.
    pub fn open_estimate(&self, q: Question, step: &str) {
        self.pending
            .update(|p| p.retain(|(pq, ps)| !(*pq == q && ps == step)));
    }

    /// The query that opens question `q`'s calculator with step `step` revealed.
    pub fn step_query(&self, q: Question, step: &str) -> String {
        let n = self
            .derivation(q)
            .and_then(|d| d.steps.iter().position(|s| s.id == step))
            .map_or(0, |i| i + 1);
        let base = self.query(q);
        let reveal = format!("reveal={n}");
        if base.is_empty() {
            reveal
        } else {
            format!("{base}&{reveal}")
        }
    }
}

/// Question `q`'s query as last used in its calculator. The roofline question, until the
/// learner opens its calculator, reads the fleet question's (the same workload, model and
/// engine under the same names), so the lesson's two sections work one scenario.
fn stored_query(m: &BTreeMap<String, String>, q: Question) -> String {
    m.get(q.id())
        .or_else(|| {
            (q == Question::Roofline)
                .then(|| m.get(Question::Fleet.id()))
                .flatten()
        })
        .cloned()
        .unwrap_or_default()
}

/// The lesson document, parsed once.
fn doc() -> Result<Doc, String> {
    serde_json::from_str(LESSON_JSON).map_err(|e| format!("The lesson could not be read: {e}"))
}

/// The lesson's own sentences, built from `content/lesson-words.toml` by the build (which
/// refuses a file that does not parse).
fn words() -> LessonWords {
    include!(concat!(env!("OUT_DIR"), "/lesson-words.rs"))
}

/// The page at `/lesson`.
#[component]
pub fn LessonPage() -> impl IntoView {
    let words = words();
    let Ok(doc) = doc() else {
        return view! {
            <section data-testid="page-lesson">
                <h1>"The lesson"</h1>
                <p class="field-error" role="alert" data-testid="lesson-error">
                    "The lesson's text could not be read in this build."
                </p>
            </section>
        }
        .into_any();
    };
    let store = use_progress();
    let queries = Memo::new(move |_| store.progress.with(|p| p.inputs.clone()));
    let ready = trainer_course::sizing::speculation_ready();
    let linked: BTreeMap<Question, RwSignal<bool>> = Question::ALL
        .into_iter()
        .map(|q| (q, RwSignal::new(ready)))
        .collect();
    let derivations = Question::ALL
        .into_iter()
        .map(|q| {
            let relinked = linked[&q];
            let query = Memo::new(move |_| queries.with(|m| stored_query(m, q)));
            let derivation = Memo::new(move |_| {
                relinked.track();
                let inputs = query.with(|s| PageQuery::parse(q, s).inputs);
                derive(q, &inputs).ok().map(Arc::new)
            });
            (q, derivation)
        })
        .collect();
    let estimates = doc
        .all_blocks()
        .into_iter()
        .filter_map(|b| match b {
            Block::Widget { kind, args } if kind == "estimate" => match args.as_slice() {
                [q, step] => Question::from_id(q).map(|q| (q, step.clone())),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let lesson = Lesson {
        queries,
        derivations: StoredValue::new(derivations),
        words: StoredValue::new(words),
        sim: estimate::LessonSim::new(),
        pending: RwSignal::new(estimates),
        linked: StoredValue::new(linked),
    };
    provide_context(lesson);
    let contents = doc
        .contents()
        .into_iter()
        .map(|(id, text)| {
            let (href, testid) = (format!("#{id}"), format!("toc-{id}"));
            view! {
                <li><a href=href data-testid=testid on:click=move |ev| {
                    ev.prevent_default();
                    if let Some(el) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id(&id)) {
                        el.scroll_into_view();
                    }
                }>{text}</a></li>
            }
        })
        .collect_view();
    let title = render::inlines(&doc.title, lesson);
    let body = render::blocks(&doc.blocks, lesson);
    // The fleet question's inputs drive the page; the batch question's, the reversal.
    let used = Signal::derive(move || {
        vec![
            (Question::Fleet, lesson.inputs(Question::Fleet)),
            (Question::Batch, lesson.inputs(Question::Batch)),
        ]
    });
    let reset = Callback::new(move |_| store.reset_inputs());
    view! {
        <div class="lesson" data-testid="page-lesson">
            <nav class="lesson-toc" aria-label="On this page">
                <p class="eyebrow">{crate::shell::site_words().lesson_contents.clone()}</p>
                <ol>{contents}</ol>
            </nav>
            <article class="lesson-article">
                <p class="eyebrow">{crate::shell::site_words().lesson_eyebrow.clone()}</p>
                <h1>{title}</h1>
                <InputsBanner testid="lesson-inputs" inputs=used on_reset=reset/>
                {body}
            </article>
        </div>
    }
    .into_any()
}

/// The lesson's shared state, for its parts.
pub fn use_lesson() -> Lesson {
    expect_context::<Lesson>()
}
