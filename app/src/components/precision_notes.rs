//! What the chosen number formats change and what they may cost in quality: one note per
//! format that is not BF16 (FP8 weights only, FP8 weights and activations, an FP8 KV cache),
//! each with its figures from the cost model and its published source. Nothing shows while
//! everything is BF16.

use leptos::prelude::*;
use trainer_course::precision::Note;

/// The notes, under `data-testid="<testid>"`; each note is `<testid>-<id>`.
#[component]
pub fn PrecisionNotes(
    /// The container's `data-testid`.
    #[prop(into)]
    testid: String,
    /// The notes for the formats chosen (empty: nothing is drawn).
    #[prop(into)]
    notes: Signal<Vec<Note>>,
) -> impl IntoView {
    move || {
        let list = notes.get();
        (!list.is_empty()).then(|| {
            let items = list
                .into_iter()
                .map(|n| {
                    view! {
                        <li class="precision-note" data-testid=format!("{testid}-{}", n.id)>
                            <strong>{n.title}</strong>
                            " "
                            <span>{n.changes}</span>
                            <p class="muted small">
                                <span class="precision-caveat">"Quality: "{n.caveat}</span>
                                " "
                                <a href=n.url rel="noopener noreferrer" target="_blank">{n.source}</a>
                            </p>
                        </li>
                    }
                })
                .collect_view();
            view! {
                <ul class="precision-notes" aria-label="What the number formats change" data-testid=testid.clone()>
                    {items}
                </ul>
            }
        })
    }
}
