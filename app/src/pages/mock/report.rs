//! `/mock/report`: the last finished mock interview as a report that prints on A4 (see
//! `style/mock.css`): the session, each rubric line with the self-assessment, the evidence
//! and where to train it, the curveball's graded answer and what to study next.

use super::assess::{evidence, study_next};
use crate::components::{Link, PathLink};
use crate::progress::use_progress;
use crate::route::Route;
use crate::text::format::duration;
use leptos::prelude::*;
use trainer_course::mock::mock;
use trainer_course::study::date;

#[component]
pub fn MockReport() -> impl IntoView {
    let store = use_progress();
    let last = store.progress.with_untracked(|p| p.mocks.last().cloned());
    let (Some(r), Ok(m)) = (last, mock()) else {
        return view! {
            <section class="narrow" data-testid="page-mock-report">
                <h1>{crate::shell::site_words().report_title.clone()}</h1>
                <p data-testid="report-empty">"No mock interview has been finished in this browser yet. "
                    <Link to=Route::Mock testid="report-start">"Start one."</Link></p>
            </section>
        }
        .into_any();
    };
    let session = format!(
        "{} · {}{}{}",
        date(r.day),
        if r.mode == "mock" {
            "against the clock"
        } else {
            "practice"
        },
        if r.interviewer {
            " · with an interviewer"
        } else {
            ""
        },
        if r.limit_s > 0.0 {
            format!(
                " · {} of {} used",
                duration(r.used_s.max(0.0), 2),
                duration(r.limit_s, 2)
            )
        } else {
            String::new()
        }
    );
    let rows = m
        .rubric
        .iter()
        .map(|line| {
            let mark = r
                .assessment
                .get(&line.id)
                .cloned()
                .unwrap_or_else(|| "not assessed".into());
            let ev = evidence(&m, &line.id, &r.notes, r.pushback.as_ref(), &r.figures);
            let ev = if ev.is_empty() {
                view! { <span class="muted">"Nothing noted."</span> }.into_any()
            } else {
                ev.into_iter()
                    .map(|(k, v)| view! { <p><strong>{k}": "</strong>{v}</p> })
                    .collect_view()
                    .into_any()
            };
            let shown = mark.clone();
            view! {
                <tr data-testid=format!("report-line-{}", line.id) data-mark=mark>
                    <th scope="row">{line.text.clone()}</th>
                    <td>{shown}</td>
                    <td>{ev}</td>
                    <td><PathLink to=line.train.clone()>"Train"</PathLink></td>
                </tr>
            }
        })
        .collect_view();
    let next = study_next(&m, &r.assessment)
        .into_iter()
        .map(|(line, why)| view! { <li>{line.text.clone()}<span class="muted">{format!(" ({why})")}</span></li> })
        .collect_view();
    let pushback = r.pushback.clone().map(|p| {
        let title = m
            .curveball(&p.curveball)
            .map_or(p.curveball.clone(), |c| c.title.clone());
        view! {
            <p data-testid="report-pushback" data-grade=p.grade.clone()>
                <strong>{format!("{title}: {}. ", super::curveball::grade_word(&p.grade))}</strong>{p.summary}
            </p>
        }
        .into_any()
    });
    // Against the clock: each stage's share of the plan against the time it took.
    let pace = (r.limit_s > 0.0 && !r.stage_s.is_empty()).then(|| {
        let w = m.pace.clone();
        let names: Vec<String> = m
            .prompts
            .iter()
            .map(|p| p.stage.clone())
            .chain(["The curveball".to_string()])
            .collect();
        let rows = m
            .pace(r.limit_s, &r.stage_s)
            .into_iter()
            .zip(names)
            .map(|(p, name)| {
                let over = p.over();
                view! {
                    <tr data-testid=format!("report-pace-{}", p.id) class:over=over data-over=over.to_string()>
                        <th scope="row">{name}</th>
                        <td>{super::clock_text(p.budget_s)}</td>
                        <td>{super::clock_text(p.spent_s)}{over.then_some(" (long)")}</td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <h2>{w.report_title.clone()}</h2>
            <p class="muted">{w.report_intro.clone()}</p>
            <table class="report-table" data-testid="report-pace">
                <thead><tr><th scope="col">{w.col_stage.clone()}</th><th scope="col">{w.col_plan.clone()}</th><th scope="col">{w.col_spent.clone()}</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        }
    });
    // The questions that change the design, as the clarifying notes asked them.
    let requirements = (!r.requirements.is_empty()).then(|| {
        let covered: Vec<trainer_course::mock::Covered> = m
            .requirements
            .items
            .iter()
            .map(|i| trainer_course::mock::Covered {
                id: i.id.clone(),
                asked: r.requirements.get(&i.id).copied().unwrap_or(false),
                term: None,
            })
            .collect();
        view! {
            <h2>{m.requirements.heading.clone()}</h2>
            {super::requirements::checklist(&m, &covered, "report-requirements")}
        }
    });
    // The level each stage read at, as calibrated, and the sentence chosen from the picks.
    let calibration = (!r.levels.is_empty()).then(|| {
        let w = m.calibration.clone();
        let col_stage = m.pace.col_stage.clone();
        let reading = m.calibration_reading(&r.levels).unwrap_or_default();
        let rows = m
            .calibrated_stages()
            .into_iter()
            .map(|(id, name)| {
                let level = r.levels.get(&id).cloned();
                let shown = level
                    .as_deref()
                    .map_or(w.unmarked.clone(), |l| super::level_name(l).to_string());
                view! {
                    <tr data-testid=format!("report-level-{id}") data-level=level.unwrap_or_default()>
                        <th scope="row">{name}</th>
                        <td>{shown}</td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <h2>{w.report_title.clone()}</h2>
            <p data-testid="report-calibration">{reading}</p>
            <table class="report-table">
                <thead><tr><th scope="col">{col_stage}</th><th scope="col">{w.col_level.clone()}</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        }
    });
    let print = move |_| {
        if let Some(w) = web_sys::window() {
            let _ = w.print();
        }
    };
    view! {
        <section class="mock-report" data-testid="page-mock-report">
            <p class="eyebrow no-print"><Link to=Route::Mock testid="report-back">"Mock interview"</Link></p>
            <h1>{crate::shell::site_words().report_title.clone()}</h1>
            <p class="muted" data-testid="report-session">{session}</p>
            <button class="button no-print" type="button" data-testid="report-print" on:click=print>"Print the report"</button>
            <h2>"Against the rubric"</h2>
            <table class="report-table">
                <thead><tr><th scope="col">"Rubric line"</th><th scope="col">"Self-assessed"</th><th scope="col">"Evidence"</th><th scope="col">"Where"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            {pace}
            {requirements}
            {calibration}
            <h2>"The curveball"</h2>
            {pushback.unwrap_or_else(|| view! { <p data-testid="report-pushback" data-grade="none">"No answer was run."</p> }.into_any())}
            <h2>"What to study next"</h2>
            <ol data-testid="report-next">{next}</ol>
        </section>
    }
    .into_any()
}
