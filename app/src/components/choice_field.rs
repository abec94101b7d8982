//! A choice field: a label and a `<select>` of options, with a message under it when the
//! choice is wrong.

use super::field_error::{FieldAria, FieldError, FieldMessage};
use leptos::prelude::*;

/// A labelled `<select>`. While `error` holds a message the select gets `aria-invalid="true"`
/// and `aria-describedby` naming the message, which shows under it.
#[component]
pub fn ChoiceField(
    /// The select's `id`, which the label points to.
    #[prop(into)]
    id: String,
    /// The select's `data-testid`.
    #[prop(into)]
    testid: String,
    /// The label's text.
    label: &'static str,
    /// The options, in order, as (value, label) pairs.
    options: Vec<(String, String)>,
    /// The value of the option selected.
    #[prop(into)]
    selected: Signal<String>,
    /// The message to show under the field, if the choice is wrong.
    message: FieldMessage,
    /// Whether the field is disabled.
    #[prop(into, optional)]
    disabled: Signal<bool>,
    /// Called with the value of the option chosen.
    #[prop(into)]
    on_change: Callback<String>,
) -> impl IntoView {
    let aria = FieldAria::new(&message);
    let message = view! { <FieldError message=message/> };
    let options = options
        .into_iter()
        .map(|(value, text)| {
            let v = value.clone();
            view! { <option value=value selected=move || selected.with(|s| *s == v)>{text}</option> }
        })
        .collect_view();
    view! {
        <div class="field field-choice">
            <label for=id.clone()>{label}</label>
            <select
                id=id
                data-testid=testid
                disabled=move || disabled.get()
                aria-invalid=aria.invalid
                aria-describedby=aria.described_by
                on:change=move |ev| on_change.run(event_target_value(&ev))
            >
                {options}
            </select>
            {message}
        </div>
    }
}
