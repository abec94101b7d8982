//! A live figure: a computed value with its unit and what it is, optionally linking to where
//! it is derived.

use leptos::prelude::*;

/// A figure the page computes, shown large with a label under it. The value carries its
/// unrounded number in `data-value` for tests; with `derived_at` the value links there.
#[component]
pub fn LiveFigure(
    /// The value's `data-testid`.
    #[prop(into)]
    testid: String,
    /// The unrounded number, in `data-value`.
    value: f64,
    /// The value as people read it, with its unit, e.g. `5.62` or `20 ms`.
    #[prop(into)]
    shown: String,
    /// What the figure is, in a few words.
    #[prop(into)]
    label: String,
    /// Where the figure is derived (a URL or `#fragment`); the value links there.
    #[prop(optional, into)]
    derived_at: Option<String>,
) -> impl IntoView {
    let shown = match derived_at {
        Some(href) => view! { <a href=href>{shown}</a> }.into_any(),
        None => shown.into_any(),
    };
    view! {
        <div class="figure">
            <span class="figure-value" data-testid=testid data-value=format!("{value}")>{shown}</span>
            <span class="figure-label">{label}</span>
        </div>
    }
}
