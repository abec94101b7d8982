//! A table's row of column headings.

use leptos::prelude::*;

/// The `<thead>` of a table: one `<th scope="col">` per column, in order.
#[component]
pub fn ColumnHeads(
    /// The columns' headings, left to right.
    columns: &'static [&'static str],
) -> impl IntoView {
    let heads = columns
        .iter()
        .map(|c| view! { <th scope="col">{*c}</th> })
        .collect_view();
    view! { <thead><tr>{heads}</tr></thead> }
}
