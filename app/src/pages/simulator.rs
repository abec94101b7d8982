//! "How close is the simulator?": the published measurements replayed through the simulator
//! in the simulators' workers, a job per row, beside what it models and leaves out.

use crate::components::{Chart, ChartData, ColumnHeads, Format, Line};
use crate::sim_client::{control, submit, JobHandle};
use crate::text::format::{percent, sig};
use leptos::prelude::*;
use trainer_course::jobs::{self, Control, Job, Reply};
use trainer_course::validation::{about, shipped, Outcome, Role, Row, BAND};

/// The page at `/simulator`.
#[component]
pub fn SimulatorPage() -> impl IntoView {
    let rows: Vec<Row> = shipped().map(|m| m.row).unwrap_or_default();
    let words = about().ok();
    let total = rows.len();
    // Each row is a job of its own, so the rows replay side by side in the workers.
    let replies: RwSignal<Vec<Option<Result<Outcome, String>>>> = RwSignal::new(vec![None; total]);
    let handles: Vec<JobHandle> = (0..total)
        .map(|i| {
            submit(Job::Validation(i), move |reply| {
                let out = match reply {
                    Reply::Done(jobs::Outcome::Validation(o)) => o.map(|o| *o),
                    Reply::Failed(m) => Err(m),
                    _ => return,
                };
                let _ = replies.try_update(|r| r[i] = Some(out));
            })
        })
        .collect();
    on_cleanup(move || {
        for h in handles {
            control(h, Control::Cancel);
        }
    });
    // The rows replayed so far, in the file's order.
    let results =
        Memo::new(move |_| replies.with(|r| r.iter().flatten().cloned().collect::<Vec<_>>()));
    let Some(words) = words else {
        return view! {
            <section class="simulator-page" data-testid="page-simulator">
                <h1>"How close is the simulator?"</h1>
                <p role="alert">"This page's words did not load."</p>
            </section>
        }
        .into_any();
    };
    // Rows held to the band with one role: how many, how many within it, the furthest.
    let held = move |role: Role| {
        results.with(|r| {
            let ok: Vec<&Outcome> = r
                .iter()
                .filter_map(|o| o.as_ref().ok())
                .filter(|o| o.excluded.is_none() && o.role == role)
                .collect();
            let within = ok.iter().filter(|o| o.within_band).count();
            let worst = ok.iter().map(|o| o.error.abs()).fold(0.0, f64::max);
            (ok.len(), within, worst)
        })
    };
    // The residual plot: a dot per row replayed, fitted and held out apart, and the band.
    let residuals = Memo::new(move |_| {
        results.with(|r| {
            let ok: Vec<&Outcome> = r
                .iter()
                .filter_map(|o| o.as_ref().ok())
                .filter(|o| o.excluded.is_none())
                .collect();
            let dots = |role: Role| -> Vec<(f64, f64)> {
                let mut v: Vec<(f64, f64)> = ok
                    .iter()
                    .filter(|o| o.role == role)
                    .map(|o| (o.batch.max(1.0), o.error * 100.0))
                    .collect();
                v.sort_by(|a, b| a.0.total_cmp(&b.0));
                v
            };
            let (lo, hi) = ok.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), o| {
                (lo.min(o.batch.max(1.0)), hi.max(o.batch))
            });
            let mut lines = vec![
                Line {
                    name: "Fitted on".into(),
                    colour: 0,
                    dashed: false,
                    markers: true,
                    points: dots(Role::Fitted),
                },
                Line {
                    name: "Held out".into(),
                    colour: 1,
                    dashed: false,
                    markers: true,
                    points: dots(Role::HeldOut),
                },
            ];
            if lo.is_finite() && hi >= lo {
                for sign in [1.0, -1.0] {
                    lines.push(Line {
                        name: if sign > 0.0 {
                            "The band".into()
                        } else {
                            String::new()
                        },
                        colour: 2,
                        dashed: true,
                        markers: false,
                        points: vec![
                            (lo, sign * BAND * 100.0),
                            (hi.max(lo * 1.01), sign * BAND * 100.0),
                        ],
                    });
                }
            }
            ChartData::Lines {
                lines,
                x_label: "Batch (output tokens per step)".into(),
                y_label: "Simulated against measured".into(),
                x_log: true,
                y_log: false,
                legend_top_left: false,
                x_format: Format::Number,
                y_format: Format::Percent,
            }
        })
    });
    let summary = move |role: Role, name: &str| {
        let (n, within, worst) = held(role);
        format!(
            "{name}: {within} of {n} within {} of the measurement, the furthest {} away.",
            percent(BAND),
            percent(worst)
        )
    };
    view! {
        <section class="simulator-page" data-testid="page-simulator">
            <h1>{words.title}</h1>
            <p>{words.intro}</p>
            <p>{words.band}</p>
            <p>{words.roles}</p>
            <p data-testid="validation-summary" aria-live="polite">
                {move || {
                    let done = results.with(|r| r.len());
                    if done < total {
                        format!("Replaying {done} of {total} measurements…")
                    } else {
                        format!("{} {}", summary(Role::Fitted, "Fitted on"), summary(Role::HeldOut, "Held out"))
                    }
                }}
            </p>
            <div class="table-scroll">
                <table class="validation" data-testid="validation-table">
                    <caption>"Published measurements and the simulator's figure for each"</caption>
                    <ColumnHeads columns=&["Measurement", "Role", "Figure", "Measured", "Simulated", "Gap"]/>
                    <tbody>
                        {rows
                            .iter()
                            .enumerate()
                            .map(|(i, row)| {
                                let row = row.clone();
                                let id = row.id.clone();
                                let result = move || replies.with(|r| r.get(i).cloned().flatten());
                                view! {
                                    <tr data-testid=format!("validation-row-{id}")>
                                        <th scope="row">
                                            <span class="row-title">{format!("{} on {} × {}", model_name(&row.model), row.tp, gpu_name(&row.gpu))}</span>
                                            <span class="row-detail">{row.engine.clone()}</span>
                                            <span class="row-detail">{row.conditions.clone()}</span>
                                            <span class="row-source">{format!("Source: {}", row.source)}</span>
                                        </th>
                                        <td data-testid=format!("validation-role-{id}")>{match row.role { Role::Fitted => "Fitted on", Role::HeldOut => "Held out" }}</td>
                                        <td><code>{row.metric.clone()}</code></td>
                                        <td data-testid=format!("validation-measured-{id}")>{sig(row.measured, 4)}</td>
                                        <td data-testid=format!("validation-simulated-{id}")>
                                            {move || match result() {
                                                None => "…".to_string(),
                                                Some(Ok(o)) => sig(o.simulated, 4),
                                                Some(Err(e)) => e,
                                            }}
                                        </td>
                                        <td data-testid=format!("validation-gap-{id}")>
                                            {move || match result() {
                                                Some(Ok(o)) => {
                                                    let gap = format!("{}{}", if o.error >= 0.0 { "+" } else { "−" }, percent(o.error.abs()));
                                                    match o.excluded {
                                                        Some(why) => format!("{gap}: not held to the band. {why}"),
                                                        None if o.within_band => format!("{gap}, within the band"),
                                                        None => format!("{gap}, outside the band"),
                                                    }
                                                }
                                                _ => String::new(),
                                            }}
                                        </td>
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
            </div>
            <h2>{words.residuals_heading.clone()}</h2>
            <Chart testid="validation-residuals" title=words.residuals_title.clone() caption=words.residuals_caption.clone() data=residuals>
                <table class="sim-table" data-testid="validation-residuals-table">
                    <caption>{words.residuals_title.clone()}</caption>
                    <ColumnHeads columns=&["Measurement", "Role", "Batch", "Gap"]/>
                    <tbody>
                        {move || results.with(|r| r.iter().filter_map(|o| o.as_ref().ok()).filter(|o| o.excluded.is_none()).map(|o| view! {
                            <tr>
                                <th scope="row">{o.id.clone()}</th>
                                <td>{match o.role { Role::Fitted => "Fitted on", Role::HeldOut => "Held out" }}</td>
                                <td>{sig(o.batch, 3)}</td>
                                <td>{format!("{}{}", if o.error >= 0.0 { "+" } else { "−" }, percent(o.error.abs()))}</td>
                            </tr>
                        }).collect_view())}
                    </tbody>
                </table>
            </Chart>
            <h2>"What the simulator models"</h2>
            <ul data-testid="validation-models">{words.models.into_iter().map(|m| view! { <li>{m}</li> }).collect_view()}</ul>
            <h2>"What it leaves out"</h2>
            <ul data-testid="validation-leaves-out">{words.leaves_out.into_iter().map(|m| view! { <li>{m}</li> }).collect_view()}</ul>
            <h2>"The figures, as vLLM's benchmark names them"</h2>
            <p>"Every run reports these under the keys " <code>"vllm bench serve"</code> " writes (" <code>"median_ttft_ms"</code> ", " <code>"p99_itl_ms"</code> ", " <code>"request_goodput"</code> "…), so a figure here can be set beside one from a real benchmark."</p>
            <dl class="metric-defs" data-testid="metric-definitions">
                {words.metric
                    .into_iter()
                    .map(|m| view! {
                        <dt data-testid=format!("metric-{}", m.key)>{m.name}</dt>
                        <dd>{m.definition}</dd>
                    })
                    .collect_view()}
            </dl>
        </section>
    }
    .into_any()
}

fn model_name(id: &str) -> String {
    trainer_engine::catalog::model_by_id(id).map_or_else(|| id.to_string(), |m| m.name)
}

fn gpu_name(id: &str) -> String {
    trainer_engine::catalog::gpu_by_id(id).map_or_else(|| id.to_string(), |g| g.name)
}
