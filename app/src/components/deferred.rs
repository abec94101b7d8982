//! A part of the first page drawn a moment after the rest of it, so that opening the app on a
//! long page does not hold the browser's main thread in one long task.
//!
//! Building a page's DOM is synchronous work in WASM: the lesson, built in one go, was one task
//! of about a second on a phone-speed CPU (Lighthouse's mobile run, 4x slower), on top of the
//! module's start, and the page could not answer a tap until it ended. A page wraps the parts
//! below its heading and introduction in [`Deferred`]; on the first page the app draws, each
//! region is queued when its parent is built and drawn by a scheduler that draws regions for a
//! few milliseconds, gives the browser the thread back, and goes on, in the page's order (a
//! region inside a region is drawn after its parent and before the regions after its parent,
//! in that slice or a later one). While anything is queued the document's root carries
//! `data-drawing`, so a test (or a script) can wait for the whole page, and [`when_drawn`] runs
//! what needs the whole page (a deep link's scroll to an element).
//!
//! Pages drawn later (the learner follows a link) are drawn at once: the module is running by
//! then, and a page drawn again in place (the same page with another query) keeps its elements
//! and their state (an open `<details>`, a field's text) only if it is drawn the same way.
//!
//! A region whose code is a piece of the module of its own ([`lazy_region`]: a `#[lazy]`
//! function, such as the lesson's widgets or the calculator's simulator check, which bring the
//! simulators' set-up and the engine note) is drawn when its piece has arrived; until then it
//! counts as part of the page being drawn (`data-drawing` stays, [`when_drawn`] waits). On the
//! first page, a region whose piece has arrived also waits for its turn in the slices: the
//! lesson's widgets share one piece, and built in the task their piece arrived in they were one
//! task of about 50 ms unthrottled (200 ms on Lighthouse's phone).

use leptos::prelude::*;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;

/// How long one slice may draw before the browser gets the thread back, in milliseconds of
/// wall time (one region may overrun it: regions are drawn whole).
const SLICE_MS: f64 = 8.0;

type Then = Box<dyn FnOnce()>;

thread_local! {
    static QUEUE: RefCell<VecDeque<Turn>> = const { RefCell::new(VecDeque::new()) };
    static SCHEDULED: Cell<bool> = const { Cell::new(false) };
    /// The first page has been drawn whole: regions from now on are drawn at once.
    static FIRST_DRAWN: Cell<bool> = const { Cell::new(false) };
    static THEN: RefCell<Vec<Then>> = const { RefCell::new(Vec::new()) };
    /// Lazily loaded regions not drawn yet.
    static PENDING: Cell<usize> = const { Cell::new(0) };
    /// The first page is drawn whole, its lazily loaded regions too.
    static FIRST_DONE: Cell<bool> = const { Cell::new(false) };
}

/// What the slices draw, in order.
enum Turn {
    /// A region: made visible.
    Region(RwSignal<bool>),
    /// A lazily loaded region whose piece has arrived: told to build its view, which it does
    /// right after the slice (in the same task), so the slice ends with it.
    Piece(futures_channel::oneshot::Sender<()>),
}

/// Draws its children one slice after the page around it (see the module's notes). What the
/// children read while they are built does not redraw them: they are built once, untracked, as
/// if they had been drawn with the page.
#[component]
pub fn Deferred(
    /// The region's content.
    children: Children,
) -> impl IntoView {
    let ready = RwSignal::new(FIRST_DRAWN.with(Cell::get));
    let body = StoredValue::new_local(Some(children));
    if !ready.get_untracked() {
        enqueue(ready);
    }
    move || {
        ready
            .get()
            .then(|| body.try_update_value(Option::take).flatten())
            .flatten()
            .map(|c| untrack(c))
    }
}

fn enqueue(ready: RwSignal<bool>) {
    push(Turn::Region(ready));
}

fn push(turn: Turn) {
    QUEUE.with(|q| q.borrow_mut().push_back(turn));
    if !SCHEDULED.with(|s| s.replace(true)) {
        mark_drawing(true);
        wasm_bindgen_futures::spawn_local(draw_slices());
    }
}

/// Draws queued regions a slice per task until the queue is empty.
///
/// A region is built by its render effect, which Leptos runs as a microtask after the signal
/// that shows it is set, not within the set: the slice waits for that microtask before it
/// reads the clock. (Setting every region's signal in one slice and reading the clock between
/// the sets measured nothing: all the regions were then built in that slice's microtasks, one
/// task of some 60 ms on a desktop for the lab.)
async fn draw_slices() {
    loop {
        next_task().await;
        let start = now();
        loop {
            let Some(next) = QUEUE.with(|q| q.borrow_mut().pop_front()) else {
                SCHEDULED.with(|s| s.set(false));
                FIRST_DRAWN.with(|f| f.set(true));
                finish_if_drawn();
                return;
            };
            match next {
                // A region whose page has gone (the learner moved on) is skipped.
                Turn::Region(ready) => {
                    let before = QUEUE.with(|q| q.borrow().len());
                    if ready.try_get_untracked() == Some(false) {
                        ready.set(true);
                    }
                    // Resolves once the tasks queued so far (the region's render effect) ran.
                    leptos::task::tick().await;
                    // Regions inside this one go before the regions after it, so the page
                    // grows downwards (drawn after a later region, a region above it
                    // pushed it down the screen: a layout shift).
                    QUEUE.with(|q| {
                        let mut q = q.borrow_mut();
                        let inner = q.len().saturating_sub(before);
                        q.rotate_right(inner);
                    });
                }
                // A piece's region is built after the slice, in the same task: the slice ends.
                Turn::Piece(go) => {
                    if go.send(()).is_ok() {
                        break;
                    }
                }
            }
            if now() - start >= SLICE_MS {
                break;
            }
        }
    }
}

/// Resolves in a task of its own (a timer's), so the browser can paint and answer input first.
pub async fn next_task() {
    let (done, wait) = futures_channel::oneshot::channel::<()>();
    gloo_timers::callback::Timeout::new(0, move || {
        let _ = done.send(());
    })
    .forget();
    let _ = wait.await;
}

/// The page is drawn once no region is queued and no lazily loaded region waits for its piece:
/// the document's root loses `data-drawing` and what waited for the whole page runs.
fn finish_if_drawn() {
    if busy() {
        return;
    }
    // At the next frame, checked again: a region made visible in the last slice is built by
    // an effect after the slice, and it may be one that waits for its piece.
    request_animation_frame(|| {
        if busy() {
            return;
        }
        mark_drawing(false);
        FIRST_DONE.with(|f| f.set(true));
        for f in THEN.with(|t| std::mem::take(&mut *t.borrow_mut())) {
            f();
        }
    });
}

/// Regions are queued, or wait for their piece.
fn busy() -> bool {
    SCHEDULED.with(Cell::get) || PENDING.with(Cell::get) > 0
}

/// A lazily loaded region not drawn yet; dropped when its view is made, or when the page has
/// gone before the piece arrived.
struct Pending;

impl Pending {
    fn new() -> Pending {
        PENDING.with(|p| p.set(p.get() + 1));
        mark_drawing(true);
        Pending
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        PENDING.with(|p| p.set(p.get().saturating_sub(1)));
        // The view made from the piece is in the page by the frame `finish_if_drawn` waits for.
        finish_if_drawn();
    }
}

/// Draws the view `piece` makes once it is ready: `piece` is a `#[lazy]` function's future, so
/// the region's code is fetched when the region is first drawn, not with the page. The page
/// counts as being drawn until it is in (see the module's notes).
pub fn lazy_region(piece: impl std::future::Future<Output = AnyView> + Send + 'static) -> AnyView {
    let pending = Pending::new();
    Suspend::new(async move {
        let view = piece.await;
        // Its DOM is built at a turn of its own, a slice after its set-up.
        turn().await;
        drop(pending);
        view
    })
    .into_any()
}

/// [`lazy_region`] for a part whose piece other parts of the page share (the lesson's widgets):
/// `preload` fetches the piece (a `#[lazy]` function's `__preload_*`), and `build` (the call of
/// the function) makes the part's view only once the part's turn in the slices has come. A
/// `#[lazy]` function's future runs the function's body (its components' set-up: derivations,
/// memos) in the task its piece arrives in, for every part waiting on that piece at once.
pub fn lazy_turn<P, B, F>(preload: P, build: B) -> AnyView
where
    P: std::future::Future<Output = ()> + Send + 'static,
    B: FnOnce() -> F + Send + 'static,
    F: std::future::Future<Output = AnyView> + Send + 'static,
{
    lazy_region(async move {
        preload.await;
        turn().await;
        build().await
    })
}

/// Resolves at a lazily loaded region's turn in the slices while the first page is drawn, at
/// once after.
async fn turn() {
    if FIRST_DONE.with(Cell::get) {
        return;
    }
    let (go, wait) = futures_channel::oneshot::channel();
    push(Turn::Piece(go));
    // A dropped sender (the queue gone with the page) lets the region go on all the same.
    let _ = wait.await;
}

/// Sets `flag` at its turn in the first page's slices, or at once once the first page is
/// drawn: what the flag sets off (the lesson's follow-up derivations worked again when their
/// piece arrives) gets a slice of its own, and the page counts as drawing until it is done.
pub fn set_in_turn(flag: RwSignal<bool>) {
    if FIRST_DONE.with(Cell::get) {
        if flag.try_get_untracked() == Some(false) {
            flag.set(true);
        }
    } else {
        push(Turn::Region(flag));
    }
}

/// Runs `f` at the next frame, or, when regions are queued then (a page being built now queues
/// its regions as it goes) or wait for their piece, at the frame after the last is drawn.
pub fn when_drawn(f: impl FnOnce() + 'static) {
    request_animation_frame(move || {
        if busy() {
            THEN.with(|t| t.borrow_mut().push(Box::new(f)));
        } else {
            f();
        }
    });
}

fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

fn mark_drawing(on: bool) {
    let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    else {
        return;
    };
    let _ = if on {
        root.set_attribute("data-drawing", "")
    } else {
        root.remove_attribute("data-drawing")
    };
}
