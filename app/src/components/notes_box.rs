//! A labelled box for notes.

use leptos::prelude::*;

/// A labelled multi-line text box whose text lives in `text` (the page keeps and saves it).
#[component]
pub fn NotesBox(
    /// The element id of the text box, unique on the page.
    #[prop(into)]
    id: String,
    /// The visible label.
    #[prop(into)]
    label: String,
    /// The notes.
    text: RwSignal<String>,
    /// A short line under the box saying what the notes are for.
    #[prop(optional, into)]
    help: String,
    /// `data-testid` of the text box.
    #[prop(into)]
    testid: String,
) -> impl IntoView {
    let help_id = format!("{id}-help");
    let described = (!help.is_empty()).then(|| help_id.clone());
    view! {
        <div class="notes-box">
            <label for=id.clone()>{label}</label>
            <textarea id=id rows="4" data-testid=testid aria-describedby=described
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))></textarea>
            {(!help.is_empty()).then(|| view! { <p class="muted notes-help" id=help_id>{help}</p> })}
        </div>
    }
}
