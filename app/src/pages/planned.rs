//! Pages whose feature is still being built. Each says so plainly and describes what is coming.

use crate::components::Link;
use crate::route::{Route, Section};
use leptos::prelude::*;

struct Plan {
    title: &'static str,
    intro: &'static str,
    coming: &'static [&'static str],
}

fn plan(section: Section) -> Plan {
    match section {
        Section::Lesson => Plan {
            title: "The lesson: a chat request, hop by hop",
            intro: "The path a streamed reply takes from the client to the GPU and back, what each hop is responsible for, and which clock each latency figure is read from.",
            coming: &[
                "The gateway, the router, the engine and the way back out, one job each.",
                "Engine, server and user TTFT: where each clock starts and stops.",
                "The rubric interviewers use, and the mistakes that cost candidates the most.",
            ],
        },
        Section::Size => Plan {
            title: "Size it up",
            intro: "Back-of-the-envelope arithmetic, one step at a time, with every input editable and every step recomputed as you type.",
            coming: &[
                "Size the fleet for 50 requests per second: tokens per phase, prefill and decode time, replicas, cost, open streams, KV pool.",
                "How many 4K-token chats fit on a four-GPU 70B replica.",
                "How many GPU-hours a million output tokens take.",
            ],
        },
        Section::BuildUps => Plan {
            title: "Build-ups",
            intro: "Walkthroughs you step through frame by frame, where every frame is the state of a running simulation.",
            coming: &[
                "Follow one chat through a replica: continuous batching, chunked prefill, paged KV blocks, preemption.",
                "Follow one request through the fleet: gateway, router, GPU pools, streaming back, autoscaling, overflow.",
            ],
        },
        Section::Moments => Plan {
            title: "Interview moments",
            intro: "The follow-up questions interviewers push on. Pick an approach and see how it holds up.",
            coming: &[
                "Routing a chat app whose turns resend the whole history.",
                "What the autoscaler should watch when evening traffic doubles.",
                "8,000-token RAG prompts on a 70B model with a 500 ms TTFT target.",
                "Self-host an open model or call an API: the break-even.",
            ],
        },
        Section::Mock => Plan {
            title: "Mock interview",
            intro: "The whole question against the clock, as a candidate or as the interviewer with the rubric beside you.",
            coming: &[
                "A timed run through sizing, the request path and the probes.",
                "Self-grading against the rubric, saved to your progress.",
            ],
        },
        // Built pages: never shown as planned.
        Section::Home | Section::Lab => Plan { title: "", intro: "", coming: &[] },
    }
}

/// A section's landing page while its feature is being built.
pub fn page(section: Section) -> impl IntoView {
    let p = plan(section);
    let items = p
        .coming
        .iter()
        .map(|c| view! { <li>{*c}</li> })
        .collect_view();
    view! {
        <section class="narrow" data-testid=format!("page-{}", section.id())>
            <p class="eyebrow">{section.label()}</p>
            <h1>{p.title}</h1>
            <p class="lede">{p.intro}</p>
            <div class="planned" role="note" data-testid="planned">
                <h2>"Not built yet"</h2>
                <p>"This part of the trainer is still being built. Here is what it will hold:"</p>
                <ul>{items}</ul>
                <p><Link to=Route::Home testid="planned-home">"Back to the start page"</Link></p>
            </div>
        </section>
    }
}
