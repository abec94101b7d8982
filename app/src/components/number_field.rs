//! A number field: label, text input, unit, and a message under it when the text is wrong.

use super::field_error::{FieldAria, FieldError, FieldMessage};
use leptos::prelude::*;

/// A labelled text field for a number, with its unit after it. While `error` holds a message
/// the field is marked `invalid`, the input gets `aria-invalid="true"` and
/// `aria-describedby` naming the message, which shows under it.
#[component]
pub fn NumberField(
    /// The input's `id`, which the label points to.
    #[prop(into)]
    id: String,
    /// The input's `data-testid`.
    #[prop(into)]
    testid: String,
    /// The label's text.
    label: &'static str,
    /// The unit shown after the input; nothing is shown when it is empty.
    unit: &'static str,
    /// The text in the input, set as a property so typing is never overwritten by markup.
    #[prop(into)]
    value: Signal<String>,
    /// The valid range in words, shown as the input's `title`.
    #[prop(into)]
    hint: String,
    /// Whether the number is whole (`inputmode="numeric"`) rather than decimal.
    integer: bool,
    /// The message to show under the field, if the text is wrong.
    message: FieldMessage,
    /// Whether the value differs from its preset (the field is marked `custom`).
    #[prop(into, optional)]
    custom: Signal<bool>,
    /// Whether the field is disabled (it does not apply to the current settings).
    #[prop(into, optional)]
    disabled: Signal<bool>,
    /// Called with the input's text on every keystroke.
    #[prop(into)]
    on_input: Callback<String>,
    /// Shown inside the label after its text, e.g. a button that resets the field.
    #[prop(optional)]
    children: Option<Children>,
) -> impl IntoView {
    let aria = FieldAria::new(&message);
    let error = message.error;
    let message = view! { <FieldError message=message/> };
    view! {
        <div class="field" class:invalid=move || error.with(Option::is_some) class:custom=move || custom.get()>
            <label for=id.clone()>
                {label}
                {children.map(|c| c())}
            </label>
            <div class="field-input">
                <input
                    id=id
                    type="text"
                    inputmode=if integer { "numeric" } else { "decimal" }
                    autocomplete="off"
                    spellcheck="false"
                    data-testid=testid
                    title=hint
                    disabled=move || disabled.get()
                    prop:value=move || value.get()
                    aria-invalid=aria.invalid
                    aria-describedby=aria.described_by
                    on:input=move |ev| on_input.run(event_target_value(&ev))
                />
                {(!unit.is_empty()).then(|| view! { <span class="unit">{unit}</span> })}
            </div>
            {message}
        </div>
    }
}
