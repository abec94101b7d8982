//! `/mock`: the mock interview. Set up (practice or against the clock, alone or with an
//! interviewer, the clock's length, the curveball), then the interviewer's sequence one prompt
//! at a time with a notes box each, the curveball graded by a simulator run, a
//! self-assessment against the rubric with the evidence given, and what to study next. At the
//! sizing stage the candidate types the figures they would say, which are checked against the
//! fleet question's derivation ([`figures`]).
//! `/mock/report` ([`report`]) prints the last one. The words are `content/mock.toml`, read by
//! `trainer_course::mock`; a finished mock is kept in progress and its curveball scheduled.

mod assess;
mod curveball;
mod figures;
mod report;
mod requirements;

pub use report::MockReport;

use crate::components::{link_sentence, Countdown, NotesBox, PathLink, UrlErrors};
use crate::progress::{use_progress, FigureRecord, PushbackRecord};
use leptos::prelude::*;
use std::collections::BTreeMap;
use trainer_course::mock::{mock, Mock, MockDraft};

/// Where a mock in progress is kept, so a reload or a closed tab resumes it.
const DRAFT_KEY: &str = "serving-trainer.mock-draft";

fn draft_storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}

/// Where the session stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Setup,
    Interview,
    Assess,
    Done,
}

/// The id the curveball stage's notes are kept under.
const CURVEBALL_STAGE: &str = "curveball";

/// Everything one session holds, shared by its views.
#[derive(Clone, Copy)]
struct Session {
    mock: StoredValue<Mock>,
    /// Against the clock (`mock` mode) or not (`practice`).
    timed: RwSignal<bool>,
    /// Two people: the interviewer's points and the rubric beside each prompt.
    interviewer: RwSignal<bool>,
    /// The text of the minutes field.
    minutes: RwSignal<String>,
    /// The curveball asked for ("" draws one).
    choice: RwSignal<String>,
    /// The curveball of this session, once started.
    curveball: RwSignal<Option<String>>,
    phase: RwSignal<Phase>,
    /// Which stage is shown: a prompt's index, or the number of prompts for the curveball.
    stage: RwSignal<usize>,
    notes: StoredValue<Vec<(String, RwSignal<String>)>>,
    limit_s: RwSignal<f64>,
    remaining: RwSignal<f64>,
    paused: RwSignal<bool>,
    time_up: RwSignal<bool>,
    pushback: RwSignal<Option<PushbackRecord>>,
    assessment: RwSignal<BTreeMap<String, String>>,
    /// The figures typed at the sizing stage, by figure id.
    figures: StoredValue<Vec<(String, RwSignal<String>)>>,
    /// The figures checked so far (each final once checked).
    marks: RwSignal<Vec<FigureRecord>>,
    /// Seconds the clock has run on each stage, by stage id.
    spent: RwSignal<BTreeMap<String, f64>>,
    /// The level picked for each stage in the self-assessment, by stage id.
    levels: RwSignal<BTreeMap<String, String>>,
}

impl Session {
    /// What a reload needs to resume this session.
    fn draft(&self) -> MockDraft {
        MockDraft {
            timed: self.timed.get(),
            interviewer: self.interviewer.get(),
            curveball: self.curveball.get().unwrap_or_default(),
            assessing: self.phase.get() == Phase::Assess,
            time_up: self.time_up.get(),
            stage: self.stage.get(),
            limit_s: self.limit_s.get(),
            remaining_s: self.remaining.get(),
            notes: self.notes.with_value(|n| {
                n.iter()
                    .map(|(k, t)| (k.clone(), t.get()))
                    .filter(|(_, v)| !v.is_empty())
                    .collect()
            }),
            assessment: self.assessment.get(),
            pushback: self.pushback.get(),
            figures: self.figures.with_value(|f| {
                f.iter()
                    .map(|(k, t)| (k.clone(), t.get()))
                    .filter(|(_, v)| !v.is_empty())
                    .collect()
            }),
            marks: self.marks.get(),
            spent_s: self.spent.get(),
            levels: self.levels.get(),
        }
    }

    /// Puts a saved session back, with the clock paused (the learner was away).
    fn resume(&self, d: MockDraft) {
        self.timed.set(d.timed);
        self.interviewer.set(d.interviewer);
        if d.limit_s > 0.0 {
            self.minutes
                .set(((d.limit_s / 60.0).round() as u32).to_string());
        }
        self.choice.set(d.curveball.clone());
        self.curveball.set(Some(d.curveball));
        self.stage.set(d.stage);
        self.limit_s.set(d.limit_s);
        self.remaining.set(d.remaining_s);
        self.paused.set(true);
        self.time_up.set(d.time_up);
        self.notes.with_value(|n| {
            for (k, t) in n {
                t.set(d.notes.get(k).cloned().unwrap_or_default());
            }
        });
        self.assessment.set(d.assessment);
        self.levels.set(d.levels);
        self.pushback.set(d.pushback);
        self.figures.with_value(|f| {
            for (k, t) in f {
                t.set(d.figures.get(k).cloned().unwrap_or_default());
            }
        });
        self.marks.set(d.marks);
        self.spent.set(d.spent_s);
        self.phase.set(if d.assessing {
            Phase::Assess
        } else {
            Phase::Interview
        });
    }

    fn stages(&self) -> usize {
        self.mock.with_value(|m| m.prompts.len()) + 1
    }

    /// The text typed for figure `id`.
    fn figure_text(&self, id: &str) -> Option<RwSignal<String>> {
        self.figures
            .with_value(|f| f.iter().find(|(k, _)| k == id).map(|(_, s)| *s))
    }

    fn notes_for(&self, id: &str) -> Option<RwSignal<String>> {
        self.notes
            .with_value(|n| n.iter().find(|(k, _)| k == id).map(|(_, s)| *s))
    }

    /// The notes given, by stage id (empty ones left out).
    fn notes_map(&self) -> BTreeMap<String, String> {
        self.notes.with_value(|n| {
            n.iter()
                .map(|(k, s)| (k.clone(), s.get_untracked().trim().to_string()))
                .filter(|(_, v)| !v.is_empty())
                .collect()
        })
    }

    /// Minutes on the clock, if the field holds a whole number from 1 to 180.
    fn minutes_value(&self) -> Option<u32> {
        self.minutes
            .get()
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|m| (1..=180).contains(m))
    }
}

/// `/mock`.
#[component]
pub fn MockPage() -> impl IntoView {
    let m = match mock() {
        Ok(m) => m,
        Err(e) => {
            return view! {
                <section data-testid="page-mock">
                    <h1>"Mock interview"</h1>
                    <p class="field-error" role="alert">{format!("The mock interview could not be read: {e}")}</p>
                </section>
            }
            .into_any()
        }
    };
    let asked_text = crate::url_state::use_url_state()
        .read(crate::url_state::pairs)
        .remove("curveball")
        .filter(|c| !c.is_empty());
    let asked = asked_text.clone().filter(|c| m.curveball(c).is_some());
    // A curveball the mock does not have is named, and one is drawn as usual.
    let link_errors: Vec<String> = asked_text
        .filter(|_| asked.is_none())
        .map(|t| {
            link_sentence(
                "curveball",
                &t,
                "names no curveball of this interview, so one is drawn at the start",
            )
        })
        .into_iter()
        .collect();
    let mut ids: Vec<String> = m.prompts.iter().map(|p| p.id.clone()).collect();
    ids.push(CURVEBALL_STAGE.into());
    let figure_ids: Vec<String> = m.figures.list.iter().map(|f| f.id.clone()).collect();
    let s = Session {
        timed: RwSignal::new(true),
        interviewer: RwSignal::new(false),
        minutes: RwSignal::new(m.minutes.to_string()),
        choice: RwSignal::new(asked.unwrap_or_default()),
        curveball: RwSignal::new(None),
        phase: RwSignal::new(Phase::Setup),
        stage: RwSignal::new(0),
        notes: StoredValue::new(
            ids.into_iter()
                .map(|i| (i, RwSignal::new(String::new())))
                .collect(),
        ),
        limit_s: RwSignal::new(0.0),
        remaining: RwSignal::new(0.0),
        paused: RwSignal::new(false),
        time_up: RwSignal::new(false),
        pushback: RwSignal::new(None),
        assessment: RwSignal::new(BTreeMap::new()),
        levels: RwSignal::new(BTreeMap::new()),
        figures: StoredValue::new(
            figure_ids
                .into_iter()
                .map(|i| (i, RwSignal::new(String::new())))
                .collect(),
        ),
        marks: RwSignal::new(Vec::new()),
        spent: RwSignal::new(BTreeMap::new()),
        mock: StoredValue::new(m),
    };
    // A session left mid-way comes back where it stood; one that cannot is set aside with
    // the reason.
    let saved = draft_storage().and_then(|st| st.get_item(DRAFT_KEY).ok().flatten());
    let notice = match saved.map(|t| s.mock.with_value(|m| MockDraft::resume(&t, m))) {
        Some(Ok((d, dropped))) => {
            s.resume(d);
            let aside = s
                .mock
                .with_value(|m| m.figures.set_aside(&dropped))
                .map_or(String::new(), |a| format!(" {a}"));
            Some((
                "mock-resumed",
                format!(
                    "The interview you left is back where it stood, with the clock paused.{aside}"
                ),
            ))
        }
        Some(Err(why)) => Some((
            "mock-draft-error",
            format!("A saved interview could not be resumed: {why}. It has been discarded."),
        )),
        None => None,
    };
    Effect::new(move |_| {
        let Some(st) = draft_storage() else { return };
        match s.phase.get() {
            Phase::Interview | Phase::Assess => {
                let _ = st.set_item(DRAFT_KEY, &s.draft().to_json());
            }
            Phase::Setup | Phase::Done => {
                let _ = st.remove_item(DRAFT_KEY);
            }
        }
    });
    view! {
        <section class="mock" data-testid="page-mock">
            <p class="eyebrow">{crate::route::Section::Mock.label()}</p>
            <h1>{crate::shell::site_words().mock_title.clone()}</h1>
            <UrlErrors errors=Signal::derive(move || link_errors.clone())/>
            {notice.map(|(id, text)| view! { <p class="muted" role="status" data-testid=id>{text}</p> })}
            {move || match s.phase.get() {
                Phase::Setup => view! { <Setup s=s/> }.into_any(),
                Phase::Interview => view! { <Interview s=s/> }.into_any(),
                Phase::Assess => view! { <assess::Assess s=s/> }.into_any(),
                Phase::Done => view! { <assess::StudyNext s=s/> }.into_any(),
            }}
        </section>
    }
    .into_any()
}

#[component]
fn Setup(s: Session) -> impl IntoView {
    let store = use_progress();
    let curveballs = s.mock.with_value(|m| {
        m.curveballs
            .iter()
            .map(|c| (c.id.clone(), c.title.clone()))
            .collect::<Vec<_>>()
    });
    let options = curveballs
        .into_iter()
        .map(|(id, title)| {
            let sel = id.clone();
            view! { <option value=id.clone() selected=move || s.choice.get() == sel>{title}</option> }
        })
        .collect_view();
    let bad_minutes = move || s.timed.get() && s.minutes_value().is_none();
    let start = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let limit = if s.timed.get_untracked() {
            match s.minutes_value() {
                Some(m) => m as f64 * 60.0,
                None => return,
            }
        } else {
            0.0
        };
        let chosen = s.choice.get_untracked();
        let id = if chosen.is_empty() {
            s.mock.with_value(|m| {
                let i = (js_sys::Math::random() * m.curveballs.len() as f64) as usize;
                m.curveballs[i.min(m.curveballs.len() - 1)].id.clone()
            })
        } else {
            chosen
        };
        s.curveball.set(Some(id));
        s.limit_s.set(limit);
        s.remaining.set(limit);
        s.paused.set(false);
        s.time_up.set(false);
        s.stage.set(0);
        s.pushback.set(None);
        s.assessment.set(BTreeMap::new());
        s.notes
            .with_value(|n| n.iter().for_each(|(_, t)| t.set(String::new())));
        s.figures
            .with_value(|f| f.iter().for_each(|(_, t)| t.set(String::new())));
        s.marks.set(Vec::new());
        s.spent.set(BTreeMap::new());
        s.phase.set(Phase::Interview);
        focus_prompt();
    };
    let past = move || store.progress.with(|p| p.mocks.len());
    view! {
        <p class="lede" data-testid="mock-intro">{s.mock.with_value(|m| m.intro.clone())}</p>
        <form class="mock-setup" data-testid="mock-setup" on:submit=start>
            <fieldset>
                <legend>"Mode"</legend>
                <label><input type="radio" name="mock-mode" data-testid="mode-mock"
                    prop:checked=move || s.timed.get() on:change=move |_| s.timed.set(true)/>
                    " Mock: against the clock, with pause"</label>
                <label><input type="radio" name="mock-mode" data-testid="mode-practice"
                    prop:checked=move || !s.timed.get() on:change=move |_| s.timed.set(false)/>
                    " Practice: hints, no clock"</label>
            </fieldset>
            <label class="check"><input type="checkbox" data-testid="mode-interviewer"
                prop:checked=move || s.interviewer.get()
                on:change=move |ev| s.interviewer.set(event_target_checked(&ev))/>
                " Two people: show the interviewer the expected points and the rubric beside each prompt"</label>
            <Show when=move || s.timed.get()>
                <div class="field">
                    <label for="mock-minutes">"Minutes on the clock"</label>
                    <input id="mock-minutes" type="text" inputmode="numeric" data-testid="mock-minutes"
                        aria-invalid=move || bad_minutes().to_string()
                        aria-describedby="mock-minutes-error"
                        prop:value=move || s.minutes.get()
                        on:input=move |ev| s.minutes.set(event_target_value(&ev))/>
                    <p class="field-error" id="mock-minutes-error" data-testid="mock-minutes-error">
                        {move || bad_minutes().then_some("Enter a whole number of minutes from 1 to 180.")}
                    </p>
                </div>
            </Show>
            <div class="field">
                <label for="mock-curveball">"Curveball"</label>
                <select id="mock-curveball" data-testid="mock-curveball"
                    on:change=move |ev| s.choice.set(event_target_value(&ev))>
                    <option value="" selected=move || s.choice.get().is_empty()>"Draw one at random"</option>
                    {options}
                </select>
            </div>
            <button class="button primary" type="submit" data-testid="mock-start" disabled=bad_minutes>"Start the interview"</button>
        </form>
        {move || (past() > 0).then(|| view! {
            <p class="muted" data-testid="mock-past">
                {format!("Mock interviews finished so far: {}. ", past())}
                <PathLink to="/mock/report" testid="mock-last-report">"The last one's report"</PathLink>
            </p>
        })}
    }
}

/// Moves keyboard focus to the prompt's heading once it is drawn.
fn focus_prompt() {
    request_animation_frame(|| {
        use wasm_bindgen::JsCast;
        if let Some(el) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id("mock-prompt-h"))
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = el.focus();
        }
    });
}

#[component]
fn Interview(s: Session) -> impl IntoView {
    let total = s.stages();
    let stage_names: Vec<(String, String)> = s.mock.with_value(|m| {
        let mut v: Vec<(String, String)> = m
            .prompts
            .iter()
            .map(|p| (p.id.clone(), p.stage.clone()))
            .collect();
        v.push((CURVEBALL_STAGE.into(), "The curveball".into()));
        v
    });
    let list = stage_names
        .into_iter()
        .enumerate()
        .map(|(i, (id, name))| {
            view! {
                <li data-testid=format!("stage-{id}") class:current=move || s.stage.get() == i
                    aria-current=move || (s.stage.get() == i).then_some("step")>
                    {name}
                </li>
            }
        })
        .collect_view();
    let expire = Callback::new(move |_| {
        s.time_up.set(true);
        s.phase.set(Phase::Assess);
    });
    let clock = move || {
        if s.limit_s.get_untracked() > 0.0 {
            view! {
                <Countdown remaining=s.remaining paused=s.paused on_expire=expire testid="mock-clock"/>
            }
            .into_any()
        } else {
            view! { <span class="muted" data-testid="mock-no-clock">"Practice: no clock"</span> }
                .into_any()
        }
    };
    let go = move |to: usize| {
        s.stage.set(to);
        focus_prompt();
    };
    // The clock's time goes to the stage shown while it runs.
    let last = StoredValue::new(s.remaining.get_untracked());
    Effect::new(move |_| {
        let now = s.remaining.get();
        let before = last.get_value();
        last.set_value(now);
        if now < before && s.limit_s.get_untracked() > 0.0 {
            let i = s.stage.get_untracked();
            let id = s
                .mock
                .with_value(|m| m.stage_ids().get(i).map(|x| x.to_string()));
            if let Some(id) = id {
                s.spent
                    .update(|m| *m.entry(id).or_insert(0.0) += before - now);
            }
        }
    });
    // Against the clock: this stage's time against its share of the plan, and a nudge past it.
    let pace = move || {
        let limit = s.limit_s.get();
        if limit <= 0.0 {
            return None;
        }
        let i = s.stage.get();
        let p = s
            .spent
            .with(|spent| s.mock.with_value(|m| m.pace(limit, spent)));
        let p = p.into_iter().nth(i)?;
        let w = s.mock.with_value(|m| m.pace.clone());
        let over = p.over();
        let label = crate::text::fill(
            &w.label,
            &[
                ("spent", clock_text(p.spent_s)),
                ("budget", clock_text(p.budget_s)),
            ],
        );
        Some(view! {
            <span class="muted mock-pace" class:over=over data-testid="mock-pace"
                data-spent=format!("{:.1}", p.spent_s) data-budget=format!("{:.1}", p.budget_s)>{label}</span>
            {over.then(|| view! { <p class="notice mock-pace-over" role="status" data-testid="mock-pace-over">{w.over.clone()}</p> })}
        })
    };
    view! {
        <div class="mock-bar">
            {clock}
            <span class="muted" data-testid="mock-progress">{move || format!("Stage {} of {total}", s.stage.get() + 1)}</span>
            {pace}
        </div>
        <ol class="mock-stages" aria-label="The interview's stages">{list}</ol>
        {move || {
            let i = s.stage.get();
            view! { <Stage s=s index=i/> }
        }}
        <div class="mock-nav">
            <button class="button" type="button" data-testid="mock-prev"
                disabled=move || s.stage.get() == 0
                on:click=move |_| go(s.stage.get_untracked().saturating_sub(1))>"Previous"</button>
            {move || if s.stage.get() + 1 < total {
                view! { <button class="button primary" type="button" data-testid="mock-next"
                    on:click=move |_| go(s.stage.get_untracked() + 1)>"Next"</button> }.into_any()
            } else {
                view! { <button class="button primary" type="button" data-testid="mock-finish"
                    on:click=move |_| { s.paused.set(true); s.phase.set(Phase::Assess); }>"Finish and assess"</button> }.into_any()
            }}
        </div>
    }
}

/// One stage: a prompt of the sequence, or the curveball.
#[component]
fn Stage(s: Session, index: usize) -> impl IntoView {
    let m = s.mock.get_value();
    let practice = !s.timed.get_untracked();
    let interviewer = s.interviewer;
    let (id, stage, ask, hint, expect, rubric, train, body, levels) = match m.prompts.get(index) {
        Some(p) => (
            p.id.clone(),
            p.stage.clone(),
            p.ask.clone(),
            p.hint.clone(),
            p.expect.clone(),
            p.rubric.clone(),
            p.train.clone(),
            (p.id == m.figures.prompt).then(|| view! { <figures::FigureCheck s=s/> }.into_any()),
            p.levels.clone(),
        ),
        None => {
            let cid = s.curveball.get_untracked().unwrap_or_default();
            let Some(c) = m.curveball(&cid).cloned() else {
                return view! { <p class="field-error">"No curveball was drawn."</p> }.into_any();
            };
            (
                CURVEBALL_STAGE.to_string(),
                format!("The curveball: {}", c.title),
                c.ask.clone(),
                c.hint.clone(),
                Vec::new(),
                vec!["pushback".to_string()],
                c.train.clone(),
                Some(view! { <curveball::CurveballAnswer c=c result=s.pushback/> }.into_any()),
                m.curveball_levels.clone(),
            )
        }
    };
    let lines: Vec<(String, String, String)> = rubric
        .iter()
        .filter_map(|r| m.line(r))
        .map(|l| {
            (
                l.id.clone(),
                level_word(&l.level).to_string(),
                l.text.clone(),
            )
        })
        .collect();
    let notes = s
        .notes_for(&id)
        .unwrap_or_else(|| RwSignal::new(String::new()));
    let with_figures = id == m.figures.prompt;
    let with_requirements = id == m.requirements.prompt;
    let notes_label = if s.interviewer.get_untracked() {
        "What the candidate said"
    } else {
        "Your answer, in notes"
    };
    view! {
        <article class="mock-prompt" data-testid="mock-prompt" data-stage=id.clone()>
            <p class="eyebrow">{stage}</p>
            <h2 id="mock-prompt-h" tabindex="-1" data-testid="mock-ask">{ask}</h2>
            {practice.then(|| view! { <p class="mock-hint" data-testid="mock-hint"><strong>"Hint: "</strong>{hint}</p> })}
            <Show when=move || interviewer.get()>
                <aside class="interviewer-notes" data-testid="interviewer-notes" aria-label="For the interviewer">
                    {(!expect.is_empty()).then(|| view! {
                        <h3>"A strong answer"</h3>
                        <ul>{expect.iter().map(|e| view! { <li>{e.clone()}</li> }).collect_view()}</ul>
                    })}
                    {with_figures.then(|| view! { <figures::ExpectedFigures s=s/> })}
                    {with_requirements.then(|| {
                        let m2 = m.clone();
                        view! {
                            <h3>{m.requirements.heading.clone()}</h3>
                            {move || {
                                let text = notes.get();
                                let covered = m2.requirements.grade(&text);
                                requirements::checklist(&m2, &covered, "interviewer-requirements")
                            }}
                        }
                    })}
                    <h3>"What each level says here"</h3>
                    <dl class="mock-levels" data-testid="interviewer-levels">
                        {levels.each().into_iter().map(|(name, text)| view! {
                            <dt>{level_name(name)}</dt>
                            <dd data-testid=format!("interviewer-level-{name}")>{text.to_string()}</dd>
                        }).collect_view()}
                    </dl>
                    <h3>"Rubric lines this shows"</h3>
                    <ul>
                        {lines.iter().map(|(lid, level, text)| view! {
                            <li data-testid=format!("interviewer-rubric-{lid}")><span class="level">{level.clone()}</span>" "{text.clone()}</li>
                        }).collect_view()}
                    </ul>
                    <p><PathLink to=train.clone() testid="interviewer-train">"Where the app trains this"</PathLink></p>
                </aside>
            </Show>
            {body}
            <NotesBox id=format!("notes-{id}") label=notes_label text=notes testid=format!("notes-{id}")
                help="They are your evidence when you assess yourself at the end."/>
        </article>
    }
    .into_any()
}

/// A calibration level's name as the page shows it.
fn level_name(level: &str) -> &'static str {
    match level {
        "mid" => "Mid-level",
        "senior" => "Senior",
        _ => "Staff",
    }
}

fn level_word(level: &str) -> &'static str {
    match level {
        "strong" => "Strong hire",
        _ => "Hire",
    }
}

/// Seconds as the clock shows them: minutes and seconds.
pub(crate) fn clock_text(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    format!("{}:{:02}", s / 60, s % 60)
}
