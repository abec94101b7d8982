//! `/buildups/replica`: request D through one replica, frame by frame, with a panel that
//! changes D's prompt, the token budget, the pool or prefix caching and runs it again. A
//! number typed there runs [`SETTLE_MS`] after the last keystroke, or at once on Enter or on
//! leaving the field, so "4000" never runs as "400"; until then, and until the run comes
//! back from the simulators' worker, the frames are marked as the previous values'.

use super::{player_steps, script, StepState};
use crate::components::{
    ChoiceField, EngineNote, FieldMessage, NumberField, RecallCards, StepNarration, StepPlayer,
    UrlErrors,
};
use crate::sim_client::{control, submit, JobHandle};
use crate::text::format;
use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use trainer_course::buildup::replica::{Cell, ReplicaFrame, ReplicaParams, ReplicaStory, NAMES};
use trainer_course::jobs::{self, Control, Job, Reply};
use trainer_engine::replica::TokenKind;

/// How long after the last keystroke in a "change it" field the run follows, milliseconds.
pub const SETTLE_MS: u32 = 500;

/// Whether the frames shown are the values in the "change it" fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Edits {
    /// They are.
    Applied,
    /// A field was typed in and the run waits for the typing to settle.
    Typing,
    /// A field holds a value that cannot run (its message is under it).
    Invalid,
}

/// The build-up's state: the run at the URL's parameters, and which request is highlighted.
#[derive(Clone, Copy)]
struct Replay {
    /// The run at the URL's parameters, from the simulators' worker (rerun when they change;
    /// `None` until the first run arrives).
    story: RwSignal<Option<Result<ReplicaStory, String>>>,
    /// A run is on its way: the frames shown are the previous run's.
    running: RwSignal<bool>,
    /// The next run to arrive lands on the current step's last frame (a replay from the
    /// "change it" panel), rather than keeping the sub-step.
    to_last: StoredValue<bool>,
    url: StepState,
    /// The request whose name, blocks, batch row or clock is hovered or focused.
    linked: RwSignal<Option<usize>>,
    /// Each step's last sub-step in the current run (the URL names a sub-step only when it
    /// is not the last).
    lasts: StoredValue<Vec<usize>>,
    /// Whether the frames are the fields' values.
    edits: RwSignal<Edits>,
}

impl Replay {
    /// Runs the build-up again with `p`, landing on the current step's last frame: the one
    /// its narration describes.
    fn replay(&self, p: ReplicaParams) {
        self.to_last.set_value(true);
        // Marked at once, so the frames never look settled between the edit and the run.
        self.running.set(true);
        self.url.params.set(p);
    }

    /// A run has arrived: show it, with the sub-step where the URL (the first run) or a
    /// replay (the last frame of the step) puts it.
    fn arrived(&self, s: Result<ReplicaStory, String>) {
        let first = self.lasts.with_value(Vec::is_empty);
        if let Ok(st) = &s {
            self.lasts
                .set_value(st.chapters.iter().map(|c| c.len() - 1).collect());
            let last = st
                .chapters
                .get(self.url.step.get_untracked())
                .map(|c| c.len() - 1);
            if first {
                let lasts = self.lasts;
                if let Some(m) = self
                    .url
                    .settle_with(|k| lasts.with_value(|l| l.get(k).copied()))
                {
                    self.url.errors.update(|e| e.push(m));
                }
            } else if std::mem::take(&mut *self.to_last.write_value()) {
                if let Some(last) = last {
                    self.url.sub.set(last);
                }
            }
        }
        self.story.set(Some(s));
        self.running.set(false);
    }

    /// The frame the player shows (tracked).
    fn frame(&self) -> Option<usize> {
        let step = self.url.step.get();
        let sub = self.url.sub.get();
        self.story.with(|s| {
            s.as_ref()
                .and_then(|s| s.as_ref().ok())
                .and_then(|s| s.chapters.get(step).map(|c| (c.first + sub).min(c.last)))
        })
    }
}

#[component]
pub fn ReplicaBuildUp() -> impl IntoView {
    let script = script("replica").unwrap_or_else(|| trainer_content::buildup::Script {
        title: String::new(),
        intro: String::new(),
        steps: Vec::new(),
    });
    let lasts = StoredValue::new(Vec::<usize>::new());
    let url = StepState::install(move |k| lasts.with_value(|l| l.get(k).copied()), true);
    let r = Replay {
        story: RwSignal::new(None),
        running: RwSignal::new(true),
        to_last: StoredValue::new(false),
        url,
        linked: RwSignal::new(None),
        lasts,
        edits: RwSignal::new(Edits::Applied),
    };
    let story = r.story;
    // Each change of the parameters (a replay, Back to another run) runs the replica again in
    // the simulators' worker; a run still on its way is cancelled.
    let job = StoredValue::new(None::<JobHandle>);
    Effect::new(move |_| {
        let p = url.params.get();
        if let Some(h) = job.get_value() {
            control(h, Control::Cancel);
        }
        r.running.set(true);
        let h = submit(Job::ReplicaStory(p), move |reply| {
            let s = match reply {
                Reply::Done(jobs::Outcome::ReplicaStory(s)) => Ok(*s),
                Reply::Failed(m) => Err(m),
                _ => return,
            };
            r.arrived(s);
        });
        job.set_value(Some(h));
    });
    on_cleanup(move || {
        if let Some(Some(h)) = job.try_get_value() {
            control(h, Control::Cancel);
        }
    });
    let script = StoredValue::new(script);
    let steps = Signal::derive(move || {
        story.with(|s| match s {
            Some(Ok(s)) => script.with_value(|sc| player_steps(sc, &s.chapters)),
            _ => Vec::new(),
        })
    });
    let (title, intro) = script.with_value(|s| (s.title.clone(), s.intro.clone()));
    // Whether a run is here and whether it failed, as a memo: a new run that did not fail
    // must not draw the player again (a click on it in progress would be lost with the button
    // under it). `None` until the first run arrives.
    let failed = Memo::new(move |_| story.with(|s| s.as_ref().map(|s| s.as_ref().err().cloned())));
    view! {
        <section class="buildup" data-testid="page-buildup-replica">
            <p class="eyebrow">"Build-up 1"</p>
            <h1>{title}</h1>
            <p class="lede">{intro}</p>
            <EngineNote testid="buildup-replica-engine" engine=Signal::derive(ReplicaStory::engine)/>
            <UrlErrors errors=url.errors/>
            <ChangeIt r=r/>
            {move || match failed.get() {
                None => view! {
                    <p class="buildup-running" data-testid="replica-running" aria-live="polite">"Running the replica…"</p>
                }.into_any(),
                Some(Some(e)) => view! {
                    <p class="notice" role="alert" data-testid="run-error">
                        {format!("This run cannot be shown. {e}")}
                    </p>
                }.into_any(),
                Some(None) => view! {
                    <StepPlayer testid="player" steps=steps step=url.step sub=url.sub sub_label="Scheduler step">
                        <ReplicaFrameView r=r script=script/>
                    </StepPlayer>
                }.into_any(),
            }}
            <div class="recall-list"><RecallCards place="buildups/replica".to_string()/></div>
        </section>
    }
}

/// The narration of the current step and the frame it shows.
#[component]
fn ReplicaFrameView(
    r: Replay,
    script: StoredValue<trainer_content::buildup::Script>,
) -> impl IntoView {
    let narration = move || {
        let step = r.url.step.get();
        r.story.with(|s| {
            let s = s.as_ref()?.as_ref().ok()?;
            let c = s.chapters.get(step)?.clone();
            Some(view! { <StepNarration script=script chapter=c/> })
        })
    };
    let frame = move || {
        let k = r.frame()?;
        r.story.with(|s| {
            let s = s.as_ref()?.as_ref().ok()?;
            Some(frame_view(r, s, k))
        })
    };
    let stale = move || r.edits.get() != Edits::Applied || r.running.get();
    view! {
        <div class="buildup-body" class:stale=stale aria-busy=move || (r.edits.get() == Edits::Typing || r.running.get()).to_string()
            data-testid="frames" data-stale=move || stale().to_string()>
            {narration}
            <div class="buildup-views" class:has-linked=move || r.linked.get().is_some()>{frame}</div>
        </div>
    }
}

/// A request's name, linked to its blocks, batch row and clock.
fn who(r: Replay, i: usize) -> impl IntoView {
    view! {
        <span
            class=format!("who who-{i}")
            class:linked=move || r.linked.get() == Some(i)
            tabindex="0"
            data-testid=format!("who-{}", NAMES[i])
            on:mouseenter=move |_| r.linked.set(Some(i))
            on:mouseleave=move |_| r.linked.set(None)
            on:focus=move |_| r.linked.set(Some(i))
            on:blur=move |_| r.linked.set(None)
        >
            {NAMES[i]}
        </span>
    }
}

fn frame_view(r: Replay, s: &ReplicaStory, k: usize) -> AnyView {
    let f: &ReplicaFrame = &s.frames[k];
    let rows = f
        .batch
        .iter()
        .map(|b| {
            let i = b.who;
            let kind = match b.kind {
                TokenKind::Prefill => "prefill",
                TokenKind::Decode => "decode",
            };
            view! {
                <tr
                    data-testid=format!("batch-row-{}", NAMES[i])
                    class=format!("who-row who-{i}")
                    class:linked=move || r.linked.get() == Some(i)
                    on:mouseenter=move |_| r.linked.set(Some(i))
                    on:mouseleave=move |_| r.linked.set(None)
                >
                    <td>{who(r, i)}</td>
                    <td>{kind}</td>
                    <td class="num" data-testid=format!("batch-tokens-{}", NAMES[i])>{format::int(b.tokens as f64)}</td>
                    <td class="num">{format::int(b.context as f64)}</td>
                    <td class="num">{b.blocks}</td>
                </tr>
            }
        })
        .collect_view();
    let used = f.budget_used as f64 / f.budget.max(1) as f64;
    let cells = f
        .cells
        .iter()
        .map(|c| {
            let (class, owner) = match *c {
                Cell::Free => ("kv-cell free".to_string(), None),
                Cell::Cached => ("kv-cell cached".to_string(), None),
                Cell::Owned(o) => (format!("kv-cell owned who-{o}"), Some(o)),
                Cell::JustFreed(o) => (format!("kv-cell freed who-{o}"), Some(o)),
            };
            view! {
                <span
                    class=class
                    class:linked=move || owner.is_some() && r.linked.get() == owner
                    on:mouseenter=move |_| if owner.is_some() { r.linked.set(owner) }
                    on:mouseleave=move |_| r.linked.set(None)
                ></span>
            }
        })
        .collect_view();
    let count = |p: &dyn Fn(&Cell) -> bool| f.cells.iter().filter(|c| p(c)).count();
    let free = count(&|c| *c == Cell::Free);
    let cached = count(&|c| *c == Cell::Cached);
    let freed = count(&|c| matches!(c, Cell::JustFreed(_)));
    let owners = (0..NAMES.len())
        .map(|i| {
            let n = count(&|c| *c == Cell::Owned(i));
            view! {
                <li class:linked=move || r.linked.get() == Some(i)>
                    <span class=format!("kv-swatch owned who-{i}")></span>
                    {who(r, i)}
                    " "
                    <span data-testid=format!("blocks-{}", NAMES[i]) data-value=n.to_string()>{n}</span>
                </li>
            }
        })
        .collect_view();
    let d = s.d_clock(k);
    let show = crate::text::duration_or_dash;
    let waiting = if f.waiting.is_empty() {
        view! { <span class="muted">"empty"</span> }.into_any()
    } else {
        f.waiting
            .iter()
            .map(|&i| who(r, i))
            .collect_view()
            .into_any()
    };
    let events = [
        ("admitted", &f.admitted),
        ("preempted", &f.preempted),
        ("first token", &f.first_tokens),
        ("finished", &f.finished),
    ]
    .into_iter()
    .filter(|(_, v)| !v.is_empty())
    .map(|(what, v)| {
        let names = v.iter().map(|&i| NAMES[i]).collect::<Vec<_>>().join(", ");
        view! { <li data-testid=format!("event-{}", what.replace(' ', "-"))>{format!("{what}: {names}")}</li> }
    })
    .collect_view();
    view! {
        <div class="buildup-frame" data-testid="frame" data-frame=k.to_string()>
            <p class="buildup-frame-head" data-testid="frame-step" data-value=f.step.to_string()>
                {format!("Engine step {} · {} to {}", f.step + 1, format::duration(f.start, 4), format::duration(f.end, 4))}
            </p>
            <ul class="buildup-frame-events">{events}</ul>
            <div class="buildup-panel">
                <h3>"The step's batch"</h3>
                <table class="buildup-table" data-testid="batch">
                    <thead><tr><th>"Request"</th><th>"Kind"</th><th class="num">"Tokens"</th><th class="num">"Context"</th><th class="num">"Blocks"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
                <div class="buildup-budget" data-testid="budget-used" data-value=f.budget_used.to_string()>
                    <span>{format!("Token budget used: {} of {}", format::int(f.budget_used as f64), format::int(f.budget as f64))}</span>
                    <div class="budget-meter" data-testid="budget-meter" aria-hidden="true"><span class="budget-meter-fill" data-testid="budget-meter-fill" style=format!("width: {:.1}%", 100.0 * used.clamp(0.0, 1.0))></span></div>
                </div>
                <p class="buildup-queue" data-testid="waiting">"Waiting: " {waiting}</p>
            </div>
            <div class="buildup-panel">
                <h3>"D's clocks"</h3>
                <dl class="d-clocks" data-testid="d-clock"
                    class:linked=move || r.linked.get() == Some(trainer_course::buildup::replica::D)
                    on:mouseenter=move |_| r.linked.set(Some(trainer_course::buildup::replica::D))
                    on:mouseleave=move |_| r.linked.set(None)>
                    <dt>"Arrived"</dt><dd data-testid="d-arrival">{format::duration(d.arrival, 3)}</dd>
                    <dt>"Waited"</dt><dd data-testid="d-waited">{show(d.waited)}</dd>
                    <dt>"Prefill chunks"</dt><dd data-testid="d-chunks">{format!("{} of {}", d.chunks_done, d.chunks)}</dd>
                    <dt>"TTFT"</dt><dd data-testid="d-ttft" data-value=d.ttft.map(|t| t.to_string()).unwrap_or_default()>{show(d.ttft)}</dd>
                </dl>
            </div>
            <div class="buildup-panel kv">
                <h3>{format!("KV blocks ({} tokens each)", s.block_size)}</h3>
                <div class="kv-grid" data-testid="kv-grid" role="img"
                    aria-label=format!("{} of {} blocks in use", f.kv_used, s.kv_blocks_total)>
                    {cells}
                </div>
                <ul class="kv-legend" data-testid="kv-legend">
                    {owners}
                    <li><span class="kv-swatch cached"></span>"cached " <span data-testid="blocks-cached">{cached}</span></li>
                    <li><span class="kv-swatch freed"></span>"just freed " <span data-testid="blocks-freed">{freed}</span></li>
                    <li><span class="kv-swatch free"></span>"free " <span data-testid="blocks-free">{free}</span></li>
                </ul>
            </div>
        </div>
    }
    .into_any()
}

/// The "change it" panel: D's prompt, the budget, the pool, prefix caching.
#[component]
fn ChangeIt(r: Replay) -> impl IntoView {
    let p0 = r.url.params.get_untracked();
    let texts = [
        RwSignal::new(p0.d_prompt.to_string()),
        RwSignal::new(p0.budget.to_string()),
        RwSignal::new(p0.pool_blocks.to_string()),
    ];
    let errors = [
        RwSignal::new(None::<String>),
        RwSignal::new(None::<String>),
        RwSignal::new(None::<String>),
    ];
    let apply = move || {
        r.edits.set(Edits::Invalid);
        let mut p = r.url.params.get_untracked();
        let mut ok = true;
        for (i, (key, lo, hi)) in ReplicaParams::RANGES.iter().enumerate() {
            let text = texts[i].get_untracked();
            match text.trim().parse::<u32>() {
                Ok(v) if (*lo..=*hi).contains(&v) => {
                    errors[i].set(None);
                    match i {
                        0 => p.d_prompt = v,
                        1 => p.budget = v,
                        _ => p.pool_blocks = v,
                    }
                }
                _ => {
                    ok = false;
                    errors[i].set(Some(format!("{key}: a whole number from {lo} to {hi}")));
                }
            }
        }
        if !ok {
            return;
        }
        match p.validate() {
            Ok(()) => {
                r.replay(p);
                r.edits.set(Edits::Applied);
            }
            Err(e) => errors[0].set(Some(e.message)),
        }
    };
    // Typing waits for the keystrokes to settle; Enter or leaving the field runs at once.
    let timer = StoredValue::new_local(None::<Timeout>);
    on_cleanup(move || {
        let _ = timer.try_set_value(None);
    });
    let commit = move || {
        if r.edits.get_untracked() == Edits::Typing {
            timer.set_value(None);
            apply();
        }
    };
    let typed = move || {
        r.edits.set(Edits::Typing);
        timer.set_value(Some(Timeout::new(SETTLE_MS, commit)));
    };
    let fields = [
        ("prompt", "D's prompt", "tokens"),
        ("budget", "Token budget per step", "tokens"),
        ("pool", "KV pool", "blocks"),
    ];
    let fields = fields
        .into_iter()
        .enumerate()
        .map(|(i, (key, label, unit))| {
            let (_, lo, hi) = ReplicaParams::RANGES[i];
            view! {
                <div class="change-field"
                    on:keydown=move |ev| if ev.key() == "Enter" { commit() }
                    on:focusout=move |_| commit()>
                <NumberField
                    id=format!("change-{key}")
                    testid=format!("change-{key}")
                    label=label
                    unit=unit
                    value=texts[i]
                    hint=format!("{lo} to {hi}")
                    integer=true
                    message=FieldMessage::new(errors[i], format!("change-{key}-error"))
                    on_input=Callback::new(move |t: String| { texts[i].set(t); typed(); })
                />
                </div>
            }
        })
        .collect_view();
    let cache = Signal::derive(move || {
        if r.url.params.get().prefix_caching {
            "on".to_string()
        } else {
            "off".to_string()
        }
    });
    view! {
        <details class="change-it" data-testid="change-it" open>
            <summary>"Change it"</summary>
            <div class="change-fields" data-keys-own="">
                {fields}
                <ChoiceField
                    id="change-cache"
                    testid="change-cache"
                    label="Prefix caching"
                    options=vec![("off".to_string(), "off".to_string()), ("on".to_string(), "on".to_string())]
                    selected=cache
                    message=FieldMessage::never("change-cache-error")
                    on_change=Callback::new(move |v: String| {
                        let mut p = r.url.params.get_untracked();
                        p.prefix_caching = v == "on";
                        r.replay(p);
                    })
                />
                <button type="button" class="button" data-testid="change-reset"
                    on:click=move |_| {
                        timer.set_value(None);
                        r.edits.set(Edits::Applied);
                        let s = ReplicaParams::shipped();
                        texts[0].set(s.d_prompt.to_string());
                        texts[1].set(s.budget.to_string());
                        texts[2].set(s.pool_blocks.to_string());
                        for e in errors { e.set(None); }
                        r.replay(s);
                    }>
                    "Back to the shipped run"
                </button>
            </div>
            <p class="change-status" role="status" data-testid="change-status">
                {move || match r.edits.get() {
                    Edits::Applied if r.running.get() => Some(view! {
                        <span data-testid="frames-stale" data-reason="running">"Updating… the frames below are from the previous values."</span>
                    }),
                    Edits::Applied => None,
                    Edits::Typing => Some(view! {
                        <span data-testid="frames-stale" data-reason="typing">"Updating… the frames below are from the previous values."</span>
                    }),
                    Edits::Invalid => Some(view! {
                        <span data-testid="frames-stale" data-reason="invalid">"The frames below are from the previous values: correct the field to run again."</span>
                    }),
                }}
            </p>
        </details>
    }
}
