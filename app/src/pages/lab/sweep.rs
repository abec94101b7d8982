//! Speculation against load: when the set-up speculates, a button runs it at a range of traffic
//! levels, with and without speculation, in the simulators' workers, and two charts show the
//! tokens a verifying step gains and the per-token speedup against the arrival rate. The runs
//! and the points are the core's (`trainer_course::lab::sweep`); the page only draws them.

use super::state::Lab;
use crate::components::{Chart, ChartData, Format, Line};
use crate::sim_runner::{run_fleets, RunStatus as Status};
use crate::text::fill;
use crate::text::format::{duration, fixed, percent, sig};
use leptos::prelude::*;
use trainer_course::lab::sweep::{self, SweepPoint};
use trainer_course::lab::SweepText;

/// The points of a finished sweep and the set-up (query) it swept.
#[derive(Clone, Debug, PartialEq)]
struct Swept {
    query: String,
    points: Vec<SweepPoint>,
}

#[component]
pub fn SpecSweep(lab: Lab, text: SweepText) -> impl IntoView {
    let speculating = Memo::new(move |_| lab.setup.with(|s| sweep::speculates(&s.config)));
    let status = RwSignal::new(Status::Idle);
    let swept: RwSignal<Option<Swept>> = RwSignal::new(None);
    let start = move |_| {
        if matches!(status.get_untracked(), Status::Running { .. }) {
            return;
        }
        let (cfg, query) = lab.setup.with_untracked(|s| (s.config.clone(), s.query()));
        let runs = sweep::fleets(&cfg);
        swept.set(None);
        run_fleets(runs, status, move |done| {
            let reports: Vec<_> = done.into_iter().map(|(_, r)| r).collect();
            let points = sweep::points(&cfg, &reports);
            let _ = swept.try_set(Some(Swept { query, points }));
        });
    };
    let running = move || matches!(status.get(), Status::Running { .. });
    let stale = move || {
        swept.with(|s| {
            s.as_ref()
                .is_some_and(|s| lab.setup.with(|now| now.query() != s.query))
        })
    };
    let intro = fill(
        &text.intro,
        &[
            ("lowest", percent(sweep::LOADS[0])),
            ("highest", percent(sweep::LOADS[sweep::LOADS.len() - 1])),
            ("seconds", sig(sweep::HORIZON_S, 3)),
        ],
    );
    let points = move || swept.with(|s| s.as_ref().map(|s| s.points.clone()).unwrap_or_default());
    let tokens = Signal::derive(move || {
        lines(
            vec![line("tokens per verifying step", 0, &points(), |p| {
                p.tokens_per_step
            })],
            "tokens per step",
            Format::Number,
        )
    });
    let speedup = Signal::derive(move || {
        let pts = points();
        let mut ls = vec![line("speedup", 1, &pts, |p| p.speedup)];
        if let (Some(a), Some(b)) = (pts.first(), pts.last()) {
            ls.push(Line {
                name: "no gain".into(),
                colour: 2,
                dashed: true,
                markers: false,
                points: vec![(a.rate, 1.0), (b.rate, 1.0)],
            });
        }
        lines(ls, "speedup (×)", Format::Number)
    });
    let text = StoredValue::new(text);
    let w = move |f: fn(&SweepText) -> &String| text.with_value(|t| f(t).clone());
    view! {
        {move || speculating.get().then(|| view! {
            <section class="lab-sweep" aria-labelledby="lab-sweep-h" data-testid="lab-sweep">
                <h3 id="lab-sweep-h">{w(|t| &t.title)}</h3>
                <p class="muted">{intro.clone()}</p>
                <button class="button" data-testid="sweep-run" disabled=running on:click=start>
                    {w(|t| &t.button)}
                </button>
                {move || match status.get() {
                    Status::Running { run, runs, progress } => Some(view! {
                        <p class="sim-status" role="status" data-testid="sweep-running">
                            {format!("{} / {}", run + 1, runs)}
                            <progress max="1" value=progress></progress>
                        </p>
                    }.into_any()),
                    Status::Failed(m) => Some(view! { <p class="field-error" role="alert" data-testid="sweep-error">{m}</p> }.into_any()),
                    _ => None,
                }}
                {move || stale().then(|| view! { <p class="stale-note" data-testid="sweep-stale">{w(|t| &t.stale)}</p> })}
                {move || swept.get().map(|s| {
                    let pts = s.points;
                    let read = reading(&text.get_value(), &pts);
                    let (tokens_table, speedup_table) = (table(&pts), table(&pts));
                    view! {
                        <p data-testid="sweep-reading">{read}</p>
                        <div class="lab-charts">
                            <Chart testid="plot-sweep-tokens" title=w(|t| &t.tokens_title) caption=w(|t| &t.tokens_caption) data=tokens>
                                {tokens_table}
                            </Chart>
                            <Chart testid="plot-sweep-speedup" title=w(|t| &t.speedup_title) caption=w(|t| &t.speedup_caption) data=speedup>
                                {speedup_table}
                            </Chart>
                        </div>
                    }
                })}
            </section>
        })}
    }
}

/// One line of points against the arrival rate.
fn line(name: &str, colour: usize, pts: &[SweepPoint], y: fn(&SweepPoint) -> f64) -> Line {
    Line {
        name: name.into(),
        colour,
        dashed: false,
        markers: false,
        points: pts.iter().map(|p| (p.rate, y(p))).collect(),
    }
}

fn lines(lines: Vec<Line>, y_label: &str, y_format: Format) -> ChartData {
    ChartData::Lines {
        lines,
        x_label: "arrival rate (req/s)".into(),
        y_label: y_label.into(),
        x_log: false,
        x_format: Format::Number,
        y_format,
    }
}

/// What the sweep says, in words chosen from its points.
fn reading(t: &SweepText, pts: &[SweepPoint]) -> String {
    let mut out = match (sweep::crossover(pts), pts.first(), pts.last()) {
        (Some(rate), _, _) => fill(&t.crossover, &[("rate", sig(rate, 3))]),
        (None, Some(first), _) if first.speedup <= 1.0 => {
            fill(&t.below, &[("rate", sig(first.rate, 3))])
        }
        (None, _, Some(last)) => fill(&t.above, &[("rate", sig(last.rate, 3))]),
        _ => String::new(),
    };
    let over: Vec<String> = pts
        .iter()
        .filter(|p| p.overloaded)
        .map(|p| sig(p.rate, 3))
        .collect();
    if !over.is_empty() {
        out.push(' ');
        out.push_str(&fill(&t.overloaded, &[("rates", over.join(", "))]));
    }
    out
}

/// The text alternative: every point's figures.
fn table(pts: &[SweepPoint]) -> impl IntoView {
    let rows = pts
        .iter()
        .map(|p| {
            view! {
                <tr data-testid="sweep-row" data-rate=format!("{}", p.rate) data-speedup=format!("{}", p.speedup) data-tokens=format!("{}", p.tokens_per_step)>
                    <th scope="row">{sig(p.rate, 3)}</th>
                    <td>{fixed(p.tokens_per_step, 2)}</td>
                    <td>{duration(p.tpot_on_s, 2)}</td>
                    <td>{duration(p.tpot_off_s, 2)}</td>
                    <td>{format!("{}×", fixed(p.speedup, 2))}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="data-table">
            <thead>
                <tr>
                    <th scope="col">"req/s"</th>
                    <th scope="col">"tokens per step"</th>
                    <th scope="col">"TPOT p50, speculating"</th>
                    <th scope="col">"TPOT p50, off"</th>
                    <th scope="col">"speedup"</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}
