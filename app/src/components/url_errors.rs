//! What was wrong with the link a page was opened with: one sentence per value it did not use.

use leptos::prelude::*;

/// Longest value a sentence quotes (a link can carry thousands of characters).
const QUOTED: usize = 40;

/// The sentence for a value of the link that the page does not use: "The link's step=9 is not
/// used: it must be a step from 1 to 6." `why` completes "it ...". A long value is clipped.
pub fn link_sentence(key: &str, value: &str, why: &str) -> String {
    let mut shown: String = value.chars().take(QUOTED).collect();
    if value.chars().count() > QUOTED {
        shown.push('…');
    }
    format!("The link's {key}={shown} is not used: it {why}.")
}

/// The link's problems, if any, as a notice (`data-testid="url-errors"`), one paragraph each.
#[component]
pub fn UrlErrors(
    /// The sentences, as [`link_sentence`] writes them.
    #[prop(into)]
    errors: Signal<Vec<String>>,
) -> impl IntoView {
    move || {
        let e = errors.get();
        (!e.is_empty()).then(|| {
            view! {
                <div class="notice" role="alert" data-testid="url-errors">
                    {e.into_iter().map(|m| view! { <p>{m}</p> }).collect_view()}
                </div>
            }
        })
    }
}
