use crate::components::Link;
use crate::route::Route;
use leptos::prelude::*;

/// Shown for any path the app does not know.
#[component]
pub fn NotFound(path: String) -> impl IntoView {
    view! {
        <section class="narrow" data-testid="page-not-found">
            <h1>"Page not found"</h1>
            <p>"There is no page at " <code data-testid="missing-path">{format!("/{path}")}</code> "."</p>
            <p>"It may have moved, or the link may be cut short. The start page lists every part of the trainer."</p>
            <p><Link to=Route::Home class="button" testid="go-home">"Go to the start page"</Link></p>
        </section>
    }
}
