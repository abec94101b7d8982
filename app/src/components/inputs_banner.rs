//! Says whose numbers a page shows: the seed's, or the learner's last inputs in a calculator
//! (listed), with a button back to the seed.

use leptos::prelude::*;

/// A banner at the top of a page that reads the learner's stored calculator inputs. With no
/// changed input it says the page shows the seed; otherwise it lists each changed input
/// (label and value) and offers `reset`.
#[component]
pub fn InputsBanner(
    /// Prefix of the `data-testid`s inside, e.g. `lesson-inputs`.
    #[prop(into)]
    testid: String,
    /// The inputs that differ from the seed, as (label, value shown); empty at the seed.
    changed: Signal<Vec<(String, String)>>,
    /// The sentence shown at the seed.
    #[prop(into)]
    seed_text: String,
    /// The sentence that introduces the list of changed inputs.
    #[prop(into)]
    yours_text: String,
    /// The reset button's text.
    #[prop(into)]
    reset_text: String,
    /// Puts the seed's inputs back.
    on_reset: Callback<()>,
) -> impl IntoView {
    let t = testid.clone();
    let body = move || {
        let list = changed.get();
        if list.is_empty() {
            view! { <p data-testid=format!("{t}-seed")>{seed_text.clone()}</p> }.into_any()
        } else {
            let items = list
                .into_iter()
                .map(|(label, value)| view! { <li><span class="muted">{label}</span>" "<strong>{value}</strong></li> })
                .collect_view();
            view! {
                <p data-testid=format!("{t}-yours")>{yours_text.clone()}</p>
                <ul class="inputs-banner-list" data-testid=format!("{t}-list")>{items}</ul>
                <button class="button" data-testid=format!("{t}-reset") on:click=move |_| on_reset.run(())>
                    {reset_text.clone()}
                </button>
            }
            .into_any()
        }
    };
    view! {
        <aside class="inputs-banner no-print" data-testid=testid role="note">{body}</aside>
    }
}
