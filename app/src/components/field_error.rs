//! The message under a form field, and what ties the field to it.

use leptos::prelude::*;

/// The attributes a field sets from its message: whether it is invalid, and the id its
/// `aria-describedby` names while there is a message.
pub struct FieldAria {
    pub invalid: Signal<String>,
    pub described_by: Signal<Option<String>>,
}

impl FieldAria {
    /// For a field whose message, when there is one, is the element with id `error_id`.
    pub fn new(error: Signal<Option<String>>, error_id: String) -> FieldAria {
        FieldAria {
            invalid: Signal::derive(move || error.with(Option::is_some).to_string()),
            described_by: Signal::derive(move || {
                error.with(|e| e.as_ref().map(|_| error_id.clone()))
            }),
        }
    }
}

/// The message under a field, shown while `error` holds one.
#[component]
pub fn FieldError(
    /// The message, if there is one.
    #[prop(into)]
    error: Signal<Option<String>>,
    /// The message's `id`, which the field's `aria-describedby` names.
    #[prop(into)]
    id: String,
    /// The message's `data-testid`.
    #[prop(into)]
    testid: String,
) -> impl IntoView {
    move || {
        error.get().map(|m| {
            view! { <p class="field-error" id=id.clone() data-testid=testid.clone()>{m}</p> }
        })
    }
}
