//! The serving trainer's single-page app: Leptos, client-side rendered, compiled to WASM.
//!
//! This crate is the only one that touches the DOM. Everything it shows is computed by
//! `trainer_core`; components hold signals and call the core's plain methods.

mod bench;
mod pages;
mod progress;
mod route;
mod shell;

fn main() {
    console_error_panic_hook::set_once();
    // Take down the static "loading" note that index.html shows until the WASM runs.
    if let Some(boot) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("boot"))
    {
        boot.remove();
    }
    leptos::mount::mount_to_body(shell::App);
}
