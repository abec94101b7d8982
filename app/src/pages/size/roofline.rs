//! The roofline question's plot, under its steps: drawn from the inputs once the steps it
//! would give away (up to the largest batch) are revealed, so the learner works them first.

use super::simcheck::words;
use super::state::Calc;
use crate::components::RooflinePlot;
use leptos::prelude::*;
use trainer_course::sizing::roofline_plot;

/// The step the plot waits for: every point it draws is worked out by then.
const SHOWN_FROM: &str = "largest_batch";

#[component]
pub fn RooflineSection(c: Calc) -> impl IntoView {
    let ready = Memo::new(move |_| {
        let shown = c.shown();
        c.good.with(|g| {
            g.as_ref().is_some_and(|(_, d)| {
                d.steps
                    .iter()
                    .position(|s| s.id == SHOWN_FROM)
                    .is_some_and(|i| shown > i)
            })
        })
    });
    let data = Signal::derive(move || {
        if !ready.get() {
            return None;
        }
        c.good
            .with(|g| g.as_ref().and_then(|(i, _)| roofline_plot(i).ok()))
    });
    let w = &words().roofline;
    view! {
        <section class="size-roofline" data-testid="roofline-section">
            <h2>{w.title.clone()}</h2>
            {move || if ready.get() {
                view! { <RooflinePlot data=data words=w testid="roofline"/> }.into_any()
            } else {
                view! { <p class="muted" data-testid="roofline-waiting">{w.waiting.clone()}</p> }.into_any()
            }}
        </section>
    }
}
