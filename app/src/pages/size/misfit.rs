//! The banner at the top of the calculator when the replica cannot hold what the question
//! asks (Llama 3.1 70B on one H100): what does not fit, the field that fixes it, and a button
//! that sets the smallest GPUs per replica that fits. It sits above the steps, outside any
//! folded panel, so the learner never meets greyed-out steps without the reason.

use super::simcheck::words;
use super::state::Calc;
use crate::text::fill;
use crate::text::format::{gb, int};
use leptos::prelude::*;
use trainer_course::sizing::{MisfitKind, FIX_FIELD};
use trainer_engine::catalog;

/// Opens the inputs and puts the focus in the field that fixes the misfit.
fn go_to_field(c: Calc, field: &'static str) {
    c.inputs_open.set(true);
    request_animation_frame(move || {
        let el = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id(&format!("in-{field}")));
        if let Some(el) = el {
            el.scroll_into_view_with_bool(false);
            if let Ok(h) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(el) {
                let _ = h.focus();
            }
        }
    });
}

#[component]
pub fn MisfitBanner(c: Calc) -> impl IntoView {
    let q = c.q;
    move || {
        let m = c.misfit.get()?;
        let w = words();
        let (label, model) = c.inputs.with_untracked(|i| {
            let label = i
                .specs(q)
                .into_iter()
                .find(|s| s.name == FIX_FIELD)
                .map_or(FIX_FIELD, |s| s.label);
            let model = catalog::model_by_id(i.model()).map_or_else(String::new, |m| m.name);
            (label, model)
        });
        let gpus = if m.gpus == 1 {
            "1 GPU".to_string()
        } else {
            format!("{} GPUs", m.gpus)
        };
        let what = match m.kind {
            MisfitKind::NoKvRoom => fill(
                &w.misfit_kv,
                &[
                    ("model", model),
                    ("gpus", gpus),
                    ("weights", gb(m.weight_bytes, 4)),
                    ("usable", gb(m.usable_bytes.max(0.0), 4)),
                ],
            ),
            MisfitKind::ChatTooLong => fill(
                &w.misfit_chat,
                &[
                    ("chat", int(m.chat_tokens)),
                    ("pool", int(m.pool_tokens)),
                    ("gpus", gpus),
                ],
            ),
        };
        let field = ("field", label.to_string());
        let fix = m.fix.map(|tp| {
            let fix = ("fix", tp.to_string());
            let how = fill(&w.misfit_field, &[field.clone(), fix.clone()]);
            let button = fill(&w.misfit_fix, &[field.clone(), fix]);
            view! {
                <p class="misfit-how" data-testid="misfit-field">{how}</p>
                <div class="misfit-actions">
                    <button class="button primary" type="button" data-testid="misfit-fix"
                        on:click=move |_| c.set_gpus_per_replica(tp)>{button}</button>
                    <button class="button" type="button" data-testid="misfit-go"
                        on:click=move |_| go_to_field(c, FIX_FIELD)>{w.misfit_go.clone()}</button>
                </div>
            }
        });
        let none = m
            .fix
            .is_none()
            .then(|| view! { <p class="misfit-how" data-testid="misfit-none">{fill(&w.misfit_none, std::slice::from_ref(&field))}</p> });
        Some(view! {
            <section class="misfit" role="alert" data-testid="misfit" data-fix=m.fix.map(|t| t.to_string())>
                <p class="misfit-what" data-testid="misfit-what">{what}</p>
                {fix}
                {none}
            </section>
        })
    }
}
