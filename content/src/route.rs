//! The app's routes: which paths are pages, and each page's place in the header.
//!
//! Pure data, so content links are checked natively (every `Inline::Link` in `content/` must
//! parse to a page, not [`Route::NotFound`]); the app's router (`app/src/route.rs`) reads the
//! browser's location and history around it.

/// A page of the app.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    Home,
    Lesson,
    /// `/size` lists the questions; `/size/<question>` works one through.
    SizeIndex,
    Size(String),
    BuildUps,
    BuildUp(String),
    Moments,
    Moment(String),
    Lab,
    Mock,
    /// `/mock/report`: the last mock interview as a printable report.
    MockReport,
    /// How close the simulator comes to published measurements.
    Simulator,
    /// The serving advisor: the cheapest configuration that holds the targets.
    Advisor,
    NotFound(String),
}

/// The first path segments that start a route: the same list as `roots` in the inline script
/// of `index.html`, which works out the base path before the app loads (a browser test
/// compares the two).
pub const ROOTS: [&str; 8] = [
    "lesson",
    "size",
    "buildups",
    "moments",
    "lab",
    "advisor",
    "mock",
    "simulator",
];

impl Route {
    /// Parses a path relative to the app's base (no leading slash needed).
    pub fn parse(rel: &str) -> Route {
        let mut segs: Vec<&str> = rel.split('/').filter(|s| !s.is_empty()).collect();
        // A page's own file (`size/fleet/index.html`, which the build writes) is the page.
        if segs.len() > 1 && segs.last() == Some(&"index.html") {
            segs.pop();
        }
        // Only the known first segments start a page (the list index.html resolves bases by).
        if let Some(first) = segs.first() {
            if !ROOTS.contains(first) && !matches!(*first, "index.html" | "404.html") {
                return Route::NotFound(rel.to_string());
            }
        }
        match segs.as_slice() {
            [] | ["index.html"] | ["404.html"] => Route::Home,
            ["lesson"] => Route::Lesson,
            ["size"] => Route::SizeIndex,
            ["size", q] => Route::Size((*q).to_string()),
            ["buildups"] => Route::BuildUps,
            ["buildups", id] => Route::BuildUp((*id).to_string()),
            ["moments"] => Route::Moments,
            ["moments", id] => Route::Moment((*id).to_string()),
            ["lab"] => Route::Lab,
            ["mock"] => Route::Mock,
            ["mock", "report"] => Route::MockReport,
            ["simulator"] => Route::Simulator,
            ["advisor"] => Route::Advisor,
            _ => Route::NotFound(rel.to_string()),
        }
    }

    /// Every page there is: each fixed page once, and one page per id for the pages that
    /// take one. The ids come from the lists the app itself reads: `questions` from
    /// `trainer_course::sizing::Question::ALL`, `moments` from `trainer_course::moments`; the
    /// build-ups are this crate's [`crate::buildup::IDS`]. The build writes one HTML file per
    /// entry (see `site/`), so a static host answers every deep link with 200.
    pub fn all(questions: &[&str], moments: &[&str]) -> Vec<Route> {
        let each = |ids: &[&str], page: fn(String) -> Route| -> Vec<Route> {
            ids.iter().map(|id| page((*id).to_string())).collect()
        };
        // One of each kind. The match names every variant (no wildcard), so a new kind of
        // page does not compile until it says which pages it adds.
        let kinds = [
            Route::Home,
            Route::Lesson,
            Route::SizeIndex,
            Route::Size(String::new()),
            Route::BuildUps,
            Route::BuildUp(String::new()),
            Route::Moments,
            Route::Moment(String::new()),
            Route::Lab,
            Route::Mock,
            Route::MockReport,
            Route::Simulator,
            Route::Advisor,
            Route::NotFound(String::new()),
        ];
        kinds
            .into_iter()
            .flat_map(|kind| match kind {
                Route::Size(_) => each(questions, Route::Size),
                Route::BuildUp(_) => each(&crate::buildup::IDS, Route::BuildUp),
                Route::Moment(_) => each(moments, Route::Moment),
                Route::NotFound(_) => Vec::new(),
                fixed @ (Route::Home
                | Route::Lesson
                | Route::SizeIndex
                | Route::BuildUps
                | Route::Moments
                | Route::Lab
                | Route::Mock
                | Route::MockReport
                | Route::Simulator
                | Route::Advisor) => vec![fixed],
            })
            .collect()
    }

    /// The path relative to the base, without a leading slash ("" for home).
    pub fn path(&self) -> String {
        match self {
            Route::Home => String::new(),
            Route::Lesson => "lesson".into(),
            Route::SizeIndex => "size".into(),
            Route::Size(q) => format!("size/{q}"),
            Route::BuildUps => "buildups".into(),
            Route::BuildUp(id) => format!("buildups/{id}"),
            Route::Moments => "moments".into(),
            Route::Moment(id) => format!("moments/{id}"),
            Route::Lab => "lab".into(),
            Route::Mock => "mock".into(),
            Route::MockReport => "mock/report".into(),
            Route::Simulator => "simulator".into(),
            Route::Advisor => "advisor".into(),
            Route::NotFound(p) => p.clone(),
        }
    }

    /// Which header entry this page belongs to.
    pub fn section(&self) -> Section {
        match self {
            Route::Home | Route::NotFound(_) | Route::Simulator => Section::Home,
            Route::Lesson => Section::Lesson,
            Route::SizeIndex | Route::Size(_) => Section::Size,
            Route::BuildUps | Route::BuildUp(_) => Section::BuildUps,
            Route::Moments | Route::Moment(_) => Section::Moments,
            Route::Lab => Section::Lab,
            Route::Advisor => Section::Advisor,
            Route::Mock | Route::MockReport => Section::Mock,
        }
    }

    /// The document title for this page.
    pub fn title(&self) -> String {
        let page = match self {
            Route::Home => return "Serving LLMs: the interview trainer".into(),
            Route::NotFound(_) => "Page not found",
            Route::Simulator => "How close is the simulator?",
            Route::MockReport => "Mock interview report",
            _ => self.section().label(),
        };
        format!("{page} · Serving LLMs")
    }
}

/// The header's entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Home,
    Lesson,
    Size,
    BuildUps,
    Moments,
    Lab,
    Advisor,
    Mock,
}

impl Section {
    pub const NAV: [Section; 8] = [
        Section::Home,
        Section::Lesson,
        Section::Size,
        Section::BuildUps,
        Section::Moments,
        Section::Lab,
        Section::Advisor,
        Section::Mock,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Section::Home => "Home",
            Section::Lesson => "Lesson",
            Section::Size => "Size it up",
            Section::BuildUps => "Build-ups",
            Section::Moments => "Interview moments",
            Section::Lab => "Lab",
            Section::Advisor => "Advisor",
            Section::Mock => "Mock interview",
        }
    }

    pub fn route(self) -> Route {
        match self {
            Section::Home => Route::Home,
            Section::Lesson => Route::Lesson,
            Section::Size => Route::SizeIndex,
            Section::BuildUps => Route::BuildUps,
            Section::Moments => Route::Moments,
            Section::Lab => Route::Lab,
            Section::Advisor => Route::Advisor,
            Section::Mock => Route::Mock,
        }
    }

    /// Stable id for `data-testid`.
    pub fn id(self) -> &'static str {
        match self {
            Section::Home => "home",
            Section::Lesson => "lesson",
            Section::Size => "size",
            Section::BuildUps => "buildups",
            Section::Moments => "moments",
            Section::Lab => "lab",
            Section::Advisor => "advisor",
            Section::Mock => "mock",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_page_parses_back_to_itself_and_every_root_has_one() {
        let all = Route::all(&["fleet", "batch"], &["routing"]);
        for r in &all {
            assert_eq!(Route::parse(&r.path()), *r, "{r:?}");
            assert!(!matches!(r, Route::NotFound(_)));
        }
        for root in ROOTS {
            assert!(
                all.iter().any(|r| r.path().split('/').next() == Some(root)),
                "no page under /{root}"
            );
        }
        assert!(all.contains(&Route::Size("batch".into())));
        assert!(all.contains(&Route::BuildUp("fleet".into())));
        assert!(all.contains(&Route::Moment("routing".into())));
        assert!(all.contains(&Route::MockReport));
        assert_eq!(
            Route::parse("size/fleet/index.html"),
            Route::Size("fleet".into())
        );
        assert_eq!(Route::parse("index.html"), Route::Home);
    }
}
