//! A live figure: a value the page computes, with its unit and what it is, optionally linking
//! to where it is derived; shown large with its label under it, or inside a sentence.

use crate::components::Link;
use crate::route::Route;
use leptos::prelude::*;

/// Where a figure is derived: an in-app page, its query and the element that derives it.
#[derive(Clone, Debug, PartialEq)]
pub struct DerivedAt {
    /// The page that derives it.
    pub to: Route,
    /// That page's query string, without `?`.
    pub query: String,
    /// The element on that page that derives it, without `#`.
    pub fragment: String,
}

/// A figure computed from the learner's inputs or a run. The element with `testid` carries
/// the unrounded number in `data-value` for tests. With `derived_at` the value links there,
/// and screen readers hear what the figure is as well as its value. `inline` puts it inside a
/// sentence (the label becomes its title); otherwise it is shown large with the label under it.
#[component]
pub fn Figure(
    /// The value's `data-testid`.
    #[prop(into)]
    testid: String,
    /// The unrounded number, in `data-value`.
    value: f64,
    /// The value as people read it, with its unit, e.g. `32.5 µs` or `5.62`.
    #[prop(into)]
    shown: String,
    /// What the figure is, in a few words, e.g. "Prefill time per token".
    #[prop(into)]
    label: String,
    /// Where the figure is derived; the value links there.
    #[prop(optional)]
    derived_at: Option<DerivedAt>,
    /// Inside a sentence: the value alone, its label as its title.
    #[prop(optional)]
    inline: bool,
) -> impl IntoView {
    let value = format!("{value}");
    let shown = match derived_at {
        Some(d) => {
            let aria = format!("{shown}: {label}, see how it is derived");
            view! {
                <Link to=d.to query=d.query fragment=d.fragment aria_label=aria class="live-fig-link">
                    {shown}
                </Link>
            }
            .into_any()
        }
        None => shown.into_any(),
    };
    if inline {
        view! { <span class="live-fig" data-testid=testid data-value=value title=label>{shown}</span> }
            .into_any()
    } else {
        view! {
            <div class="figure">
                <span class="figure-value" data-testid=testid data-value=value>{shown}</span>
                <span class="figure-label">{label}</span>
            </div>
        }
        .into_any()
    }
}
