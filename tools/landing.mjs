// The landing pages: where a learner arrives, and what each must download before it is usable.
// One list for the first-load budget (tests/budget.mjs) and for the split (tools/split.mjs),
// which bundles the shared chunks these pages fetch so that each fetches few files.
//
// Each row: a name, the page's HTML file in the build, the split point of its page (a
// `#[lazy]` function in app/src/pages/mod.rs: its piece and the chunks it needs load before
// the page is drawn), the split points of the regions the page draws when their piece arrives
// (`lazy_region`: below the first screen, or only when the learner has something due), and
// and the page's budget ("target": the 350 KB gzipped, tests/budget.mjs).
export const LANDING = [
  ["home", "index.html", "home_page", ["due_entries"], "target"],
  ["lesson", "lesson/index.html", "lesson_page", ["widgets"], "target"],
  ["calculator", "size/fleet/index.html", "size_pages", ["below"], "target"],
];

/** Every split point a landing page fetches, at once or as its regions arrive. */
export const LANDING_SPLIT_POINTS = LANDING.flatMap(([, , page, regions]) => [page, ...regions]);
