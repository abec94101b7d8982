//! A figure held back until the learner commits an estimate: a visible placeholder that says
//! which estimate opens it and takes the learner there.

use leptos::prelude::*;

/// The placeholder drawn where a figure would give an open estimate's answer away. It keeps
/// the figure's `data-testid` (with `data-hidden`) but carries no value; a click or Enter
/// scrolls to the estimate box `target` (an element id) and focuses its field.
#[component]
pub fn HiddenFigure(
    /// The hidden figure's `data-testid`.
    #[prop(into)]
    testid: String,
    /// What the placeholder says, e.g. "estimate first".
    #[prop(into)]
    text: String,
    /// What screen readers hear after the text (not drawn), e.g. "Hidden until you commit
    /// your estimate of replicas".
    #[prop(into)]
    label: String,
    /// The id of the estimate box that reveals it.
    #[prop(into)]
    target: String,
) -> impl IntoView {
    let go = move |_| {
        let doc = web_sys::window().and_then(|w| w.document());
        if let Some(el) = doc.as_ref().and_then(|d| d.get_element_by_id(&target)) {
            el.scroll_into_view();
            if let Ok(Some(input)) = el.query_selector("input") {
                use wasm_bindgen::JsCast;
                if let Ok(input) = input.dyn_into::<web_sys::HtmlElement>() {
                    let _ = input.focus();
                }
            }
        }
    };
    view! {
        <button type="button" class="hidden-fig" data-testid=testid data-hidden="true" on:click=go>
            {text}<span class="visually-hidden">{format!(" ({label})")}</span>
        </button>
    }
}
