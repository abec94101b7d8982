//! The curveball's answer, run by the simulator and graded: a replica count runs the fleet
//! question at the curveball's load (`trainer_course::mock::replicas_fleet`); a moment's option
//! runs with every other option of that moment. Runs go in slices between frames.

use crate::components::PathLink;
use crate::progress::PushbackRecord;
use crate::sim_runner::{run_fleets, run_rounds, RunStatus};
use crate::text::format::{int, sig};
use leptos::prelude::*;
use trainer_course::mock::{
    budget, curveball_inputs, grade_id, grade_option, grade_replicas, mock, replicas_fleet,
    Curveball, Pushback,
};
use trainer_course::sizing::{Inputs, Question, SimCheck};

/// The mock's load (`[figures] inputs` in `content/mock.toml`: the seed unless it says
/// otherwise), the same load the figures are checked at: the interview is about the problem
/// it poses, whatever the learner last tried in the calculator.
fn base_inputs() -> Inputs {
    mock()
        .ok()
        .and_then(|m| m.figures.load().ok())
        .unwrap_or_else(|| Inputs::defaults(Question::Fleet))
}

/// Takes the answer to curveball `c`, runs it, and puts the graded result in `result`.
#[component]
pub fn CurveballAnswer(c: Curveball, result: RwSignal<Option<PushbackRecord>>) -> impl IntoView {
    let status = RwSignal::new(RunStatus::Idle);
    let error: RwSignal<Option<String>> = RwSignal::new(None);
    let answer = RwSignal::new(String::new());
    let base = base_inputs();
    let c = StoredValue::new(c);
    let record = move |answer: String, p: Pushback| {
        let _ = result.try_set(Some(PushbackRecord {
            curveball: c.with_value(|c| c.id.clone()),
            answer,
            grade: grade_id(p.grade).to_string(),
            summary: p.summary,
        }));
    };
    let base = StoredValue::new(base);
    let run = move || {
        if status.get_untracked().running() {
            return;
        }
        error.set(None);
        let Ok(m) = mock() else { return };
        let cb = c.get_value();
        let text = answer.get_untracked();
        if cb.kind == "replicas" {
            let Some(n) = text
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=4096).contains(n))
            else {
                error.set(Some(
                    "Enter a whole number of replicas from 1 to 4096.".into(),
                ));
                return;
            };
            let b = base.get_value();
            match replicas_fleet(&cb, &b, n) {
                Ok(None) => match grade_replicas(&m, &cb, &b, n, None) {
                    Ok(p) => record(n.to_string(), p),
                    Err(e) => error.set(Some(e.to_string())),
                },
                Ok(Some(fleet)) => run_fleets(vec![fleet], status, move |done| {
                    let Some((cfg, report)) = done.first() else {
                        return;
                    };
                    let check = SimCheck::from_report(cfg, report);
                    match grade_replicas(&m, &cb, &b, n, Some(&check)) {
                        Ok(p) => record(n.to_string(), p),
                        Err(e) => {
                            let _ = error.try_set(Some(e.to_string()));
                        }
                    }
                }),
                Err(e) => error.set(Some(e.to_string())),
            }
        } else {
            let Some(moment) = cb
                .moment
                .as_deref()
                .and_then(|id| trainer_course::moments::moment(id).ok())
            else {
                return;
            };
            let Some(chosen) = moment.options.iter().position(|o| o.id == text) else {
                error.set(Some("Pick one of the approaches first.".into()));
                return;
            };
            // A curveball about cost is graded against the budget the arithmetic sets.
            let cap = match budget(&cb, &base.get_value()) {
                Ok(b) => b,
                Err(e) => {
                    error.set(Some(e.to_string()));
                    return;
                }
            };
            match moment.rounds(trainer_course::moments::Variant::default()) {
                Ok(rounds) => run_rounds(vec![rounds], status, move |done| {
                    let outcomes = done
                        .first()
                        .map(|r| r.outcomes(&moment))
                        .unwrap_or_default();
                    let shown = |i: usize, v: Option<f64>| match (moment.figures.get(i), v) {
                        (Some(f), Some(v)) => trainer_course::moments::show(&f.unit, v),
                        _ => "n/a".to_string(),
                    };
                    let p = grade_option(&m, &moment, &outcomes, chosen, cap.as_ref(), shown);
                    let id = moment.options[chosen].id.clone();
                    record(id, p);
                }),
                Err(e) => error.set(Some(e.to_string())),
            }
        }
    };
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        run();
    };
    let cb = c.get_value();
    let field = if cb.kind == "replicas" {
        let inputs = curveball_inputs(&cb, &base.get_value()).ok();
        let rate = inputs.and_then(|i| i.get("rate")).unwrap_or(0.0);
        let spare = cb.spare.unwrap_or(0);
        let load = if spare > 0 {
            format!(
                "The load: {} req/s, with {} replica{} lost.",
                sig(rate, 3),
                int(spare as f64),
                if spare == 1 { "" } else { "s" }
            )
        } else {
            format!("The load now: {} req/s.", sig(rate, 3))
        };
        view! {
            <p class="muted" data-testid="pushback-load" data-value=format!("{rate}")>{load}</p>
            <label for="pushback-answer">"Replicas you would run"</label>
            <input id="pushback-answer" type="text" inputmode="numeric" autocomplete="off" data-testid="pushback-answer"
                aria-describedby="pushback-error"
                prop:value=move || answer.get() on:input=move |ev| answer.set(event_target_value(&ev))/>
        }
        .into_any()
    } else {
        let options = cb
            .moment
            .as_deref()
            .and_then(|id| trainer_course::moments::moment(id).ok())
            .map(|m| m.options)
            .unwrap_or_default();
        let radios = options
            .into_iter()
            .map(|o| {
                let (a, b) = (o.id.clone(), o.id.clone());
                let input_id = format!("pushback-opt-{}", o.id);
                view! {
                    <li>
                        <input type="radio" name="pushback-option" id=input_id.clone() data-testid=format!("pushback-option-{}", o.id)
                            prop:checked=move || answer.get() == a on:change=move |_| answer.set(b.clone())/>
                        <label for=input_id>{o.label.clone()}</label>
                    </li>
                }
            })
            .collect_view();
        view! {
            <fieldset>
                <legend>"Your approach"</legend>
                <ul class="moment-options">{radios}</ul>
            </fieldset>
        }
        .into_any()
    };
    let status_view = move || {
        match status.get() {
        RunStatus::Running { run, runs, progress } => Some(view! {
            <p class="sim-status" role="status" data-testid="pushback-running">
                {if runs > 1 { format!("Running approach {} of {runs}", run + 1) } else { "Running your answer".to_string() }}
                <progress max="1" value=progress></progress>
            </p>
        }.into_any()),
        RunStatus::Failed(msg) => Some(view! { <p class="field-error" role="alert">{msg}</p> }.into_any()),
        _ => None,
    }
    };
    let verdict = move || {
        result.get().map(|r| {
            view! {
                <p class=format!("pushback-result grade-{}", r.grade) role="status" data-testid="pushback-result" data-grade=r.grade.clone()>
                    <strong>{grade_word(&r.grade)}". "</strong>{r.summary.clone()}
                </p>
            }
        })
    };
    view! {
        <form class="pushback" data-testid="pushback" on:submit=on_submit>
            {field}
            <p class="field-error" id="pushback-error" data-testid="pushback-error">{move || error.get()}</p>
            <button class="button primary" type="submit" data-testid="pushback-run"
                disabled=move || status.get().running()>"Run my answer"</button>
        </form>
        {status_view}
        {verdict}
        <p class="muted">
            <PathLink to=cb.lab.clone() testid="pushback-lab">"Try it in the lab"</PathLink>
            " · "
            <PathLink to=cb.train.clone() testid="pushback-train">"Where the app trains this"</PathLink>
        </p>
    }
}

pub fn grade_word(g: &str) -> &'static str {
    match g {
        "strong" => "Strong",
        "acceptable" => "Acceptable",
        _ => "Weak",
    }
}
