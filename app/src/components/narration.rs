//! A narration: a sentence template from `content/` with its `{name}` placeholders filled by
//! figures read from a simulation, each figure in its own element.

use leptos::prelude::*;
use trainer_course::buildup::Figure;

/// Splits `template` into text and placeholders, in order: `(false, text)` or `(true, name)`.
pub fn pieces(template: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        let Some(j) = rest[i..].find('}') else { break };
        if i > 0 {
            out.push((false, rest[..i].to_string()));
        }
        out.push((true, rest[i + 1..i + j].to_string()));
        rest = &rest[i + j + 1..];
    }
    if !rest.is_empty() {
        out.push((false, rest.to_string()));
    }
    out
}

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
        .map(|(is_fig, s)| {
            if !is_fig {
                return s.into_any();
            }
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
