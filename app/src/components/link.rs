//! An in-app link.

use crate::route::{use_router, Route};
use leptos::prelude::*;

/// An in-app link: a real `<a href>` (so it opens in a new tab, copies, and works without the
/// router) whose plain left click is handled without a page load. With `current`, it marks
/// itself `aria-current="page"` while that holds (the header's entries).
#[component]
pub fn Link(
    /// Where the link goes.
    to: Route,
    /// Optional query string, without `?`.
    #[prop(optional, into)]
    query: String,
    /// Optional element id on the page to scroll to, without `#`.
    #[prop(optional, into)]
    fragment: String,
    /// Text for screen readers, when the visible text alone does not say where it goes.
    #[prop(optional, into)]
    aria_label: Option<String>,
    /// CSS classes for the `<a>`.
    #[prop(optional, into)]
    class: String,
    /// `data-testid`, for what a test or a deep link relies on.
    #[prop(optional, into)]
    testid: String,
    /// Whether this link stands for the page being shown.
    #[prop(optional, into)]
    current: Option<Signal<bool>>,
    children: Children,
) -> impl IntoView {
    let router = use_router();
    let mut href = if query.is_empty() {
        router.href(&to)
    } else {
        format!("{}?{}", router.href(&to), query)
    };
    if !fragment.is_empty() {
        href = format!("{href}#{fragment}");
    }
    let on_click = move |ev: web_sys::MouseEvent| {
        if ev.button() != 0 || ev.meta_key() || ev.ctrl_key() || ev.shift_key() || ev.alt_key() {
            return;
        }
        ev.prevent_default();
        router.navigate_to(to.clone(), &query, &fragment);
    };
    let testid = (!testid.is_empty()).then_some(testid);
    let aria_current = move || current.and_then(|c| c.get().then_some("page"));
    view! {
        <a href=href class=class data-testid=testid aria-current=aria_current aria-label=aria_label on:click=on_click>
            {children()}
        </a>
    }
}
