//! The frame around every page: header with navigation, the page itself, footer.

use crate::components::Link;
use crate::pages;
use crate::progress::{use_progress, ProgressStore};
use crate::route::{Route, Router, Section};
use leptos::prelude::*;

/// The root component: installs the router and the progress store, then draws the frame.
#[component]
pub fn App() -> impl IntoView {
    let router = Router::install();
    let store = ProgressStore::install();
    // Opening a part of the trainer counts as starting it.
    Effect::new(move |_| {
        let section = router.route.get().section();
        if section != Section::Home {
            store.mark_done(section.id());
        }
    });
    // Keep the document title in step with the page (a sync with the world outside Leptos).
    Effect::new(move |_| {
        let title = router.route.get().title();
        if let Some(d) = web_sys::window().and_then(|w| w.document()) {
            d.set_title(&title);
        }
    });
    view! {
        <a class="skip" href="#main">"Skip to content"</a>
        <Header/>
        <ProgressProblem/>
        <main id="main" class="page" tabindex="-1">
            {move || pages::render(router.route.get())}
        </main>
        <footer class="site-footer">
            <p>
                "Every figure on these pages is computed in your browser from its inputs by one cost model and one simulator. "
                "Nothing is fetched from anywhere else; progress stays in this browser. "
                <Link to=Route::Simulator testid="footer-simulator">"How close is the simulator to real vLLM?"</Link>
            </p>
        </footer>
    }
}

#[component]
fn Header() -> impl IntoView {
    let router = crate::route::use_router();
    let links = Section::NAV
        .into_iter()
        .map(|s| {
            let current = Signal::derive(move || {
                let route = router.route.get();
                !matches!(route, Route::NotFound(_) | Route::Simulator) && route.section() == s
            });
            view! {
                <li>
                    <Link to=s.route() testid=format!("nav-{}", s.id()) current=current>
                        {s.label()}
                    </Link>
                </li>
            }
        })
        .collect_view();
    view! {
        <header class="site-header">
            <div class="site-bar">
                <Link to=Route::Home class="brand" testid="brand">
                    <span class="brand-mark" aria-hidden="true">"⟶"</span>
                    <span class="brand-name">"Serving LLMs"</span>
                    <span class="brand-sub">"interview trainer"</span>
                </Link>
                <nav aria-label="Main">
                    <ul class="nav">{links}</ul>
                </nav>
            </div>
        </header>
    }
}

/// A dismissible note when stored progress could not be read or saved.
#[component]
fn ProgressProblem() -> impl IntoView {
    let store = use_progress();
    move || {
        store.problem.get().map(|msg| {
            view! {
                <div class="notice" role="status" data-testid="progress-problem">
                    <span>{msg}</span>
                    <button class="link-button" on:click=move |_| store.problem.set(None)>"Dismiss"</button>
                </div>
            }
        })
    }
}
