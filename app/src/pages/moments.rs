//! Interview moments: `/moments` lists them; `/moments/<id>` puts the interviewer's question,
//! takes the learner's answer (and estimate, where the number is the point), then runs every
//! option on the same traffic and sets them side by side against the SLO, with the verdict.
//! The moments are `content/moments/*.toml`, read by `trainer_course::moments`. The committed
//! choice lives in the URL (`?choice=<option>`) and each attempt in progress.

use crate::components::{Card, Compared, EngineNote, EstimateBox, Link};
use crate::progress::{use_progress, MomentAttempt};
use crate::route::{use_router, Route};
use crate::sim_runner::{run_rounds, RunStatus};
use crate::text::fill;
use crate::text::format::{duration, sig};
use crate::url_state::{pairs, use_url_state};
use leptos::prelude::*;
use trainer_content::words::MomentsWords;
use trainer_course::moments::{
    moment, moments, show, Grade, LoadFinding, Moment, OptionOutcome, Variant,
};
use trainer_engine::engine::Engine;

/// The pages' own sentences, built from `content/moments-page.toml` by the build (which
/// refuses a file that does not parse).
fn words() -> &'static MomentsWords {
    static WORDS: std::sync::OnceLock<MomentsWords> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| include!(concat!(env!("OUT_DIR"), "/moments-words.rs")))
}

/// `/moments`: every moment, with the learner's last grade on it.
#[component]
pub fn MomentsIndex() -> impl IntoView {
    let store = use_progress();
    let list = match moments() {
        Ok(m) => m,
        Err(e) => {
            return view! {
                <section data-testid="page-moments">
                    <h1>"Interview moments"</h1>
                    <p class="field-error" role="alert">{format!("The moments could not be read: {e}")}</p>
                </section>
            }
            .into_any()
        }
    };
    let cards = list
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            let id = m.id.clone();
            let status = move || {
                store.progress.with(|p| {
                    match p.moments.iter().rev().find(|a| a.moment == id) {
                        Some(a) => format!("Last answer: {}", grade_word_str(&a.grade)),
                        None => "Not answered yet".to_string(),
                    }
                })
            };
            view! {
                <Card
                    testid=format!("moment-card-{}", m.id)
                    step=i + 1
                    heading=view! { <Link to=Route::Moment(m.id.clone()) testid=format!("open-moment-{}", m.id)>{m.title.clone()}</Link> }.into_any()
                >
                    <p>{m.prompt.clone()}</p>
                    <p class="size-card-status" data-testid=format!("moment-status-{}", m.id)>{status}</p>
                </Card>
            }
        })
        .collect_view();
    view! {
        <section data-testid="page-moments">
            <p class="eyebrow">{words().eyebrow.clone()}</p>
            <h1>{words().eyebrow.clone()}</h1>
            <p class="lede">{words().lede.clone()}</p>
            <h2 class="visually-hidden">"The moments"</h2>
            <ol class="cards">{cards}</ol>
        </section>
    }
    .into_any()
}

/// The outcome of running every option.
#[derive(Clone, Debug, PartialEq)]
struct Runs {
    outcomes: Vec<OptionOutcome>,
    /// Options, best first (see `Moment::ranking`).
    ranking: Vec<usize>,
    /// Each option's grade, computed from the runs (`Moment::grades`).
    grades: Vec<Grade>,
}

impl Runs {
    fn of(m: &Moment, outcomes: Vec<OptionOutcome>) -> Runs {
        Runs {
            ranking: m.ranking(&outcomes),
            grades: m.grades(&outcomes),
            outcomes,
        }
    }
}

/// One load of the runs at other loads: its multiple of the scenario's traffic and grades.
#[derive(Clone, Debug, PartialEq)]
struct LoadRow {
    load: f64,
    grades: Vec<Grade>,
}

/// `/moments/<id>`.
#[component]
pub fn MomentPage(id: String) -> impl IntoView {
    let m = match moment(&id) {
        Ok(m) => m,
        Err(_) => {
            return view! {
                <section data-testid="moment-unknown">
                    <p class="eyebrow"><Link to=Route::Moments>{words().eyebrow.clone()}</Link></p>
                    <h1>{words().unknown_title.clone()}</h1>
                    <p>{fill(&words().unknown, &[("id", id)])} " "
                        <Link to=Route::Moments testid="moments-list">{words().see_list.clone()}</Link></p>
                </section>
            }
            .into_any()
        }
    };
    let url = use_url_state();
    let store = use_progress();
    let m = StoredValue::new(m);
    let mut keys = url.read(pairs);
    // The choice committed, from the URL (a bad value is ignored with a note).
    let query_choice = keys.remove("choice").filter(|c| !c.is_empty());
    let bad_choice = query_choice
        .as_ref()
        .filter(|c| m.with_value(|m| !m.options.iter().any(|o| &o.id == *c)))
        .cloned();
    let valid_choice = query_choice.filter(|c| bad_choice.as_ref() != Some(c));
    let selected: RwSignal<Option<String>> = RwSignal::new(valid_choice.clone());
    let committed: RwSignal<Option<String>> = RwSignal::new(valid_choice);
    let estimate: RwSignal<Option<f64>> = RwSignal::new(None);
    // The engine the options run on: the validated one unless the URL names the other.
    let query_engine = keys.remove("engine").filter(|e| !e.is_empty());
    let bad_engine = query_engine
        .clone()
        .filter(|e| Engine::from_id(e).is_none());
    let engine_choice: RwSignal<Option<Engine>> =
        RwSignal::new(query_engine.and_then(|e| Engine::from_id(&e)));
    let ran_on: RwSignal<Option<Engine>> = RwSignal::new(None);
    let status = RwSignal::new(RunStatus::Idle);
    let runs: RwSignal<Option<Runs>> = RwSignal::new(None);
    // A commit is recorded once its runs have graded it.
    let pending_record = RwSignal::new(false);
    let record = move |r: &Runs| {
        if !pending_record.get_untracked() {
            return;
        }
        pending_record.set(false);
        let Some(choice) = committed.get_untracked() else {
            return;
        };
        let grade = m.with_value(|m| {
            m.options
                .iter()
                .position(|o| o.id == choice)
                .and_then(|i| r.grades.get(i).copied())
                .map_or("weak", grade_id)
        });
        store.record_moment(MomentAttempt {
            moment: m.with_value(|m| m.id.clone()),
            option: choice,
            grade: grade.to_string(),
            estimate: estimate.get_untracked(),
            day: None,
        });
    };
    let loads: RwSignal<Option<Vec<LoadRow>>> = RwSignal::new(None);
    let loads_status = RwSignal::new(RunStatus::Idle);

    let start_runs = move || {
        if runs.with_untracked(|r| r.is_some()) || status.get_untracked().running() {
            return;
        }
        let mm = m.get_value();
        if let Some(priced) = mm.break_even_outcomes() {
            match priced {
                Ok(outcomes) => {
                    let r = Runs::of(&mm, outcomes);
                    record(&r);
                    runs.set(Some(r));
                    status.set(RunStatus::Done {
                        wall_ms: 0.0,
                        longest_ms: 0.0,
                    });
                }
                Err(e) => status.set(RunStatus::Failed(e.to_string())),
            }
            return;
        }
        // The validated engine unless the learner picked the other.
        let engine = engine_choice.get_untracked().unwrap_or(Engine::Validated);
        let variant = Variant {
            engine,
            ..Variant::default()
        };
        match mm.rounds(variant) {
            Ok(rounds) => {
                ran_on.set(Some(engine));
                run_rounds(vec![rounds], status, move |done| {
                    let outcomes = done.first().map(|r| r.outcomes(&mm)).unwrap_or_default();
                    let r = Runs::of(&mm, outcomes);
                    record(&r);
                    let _ = runs.try_set(Some(r));
                })
            }
            Err(e) => status.set(RunStatus::Failed(e.to_string())),
        }
    };
    // A deep link with a committed choice shows its comparison at once.
    if committed.get_untracked().is_some() {
        request_animation_frame(start_runs);
    }
    let commit = move || {
        let Some(choice) = selected.get_untracked() else {
            return;
        };
        committed.set(Some(choice.clone()));
        url.replace(&moment_query(Some(&choice), engine_choice.get_untracked()));
        pending_record.set(true);
        match runs.get_untracked() {
            // The runs are already there (a second try): grade from them at once.
            Some(r) => record(&r),
            None => start_runs(),
        }
    };
    // Reruns every option on the other named engine; the URL keeps the choice.
    let switch_engine = Callback::new(move |e: Engine| {
        if status.get_untracked().running() {
            return;
        }
        engine_choice.set(Some(e));
        if let Some(choice) = committed.get_untracked() {
            url.replace(&moment_query(Some(&choice), Some(e)));
        }
        runs.set(None);
        loads.set(None);
        loads_status.set(RunStatus::Idle);
        start_runs();
    });
    // Every option again at a quarter less and a quarter more traffic, on the same engine.
    let run_loads = move |_| {
        if loads_status.get_untracked().running() {
            return;
        }
        let mm = m.get_value();
        let engine = engine_choice.get_untracked().unwrap_or(Engine::Validated);
        let mut all = Vec::new();
        for load in Variant::OTHER_LOADS {
            match mm.rounds(Variant {
                engine,
                load,
                seed: 0,
            }) {
                Ok(r) => all.push(r),
                Err(e) => {
                    loads_status.set(RunStatus::Failed(e.to_string()));
                    return;
                }
            }
        }
        run_rounds(all, loads_status, move |done| {
            let rows = Variant::OTHER_LOADS
                .iter()
                .zip(&done)
                .map(|(&load, r)| {
                    let outcomes = r.outcomes(&mm);
                    LoadRow {
                        load,
                        grades: mm.grades(&outcomes),
                    }
                })
                .collect();
            let _ = loads.try_set(Some(rows));
        });
    };
    let has_fleets = m.with_value(|m| m.scenario.is_some() || m.search.is_some());
    let engine_note = move || {
        (has_fleets && committed.get().is_some() && runs.get().is_some()).then(|| {
            view! {
                <EngineNote testid="moment-engine" engine=Signal::derive(move || ran_on.get()) on_switch=switch_engine/>
            }
        })
    };
    let retry = move |_| {
        committed.set(None);
        selected.set(None);
        // The engine the learner picked stays in the link.
        url.replace(&moment_query(None, engine_choice.get_untracked()));
    };

    let (mid, title, prompt) = m.with_value(|m| (m.id.clone(), m.title.clone(), m.prompt.clone()));
    let options = m.with_value(|m| m.options.clone());
    let radios = options
        .into_iter()
        .enumerate()
        .map(|(i, o)| {
            // A search moment's option is a configuration: its settings, as the lab names them.
            let settings = m.with_value(|m| m.option_settings(i));
            let settings = (!settings.is_empty()).then(|| {
                view! {
                    <span class="muted option-settings" data-testid=format!("settings-{}", o.id)>
                        {settings.join("; ")}
                    </span>
                }
            });
            let oid = o.id.clone();
            let oid2 = o.id.clone();
            let input_id = format!("opt-{}", o.id);
            view! {
                <li class="moment-option">
                    <input
                        type="radio"
                        name="moment-option"
                        id=input_id.clone()
                        data-testid=format!("option-{}", o.id)
                        prop:checked=move || selected.get().as_deref() == Some(oid.as_str())
                        disabled=move || committed.get().is_some()
                        on:change=move |_| selected.set(Some(oid2.clone()))
                    />
                    <label for=input_id>{o.label.clone()} " " {settings}</label>
                </li>
            }
        })
        .collect_view();
    let estimate_box = m.with_value(|m| m.estimate.clone()).map(|e| {
        let answer = m.with_value(|m| m.estimate_answer().ok().flatten());
        let unit = e.unit.clone();
        let derived = Signal::derive(move || {
            answer.map(|v| Compared {
                value: v,
                shown: format!("{} {unit}", sig(v, 3)),
                note: words().estimate_note.clone(),
            })
        });
        let router = use_router();
        let href = Signal::derive(move || router.href(&Route::Size("fleet".into())));
        view! {
            <EstimateBox
                testid="moment-estimate"
                prompt=e.prompt.clone()
                unit=e.unit.clone()
                derived=derived
                derived_href=href
                gap=Signal::derive(|| None)
                on_commit=Callback::new(move |v| estimate.set(Some(v)))
            />
        }
    });
    let progress_view = move || {
        match status.get() {
        RunStatus::Running { run, runs: n, progress } => Some(view! {
            <p class="sim-status" role="status" data-testid="moment-running">
                {fill(&words().running, &[("run", (run + 1).to_string()), ("runs", n.to_string())])}
                <progress max="1" value=progress></progress>
            </p>
        }.into_any()),
        RunStatus::Failed(msg) => Some(view! { <p class="field-error" role="alert" data-testid="moment-error">{msg}</p> }.into_any()),
        RunStatus::Done { wall_ms, longest_ms } if wall_ms > 0.0 => Some(view! {
            <p class="muted sim-status" data-testid="moment-time" data-value=format!("{wall_ms}") data-longest=format!("{longest_ms}")>
                {fill(&words().wall_time, &[("wall", duration(wall_ms / 1e3, 2))])}
            </p>
        }.into_any()),
        _ => None,
    }
    };
    let results = move || {
        let choice = committed.get()?;
        let r = runs.get()?;
        Some(results_view(&m.get_value(), &r, &choice, estimate.get()))
    };
    let loads_view = move || {
        if !has_fleets || committed.get().is_none() {
            return None;
        }
        let r = runs.get()?;
        let mm = m.get_value();
        let table = loads.get().map(|rows| {
            let mut all = vec![LoadRow {
                load: 1.0,
                grades: r.grades.clone(),
            }];
            all.extend(rows);
            all.sort_by(|a, b| a.load.total_cmp(&b.load));
            loads_table(&mm, &all)
        });
        let running = move || {
            match loads_status.get() {
            RunStatus::Running { run, runs: n, progress } => Some(view! {
                <p class="sim-status" role="status" data-testid="moment-loads-running">
                    {fill(&words().running, &[("run", (run + 1).to_string()), ("runs", n.to_string())])}
                    <progress max="1" value=progress></progress>
                </p>
            }.into_any()),
            RunStatus::Failed(msg) => Some(view! { <p class="field-error" role="alert">{msg}</p> }.into_any()),
            _ => None,
        }
        };
        Some(view! {
            <section class="moment-loads" data-testid="moment-loads">
                <h2>{words().loads_title.clone()}</h2>
                <p>{words().loads_intro.clone()}</p>
                {move || loads.get().is_none().then(|| view! {
                    <button class="button" data-testid="run-loads" disabled=move || loads_status.get().running() on:click=run_loads>
                        {words().loads_run.clone()}
                    </button>
                })}
                {running}
                {table}
            </section>
        })
    };
    view! {
        <section class="moment" data-testid=format!("page-moment-{mid}")>
            <p class="eyebrow"><Link to=Route::Moments testid="moments-list">{words().eyebrow.clone()}</Link></p>
            <h1>{title}</h1>
            {bad_engine.map(|e| view! {
                <p class="notice" role="status" data-testid="bad-engine">
                    {fill(&words().bad_engine, &[("engine", e)])}
                </p>
            })}
            {bad_choice.map(|c| view! {
                <p class="notice" role="status" data-testid="bad-choice">
                    {fill(&words().bad_choice, &[("choice", c)])}
                </p>
            })}
            <blockquote class="interviewer" data-testid="moment-prompt">
                <p class="muted">{words().asks.clone()}</p>
                <p>{prompt}</p>
            </blockquote>
            {estimate_box}
            <fieldset class="moment-options">
                <legend>{words().your_approach.clone()}</legend>
                <ul>{radios}</ul>
            </fieldset>
            <div class="moment-actions">
                <button
                    class="button primary"
                    data-testid="commit-answer"
                    disabled=move || selected.get().is_none() || committed.get().is_some()
                    on:click=move |_| commit()
                >{words().commit.clone()}</button>
                {move || committed.get().is_some().then(|| view! {
                    <button class="button" data-testid="try-again" on:click=retry>{words().try_again.clone()}</button>
                })}
            </div>
            {move || committed.get().is_none().then(|| view! {
                <p class="muted">{words().pick_one.clone()}</p>
            })}
            {progress_view}
            {engine_note}
            {results}
            {loads_view}
        </section>
    }
    .into_any()
}

fn results_view(m: &Moment, r: &Runs, choice: &str, estimate: Option<f64>) -> AnyView {
    let key = m.figure_index(&m.key).unwrap_or(0);
    // The best is only ever an option that holds the target.
    let winner = r
        .ranking
        .first()
        .copied()
        .filter(|&i| r.grades.get(i) == Some(&Grade::Strong));
    let grade = |i: usize| r.grades.get(i).copied().unwrap_or(Grade::Weak);
    let chosen = m.options.iter().position(|o| o.id == choice);
    let head = m
        .figures
        .iter()
        .map(|f| view! { <th scope="col">{f.label.clone()}</th> })
        .collect_view();
    let rows = m
        .options
        .iter()
        .zip(&r.outcomes)
        .enumerate()
        .map(|(i, (o, out))| {
            let cells = m
                .figures
                .iter()
                .zip(&out.figures)
                .enumerate()
                .map(|(j, (f, v))| {
                    let miss = m
                        .slo
                        .as_ref()
                        .is_some_and(|s| s.figure == f.id && v.is_some_and(|v| v > s.max));
                    view! {
                        <td class:key=j == key class:miss=miss data-testid=format!("result-{}-{}", o.id, f.id) data-value=format!("{}", v.unwrap_or(f64::NAN))>
                            {v.map_or("—".to_string(), |v| show(&f.unit, v))}
                            {miss.then(|| view! { <span class="mark">" misses"</span> })}
                        </td>
                    }
                })
                .collect_view();
            let mark = if Some(i) == winner { "best" } else { "" };
            view! {
                <tr class:chosen=Some(i) == chosen class:winner=Some(i) == winner data-testid=format!("result-row-{}", o.id) data-rank=r.ranking.iter().position(|&k| k == i).unwrap_or(0).to_string()>
                    <th scope="row">
                        {o.label.clone()}
                        {(Some(i) == chosen).then(|| view! { <span class="tag">" your answer"</span> })}
                        {(!mark.is_empty()).then(|| view! { <span class="tag best">" best on the figure"</span> })}
                    </th>
                    {cells}
                </tr>
            }
        })
        .collect_view();
    let chart = bar_chart(m, r, key);
    let verdict = chosen.map(|i| {
        let o = &m.options[i];
        let g = grade(i);
        view! {
            <section class=format!("verdict-box grade-{}", grade_id(g)) data-testid="moment-verdict" data-grade=grade_id(g) aria-live="polite">
                <h2>{format!("Your answer: {}", grade_word(g))}</h2>
                <p>{m.fill(&o.why, &r.outcomes)}</p>
            </section>
        }
    });
    let others = m
        .options
        .iter()
        .enumerate()
        .filter(|(_, o)| o.id != choice)
        .map(|(i, o)| {
            view! {
                <li data-testid=format!("why-{}", o.id) data-grade=grade_id(grade(i))>
                    <strong>{format!("{} ({}). ", o.label, grade_word(grade(i)).to_ascii_lowercase())}</strong>
                    {m.fill(&o.why, &r.outcomes)}
                </li>
            }
        })
        .collect_view();
    let slo = m.slo.as_ref().map(|s| {
        let label = m
            .figure_index(&s.figure)
            .map(|i| m.figures[i].label.clone())
            .unwrap_or_default();
        let unit = m
            .figure_index(&s.figure)
            .map(|i| m.figures[i].unit.clone())
            .unwrap_or_default();
        fill(
            &words().target,
            &[("figure", label), ("max", show(&unit, s.max))],
        )
    });
    let within = m.acceptable_within.map(|f| {
        fill(
            &words().within,
            &[
                ("figure", mid_sentence(&m.figures[key].label)),
                ("factor", sig(f, 3)),
            ],
        )
    });
    let quiet = m.quiet_load.and_then(|q| {
        let peak = m.peak_rate(1.0)?;
        Some(fill(
            &words().quiet,
            &[
                ("peak", show("rate", peak)),
                ("quiet", show("rate", peak * q)),
            ],
        ))
    });
    let lab = m.scenario.as_ref().map(|sc| {
        let arm = m.options.iter().find(|o| o.id == choice).and_then(|o| o.arm.clone()).unwrap_or_default();
        let q = format!("preset={sc}&arm={arm}");
        view! { <Link to=Route::Lab query=q class="button" testid="open-in-lab">{words().open_in_lab.clone()}</Link> }
    });
    // A search moment: the advisor runs the same search over every combination of the axes.
    let advisor = m.search.as_ref().map(|q| {
        let q = trainer_course::advisor::Form::from_query(q).query();
        view! { <Link to=Route::Advisor query=q class="button" testid="open-in-advisor">{words().open_in_advisor.clone()}</Link> }
    });
    let est = estimate.map(|v| {
        view! { <p class="muted" data-testid="moment-your-estimate">{fill(&words().your_estimate, &[("estimate", sig(v, 3))])}</p> }
    });
    view! {
        {verdict}
        {est}
        <div class="table-wrap">
            <table class="moment-table" data-testid="moment-results">
                <caption>{quiet.unwrap_or_default()}{slo.unwrap_or_default()} {within.unwrap_or_default()} {words().caption.clone()}</caption>
                <thead><tr><th scope="col">{words().approach.clone()}</th>{head}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        {chart}
        <section class="moment-others">
            <h2>{words().others.clone()}</h2>
            <ul>{others}</ul>
        </section>
        <blockquote class="interviewer" data-testid="moment-closing">
            <p class="muted">{words().sums_up.clone()}</p>
            <p>{m.fill(&m.closing, &r.outcomes)}</p>
        </blockquote>
        {lab}
        {advisor}
    }
    .into_any()
}

/// Horizontal bars of the key figure, one per option: a list whose labels are text at the
/// page's size (readable at 375 px and by a screen reader), each with its bar. An option that
/// misses the target is drawn hatched and named so; the best are those graded strong.
fn bar_chart(m: &Moment, r: &Runs, key: usize) -> impl IntoView {
    let f = &m.figures[key];
    let vals: Vec<f64> = r
        .outcomes
        .iter()
        .map(|o| o.figures[key].unwrap_or(0.0))
        .collect();
    let max = vals.iter().copied().fold(0.0, f64::max).max(1e-12);
    let bars = m
        .options
        .iter()
        .zip(&vals)
        .enumerate()
        .map(|(i, (o, &v))| {
            let pct = (v / max * 100.0).clamp(0.5, 100.0);
            let misses = !m.holds_slo(&r.outcomes[i]);
            let cls = if misses {
                "bar miss"
            } else if r.grades.get(i) == Some(&Grade::Strong) {
                "bar best"
            } else {
                "bar"
            };
            let label = if misses {
                format!("{} · {} · {}", show(&f.unit, v), o.id, words().misses)
            } else {
                format!("{} · {}", show(&f.unit, v), o.id)
            };
            view! {
                <li data-testid=format!("bar-{}", o.id) data-miss=misses.to_string()>
                    <span class="bar-label">{label}</span>
                    <span class="bar-track" aria-hidden="true">
                        <span class=cls style=format!("width: {pct:.1}%")></span>
                    </span>
                </li>
            }
        })
        .collect_view();
    let better = match m.better {
        trainer_course::moments::Better::Lower => "lower",
        trainer_course::moments::Better::Higher => "higher",
    };
    view! {
        <figure class="moment-chart" data-testid="moment-chart">
            <ul class="bars">{bars}</ul>
            <figcaption class="muted">{format!("{} by approach ({better} is better).", f.label)}</figcaption>
        </figure>
    }
}

/// The grades at each load run, and the sentences the core draws from them.
fn loads_table(m: &Moment, rows: &[LoadRow]) -> AnyView {
    let label = |i: usize| {
        m.options
            .get(i)
            .map_or(String::new(), |o| o.label.trim_end_matches('.').to_string())
    };
    // The scenario's peak rate, read once: each row is a multiple of it.
    let base = m.peak_rate(1.0);
    let rate =
        |load: f64| base.map_or_else(|| format!("{}x", sig(load, 2)), |r| show("rate", r * load));
    let body = rows
        .iter()
        .map(|row| {
            let best = row
                .grades
                .iter()
                .enumerate()
                .filter(|(_, g)| **g == Grade::Strong)
                .map(|(i, _)| m.options[i].id.clone())
                .collect::<Vec<_>>()
                .join(", ");
            let holding = row
                .grades
                .iter()
                .enumerate()
                .filter(|(_, g)| **g != Grade::Weak)
                .map(|(i, _)| m.options[i].id.clone())
                .collect::<Vec<_>>()
                .join(", ");
            let best_cell = if best.is_empty() {
                "—".to_string()
            } else {
                best.clone()
            };
            view! {
                <tr data-testid=format!("load-row-{}", row.load) data-best=best>
                    <th scope="row">{rate(row.load)}</th>
                    <td>{best_cell}</td>
                    <td>{if holding.is_empty() { "—".to_string() } else { holding }}</td>
                </tr>
            }
        })
        .collect_view();
    let pairs: Vec<(f64, Vec<Grade>)> = rows.iter().map(|r| (r.load, r.grades.clone())).collect();
    let strong = m
        .strong()
        .map(|o| o.label.trim_end_matches('.').to_string())
        .unwrap_or_default();
    let findings = m
        .load_findings(&pairs)
        .into_iter()
        .map(|f| {
            let text = match f {
                LoadFinding::StrongHolds => {
                    fill(&words().loads_hold, &[("option", strong.clone())])
                }
                LoadFinding::Better { load, best } => fill(
                    &words().loads_flip,
                    &[
                        ("rate", rate(load)),
                        ("best", label(best)),
                        ("option", strong.clone()),
                    ],
                ),
                LoadFinding::NoneHolds { load } => {
                    fill(&words().loads_none, &[("rate", rate(load))])
                }
            };
            view! { <li>{text}</li> }
        })
        .collect_view();
    view! {
        <div class="table-wrap">
            <table class="moment-table" data-testid="moment-loads-table">
                <thead><tr>
                    <th scope="col">{words().loads_rate.clone()}</th>
                    <th scope="col">{words().loads_best.clone()}</th>
                    <th scope="col">{words().loads_holding.clone()}</th>
                </tr></thead>
                <tbody>{body}</tbody>
            </table>
        </div>
        <ul class="moment-findings" data-testid="moment-loads-findings">{findings}</ul>
    }
    .into_any()
}

fn grade_id(g: Grade) -> &'static str {
    match g {
        Grade::Weak => "weak",
        Grade::Acceptable => "acceptable",
        Grade::Strong => "strong",
    }
}

fn grade_word(g: Grade) -> &'static str {
    match g {
        Grade::Weak => "Weak",
        Grade::Acceptable => "Acceptable",
        Grade::Strong => "Strong",
    }
}

fn grade_word_str(g: &str) -> &'static str {
    match g {
        "strong" => "Strong",
        "acceptable" => "Acceptable",
        _ => "Weak",
    }
}

/// The moment's query: the committed choice, and the engine when the learner chose one.
fn moment_query(choice: Option<&str>, engine: Option<Engine>) -> String {
    let choice = choice.map(|c| format!("choice={c}"));
    let engine = engine.map(|e| format!("engine={}", e.id()));
    choice
        .into_iter()
        .chain(engine)
        .collect::<Vec<_>>()
        .join("&")
}

/// A label as it reads inside a sentence: its first letter lowercased, unless its first word
/// is an acronym ("GPU bill per hour", "TTFT, p99" keep theirs).
fn mid_sentence(label: &str) -> String {
    let first = label.split_whitespace().next().unwrap_or("");
    if first.chars().filter(char::is_ascii_uppercase).count() >= 2 {
        return label.to_string();
    }
    let mut c = label.chars();
    c.next()
        .map(|f| f.to_lowercase().chain(c).collect())
        .unwrap_or_default()
}
