//! A live figure inside a sentence: a computed value with its unit that links to where it is
//! derived.

use crate::components::Link;
use crate::route::Route;
use leptos::prelude::*;

/// A value in running text, computed from the learner's inputs. It links to the step that
/// derives it; screen readers hear what the figure is as well as its value. The unrounded
/// number is in `data-value` for tests.
#[component]
pub fn InlineFigure(
    /// The figure's `data-testid`.
    #[prop(into)]
    testid: String,
    /// The unrounded number.
    value: f64,
    /// The value as people read it, with its unit, e.g. `32.5 µs`.
    #[prop(into)]
    shown: String,
    /// What the figure is, e.g. "Prefill time per token".
    #[prop(into)]
    label: String,
    /// The page that derives it.
    to: Route,
    /// That page's query string, without `?`.
    #[prop(into)]
    query: String,
    /// The element on that page that derives it, without `#`.
    #[prop(into)]
    fragment: String,
) -> impl IntoView {
    let aria = format!("{shown}: {label}, see how it is derived");
    view! {
        <span class="live-fig" data-testid=testid data-value=format!("{value}") title=label>
            <Link to=to query=query fragment=fragment aria_label=aria class="live-fig-link">
                {shown}
            </Link>
        </span>
    }
}
