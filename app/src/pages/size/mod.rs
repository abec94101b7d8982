//! "Size it up": the tap-through back-of-the-envelope calculator.
//!
//! `/size` lists the questions; `/size/<question>` works one through with every input editable
//! beside the steps. The state (inputs that differ from the presets, how many steps are
//! revealed, the sensitivity's step and the drill's seed) lives in the URL query string
//! (through `crate::url_state`), so a link reproduces the exact derivation.

mod calc;
mod drill;
mod host_check;
mod misfit;
mod roofline;
mod sensitivity;
mod simcheck;
mod state;

use crate::components::Card;
use crate::components::Link;
use crate::progress::use_progress;
use crate::route::{Route, Section};
use crate::shell::site_words;
use leptos::prelude::*;
use trainer_course::sizing::Question;

/// The roofline plot's words (the roofline question's page and the lesson draw it).
pub fn plot_words() -> &'static trainer_content::words::RooflineWords {
    &simcheck::words().roofline
}

/// `/size`: the list of questions.
#[component]
pub fn SizeIndex() -> impl IntoView {
    view! {
        <section data-testid="page-size">
            <p class="eyebrow">{Section::Size.label()}</p>
            <h1>{site_words().size_title.clone()}</h1>
            <p class="lede">{site_words().size_lede.clone()}</p>
            <QuestionCards/>
        </section>
    }
}

/// `/size/<question>`: one question worked step by step, or a clear message for an unknown id.
#[component]
pub fn SizePage(question: String) -> impl IntoView {
    match Question::from_id(&question) {
        Some(q) => view! { <calc::Calculator q=q/> }.into_any(),
        None => view! {
            <section data-testid="size-unknown">
                <p class="eyebrow">{Section::Size.label()}</p>
                <h1>"No such question"</h1>
                <p>
                    "There is no sizing question called " <code>{question}</code>
                    ". These are the ones there are:"
                </p>
                <QuestionCards/>
            </section>
        }
        .into_any(),
    }
}

/// One card per question, with its prompt.
#[component]
fn QuestionCards() -> impl IntoView {
    let store = use_progress();
    let cards = Question::ALL
        .into_iter()
        .enumerate()
        .map(|(i, q)| {
            view! {
                <Card
                    testid=format!("question-{}", q.id())
                    step=i + 1
                    heading=view! { <Link to=Route::Size(q.id().into()) testid=format!("open-{}", q.id())>{q.title()}</Link> }.into_any()
                >
                    <p>{q.prompt()}</p>
                    <p class="size-card-status" data-testid=format!("status-size-{}", q.id())>
                        {move || {
                            let key = format!("size/{}", q.id());
                            if store.progress.with(|p| p.done.contains(&key)) { "✓ Worked through" } else { "Not worked through yet" }
                        }}
                    </p>
                </Card>
            }
        })
        .collect_view();
    view! {
        <h2 class="visually-hidden">"The questions"</h2>
        <ol class="cards size-cards">{cards}</ol>
    }
}
