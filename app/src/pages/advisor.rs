//! The serving advisor (`/advisor`): the traffic, the targets and the choices to search in a
//! form whose state is the URL; the search (`trainer_course::advisor`) asks for runs in
//! rounds, which go to the simulators' workers side by side; then the answer in words, the
//! two frontier plots (each dot opens the lab with that configuration) with their tables, and
//! what the arithmetic ruled out with its reasons. The page only draws what the core found.

use crate::components::{
    Chart, ChartData, ChoiceField, FieldError, FieldMessage, Format, Frame, Line, Link, NumberField,
};
use crate::route::{use_router, Route};
use crate::sim_runner::{start_fleets, Batch, RunStatus};
use crate::text::fill;
use crate::text::format::{duration, int, money, sig};
use crate::url_state::use_url_state;
use leptos::prelude::*;
use std::collections::BTreeMap;
use trainer_course::advisor::answer::{self, PlotWords, Words};
use trainer_course::advisor::form::{PageState, CHOICES, TRAFFIC};
use trainer_course::advisor::{Form, FrontierPoint, Search, Space};
use trainer_course::lab::Knob;
use trainer_engine::catalog::gpus;
use trainer_engine::fleet::FleetConfig;

/// Where the search stands.
#[derive(Clone, Debug, PartialEq)]
enum Phase {
    Idle,
    /// Runs recorded, runs known to be due, and whether the longer runs have begun.
    Running {
        done: usize,
        due: usize,
        confirming: bool,
    },
    Stopped,
    Failed(String),
    Done,
}

/// A finished search, as the page shows it.
#[derive(Clone, Debug, PartialEq)]
struct Finished {
    /// The form's query when the search started (a different one now makes it stale).
    key: String,
    lines: Vec<(&'static str, String)>,
    rows: Vec<Row>,
    pruned: Vec<(String, String)>,
    runs: usize,
    simulated_s: f64,
    wall_ms: f64,
    targets: (f64, f64),
    pct: &'static str,
}

/// One candidate at its count: what the tables say and the lab query it opens.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    /// Each setting searched: the knob's label and the value as the lab shows it.
    parts: Vec<(String, String)>,
    lab: String,
    best: bool,
    f: FrontierPoint,
    gpus: u32,
}

/// The page at `/advisor`.
#[component]
pub fn AdvisorPage() -> impl IntoView {
    let Some(words) = words() else {
        return view! { <section data-testid="page-advisor"><h1>"—"</h1></section> }.into_any();
    };
    let w = StoredValue::new(words);
    let say = move |f: fn(&Words) -> &String| f(words).clone();
    let url = use_url_state();
    let router = use_router();
    let (first, first_page) = url.read(Form::from_page_query);
    let form = RwSignal::new(first);
    // What each text field shows: what was typed, even when it was refused.
    let shown = RwSignal::new(shown_of(&form.get_untracked()));
    // The learner's guess: its text (in the URL as typed), and the number committed when the
    // search started.
    let guess_text = RwSignal::new(first_page.guess.clone());
    // A guess in the link that is not a whole number of GPUs is named on its field.
    let guess_error =
        RwSignal::new((guess_of(&first_page.guess).is_err()).then(|| words.guess_bad.clone()));
    let committed = StoredValue::new(None::<u32>);
    url.follow(Form::from_page_query, move |(f, p): (Form, PageState)| {
        // Leaving for another page changes the query too: that one is not this page's.
        if router.route.get_untracked() != Route::Advisor {
            return;
        }
        shown.set(shown_of(&f));
        form.set(f);
        guess_error.set(guess_of(&p.guess).is_err().then(|| say(|w| &w.guess_bad)));
        guess_text.set(p.guess);
    });
    // The URL: the form, the guess as typed, and whether the search ran.
    let write_url = move |run: bool| {
        let page = PageState {
            guess: guess_text.get_untracked(),
            run,
        };
        url.replace(&form.with_untracked(|f| f.page_query(&page)));
    };
    let edit = move |key: &str, text: String| {
        form.update(|f| {
            if let Err(m) = f.set(key, &text) {
                f.errors.insert(key.to_string(), m);
            }
        });
        write_url(false);
    };
    let error = move |key: &'static str| {
        Signal::derive(move || form.try_with(|f| f.errors.get(key).cloned()).flatten())
    };

    let phase = RwSignal::new(Phase::Idle);
    let batch = RwSignal::new(RunStatus::Idle);
    let search = StoredValue::new_local(None::<Search>);
    let sent = StoredValue::new_local(None::<Batch>);
    let generation = StoredValue::new(0u64);
    let started = StoredValue::new(0.0f64);
    let finished = RwSignal::new(None::<Finished>);
    // Also the page's cleanup, when its values may already be gone: every access tries.
    let stop = move || {
        let _ = generation.try_update_value(|g| *g += 1);
        let _ = sent.try_with_value(|b| {
            if let Some(b) = b {
                b.cancel();
            }
        });
    };
    on_cleanup(stop);
    Effect::new(move |_| {
        if let RunStatus::Failed(m) = batch.get() {
            stop();
            phase.set(Phase::Failed(m));
        }
    });
    let finish = move |key: String| {
        let wall_ms = crate::browser::now_ms() - started.get_value();
        let done = search.with_value(|s| {
            s.as_ref().map(|s| {
                let href_query = |i: usize, n: u32| s.setup(i, n).query();
                let best = s.best();
                let rows = s
                    .frontier()
                    .into_iter()
                    .map(|f| Row {
                        parts: {
                            let cfg = s.setup(f.candidate, 1).config;
                            s.candidates[f.candidate]
                                .settings
                                .iter()
                                .map(|(k, v)| answer::setting_parts(&cfg, k, v))
                                .collect()
                        },
                        lab: href_query(f.candidate, f.replicas),
                        best: best == Some((f.candidate, f.replicas)),
                        gpus: f.replicas * s.candidates[f.candidate].gpus_per_replica,
                        f,
                    })
                    .collect();
                let cfg = FleetConfig::seed();
                let pruned = s
                    .pruned
                    .iter()
                    .map(|p| {
                        let what: Vec<String> = p
                            .settings
                            .iter()
                            .map(|(k, v)| answer::setting_text(&cfg, k, v))
                            .collect();
                        (
                            what.join("; "),
                            w.with_value(|w| answer::reason(&w.reasons, p)),
                        )
                    })
                    .collect();
                Finished {
                    key,
                    lines: w.with_value(|w| {
                        let mut lines = answer::answer(s, &w.answer);
                        let guessed = committed
                            .get_value()
                            .and_then(|g| answer::guessed(s, &w.answer, g));
                        if let Some(line) = guessed {
                            lines.insert(1, ("guess", line));
                        }
                        lines
                    }),
                    rows,
                    pruned,
                    runs: s.points.len(),
                    simulated_s: s.points.iter().map(|p| p.horizon_s).sum(),
                    wall_ms,
                    targets: (s.space.targets.ttft_s, s.space.targets.tpot_s),
                    pct: s.space.targets.percentile.name(),
                }
            })
        });
        finished.set(done);
        phase.set(Phase::Done);
    };
    // One round: the runs the search asks for now, side by side; their reports move it on.
    fn round(
        ctx: (
            StoredValue<Option<Search>, LocalStorage>,
            StoredValue<Option<Batch>, LocalStorage>,
        ),
        generation: StoredValue<u64>,
        g: u64,
        phase: RwSignal<Phase>,
        batch: RwSignal<RunStatus>,
        finish: impl Fn() + Clone + 'static,
    ) {
        let (search, sent) = ctx;
        if generation.try_get_value() != Some(g) {
            return;
        }
        let asked = search.try_update_value(|s| {
            s.as_mut().map(|s| {
                let runs = s.pending();
                let fleets: Vec<FleetConfig> = runs.iter().map(|r| s.fleet(r)).collect();
                let confirming = runs
                    .first()
                    .is_some_and(|r| r.horizon_s == s.space.confirm_s);
                (runs, fleets, s.points.len(), confirming)
            })
        });
        let Some(Some((runs, fleets, done, confirming))) = asked else {
            return;
        };
        if runs.is_empty() {
            finish();
            return;
        }
        let _ = phase.try_set(Phase::Running {
            done,
            due: done + runs.len(),
            confirming,
        });
        let b = start_fleets(fleets, batch, move |reports| {
            if generation.try_get_value() != Some(g) {
                return;
            }
            search.update_value(|s| {
                if let Some(s) = s {
                    for (run, (_, report)) in runs.iter().zip(reports) {
                        s.record(*run, &report);
                    }
                }
            });
            round((search, sent), generation, g, phase, batch, finish);
        });
        sent.set_value(Some(b));
    }
    let start_search = move || {
        if matches!(phase.get_untracked(), Phase::Running { .. }) {
            return;
        }
        if form.with_untracked(|f| !f.errors.is_empty()) {
            return;
        }
        // A guess, if one is typed, is committed as the search starts.
        let Ok(guess) = guess_of(&guess_text.get_untracked()) else {
            guess_error.set(Some(say(|w| &w.guess_bad)));
            return;
        };
        guess_error.set(None);
        committed.set_value(guess);
        // A link to this page now runs the search again: the same runs, the same figures.
        write_url(true);
        let space: Space = form.with_untracked(Form::space);
        let key = form.with_untracked(Form::query);
        match Search::new(space) {
            Err(m) => phase.set(Phase::Failed(m)),
            Ok(s) => {
                stop();
                search.set_value(Some(s));
                started.set_value(crate::browser::now_ms());
                let g = generation.get_value();
                let finish = move || finish(key.clone());
                round((search, sent), generation, g, phase, batch, finish);
            }
        }
    };
    let start = move |_| start_search();
    // A link that says the search ran runs it (a bad field still blocks it, named).
    if first_page.run {
        request_animation_frame(start_search);
    }
    let cancel = move |_| {
        stop();
        phase.set(Phase::Stopped);
        write_url(false);
    };
    let running = Memo::new(move |_| matches!(phase.get(), Phase::Running { .. }));
    let invalid = Memo::new(move |_| form.try_with(|f| !f.errors.is_empty()).unwrap_or(true));

    let preset = FleetConfig::seed();
    // The traffic fields are the scenario's knobs, labelled as its lengths are drawn (a mean,
    // a fixed length, ...): built again when the scenario changes, not at each keystroke.
    let scenario = Memo::new(move |_| form.with(|f| f.scenario.clone()));
    let traffic_fields = move || {
        let cfg =
            trainer_course::lab::Setup::from_query(&format!("preset={}", scenario.get())).config;
        TRAFFIC
        .iter()
        .map(|&(key, knob)| {
            let k = Knob::from_key(knob);
            let label = k.map_or(key, |k| k.label(&cfg));
            let unit = k.map_or("", |k| k.unit(&cfg));
            view! {
                <NumberField
                    id=format!("adv-{key}")
                    testid=format!("adv-{key}")
                    label=label
                    unit=unit
                    value=Signal::derive(move || shown.try_with(|s| s.get(key).cloned()).flatten().unwrap_or_default())
                    hint=String::new()
                    integer=key != "rate"
                    message=FieldMessage::new(error(key), format!("error-{key}"))
                    on_input=Callback::new(move |t: String| {
                        shown.update(|s| { s.insert(key.to_string(), t.clone()); });
                        edit(key, t);
                    })
                />
            }
        })
        .collect_view()
    };
    // The model served: the lab's model knob, its label and its catalog list.
    let model_knob = Knob::from_key("model");
    let model_label = model_knob.map_or("Model", |k| k.label(&preset));
    let model_options: Vec<(String, String)> = trainer_engine::catalog::models()
        .into_iter()
        .map(|m| (m.id, m.name))
        .collect();
    let model_field = view! {
        <ChoiceField
            id="adv-model"
            testid="adv-model"
            label=model_label
            options=model_options
            selected=Signal::derive(move || form.try_with(|f| f.model.clone()).unwrap_or_default())
            message=FieldMessage::new(error("model"), "error-model")
            on_change=Callback::new(move |v: String| edit("model", v))
        />
    };
    // The shipped fleet scenario the traffic comes from: picking one sets the traffic, the
    // targets, the model and the GPU to its own.
    let scenario_options: Vec<(String, String)> = trainer_course::lab::presets()
        .unwrap_or_default()
        .into_iter()
        .filter(|p| !p.replica)
        .map(|p| (p.id, p.title))
        .collect();
    let scenario_field = view! {
        <ChoiceField
            id="adv-scenario"
            testid="adv-scenario"
            label=words.scenario_label.as_str()
            options=scenario_options
            selected=Signal::derive(move || form.try_with(|f| f.scenario.clone()).unwrap_or_default())
            message=FieldMessage::new(error("scenario"), "error-scenario")
            on_change=Callback::new(move |v: String| {
                edit("scenario", v);
                shown.set(form.with_untracked(shown_of));
            })
        />
    };
    let target_field = move |key: &'static str, label: &'static str| {
        view! {
            <NumberField
                id=format!("adv-{key}")
                testid=format!("adv-{key}")
                label=label
                unit="ms"
                value=Signal::derive(move || shown.try_with(|s| s.get(key).cloned()).flatten().unwrap_or_default())
                hint=String::new()
                integer=false
                message=FieldMessage::new(error(key), format!("error-{key}"))
                on_input=Callback::new(move |t: String| {
                    shown.update(|s| { s.insert(key.to_string(), t.clone()); });
                    edit(key, t);
                })
            />
        }
    };
    let pct_options: Vec<(String, String)> = ["p50", "p90", "p95", "p99"]
        .iter()
        .map(|p| (p.to_string(), p.to_string()))
        .collect();
    let choices = CHOICES
        .iter()
        .map(|&(key, values)| {
            let legend = Knob::from_key(key).map_or(key, |k| k.label(&preset)).to_string();
            let boxes = values
                .iter()
                .map(|&v| {
                    let text = answer::setting_text(&preset, key, v);
                    let text = text.split_once(": ").map_or(text.clone(), |(_, t)| t.to_string());
                    let checked = move || {
                        form.try_with(|f| f.ticked.get(key).is_some_and(|t| t.iter().any(|x| x == v)))
                            .unwrap_or(false)
                    };
                    let toggle = move |_| {
                        let mut now = form.with_untracked(|f| f.ticked.get(key).cloned().unwrap_or_default());
                        if let Some(i) = now.iter().position(|x| x == v) {
                            now.remove(i);
                        } else {
                            now.push(v.to_string());
                        }
                        edit(key, now.join(","));
                    };
                    view! {
                        <label class="check">
                            <input type="checkbox" data-testid=format!("advtick-{key}-{v}") prop:checked=checked on:change=toggle/>
                            " " {text}
                        </label>
                    }
                })
                .collect_view();
            view! {
                <fieldset class="lab-section advisor-choice" data-testid=format!("advisor-axis-{key}")>
                    <legend>{legend}</legend>
                    <div class="checks">{boxes}</div>
                    <FieldError message=FieldMessage::new(error(key), format!("error-{key}"))/>
                </fieldset>
            }
        })
        .collect_view();
    let gpu_rows = GPUS
        .with(|g| *g)
        .iter()
        .map(|g| {
            let id = g.id.clone();
            let key = format!("price-{id}");
            let k2 = key.clone();
            let testid = format!("advprice-{id}");
            view! {
                <NumberField
                    id=testid.clone()
                    testid=testid
                    label=g.name.as_str()
                    unit="$/h"
                    value=Signal::derive(move || shown.try_with(|s| s.get(&k2).cloned()).flatten().unwrap_or_default())
                    hint=String::new()
                    integer=false
                    message=FieldMessage::never(format!("advprice-{id}-msg"))
                    on_input=Callback::new(move |t: String| {
                        shown.update(|s| { s.insert(key.clone(), t); });
                        edit("gpus", gpus_text(&shown.get_untracked()));
                    })
                />
            }
        })
        .collect_view();
    let unknown = move || {
        form.try_with(|f| {
            f.errors
                .iter()
                .filter(|(k, _)| !is_field(k))
                .map(|(k, m)| format!("{k}: {m}"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
    };
    let status = move || {
        match phase.get() {
        Phase::Running {
            done,
            due,
            confirming,
        } => {
            let stage = if confirming {
                fill(&say(|w| &w.stage_confirm), &[("confirm", duration(trainer_course::advisor::CONFIRM_S, 3))])
            } else {
                fill(&say(|w| &w.stage_short), &[("short", duration(trainer_course::advisor::SHORT_S, 3))])
            };
            let progress = match batch.get() {
                RunStatus::Running { progress, runs, .. } => {
                    (done as f64 + progress * runs as f64) / due.max(1) as f64
                }
                _ => done as f64 / due.max(1) as f64,
            };
            Some(view! {
                <p class="sim-status" role="status" data-testid="advisor-running">
                    {fill(&say(|w| &w.running), &[("done", int((done + 1) as f64)), ("due", int(due as f64)), ("stage", stage)])}
                    " " <progress max="1" value=progress></progress>
                </p>
            }.into_any())
        }
        Phase::Stopped => Some(view! { <p class="muted" role="status" data-testid="advisor-stopped">{say(|w| &w.stopped)}</p> }.into_any()),
        Phase::Failed(m) => Some(view! { <p class="field-error" role="alert" data-testid="advisor-error">{m}</p> }.into_any()),
        _ => None,
    }
    };
    let stale = move || {
        finished.with(|f| {
            f.as_ref()
                .is_some_and(|f| form.try_with(|now| now.query() != f.key).unwrap_or(false))
        })
    };
    let open_lab = move |query: String| router.navigate(Route::Lab, &query);
    let results = move || {
        finished.get().map(|f| {
            let lines = f
                .lines
                .iter()
                .map(|(k, l)| view! { <p data-testid=format!("advisor-{k}")>{l.clone()}</p> })
                .collect_view();
            let took = fill(
                &say(|w| &w.took),
                &[
                    ("runs", int(f.runs as f64)),
                    ("simulated", duration(f.simulated_s, 3)),
                    ("wall", duration(f.wall_ms / 1e3, 2)),
                    ("workers", int(workers() as f64)),
                ],
            );
            let plots = w.with_value(|w| w.plots.clone());
            let rows = f.rows.clone();
            let (cost, cost_rows) = cost_chart(&f, &plots);
            let (speed, speed_rows) = speed_chart(&f, &plots);
            // A click on a dot opens its row in the lab: each chart says where it drew its
            // axes, and the click finds the dot nearest to it.
            let pick = |data: ChartData, rows_of: Vec<Vec<usize>>, all: Vec<Row>| {
                let frame = StoredValue::new(None::<Frame>);
                // Where the dots are, for a test that clicks one: "x,y" in CSS pixels, the
                // frontier's first, each dot with its row.
                let dots = RwSignal::new(String::new());
                let spots = data.clone();
                let rows_at = rows_of.clone();
                let on_frame = Callback::new(move |f: Frame| {
                    let _ = frame.try_set_value(Some(f));
                    let list: Vec<String> = f
                        .dots(&spots)
                        .iter()
                        .zip(&rows_at)
                        .flat_map(|(pts, rows)| {
                            pts.iter()
                                .zip(rows)
                                .map(|((x, y), r)| format!("{r}:{x:.1},{y:.1}"))
                                .collect::<Vec<_>>()
                        })
                        .collect();
                    let _ = dots.try_set(list.join(";"));
                });
                let on_click = move |e: leptos::ev::MouseEvent| {
                    let on_canvas = e
                        .target()
                        .is_some_and(|t| wasm_bindgen::JsCast::has_type::<web_sys::HtmlCanvasElement>(&t));
                    // A click elsewhere (a link in the table below, which may have left
                    // the page) is not the chart's.
                    if !on_canvas {
                        return;
                    }
                    let Some(Some(f)) = frame.try_get_value() else {
                        return;
                    };
                    let at = (f64::from(e.offset_x()), f64::from(e.offset_y()));
                    let hit = f.nearest(&data, at, 12.0);
                    if let Some(r) = hit
                        .and_then(|(line, i)| rows_of.get(line).and_then(|l| l.get(i)))
                        .and_then(|&k| all.get(k))
                    {
                        open_lab(r.lab.clone());
                    }
                };
                (on_frame, on_click, dots)
            };
            let (cost_frame, cost_click, cost_dots) = pick(cost.clone(), cost_rows, rows.clone());
            let (speed_frame, speed_click, speed_dots) = pick(speed.clone(), speed_rows, f.rows.clone());
            let table = tables(&rows, f.pct, &plots, false);
            let table2 = tables(&rows, f.pct, &plots, true);
            let pruned = f.pruned.clone();
            let pruned_count = pruned.len();
            view! {
                <section class="advisor-answer" aria-labelledby="advisor-answer-h" data-testid="advisor-answer">
                    <h2 id="advisor-answer-h">{say(|w| &w.answer_heading)}</h2>
                    {lines}
                    <p class="muted small" data-testid="advisor-took" data-wall-ms=format!("{:.0}", f.wall_ms) data-runs=f.runs.to_string()>{took}</p>
                </section>
                <div class="lab-charts">
                    <div on:click=cost_click data-testid="advisor-cost-dots" data-dots=move || cost_dots.get()>
                        <Chart testid="plot-advisor-cost" title=plots.cost_title.clone() caption=plots.cost_caption.clone()
                            data=Signal::derive(move || cost.clone()) on_frame=cost_frame>
                            {table}
                        </Chart>
                    </div>
                    <div on:click=speed_click data-testid="advisor-speed-dots" data-dots=move || speed_dots.get()>
                        <Chart testid="plot-advisor-speed" title=plots.speed_title.clone() caption=plots.speed_caption.clone()
                            data=Signal::derive(move || speed.clone()) on_frame=speed_frame>
                            {table2}
                        </Chart>
                    </div>
                </div>
                {(pruned_count > 0).then(|| view! {
                    <details class="lab-section" data-testid="advisor-pruned">
                        <summary>{format!("{} ({pruned_count})", say(|w| &w.ruled_out))}</summary>
                        <ul>
                            {pruned.into_iter().map(|(what, why)| view! {
                                <li data-testid="advisor-pruned-row"><strong>{what}</strong>": "{why}</li>
                            }).collect_view()}
                        </ul>
                    </details>
                })}
            }
        })
    };
    view! {
        <section class="lab advisor" data-testid="page-advisor">
            <p class="eyebrow">{say(|w| &w.eyebrow)}</p>
            <h1>{say(|w| &w.title)}</h1>
            <p class="lede">{say(|w| &w.intro)}</p>
            {move || {
                let u = unknown();
                (!u.is_empty()).then(|| view! {
                    <div class="notice" role="alert" data-testid="advisor-url-errors">
                        <ul>{u.into_iter().map(|m| view! { <li>{m}</li> }).collect_view()}</ul>
                    </div>
                })
            }}
            <div class="lab-layout">
                <form class="lab-panel" data-testid="advisor-form" on:submit=|e| e.prevent_default()>
                    <fieldset class="lab-section">
                        <legend>{say(|w| &w.traffic_heading)}</legend>
                        <div class="lab-fields">{scenario_field}{model_field}{traffic_fields}</div>
                    </fieldset>
                    <fieldset class="lab-section">
                        <legend>{say(|w| &w.targets_heading)}</legend>
                        <div class="lab-fields">
                            {target_field("ttft", words.ttft_label.as_str())}
                            {target_field("tpot", words.tpot_label.as_str())}
                            <ChoiceField
                                id="adv-pct"
                                testid="adv-pct"
                                label=words.percentile_label.as_str()
                                options=pct_options
                                selected=Signal::derive(move || form.try_with(|f| f.percentile.name().to_string()).unwrap_or_default())
                                message=FieldMessage::new(error("pct"), "error-pct")
                                on_change=Callback::new(move |v: String| edit("pct", v))
                            />
                        </div>
                    </fieldset>
                    <h2 class="advisor-choices-h">{say(|w| &w.choices_heading)}</h2>
                    {choices}
                    <fieldset class="lab-section" data-testid="advisor-gpus">
                        <legend>{say(|w| &w.gpus_heading)}</legend>
                        <div class="lab-fields">{gpu_rows}</div>
                        <FieldError message=FieldMessage::new(error("gpus"), "error-gpus")/>
                    </fieldset>
                </form>
                <div class="lab-main">
                    <NumberField
                        id="adv-guess"
                        testid="adv-guess"
                        label=words.guess_label.as_str()
                        unit="GPUs"
                        value=guess_text
                        hint=String::new()
                        integer=true
                        message=FieldMessage::new(guess_error, "error-guess")
                        disabled=running
                        on_input=Callback::new(move |t: String| {
                            guess_text.set(t);
                            guess_error.set(None);
                            // The guess changes nothing of a result on screen.
                            let ran = matches!(phase.get_untracked(), Phase::Done | Phase::Running { .. });
                            write_url(ran);
                        })
                    />
                    <div class="lab-actions">
                        <button class="button" type="button" data-testid="advisor-run" disabled=move || running.get() || invalid.get() on:click=start>
                            {say(|w| &w.run)}
                        </button>
                        " "
                        <button class="button secondary" type="button" data-testid="advisor-stop" disabled=move || !running.get() on:click=cancel>
                            {say(|w| &w.cancel)}
                        </button>
                    </div>
                    {status}
                    {move || stale().then(|| view! { <p class="stale-note" data-testid="advisor-stale">{say(|w| &w.stale)}</p> })}
                    {results}
                </div>
            </div>
        </section>
    }
    .into_any()
}

thread_local! {
    /// The page's words, read once and kept for the session (the fields' labels borrow them).
    static WORDS: Option<&'static Words> = answer::words().ok().map(|w| &*Box::leak(Box::new(w)));
    /// The catalog's GPUs, kept likewise for their names.
    static GPUS: &'static [trainer_engine::catalog::GpuSpec] = Box::leak(gpus().into_boxed_slice());
}

fn words() -> Option<&'static Words> {
    WORDS.with(|w| *w)
}

/// A guess as typed: none when empty, a whole number of GPUs from 1, or refused.
fn guess_of(typed: &str) -> Result<Option<u32>, ()> {
    match typed.trim() {
        "" => Ok(None),
        t => match t.parse::<u32>() {
            Ok(g) if g >= 1 => Ok(Some(g)),
            _ => Err(()),
        },
    }
}

/// The fields the page has a place for; any other key's message goes in the notice.
fn is_field(key: &str) -> bool {
    TRAFFIC.iter().any(|(k, _)| *k == key)
        || CHOICES.iter().any(|(k, _)| *k == key)
        || matches!(key, "ttft" | "tpot" | "pct" | "gpus" | "model" | "scenario")
}

/// What each text field shows for a form: traffic, targets and each GPU's price.
fn shown_of(f: &Form) -> BTreeMap<String, String> {
    let mut m: BTreeMap<String, String> = f.traffic.clone();
    m.insert("ttft".into(), trainer_course::lab::knobs::num(f.ttft_ms));
    m.insert("tpot".into(), trainer_course::lab::knobs::num(f.tpot_ms));
    for g in gpus() {
        let price = f
            .gpus
            .iter()
            .find(|(id, _)| *id == g.id)
            .map_or(String::new(), |(_, p)| trainer_course::lab::knobs::num(*p));
        m.insert(format!("price-{}", g.id), price);
    }
    m
}

/// The `gpus` field's text from the price fields: every GPU with a price, `id:price`.
fn gpus_text(shown: &BTreeMap<String, String>) -> String {
    gpus()
        .into_iter()
        .filter_map(|g| {
            let p = shown.get(&format!("price-{}", g.id))?.trim().to_string();
            (!p.is_empty()).then(|| format!("{}:{p}", g.id))
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn workers() -> usize {
    web_sys::window()
        .map(|w| w.navigator().hardware_concurrency() as usize)
        .unwrap_or(1)
        .clamp(1, 8)
}

/// The cost plot: $ per million output tokens against TTFT, and the TTFT target; with, per
/// line, which row each dot is.
fn cost_chart(f: &Finished, w: &PlotWords) -> (ChartData, Vec<Vec<usize>>) {
    let axes = Axes {
        x_label: fill(&w.cost_x, &[("pct", f.pct.to_string())]),
        y_label: w.cost_y.clone(),
        x_format: Format::Duration,
        target: (w.ttft_line.clone(), f.targets.0),
    };
    frontier_chart(
        f,
        w,
        axes,
        |r| r.f.cost_beaten_by,
        |p| (p.ttft_s, p.dollars_per_million),
    )
}

/// The speed plot: tokens a second per GPU against per user, and the per-token target's speed.
fn speed_chart(f: &Finished, w: &PlotWords) -> (ChartData, Vec<Vec<usize>>) {
    let axes = Axes {
        x_label: w.speed_x.clone(),
        y_label: w.speed_y.clone(),
        x_format: Format::Number,
        target: (w.tpot_line.clone(), 1.0 / f.targets.1),
    };
    frontier_chart(
        f,
        w,
        axes,
        |r| r.f.speed_beaten_by,
        |p| (p.tokens_per_user_s, p.tokens_per_gpu_s),
    )
}

/// A frontier plot's axes and its target, a dashed line at an x.
struct Axes {
    x_label: String,
    y_label: String,
    x_format: Format,
    target: (String, f64),
}

/// Every row's dot at `xy` of its point, the frontier and the beaten (by `beaten`) as two lines
/// of dots, and the target; with, per line, which row each dot is.
fn frontier_chart(
    f: &Finished,
    w: &PlotWords,
    axes: Axes,
    beaten: fn(&Row) -> Option<usize>,
    xy: fn(&trainer_course::advisor::Point) -> (f64, f64),
) -> (ChartData, Vec<Vec<usize>>) {
    let split = |is_beaten: bool| -> (Vec<(f64, f64)>, Vec<usize>) {
        let mut v: Vec<(usize, (f64, f64))> = f
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| beaten(r).is_some() == is_beaten)
            .map(|(i, r)| (i, xy(&r.f.point)))
            .collect();
        v.sort_by(|a, b| a.1 .0.total_cmp(&b.1 .0));
        (
            v.iter().map(|p| p.1).collect(),
            v.iter().map(|p| p.0).collect(),
        )
    };
    let (front, front_rows) = split(false);
    let (others, other_rows) = split(true);
    let top = f.rows.iter().map(|r| xy(&r.f.point).1).fold(0.0, f64::max);
    let (name, x) = axes.target;
    let lines = vec![
        dots(&w.frontier, 0, front),
        dots(&w.beaten, 3, others),
        target(&name, vec![(x, 0.0), (x, top)]),
    ];
    (
        ChartData::Lines {
            lines,
            x_label: axes.x_label,
            y_label: axes.y_label,
            x_log: false,
            y_log: false,
            legend_top_left: false,
            x_format: axes.x_format,
            y_format: Format::Number,
        },
        vec![front_rows, other_rows],
    )
}

fn dots(name: &str, colour: usize, points: Vec<(f64, f64)>) -> Line {
    Line {
        name: name.into(),
        colour,
        dashed: false,
        markers: true,
        points,
    }
}

fn target(name: &str, points: Vec<(f64, f64)>) -> Line {
    Line {
        name: name.into(),
        colour: 1,
        dashed: true,
        markers: false,
        points,
    }
}

/// A plot's text alternative: the candidates on its frontier (and the answer) in a table, the
/// others, each beaten on both of the plot's axes, in a second one behind a summary. Every
/// row links to the lab (the keyboard's way to what a click on a dot does).
fn tables(rows: &[Row], pct: &'static str, w: &PlotWords, speed: bool) -> impl IntoView {
    let beaten = |r: &Row| {
        if speed {
            r.f.speed_beaten_by
        } else {
            r.f.cost_beaten_by
        }
    };
    let (front, rest): (Vec<usize>, Vec<usize>) =
        (0..rows.len()).partition(|&i| rows[i].best || beaten(&rows[i]).is_none());
    let more = rest.len();
    view! {
        {rows_table(rows, &front, pct, w, speed)}
        {(more > 0).then(|| view! {
            <details class="advisor-more">
                <summary>{fill(&w.more, &[("n", int(more as f64))])}</summary>
                {rows_table(rows, &rest, pct, w, speed)}
            </details>
        })}
    }
}

/// The rows `show` of `rows`: the settings searched, then the plot's figures, what beats the
/// row, and its link to the lab.
fn rows_table(
    rows: &[Row],
    show: &[usize],
    pct: &'static str,
    w: &PlotWords,
    speed: bool,
) -> impl IntoView {
    let axes: Vec<String> = rows
        .first()
        .map(|r| r.parts.iter().map(|(label, _)| label.clone()).collect())
        .unwrap_or_default();
    let figures: Vec<String> = if speed {
        vec![
            w.col_per_user.clone(),
            w.col_per_gpu.clone(),
            w.col_replicas.clone(),
        ]
    } else {
        vec![
            w.col_replicas.clone(),
            w.col_per_hour.clone(),
            w.col_per_million.clone(),
            fill(&w.col_ttft, &[("pct", pct.to_string())]),
            fill(&w.col_tpot, &[("pct", pct.to_string())]),
        ]
    };
    let heads: Vec<String> = std::iter::once("#".to_string())
        .chain(axes)
        .chain(figures)
        .chain([w.col_beaten.clone(), w.col_open.clone()])
        .collect();
    let open = w.col_open.clone();
    let body = show
        .iter()
        .filter_map(|&i| rows.get(i).map(|r| (i, r)))
        .map(|(i, r)| {
            let p = &r.f.point;
            let by = if speed { r.f.speed_beaten_by } else { r.f.cost_beaten_by };
            let by = by.map_or(String::new(), |j| format!("#{}", j + 1));
            let per_replica = r.gpus / r.f.replicas.max(1);
            let replicas = format!("{} × {}", int(r.f.replicas as f64), int(per_replica as f64));
            let figures: Vec<String> = if speed {
                vec![sig(p.tokens_per_user_s, 3), sig(p.tokens_per_gpu_s, 3), replicas]
            } else {
                vec![
                    replicas,
                    money(p.dollars_per_hour),
                    money(p.dollars_per_million),
                    duration(p.ttft_s, 3),
                    duration(p.tpot_s, 3),
                ]
            };
            let open = open.clone();
            view! {
                <tr data-testid="advisor-row" data-best=r.best.to_string() data-replicas=r.f.replicas.to_string() data-row=i.to_string()>
                    <th scope="row">{format!("#{}", i + 1)}{r.best.then_some(" ★")}</th>
                    {r.parts.iter().map(|(_, v)| view! { <td>{v.clone()}</td> }).collect_view()}
                    {figures.into_iter().map(|v| view! { <td>{v}</td> }).collect_view()}
                    <td>{by}</td>
                    <td><Link to=Route::Lab query=r.lab.clone() testid="advisor-open-lab">{open}</Link></td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="data-table">
            <thead>
                <tr>{heads.into_iter().map(|c| view! { <th scope="col">{c}</th> }).collect_view()}</tr>
            </thead>
            <tbody>{body}</tbody>
        </table>
    }
}
