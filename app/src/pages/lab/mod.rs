//! `/lab`: every knob of the fleet simulator, live plots, runs to compare and share.
//!
//! The state (`state.rs`) holds the set-up read from the URL and the run advanced a slice
//! per animation frame; the panel (`panel.rs`) edits the set-up through the core's knobs; the
//! results (`results.rs`) draw what the core's `LabResult` holds. The page parses no query
//! string and computes no figure of its own: `trainer_course::lab` does both.

mod panel;
mod results;
mod state;

use crate::components::Deferred;
use leptos::prelude::*;
use state::Lab;

#[component]
pub fn LabPage() -> impl IntoView {
    let text = trainer_course::lab::text();
    let Ok(text) = text else {
        let m = text.err().map(|e| e.to_string()).unwrap_or_default();
        return view! { <p class="field-error" role="alert">{m}</p> }.into_any();
    };
    let share = text.share.clone();
    let (title, intro) = (text.title.clone(), text.intro.clone());
    view! {
        <section class="lab" data-testid="page-lab">
            <p class="eyebrow">"Lab"</p>
            <h1>{title}</h1>
            <p class="lede">{intro}</p>
            <p class="muted small" data-testid="lab-share">{share}</p>
            // The lab's state (the set-up read from the URL) is made in a region of its own,
            // a slice after the heading, and the rest is drawn a region per slice on the
            // first page (`Deferred`): built at once, the lab was one task of about 130 ms on
            // a desktop, four times that on a phone.
            <Deferred><LabBody text=text/></Deferred>
        </section>
    }
    .into_any()
}

/// The panel, the controls and the results, around the lab's state.
#[component]
fn LabBody(text: trainer_course::lab::LabText) -> impl IntoView {
    let lab = Lab::new();
    let panel_text = text.clone();
    view! {
        <div class="lab-layout">
            <Deferred><panel::Panel lab=lab text=panel_text/></Deferred>
            <div class="lab-main">
                <Deferred><results::Controls lab=lab/></Deferred>
                <Deferred><results::Results lab=lab text=text/></Deferred>
            </div>
        </div>
    }
}
