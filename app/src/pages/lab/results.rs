//! The lab's results: the run controls, the headline figures, the comparison with a pinned
//! run, the plots with their tables, and the exports.

use super::state::{Lab, Role, Speed, Status};
use crate::components::{
    Chart, ChartData, ChoiceField, Deferred, EngineNote, FieldMessage, Figure, Format, Line,
    SpecSweep, SweepSetup,
};
use crate::text::format::{duration, fixed, int, percent, sig};
use leptos::prelude::*;
use std::sync::Arc;
use trainer_course::lab::{compare, LabResult, LabText};
use trainer_engine::engine::Engine;
use trainer_engine::stats::Summary;

/// Which status line shows (the run's phase, without its figures).
#[derive(Clone, Copy, PartialEq)]
enum StatusLine {
    Idle,
    Going,
    Drawing,
    Done,
    Failed,
}

/// Run, pause, resume, reset, speed, and the progress through the simulated horizon.
#[component]
pub fn Controls(lab: Lab) -> impl IntoView {
    // Memos: the buttons and the status line follow the run's phase, not every progress reply.
    let running = Memo::new(move |_| lab.status.with(Status::running));
    let paused = Memo::new(move |_| lab.status.with(Status::paused));
    let running = move || running.get();
    let paused = move || paused.get();
    let line = Memo::new(move |_| {
        lab.status.with(|s| match s {
            Status::Idle => StatusLine::Idle,
            Status::Running { .. } | Status::Paused { .. } => StatusLine::Going,
            Status::Done { .. } if !lab.staged_all.get() => StatusLine::Drawing,
            Status::Done { .. } => StatusLine::Done,
            Status::Failed(_) => StatusLine::Failed,
        })
    });
    // Where a run going (or paused) stands: (role, progress, now, horizon).
    let at = Memo::new(move |_| {
        lab.status.with(|s| match *s {
            Status::Running {
                role,
                progress,
                now,
                horizon,
            }
            | Status::Paused {
                role,
                progress,
                now,
                horizon,
            } => Some((role, progress, now, horizon)),
            _ => None,
        })
    });
    let stale = move || {
        let q = lab.run_query();
        lab.result.with(|r| r.is_some()) && lab.result_query.with(|r| *r != q)
    };
    let speeds: Vec<(String, String)> = Speed::ALL.iter().map(|s| (s.id(), s.label())).collect();
    view! {
        <div class="lab-controls" data-testid="lab-controls">
            <div class="actions">
                <button class="button primary" data-testid="lab-run"
                    disabled=move || lab.has_errors()
                    on:click=move |_| lab.start()>
                    {move || if running() || paused() { "Restart" } else { "Run" }}
                </button>
                <button class="button" data-testid="lab-pause" disabled=move || !running() on:click=move |_| lab.pause()>"Pause"</button>
                <button class="button" data-testid="lab-resume" disabled=move || !paused() on:click=move |_| lab.resume()>"Resume"</button>
                <button class="button" data-testid="lab-reset" on:click=move |_| lab.reset()>"Reset"</button>
                <ChoiceField
                    id="lab-speed"
                    testid="lab-speed"
                    label="Speed"
                    options=speeds
                    selected=Signal::derive(move || lab.speed.get().id())
                    message=FieldMessage::never("lab-speed-error")
                    on_change=move |id: String| lab.set_speed(Speed::from_id(&id))
                />
            </div>
            // The status line is built again only when the run changes phase; a run's progress
            // updates its text and bar in place.
            {move || match line.get() {
                StatusLine::Going => view! {
                    <p class="sim-status" role="status" data-testid="lab-progress"
                        data-state=move || if paused() { "paused" } else { "running" }
                        data-now=move || at.get().map(|(_, _, now, _)| format!("{now}")).unwrap_or_default()>
                        {move || at.get().map(|(role, progress, now, horizon)| {
                            let what = if role == Role::Pinned { "Rerunning the pinned run A: " } else { "" };
                            let state = if paused() { "paused at" } else { "simulated" };
                            format!("{what}{state} {} of {} ({})", duration(now, 3), duration(horizon, 3), percent(progress))
                        })}
                        <progress max="1" value=move || at.get().map_or(0.0, |(_, progress, _, _)| progress)></progress>
                    </p>
                }.into_any(),
                StatusLine::Drawing => view! {
                    <p class="muted sim-status" role="status" data-testid="lab-drawing">"Drawing the results…"</p>
                }.into_any(),
                StatusLine::Done => {
                    let Status::Done { wall_ms, busy_ms, longest_ms, events } = lab.status.get_untracked() else {
                        return ().into_any();
                    };
                    view! {
                        <p class="muted sim-status" role="status" data-testid="lab-done"
                            data-wall=format!("{wall_ms}") data-busy=format!("{busy_ms}")
                            data-longest=format!("{longest_ms}") data-events=events.to_string()>
                            {format!(
                                "Done: {} events in {} of wall time ({} simulating, in slices; the longest took {}).",
                                int(events as f64), duration(wall_ms / 1e3, 3), duration(busy_ms / 1e3, 3), duration(longest_ms / 1e3, 2)
                            )}
                        </p>
                    }.into_any()
                }
                StatusLine::Failed => {
                    let m = match lab.status.get_untracked() {
                        Status::Failed(m) => m,
                        _ => String::new(),
                    };
                    view! { <p class="field-error" role="alert" data-testid="lab-failed">{m}</p> }.into_any()
                }
                StatusLine::Idle => view! { <p class="muted" data-testid="lab-idle">"Not running. Press Run."</p> }.into_any(),
            }}
            {move || stale().then(|| view! {
                <p class="stale-note" data-testid="lab-stale">"The settings have changed since this run: run again to see them."</p>
            })}
        </div>
    }
}

/// Headline figures, compare, plots, tables and exports.
#[component]
pub fn Results(lab: Lab, text: LabText) -> impl IntoView {
    let sweep_text = text.sweep.clone();
    let sweep_setup = Memo::new(move |_| {
        lab.setup.with(|s| {
            Some(SweepSetup {
                config: s.config.clone(),
                key: s.query(),
            })
        })
    });
    let plot_text = StoredValue::new(text.plot.clone());
    let caption = move |id: &str| plot_text.with_value(|p| LabText::of(p, id).to_string());
    let compare_text = text.compare.clone();
    // Each region reads its own copy of the result (`Lab::staged`), so a new result is drawn
    // a region per task.
    let staged = lab.staged;
    let r = move || staged[0].get();
    let a = move || lab.pinned.get().map(|(_, r)| r);
    // While a run's live results come in, only the charts on screen redraw.
    let running = Signal::from(Memo::new(move |_| lab.status.with(Status::running)));
    let lines = move |region: usize, pick: &dyn Fn(&LabResult) -> Vec<Line>| -> Lines {
        let mut out = Vec::new();
        if let Some(a) = a() {
            out.extend(pick(&a).into_iter().map(|mut l| {
                l.dashed = true;
                l.name = format!("A: {}", l.name);
                l
            }));
        }
        if let Some(b) = staged[region].get() {
            let pinned = lab.pinned.with(Option::is_some);
            out.extend(pick(&b).into_iter().map(|mut l| {
                if pinned {
                    l.name = format!("B: {}", l.name);
                }
                l
            }));
        }
        out.retain(|l| !l.points.is_empty());
        out.sort_by_key(|l| !l.dashed);
        out.into()
    };
    // A plot of every distribution `pick` gives; one of series over time (`pick`'s, or the
    // report's series of one plot of `SERIES_LINES`).
    let cdf = move |region: usize, pick: fn(&LabResult) -> Vec<Line>| {
        Signal::derive(move || lines(region, &pick).cdf())
    };
    let over_time =
        move |region: usize, pick: fn(&LabResult) -> Vec<Line>, y: &'static str, f: Format| {
            Signal::derive(move || lines(region, &pick).over_time(y, f))
        };
    let columns = move |region: usize, plot: usize, y: &'static str, f: Format| {
        Signal::derive(move || {
            let pick = |r: &LabResult| {
                SERIES_LINES
                    .iter()
                    .filter(|l| l.0 == plot)
                    .map(|&(_, n, c, p)| series(n, c, r, p))
                    .collect()
            };
            lines(region, &pick).over_time(y, f)
        })
    };
    let ttft = cdf(1, |r| {
        let d = &r.distributions;
        cdf_lines(&[
            ("engine TTFT", &d.engine_ttft.points),
            ("server TTFT", &d.server_ttft.points),
            ("user TTFT", &d.user_ttft.points),
        ])
    });
    let itl = cdf(2, |r| {
        let d = &r.distributions;
        cdf_lines(&[
            ("engine ITL", &d.engine_itl.points),
            ("gateway ITL", &d.gateway_itl.points),
            ("client ITL", &d.client_itl.points),
        ])
    });
    let engine = columns(3, 0, "requests", Format::Count);
    let kv = columns(4, 1, "% of the KV pool", Format::Percent);
    let throughput = over_time(
        6,
        |r| {
            vec![Line {
                name: "output tokens/s".into(),
                colour: 0,
                dashed: false,
                markers: false,
                points: r.throughput().into_iter().map(|p| (p.0, p.1)).collect(),
            }]
        },
        "output tokens/s",
        Format::Number,
    );
    let outcomes = columns(7, 2, "requests since the start", Format::Count);
    let fleet = columns(8, 3, "replicas", Format::Count);
    let bars = Signal::derive(move || {
        let b = staged[5].get();
        let pinned: Vec<f64> = a()
            .map(|a| a.replicas.iter().map(|x| x.mean_outstanding).collect())
            .unwrap_or_default();
        ChartData::Bars {
            bars: b
                .map(|b| {
                    b.replicas
                        .iter()
                        .enumerate()
                        .map(|(i, x)| (format!("{}", i + 1), x.mean_outstanding))
                        .collect()
                })
                .unwrap_or_default(),
            pinned,
            y_label: "requests held (mean)".into(),
        }
    });
    // Engine TTFT in its parts: where a first token waits (a split fleet adds the KV cache's
    // move and the decode replica's first step). In milliseconds, or seconds once a part of
    // either run reaches one.
    let parts = |r: &LabResult| -> [(&'static str, f64); 4] {
        let s = &r.report.ttft_split;
        [
            ("queue", s.queue.mean),
            ("prefill", s.prefill.mean),
            ("KV transfer", s.transfer.mean),
            ("first decode", s.first_decode.mean),
        ]
    };
    let split = Signal::derive(move || {
        let b = staged[9].get().map(|r| parts(&r));
        let p = a().map(|a| parts(&a));
        let top = b
            .iter()
            .chain(p.iter())
            .flatten()
            .map(|x| x.1)
            .fold(0.0, f64::max);
        let (scale, y_label) = if top >= 1.0 {
            (1.0, "seconds (mean)")
        } else {
            (1e3, "milliseconds (mean)")
        };
        ChartData::Bars {
            bars: b
                .map(|b| b.iter().map(|(n, v)| (n.to_string(), v * scale)).collect())
                .unwrap_or_default(),
            pinned: p
                .map(|p| p.iter().map(|x| x.1 * scale).collect())
                .unwrap_or_default(),
            y_label: y_label.into(),
        }
    });
    // Where the first pool's prompt tokens found their KV cache: the GPU's prefix cache, host
    // memory, or nowhere (computed).
    let shares = |r: &LabResult| -> [(&'static str, f64); 3] {
        let p = r.report.pools.first();
        let gpu = p.map_or(0.0, |p| p.prefix_hit_rate);
        let host = p.map_or(0.0, |p| p.host_hit_rate);
        [
            ("GPU prefix cache", gpu * 100.0),
            ("host memory", host * 100.0),
            ("computed", (1.0 - gpu - host).max(0.0) * 100.0),
        ]
    };
    let caches = Signal::derive(move || ChartData::Bars {
        bars: staged[10]
            .get()
            .map(|b| {
                shares(&b)
                    .iter()
                    .map(|(n, v)| (n.to_string(), *v))
                    .collect()
            })
            .unwrap_or_default(),
        pinned: a()
            .map(|a| shares(&a).iter().map(|x| x.1).collect())
            .unwrap_or_default(),
        y_label: "% of prompt tokens looked up".into(),
    });
    // The engine of the run shown: read from the set-up it ran (a fixed-cost knob makes an
    // engine of the learner's own).
    let ran_on = Memo::new(move |_| {
        let q = lab.result_query.get();
        Engine::of_fleet(&trainer_course::lab::Setup::from_query(&q).config)
    });
    let ran_on = Signal::derive(move || ran_on.get());
    // Drawn once a result is in, not again with every live result.
    let have_result = Memo::new(move |_| staged[0].with(Option::is_some));
    view! {
        <section class="lab-results" aria-labelledby="lab-results-h" data-testid="lab-results">
            <h2 id="lab-results-h">"What the run measured"</h2>
            {move || have_result.get().then(|| view! { <EngineNote testid="lab-engine" engine=ran_on/> })}
            {move || r().map(|r| headline(&r))}
            {move || match (a(), r(), lab.pinned.get()) {
                (Some(a), Some(b), Some((qa, _))) => {
                    let same = lab.result_query.with(|q| *q == qa);
                    Some(compare_view(&a, &b, same).into_any())
                }
                _ => None,
            }}
            <PinBar lab=lab text=compare_text/>
            <Exports lab=lab/>
            <div class="lab-charts">
                <Deferred>
                    <Chart hold_offscreen=running testid="plot-ttft" title="Time to first token: engine, server, user" caption=caption("ttft") data=ttft>
                        {move || staged[1].get().map(|r| { let c = r.report.clocks; clock_table("ttft", &[("engine", c.engine_ttft), ("server", c.server_ttft), ("user", c.user_ttft)]) })}
                    </Chart>
                </Deferred>
                <Deferred>
                    <Chart hold_offscreen=running testid="plot-itl" title="Inter-token latency: engine, gateway, client" caption=caption("itl") data=itl>
                        {move || staged[2].get().map(|r| { let c = r.report.clocks; clock_table("itl", &[("engine", c.engine_itl), ("gateway", c.gateway_itl), ("client", c.client_itl)]) })}
                    </Chart>
                </Deferred>
                <Deferred>
                    <Chart hold_offscreen=running testid="plot-engine" title="Running and waiting over time" caption=caption("engine") data=engine>
                        {move || staged[3].get().map(|r| series_table("engine", &r, &[("running", |p| p.running as f64), ("waiting", |p| p.waiting as f64)], int))}
                    </Chart>
                </Deferred>
                <Deferred>
                    <Chart hold_offscreen=running testid="plot-kv" title="KV usage over time" caption=caption("kv") data=kv>
                        {move || staged[4].get().map(|r| series_table("kv", &r, &[("KV usage", |p| if p.kv_blocks_total > 0 { p.kv_blocks_used as f64 / p.kv_blocks_total as f64 } else { 0.0 })], percent))}
                    </Chart>
                </Deferred>
                <Deferred>
                    <Chart hold_offscreen=running testid="plot-replicas" title="Load per replica" caption=caption("replicas") data=bars>
                        {move || staged[5].get().map(|r| replica_table(&r))}
                    </Chart>
                </Deferred>
                <Deferred>
                    <Chart hold_offscreen=running testid="plot-throughput" title="Throughput over time" caption=caption("throughput") data=throughput>
                        {move || staged[6].get().map(|r| throughput_table(&r))}
                    </Chart>
                </Deferred>
                <Deferred>
                    <Chart hold_offscreen=running testid="plot-outcomes" title="429s and spills over time" caption=caption("outcomes") data=outcomes>
                        {move || staged[7].get().map(|r| outcomes_table(&r))}
                    </Chart>
                </Deferred>
                <Deferred>
                    <Chart hold_offscreen=running testid="plot-fleet" title="Replicas over time" caption=caption("fleet") data=fleet>
                        {move || staged[8].get().map(|r| series_table("fleet", &r, &[("paid for", |p| p.provisioned_replicas as f64), ("ready", |p| p.ready_replicas as f64)], int))}
                    </Chart>
                </Deferred>
                <Deferred>
                    <Chart hold_offscreen=running testid="plot-ttft-split" title="Time to first token, in parts" caption=caption("ttft_split") data=split>
                        {move || staged[9].get().map(|r| { let s = r.report.ttft_split; let k = &r.report.kv_transfer; clock_table("ttft_split", &[("queue", s.queue), ("prefill", s.prefill), ("KV transfer", s.transfer), ("first decode", s.first_decode), ("link wait", k.wait), ("on the link", k.time)]) })}
                    </Chart>
                </Deferred>
                <Deferred>
                    <Chart hold_offscreen=running testid="plot-caches" title="Where prompt tokens found their KV cache" caption=caption("caches") data=caches>
                        {move || staged[10].get().map(|r| caches_table(&r))}
                    </Chart>
                </Deferred>
            </div>
            <Deferred><SpecSweep setup=sweep_setup text=sweep_text testid="lab-sweep"/></Deferred>
        </section>
    }
}

/// Lines as a chart over some x axis.
struct Lines(Vec<Line>);

impl From<Vec<Line>> for Lines {
    fn from(v: Vec<Line>) -> Lines {
        Lines(v)
    }
}

impl Lines {
    fn cdf(self) -> ChartData {
        ChartData::Lines {
            lines: self.0,
            x_label: "latency (log scale)".into(),
            y_label: "fraction at or below".into(),
            x_log: true,
            y_log: false,
            legend_top_left: false,
            x_format: Format::Duration,
            y_format: Format::Fraction,
        }
    }

    fn over_time(self, y: &str, y_format: Format) -> ChartData {
        ChartData::Lines {
            lines: self.0,
            x_label: "simulated time".into(),
            y_label: y.into(),
            x_log: false,
            y_log: false,
            legend_top_left: false,
            x_format: Format::Duration,
            y_format,
        }
    }
}

/// One column of the series as a line over time.
fn series(name: &str, colour: usize, r: &LabResult, f: Pick) -> Line {
    Line {
        name: name.into(),
        colour,
        dashed: false,
        markers: false,
        points: r.report.series.iter().map(|p| (p.t, f(p))).collect(),
    }
}

/// One line per named distribution, in the palette's order.
fn cdf_lines(named: &[(&str, &Vec<(f64, f64)>)]) -> Vec<Line> {
    named
        .iter()
        .enumerate()
        .map(|(colour, (name, points))| Line {
            name: (*name).into(),
            colour,
            dashed: false,
            markers: false,
            points: points.to_vec(),
        })
        .collect()
}

fn headline(r: &LabResult) -> impl IntoView {
    let figs = r
        .headline
        .iter()
        .map(|f| {
            view! { <Figure testid=format!("lab-fig-{}", f.id) value=f.value shown=f.shown() label=f.label/> }
        })
        .collect_view();
    let verdict = match r.report.verdict {
        trainer_engine::fleet::FleetVerdict::Overloaded { at, .. } => Some(format!(
            "The run stopped at a work cap at {} of simulated time: the load is more than this fleet (or the simulator in a browser) can follow. The figures are for the run so far.",
            duration(at, 3)
        )),
        _ => None,
    };
    view! {
        {verdict.map(|v| view! { <p class="field-error" role="status" data-testid="lab-overloaded">{v}</p> })}
        <div class="figures lab-figures" data-testid="lab-figures">{figs}</div>
    }
}

fn compare_view(a: &LabResult, b: &LabResult, same: bool) -> impl IntoView {
    let rows = compare(a, b)
        .into_iter()
        .map(|d| {
            let cls = match d.b_better {
                Some(true) => "ok",
                Some(false) => "miss",
                None => "",
            };
            view! {
                <tr data-testid=format!("cmp-{}", d.id)>
                    <th scope="row">{d.label}</th>
                    <td data-testid=format!("cmp-{}-a", d.id) data-value=format!("{}", d.a)>{d.a_shown()}</td>
                    <td data-testid=format!("cmp-{}-b", d.id) data-value=format!("{}", d.b)>{d.b_shown()}</td>
                    <td class=cls data-testid=format!("cmp-{}-diff", d.id) data-value=format!("{}", d.diff)>{d.shown()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="lab-compare" data-testid="lab-compare">
            <h3>"A against B"</h3>
            {same.then(|| view! { <p class="muted small" data-testid="lab-compare-same">"B has the same settings as A so far: change something and run again."</p> })}
            <div class="table-scroll">
                <table class="sim-table">
                    <thead><tr><th scope="col">"Figure"</th><th scope="col">"A (pinned)"</th><th scope="col">"B (this run)"</th><th scope="col">"B − A"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </div>
    }
}

#[component]
fn PinBar(lab: Lab, text: String) -> impl IntoView {
    let done = Memo::new(move |_| lab.status.with(Status::done));
    let done = move || done.get();
    let pinned = move || lab.pinned.with(Option::is_some);
    view! {
        <div class="lab-pin">
            <p class="muted small">{text}</p>
            <div class="actions">
                <button class="button" data-testid="lab-pin" disabled=move || !done() on:click=move |_| lab.pin()>
                    {move || if pinned() { "Pin this run as A instead" } else { "Pin this run as A" }}
                </button>
                {move || pinned().then(|| view! {
                    <button class="button" data-testid="lab-unpin" on:click=move |_| lab.unpin()>"Unpin A"</button>
                })}
            </div>
        </div>
    }
}

#[component]
fn Exports(lab: Lab) -> impl IntoView {
    let have = move || lab.result.with(Option::is_some);
    let save = move |name: &'static str, mime: &'static str, f: fn(&LabResult, &str) -> String| {
        move |_| {
            if let Some(r) = lab.result.get_untracked() {
                let q = lab.result_query.get_untracked();
                let _ = crate::browser::download(name, mime, &f(&r, &q));
            }
        }
    };
    view! {
        <div class="actions lab-exports" data-testid="lab-exports">
            <button class="button" data-testid="lab-export-json" disabled=move || !have()
                on:click=save("lab-run.json", "application/json", |r, q| r.to_json(q))>"Export JSON"</button>
            <button class="button" data-testid="lab-export-csv" disabled=move || !have()
                on:click=save("lab-series.csv", "text/csv", |r, _| r.series_csv())>"Series as CSV"</button>
            <button class="button" data-testid="lab-export-figures" disabled=move || !have()
                on:click=save("lab-figures.csv", "text/csv", |r, _| r.figures_csv())>"Figures as CSV"</button>
        </div>
    }
}

/// Each pool's prompt tokens by where their KV cache came from, and its adapters' loads.
fn caches_table(r: &LabResult) -> impl IntoView {
    let body = r
        .report
        .pools
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let computed = (1.0 - p.prefix_hit_rate - p.host_hit_rate).max(0.0);
            let cell = |q: &'static str, v: f64, text: String| {
                view! { <td class="num" data-testid=format!("caches-{i}-{q}") data-value=format!("{v}")>{text}</td> }
            };
            view! {
                <tr>
                    <th scope="row">{p.name.clone()}</th>
                    {cell("gpu", p.prefix_hit_rate, percent(p.prefix_hit_rate))}
                    {cell("host", p.host_hit_rate, percent(p.host_hit_rate))}
                    {cell("computed", computed, percent(computed))}
                    {cell("adapter_loads", p.lora_loads as f64, int(p.lora_loads as f64))}
                    {cell("adapter_load_s", p.lora_load_s, duration(p.lora_load_s, 3))}
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="sim-table" data-testid="table-caches">
            <thead><tr><th scope="col">"Pool"</th><th scope="col">"GPU cache"</th><th scope="col">"Host memory"</th><th scope="col">"Computed"</th><th scope="col">"Adapter loads"</th><th scope="col">"Load time"</th></tr></thead>
            <tbody>{body}</tbody>
        </table>
    }
}

fn clock_table(id: &'static str, rows: &[(&'static str, Summary)]) -> impl IntoView {
    // The parts of one clock (the TTFT split) are not clocks of their own.
    let first = if id == "ttft_split" { "Part" } else { "Clock" };
    let body = rows
        .iter()
        .map(|(name, s)| {
            let cell = |q: &'static str, v: f64| {
                view! { <td data-testid=format!("{id}-{name}-{q}") data-value=format!("{v}")>{duration(v, 3)}</td> }
            };
            view! {
                <tr>
                    <th scope="row">{*name}</th>
                    <td data-testid=format!("{id}-{name}-count") data-value=s.count.to_string()>{int(s.count as f64)}</td>
                    {cell("p50", s.p50)}
                    {cell("p90", s.p90)}
                    {cell("p99", s.p99)}
                    {cell("max", s.max)}
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="sim-table" data-testid=format!("table-{id}")>
            <thead><tr><th scope="col">{first}</th><th scope="col">"Count"</th><th scope="col">"p50"</th><th scope="col">"p90"</th><th scope="col">"p99"</th><th scope="col">"max"</th></tr></thead>
            <tbody>{body}</tbody>
        </table>
    }
}

type Pick = fn(&trainer_engine::fleet::sim::SeriesPoint) -> f64;

/// The lines over time drawn from the report's series: (plot, name, colour, column). Plot 0
/// is the engine's queue, 1 the KV pool, 2 the outcomes, 3 the fleet.
const SERIES_LINES: [(usize, &str, usize, Pick); 7] = [
    (0, "running", 0, |p| p.running as f64),
    (0, "waiting", 1, |p| p.waiting as f64),
    (1, "KV blocks in use", 0, kv_share),
    (2, "429s", 1, |p| p.rejected as f64),
    (2, "spilled", 3, |p| p.spilled as f64),
    (3, "replicas paid for", 0, |p| p.provisioned_replicas as f64),
    (3, "ready", 2, |p| p.ready_replicas as f64),
];

/// The share of the KV pool in use, in percent (0 without a pool).
fn kv_share(p: &trainer_engine::fleet::sim::SeriesPoint) -> f64 {
    if p.kv_blocks_total > 0 {
        p.kv_blocks_used as f64 / p.kv_blocks_total as f64 * 100.0
    } else {
        0.0
    }
}

fn series_table(
    id: &'static str,
    r: &Arc<LabResult>,
    cols: &[(&'static str, Pick)],
    fmt: fn(f64) -> String,
) -> impl IntoView {
    let s = &r.report.series;
    let body = cols
        .iter()
        .map(|(name, f)| {
            let vals: Vec<f64> = s.iter().map(f).collect();
            let n = vals.len().max(1) as f64;
            let mean = vals.iter().sum::<f64>() / n;
            let max = vals.iter().copied().fold(0.0, f64::max);
            let last = vals.last().copied().unwrap_or(0.0);
            let key = name.replace(' ', "-");
            view! {
                <tr>
                    <th scope="row">{*name}</th>
                    <td data-testid=format!("{id}-{key}-mean") data-value=format!("{mean}")>{fmt(mean)}</td>
                    <td data-testid=format!("{id}-{key}-max") data-value=format!("{max}")>{fmt(max)}</td>
                    <td data-testid=format!("{id}-{key}-last") data-value=format!("{last}")>{fmt(last)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="sim-table" data-testid=format!("table-{id}") data-points=s.len().to_string()>
            <caption class="muted small">{format!("Over {} points of the series", s.len())}</caption>
            <thead><tr><td></td><th scope="col">"mean"</th><th scope="col">"highest"</th><th scope="col">"at the end"</th></tr></thead>
            <tbody>{body}</tbody>
        </table>
    }
}

fn replica_table(r: &LabResult) -> impl IntoView {
    let rows = r
        .replicas
        .iter()
        .enumerate()
        .map(|(i, x)| {
            view! {
                <tr data-testid=format!("replica-row-{}", i + 1)>
                    <th scope="row">{format!("{}", i + 1)}</th>
                    <td data-testid=format!("replica-{}-routed", i + 1) data-value=x.routed.to_string()>{int(x.routed as f64)}</td>
                    <td data-testid=format!("replica-{}-load", i + 1) data-value=format!("{}", x.mean_outstanding)>{fixed(x.mean_outstanding, 1)}</td>
                    <td>{percent(x.busy_fraction)}</td>
                    <td>{int(x.preemptions as f64)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="sim-table" data-testid="table-replicas">
            <thead><tr><th scope="col">"Replica"</th><th scope="col">"Routed"</th><th scope="col">"Mean load"</th><th scope="col">"Busy"</th><th scope="col">"Preemptions"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

fn throughput_table(r: &LabResult) -> impl IntoView {
    let t = r.throughput();
    let n = t.len().max(1) as f64;
    let mean = t.iter().map(|p| p.1).sum::<f64>() / n;
    let peak = t.iter().map(|p| p.1).fold(0.0, f64::max);
    let req = t.iter().map(|p| p.2).sum::<f64>() / n;
    view! {
        <table class="sim-table" data-testid="table-throughput">
            <tbody>
                <tr><th scope="row">"Output tokens/s, mean"</th><td data-testid="throughput-mean" data-value=format!("{mean}")>{sig(mean, 4)}</td></tr>
                <tr><th scope="row">"Output tokens/s, highest"</th><td data-testid="throughput-peak" data-value=format!("{peak}")>{sig(peak, 4)}</td></tr>
                <tr><th scope="row">"Requests served/s, mean"</th><td data-testid="throughput-requests" data-value=format!("{req}")>{sig(req, 4)}</td></tr>
                <tr><th scope="row">"Output tokens/s at the clients (whole run)"</th><td data-testid="throughput-vllm" data-value=format!("{}", r.report.vllm.output_throughput)>{sig(r.report.vllm.output_throughput, 4)}</td></tr>
            </tbody>
        </table>
    }
}

fn outcomes_table(r: &LabResult) -> impl IntoView {
    let o = r.report.outcomes;
    let row = |id: &'static str, label: &'static str, v: u64| {
        view! { <tr><th scope="row">{label}</th><td data-testid=format!("outcomes-{id}") data-value=v.to_string()>{int(v as f64)}</td></tr> }
    };
    view! {
        <table class="sim-table" data-testid="table-outcomes">
            <tbody>
                {row("arrived", "arrived", o.arrived)}
                {row("completed", "served", o.completed)}
                {row("rejected", "429s (all causes)", o.rejected())}
                {row("spilled", "spilled", o.spilled())}
                {row("timed_out", "clients gave up", o.timed_out)}
                {(o.abandoned > 0).then(|| view! {
                    {row("abandoned", "clients who left early", o.abandoned)}
                    {row("abandoned_mid_reply", "of those, mid-reply", o.abandoned_mid_reply)}
                })}
                {(o.replicas_failed > 0).then(|| view! {
                    {row("replicas_failed", "replicas that failed", o.replicas_failed as u64)}
                    {row("failed", "streams broken by a failure", o.failed)}
                    {row("retried", "sent to another replica", o.retried)}
                })}
                {(o.abandoned + o.timed_out > 0).then(|| view! {
                    {row("cancelled_in_engine", "dropped by the engine at once", o.cancelled_in_engine)}
                    {row("tokens_for_nobody", "tokens sampled for nobody", o.tokens_for_nobody)}
                })}
            </tbody>
        </table>
    }
}
