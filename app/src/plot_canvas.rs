//! The canvas the charts are drawn on: plotters' canvas backend, except that a label is measured
//! by the canvas itself.
//!
//! plotters sizes every tick label and axis name before it draws it. Built without its TrueType
//! support, it measures a label by adding a span to the page and reading the span's size: a
//! layout of the whole page for every label. On the lab while a run comes in (a long page whose
//! tables just changed) that was most of a chart's draw, and a chart's draw was most of a live
//! update's long task. Here a label is measured with the canvas's `measureText`, which lays
//! nothing out: its advance width, and the font's ascent and descent for its height (the span's
//! height was the font's line box, which these make up).

use plotters::prelude::DrawingBackend;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

type Error = <CanvasBackend as DrawingBackend>::ErrorType;

/// [`CanvasBackend`] with labels measured on the canvas.
pub struct PlotCanvas {
    inner: CanvasBackend,
    context: CanvasRenderingContext2d,
}

impl PlotCanvas {
    /// The backend for `canvas`; `None` when it has no 2D context.
    pub fn new(canvas: &HtmlCanvasElement) -> Option<PlotCanvas> {
        let context = canvas
            .get_context("2d")
            .ok()
            .flatten()?
            .dyn_into::<CanvasRenderingContext2d>()
            .ok()?;
        let inner = CanvasBackend::with_canvas_object(canvas.clone())?;
        Some(PlotCanvas { inner, context })
    }
}

impl DrawingBackend for PlotCanvas {
    type ErrorType = Error;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.fill_polygon(vert, style)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_text(text, style, pos)
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Error>> {
        // The font string the backend's `draw_text` sets before it draws.
        self.context.set_font(&format!(
            "{} {}px {}",
            style.style().as_str(),
            style.size(),
            style.family().as_str(),
        ));
        let Ok(m) = self.context.measure_text(text) else {
            // No metrics (a canvas that cannot measure): plotters' own way.
            return self.inner.estimate_text_size(text, style);
        };
        let height = m.font_bounding_box_ascent() + m.font_bounding_box_descent();
        let height = if height.is_finite() && height > 0.0 {
            height
        } else {
            style.size() * 1.2
        };
        Ok((m.width().ceil().max(0.0) as u32, height.ceil() as u32))
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.blit_bitmap(pos, size, src)
    }
}
