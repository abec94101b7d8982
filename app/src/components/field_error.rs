//! The message under a form field, and what ties the field to it.

use leptos::prelude::*;

/// A field's message: what it says (if anything) and the element that shows it, whose `id`
/// the field's `aria-describedby` names and whose `data-testid` tests read.
#[derive(Clone)]
pub struct FieldMessage {
    pub error: Signal<Option<String>>,
    pub id: String,
    pub testid: String,
}

impl FieldMessage {
    /// A message shown in the element `id`, which is also its `data-testid`.
    pub fn new(error: impl Into<Signal<Option<String>>>, id: impl Into<String>) -> FieldMessage {
        let id = id.into();
        FieldMessage {
            error: error.into(),
            testid: id.clone(),
            id,
        }
    }

    /// A field that never has a message (a choice with no wrong answer), its message
    /// element still named `id`.
    pub fn never(id: impl Into<String>) -> FieldMessage {
        FieldMessage::new(Signal::derive(|| None::<String>), id)
    }

    /// The same message under another `data-testid`.
    pub fn testid(self, testid: impl Into<String>) -> FieldMessage {
        FieldMessage {
            testid: testid.into(),
            ..self
        }
    }
}

/// The attributes a field sets from its message: whether it is invalid, and the id its
/// `aria-describedby` names while there is a message.
pub struct FieldAria {
    pub invalid: Signal<String>,
    pub described_by: Signal<Option<String>>,
}

impl FieldAria {
    /// For a field with this message.
    pub fn new(message: &FieldMessage) -> FieldAria {
        let (error, id) = (message.error, message.id.clone());
        FieldAria {
            invalid: Signal::derive(move || error.with(Option::is_some).to_string()),
            described_by: Signal::derive(move || error.with(|e| e.as_ref().map(|_| id.clone()))),
        }
    }
}

/// The message under a field, shown while it holds one.
#[component]
pub fn FieldError(
    /// The message, its `id` and its `data-testid`.
    message: FieldMessage,
) -> impl IntoView {
    let FieldMessage { error, id, testid } = message;
    move || {
        error.get().map(|m| {
            view! { <p class="field-error" id=id.clone() data-testid=testid.clone()>{m}</p> }
        })
    }
}
