//! The one-page summary: the answer at the learner's own inputs, laid out to print on one A4
//! page (the print style sheet prints only this from the lesson).

use super::render::hidden;
use super::{use_lesson, Lesson};
use crate::text::fill;
use leptos::prelude::*;
use trainer_course::sizing::{Derivation, Question};

/// Rows of the summary: (heading, step ids).
const GROUPS: [(&str, &[&str]); 3] = [
    ("load", &["prompt_tps", "output_tps"]),
    (
        "engine",
        &[
            "prefill_per_token",
            "ttft_compute",
            "decode_step",
            "decode_throughput",
            "replicas",
            "cost_per_hour",
            "cost_per_million",
        ],
    ),
    (
        "streams",
        &[
            "time_per_reply",
            "open_streams",
            "streams_per_replica",
            "kv_pool",
            "kv_in_use",
            "kv_share",
        ],
    ),
];

/// The summary, with a button that prints it.
#[component]
pub fn CheatSheet() -> impl IntoView {
    let lesson = use_lesson();
    let w = lesson.words.get_value();
    let w1 = w.clone();
    let title = w.sheet_title.clone();
    let sheet_title = move || {
        let q = Question::Fleet;
        let model = lesson.inputs(q).shown(q, "model").unwrap_or_default();
        fill(&title, &[("model", model)])
    };
    let body = move || {
        let w = w1.clone();
        lesson.derivation(Question::Fleet).map(|d| {
            let groups = GROUPS
                .iter()
                .map(|(g, ids)| {
                    let title = match *g {
                        "load" => w.sheet_load.clone(),
                        "engine" => w.sheet_engine.clone(),
                        _ => w.sheet_streams.clone(),
                    };
                    view! {
                        <section class="sheet-group">
                            <h3>{title}</h3>
                            <dl>{rows(&d, ids, lesson)}</dl>
                        </section>
                    }
                })
                .collect_view();
            view! {
                <div class="sheet-grid">{groups}</div>
                {if lesson.pending_for(Question::Fleet) {
                    view! { <p class="sheet-bound muted" data-testid="sheet-hidden">{w.sheet_hidden.clone()}</p> }.into_any()
                } else {
                    view! { <p class="sheet-bound" data-testid="sheet-bound">{d.verdict.summary.clone()}</p> }.into_any()
                }}
                <section class="sheet-group">
                    <h3>{w.sheet_clocks.clone()}</h3>
                    <p>{w.sheet_clocks_text.clone()}</p>
                </section>
                <section class="sheet-group">
                    <h3>{w.sheet_probes.clone()}</h3>
                    <ul>
                        <li>{w.sheet_probe_gap.clone()}</li>
                        <li>{w.sheet_probe_stutter.clone()}</li>
                        <li>{w.sheet_probe_long.clone()}</li>
                    </ul>
                </section>
            }
        })
    };
    let print = move |_| {
        if let Some(win) = web_sys::window() {
            let _ = win.print();
        }
    };
    view! {
        <section class="cheatsheet" data-testid="cheatsheet" aria-labelledby="sheet-title">
            <h2 id="sheet-title" class="sheet-title" data-testid="sheet-title">{sheet_title}</h2>
            {body}
            <button class="button no-print" data-testid="sheet-print" on:click=print>{w.sheet_print.clone()}</button>
        </section>
    }
}

/// The rows of `ids`; a figure that would give away an open estimate is held back.
fn rows(d: &Derivation, ids: &[&str], lesson: Lesson) -> impl IntoView {
    ids.iter()
        .filter_map(|id| d.step(id))
        .map(|s| match lesson.hidden_by(Question::Fleet, s.id) {
            Some(target) => view! {
                <div class="sheet-row">
                    <dt>{s.label}</dt>
                    <dd>{hidden(format!("sheet-{}", s.id), &target, lesson)}</dd>
                </div>
            }
            .into_any(),
            None => view! {
                <div class="sheet-row" data-testid=format!("sheet-{}", s.id) data-value=format!("{}", s.value)>
                    <dt>{s.label}</dt>
                    <dd>{s.display.clone()}</dd>
                </div>
            }
            .into_any(),
        })
        .collect_view()
}
