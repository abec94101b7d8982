//! The figures the candidate says at the sizing stage: typed, checked against the fleet
//! question's derivation at the mock's load (`trainer_course::mock::expected_figures`, graded by
//! `grade_figure` within each figure's stated tolerance), the derivation shown for a miss with
//! a link to its step, and each checked figure fed to the review schedule. A checked figure is
//! final; an entry that is not a positive number gets a message and can be fixed. The
//! interviewer sees the derived figures beside the prompt ([`ExpectedFigures`]).

use super::Session;
use crate::components::PathLink;
use crate::progress::use_progress;
use leptos::prelude::*;
use std::collections::BTreeMap;
use trainer_course::mock::{expected_figures, grade_figure, ExpectedFigure, Mock};
use trainer_course::sizing::Question;

/// The figures as the derivation gives them at the mock's load, or why they cannot be.
fn expected(m: &Mock) -> Result<Vec<ExpectedFigure>, String> {
    m.figures
        .load()
        .and_then(|load| expected_figures(m, &load))
        .map_err(|e| e.to_string())
}

/// The fields, the check, and the marks.
#[component]
pub fn FigureCheck(s: Session) -> impl IntoView {
    let store = use_progress();
    let m = s.mock.get_value();
    let words = m.figures.words.clone();
    let list = match expected(&m) {
        Ok(l) => l,
        Err(e) => {
            return view! { <p class="field-error" role="alert" data-testid="figures-error">{e}</p> }
                .into_any()
        }
    };
    // Why an entry was not graded, by figure id (set when the figures are checked).
    let refused: RwSignal<BTreeMap<String, String>> = RwSignal::new(BTreeMap::new());
    let list = StoredValue::new(list);
    let mock = StoredValue::new(m);
    let check = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let done: Vec<String> = s
            .marks
            .with_untracked(|v| v.iter().map(|r| r.id.clone()).collect());
        let mut why = BTreeMap::new();
        let mut new = Vec::new();
        list.with_value(|list| {
            for e in list.iter().filter(|e| !done.contains(&e.id)) {
                let text = s
                    .figure_text(&e.id)
                    .map(|t| t.get_untracked())
                    .unwrap_or_default();
                match mock.with_value(|m| grade_figure(m, e, &text)) {
                    Ok(r) => new.push(r),
                    Err(w) => {
                        why.insert(e.id.clone(), w);
                    }
                }
            }
        });
        refused.set(why);
        if !new.is_empty() {
            store.record_figures(Question::Fleet.id(), &new);
            s.marks.update(|v| v.extend(new));
        }
    };
    let fields = list.with_value(|list| {
        list.iter()
            .map(|e| view! { <FigureField s=s e=e.clone() refused=refused mock=mock/> })
            .collect_view()
    });
    let all_checked = move || {
        let n = list.with_value(Vec::len);
        s.marks.with(|v| v.len() >= n)
    };
    let summary = move || mock.with_value(|m| s.marks.with(|v| m.figures.summary(v)));
    view! {
        <section class="figures" data-testid="figures" aria-labelledby="figures-h">
            <h3 id="figures-h">{words.heading.clone()}</h3>
            <p class="muted">{words.intro.clone()}</p>
            <form class="figures-form" on:submit=check>
                <div class="figures-grid">{fields}</div>
                <button class="button primary" type="submit" data-testid="figures-check"
                    disabled=all_checked>{words.check.clone()}</button>
            </form>
            <p role="status" data-testid="figures-summary">{summary}</p>
        </section>
    }
    .into_any()
}

/// One figure: its field, its tolerance, and once checked its mark (with the derivation when
/// it was missed).
#[component]
fn FigureField(
    s: Session,
    e: ExpectedFigure,
    refused: RwSignal<BTreeMap<String, String>>,
    mock: StoredValue<Mock>,
) -> impl IntoView {
    let id = e.id.clone();
    let text = s
        .figure_text(&id)
        .unwrap_or_else(|| RwSignal::new(String::new()));
    let (i1, i2) = (id.clone(), id.clone());
    let mark = Memo::new(move |_| s.marks.with(|v| v.iter().find(|r| r.id == i1).cloned()));
    let error = Signal::derive(move || refused.with(|r| r.get(&i2).cloned()));
    let input_id = format!("figure-{id}");
    let tol_id = format!("figure-{id}-tolerance");
    let err_id = format!("figure-{id}-error");
    let described = {
        let (t, e2) = (tol_id.clone(), err_id.clone());
        move || {
            if error.with(Option::is_some) {
                format!("{t} {e2}")
            } else {
                t.clone()
            }
        }
    };
    let error_view = {
        let (eid, etid) = (err_id.clone(), format!("figure-error-{id}"));
        move || {
            error.get().map(|m| {
                view! { <p class="field-error" id=eid.clone() data-testid=etid.clone()>{m}</p> }
            })
        }
    };
    let words = mock.with_value(|m| m.figures.words.clone());
    let e = StoredValue::new(e);
    let graded = move || {
        mark.get().map(|r| {
            let sentence = mock.with_value(|m| m.figures.graded(&r));
            let word = if r.right {
                words.right.clone()
            } else {
                words.missed.clone()
            };
            let derivation = (!r.right).then(|| {
                let e = e.get_value();
                let open = words.open_step.clone();
                view! {
                    <div class="figure-derivation" data-testid=format!("figure-derivation-{}", e.id)>
                        <p><strong>{words.derivation.clone()}</strong></p>
                        <p class="formula" data-testid=format!("figure-formula-{}", e.id)>{e.step.formula.clone()}</p>
                        <p class="formula" data-testid=format!("figure-substituted-{}", e.id)>
                            {format!("{} = {}", e.step.substituted, e.step.display)}
                        </p>
                        <p><PathLink to=e.link.clone() testid=format!("figure-link-{}", e.id)>{open}</PathLink></p>
                    </div>
                }
            });
            view! {
                <p class=if r.right { "figure-mark right" } else { "figure-mark missed" }
                    data-testid=format!("figure-mark-{}", r.id) data-right=r.right.to_string()>
                    <strong>{format!("{word}. ")}</strong>{sentence}
                </p>
                {derivation}
            }
        })
    };
    let (label, unit, tolerance, value) = e.with_value(|e| {
        (
            e.label.clone(),
            e.unit.label,
            e.tolerance_text.clone(),
            e.value,
        )
    });
    let has_mark = move || mark.with(Option::is_some);
    view! {
        <div class="field figure" data-testid=format!("figure-{id}") class:invalid=move || error.with(Option::is_some)
            data-checked=move || has_mark().to_string() data-expected=format!("{value}")>
            <label for=input_id.clone()>{label}</label>
            <div class="field-input">
                <input id=input_id type="text" inputmode="decimal" autocomplete="off" spellcheck="false"
                    data-testid=format!("figure-input-{id}")
                    readonly=has_mark
                    aria-invalid=move || error.with(Option::is_some).to_string()
                    aria-describedby=described
                    prop:value=move || text.get()
                    on:input=move |ev| text.set(event_target_value(&ev))/>
                {(!unit.is_empty()).then(|| view! { <span class="unit">{unit}</span> })}
            </div>
            <p class="muted figure-tolerance" id=tol_id data-testid=format!("figure-tolerance-{id}")>{tolerance}</p>
            {error_view}
            {graded}
        </div>
    }
}

/// The derived figures, for the interviewer, beside the prompt that asks for them.
#[component]
pub fn ExpectedFigures(s: Session) -> impl IntoView {
    let m = s.mock.get_value();
    let heading = m.figures.words.expected.clone();
    match expected(&m) {
        Ok(list) => view! {
            <h3>{heading}</h3>
            <ul data-testid="interviewer-figures">
                {list.into_iter().map(|e| view! {
                    <li data-testid=format!("expected-{}", e.id) data-value=format!("{}", e.value)>
                        {format!("{}: {} ({})", e.label, e.show(e.value), e.tolerance_text)}
                    </li>
                }).collect_view()}
            </ul>
        }
        .into_any(),
        Err(e) => view! { <p class="field-error" role="alert">{e}</p> }.into_any(),
    }
}
