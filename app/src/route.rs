//! The app's routes and a small history-API router.
//!
//! The app is plain static files that may be hosted under any sub-path. `index.html` works out
//! that base path before anything loads (see the inline script there, which knows the same
//! first segments as [`Route::parse`]) and records it as the document's `<base>`; this module reads it back from
//! `document.baseURI`, so one build serves `/`, `/trainer/` or any other prefix, including a
//! direct visit to a deep link answered by the host's `404.html` fallback.
//!
//! We do not use `leptos_router`: our route table is tiny, and measured on this app it adds
//! 108,971 B of WASM (45,484 B gzipped, 12 % of the download).

use leptos::prelude::*;
use wasm_bindgen::JsCast;

pub use trainer_content::route::{Route, Section};

/// The router's state, provided as context at the root.
#[derive(Clone, Copy)]
pub struct Router {
    pub route: RwSignal<Route>,
    /// The query string without its leading `?`.
    pub query: RwSignal<String>,
    base: StoredValue<String>,
}

impl Router {
    /// The route of the current location (before the router is installed: the app's first
    /// page, whose piece of the module loads before the app mounts).
    pub fn current_route() -> Route {
        current(&base_path()).0
    }

    /// Reads the base and the current location, and follows the browser's back and forward.
    pub fn install() -> Router {
        let base = base_path();
        let (route, query) = current(&base);
        let router = Router {
            route: RwSignal::new(route),
            query: RwSignal::new(query),
            base: StoredValue::new(base),
        };
        // Back and forward: show the entry's page, then put the reader where they were on it.
        let handle = window_event_listener(leptos::ev::popstate, move |ev| {
            let (r, q) = current(&router.base.get_value());
            router.route.set(r.clone());
            router.query.set(q);
            let y = ev.state().as_f64().unwrap_or(0.0);
            after_render(r, move || {
                focus_heading();
                if let Some(w) = web_sys::window() {
                    w.scroll_to_with_x_and_y(0.0, y);
                }
            });
        });
        // The router lives as long as the page, and so does its listener.
        std::mem::forget(handle);
        // A deep link with a fragment: the element exists only once the app has drawn it.
        after_render(router.route.get_untracked(), || {
            let hash = web_sys::window()
                .and_then(|w| w.location().hash().ok())
                .unwrap_or_default();
            scroll_to_id(hash.trim_start_matches('#'));
        });
        provide_context(router);
        router
    }

    /// The absolute href of a route, for `<a href>`.
    pub fn href(&self, route: &Route) -> String {
        format!("{}{}", self.base.get_value(), route.path())
    }

    /// Goes to `route` with an optional query, adding a history entry. The entry being left
    /// keeps its scroll position (restored on Back), and focus moves to the new page's heading
    /// so a screen reader announces it.
    pub fn navigate(&self, route: Route, query: &str) {
        self.navigate_to(route, query, "");
    }

    /// [`Router::navigate`] to a place on the page: with a `fragment` (an element's id), the
    /// page scrolls to that element once drawn, and focus moves there.
    pub fn navigate_to(&self, route: Route, query: &str, fragment: &str) {
        let mut url = self.url(&route, query);
        if !fragment.is_empty() {
            url.push('#');
            url.push_str(fragment);
        }
        if let Some(w) = web_sys::window() {
            if let Ok(h) = w.history() {
                let y = w.scroll_y().unwrap_or(0.0);
                let _ = h.replace_state(&wasm_bindgen::JsValue::from_f64(y), "");
                let _ = h.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
            }
        }
        self.query.set(query.to_string());
        self.route.set(route.clone());
        if let Some(w) = web_sys::window() {
            w.scroll_to_with_x_and_y(0.0, 0.0);
        }
        let fragment = fragment.to_string();
        after_render(route, move || {
            if !scroll_to_id(&fragment) {
                focus_heading();
            }
        });
    }

    /// Rewrites the query of the current entry (state kept in the URL, without a history entry).
    pub fn replace_query(&self, query: &str) {
        let url = self.url(&self.route.get_untracked(), query);
        if let Some(h) = web_sys::window().and_then(|w| w.history().ok()) {
            let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
        }
        self.query.set(query.to_string());
    }

    fn url(&self, route: &Route, query: &str) -> String {
        let mut url = self.href(route);
        if !query.is_empty() {
            url.push('?');
            url.push_str(query);
        }
        url
    }
}

/// Runs `f` once the page has been drawn for `route`, the route just set (after its piece of
/// the module has arrived: `pages::render`).
fn after_render(route: Route, f: impl FnOnce() + 'static) {
    leptos::task::spawn_local(async move {
        crate::pages::preload(&route).await;
        crate::components::when_drawn(f);
    });
}

/// Scrolls the element with this id into view and focuses it; false when there is none.
fn scroll_to_id(id: &str) -> bool {
    if id.is_empty() {
        return false;
    }
    let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
    else {
        return false;
    };
    el.scroll_into_view();
    if el.get_attribute("tabindex").is_none() {
        let _ = el.set_attribute("tabindex", "-1");
    }
    if let Ok(el) = el.dyn_into::<web_sys::HtmlElement>() {
        let opts = web_sys::FocusOptions::new();
        opts.set_prevent_scroll(true);
        let _ = el.focus_with_options(&opts);
    }
    true
}

/// Moves focus to the page's main heading (made focusable for it), without scrolling.
fn focus_heading() {
    let Some(h) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector("main h1").ok().flatten())
    else {
        return;
    };
    let _ = h.set_attribute("tabindex", "-1");
    if let Ok(el) = h.dyn_into::<web_sys::HtmlElement>() {
        let opts = web_sys::FocusOptions::new();
        opts.set_prevent_scroll(true);
        let _ = el.focus_with_options(&opts);
    }
}

pub fn use_router() -> Router {
    expect_context::<Router>()
}

/// The path of `document.baseURI`, ending in `/`.
fn base_path() -> String {
    let uri = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.base_uri().ok().flatten())
        .unwrap_or_else(|| "/".into());
    // Strip the scheme and host: "http://h:1/trainer/" -> "/trainer/".
    let after_scheme = uri.split_once("://").map(|(_, r)| r).unwrap_or(&uri);
    let path = after_scheme
        .find('/')
        .map(|i| &after_scheme[i..])
        .unwrap_or("/");
    let path = path.split(['?', '#']).next().unwrap_or("/");
    match path.rfind('/') {
        Some(i) => path[..=i].to_string(),
        None => "/".into(),
    }
}

fn current(base: &str) -> (Route, String) {
    let loc = web_sys::window().map(|w| w.location());
    let path = loc
        .as_ref()
        .and_then(|l| l.pathname().ok())
        .unwrap_or_default();
    let search = loc
        .as_ref()
        .and_then(|l| l.search().ok())
        .unwrap_or_default();
    let rel = path
        .strip_prefix(base)
        .unwrap_or(path.trim_start_matches('/'));
    (
        Route::parse(rel),
        search.trim_start_matches('?').to_string(),
    )
}
