//! A build-up step's narration block: its title, its narration with the chapter's figures,
//! and what to watch, the same in both build-ups.

use crate::components::Narration;
use leptos::prelude::*;
use trainer_content::buildup::{Script, StepScript, Told};
use trainer_course::buildup::{Chapter, Variant};

/// The narration that fits a chapter: its text, or the text for a run without its event,
/// with each phrase that states a count chosen by the chapter's figure
/// (`StepScript::narration`).
fn text_for(s: &StepScript, c: &Chapter) -> String {
    let told = match c.variant {
        Variant::Happened => Told::Happened,
        Variant::Absent => Told::Absent,
        Variant::Split => Told::Split,
    };
    s.narration(told, |name| c.figure(name).map(|f| f.value))
}

/// The narration of `chapter` from its step in `script` (`data-testid="narration"`, with
/// `data-step`, the step's title, text and what to watch); nothing when the script has no such
/// step.
#[component]
pub fn StepNarration(
    /// The build-up's script.
    script: StoredValue<Script>,
    /// The chapter shown: the step's id, its variant and its figures.
    chapter: Chapter,
) -> impl IntoView {
    let c = chapter;
    let words = script.with_value(|sc| {
        let st = sc.step(&c.id)?;
        Some((st.title.clone(), text_for(st, &c), st.watch.clone()))
    });
    words.map(|(title, text, watch)| {
        view! {
            <div class="buildup-narration" data-testid="narration" data-step=c.id>
                <h2 data-testid="step-title">{title}</h2>
                <Narration testid="step-text" template=text figures=c.figures.clone()/>
                {watch.map(|w| view! { <p class="buildup-watch" data-testid="step-watch">{w}</p> })}
            </div>
        }
    })
}
