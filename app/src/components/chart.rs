//! A chart: lines or bars drawn with plotters on a canvas, with a caption and a text
//! alternative (a table the page passes as children) under it.
//!
//! The canvas's backing store is its CSS size times `devicePixelRatio`, so lines and text
//! are sharp on high-DPI screens; every length drawn (fonts, strokes, margins) is scaled by
//! the same ratio. Colours come from the page's CSS custom properties (`--text`, `--muted`,
//! `--border`, `--surface`, `--chart-1` to `--chart-4`), read at each draw, so the chart
//! follows the light and dark themes. Text is drawn by the canvas backend with the browser's
//! fonts: plotters is built without its TrueType support.
//!
//! A page can hold its charts while their data changes quickly (the lab, while a run's live
//! results come in): a chart off screen then does not redraw at each change, only when it
//! comes on screen or when the hold ends, so a page of charts costs the main thread the draws
//! the learner can see.

use crate::plot_canvas::PlotCanvas;
use leptos::prelude::*;
use plotters::prelude::*;
use wasm_bindgen::JsCast;

/// One line of a line chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The legend's text.
    pub name: String,
    /// Which of the theme's four chart colours (`--chart-1` to `--chart-4`), from 0.
    pub colour: usize,
    /// Dashed: the pinned run A, drawn under run B, or a reference line.
    pub dashed: bool,
    /// Points only, each a dot, not joined (a scatter of separate measurements).
    pub markers: bool,
    /// (x, y) in the axes' units, x increasing.
    pub points: Vec<(f64, f64)>,
}

/// How an axis's ticks read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Seconds, shown in µs, ms or s.
    Duration,
    /// A fraction shown as a percentage.
    Fraction,
    /// A value already in percent.
    Percent,
    /// A whole count.
    Count,
    /// Three significant figures.
    Number,
}

impl Format {
    pub fn show(self, v: f64) -> String {
        use crate::text::format::{duration, int, percent, sig};
        match self {
            Format::Duration => duration(v, 2),
            Format::Fraction => percent(v),
            Format::Percent => format!("{} %", sig(v, 3)),
            Format::Count => int(v),
            Format::Number => sig(v, 3),
        }
    }
}

/// What a chart shows.
#[derive(Clone, Debug, PartialEq)]
pub enum ChartData {
    /// Lines over a shared x axis.
    Lines {
        lines: Vec<Line>,
        x_label: String,
        y_label: String,
        /// The x axis is logarithmic (latency distributions).
        x_log: bool,
        /// The y axis is logarithmic too (a roofline, log against log); it then spans the
        /// values drawn rather than starting at zero.
        y_log: bool,
        /// The legend in the upper left corner instead of the lower right (a roofline's lines
        /// climb through the lower right; its upper left is empty).
        legend_top_left: bool,
        /// How an x tick reads (for a log axis, of the value itself).
        x_format: Format,
        y_format: Format,
    },
    /// One bar per item, and the pinned run's values as outlines beside them.
    Bars {
        bars: Vec<(String, f64)>,
        pinned: Vec<f64>,
        y_label: String,
    },
}

impl ChartData {
    /// Points or bars drawn: zero means the chart is empty.
    pub fn size(&self) -> usize {
        match self {
            ChartData::Lines { lines, .. } => lines.iter().map(|l| l.points.len()).sum(),
            ChartData::Bars { bars, .. } => bars.len(),
        }
    }
}

/// A `<figure>` with a canvas drawn from `data`, a caption, and the table (`children`) that
/// says in text what the chart shows. The canvas carries `data-drawn` (how many points or
/// bars its last draw had) for tests, and `role="img"` with `label` for assistive
/// technology, which is pointed at the table.
#[component]
pub fn Chart(
    /// The figure's `data-testid`; the canvas gets `<testid>-canvas`.
    #[prop(into)]
    testid: String,
    /// What the chart shows, in a few words (its heading and the canvas's label).
    #[prop(into)]
    title: String,
    /// A sentence or two on how to read it.
    #[prop(into)]
    caption: String,
    /// The data; the chart redraws whenever it changes (but see `hold_offscreen`).
    #[prop(into)]
    data: Signal<ChartData>,
    /// While true, a change of `data` is drawn only if the chart is on screen; one off screen
    /// is drawn when it comes on screen or when this turns false. Default: never held.
    #[prop(into, optional)]
    hold_offscreen: Signal<bool>,
    /// Told where each draw put the axes (a page that finds the dot under a click, with
    /// [`Frame::nearest`]).
    #[prop(into, optional)]
    on_frame: Option<Callback<Frame>>,
    /// The text alternative: a table of the figures the chart draws.
    children: Children,
) -> impl IntoView {
    let canvas_ref = NodeRef::<leptos::html::Canvas>::new();
    let drawn = RwSignal::new(0usize);
    // Each chart draws in a task of its own, after the change that asked for it, so a page
    // of charts updating at once never holds the main thread for the sum of their draws.
    let pending = StoredValue::new(false);
    // Whether the canvas is on screen (an IntersectionObserver says), and whether a change
    // was held back while it was not.
    let on_screen = RwSignal::new(true);
    let stale = StoredValue::new(false);
    let redraw = move || {
        if hold_offscreen.try_get_untracked() == Some(true)
            && on_screen.try_get_untracked() == Some(false)
        {
            stale.set_value(true);
            return;
        }
        stale.set_value(false);
        if pending.try_get_value() != Some(false) {
            return;
        }
        pending.set_value(true);
        set_timeout(
            move || {
                if pending.try_set_value(false).is_some() {
                    return; // The chart has gone.
                }
                let Some(c) = canvas_ref.try_get_untracked().flatten() else {
                    return;
                };
                let c: web_sys::HtmlCanvasElement = c.unchecked_into();
                if let Some((n, f)) = data.try_with_untracked(|d| draw(&c, d)) {
                    let _ = drawn.try_set(n);
                    if let (Some(on_frame), Some(f)) = (on_frame, f) {
                        on_frame.run(f);
                    }
                }
            },
            std::time::Duration::ZERO,
        );
    };
    // Drawing on a canvas is a sync with the world outside Leptos.
    Effect::new(move |_| {
        data.track();
        canvas_ref.track();
        redraw();
    });
    // A held-back change is drawn once the chart is seen or the hold ends.
    Effect::new(move |_| {
        let seen = on_screen.get() || !hold_offscreen.get();
        if seen && stale.get_value() {
            redraw();
        }
    });
    let observer = watch_on_screen(canvas_ref, on_screen);
    let handle = window_event_listener(leptos::ev::resize, move |_| redraw());
    on_cleanup(move || {
        handle.remove();
        if let Some(Some((o, _))) = observer.try_update_value(Option::take) {
            o.disconnect();
        }
    });
    let table_id = format!("{testid}-table");
    view! {
        <figure class="chart" data-testid=testid.clone()>
            <h3 class="chart-title">{title.clone()}</h3>
            <canvas
                node_ref=canvas_ref
                class="chart-canvas"
                class:pickable=on_frame.is_some()
                role="img"
                aria-label=format!("{title} (the table below gives its figures)")
                aria-describedby=table_id.clone()
                data-testid=format!("{testid}-canvas")
                data-drawn=move || drawn.get().to_string()
            ></canvas>
            <figcaption class="muted small">{caption}</figcaption>
            <div class="chart-table table-scroll" id=table_id>{children()}</div>
        </figure>
    }
}

type Observer = (
    web_sys::IntersectionObserver,
    wasm_bindgen::closure::Closure<dyn FnMut(js_sys::Array)>,
);

/// Keeps `on_screen` true while the canvas is in the viewport (an IntersectionObserver, set up
/// once the canvas exists); the observer and its callback live until the chart's cleanup.
fn watch_on_screen(
    canvas_ref: NodeRef<leptos::html::Canvas>,
    on_screen: RwSignal<bool>,
) -> StoredValue<Option<Observer>, LocalStorage> {
    let store = StoredValue::new_local(None::<Observer>);
    Effect::new(move |_| {
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        if store.with_value(Option::is_some) {
            return;
        }
        let callback = wasm_bindgen::closure::Closure::<dyn FnMut(js_sys::Array)>::new(
            move |entries: js_sys::Array| {
                let last = entries.get(entries.length().saturating_sub(1));
                if let Ok(e) = last.dyn_into::<web_sys::IntersectionObserverEntry>() {
                    let _ = on_screen.try_set(e.is_intersecting());
                }
            },
        );
        if let Ok(o) = web_sys::IntersectionObserver::new(callback.as_ref().unchecked_ref()) {
            o.observe(&canvas);
            store.set_value(Some((o, callback)));
        }
    });
    store
}

/// The legend in a corner of the plot (`area`: its left, top, right and bottom; the lower right
/// unless `top_left`): a swatch and the name of each line, on a box. Drawn here rather than by plotters, whose legend measures each
/// name by laying out the page; these are measured on the canvas ([`PlotCanvas`]).
fn legend(
    root: &DrawingArea<PlotCanvas, plotters::coord::Shift>,
    lines: &[Line],
    t: &Theme,
    dpr: f64,
    area: (i32, i32, i32, i32),
    top_left: bool,
) -> Result<(), DrawingAreaErrorKind<<PlotCanvas as DrawingBackend>::ErrorType>> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    if lines.is_empty() {
        return Ok(());
    }
    let px = |v: f64| (v * dpr).round() as i32;
    let style = ("sans-serif", 11.0 * dpr)
        .into_font()
        .color(&t.text)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let sizes = lines
        .iter()
        .map(|l| root.estimate_text_size(&l.name, &style))
        .collect::<Result<Vec<_>, _>>()?;
    let (pad, swatch) = (px(6.0), px(18.0));
    let row = sizes.iter().map(|s| s.1 as i32).max().unwrap_or(0) + px(3.0);
    let width = sizes.iter().map(|s| s.0 as i32).max().unwrap_or(0) + swatch + 3 * pad;
    let height = row * lines.len() as i32 + 2 * pad;
    let (x0, y0, x1, y1) = if top_left {
        let (x0, y0) = (area.0 + pad, area.1 + pad);
        (x0, y0, x0 + width, y0 + height)
    } else {
        let (x1, y1) = (area.2 - pad, area.3 - pad);
        (x1 - width, y1 - height, x1, y1)
    };
    root.draw(&Rectangle::new(
        [(x0, y0), (x1, y1)],
        t.surface.mix(0.85).filled(),
    ))?;
    root.draw(&Rectangle::new(
        [(x0, y0), (x1, y1)],
        t.border.stroke_width(1),
    ))?;
    for (i, l) in lines.iter().enumerate() {
        let c = t.series[l.colour % 4];
        let y = y0 + pad + row * i as i32 + row / 2;
        let (sx, ex) = (x0 + pad, x0 + pad + swatch);
        if l.markers {
            root.draw(&Circle::new(
                ((sx + ex) / 2, y),
                px(3.5).max(2) as u32,
                c.filled(),
            ))?;
        } else if l.dashed {
            let dash = swatch / 3;
            root.draw(&PathElement::new(
                vec![(sx, y), (sx + dash, y)],
                c.stroke_width(2),
            ))?;
            root.draw(&PathElement::new(
                vec![(ex - dash, y), (ex, y)],
                c.stroke_width(2),
            ))?;
        } else {
            root.draw(&PathElement::new(vec![(sx, y), (ex, y)], c.stroke_width(2)))?;
        }
        root.draw(&Text::new(l.name.clone(), (ex + pad, y), style.clone()))?;
    }
    Ok(())
}

/// The theme's colours, read from the CSS custom properties on `el`.
struct Theme {
    text: RGBColor,
    muted: RGBColor,
    border: RGBColor,
    surface: RGBColor,
    series: [RGBColor; 4],
}

fn theme(el: &web_sys::Element) -> Theme {
    let style = web_sys::window().and_then(|w| w.get_computed_style(el).ok().flatten());
    let var = |name: &str, fallback: RGBColor| {
        style
            .as_ref()
            .and_then(|s| s.get_property_value(name).ok())
            .and_then(|v| parse_hex(v.trim()))
            .unwrap_or(fallback)
    };
    Theme {
        text: var("--text", RGBColor(27, 31, 36)),
        muted: var("--muted", RGBColor(87, 96, 106)),
        border: var("--border", RGBColor(216, 222, 228)),
        surface: var("--surface", RGBColor(255, 255, 255)),
        series: [
            var("--chart-1", RGBColor(31, 111, 235)),
            var("--chart-2", RGBColor(207, 34, 46)),
            var("--chart-3", RGBColor(26, 127, 55)),
            var("--chart-4", RGBColor(154, 103, 0)),
        ],
    }
}

/// `#rrggbb` (or `#rgb`) as a colour.
fn parse_hex(s: &str) -> Option<RGBColor> {
    let h = s.strip_prefix('#')?;
    let byte = |i: usize| u8::from_str_radix(h.get(i..i + 2)?, 16).ok();
    match h.len() {
        6 => Some(RGBColor(byte(0)?, byte(2)?, byte(4)?)),
        3 => {
            let d = |i: usize| {
                u8::from_str_radix(h.get(i..i + 1)?, 16)
                    .ok()
                    .map(|v| v * 17)
            };
            Some(RGBColor(d(0)?, d(1)?, d(2)?))
        }
        _ => None,
    }
}

/// Sizes the backing store for the screen and draws; returns what was drawn (0 on failure
/// or for empty data, which leaves a note on the canvas instead).
/// Where a line chart's axes sit on its canvas (backing-store pixels), to find the dot under
/// a click.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// The axes' ranges, in drawn units (a log axis's in log10).
    x: (f64, f64),
    y: (f64, f64),
    /// The plotting area's pixel ranges.
    px_x: (i32, i32),
    px_y: (i32, i32),
    dpr: f64,
    x_log: bool,
    y_log: bool,
    /// The smallest positive x, where a log axis puts zero.
    floor: f64,
    /// The smallest positive y, likewise.
    y_floor: f64,
}

impl Frame {
    fn pixel(&self, (x, y): (f64, f64)) -> (f64, f64) {
        let fx = if self.x_log {
            x.max(self.floor).log10()
        } else {
            x
        };
        let (x0, x1) = self.x;
        let (y0, y1) = self.y;
        let y = if self.y_log {
            y.max(self.y_floor).log10()
        } else {
            y
        };
        let px =
            f64::from(self.px_x.0) + (fx - x0) / (x1 - x0) * f64::from(self.px_x.1 - self.px_x.0);
        let py =
            f64::from(self.px_y.0) + (y1 - y) / (y1 - y0) * f64::from(self.px_y.1 - self.px_y.0);
        (px, py)
    }

    /// Where every dot (a point of a line drawn with markers) is, in CSS pixels from the
    /// canvas's corner, line by line.
    pub fn dots(&self, data: &ChartData) -> Vec<Vec<(f64, f64)>> {
        let ChartData::Lines { lines, .. } = data else {
            return Vec::new();
        };
        lines
            .iter()
            .map(|l| {
                if !l.markers {
                    return Vec::new();
                }
                l.points
                    .iter()
                    .map(|&p| {
                        let (x, y) = self.pixel(p);
                        (x / self.dpr, y / self.dpr)
                    })
                    .collect()
            })
            .collect()
    }

    /// The (line, point) of the dot (a line drawn with markers) nearest to `at`, CSS pixels
    /// from the canvas's corner, if one is within `reach` CSS pixels.
    pub fn nearest(&self, data: &ChartData, at: (f64, f64), reach: f64) -> Option<(usize, usize)> {
        let (at, reach) = ((at.0 * self.dpr, at.1 * self.dpr), reach * self.dpr);
        let ChartData::Lines { lines, .. } = data else {
            return None;
        };
        let mut best: Option<((usize, usize), f64)> = None;
        for (li, l) in lines.iter().enumerate().filter(|(_, l)| l.markers) {
            for (pi, &p) in l.points.iter().enumerate() {
                let (px, py) = self.pixel(p);
                let d = (px - at.0).hypot(py - at.1);
                if d <= reach && best.is_none_or(|(_, b)| d < b) {
                    best = Some(((li, pi), d));
                }
            }
        }
        best.map(|(hit, _)| hit)
    }
}

fn draw(canvas: &web_sys::HtmlCanvasElement, data: &ChartData) -> (usize, Option<Frame>) {
    let dpr = web_sys::window()
        .map_or(1.0, |w| w.device_pixel_ratio())
        .max(1.0);
    let css_w = f64::from(canvas.client_width().max(200));
    let css_h = f64::from(canvas.client_height().max(120));
    let (w, h) = ((css_w * dpr).round() as u32, (css_h * dpr).round() as u32);
    if canvas.width() != w {
        canvas.set_width(w);
    }
    if canvas.height() != h {
        canvas.set_height(h);
    }
    let t = theme(canvas);
    let Some(backend) = PlotCanvas::new(canvas) else {
        return (0, None);
    };
    let root = backend.into_drawing_area();
    if root.fill(&t.surface).is_err() {
        return (0, None);
    }
    let px = |v: f64| (v * dpr).round() as u32;
    let font = |size: f64, c: RGBColor| ("sans-serif", size * dpr).into_font().color(&c);
    let n = data.size();
    if n == 0 {
        let _ = root.draw(&Text::new(
            "Nothing to draw yet: run the simulation.",
            (px(12.0) as i32, px(24.0) as i32),
            font(13.0, t.muted),
        ));
        let _ = root.present();
        return (0, None);
    }
    let mut frame = None;
    let ok = match data {
        ChartData::Lines {
            lines,
            x_label,
            y_label,
            x_log,
            y_log,
            legend_top_left,
            x_format,
            y_format,
        } => {
            // On a log axis a zero (a token released in the same burst as the one before)
            // sits at the left edge, the smallest positive value drawn.
            let floor = lines
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.0))
                .filter(|&x| x > 0.0)
                .fold(f64::INFINITY, f64::min);
            let floor = if floor.is_finite() { floor } else { 1e-6 };
            let fx = |x: f64| if *x_log { x.max(floor).log10() } else { x };
            let y_floor = lines
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.1))
                .filter(|&y| y > 0.0)
                .fold(f64::INFINITY, f64::min);
            let y_floor = if y_floor.is_finite() { y_floor } else { 1e-6 };
            let fy = |y: f64| if *y_log { y.max(y_floor).log10() } else { y };
            let pts = lines.iter().flat_map(|l| l.points.iter());
            // A linear y axis starts at zero, or below it when a value is negative
            // (residuals); a log one spans what is drawn.
            let (mut x0, mut x1) = (f64::INFINITY, f64::NEG_INFINITY);
            let (mut y0, mut y1) = if *y_log {
                (f64::INFINITY, f64::NEG_INFINITY)
            } else {
                (0.0f64, 0.0f64)
            };
            for &(x, y) in pts {
                x0 = x0.min(fx(x));
                x1 = x1.max(fx(x));
                y0 = y0.min(fy(y));
                y1 = y1.max(fy(y));
            }
            if x1.partial_cmp(&x0) != Some(std::cmp::Ordering::Greater) {
                x1 = x0 + 1.0;
            }
            let (y0, y1) = if *y_log {
                // A tenth of a decade of room above and below.
                if y1.partial_cmp(&y0) == Some(std::cmp::Ordering::Greater) {
                    (y0 - 0.1, y1 + 0.1)
                } else {
                    (y0 - 0.5, y0 + 0.5)
                }
            } else {
                (y0 * 1.05, if y1 > 0.0 { y1 * 1.05 } else { 1.0 })
            };
            let log = *x_log;
            let ylog = *y_log;
            let xf = *x_format;
            let yf = *y_format;
            let x_text = move |v: &f64| xf.show(if log { 10f64.powf(*v) } else { *v });
            let y_text = move |v: &f64| yf.show(if ylog { 10f64.powf(*v) } else { *v });
            let mut chart = match ChartBuilder::on(&root)
                .margin(px(10.0))
                .x_label_area_size(px(34.0))
                .y_label_area_size(px(58.0))
                .build_cartesian_2d(x0..x1, y0..y1)
            {
                Ok(c) => c,
                Err(_) => return (0, None),
            };
            let mesh = chart
                .configure_mesh()
                .x_labels(5)
                .y_labels(5)
                .x_label_formatter(&x_text)
                .y_label_formatter(&y_text)
                .x_desc(x_label.as_str())
                .y_desc(y_label.as_str())
                .label_style(font(11.0, t.muted))
                .axis_desc_style(font(11.0, t.muted))
                .axis_style(t.border.stroke_width(px(1.0)))
                .bold_line_style(t.border.mix(0.6).stroke_width(px(1.0).max(1)))
                .light_line_style(t.border.mix(0.2))
                .draw();
            let mut ok = mesh.is_ok();
            for l in lines {
                let c = t.series[l.colour % 4];
                let pts: Vec<(f64, f64)> = l.points.iter().map(|&(x, y)| (fx(x), fy(y))).collect();
                let style = c.stroke_width(px(if l.dashed { 1.5 } else { 2.0 }).max(1));
                let drawn = if l.markers {
                    let r = px(3.5).max(2);
                    chart
                        .draw_series(pts.into_iter().map(|p| Circle::new(p, r, c.filled())))
                        .map(|_| ())
                } else if l.dashed {
                    chart
                        .draw_series(DashedLineSeries::new(pts, px(6.0), px(4.0), style))
                        .map(|_| ())
                } else {
                    chart.draw_series(LineSeries::new(pts, style)).map(|_| ())
                };
                ok &= drawn.is_ok();
            }
            let (xs, ys) = chart.plotting_area().get_pixel_range();
            frame = Some(Frame {
                x: (x0, x1),
                y: (y0, y1),
                px_x: (xs.start, xs.end),
                px_y: (ys.start, ys.end),
                dpr,
                x_log: log,
                y_log: ylog,
                floor,
                y_floor,
            });
            let area = (xs.start, ys.start, xs.end, ys.end);
            ok &= legend(&root, lines, &t, dpr, area, *legend_top_left).is_ok();
            ok
        }
        ChartData::Bars {
            bars,
            pinned,
            y_label,
        } => {
            let top = bars
                .iter()
                .map(|b| b.1)
                .chain(pinned.iter().copied())
                .fold(0.0f64, f64::max);
            let top = if top > 0.0 { top * 1.1 } else { 1.0 };
            let names: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
            let label = move |v: &f64| {
                let i = v.floor();
                if (v - i - 0.5).abs() < 0.01 && i >= 0.0 {
                    names.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            };
            let mut chart = match ChartBuilder::on(&root)
                .margin(px(10.0))
                .x_label_area_size(px(30.0))
                .y_label_area_size(px(48.0))
                .build_cartesian_2d(0.0..bars.len() as f64, 0.0..top)
            {
                Ok(c) => c,
                Err(_) => return (0, None),
            };
            let mut ok = chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(bars.len().min(16) * 2 + 1)
                .x_label_formatter(&label)
                .y_labels(5)
                .y_desc(y_label.as_str())
                .label_style(font(11.0, t.muted))
                .axis_desc_style(font(11.0, t.muted))
                .axis_style(t.border.stroke_width(px(1.0)))
                .bold_line_style(t.border.mix(0.6))
                .light_line_style(t.border.mix(0.2))
                .draw()
                .is_ok();
            let c = t.series[0];
            ok &= chart
                .draw_series(bars.iter().enumerate().map(|(i, b)| {
                    let x = i as f64;
                    Rectangle::new([(x + 0.15, 0.0), (x + 0.85, b.1)], c.filled())
                }))
                .is_ok();
            let a = t.series[3];
            ok &= chart
                .draw_series(pinned.iter().enumerate().map(|(i, v)| {
                    let x = i as f64;
                    Rectangle::new(
                        [(x + 0.1, 0.0), (x + 0.9, *v)],
                        a.stroke_width(px(1.5).max(1)),
                    )
                }))
                .is_ok();
            ok
        }
    };
    if root.present().is_err() || !ok {
        return (0, None);
    }
    (n, frame)
}
