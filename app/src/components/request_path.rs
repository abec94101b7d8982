//! The request path as an SVG diagram: each hop a box with its one job and the clock it owns;
//! selecting a hop (click, or Enter on the focused hop) opens its step of the fleet build-up.
//! The SVG never draws narrower than its viewBox, so its text (12 units or more) never renders
//! under 12 px: a narrow screen scrolls it sideways in its frame (`style/request-path.css`),
//! and the frame scrolls the lit hop into view.

use crate::route::{use_router, Route};
use leptos::prelude::*;

/// One box of the diagram.
struct Hop {
    id: &'static str,
    name: &'static str,
    job: &'static str,
    /// The clock read here, if any.
    clock: Option<&'static str>,
    /// The fleet build-up's step that follows a request through this hop.
    step: u32,
    x: f64,
    y: f64,
    w: f64,
}

const H: f64 = 64.0;

/// The width of the viewBox, in the SVG's units (the narrowest the SVG draws, in CSS pixels).
const VIEW_W: f64 = 500.0;

const HOPS: [Hop; 7] = [
    Hop {
        id: "client",
        name: "Client",
        job: "sends, reads tokens",
        clock: Some("user TTFT"),
        step: 4,
        x: 10.0,
        y: 10.0,
        w: 140.0,
    },
    Hop {
        id: "gateway",
        name: "Gateway",
        job: "auth, quota, the stream",
        clock: Some("server TTFT"),
        step: 1,
        x: 180.0,
        y: 10.0,
        w: 150.0,
    },
    Hop {
        id: "quota",
        name: "Quota store",
        job: "tokens per minute",
        clock: None,
        step: 1,
        x: 360.0,
        y: 10.0,
        w: 130.0,
    },
    Hop {
        id: "router",
        name: "Router",
        job: "picks by live load",
        clock: None,
        step: 2,
        x: 180.0,
        y: 120.0,
        w: 150.0,
    },
    Hop {
        id: "relay",
        name: "SSE relay",
        job: "flushes every delta",
        clock: Some("ITL"),
        step: 4,
        x: 10.0,
        y: 120.0,
        w: 140.0,
    },
    Hop {
        id: "engine",
        name: "Engine",
        job: "queue, prefill, decode",
        clock: Some("engine TTFT"),
        step: 3,
        x: 180.0,
        y: 250.0,
        w: 150.0,
    },
    Hop {
        id: "autoscaler",
        name: "Autoscaler",
        job: "adds replicas early",
        clock: None,
        step: 5,
        x: 360.0,
        y: 250.0,
        w: 130.0,
    },
];

/// The overflow box sits under the pool, apart from the loop above.
const OVERFLOW: Hop = Hop {
    id: "overflow",
    name: "Overflow",
    job: "spill or shed with 429",
    clock: None,
    step: 6,
    x: 10.0,
    y: 250.0,
    w: 140.0,
};

/// The diagram. Arrows follow a request in (solid) and its tokens back out (dashed).
#[component]
pub fn RequestPath(
    /// The `data-testid` of the figure; its scrolling frame is `<testid>-scroll`.
    #[prop(into)]
    testid: String,
    /// The hop to highlight (its id: `client`, `gateway`, `quota`, `router`, `relay`,
    /// `engine`, `autoscaler`, `overflow`), as a build-up follows a request; none by default.
    #[prop(optional, into)]
    highlight: Option<Signal<Option<&'static str>>>,
    /// What each hop's clock reads now, by hop id, shown in place of the clock's name (for
    /// hops without a clock too); none by default.
    #[prop(optional, into)]
    readings: Option<Signal<Vec<(&'static str, String)>>>,
) -> impl IntoView {
    let router = use_router();
    let lit = move |id: &str| highlight.is_some_and(|h| h.get() == Some(id));
    let reading = move |id: &str| {
        readings.and_then(|r| r.with(|v| v.iter().find(|(h, _)| *h == id).map(|(_, t)| t.clone())))
    };
    let hop_view = move |h: &'static Hop| {
        let go =
            move || router.navigate(Route::BuildUp("fleet".into()), &format!("step={}", h.step));
        let (x, y, w) = (h.x, h.y, h.w);
        let clock_text = move || reading(h.id).or_else(|| h.clock.map(|c| format!("clock: {c}")));
        // The name a screen reader says starts with the words drawn, in order (name, job, clock).
        let label = move || {
            format!(
                "{}: {}{}. Opens step {} of the fleet build-up.",
                h.name,
                h.job,
                clock_text().map(|t| format!("; {t}")).unwrap_or_default(),
                h.step
            )
        };
        let clock_line = move || {
            clock_text().map(|t| view! { <text x=x + 10.0 y=y + 59.0 class="hop-clock" data-testid=format!("clock-on-{}", h.id)>{t}</text> })
        };
        view! {
            <g
                class="hop"
                class:lit=move || lit(h.id)
                aria-current=move || lit(h.id).then_some("step")
                role="link"
                tabindex="0"
                aria-label=label
                data-testid=format!("hop-{}", h.id)
                data-step=h.step.to_string()
                on:click=move |_| go()
                on:keydown=move |ev| if ev.key() == "Enter" || ev.key() == " " { ev.prevent_default(); go() }
            >
                <rect x=x y=y width=w height=H rx="8"></rect>
                // The spaces between the lines are not drawn; they keep the words apart in the
                // text assistive technology reads (the name above starts with it).
                <text x=x + 10.0 y=y + 24.0 class="hop-name">{h.name}</text>
                " "
                <text x=x + 10.0 y=y + 44.0 class="hop-job">{h.job}</text>
                " "
                {clock_line}
            </g>
        }
    };
    let hops = HOPS
        .iter()
        .chain(std::iter::once(&OVERFLOW))
        .map(hop_view)
        .collect_view();
    // On a screen narrower than the diagram, keep the lit hop in view (a sync with the DOM's
    // scroll position, outside Leptos).
    let scroller = NodeRef::<leptos::html::Div>::new();
    let scroll_testid = format!("{testid}-scroll");
    Effect::new(move |_| {
        let id = highlight.and_then(|h| h.get());
        let (Some(el), Some(id)) = (scroller.get(), id) else {
            return;
        };
        let Some(h) = HOPS
            .iter()
            .chain(std::iter::once(&OVERFLOW))
            .find(|h| h.id == id)
        else {
            return;
        };
        let (shown, whole) = (el.client_width() as f64, el.scroll_width() as f64);
        if whole <= shown || shown <= 0.0 {
            return;
        }
        let scale = whole / VIEW_W;
        let centre = (h.x + h.w / 2.0) * scale;
        el.set_scroll_left((centre - shown / 2.0).clamp(0.0, whole - shown).round() as i32);
    });
    view! {
        <figure class="request-path" data-testid=testid>
            <div class="request-path-scroll" node_ref=scroller data-testid=scroll_testid>
            <svg viewBox="0 0 500 330" role="group" aria-label="The request path: client, gateway with its quota store, router, engine in a GPU pool with its autoscaler and overflow, and the SSE relay back to the client">
                <defs>
                    <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                        <path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead"></path>
                    </marker>
                </defs>
                <rect x="160" y="230" width="335" height="96" rx="10" class="pool"></rect>
                <text x="487" y="321" class="pool-label" text-anchor="end">"GPU pool"</text>
                <line x1="150" y1="30" x2="178" y2="30" class="flow in" marker-end="url(#arrow)"></line>
                <line x1="330" y1="42" x2="358" y2="42" class="flow aux" marker-end="url(#arrow)"></line>
                <line x1="255" y1="74" x2="255" y2="118" class="flow in" marker-end="url(#arrow)"></line>
                <line x1="255" y1="184" x2="255" y2="248" class="flow in" marker-end="url(#arrow)"></line>
                <line x1="200" y1="184" x2="120" y2="248" class="flow aux" marker-end="url(#arrow)"></line>
                <path d="M 190 250 L 130 186" class="flow out" marker-end="url(#arrow)"></path>
                <path d="M 60 120 L 60 76" class="flow out" marker-end="url(#arrow)"></path>
                {hops}
            </svg>
            </div>
            <figcaption class="muted">
                "Solid arrows carry the request in; dashed ones carry tokens back out. Select a hop to follow a request through it."
            </figcaption>
        </figure>
    }
}
