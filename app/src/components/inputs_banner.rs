//! Says whose numbers a page shows: the seed's, or the learner's last inputs in a calculator
//! (listed), with a button back to the seed. Its sentences are `content/banner.toml`.

use crate::text::fill;
use leptos::prelude::*;
use trainer_content::words::BannerWords;
use trainer_course::sizing::{Inputs, Question};

/// The banner's sentences (built from `content/banner.toml` by the build, which refuses a file
/// that does not parse).
fn words() -> BannerWords {
    include!(concat!(env!("OUT_DIR"), "/banner-words.rs"))
}

/// Every input that differs from its question's default, as (label, value shown): the first
/// question's unlabelled, the batch question's named as such.
pub fn changed_inputs(inputs: &[(Question, Inputs)], batch_label: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, (q, inp)) in inputs.iter().enumerate() {
        for (label, value) in inp.changed_shown(*q) {
            let label = if i == 0 || *q != Question::Batch {
                label.to_string()
            } else {
                fill(batch_label, &[("label", label.to_string())])
            };
            out.push((label, value));
        }
    }
    out
}

/// A banner at the top of a page that reads the learner's stored calculator inputs. With no
/// changed input it says the page shows the seed; otherwise it lists each changed input
/// (label and value) and offers `on_reset`.
#[component]
pub fn InputsBanner(
    /// Prefix of the `data-testid`s inside, e.g. `lesson-inputs`.
    #[prop(into)]
    testid: String,
    /// The inputs the page uses, by question; the first is the page's own.
    inputs: Signal<Vec<(Question, Inputs)>>,
    /// Puts the seed's inputs back.
    on_reset: Callback<()>,
) -> impl IntoView {
    let w = words();
    let t = testid.clone();
    let body = move || {
        let list = changed_inputs(&inputs.get(), &w.batch);
        if list.is_empty() {
            view! { <p data-testid=format!("{t}-seed")>{w.seed.clone()}</p> }.into_any()
        } else {
            let items = list
                .into_iter()
                .map(|(label, value)| view! { <li><span class="muted">{label}</span>" "<strong>{value}</strong></li> })
                .collect_view();
            view! {
                <p data-testid=format!("{t}-yours")>{w.yours.clone()}</p>
                <ul class="inputs-banner-list" data-testid=format!("{t}-list")>{items}</ul>
                <button class="button" data-testid=format!("{t}-reset") on:click=move |_| on_reset.run(())>
                    {w.reset.clone()}
                </button>
            }
            .into_any()
        }
    };
    view! {
        <aside class="inputs-banner no-print" data-testid=testid role="note">{body}</aside>
    }
}
