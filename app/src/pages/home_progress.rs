//! The home page's progress panel: what is due today in the spaced-repetition schedule (with
//! a link straight to the first item), progress across every section, and the learner's own
//! copy of it: export to a JSON file, import one, reset with confirmation.

use crate::components::{lazy_region, PathLink, RecallCard};
use crate::progress::{today, use_progress};
use leptos::prelude::*;
use trainer_course::sizing::{derive, Inputs, Question};
use trainer_course::study::{date, Item};

/// What the learner reads for a scheduled item.
fn label(item: &Item) -> String {
    match item {
        Item::Drill { question, step } => step_label("Drill", question, step),
        Item::Step { question, step } => step_label("Mock figure", question, step),
        Item::Moment(id) => match trainer_course::moments::moment(id) {
            Ok(m) => format!("Interview moment: {}", m.title),
            Err(_) => format!("Interview moment: {id}"),
        },
        Item::Curveball(id) => match trainer_course::mock::mock()
            .ok()
            .and_then(|m| m.curveball(id).map(|c| c.title.clone()))
        {
            Some(t) => format!("Mock curveball: {t}"),
            None => format!("Mock curveball: {id}"),
        },
        Item::Recall(id) => match trainer_course::recall::prompt(id) {
            Some(p) => format!("{}: {}", trainer_course::recall::words().label, p.question),
            None => id.clone(),
        },
    }
}

/// A step of a sizing question, after `kind`: "Drill: Size the fleet, replicas".
fn step_label(kind: &str, question: &str, step: &str) -> String {
    let Some(q) = Question::from_id(question) else {
        return format!("{kind}: {question}, {step}");
    };
    let step_label = derive(q, &Inputs::defaults(q))
        .ok()
        .and_then(|d| d.step(step).map(|s| s.label.to_string()))
        .unwrap_or_else(|| step.to_string());
    format!("{kind}: {}, {}", q.title(), step_label.to_ascii_lowercase())
}

/// A key as a `data-testid` suffix (`drill:fleet/replicas` to `drill-fleet-replicas`).
fn key_id(key: &str) -> String {
    key.replace([':', '/'], "-")
}

/// Each item's link and label, in order; `None` for one this version cannot practise (a
/// recall prompt the course has dropped since it was answered).
#[lazy]
fn due_entries(items: Vec<Item>) -> Vec<Option<(String, String)>> {
    items
        .iter()
        .map(|i| i.ships().then(|| (i.path(), label(i))))
        .collect()
}

/// The cards of the recall prompts due, answered on the home page.
#[lazy]
fn recall_review(ids: Vec<String>) -> AnyView {
    let words = trainer_course::recall::words();
    let prompts: Vec<_> = ids
        .iter()
        .filter_map(|id| trainer_course::recall::prompt(id))
        .collect();
    view! {
        <section class="recall-review" data-testid="recall-review" aria-labelledby="recall-review-h">
            <h3 id="recall-review-h">{words.review_heading.clone()}</h3>
            <p class="muted small">{words.review_intro.clone()}</p>
            {prompts.into_iter().map(|p| view! { <RecallCard prompt=p/> }).collect_view()}
        </section>
    }
    .into_any()
}

/// What is due today, first item first.
#[component]
pub fn DueToday() -> impl IntoView {
    let store = use_progress();
    let day = today();
    let due = move || store.progress.with(|p| p.due(day));
    let next = move || store.progress.with(|p| p.next_due_after(day));
    view! {
        <section aria-labelledby="due-h" class="due-panel" data-testid="due-today">
            <h2 id="due-h">"Due today"</h2>
            {move || {
                let items = due();
                if items.is_empty() {
                    let later = next().map_or(
                        "Nothing is due. Drills, recall prompts, interview moments and mock curveballs you answer come back here: what you miss the same day, what you get right after a few days, then longer.".to_string(),
                        |d| format!("Nothing is due today; the next review is on {}.", date(d)),
                    );
                    return view! { <p data-testid="due-none">{later}</p> }.into_any();
                }
                // The links and labels come from the calculator's, the moments' and the
                // mock's files: their own piece of the module, fetched only when something is
                // due (a learner with nothing due never downloads it).
                let recalls: Vec<String> = items
                    .iter()
                    .filter_map(|i| match &i.item {
                        Item::Recall(id) => Some(id.clone()),
                        _ => None,
                    })
                    .collect();
                lazy_region(async move {
                    let entries = due_entries(items.iter().map(|i| i.item.clone()).collect()).await;
                    let items: Vec<_> = items
                        .into_iter()
                        .zip(entries)
                        .filter_map(|(i, e)| e.map(|e| (i, e)))
                        .collect();
                    let first = items.first().map(|(_, (path, _))| path.clone()).unwrap_or_default();
                    let count = items.len();
                    let list = items
                        .into_iter()
                        .map(|(i, (path, label))| {
                            let when = match (i.overdue, i.card.lapses) {
                                (0, 0) => "due today".to_string(),
                                (0, _) => "missed last time".to_string(),
                                (n, _) => format!("{n} day{} overdue", if n == 1 { "" } else { "s" }),
                            };
                            view! {
                                <li data-testid=format!("due-{}", key_id(&i.key)) data-box=i.card.box_.to_string()>
                                    <PathLink to=path>{label}</PathLink>
                                    <span class="muted">{format!(" · box {} · {when}", i.card.box_)}</span>
                                </li>
                            }
                        })
                        .collect_view();
                    // The recall prompts due are answered right here, with the learner's figures
                    // (the cards work answers out with the calculator: a piece of their own).
                    let review = if recalls.is_empty() {
                        None
                    } else {
                        Some(recall_review(recalls).await)
                    };
                    view! {
                        <p data-testid="due-count" data-value=count.to_string()>
                            {format!("{count} item{} to practise today.", if count == 1 { "" } else { "s" })}
                        </p>
                        <ol class="due-list">{list}</ol>
                        <p><PathLink to=first testid="due-start">"Start with the first"</PathLink></p>
                        {review}
                    }
                    .into_any()
                })
            }}
        </section>
    }
}

/// Progress across every section, and the learner's copy of it.
#[component]
pub fn ProgressPanel() -> impl IntoView {
    let store = use_progress();
    let confirming = RwSignal::new(false);
    let message: RwSignal<Option<(bool, String)>> = RwSignal::new(None);
    let summary = move || {
        store.progress.with(|p| {
            let right = p.drills.iter().filter(|d| d.correct).count();
            let strong = p.moments.iter().filter(|m| m.grade == "strong").count();
            format!(
                "{} part{} started; {right} of {} drills within the band; {strong} of {} moment answers strong; {} mock interview{} finished; {} item{} in the review schedule.",
                p.done.len(),
                if p.done.len() == 1 { "" } else { "s" },
                p.drills.len(),
                p.moments.len(),
                p.mocks.len(),
                if p.mocks.len() == 1 { "" } else { "s" },
                p.schedule.len(),
                if p.schedule.len() == 1 { "" } else { "s" },
            )
        })
    };
    let empty = move || {
        store.progress.with(|p| {
            p.done.is_empty() && p.drills.is_empty() && p.moments.is_empty() && p.mocks.is_empty()
        })
    };
    let export = move |_| {
        message.set(match store.export() {
            Ok(()) => Some((
                true,
                "Progress saved as serving-trainer-progress.json.".into(),
            )),
            Err(e) => Some((false, e)),
        })
    };
    let import = move |ev: leptos::ev::Event| {
        crate::browser::read_picked_file(&ev, move |text| {
            let result = text.and_then(|t| {
                store
                    .import(&t)
                    .map(|()| "Progress imported from the file.".to_string())
            });
            let _ = message.try_set(Some(match result {
                Ok(m) => (true, m),
                Err(e) => (false, e),
            }));
        });
    };
    view! {
        <section aria-labelledby="progress" class="progress-panel">
            <h2 id="progress">"Your progress"</h2>
            <p data-testid="progress-summary">
                {move || if empty() {
                    "Nothing yet: pick a part above. Progress is kept in this browser only; export it to keep a copy.".to_string()
                } else {
                    summary()
                }}
            </p>
            <div class="progress-actions">
                <button class="button" type="button" data-testid="progress-export" on:click=export>"Export progress"</button>
                <input id="progress-import" class="visually-hidden-file" type="file" accept="application/json,.json"
                    data-testid="progress-import" on:change=import/>
                <label class="button" for="progress-import">"Import progress"</label>
                <button class="button" type="button" data-testid="progress-reset"
                    aria-expanded=move || confirming.get().to_string()
                    on:click=move |_| confirming.set(true)>"Reset progress"</button>
            </div>
            {move || message.get().map(|(ok, m)| view! {
                <p class=if ok { "notice" } else { "field-error" } role="status" data-testid="progress-message" data-ok=ok.to_string()>{m}</p>
            })}
            <Show when=move || confirming.get()>
                <div class="confirm" role="alertdialog" aria-labelledby="reset-q" data-testid="reset-confirm">
                    <p id="reset-q">"Forget every step seen, drill, moment, mock and review in this browser? Export first to keep a copy."</p>
                    <button class="button danger" type="button" data-testid="reset-yes"
                        on:click=move |_| { store.reset(); confirming.set(false); message.set(Some((true, "Progress reset.".into()))); }>"Yes, forget it"</button>
                    <button class="button" type="button" data-testid="reset-no" on:click=move |_| confirming.set(false)>"Keep it"</button>
                </div>
            </Show>
        </section>
    }
}
