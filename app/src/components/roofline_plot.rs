//! The roofline: the FLOP/s a step attains against the FLOPs it does per byte it moves, on
//! log scales, with the roof (bandwidth up to the ridge, then compute), decode as its batch
//! grows, one prompt's prefill, and decode at the learner's batch and at the largest batch.
//! Every figure is the core's (`trainer_course::sizing::roofline_plot`, the cost model the
//! roofline question's steps use); this only draws it and says it in a table.

use crate::components::{Chart, ChartData, Format, Line};
use crate::text::fill;
use crate::text::format::{int, sig};
use leptos::prelude::*;
use trainer_content::words::RooflineWords;
use trainer_course::sizing::Roofline;

/// The plot, its table and its note; `invalid` words while `data` is `None`.
#[component]
pub fn RooflinePlot(
    /// The figures to draw (`None` while the inputs do not derive).
    #[prop(into)]
    data: Signal<Option<Roofline>>,
    /// The plot's words.
    words: &'static RooflineWords,
    /// The figure's `data-testid` (the chart's canvas is `<testid>-canvas`, the note
    /// `<testid>-note`).
    testid: &'static str,
) -> impl IntoView {
    let chart = Signal::derive(move || {
        data.with(|d| match d {
            Some(r) => chart_data(r, words),
            None => empty(words),
        })
    });
    let table = move || data.get().map(|r| table(&r, words));
    let note = move || {
        data.with(|d| {
            d.as_ref().map(|r| {
                let ridge = flop_per_byte(r.ridge);
                let limit = flop_per_byte(r.decode_limit);
                let mut text = fill(&words.note, &[("ridge", ridge), ("limit", limit)]);
                text.push(' ');
                text.push_str(&match r.crossing {
                    Some(b) => fill(&words.note_crosses, &[("batch", int(b as f64))]),
                    None => words.note_never.clone(),
                });
                text
            })
        })
    };
    view! {
        <div class="roofline" data-testid=testid>
            {move || data.with(|d| d.is_none()).then(|| view! {
                <p class="muted" data-testid=format!("{testid}-invalid")>{words.invalid.clone()}</p>
            })}
            <Chart testid=format!("{testid}-chart") title=words.chart_title.clone() caption=words.caption.clone() data=chart>
                {table}
            </Chart>
            <p class="small" data-testid=format!("{testid}-note") aria-live="polite">{note}</p>
        </div>
    }
}

fn flop_per_byte(v: f64) -> String {
    format!("{} FLOP/B", sig(v, 3))
}

fn empty(words: &RooflineWords) -> ChartData {
    ChartData::Lines {
        lines: Vec::new(),
        x_label: words.x_label.clone(),
        y_label: words.y_label.clone(),
        x_log: true,
        y_log: true,
        legend_top_left: true,
        x_format: Format::Number,
        y_format: Format::Number,
    }
}

fn named(template: &str, batch: u32) -> String {
    fill(template, &[("batch", int(batch as f64))])
}

fn chart_data(r: &Roofline, words: &RooflineWords) -> ChartData {
    let tf = |f: f64| f / 1e12;
    // The roof spans the points drawn, with room on either side.
    let lo = r
        .decode
        .first()
        .map_or(1.0, |p| p.1)
        .min(r.assumed.1)
        .min(r.ridge)
        / 2.0;
    let hi = r.prefill.0.max(r.ridge).max(r.decode_limit) * 2.0;
    let roof = vec![
        (lo, tf(r.bandwidth * lo)),
        (r.ridge, tf(r.roof_flops)),
        (hi, tf(r.roof_flops)),
    ];
    let dot = |name: String, colour: usize, p: (f64, f64)| Line {
        name,
        colour,
        dashed: false,
        markers: true,
        points: vec![(p.0, tf(p.1))],
    };
    let lines = vec![
        Line {
            name: words.roof.clone(),
            colour: 0,
            dashed: false,
            markers: false,
            points: roof,
        },
        Line {
            name: words.decode.clone(),
            colour: 1,
            dashed: true,
            markers: false,
            points: r.decode.iter().map(|&(_, i, f)| (i, tf(f))).collect(),
        },
        dot(words.prefill.clone(), 2, r.prefill),
        dot(
            named(&words.assumed, r.assumed.0),
            3,
            (r.assumed.1, r.assumed.2),
        ),
        dot(
            named(&words.largest, r.largest.0),
            1,
            (r.largest.1, r.largest.2),
        ),
    ];
    ChartData::Lines {
        lines,
        x_label: words.x_label.clone(),
        y_label: words.y_label.clone(),
        x_log: true,
        y_log: true,
        legend_top_left: true,
        x_format: Format::Number,
        y_format: Format::Number,
    }
}

/// The text alternative: each point's batch, intensity, FLOP/s and bound.
fn table(r: &Roofline, words: &'static RooflineWords) -> impl IntoView {
    let bound = move |i: f64| {
        if i < r.ridge {
            words.memory_bound.clone()
        } else {
            words.compute_bound.clone()
        }
    };
    let mut rows: Vec<(String, String, f64, f64)> = vec![(
        words.prefill.clone(),
        String::new(),
        r.prefill.0,
        r.prefill.1,
    )];
    rows.push((
        named(&words.assumed, r.assumed.0),
        int(r.assumed.0 as f64),
        r.assumed.1,
        r.assumed.2,
    ));
    rows.push((
        named(&words.largest, r.largest.0),
        int(r.largest.0 as f64),
        r.largest.1,
        r.largest.2,
    ));
    for &(b, i, f) in &r.decode {
        rows.push((words.row_decode.clone(), int(b as f64), i, f));
    }
    let rows = rows
        .into_iter()
        .map(|(name, batch, i, f)| {
            view! {
                <tr data-testid="roofline-row" data-intensity=format!("{i}")>
                    <th scope="row">{name}</th>
                    <td>{batch}</td>
                    <td>{sig(i, 3)}</td>
                    <td>{sig(f / 1e12, 3)}</td>
                    <td>{bound(i)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="data-table">
            <thead>
                <tr>
                    <th scope="col">{words.head_point.clone()}</th>
                    <th scope="col">{words.head_batch.clone()}</th>
                    <th scope="col">{words.head_intensity.clone()}</th>
                    <th scope="col">{words.head_attained.clone()}</th>
                    <th scope="col">{words.head_bound.clone()}</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}
