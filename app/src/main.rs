//! The serving trainer's single-page app: Leptos, client-side rendered, compiled to WASM.
//!
//! This crate is the only one that touches the DOM. Everything it shows is computed by
//! `trainer_course`; components hold signals and call the core's plain methods.

#[cfg(feature = "test-exports")]
mod bench;
mod browser;
mod components;
mod pages;
mod plot_canvas;
mod progress;
mod route;
mod shell;
mod sim_client;
mod sim_runner;
mod text;
mod url_state;

fn main() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        show_crash_notice();
    }));
    // The first page's piece of the module arrives before the app mounts, so the page's own
    // first paint (its heading and introduction, in the HTML file) stays until the page is
    // drawn in its place, never an empty frame between them.
    let first = route::Router::current_route();
    // (Leptos's executor is set up by the mount, so this task goes to wasm-bindgen's.)
    wasm_bindgen_futures::spawn_local(async move {
        pages::preload(&first).await;
        // The page is built in a task of its own, not in the one its piece's instantiation
        // ended in.
        components::next_task().await;
        // Take down the first paint that the route's HTML file shows until the WASM runs.
        if let Some(boot) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id("boot"))
        {
            boot.remove();
        }
        leptos::mount::mount_to_body(shell::App);
        // The simulators' worker loads once the first page is drawn (every deferred region
        // in), while the learner reads: started with the page, its download and compile
        // competed with the page's own pieces for the network and a phone's CPU. A page that
        // runs a simulation at once (a lab deep link) starts its worker when it asks.
        components::when_drawn(sim_client::prewarm);
    });
}

/// Puts a visible notice on the page when the app panics (the release build then stops), so
/// the learner sees what happened and how to recover instead of a page that no longer answers.
fn show_crash_notice() {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if doc.get_element_by_id("crash").is_some() {
        return;
    }
    let Some(body) = doc.body() else { return };
    if let Ok(el) = doc.create_element("div") {
        el.set_id("crash");
        let _ = el.set_attribute("class", "notice crash");
        let _ = el.set_attribute("role", "alert");
        let _ = el.set_attribute("data-testid", "crash-notice");
        el.set_text_content(Some(
            "Something went wrong in the trainer and this page stopped working. Reload the page to carry on; your progress is kept in this browser.",
        ));
        let _ = body.prepend_with_node_1(&el);
    }
}
