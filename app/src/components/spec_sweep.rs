//! Speculation against load: a button runs a speculating set-up at a range of traffic levels,
//! with and without speculation, in the simulators' workers, and two charts show the tokens a
//! verifying step gains and the per-token speedup against the arrival rate, with a sentence the
//! core chooses from the points. The lab sweeps its set-up; the speculation question sweeps its
//! replica around the crossover it worked out. The runs, the points and the reading are the
//! core's (`trainer_course::sizing::sweep`); this only draws them.

use crate::components::{Chart, ChartData, Format, Line};
use crate::sim_runner::{run_fleets, RunStatus as Status};
use crate::text::fill;
use crate::text::format::{duration, fixed, percent, sig};
use leptos::prelude::*;
use trainer_course::sizing::sweep::{self, Derived, SweepPoint, SweepText};
use trainer_engine::fleet::FleetConfig;

/// What a sweep runs: the speculating set-up, and a key that changes when the set-up does (the
/// page's query), so a finished sweep of an older set-up is marked stale.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSetup {
    pub config: FleetConfig,
    pub key: String,
}

/// The points of a finished sweep and the key of the set-up it swept.
#[derive(Clone, Debug, PartialEq)]
struct Swept {
    key: String,
    points: Vec<SweepPoint>,
}

/// The sweep's section, shown while `setup` speculates.
#[component]
pub fn SpecSweep(
    /// The set-up to sweep, read when the button is pressed (`None` hides the section).
    #[prop(into)]
    setup: Signal<Option<SweepSetup>>,
    /// The section's words.
    text: SweepText,
    /// The section's `data-testid` (the controls inside are `sweep-*`).
    testid: &'static str,
    /// Where the arithmetic put the crossover: the reading sets it beside the runs' (the lab
    /// has none).
    #[prop(optional, into)]
    derived: Option<Signal<Option<Derived>>>,
) -> impl IntoView {
    let speculating = Memo::new(move |_| {
        setup.with(|s| s.as_ref().is_some_and(|s| sweep::speculates(&s.config)))
    });
    let status = RwSignal::new(Status::Idle);
    let swept: RwSignal<Option<Swept>> = RwSignal::new(None);
    let start = move |_| {
        if matches!(status.get_untracked(), Status::Running { .. }) {
            return;
        }
        let Some(SweepSetup { config, key }) = setup.get_untracked() else {
            return;
        };
        let runs = sweep::fleets(&config);
        swept.set(None);
        run_fleets(runs, status, move |done| {
            let reports: Vec<_> = done.into_iter().map(|(_, r)| r).collect();
            let points = sweep::points(&config, &reports);
            let _ = swept.try_set(Some(Swept { key, points }));
        });
    };
    let running = move || matches!(status.get(), Status::Running { .. });
    let stale = move || {
        swept.with(|s| {
            s.as_ref()
                .is_some_and(|s| setup.with(|now| now.as_ref().is_none_or(|n| n.key != s.key)))
        })
    };
    let derived_rate = move || derived.and_then(|d| d.get());
    let intro = {
        let template = text.intro.clone();
        move || {
            let rate = setup.with(|s| s.as_ref().map_or(0.0, |s| s.config.offered_rate()));
            fill(
                &template,
                &[
                    ("lowest", percent(sweep::LOADS[0])),
                    ("highest", percent(sweep::LOADS[sweep::LOADS.len() - 1])),
                    ("seconds", sig(sweep::HORIZON_S, 3)),
                    ("rate", sig(rate, 3)),
                ],
            )
        }
    };
    let points = move || swept.with(|s| s.as_ref().map(|s| s.points.clone()).unwrap_or_default());
    let tokens = Signal::derive(move || {
        lines(
            vec![line("tokens per verifying step", 0, &points(), |p| {
                p.tokens_per_step
            })],
            "tokens per step",
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
        lines(ls, "speedup (×)")
    });
    let text = StoredValue::new(text);
    let w = move |f: fn(&SweepText) -> &String| text.with_value(|t| f(t).clone());
    let heading = format!("{testid}-h");
    view! {
        {move || speculating.get().then(|| view! {
            <section class="lab-sweep" aria-labelledby=heading.clone() data-testid=testid>
                <h3 id=heading.clone()>{w(|t| &t.title)}</h3>
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
                    let read = text.with_value(|t| sweep::reading(t, &pts, derived_rate()));
                    let (tokens_table, speedup_table) = (tokens_table(&pts), speedup_table(&pts));
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

fn lines(lines: Vec<Line>, y_label: &str) -> ChartData {
    ChartData::Lines {
        lines,
        x_label: "arrival rate (req/s)".into(),
        y_label: y_label.into(),
        x_log: false,
        y_log: false,
        legend_top_left: false,
        x_format: Format::Number,
        y_format: Format::Number,
    }
}

/// The tokens chart's text alternative: the tokens a verifying step gains at every level.
fn tokens_table(pts: &[SweepPoint]) -> impl IntoView {
    let rows = pts
        .iter()
        .map(|p| {
            view! {
                <tr data-testid="sweep-row" data-rate=format!("{}", p.rate) data-tokens=format!("{}", p.tokens_per_step)>
                    <th scope="row">{sig(p.rate, 3)}</th>
                    <td>{fixed(p.tokens_per_step, 2)}</td>
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
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// The speedup chart's text alternative: the time per output token with and without guessing
/// at every level, and their ratio.
fn speedup_table(pts: &[SweepPoint]) -> impl IntoView {
    let rows = pts
        .iter()
        .map(|p| {
            view! {
                <tr data-testid="sweep-speedup-row" data-rate=format!("{}", p.rate) data-speedup=format!("{}", p.speedup)>
                    <th scope="row">{sig(p.rate, 3)}</th>
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
                    <th scope="col">"TPOT p50, speculating"</th>
                    <th scope="col">"TPOT p50, off"</th>
                    <th scope="col">"speedup"</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}
