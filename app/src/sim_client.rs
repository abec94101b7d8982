//! The page's side of the simulators' workers: the page never runs a simulation itself. It
//! posts a [`Job`] to one of up to `navigator.hardwareConcurrency` Web Workers (each loads the
//! `trainer-worker` module, built from `worker/`) and hears back through a handler: progress,
//! a lab run's live results, the outcome or why it failed ([`Reply`]). Messages both ways are
//! the JSON of `trainer_course::jobs`' types.
//!
//! The first worker starts after the page's first paint ([`prewarm`]); more start when jobs
//! run side by side (a moment's options). A worker that dies (its module failed to load, or
//! it crashed) fails its jobs with a message and is replaced by the next job.

use crate::browser::now_ms;
use std::cell::RefCell;
use std::collections::HashMap;
use trainer_course::jobs::{Control, FromWorker, Job, Reply, ToWorker};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{ErrorEvent, MessageEvent, Worker};

/// The worker's loader, next to the app's own files (Trunk writes it from `index.html`).
const WORKER_URL: &str = "trainer-worker_loader.js";
/// At most this many workers, whatever the machine says it has.
const MAX_WORKERS: usize = 8;

/// A job sent to a worker, to change or cancel it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobHandle(u64);

type Handler = Box<dyn FnMut(Reply)>;
/// Reads worker `usize`'s message.
type Reader = fn(usize, &str);
/// A worker's message and error listeners.
type Listeners = (
    Closure<dyn FnMut(MessageEvent)>,
    Closure<dyn FnMut(ErrorEvent)>,
);

struct Slot {
    worker: Worker,
    ready: bool,
    /// Messages posted before the worker said it was ready (a worker drops those).
    waiting: Vec<String>,
    /// Jobs sent and not yet ended.
    jobs: usize,
    /// Kept alive as long as the worker.
    _listeners: Listeners,
}

#[derive(Default)]
struct Pool {
    slots: Vec<Option<Slot>>,
    /// Each job's slot and handler; a handler is out of the map while it runs.
    handlers: HashMap<u64, (usize, Option<Handler>)>,
    next_id: u64,
    /// The longest a reply took to read (parse) on the main thread, ms.
    longest_ms: f64,
    /// Messages that arrived before the page first submitted a job (a worker's "ready", say),
    /// by worker, unread.
    unread: Vec<(usize, String)>,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
    /// Reads a worker's message: set by the first [`submit`], so the code that reads the
    /// simulators' messages (their whole result types) sits with the pages that run jobs, not
    /// in the frame every page loads before it is drawn ([`prewarm`] starts a worker from
    /// there). Until then a message waits in `Pool::unread`.
    static READ: std::cell::Cell<Option<Reader>> = const { std::cell::Cell::new(None) };
}

thread_local! {
    /// A lower limit on the workers set by the benchmark, to time a batch on one worker.
    static LIMIT: std::cell::Cell<usize> = const { std::cell::Cell::new(MAX_WORKERS) };
}

/// How many workers may run at once here.
fn max_workers() -> usize {
    let n = web_sys::window()
        .map(|w| w.navigator().hardware_concurrency())
        .unwrap_or(1.0);
    (n as usize).clamp(1, LIMIT.with(std::cell::Cell::get))
}

/// Runs new jobs on at most `n` workers (at least one): the benchmark's way to compare a
/// batch on one worker with a batch on all of them. Workers already started keep running.
#[cfg(feature = "test-exports")]
pub fn set_worker_limit(n: usize) {
    LIMIT.with(|l| l.set(n.clamp(1, MAX_WORKERS)));
}

/// Starts the first worker, so its module loads while the learner reads.
pub fn prewarm() {
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        if p.slots.iter().all(Option::is_none) {
            spawn(&mut p);
        }
    });
}

/// Reads an empty object as each part of a reply, from the innermost out, a part per task.
///
/// The browser compiles a WebAssembly function on its first call, on the page's thread. The
/// reader of a reply is a few large functions (one per type of what a run reports), and the
/// first lab result's message compiled them all in its task: some 30 ms unthrottled, 120 ms on
/// Lighthouse's phone. Read once as `{}` (which fails at once, having called the function), each
/// is compiled in a task of its own after the page's first job is sent, while the worker runs
/// it (started from [`submit`], so this code sits with the reader, not in the frame).
async fn warm_reader() {
    use trainer_course::jobs::{Outcome, Progress, RunResult, SeriesPart};
    use trainer_engine::fleet::report as r;
    use trainer_engine::replica::metrics as m;
    fn read<T: serde::de::DeserializeOwned>(text: &str) {
        let _ = serde_json::from_str::<T>(text);
    }
    // The structs first, then the enums' variants, each read as far as its own reader (the
    // variant's body is empty).
    let parts: [fn(); 31] = [
        || read::<m::LatencyStats>("{}"),
        || read::<m::GoodputSlo>("{}"),
        || read::<m::ServeMetrics>("{}"),
        || read::<r::Cdf>("{}"),
        || read::<r::Outcomes>("{}"),
        || read::<r::Clocks>("{}"),
        || read::<r::GapBreakdown>("{}"),
        || read::<r::Gauge>("{}"),
        || read::<r::Gauges>("{}"),
        || read::<r::Streams>("{}"),
        || read::<r::SloReport>("{}"),
        || read::<r::TenantReport>("{}"),
        || read::<r::TtftSplit>("{}"),
        || read::<r::KvTransferReport>("{}"),
        || read::<r::PoolReport>("{}"),
        || read::<r::CostReport>("{}"),
        || read::<r::FleetReport>("{}"),
        || read::<r::Distributions>("{}"),
        || read::<r::ReplicaSummary>("{}"),
        || read::<RunResult>("{}"),
        || read::<SeriesPart>("{}"),
        || read::<Progress>("{}"),
        || read::<Outcome>(r#"{"Lab":{"result":{}}}"#),
        || read::<Reply>(r#"{"Progress":{}}"#),
        || read::<Reply>(r#"{"Series":{}}"#),
        || read::<Reply>(r#"{"Live":{}}"#),
        || read::<Reply>(r#"{"Done":{"Lab":{"result":{}}}}"#),
        || read::<FromWorker>(r#"{"Reply":{}}"#),
        || read::<FromWorker>(r#"{"Reply":{"id":0,"reply":{"Live":{}}}}"#),
        || read::<FromWorker>(r#"{"Reply":{"id":0,"reply":{"Series":{}}}}"#),
        || read::<FromWorker>(r#"{"Reply":{"id":0,"reply":{"Done":{"Lab":{"result":{}}}}}}"#),
    ];
    for part in parts {
        crate::components::next_task().await;
        part();
    }
}

/// Starts a worker in a free place of the pool; its index.
fn spawn(p: &mut Pool) -> Option<usize> {
    let index = p
        .slots
        .iter()
        .position(Option::is_none)
        .unwrap_or(p.slots.len());
    let worker = Worker::new(WORKER_URL).ok()?;
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let text = e.data().as_string().unwrap_or_default();
        match READ.with(std::cell::Cell::get) {
            Some(read) => read(index, &text),
            None => POOL.with(|p| p.borrow_mut().unread.push((index, text))),
        }
    });
    let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |e: ErrorEvent| {
        e.prevent_default();
        died(index, &e.message());
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    let slot = Slot {
        worker,
        ready: false,
        waiting: Vec::new(),
        jobs: 0,
        _listeners: (on_message, on_error),
    };
    if index == p.slots.len() {
        p.slots.push(Some(slot));
    } else {
        p.slots[index] = Some(slot);
    }
    Some(index)
}

/// The slot for a new job: an idle worker, else a new one while the machine has cores to
/// spare, else the least busy.
fn pick(p: &mut Pool) -> Option<usize> {
    let live = || {
        p.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i, s.as_ref()?)))
    };
    if let Some((i, _)) = live().find(|(_, s)| s.jobs == 0) {
        return Some(i);
    }
    let count = live().count();
    if count < max_workers() {
        if let Some(i) = spawn(p) {
            return Some(i);
        }
    }
    p.slots
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((i, s.as_ref()?.jobs)))
        .min_by_key(|&(_, jobs)| jobs)
        .map(|(i, _)| i)
}

fn send(slot: &mut Slot, m: &ToWorker) {
    let Ok(text) = serde_json::to_string(m) else {
        return;
    };
    if slot.ready {
        let _ = slot.worker.post_message(&JsValue::from_str(&text));
    } else {
        slot.waiting.push(text);
    }
}

/// Sends `job` to a worker; `on` hears every reply until `Done` or `Failed` (after which it
/// is dropped). If no worker can start, `on` hears `Failed` at once.
pub fn submit(job: Job, on: impl FnMut(Reply) + 'static) -> JobHandle {
    // (Through `black_box`: the optimiser would otherwise see that `receive` is the only
    // reader ever stored and call it directly from the worker's listener, putting it back in
    // the frame.)
    let reader: Reader = std::hint::black_box(receive);
    if READ.with(|r| r.replace(Some(reader))).is_none() {
        let unread = POOL.with(|p| std::mem::take(&mut p.borrow_mut().unread));
        for (index, text) in unread {
            receive(index, &text);
        }
        wasm_bindgen_futures::spawn_local(warm_reader());
    }
    let mut on: Handler = Box::new(on);
    let sent = POOL.with(|p| {
        let mut p = p.borrow_mut();
        let id = p.next_id;
        p.next_id += 1;
        let i = pick(&mut p)?;
        let slot = p.slots[i].as_mut()?;
        slot.jobs += 1;
        send(slot, &ToWorker::Start { id, job });
        p.handlers.insert(id, (i, None));
        Some(id)
    });
    match sent {
        Some(id) => {
            POOL.with(|p| {
                if let Some(h) = p.borrow_mut().handlers.get_mut(&id) {
                    h.1 = Some(on);
                }
            });
            JobHandle(id)
        }
        None => {
            on(Reply::Failed(
                "This browser could not start the simulator's worker.".into(),
            ));
            JobHandle(u64::MAX)
        }
    }
}

/// Changes a job in its worker; `Cancel` also drops its handler, so nothing more is heard.
pub fn control(job: JobHandle, c: Control) {
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        let Some(&(i, _)) = p.handlers.get(&job.0) else {
            return;
        };
        if c == Control::Cancel {
            p.handlers.remove(&job.0);
        }
        if let Some(slot) = p.slots.get_mut(i).and_then(Option::as_mut) {
            if c == Control::Cancel {
                slot.jobs = slot.jobs.saturating_sub(1);
            }
            send(
                slot,
                &ToWorker::Control {
                    id: job.0,
                    control: c,
                },
            );
        }
    });
}

/// The longest a reply has taken to read on the main thread, ms: what the page pays for a
/// simulation run elsewhere (the page's own work with the result is not counted).
pub fn longest_handling_ms() -> f64 {
    POOL.with(|p| p.borrow().longest_ms)
}

fn receive(index: usize, text: &str) {
    let t0 = now_ms();
    let m = match serde_json::from_str::<FromWorker>(text) {
        Ok(m) => m,
        Err(e) => {
            web_sys::console::error_1(&format!("simulator worker: unreadable reply: {e}").into());
            return;
        }
    };
    let took = now_ms() - t0;
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        p.longest_ms = p.longest_ms.max(took);
    });
    match m {
        FromWorker::Ready => POOL.with(|p| {
            if let Some(slot) = p.borrow_mut().slots.get_mut(index).and_then(Option::as_mut) {
                slot.ready = true;
                for text in std::mem::take(&mut slot.waiting) {
                    let _ = slot.worker.post_message(&JsValue::from_str(&text));
                }
            }
        }),
        FromWorker::Unreadable(e) => {
            web_sys::console::error_1(&format!("simulator worker: {e}").into());
        }
        FromWorker::Reply { id, reply } => deliver(id, reply),
    }
}

/// Hands `reply` to job `id`'s handler (outside the pool's borrow, so the handler may send
/// jobs of its own), and forgets the job once it has ended.
fn deliver(id: u64, reply: Reply) {
    let ends = matches!(reply, Reply::Done(_) | Reply::Failed(_));
    let taken = POOL.with(|p| {
        let mut p = p.borrow_mut();
        let (i, h) = p.handlers.get_mut(&id)?;
        let i = *i;
        let h = h.take()?;
        if ends {
            p.handlers.remove(&id);
            if let Some(slot) = p.slots.get_mut(i).and_then(Option::as_mut) {
                slot.jobs = slot.jobs.saturating_sub(1);
            }
        }
        Some(h)
    });
    let Some(mut h) = taken else { return };
    h(reply);
    if !ends {
        POOL.with(|p| {
            if let Some((_, slot)) = p.borrow_mut().handlers.get_mut(&id) {
                *slot = Some(h);
            }
        });
    }
}

/// A worker has died: its jobs fail with `why`, and its place is free for a new one.
fn died(index: usize, why: &str) {
    let ids: Vec<u64> = POOL.with(|p| {
        let mut p = p.borrow_mut();
        if let Some(slot) = p.slots.get_mut(index).and_then(Option::take) {
            slot.worker.terminate();
        }
        // A new worker in its place must not read the dead one's "ready".
        p.unread.retain(|(i, _)| *i != index);
        p.handlers
            .iter()
            .filter(|(_, (i, _))| *i == index)
            .map(|(id, _)| *id)
            .collect()
    });
    let message = if why.is_empty() {
        "The simulator's worker stopped.".to_string()
    } else {
        format!("The simulator's worker stopped: {why}")
    };
    for id in ids {
        deliver(id, Reply::Failed(message.clone()));
    }
}
