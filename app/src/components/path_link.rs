//! A link to an app path written as text, as content files write them.

use super::Link;
use crate::route::Route;
use leptos::prelude::*;

/// An in-app [`Link`] to a path such as `/size/fleet#step-replicas` or
/// `/lab?scenario=fleet-seed`: the path, query and fragment are split out of `to`.
#[component]
pub fn PathLink(
    /// The app path, with an optional query and fragment; the leading slash is optional.
    #[prop(into)]
    to: String,
    /// `data-testid`, for what a test relies on.
    #[prop(optional, into)]
    testid: String,
    children: Children,
) -> impl IntoView {
    let to = to.trim_start_matches('/');
    let (rest, fragment) = to.split_once('#').unwrap_or((to, ""));
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    view! {
        <Link to=Route::parse(path) query=query.to_string() fragment=fragment.to_string() testid=testid>
            {children()}
        </Link>
    }
}
