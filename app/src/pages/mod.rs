//! One module per page. [`render`] maps a route to its page.

mod advisor;
mod buildups;
mod home;
mod home_progress;
mod lab;
mod lesson;
mod mock;
mod moments;
mod not_found;
mod simulator;
mod size;

use crate::route::Route;
use leptos::prelude::*;

/// The page for `route`. Each page's code is its own lazily loaded piece of the WebAssembly
/// (a Leptos `#[lazy]` function, split out of the module after the build by `wasm-split-cli`:
/// tools/post-build.mjs), so a landing page downloads the frame and its own page, not the
/// whole trainer. A page whose piece has arrived draws at once; [`preload`] fetches the first
/// page's piece before the app mounts, so the first paint is never an empty frame.
pub fn render(route: Route) -> AnyView {
    Suspend::new(page(route)).into_any()
}

/// Loads the piece of the module that draws `route`'s page, without drawing it.
pub async fn preload(route: &Route) {
    match route {
        Route::Home => __preload_home_page().await,
        Route::NotFound(_) => __preload_not_found_page().await,
        Route::SizeIndex | Route::Size(_) => __preload_size_pages().await,
        Route::Simulator => __preload_simulator_page().await,
        Route::Advisor => __preload_advisor_page().await,
        Route::Lab => __preload_lab_page().await,
        Route::Lesson => __preload_lesson_page().await,
        Route::BuildUps | Route::BuildUp(_) => __preload_buildup_pages().await,
        Route::Moments | Route::Moment(_) => __preload_moment_pages().await,
        Route::Mock | Route::MockReport => __preload_mock_pages().await,
    }
}

async fn page(route: Route) -> AnyView {
    match route {
        Route::Home => home_page().await,
        Route::NotFound(path) => not_found_page(path).await,
        Route::SizeIndex | Route::Size(_) => size_pages(route).await,
        Route::Simulator => simulator_page().await,
        Route::Advisor => advisor_page().await,
        Route::Lab => lab_page().await,
        Route::Lesson => lesson_page().await,
        Route::BuildUps | Route::BuildUp(_) => buildup_pages(route).await,
        Route::Moments | Route::Moment(_) => moment_pages(route).await,
        Route::Mock | Route::MockReport => mock_pages(route).await,
    }
}

#[lazy]
fn size_pages(route: Route) -> AnyView {
    match route {
        Route::Size(q) => view! { <size::SizePage question=q/> }.into_any(),
        _ => view! { <size::SizeIndex/> }.into_any(),
    }
}

#[lazy]
fn simulator_page() -> AnyView {
    view! { <simulator::SimulatorPage/> }.into_any()
}

#[lazy]
fn advisor_page() -> AnyView {
    view! { <advisor::AdvisorPage/> }.into_any()
}

#[lazy]
fn lab_page() -> AnyView {
    view! { <lab::LabPage/> }.into_any()
}

#[lazy]
fn lesson_page() -> AnyView {
    view! { <lesson::LessonPage/> }.into_any()
}

#[lazy]
fn buildup_pages(route: Route) -> AnyView {
    match route {
        Route::BuildUp(id) => view! { <buildups::BuildUpPage id=id/> }.into_any(),
        _ => view! { <buildups::BuildUpsIndex/> }.into_any(),
    }
}

#[lazy]
fn moment_pages(route: Route) -> AnyView {
    match route {
        Route::Moment(id) => view! { <moments::MomentPage id=id/> }.into_any(),
        _ => view! { <moments::MomentsIndex/> }.into_any(),
    }
}

#[lazy]
fn mock_pages(route: Route) -> AnyView {
    match route {
        Route::MockReport => view! { <mock::MockReport/> }.into_any(),
        _ => view! { <mock::MockPage/> }.into_any(),
    }
}

#[lazy]
fn home_page() -> AnyView {
    view! { <home::Home/> }.into_any()
}

#[lazy]
fn not_found_page(path: String) -> AnyView {
    view! { <not_found::NotFound path=path/> }.into_any()
}
