//! Predict, then reveal: the learner types an estimate and commits it before the figure is
//! shown, then sees it beside the derivation and the simulation.

use crate::text::format;
use leptos::prelude::*;

/// A figure to compare an estimate with: its value, how it reads, and a note on where it
/// comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Compared {
    pub value: f64,
    pub shown: String,
    pub note: String,
}

/// What the simulator has to say, as the box shows it.
#[derive(Clone, Debug, PartialEq)]
pub enum SimFigure {
    /// Not run yet: the box offers a button.
    NotRun,
    /// Running, with progress from 0 to 1.
    Running(f64),
    Ready(Compared),
    Failed(String),
}

/// An estimate box. Until the learner commits a number, nothing about the answer shows; then
/// the estimate, the derived figure and the simulated one stand side by side with how far the
/// estimate was off, and `gap` explains any difference between derivation and simulation.
#[component]
pub fn EstimateBox(
    /// Prefix of every `data-testid` inside, e.g. `estimate-replicas`.
    #[prop(into)]
    testid: String,
    /// The question put to the learner, e.g. "How many replicas?".
    #[prop(into)]
    prompt: String,
    /// The unit the estimate is typed in, shown beside the field (may be empty).
    #[prop(into)]
    unit: String,
    /// The derived figure for the learner's inputs, with a link to its step.
    derived: Signal<Option<Compared>>,
    /// Where the derivation lives (an href), for the "see the step" link.
    derived_href: Signal<String>,
    /// The simulator's figure; without it the box compares with the derivation alone.
    #[prop(optional)]
    simulated: Option<Signal<SimFigure>>,
    /// Starts the simulation.
    #[prop(optional)]
    on_simulate: Option<Callback<()>>,
    /// Why the derivation and the simulation differ, once both are known.
    gap: Signal<Option<String>>,
    /// Called with the estimate when the learner commits it.
    on_commit: Callback<f64>,
    /// With a text, a button that shows the answer without an estimate (the button's text),
    /// calling `on_reveal`.
    #[prop(optional, into)]
    reveal_text: Option<String>,
    /// Called when the learner asks for the answer without estimating.
    #[prop(optional)]
    on_reveal: Option<Callback<()>>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let committed: RwSignal<Option<f64>> = RwSignal::new(None);
    // Shown without an estimate: the comparison appears with no estimate in it.
    let peeked = RwSignal::new(false);
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let id = testid.clone();
    let commit = move || {
        let t = text.get_untracked().replace([',', '_', ' '], "");
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => {
                error.set(None);
                committed.set(Some(v));
                on_commit.run(v);
            }
            _ => error.set(Some(
                "Type a number (digits, with an optional decimal point).".into(),
            )),
        }
    };
    let field_id = format!("{id}-field");
    let err_id = format!("{id}-error");
    let t = testid.clone();
    let tp = testid.clone();
    let reveal = move || {
        let est = committed.get();
        (est.is_some() || peeked.get()).then(|| {
            let t = t.clone();
            let derived = derived.get();
            let off = derived
                .as_ref()
                .zip(est)
                .map(|(d, est)| off_by(est, d.value));
            let sim = simulated.map(|simulated| match simulated.get() {
                SimFigure::NotRun => view! {
                    <button class="button" data-testid=format!("{t}-simulate") on:click=move |_| if let Some(f) = on_simulate { f.run(()) }>
                        "Run the simulator"
                    </button>
                }
                .into_any(),
                SimFigure::Running(p) => view! {
                    <span role="status">"Simulating… " <progress max="1" value=p></progress></span>
                }
                .into_any(),
                SimFigure::Ready(c) => view! {
                    <span class="est-value" data-testid=format!("{t}-simulated") data-value=format!("{}", c.value)>{c.shown}</span>
                    <span class="est-note">{c.note}</span>
                }
                .into_any(),
                SimFigure::Failed(m) => view! { <span class="field-error" role="alert">{m}</span> }.into_any(),
            });
            view! {
                <dl class="est-compare" data-testid=format!("{t}-reveal") aria-live="polite">
                    <div>
                        <dt>"Your estimate"</dt>
                        <dd>{match est {
                            Some(est) => view! { <span class="est-value" data-testid=format!("{t}-yours") data-value=format!("{est}")>{format::sig(est, 3)}</span> }.into_any(),
                            None => view! { <span class="est-value muted" data-testid=format!("{t}-yours")>"—"</span> }.into_any(),
                        }}</dd>
                    </div>
                    <div>
                        <dt>"Derived"</dt>
                        <dd>
                            {derived.map(|d| view! {
                                <a class="est-value" href=derived_href.get() data-testid=format!("{t}-derived") data-value=format!("{}", d.value)>{d.shown}</a>
                                <span class="est-note">{d.note}</span>
                            })}
                        </dd>
                    </div>
                    {sim.map(|sim| view! {
                        <div>
                            <dt>"Simulated"</dt>
                            <dd>{sim}</dd>
                        </div>
                    })}
                </dl>
                {off.map(|o| view! { <p class="est-off" data-testid=format!("{t}-off")>{o}</p> })}
                {move || gap.get().map(|g| view! { <p class="est-gap" data-testid=format!("{t}-gap")>{g}</p> })}
            }
        })
    };
    view! {
        <aside class="estimate" id=testid.clone() data-testid=testid.clone() aria-label=format!("Estimate: {prompt}")>
            <p class="est-prompt"><label for=field_id.clone()>{prompt.clone()}</label></p>
            <div class="est-entry">
                <input
                    id=field_id
                    type="text"
                    inputmode="decimal"
                    autocomplete="off"
                    data-testid=format!("{testid}-input")
                    aria-invalid=move || error.get().is_some().to_string()
                    aria-describedby=err_id.clone()
                    prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))
                    on:keydown=move |ev| if ev.key() == "Enter" { commit() }
                />
                <span class="unit">{unit}</span>
                <button class="button primary" data-testid=format!("{testid}-commit") on:click=move |_| commit()>
                    {move || if committed.get().is_some() { "Update my estimate" } else { "Commit my estimate" }}
                </button>
            </div>
            <p class="field-error" id=err_id role="alert">{move || error.get()}</p>
            {move || (committed.get().is_none() && !peeked.get()).then(|| {
                let tp = tp.clone();
                let reveal_button = reveal_text.clone().map(|label| view! {
                    <button class="button link-button" data-testid=format!("{tp}-peek") on:click=move |_| {
                        peeked.set(true);
                        if let Some(f) = on_reveal { f.run(()) }
                    }>{label}</button>
                });
                view! {
                    <p class="muted est-hint">"Commit a number to see the derivation and the simulation." " " {reveal_button}</p>
                }
            })}
            {reveal}
        </aside>
    }
}

/// How far an estimate is from the derived figure, in words.
fn off_by(est: f64, derived: f64) -> String {
    if derived == 0.0 {
        return String::new();
    }
    let r = est / derived - 1.0;
    if r.abs() <= 0.15 {
        format!(
            "Within {} of the derivation: a sound estimate.",
            format::percent(r.abs().max(0.0))
        )
    } else if r > 0.0 {
        format!("{} above the derivation.", format::percent(r))
    } else {
        format!("{} below the derivation.", format::percent(-r))
    }
}
