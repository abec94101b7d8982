//! The one way a page keeps its state in the URL's query string.
//!
//! A page parses its state with the core's parser for it (`sizing::PageQuery`,
//! `lab::Setup::from_query`, `buildup::query::BuildUpQuery`, the moment's and the mock's keys
//! through [`pairs`]), writes it back with the core's serialiser, and hands the query string to
//! [`UrlState`]: [`UrlState::replace`] rewrites the current history entry (a knob, a field, a
//! step: no entry of its own), [`UrlState::push`] adds an entry (a preset, an import: Back
//! returns to the set-up before it), and [`UrlState::follow`] brings the page along when the
//! query changes under it (Back, Forward, a link to the same page), never for the page's own
//! writes.

use crate::route::{use_router, Router};
use leptos::prelude::*;
use std::collections::BTreeMap;

/// A query string's decoded pairs (the last value of a repeated key wins).
pub fn pairs(query: &str) -> BTreeMap<String, String> {
    trainer_course::sizing::query_pairs(query)
}

/// A page's handle on the query string. Take it with [`use_url_state`] while the page is
/// built (event handlers run outside the component's owner).
#[derive(Clone, Copy)]
pub struct UrlState {
    router: Router,
    /// The query the page last wrote or followed: a change to anything else came from outside.
    known: StoredValue<String>,
}

/// The current page's [`UrlState`].
pub fn use_url_state() -> UrlState {
    let router = use_router();
    UrlState {
        router,
        known: StoredValue::new(router.query.get_untracked()),
    }
}

impl UrlState {
    /// The page's state as `parse` reads it from the query string now.
    pub fn read<T>(&self, parse: impl FnOnce(&str) -> T) -> T {
        self.router.query.with_untracked(|q| parse(q))
    }

    /// Rewrites the current entry's query (no history entry); nothing when it is already so.
    pub fn replace(&self, query: &str) {
        self.known.set_value(query.to_string());
        if self.router.query.with_untracked(|q| q != query) {
            self.router.replace_query(query);
        }
    }

    /// Adds a history entry for this page with `query` (Back returns to the one before).
    pub fn push(&self, query: &str) {
        self.known.set_value(query.to_string());
        self.router
            .navigate(self.router.route.get_untracked(), query);
    }

    /// Calls `apply` with the state `parse` reads whenever the query changes to one this page
    /// did not write (Back, Forward, a link). An effect: the URL is the world outside Leptos.
    pub fn follow<T: 'static>(
        &self,
        parse: impl Fn(&str) -> T + 'static,
        apply: impl Fn(T) + 'static,
    ) {
        let (router, known) = (self.router, self.known);
        Effect::new(move |_| {
            let query = router.query.get();
            if known.with_value(|k| *k != query) {
                known.set_value(query.clone());
                apply(parse(&query));
            }
        });
    }
}
