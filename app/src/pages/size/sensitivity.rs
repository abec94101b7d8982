//! Sensitivity: which inputs move a step most, as sorted bars in a hand-drawn SVG (its colours
//! are CSS custom properties, so it follows the light and dark themes) with a table of the
//! same numbers as its text alternative.

use super::state::Calc;
use crate::text::format::fixed;
use leptos::prelude::*;
use trainer_course::sizing::{sensitivity, Question};

/// Bars drawn at most (the table lists every input).
const MAX_BARS: usize = 10;
/// Elasticities smaller than this are not drawn.
const NEGLIGIBLE: f64 = 0.005;

/// The step whose sensitivity is shown first. For the fleet and the batch question, the
/// unrounded replica count: the whole count moves in jumps, which hides how much each input
/// matters.
fn default_target(q: Question) -> &'static str {
    match q {
        Question::Fleet | Question::Batch => "replicas_exact",
        // The crossover moves in whole sequences; the speedup shows each input's pull smoothly.
        Question::Speculation => "speedup",
        // The whole counts move in jumps; the decode pool's unrounded size moves smoothly.
        Question::Split => "decode_replicas_exact",
        other => other.answer_step(),
    }
}

#[component]
pub fn Sensitivity(c: Calc) -> impl IntoView {
    let q = c.q;
    // The step the URL names (`sens=`), if the derivation has it as a plain step; else the
    // question's default.
    let target = Memo::new(move |_| {
        let picked = c.sens.get().filter(|t| {
            c.good.with(|g| {
                g.as_ref()
                    .is_some_and(|(_, d)| d.step(t).is_some_and(|s| s.check.is_none()))
            })
        });
        picked.unwrap_or_else(|| default_target(q).to_string())
    });
    // A memo: the bars recompute only when the inputs that derive (or the target) change.
    let rows = Memo::new(move |_| {
        let t = target.get();
        c.good.with(|g| {
            let Some((inputs, _)) = g else {
                return Vec::new();
            };
            let labels = inputs.specs(q);
            sensitivity(q, inputs, &t)
                .unwrap_or_default()
                .into_iter()
                .map(|(name, e)| {
                    let label = labels
                        .iter()
                        .find(|s| s.name == name)
                        .map_or(name.clone(), |s| s.label.to_string());
                    (name, label, e)
                })
                .collect::<Vec<_>>()
        })
    });
    let options = move || {
        c.good.with(|g| {
            g.as_ref().map(|(_, d)| {
                d.steps
                    .iter()
                    .filter(|s| s.check.is_none())
                    .map(|s| {
                        let id = s.id;
                        view! { <option value=id selected=move || target.get() == id>{s.label}</option> }
                    })
                    .collect_view()
            })
        })
    };
    let target_label = move || {
        let t = target.get();
        c.good.with(|g| {
            g.as_ref()
                .and_then(|(_, d)| d.step(&t).map(|s| s.label.to_string()))
                .unwrap_or_default()
        })
    };
    let plot = move || {
        let rows = rows.get();
        let drawn: Vec<_> = rows
            .iter()
            .filter(|(_, _, e)| e.abs() >= NEGLIGIBLE)
            .take(MAX_BARS)
            .cloned()
            .collect();
        if drawn.is_empty() {
            return view! { <p class="muted" data-testid="sens-empty">"No input moves this step by a visible amount."</p> }.into_any();
        }
        let max = drawn
            .iter()
            .map(|r| r.2.abs())
            .fold(0.0, f64::max)
            .max(1e-9);
        // Two tiers per row: the label and value on one line, the bar beneath, diverging from
        // the middle (right: the step rises with the input; left: it falls).
        let (w, row_h, mid, half) = (400.0, 38.0, 200.0, 190.0);
        let h = drawn.len() as f64 * row_h + 8.0;
        let bars = drawn
            .iter()
            .enumerate()
            .map(|(i, (name, label, e))| {
                let y = i as f64 * row_h + 4.0;
                let len = e.abs() / max * half;
                let x = if *e >= 0.0 { mid } else { mid - len };
                let class = if *e >= 0.0 { "bar up" } else { "bar down" };
                view! {
                    <g data-testid=format!("sens-bar-{name}")>
                        <text x="4" y=y + 14.0 class="bar-label">{label.clone()}</text>
                        <text x=w - 4.0 y=y + 14.0 class="bar-value" text-anchor="end">{signed(*e)}</text>
                        <rect x=x y=y + 20.0 width=len.max(1.5) height="11" rx="3" class=class></rect>
                    </g>
                }
            })
            .collect_view();
        let summary = drawn
            .iter()
            .take(3)
            .map(|(_, l, e)| format!("{l} {}", signed(*e)))
            .collect::<Vec<_>>()
            .join(", ");
        view! {
            <svg class="sens-plot" viewBox=format!("0 0 {w} {h}") role="img"
                aria-label=format!("Sensitivity bars; largest: {summary}. The table below lists every input.")
                data-testid="sens-plot">
                <line x1=mid x2=mid y1="0" y2=h class="axis"></line>
                {bars}
            </svg>
        }
        .into_any()
    };
    let table = move || {
        rows.get()
            .into_iter()
            .map(|(name, label, e)| {
                let meaning = if e.abs() < NEGLIGIBLE {
                    "no visible effect".to_string()
                } else {
                    format!(
                        "{}{} %",
                        if e >= 0.0 { "+" } else { "−" },
                        fixed((e * 10.0).abs(), 1)
                    )
                };
                view! {
                    <tr data-testid=format!("sens-row-{name}") data-value=format!("{e}")>
                        <th scope="row">{label}</th>
                        <td class="num">{signed(e)}</td>
                        <td class="num">{meaning}</td>
                    </tr>
                }
            })
            .collect_view()
    };
    view! {
        <section class="sensitivity" aria-labelledby="sens-h" data-testid="sensitivity">
            <h2 id="sens-h">"What moves the answer"</h2>
            <p class="muted">
                "Each bar is an elasticity: the percentage change of the step for a 1 % change of the input, measured by raising each input 10 %. "
                "1 means proportional, −1 inversely proportional. A step that rounds (whole replicas, whole chats) moves in jumps."
            </p>
            <label class="sens-target">
                "Step: "
                <select data-testid="sens-target" on:change=move |ev| {
                    let t = event_target_value(&ev);
                    c.set_sens((t != default_target(q)).then_some(t));
                }>{options}</select>
            </label>
            <div class="sens-grid">
                <figure class="sens-figure">
                    {plot}
                    <figcaption class="muted small">{move || format!("Elasticity of “{}” to each input (largest {MAX_BARS}).", target_label())}</figcaption>
                </figure>
                <details class="sens-table" open>
                    <summary>"The numbers, as a table"</summary>
                    <div class="table-scroll">
                        <table data-testid="sens-table">
                            <thead><tr><th scope="col">"Input"</th><th scope="col">"Elasticity"</th><th scope="col">"Step, for +10 % on the input"</th></tr></thead>
                            <tbody>{table}</tbody>
                        </table>
                    </div>
                </details>
            </div>
        </section>
    }
}

fn signed(e: f64) -> String {
    let s = fixed(e.abs(), 2);
    if e < 0.0 {
        format!("−{s}")
    } else {
        format!("+{s}")
    }
}
