//! A card: one item of a list of cards, with an optional step number, a heading and a body.

use leptos::prelude::*;

/// One `<li class="card">` of an `<ol class="cards">`. The step number is decoration (the
/// list already numbers its items for assistive technology), so it is `aria-hidden`.
#[component]
pub fn Card(
    /// The card's `data-testid`.
    #[prop(into)]
    testid: String,
    /// The number shown in the card's corner, if any.
    #[prop(optional)]
    step: Option<usize>,
    /// The card's heading (an `<h3>`): its text or link.
    heading: AnyView,
    /// The card's body, under the heading.
    children: Children,
) -> impl IntoView {
    view! {
        <li class="card" data-testid=testid>
            {step.map(|n| view! { <span class="card-step" aria-hidden="true">{n}</span> })}
            <h3>{heading}</h3>
            {children()}
        </li>
    }
}
