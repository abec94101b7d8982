//! The questions that change the design (`trainer_course::mock::Requirements`), graded from the
//! clarifying stage's notes: shown live to the interviewer at that stage, to the candidate when
//! assessing, and in the report.

use leptos::prelude::*;
use std::collections::BTreeMap;
use trainer_course::mock::{Covered, Mock};

/// The checklist graded from the clarifying notes in `notes` (by prompt id).
pub fn graded(m: &Mock, notes: &BTreeMap<String, String>) -> Vec<Covered> {
    let text = notes.get(&m.requirements.prompt).map_or("", String::as_str);
    m.requirements.grade(text)
}

/// What was asked, as stored in a record.
pub fn stored(covered: &[Covered]) -> BTreeMap<String, bool> {
    covered.iter().map(|c| (c.id.clone(), c.asked)).collect()
}

/// The checklist with each item marked, and the summary sentence; `testid` prefixes the
/// `data-testid`s (`<testid>-<item id>` carries `data-asked`).
pub fn checklist(m: &Mock, covered: &[Covered], testid: &'static str) -> impl IntoView {
    let r = &m.requirements;
    let rows = r
        .items
        .iter()
        .map(|item| {
            let asked = covered.iter().any(|c| c.id == item.id && c.asked);
            let mark = if asked { r.asked.clone() } else { r.not_asked.clone() };
            view! {
                <li data-testid=format!("{testid}-{}", item.id) data-asked=asked.to_string() class:asked=asked>
                    <strong>{item.ask.clone()}</strong>
                    <span class="muted">{format!(" ({mark})")}</span>
                    <br/>
                    <span class="small">{item.changes.clone()}</span>
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="requirements" data-testid=testid>
            <p data-testid=format!("{testid}-summary")>{r.summary_of(covered)}</p>
            <ul>{rows}</ul>
        </div>
    }
}
