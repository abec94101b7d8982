//! The worker: reads [`ToWorker`] messages (JSON strings) from the page, runs one job at a
//! time a slice at a time ([`Running`]), and posts [`FromWorker`] messages back. Between two
//! slices it yields to the worker's event loop, so a pause or a cancel is read within a
//! slice. Jobs wait in the order they came.
//!
//! The page loads this module in a Web Worker after its first paint (`app/src/sim_client.rs`);
//! Trunk builds it from `index.html` (`data-type="worker"`).

use std::cell::RefCell;
use std::collections::VecDeque;
use trainer_course::jobs::{Control, FromWorker, Job, Next, Running, ToWorker};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

/// Wall time one slice may take, milliseconds: short enough that a cancel or a pause is
/// read at once, long enough that the yields between slices cost little.
const SLICE_MS: f64 = 25.0;
/// How long to wait, milliseconds, when a job has nothing to do (paused, or a paced run
/// ahead of its clock).
const IDLE_MS: i32 = 16;

#[derive(Default)]
struct State {
    queue: VecDeque<(u64, Job)>,
    running: Option<(u64, Running)>,
    /// A slice is already due, so a new message does not schedule a second.
    scheduled: bool,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn now_ms() -> f64 {
    scope().performance().map(|p| p.now()).unwrap_or(0.0)
}

fn post(m: &FromWorker) {
    if let Ok(text) = serde_json::to_string(m) {
        let _ = scope().post_message(&JsValue::from_str(&text));
    }
}

fn schedule(after_ms: i32) {
    let due = STATE.with(|s| {
        let mut s = s.borrow_mut();
        !std::mem::replace(&mut s.scheduled, true)
    });
    if !due {
        return;
    }
    let f = Closure::once_into_js(pump);
    let _ =
        scope().set_timeout_with_callback_and_timeout_and_arguments_0(f.unchecked_ref(), after_ms);
}

/// One slice of the job in hand (starting the next in the queue if none is).
fn pump() {
    STATE.with(|s| s.borrow_mut().scheduled = false);
    let mut job = STATE.with(|s| s.borrow_mut().running.take());
    if job.is_none() {
        let next = STATE.with(|s| s.borrow_mut().queue.pop_front());
        let Some((id, j)) = next else { return };
        match Running::start(j, now_ms()) {
            Ok(r) => job = Some((id, r)),
            Err(e) => {
                post(&FromWorker::Reply {
                    id,
                    reply: trainer_course::jobs::Reply::Failed(e),
                });
                schedule(0);
                return;
            }
        }
    }
    let Some((id, mut running)) = job else { return };
    let (replies, next) = running.slice(&mut now_ms, SLICE_MS);
    for reply in replies {
        post(&FromWorker::Reply { id, reply });
    }
    match next {
        Next::Finished => schedule(0),
        Next::Now | Next::Later => {
            STATE.with(|s| s.borrow_mut().running = Some((id, running)));
            schedule(if next == Next::Now { 0 } else { IDLE_MS });
        }
    }
}

fn receive(m: ToWorker) {
    match m {
        ToWorker::Start { id, job } => {
            STATE.with(|s| s.borrow_mut().queue.push_back((id, job)));
            schedule(0);
        }
        ToWorker::Control { id, control } => STATE.with(|s| {
            let mut s = s.borrow_mut();
            if control == Control::Cancel {
                s.queue.retain(|(i, _)| *i != id);
                if s.running.as_ref().is_some_and(|(i, _)| *i == id) {
                    s.running = None;
                }
            } else if let Some((_, r)) = s.running.as_mut().filter(|(i, _)| *i == id) {
                r.control(control);
            }
        }),
    }
    // A resumed or re-paced job wants a slice now.
    schedule(0);
}

fn main() {
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(|e: MessageEvent| {
        let text = e.data().as_string().unwrap_or_default();
        match serde_json::from_str::<ToWorker>(&text) {
            Ok(m) => receive(m),
            Err(err) => post(&FromWorker::Unreadable(err.to_string())),
        }
    });
    scope().set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    // The worker lives as long as the page keeps it, and so does its listener.
    onmessage.forget();
    post(&FromWorker::Ready);
}
