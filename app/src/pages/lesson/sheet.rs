//! The one-page summary: the answer at the learner's own inputs, laid out to print on one A4
//! page (the print style sheet prints only this from the lesson).

use super::use_lesson;
use leptos::prelude::*;
use trainer_core::sizing::{Derivation, Question};

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
                            <dl>{rows(&d, ids)}</dl>
                        </section>
                    }
                })
                .collect_view();
            view! {
                <div class="sheet-grid">{groups}</div>
                <p class="sheet-bound" data-testid="sheet-bound">{d.verdict.summary.clone()}</p>
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
            <h2 id="sheet-title" class="sheet-title">{w.sheet_title.clone()}</h2>
            {body}
            <button class="button no-print" data-testid="sheet-print" on:click=print>{w.sheet_print.clone()}</button>
        </section>
    }
}

fn rows(d: &Derivation, ids: &[&str]) -> impl IntoView {
    ids.iter()
        .filter_map(|id| d.step(id))
        .map(|s| {
            view! {
                <div class="sheet-row" data-testid=format!("sheet-{}", s.id) data-value=format!("{}", s.value)>
                    <dt>{s.label}</dt>
                    <dd>{s.display.clone()}</dd>
                </div>
            }
        })
        .collect_view()
}
