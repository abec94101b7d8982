//! "Size it up": the tap-through back-of-the-envelope calculator (being built).

use crate::pages::planned;
use crate::route::Section;
use leptos::prelude::*;

/// `/size`: the list of questions.
#[component]
pub fn SizeIndex() -> impl IntoView {
    planned::page(Section::Size)
}

/// `/size/<question>`: one question worked step by step.
#[component]
pub fn SizePage(question: String) -> impl IntoView {
    let _ = question;
    planned::page(Section::Size)
}
