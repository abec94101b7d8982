//! The start page: what the trainer is, the problem it is built around, where to begin, and
//! the learner's progress.

use crate::components::Link;
use crate::progress::use_progress;
use crate::route::{Route, Section};
use leptos::prelude::*;
use trainer_core::cost::{CostModel, MemoryConfig};

#[component]
pub fn Home() -> impl IntoView {
    // The seed replica's headline figures, computed by the same cost model the calculator and
    // the simulator use (nothing here is typed in as a result).
    let cost = CostModel::seed();
    let prefill_us = cost.prefill_time_per_token() * 1e6;
    let decode = cost.decode_step(32, 1125);
    let tok_s = cost.decode_throughput(32, 1125);
    let pool = cost.kv_pool_tokens(&MemoryConfig::REFERENCE);
    let figures = vec![
        (
            "fig-prefill",
            format!("{prefill_us:.1} µs"),
            "of GPU compute per prompt token".to_string(),
        ),
        (
            "fig-decode",
            format!("{:.1} ms", decode.total_s * 1e3),
            "per decode step at batch 32".to_string(),
        ),
        (
            "fig-throughput",
            group(tok_s.round()),
            "output tokens per second from one replica".to_string(),
        ),
        (
            "fig-kv",
            group(pool),
            "tokens of KV cache fit beside the weights".to_string(),
        ),
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
    // (section, id, title, blurb, built yet)
    let parts = [
        (Section::Lesson, "lesson", "Read the lesson", "The strong answer with every figure live, the request path hop by hop, which clock each latency is read on, the probes and the rubric.", true),
        (Section::Size, "size", "Size it up", "Tap through the back-of-the-envelope arithmetic with every input editable: tokens per phase, replicas, cost, open streams, KV pool.", true),
        (Section::BuildUps, "buildups", "Build-ups", "Step through one chat in a replica and one request through the fleet, every frame taken from a running simulation.", true),
        (Section::Moments, "moments", "Interview moments", "Pick an approach to a hard follow-up question and see how it holds up, with figures from the simulator.", true),
        (Section::Lab, "lab", "Lab", "Every knob of the fleet simulator with live plots: change anything, compare two runs, share the link.", true),
        (Section::Mock, "mock", "Mock interview", "Practise the whole question against the clock, or run it as the interviewer with the rubric at hand.", true),
    ];
    let cards = parts
        .into_iter()
        .enumerate()
        .map(|(i, (section, id, title, blurb, built))| {
            let done = move || {
                store.progress.with(|p| {
                    p.done
                        .iter()
                        .any(|d| d == id || d.starts_with(&format!("{id}/")))
                })
            };
            view! {
                <li class="card">
                    <span class="card-step" aria-hidden="true">{i + 1}</span>
                    <h3><Link to=section.route() testid=format!("start-{id}")>{title}</Link></h3>
                    <p>{blurb}</p>
                    <span class="card-status" data-testid=format!("status-{id}")>
                        {move || match (built, done()) {
                            (false, _) => "Being built",
                            (true, true) => "Started",
                            (true, false) => "Not started",
                        }}
                    </span>
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="hero" data-testid="page-home">
            <p class="eyebrow">"System design, in depth"</p>
            <h1>"Serve Llama 3.1 8B at 50 requests per second, streaming"</h1>
            <p class="lede">
                "One interview question, worked all the way down. Each request brings about 1,000 prompt tokens "
                "and streams back about 250. Size the fleet on H100s, draw the request path, and say exactly where "
                "time to first token and inter-token latency are measured. Then check your answer against a "
                "simulation of the engine and the fleet around it."
            </p>
            <div class="actions">
                <Link to=Route::Size("fleet".into()) class="button primary" testid="cta-size">"Start sizing"</Link>
                <Link to=Route::Lesson class="button" testid="cta-lesson">"Read the lesson first"</Link>
            </div>
        </section>
        <section aria-labelledby="glance">
            <h2 id="glance">"One replica at a glance"</h2>
            <p class="muted">"Llama 3.1 8B in BF16 on one H100 SXM, at 50 % of peak FLOP/s and 75 % of HBM bandwidth."</p>
            <div class="figures">{figures}</div>
        </section>
        <super::home_progress::DueToday/>
        <section aria-labelledby="start">
            <h2 id="start">"Where to start"</h2>
            <ol class="cards">{cards}</ol>
        </section>
        <super::home_progress::ProgressPanel/>
    }
}

/// Formats a whole number with thousands separators.
fn group(v: f64) -> String {
    let s = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}
