//! The step player: a build-up's six steps on a timeline the learner can click or drag,
//! previous and next buttons, the sub-steps of the current step on a scrubber, autoplay,
//! "Step k of n" and a progress bar. The page owns the step and sub-step signals (it keeps them
//! in the URL) and draws the frame they select inside the player.
//!
//! Text first, then action: entering a step shows its first sub-step (the page shows the
//! narration at once), waits [`TEXT_MS`], then moves through the sub-steps to the last, the
//! whole in at most [`ACTION_MS`]. With `prefers-reduced-motion` it goes straight to the last.
//! Keys (anywhere on the page but in a form field): Left and Right step, Home and End go to
//! the first and last step, Space plays and pauses. Autoplay moves on [`PAUSE_MS`] after a
//! step's action ends; any manual move pauses it.

use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// How long a step's text stands alone before its action starts, milliseconds.
pub const TEXT_MS: u32 = 700;
/// Longest a step's action takes, milliseconds.
pub const ACTION_MS: u32 = 1_400;
/// How long autoplay rests on a step's last sub-step, milliseconds.
pub const PAUSE_MS: u32 = 3_000;

/// One step as the player shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerStep {
    pub title: String,
    /// Sub-steps (frames) in the step, at least one.
    pub frames: usize,
}

/// The player's moving parts, shared by its buttons, keys and timers.
#[derive(Clone, Copy)]
struct Ctl {
    steps: Signal<Vec<PlayerStep>>,
    step: RwSignal<usize>,
    sub: RwSignal<usize>,
    playing: RwSignal<bool>,
    timer: StoredValue<Option<Timeout>, LocalStorage>,
    reduced: bool,
}

impl Ctl {
    fn count(&self) -> usize {
        self.steps.with_untracked(Vec::len)
    }

    fn frames(&self, k: usize) -> usize {
        self.steps
            .with_untracked(|s| s.get(k).map_or(1, |p| p.frames.max(1)))
    }

    fn later(&self, ms: u32, f: impl FnOnce(Ctl) + 'static) {
        let me = *self;
        let t = Timeout::new(ms, move || f(me));
        self.timer.set_value(Some(t));
    }

    fn cancel(&self) {
        self.timer.set_value(None);
    }

    /// Goes to step `k` and plays its action (or shows its end, with reduced motion).
    fn enter(&self, k: usize) {
        let n = self.count();
        if n == 0 {
            return;
        }
        let k = k.min(n - 1);
        self.cancel();
        self.step.set(k);
        let last = self.frames(k) - 1;
        if self.reduced || last == 0 {
            self.sub.set(last);
            self.after_action();
        } else {
            self.sub.set(0);
            self.later(TEXT_MS, |c| c.animate());
        }
    }

    /// One sub-step of the action.
    fn animate(&self) {
        let k = self.step.get_untracked();
        let last = self.frames(k) - 1;
        let s = self.sub.get_untracked();
        if s >= last {
            self.after_action();
            return;
        }
        // Long steps move several sub-steps a tick so the action stays short.
        let ticks = ACTION_MS / 60;
        let stride = (last as u32).div_ceil(ticks).max(1) as usize;
        self.sub.set((s + stride).min(last));
        let per = (ACTION_MS / last as u32).clamp(60, 400);
        self.later(per, |c| c.animate());
    }

    fn after_action(&self) {
        if !self.playing.get_untracked() {
            return;
        }
        self.later(PAUSE_MS, |c| {
            let k = c.step.get_untracked();
            if k + 1 < c.count() {
                c.enter(k + 1);
            } else {
                c.playing.set(false);
            }
        });
    }

    /// A move by the learner: stops autoplay, then goes to step `k`.
    fn manual(&self, k: usize) {
        self.playing.set(false);
        self.enter(k);
    }

    /// Shows step `k` at its last sub-step at once (dragging, scrubbing).
    fn show(&self, k: usize, sub: Option<usize>) {
        self.playing.set(false);
        self.cancel();
        let n = self.count();
        if n == 0 {
            return;
        }
        let k = k.min(n - 1);
        let last = self.frames(k) - 1;
        self.step.set(k);
        self.sub.set(sub.unwrap_or(last).min(last));
    }

    fn toggle_play(&self) {
        if self.playing.get_untracked() {
            self.playing.set(false);
            self.cancel();
            return;
        }
        self.playing.set(true);
        let k = self.step.get_untracked();
        let last = self.frames(k) - 1;
        if self.sub.get_untracked() < last && !self.reduced {
            self.animate();
        } else if k + 1 < self.count() {
            self.enter(k + 1);
        } else {
            self.enter(0);
        }
    }
}

/// Whether the reader asked for reduced motion.
fn prefers_reduced_motion() -> bool {
    web_sys::window()
        .and_then(|w| {
            w.match_media("(prefers-reduced-motion: reduce)")
                .ok()
                .flatten()
        })
        .is_some_and(|m| m.matches())
}

/// Whether a key event comes from a field that uses the keys itself.
fn from_field(ev: &web_sys::KeyboardEvent) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| {
            matches!(el.tag_name().as_str(), "INPUT" | "SELECT" | "TEXTAREA")
                || el.closest("[data-keys-own]").ok().flatten().is_some()
        })
}

/// The step player. Its children draw the frame that `step` and `sub` select.
#[component]
pub fn StepPlayer(
    /// The player's `data-testid`; its parts are `<testid>-prev`, `-next`, `-play`,
    /// `-position`, `-progress`, `-sub`, and `chapter-<k>` for the timeline's steps.
    #[prop(into)]
    testid: String,
    /// The steps, with their titles and sub-step counts.
    #[prop(into)]
    steps: Signal<Vec<PlayerStep>>,
    /// The current step, from 0 (owned by the page).
    step: RwSignal<usize>,
    /// The current sub-step within the step, from 0 (owned by the page).
    sub: RwSignal<usize>,
    /// What a sub-step is, for the scrubber's label: "Scheduler step", "Moment".
    sub_label: &'static str,
    /// The narration and the views of the current frame.
    children: Children,
) -> impl IntoView {
    let ctl = Ctl {
        steps,
        step,
        sub,
        playing: RwSignal::new(false),
        timer: StoredValue::new_local(None),
        reduced: prefers_reduced_motion(),
    };
    on_cleanup(move || {
        let _ = ctl.timer.try_set_value(None);
    });
    let keys = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.alt_key() || ev.ctrl_key() || ev.meta_key() || from_field(&ev) {
            return;
        }
        let k = step.get_untracked();
        let n = ctl.count();
        match ev.key().as_str() {
            "ArrowRight" if k + 1 < n => ctl.manual(k + 1),
            "ArrowLeft" if k > 0 => ctl.manual(k - 1),
            "Home" => ctl.manual(0),
            "End" if n > 0 => ctl.manual(n - 1),
            " " => {
                // A focused button or link takes Space as its own click.
                let on_control = ev
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                    .is_some_and(|el| matches!(el.tag_name().as_str(), "BUTTON" | "A"));
                if on_control {
                    return;
                }
                ev.prevent_default();
                ctl.toggle_play();
            }
            _ => (),
        }
    });
    on_cleanup(move || keys.remove());

    let n = move || steps.with(Vec::len);
    let frames = move || steps.with(|s| s.get(step.get()).map_or(1, |p| p.frames.max(1)));
    let dragging = RwSignal::new(false);
    let pick = move |ev: &web_sys::PointerEvent| -> Option<usize> {
        let el = ev.current_target()?.dyn_into::<web_sys::Element>().ok()?;
        let r = el.get_bounding_client_rect();
        let count = ctl.count();
        if r.width() <= 0.0 || count == 0 {
            return None;
        }
        let x = (ev.client_x() as f64 - r.left()) / r.width();
        Some(((x * count as f64).floor().max(0.0) as usize).min(count - 1))
    };
    // The timeline is drawn again only when the titles change, not when a rerun changes a
    // step's sub-step count (a click in progress would be lost with the button under it).
    let titles =
        Memo::new(move |_| steps.with(|s| s.iter().map(|p| p.title.clone()).collect::<Vec<_>>()));
    let chapters = move || {
        titles
            .get()
            .into_iter()
            .enumerate()
            .map(|(i, title)| {
                let current = move || step.get() == i;
                let done = move || step.get() > i;
                view! {
                    <li class="player-chapter" class:current=current class:done=done>
                        <button
                            type="button"
                            data-testid=format!("chapter-{}", i + 1)
                            aria-current=move || current().then_some("step")
                            on:click=move |_| ctl.manual(i)
                        >
                            <span class="player-chapter-n"><span class="visually-hidden">"Step "</span>{i + 1}</span>
                            <span class="player-chapter-title">{title.clone()}</span>
                        </button>
                    </li>
                }
            })
            .collect_view()
    };
    let t = testid.clone();
    view! {
        <section class="player" data-testid=testid.clone() aria-label="Step-through player">
            <ol
                class="player-timeline"
                data-testid=format!("{t}-timeline")
                class:dragging=move || dragging.get()
                on:pointerdown=move |ev| {
                    if ev.button() == 0 {
                        dragging.set(true);
                    }
                }
                on:pointermove=move |ev| {
                    // Dragging across the steps (no pointer capture, so a plain click still
                    // reaches its step's button).
                    if dragging.get_untracked() && ev.buttons() & 1 == 1 {
                        if let Some(k) = pick(&ev) {
                            if k != step.get_untracked() {
                                ctl.show(k, None);
                            }
                        }
                    }
                }
                on:pointerup=move |_| dragging.set(false)
                on:pointerleave=move |_| dragging.set(false)
                on:pointercancel=move |_| dragging.set(false)
            >
                {chapters}
            </ol>
            <div class="player-bar">
                <button type="button" class="button" data-testid=format!("{t}-prev")
                    disabled=move || step.get() == 0
                    on:click=move |_| ctl.manual(step.get_untracked().saturating_sub(1))>
                    "← Previous"
                </button>
                <button type="button" class="button" data-testid=format!("{t}-play")
                    aria-pressed=move || if ctl.playing.get() { "true" } else { "false" }
                    on:click=move |_| ctl.toggle_play()>
                    {move || if ctl.playing.get() { "Pause" } else { "Play" }}
                </button>
                <button type="button" class="button" data-testid=format!("{t}-next")
                    disabled=move || { step.get() + 1 >= n() }
                    on:click=move |_| ctl.manual(step.get_untracked() + 1)>
                    "Next →"
                </button>
                <span class="player-position" data-testid=format!("{t}-position") aria-live="polite">
                    {move || format!("Step {} of {}", step.get() + 1, n())}
                </span>
                <div class="player-progress" role="progressbar" data-testid=format!("{t}-progress")
                    aria-label="Progress through the build-up"
                    aria-valuemin="1"
                    aria-valuemax=move || n().to_string()
                    aria-valuenow=move || (step.get() + 1).to_string()>
                    <span style=move || format!("width: {:.1}%", 100.0 * (step.get() + 1) as f64 / n().max(1) as f64)></span>
                </div>
            </div>
            <div class="player-sub">
                <label for=format!("{t}-sub")>
                    {sub_label} " "
                    <output data-testid=format!("{t}-sub-position")>{move || format!("{} of {}", sub.get() + 1, frames())}</output>
                </label>
                <input
                    id=format!("{t}-sub")
                    type="range"
                    min="0"
                    data-testid=format!("{t}-sub")
                    prop:max=move || (frames() - 1).to_string()
                    prop:value=move || sub.get().to_string()
                    disabled=move || { frames() <= 1 }
                    on:input=move |ev| {
                        if let Ok(v) = event_target_value(&ev).parse::<usize>() {
                            ctl.show(step.get_untracked(), Some(v));
                        }
                    }
                />
            </div>
            <div class="player-frame">{children()}</div>
        </section>
    }
}
