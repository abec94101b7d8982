//! The reversal: the same load as batch work, computed by the sizing engine's batch question
//! at the learner's inputs and set beside the streaming answer, figure by figure.

use super::render::hidden;
use super::use_lesson;
use crate::components::Link;
use crate::route::Route;
use leptos::prelude::*;
use trainer_course::sizing::{Derivation, Question};

/// Rows compared: (streaming step, batch step). Each row is named by the batch step's label.
const ROWS: [(&str, &str); 8] = [
    ("decode_step", "decode_step"),
    ("decode_throughput", "decode_throughput"),
    ("replicas", "replicas"),
    ("gpus", "gpus"),
    ("cost_per_hour", "cost_per_hour"),
    ("cost_per_million", "cost_per_million"),
    ("time_per_reply", "completion_time"),
    ("open_streams", "gateway_streams"),
];

/// The side-by-side table, with links into both calculators.
#[component]
pub fn Reversal() -> impl IntoView {
    let lesson = use_lesson();
    let Some(batch) = Question::from_id("batch") else {
        return view! {
            <p class="field-error" role="alert">"The batch question is missing from this build."</p>
        }
        .into_any();
    };
    let table = move || {
        let (Some(s), Some(b)) = (lesson.derivation(Question::Fleet), lesson.derivation(batch))
        else {
            return view! {
                <p class="field-error" role="alert" data-testid="reversal-error">
                    "Your inputs in the calculator do not derive; fix them there to see the comparison."
                </p>
            }
            .into_any();
        };
        let rows = ROWS
            .iter()
            .filter_map(|(a, z)| Some((s.step(a)?.clone(), b.step(z)?.clone())))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|(x, y)| {
                view! {
                    <tr data-testid=format!("reversal-{}", y.id)>
                        <th scope="row">{y.label}</th>
                        {match lesson.hidden_by(Question::Fleet, x.id) {
                            Some(target) => view! {
                                <td>{hidden(format!("reversal-{}-streaming", y.id), &target, lesson)}</td>
                            }.into_any(),
                            None => view! {
                                <td data-testid=format!("reversal-{}-streaming", y.id) data-value=format!("{}", x.value)>
                                    <Link to=Route::Size("fleet".into()) query=lesson.step_query(Question::Fleet, x.id) fragment=format!("step-{}", x.id)>{x.display.clone()}</Link>
                                </td>
                            }.into_any(),
                        }}
                        <td data-testid=format!("reversal-{}-batch", y.id) data-value=format!("{}", y.value)>
                            <Link to=Route::Size(batch.id().into()) query=lesson.step_query(batch, y.id) fragment=format!("step-{}", y.id)>{y.display.clone()}</Link>
                        </td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <div class="table-wrap">
                <table class="reversal-table" data-testid="reversal-table">
                    <thead><tr>
                        <td></td>
                        <th scope="col">{Question::Fleet.title()}</th>
                        <th scope="col">{batch.title()}</th>
                    </tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            {if lesson.pending_for(Question::Fleet) || lesson.pending_for(Question::Batch) {
                view! { <p class="muted" data-testid="reversal-hidden">{lesson.words.get_value().sheet_hidden}</p> }.into_any()
            } else {
                view! { <p class="muted" data-testid="reversal-verdict">{verdict(&b)}</p> }.into_any()
            }}
        }
        .into_any()
    };
    view! { <section class="reversal" data-testid="reversal">{table}</section> }.into_any()
}

fn verdict(d: &Derivation) -> String {
    d.verdict.summary.clone()
}
