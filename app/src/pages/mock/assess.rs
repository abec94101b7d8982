//! The end of a mock: the self-assessment against the rubric, line by line with the evidence
//! the candidate gave, then what to study next.

use super::{Phase, Session};
use crate::components::PathLink;
use crate::progress::{use_progress, MockRecord};
use leptos::prelude::*;
use std::collections::BTreeMap;
use trainer_course::mock::Mock;
use trainer_course::study::{FigureRecord, PushbackRecord};

/// Self-assessment marks, in the order offered.
pub const MARKS: [(&str, &str); 3] = [
    ("shown", "Shown"),
    ("partly", "Partly"),
    ("missed", "Missed"),
];

/// The evidence for rubric line `id`: the notes of the prompts that show it (stage, notes),
/// the figures checked where their prompt shows it, and for the curveball's line the graded
/// answer.
pub fn evidence(
    m: &Mock,
    id: &str,
    notes: &std::collections::BTreeMap<String, String>,
    pushback: Option<&PushbackRecord>,
    figures: &[FigureRecord],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for p in m.prompts_for(id) {
        if let Some(n) = notes.get(&p.id) {
            out.push((p.stage.clone(), n.clone()));
        }
        if p.id == m.figures.prompt {
            if let Some(summary) = m.figures.summary(figures) {
                out.push((m.figures.words.heading.clone(), summary));
            }
        }
    }
    if id == "pushback" {
        if let Some(n) = notes.get(super::CURVEBALL_STAGE) {
            out.push(("The curveball".into(), n.clone()));
        }
        if let Some(p) = pushback {
            out.push((
                "The simulator's grade".into(),
                format!("{} ({}): {}", p.answer, p.grade, p.summary),
            ));
        }
    }
    out
}

/// The rubric lines to study, worst first: missed, then partly, then not assessed.
pub fn study_next<'a>(
    m: &'a Mock,
    assessment: &std::collections::BTreeMap<String, String>,
) -> Vec<(&'a trainer_course::mock::RubricLine, &'static str)> {
    let rank = |mark: Option<&String>| match mark.map(String::as_str) {
        Some("missed") => Some((0, "missed")),
        Some("partly") => Some((1, "partly")),
        Some("shown") => None,
        _ => Some((2, "not assessed")),
    };
    let mut v: Vec<_> = m
        .rubric
        .iter()
        .filter_map(|r| rank(assessment.get(&r.id)).map(|(k, w)| (k, r, w)))
        .collect();
    v.sort_by_key(|(k, _, _)| *k);
    v.into_iter().map(|(_, r, w)| (r, w)).collect()
}

#[component]
pub fn Assess(s: Session) -> impl IntoView {
    let store = use_progress();
    let m = s.mock.get_value();
    let notes = s.notes_map();
    let pushback = s.pushback.get_untracked();
    let figures = s.marks.get_untracked();
    let lines = m
        .rubric
        .iter()
        .map(|r| {
            let ev = evidence(&m, &r.id, &notes, pushback.as_ref(), &figures);
            let ev_view = if ev.is_empty() {
                view! { <p class="muted">"Nothing noted for this line."</p> }.into_any()
            } else {
                view! {
                    <ul>{ev.into_iter().map(|(k, v)| view! { <li><strong>{k}": "</strong>{v}</li> }).collect_view()}</ul>
                }
                .into_any()
            };
            let id = r.id.clone();
            let marks = MARKS
                .iter()
                .map(|(mark, word)| {
                    let (a, b, c) = (id.clone(), id.clone(), id.clone());
                    let input_id = format!("assess-{id}-{mark}");
                    let label_for = input_id.clone();
                    view! {
                        <label for=label_for>
                            <input type="radio" id=input_id name=format!("assess-{c}") data-testid=format!("assess-{c}-{mark}")
                                prop:checked=move || s.assessment.with(|a2| a2.get(&a).map(String::as_str) == Some(*mark))
                                on:change=move |_| s.assessment.update(|a2| { a2.insert(b.clone(), mark.to_string()); })/>
                            " "{*word}
                        </label>
                    }
                })
                .collect_view();
            view! {
                <fieldset class="assess-line" data-testid=format!("assess-{}", r.id)>
                    <legend><span class="level">{super::level_word(&r.level)}</span>" "{r.text.clone()}</legend>
                    <div class="evidence" data-testid=format!("evidence-{}", r.id)>{ev_view}</div>
                    <div class="marks">{marks}</div>
                    <p><PathLink to=r.train.clone() testid=format!("train-{}", r.id)>"Where the app trains this"</PathLink></p>
                </fieldset>
            }
        })
        .collect_view();
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let timed = s.limit_s.get_untracked() > 0.0;
        store.record_mock(MockRecord {
            day: 0,
            mode: if timed { "mock" } else { "practice" }.into(),
            interviewer: s.interviewer.get_untracked(),
            limit_s: s.limit_s.get_untracked(),
            used_s: if timed {
                s.limit_s.get_untracked() - s.remaining.get_untracked()
            } else {
                0.0
            },
            notes: s.notes_map(),
            pushback: s.pushback.get_untracked(),
            assessment: s.assessment.get_untracked(),
            figures: s.marks.get_untracked(),
            stage_s: if timed {
                s.spent.get_untracked()
            } else {
                BTreeMap::new()
            },
            levels: s.levels.get_untracked(),
            requirements: super::requirements::stored(&super::requirements::graded(
                &s.mock.get_value(),
                &s.notes_map(),
            )),
        });
        s.phase.set(Phase::Done);
    };
    view! {
        {move || s.time_up.get().then(|| view! {
            <p class="notice" role="status" data-testid="time-up">"Time is up. Assess what you covered."</p>
        })}
        <section class="requirements-section" aria-labelledby="requirements-h">
            <h2 id="requirements-h">{m.requirements.heading.clone()}</h2>
            <p class="muted">{m.requirements.intro.clone()}</p>
            {super::requirements::checklist(&m, &super::requirements::graded(&m, &notes), "assess-requirements")}
        </section>
        <h2 id="assess-h" tabindex="-1">"Assess yourself against the rubric"</h2>
        <p class="muted">"For each line, what you said is beside it. Mark it shown, partly or missed; each line links to where the app trains it."</p>
        <form class="assess" data-testid="assess" on:submit=save>
            {lines}
            <section class="calibration" aria-labelledby="calibration-h">
                <h2 id="calibration-h">{m.calibration.heading.clone()}</h2>
                <p class="muted">{m.calibration.intro.clone()}</p>
                {calibration(s, &m)}
            </section>
            <button class="button primary" type="submit" data-testid="mock-save">"Save and see what to study next"</button>
        </form>
    }
}

/// A fieldset per stage: the three levels, each with what an answer at that level says there.
fn calibration(s: Session, m: &Mock) -> impl IntoView {
    let levels: Vec<(String, String, trainer_course::mock::Levels)> = m
        .prompts
        .iter()
        .map(|p| (p.id.clone(), p.stage.clone(), p.levels.clone()))
        .chain([(
            super::CURVEBALL_STAGE.to_string(),
            "The curveball".to_string(),
            m.curveball_levels.clone(),
        )])
        .collect();
    levels
        .into_iter()
        .map(|(id, stage, l)| {
            let options = l
                .each()
                .into_iter()
                .map(|(level, text)| {
                    let (a, b) = (id.clone(), id.clone());
                    let input_id = format!("level-{id}-{level}");
                    let label_for = input_id.clone();
                    view! {
                        <label for=label_for class="level-option">
                            <input type="radio" id=input_id name=format!("level-{id}") data-testid=format!("level-{id}-{level}")
                                prop:checked=move || s.levels.with(|v| v.get(&a).map(String::as_str) == Some(level))
                                on:change=move |_| s.levels.update(|v| { v.insert(b.clone(), level.to_string()); })/>
                            " "<strong>{super::level_name(level)}</strong>": "{text.to_string()}
                        </label>
                    }
                })
                .collect_view();
            view! {
                <fieldset class="assess-line" data-testid=format!("level-{id}")>
                    <legend>{stage}</legend>
                    <div class="levels">{options}</div>
                </fieldset>
            }
        })
        .collect_view()
}

#[component]
pub fn StudyNext(s: Session) -> impl IntoView {
    let m = s.mock.get_value();
    let assessment = s.assessment.get_untracked();
    let next: Vec<(String, String, String, &str)> = study_next(&m, &assessment)
        .into_iter()
        .map(|(r, why)| (r.id.clone(), r.text.clone(), r.train.clone(), why))
        .collect();
    let list = next
        .into_iter()
        .map(|(id, text, train, why)| {
            view! {
                <li data-testid=format!("study-next-{id}") data-mark=why>
                    <PathLink to=train>{text}</PathLink>
                    <span class="muted">{format!(" ({why})")}</span>
                </li>
            }
        })
        .collect_view();
    let pushback = s.pushback.get_untracked();
    view! {
        <section data-testid="mock-done" aria-labelledby="study-next-h">
            <h2 id="study-next-h" tabindex="-1">"What to study next"</h2>
            {pushback.map(|p| view! {
                <p data-testid="mock-pushback-summary" data-grade=p.grade.clone()>
                    <strong>{format!("Curveball: {}. ", super::curveball::grade_word(&p.grade))}</strong>{p.summary}
                </p>
            })}
            <ol class="study-next" data-testid="study-next">{list}</ol>
            <p>
                <PathLink to="/mock/report" testid="mock-report-link">"Open the printable report"</PathLink>
                " · "
                <button class="link-button" type="button" data-testid="mock-again" on:click=move |_| s.phase.set(Phase::Setup)>"Start another"</button>
            </p>
        </section>
    }
}
