//! The frame around every page: header with navigation, the page itself, footer.

use crate::components::Link;
use crate::pages;
use crate::progress::{use_progress, ProgressStore};
use crate::route::{Route, Router, Section};
use leptos::prelude::*;
use trainer_content::words::SiteWords;

/// The frame's words and the headings of pages without a content file of their own, built
/// from `content/site.toml` by the build (which refuses a file that does not parse). The
/// build's first paint (`site/`) reads the same file.
pub fn site_words() -> &'static SiteWords {
    static WORDS: std::sync::OnceLock<SiteWords> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| include!(concat!(env!("OUT_DIR"), "/site-words.rs")))
}

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
    // The page is drawn again only when the route changes, not when it is set to the same one
    // (a link to the page being read keeps its state).
    let page = Memo::new(move |_| router.route.get());
    let w = site_words();
    view! {
        <a class="skip" href="#main">{w.skip.clone()}</a>
        <Header/>
        <ProgressProblem/>
        <main id="main" class="page" tabindex="-1">
            {move || pages::render(page.get())}
        </main>
        <footer class="site-footer">
            <p>
                {w.footer.clone()}
                <Link to=Route::Simulator testid="footer-simulator">{w.footer_link.clone()}</Link>
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
                    <span class="brand-name">{site_words().brand_name.clone()}</span>
                    <span class="brand-sub">{site_words().brand_sub.clone()}</span>
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
