//! A parameter field: a number or a choice, whichever the parameter takes, for panels of
//! many settings (the lab's).

use super::{ChoiceField, FieldMessage, NumberField};
use leptos::prelude::*;

/// What a parameter takes.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    /// A number typed as text (whole when `integer`), with the valid range in words.
    Number { integer: bool, hint: String },
    /// One of these options, as (value, label).
    Choice(Vec<(String, String)>),
}

/// A labelled field for one parameter, drawn as a [`NumberField`] or a [`ChoiceField`].
/// The field is drawn again only when its label, unit or kind changes (never on a
/// keystroke, so typing keeps its focus); its value and message follow their signals.
#[component]
pub fn ParamField(
    /// The parameter's key: the input's id is `param-<key>`, its `data-testid` is
    /// `param-<key>` and its message's `param-<key>-error`.
    #[prop(into)]
    key: String,
    /// The label (it may change with other settings).
    #[prop(into)]
    label: Signal<&'static str>,
    /// The unit shown after a number ("" for none).
    #[prop(into)]
    unit: Signal<&'static str>,
    /// What the field takes (a choice's options may change with other settings).
    #[prop(into)]
    kind: Signal<ParamKind>,
    /// The field's text or the option selected.
    #[prop(into)]
    value: Signal<String>,
    /// The message under the field, if any.
    #[prop(into)]
    error: Signal<Option<String>>,
    /// Whether the parameter applies to the current settings (otherwise disabled).
    #[prop(into)]
    enabled: Signal<bool>,
    /// Whether the value differs from the preset's.
    #[prop(into)]
    custom: Signal<bool>,
    /// Called with the new text or option.
    #[prop(into)]
    on_change: Callback<String>,
) -> impl IntoView {
    let disabled = Signal::derive(move || !enabled.get());
    move || {
        let id = format!("param-{key}");
        let error_id = format!("{id}-error");
        match kind.get() {
            ParamKind::Number { integer, hint } => view! {
                <NumberField
                    id=id.clone()
                    testid=id.clone()
                    label=label.get()
                    unit=unit.get()
                    value=value
                    hint=hint
                    integer=integer
                    message=FieldMessage::new(error, error_id.clone())
                    custom=custom
                    disabled=disabled
                    on_input=on_change
                />
            }
            .into_any(),
            ParamKind::Choice(options) => view! {
                <ChoiceField
                    id=id.clone()
                    testid=id
                    label=label.get()
                    options=options
                    selected=value
                    message=FieldMessage::new(error, error_id.clone())
                    disabled=disabled
                    on_change=on_change
                />
            }
            .into_any(),
        }
    }
}
