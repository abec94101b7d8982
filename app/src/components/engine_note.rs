//! Says which engine a run used (the brief's assumptions, the validated engine, or one of its
//! own), with a link to how the validated engine was checked and, where the page offers it, a
//! button that reruns on the other named engine. Its sentences are `content/engines.toml`.

use crate::components::{ConfidenceNote, Link};
use crate::route::Route;
use leptos::prelude::*;
use trainer_content::words::EngineWords;
use trainer_engine::engine::Engine;

/// The sentences about engines (built from `content/engines.toml` by the build).
fn words() -> EngineWords {
    include!(concat!(env!("OUT_DIR"), "/engine-words.rs"))
}

/// The engine a run used, in one sentence, under `data-testid="<testid>"` with
/// `data-engine` set to `brief`, `validated` or `custom`.
#[component]
pub fn EngineNote(
    /// The note's `data-testid`; its button's is `<testid>-switch`.
    #[prop(into)]
    testid: String,
    /// The named engine the run used; `None` for an engine of its own.
    engine: Signal<Option<Engine>>,
    /// When given, a button reruns on the other named engine (called with it).
    #[prop(optional)]
    on_switch: Option<Callback<Engine>>,
) -> impl IntoView {
    let w = words();
    let checked = w.checked.clone();
    let t = testid.clone();
    let confidence = testid.clone();
    let sentence = {
        let w = w.clone();
        move || match engine.get() {
            Some(Engine::Brief) => w.brief.clone(),
            Some(Engine::Validated) => w.validated.clone(),
            None => w.custom.clone(),
        }
    };
    let switch = move || {
        let f = on_switch?;
        let to = match engine.get() {
            Some(Engine::Validated) => Engine::Brief,
            _ => Engine::Validated,
        };
        let label = match to {
            Engine::Validated => w.to_validated.clone(),
            Engine::Brief => w.to_brief.clone(),
        };
        Some(view! {
            <button class="button" type="button" data-testid=format!("{t}-switch") data-to=to.id() on:click=move |_| f.run(to)>
                {label}
            </button>
        })
    };
    view! {
        <div class="engine-note" data-testid=testid.clone()
            data-engine=move || engine.get().map_or("custom", |e| e.id())>
            <p>{sentence} " " <Link to=Route::Simulator>{checked}</Link></p>
            {move || (engine.get() == Some(Engine::Validated))
                .then(|| view! { <ConfidenceNote testid=format!("{confidence}-confidence")/> })}
            {switch}
        </div>
    }
}
