//! The start page: what the trainer is, the problem it is built around, where to begin, and
//! the learner's progress.

use crate::components::{Deferred, Link};
use crate::progress::use_progress;
use crate::route::{Route, Section};
use crate::text::{fill, format};
use leptos::prelude::*;
use trainer_content::words::HomeWords;
use trainer_course::sizing::{seed_words, Inputs, Question};
use trainer_engine::cost::{CostModel, MemoryConfig};

#[component]
pub fn Home() -> impl IntoView {
    // The page's words, built from `content/home.toml` by the build (which refuses a file that
    // does not parse).
    let words: HomeWords = include!(concat!(env!("OUT_DIR"), "/home-words.rs"));
    // The seed's figures, computed by the same cost model and inputs the calculator and the
    // simulator use (nothing here is typed in as a result); the names the words fill are the
    // course's one list, which the build's first paint fills from too.
    let cost = CostModel::seed();
    let batch = Inputs::defaults(Question::GpuHours);
    let (b, ctx) = (
        batch.get("batch").unwrap_or(32.0) as u32,
        batch.get("context").unwrap_or(1125.0) as u32,
    );
    let prefill_us = cost.prefill_time_per_token() * 1e6;
    let decode = cost.decode_step(b, ctx);
    let tok_s = cost.decode_throughput(b, ctx);
    let pool = cost.kv_pool_tokens(&MemoryConfig::REFERENCE);
    let values = seed_words();
    let w = |t: &str| fill(t, &values);
    let figures = [
        (
            "fig-prefill",
            format!("{} µs", format::fixed(prefill_us, 1)),
            w(&words.fig_prefill),
        ),
        (
            "fig-decode",
            format!("{} ms", format::fixed(decode.total_s * 1e3, 1)),
            w(&words.fig_decode),
        ),
        (
            "fig-throughput",
            format::int(tok_s.round()),
            w(&words.fig_throughput),
        ),
        ("fig-kv", format::int(pool), w(&words.fig_kv)),
    ];
    let figures = figures
        .into_iter()
        .map(|(id, value, label)| {
            view! {
                <div class="figure" data-testid=id>
                    <span class="figure-value">{value}</span>
                    <span class="figure-label">{label}</span>
                </div>
            }
        })
        .collect_view();

    let store = use_progress();
    let (started, not_started) = (
        words.status_started.clone(),
        words.status_not_started.clone(),
    );
    let cards = words
        .parts
        .clone()
        .into_iter()
        .enumerate()
        .filter_map(|(i, part)| {
            let section = Section::NAV.into_iter().find(|s| s.id() == part.id)?;
            let id = part.id.clone();
            let prefix = format!("{id}/");
            let done = {
                let id = id.clone();
                move || {
                    store
                        .progress
                        .with(|p| p.done.iter().any(|d| *d == id || d.starts_with(&prefix)))
                }
            };
            let (started, not_started) = (started.clone(), not_started.clone());
            Some(view! {
                <li class="card">
                    <span class="card-step" aria-hidden="true">{i + 1}</span>
                    <h3><Link to=section.route() testid=format!("start-{id}")>{part.title}</Link></h3>
                    <p>{part.blurb}</p>
                    <span class="card-status" data-testid=format!("status-{id}")>
                        {move || if done() { started.clone() } else { not_started.clone() }}
                    </span>
                </li>
            })
        })
        .collect_view();
    let (glance_title, glance_note) = (words.glance_title.clone(), w(&words.glance_note));
    let start_title = words.start_title.clone();
    view! {
        <section class="hero" data-testid="page-home">
            <p class="eyebrow">{words.eyebrow.clone()}</p>
            <h1>{w(&words.title)}</h1>
            <p class="lede">{w(&words.lede)}</p>
            <div class="actions">
                <Link to=Route::Size("fleet".into()) class="button primary" testid="cta-size">{words.start_sizing.clone()}</Link>
                <Link to=Route::Lesson class="button" testid="cta-lesson">{words.read_lesson.clone()}</Link>
            </div>
        </section>
        // Below the hero, the page is drawn a slice at a time (see `Deferred`).
        <Deferred>
            <section aria-labelledby="glance">
                <h2 id="glance">{glance_title}</h2>
                <p class="muted">{glance_note}</p>
                <div class="figures">{figures}</div>
            </section>
        </Deferred>
        <Deferred><super::home_progress::DueToday/></Deferred>
        <Deferred>
            <section aria-labelledby="start">
                <h2 id="start">{start_title}</h2>
                <ol class="cards">{cards}</ol>
            </section>
        </Deferred>
        <Deferred><super::home_progress::ProgressPanel/></Deferred>
    }
    .into_any()
}
