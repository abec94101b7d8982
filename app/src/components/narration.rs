//! A narration: a sentence template from `content/` with its `{name}` placeholders filled by
//! figures read from a simulation, each figure in its own element.

use crate::text::{pieces, Piece};
use leptos::prelude::*;
use trainer_course::buildup::Figure;

/// A paragraph of narration. Each figure shows its text in a `<strong>` with
/// `data-testid="fig-<name>"` and its unrounded value in `data-value`; a placeholder without a
/// figure shows an em dash marked `missing` (its name in `data-missing`), never a raw `{name}`
/// (`course/tests/buildups.rs` checks every placeholder of every run has its figure).
#[component]
pub fn Narration(
    /// The paragraph's `data-testid`.
    #[prop(into)]
    testid: String,
    /// The template, with `{name}` placeholders.
    #[prop(into)]
    template: String,
    /// The figures that fill it.
    figures: Vec<Figure>,
) -> impl IntoView {
    let parts = pieces(&template)
        .into_iter()
        .map(|piece| {
            let s = match piece {
                Piece::Text(t) => return t.to_string().into_any(),
                Piece::Name(n) => n.to_string(),
                // Shipped templates close every brace (a native test); a tail that does not is
                // left out, as `fill_or_dash` leaves it.
                Piece::Unclosed(_) => return ().into_any(),
            };
            match figures.iter().find(|f| f.name == s) {
                Some(f) => view! {
                    <strong class="narrated" data-testid=format!("fig-{}", f.name) data-value=format!("{}", f.value)>
                        {f.text.clone()}
                    </strong>
                }
                .into_any(),
                None => view! { <span class="narrated missing" data-missing=s.clone()>"—"</span> }.into_any(),
            }
        })
        .collect_view();
    view! { <p class="narration-text" data-testid=testid>{parts}</p> }
}
