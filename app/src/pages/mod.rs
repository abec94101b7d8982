//! One module per page. [`render`] maps a route to its page.

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

pub fn render(route: Route) -> AnyView {
    match route {
        Route::Home => view! { <home::Home/> }.into_any(),
        Route::NotFound(path) => view! { <not_found::NotFound path=path/> }.into_any(),
        Route::SizeIndex => view! { <size::SizeIndex/> }.into_any(),
        Route::Size(q) => view! { <size::SizePage question=q/> }.into_any(),
        Route::Simulator => view! { <simulator::SimulatorPage/> }.into_any(),
        Route::Lab => view! { <lab::LabPage/> }.into_any(),
        Route::Lesson => view! { <lesson::LessonPage/> }.into_any(),
        Route::BuildUps => view! { <buildups::BuildUpsIndex/> }.into_any(),
        Route::BuildUp(id) => view! { <buildups::BuildUpPage id=id/> }.into_any(),
        Route::Moments => view! { <moments::MomentsIndex/> }.into_any(),
        Route::Moment(id) => view! { <moments::MomentPage id=id/> }.into_any(),
        Route::Mock => view! { <mock::MockPage/> }.into_any(),
        Route::MockReport => view! { <mock::MockReport/> }.into_any(),
    }
}
