//! `/buildups`: the two step-through walkthroughs, and `/buildups/<id>` for each. Every
//! frame is a simulator's state (`trainer_course::buildup`); the words are the scripts in
//! `content/buildups/`, parsed at build time; the player is `components::StepPlayer`. The
//! URL keeps the step, the sub-step and any changed parameter
//! (`trainer_course::buildup::query`), rewritten without history entries.

mod fleet;
mod replica;

use crate::components::{link_sentence, Link, PlayerStep};
use crate::route::{Route, Section};
use crate::url_state::use_url_state;
use leptos::prelude::*;
use trainer_content::buildup::Script;
use trainer_course::buildup::query::{buildup_query, BuildUpQuery};
use trainer_course::buildup::replica::ReplicaParams;
use trainer_course::buildup::Chapter;

const REPLICA_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/buildup-replica.json"));
const FLEET_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/buildup-fleet.json"));

/// A build-up's script by id (the build script checked it parses).
pub fn script(id: &str) -> Option<Script> {
    let json = match id {
        "replica" => REPLICA_JSON,
        "fleet" => FLEET_JSON,
        _ => return None,
    };
    serde_json::from_str(json).ok()
}

/// The player's steps: each chapter's title from the script and its count of frames.
fn player_steps(script: &Script, chapters: &[Chapter]) -> Vec<PlayerStep> {
    chapters
        .iter()
        .map(|c| PlayerStep {
            title: script
                .step(&c.id)
                .map(|st| st.title.clone())
                .unwrap_or_default(),
            frames: c.len(),
        })
        .collect()
}

/// The build-ups' index.
#[component]
pub fn BuildUpsIndex() -> impl IntoView {
    let items = trainer_content::buildup::IDS
        .iter()
        .filter_map(|id| script(id).map(|s| (*id, s)))
        .map(|(id, s)| {
            view! {
                <li class="card" data-testid=format!("buildup-{id}")>
                    <h2><Link to=Route::BuildUp(id.into()) testid=format!("open-{id}")>{s.title.clone()}</Link></h2>
                    <p>{s.intro.clone()}</p>
                    <ol class="buildup-steps">
                        {s.steps.iter().map(|st| view! { <li>{st.title.clone()}</li> }).collect_view()}
                    </ol>
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="narrow" data-testid="page-buildups">
            <p class="eyebrow">{Section::BuildUps.label()}</p>
            <h1>{crate::shell::site_words().buildups_title.clone()}</h1>
            <ul class="cards buildup-list">{items}</ul>
        </section>
    }
}

/// `/buildups/<id>`.
#[component]
pub fn BuildUpPage(id: String) -> impl IntoView {
    match id.as_str() {
        "replica" => view! { <replica::ReplicaBuildUp/> }.into_any(),
        "fleet" => view! { <fleet::FleetBuildUp/> }.into_any(),
        other => view! {
            <section class="narrow" data-testid="page-buildup-unknown">
                <p class="eyebrow">"Build-ups"</p>
                <h1>"No such build-up"</h1>
                <p class="notice" role="alert" data-testid="buildup-unknown">
                    {format!("There is no build-up called “{other}”. There are two:")}
                </p>
                <ul>
                    <li><Link to=Route::BuildUp("replica".into()) testid="unknown-replica">"Follow one chat through a replica"</Link></li>
                    <li><Link to=Route::BuildUp("fleet".into()) testid="unknown-fleet">"Follow one request through the fleet"</Link></li>
                </ul>
            </section>
        }
        .into_any(),
    }
}

/// The step, sub-step and parameters a build-up page keeps in its URL, kept in step with the
/// URL both ways through [`crate::url_state`]: a change here rewrites the query (no history
/// entry); a new query (Back, a link to another step) is read back.
#[derive(Clone, Copy)]
pub struct StepState {
    /// The step, from 0.
    pub step: RwSignal<usize>,
    /// The sub-step within it, from 0.
    pub sub: RwSignal<usize>,
    /// The sub-step the URL named, if any (a page whose run arrives later settles on it).
    pub url_sub: StoredValue<Option<usize>>,
    pub params: RwSignal<ReplicaParams>,
    /// The fleet build-up's decode replicas (0: one pool does both).
    pub split: RwSignal<u32>,
    /// What was wrong with the URL, as sentences.
    pub errors: RwSignal<Vec<String>>,
}

impl StepState {
    /// Reads the URL now and keeps it in sync. `last_sub(step)` is the last sub-step of a step
    /// (None while the run is not there yet), so the URL names a sub-step only when it is not
    /// the last, and a URL without one opens a step at its last. `with_params`: whether the
    /// page has parameters (the replica build-up).
    pub fn install(
        last_sub: impl Fn(usize) -> Option<usize> + Copy + Send + Sync + 'static,
        with_params: bool,
    ) -> StepState {
        let url = use_url_state();
        let q = url.read(BuildUpQuery::parse);
        let mut errors = messages(&q);
        let state = StepState {
            step: RwSignal::new(q.step),
            sub: RwSignal::new(0),
            url_sub: StoredValue::new(q.sub),
            params: RwSignal::new(q.params),
            split: RwSignal::new(if with_params { 0 } else { q.split }),
            errors: RwSignal::new(Vec::new()),
        };
        if let Some(m) = state.settle_with(last_sub) {
            errors.push(m);
        }
        state.errors.set(errors);
        // The URL follows the state.
        Effect::new(move |_| {
            let step = state.step.get();
            let sub = state.sub.get();
            let sub = match last_sub(step) {
                Some(last) => (last != sub).then_some(sub),
                // The run is not there yet: keep what the URL said.
                None => state.url_sub.get_value(),
            };
            let (params, split) = if with_params {
                (state.params.get(), 0)
            } else {
                (ReplicaParams::shipped(), state.split.get())
            };
            url.replace(&buildup_query(step, sub, &params, split));
        });
        // A new query (Back, Forward, a link to a step) moves the state.
        url.follow(BuildUpQuery::parse, move |q| {
            if with_params && q.errors.is_empty() && q.params != state.params.get_untracked() {
                state.params.set(q.params);
            }
            if !with_params
                && q.errors.iter().all(|e| e.field != "split")
                && q.split != state.split.get_untracked()
            {
                state.split.set(q.split);
            }
            let step = state.step.get_untracked();
            if q.step != step || q.sub.is_some_and(|s| s != state.sub.get_untracked()) {
                state.step.set(q.step);
                let last = last_sub(q.step).unwrap_or(0);
                state.sub.set(q.sub.unwrap_or(last).min(last));
            }
        });
        state
    }

    /// Puts the sub-step where the URL said (or at the step's last), once the step's length
    /// is known; returns a message when the URL's sub-step is past the end.
    pub fn settle_with(&self, last_sub: impl Fn(usize) -> Option<usize>) -> Option<String> {
        let last = last_sub(self.step.get_untracked())?;
        let want = self.url_sub.get_value();
        self.sub.set(want.unwrap_or(last).min(last));
        want.filter(|&w| w > last).map(|w| {
            format!(
                "The link's sub={} is past the step's {} sub-steps: showing the last.",
                w + 1,
                last + 1
            )
        })
    }
}

/// The URL's problems as sentences.
fn messages(q: &BuildUpQuery) -> Vec<String> {
    q.errors
        .iter()
        .map(|e| {
            let text = q.bad_text.get(&e.field).map_or("", String::as_str);
            link_sentence(&e.field, text, &e.message)
        })
        .collect()
}
