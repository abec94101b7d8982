//! A countdown clock with pause, paced by `gloo-timers`.

use crate::browser::now_ms;
use gloo_timers::callback::Interval;
use leptos::prelude::*;
use std::cell::Cell;

thread_local! {
    /// How many clock seconds pass per wall second: 1 in the app as shipped; the browser
    /// tests raise it through the test exports instead of sleeping.
    static SPEED: Cell<f64> = const { Cell::new(1.0) };
}

/// Makes every countdown run `factor` times faster (the browser tests' hook).
#[cfg(feature = "test-exports")]
pub fn set_speed(factor: f64) {
    SPEED.with(|s| s.set(factor.clamp(0.0, 1e6)));
}

/// How often the clock looks at the time, milliseconds.
const TICK_MS: u32 = 200;

/// Shows `remaining` as minutes and seconds and counts it down while not `paused`, with a
/// button that pauses and resumes it. The time is measured from the browser's clock at each
/// tick, so a late tick loses nothing. Calls `on_expire` once when it reaches zero.
#[component]
pub fn Countdown(
    /// Seconds left; the clock counts it down.
    remaining: RwSignal<f64>,
    /// Whether the clock stands still.
    paused: RwSignal<bool>,
    /// Called once when the time runs out.
    on_expire: Callback<()>,
    /// `data-testid` of the clock (the button's is this with `-pause`).
    #[prop(into)]
    testid: String,
) -> impl IntoView {
    let last = StoredValue::new(now_ms());
    let expired = StoredValue::new(false);
    let interval = Interval::new(TICK_MS, move || {
        let now = now_ms();
        let dt = (now - last.get_value()) / 1e3 * SPEED.with(Cell::get);
        last.set_value(now);
        let (Some(left), Some(stopped)) =
            (remaining.try_get_untracked(), paused.try_get_untracked())
        else {
            return;
        };
        if stopped || left <= 0.0 {
            return;
        }
        let left = (left - dt).max(0.0);
        remaining.set(left);
        if left == 0.0 && !expired.get_value() {
            expired.set_value(true);
            // After this tick returns: the page may drop the clock (and this interval) then.
            request_animation_frame(move || on_expire.run(()));
        }
    });
    let held = StoredValue::new_local(Some(interval));
    on_cleanup(move || {
        // Dropping the interval stops it.
        held.try_set_value(None);
    });
    let shown = move || {
        let s = remaining.get().ceil().max(0.0) as u64;
        format!("{:02}:{:02}", s / 60, s % 60)
    };
    let pause_id = format!("{testid}-pause");
    view! {
        <div class="countdown" class:paused=move || paused.get() class:low=move || remaining.get() < 300.0>
            <span role="timer" aria-label="Time left" data-testid=testid
                data-remaining=move || format!("{}", remaining.get().ceil())>
                {shown}
            </span>
            <button class="button" type="button" data-testid=pause_id
                aria-pressed=move || paused.get().to_string()
                on:click=move |_| paused.update(|p| *p = !*p)>
                {move || if paused.get() { "Resume" } else { "Pause" }}
            </button>
        </div>
    }
}
