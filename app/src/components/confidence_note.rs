//! How far the validated engine landed from published measurements, regime by regime: a
//! disclosure under a run's engine note. Opening it replays the measurements in the
//! simulators' workers (once a session: the outcomes are kept), and the lines are filled from
//! the course's `validation::regimes`, the same figures as the "How close is the simulator?"
//! page.

use crate::sim_client::{control, submit, JobHandle};
use leptos::prelude::*;
use std::cell::{OnceCell, RefCell};
use trainer_course::jobs::{self, Control, Job, Reply};
use trainer_course::validation::{about, regime_line, regimes, shipped, ConfidenceWords, Outcome};

thread_local! {
    /// The replayed rows, once every one has come back.
    static KEPT: RefCell<Option<Vec<Outcome>>> = const { RefCell::new(None) };
    /// The note's words, read once: a lab run draws a note with every live result.
    static WORDS: OnceCell<Option<ConfidenceWords>> = const { OnceCell::new() };
}

/// A `<details>` under `data-testid="<testid>"`; its lines carry `data-testid="<testid>-line"`
/// and `data-regime`.
#[component]
pub fn ConfidenceNote(
    /// The disclosure's `data-testid`.
    #[prop(into)]
    testid: String,
) -> impl IntoView {
    let Some(words) = WORDS.with(|w| w.get_or_init(|| about().ok().map(|a| a.confidence)).clone())
    else {
        return ().into_any();
    };
    let outcomes: RwSignal<Option<Vec<Outcome>>> = RwSignal::new(KEPT.with(|k| k.borrow().clone()));
    let handles: StoredValue<Vec<JobHandle>> = StoredValue::new(Vec::new());
    let replay = move || {
        if outcomes.with_untracked(Option::is_some) || !handles.with_value(Vec::is_empty) {
            return;
        }
        let rows = shipped().map(|m| m.row.len()).unwrap_or(0);
        // Each row's reply: its outcome, or None when it failed (left out of the note).
        let got: RwSignal<Vec<Option<Option<Outcome>>>> = RwSignal::new(vec![None; rows]);
        let hs = (0..rows)
            .map(|i| {
                submit(Job::Validation(i), move |reply| {
                    let o = match reply {
                        Reply::Done(jobs::Outcome::Validation(Ok(o))) => Some(*o),
                        Reply::Done(_) | Reply::Failed(_) => None,
                        _ => return,
                    };
                    let _ = got.try_update(|g| g[i] = Some(o));
                    let all = got.try_with_untracked(|g| {
                        g.iter()
                            .all(Option::is_some)
                            .then(|| g.iter().flatten().flatten().cloned().collect::<Vec<_>>())
                    });
                    if let Some(Some(all)) = all {
                        KEPT.with(|k| *k.borrow_mut() = Some(all.clone()));
                        let _ = outcomes.try_set(Some(all));
                    }
                })
            })
            .collect();
        handles.set_value(hs);
    };
    on_cleanup(move || {
        if outcomes
            .try_with_untracked(Option::is_none)
            .unwrap_or(false)
        {
            for h in handles.try_get_value().unwrap_or_default() {
                control(h, Control::Cancel);
            }
        }
    });
    let line_id = format!("{testid}-line");
    let (summary, intro, waiting) = (
        words.summary.clone(),
        words.intro.clone(),
        words.waiting.clone(),
    );
    view! {
        <details class="confidence-note" data-testid=testid
            on:toggle=move |e| {
                use wasm_bindgen::JsCast;
                let open = e
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                    .is_some_and(|d| d.has_attribute("open"));
                if open {
                    replay();
                }
            }>
            <summary>{summary}</summary>
            {move || match outcomes.get() {
                None => view! { <p class="muted" role="status">{waiting.clone()}</p> }.into_any(),
                Some(all) => {
                    let fits = regimes(&all);
                    let line_id = line_id.clone();
                    view! {
                        <p>{intro.clone()}</p>
                        <ul>
                            {fits.iter().map(|f| view! {
                                <li data-testid=line_id.clone() data-regime=format!("{:?}", f.regime)>{regime_line(&words, f)}</li>
                            }).collect_view()}
                        </ul>
                    }.into_any()
                }
            }}
        </details>
    }
    .into_any()
}
