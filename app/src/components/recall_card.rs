//! A recall prompt where it is set (a lesson section, a calculator, a build-up) or on the
//! home page's review: the question, a button that shows the answer (with the learner's own
//! figures), then three buttons to grade oneself. The grade goes into the study schedule, and
//! the card says when the prompt comes back.

use crate::progress::{today, use_progress};
use crate::text::fill;
use leptos::prelude::*;
use std::collections::BTreeMap;
use trainer_course::recall::{self, Prompt};
use trainer_course::study::{date, Outcome};

/// One prompt's card. Its `data-testid`s start `recall-<id>`: `-show`, `-answer`,
/// `-right`, `-partly`, `-missed` and `-next`.
#[component]
pub fn RecallCard(
    /// The prompt.
    prompt: &'static Prompt,
    /// Called after the learner graded it (the home page's review moves on).
    #[prop(optional)]
    on_graded: Option<Callback<()>>,
) -> impl IntoView {
    let store = use_progress();
    let words = recall::words();
    let id = prompt.id.as_str();
    let shown = RwSignal::new(false);
    let next: RwSignal<Option<i64>> = RwSignal::new(None);
    // The answer at the inputs last used in each calculator.
    let answer = Memo::new(move |_| {
        let queries: BTreeMap<String, String> = store.progress.with(|p| p.inputs.clone());
        recall::answer(prompt, &queries)
    });
    let grade = move |outcome: Outcome| {
        let due = store.record_recall(id, outcome);
        next.set(Some(due));
        if let Some(cb) = on_graded {
            cb.run(());
        }
    };
    let grade_button = move |outcome: Outcome, text: String, suffix: &'static str| {
        view! {
            <button class="button" type="button" data-testid=format!("recall-{id}-{suffix}")
                on:click=move |_| grade(outcome)>{text}</button>
        }
    };
    let heading_id = format!("recall-{id}-q");
    let labelled_by = heading_id.clone();
    view! {
        <aside class="recall" id=format!("recall-{id}") data-testid=format!("recall-{id}") aria-labelledby=labelled_by>
            <p class="eyebrow">{words.label.clone()}</p>
            <p class="recall-question" id=heading_id><strong>{prompt.question.clone()}</strong></p>
            {move || if shown.get() {
                view! {
                    <p class="recall-answer" data-testid=format!("recall-{id}-answer") aria-live="polite">{answer.get()}</p>
                    {move || match next.get() {
                        None => view! {
                            <p class="muted small">{words.grade.clone()}</p>
                            <div class="recall-grades" role="group" aria-label=words.grade.clone()>
                                {grade_button(Outcome::Right, words.right.clone(), "right")}
                                {grade_button(Outcome::Partly, words.partly.clone(), "partly")}
                                {grade_button(Outcome::Missed, words.missed.clone(), "missed")}
                            </div>
                        }.into_any(),
                        Some(due) => {
                            let text = if due <= today() {
                                words.due_today.clone()
                            } else {
                                fill(&words.due_in, &[("date", date(due))])
                            };
                            view! { <p class="muted small" data-testid=format!("recall-{id}-next") data-due=due.to_string()>{text}</p> }.into_any()
                        }
                    }}
                }.into_any()
            } else {
                view! {
                    <button class="button" type="button" data-testid=format!("recall-{id}-show")
                        on:click=move |_| shown.set(true)>{words.show.clone()}</button>
                }.into_any()
            }}
        </aside>
    }
}

/// The cards of every prompt set at `place`, in order (nothing when there are none).
#[component]
pub fn RecallCards(
    /// A place as `content/recall.toml` writes it (`size/fleet`, `buildups/replica`).
    place: String,
) -> impl IntoView {
    recall::at(&place)
        .into_iter()
        .map(|p| view! { <RecallCard prompt=p/> })
        .collect_view()
}
