// The page's module is split (tools/split.mjs): a page downloads the frame and its own piece,
// not the others'; another page's piece arrives when that page is opened; the first paint is
// never replaced by an empty frame, and the footer does not jump while a page is drawn.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, open, PHONE } from "./harness.mjs";

let app;
before(async () => { app = await start({ base: "/trainer/" }); });
after(async () => { await app?.close(); });

/** The split pieces (page pieces `split_<name>-<hash>.wasm`) a page has requested so far. */
function watchPieces(page) {
  const seen = [];
  page.on("request", (req) => {
    const m = new URL(req.url()).pathname.match(/\/split_([a-z_]+?)_\d+-[0-9a-f]+\.wasm$/);
    if (m) seen.push(m[1]);
  });
  return seen;
}

test("a landing page loads its own piece of the module, and another page's only when it is opened", async () => {
  const page = await app.page();
  const pieces = watchPieces(page);
  await open(page, app.url, "");
  assert.deepEqual(pieces, ["home_page"], "the home page's pieces");
  await page.click('[data-testid="nav-lab"]');
  await page.waitForSelector('[data-testid="lab-run"]', { timeout: 20000 });
  assert.deepEqual(pieces, ["home_page", "lab_page"], "after opening the lab");
  // Back to the start page: its piece is already here.
  await page.goBack();
  await page.waitForSelector("body > main h1");
  assert.match(await page.textContent("body > main h1"), /Serve Llama 3\.1 8B/);
  assert.deepEqual(pieces, ["home_page", "lab_page"], "nothing fetched again");
  // Both calculators' routes share one piece.
  await open(page, app.url, "size");
  await page.click('a[href$="size/fleet"]');
  await page.waitForSelector('[data-testid="size-page"], main h1', { timeout: 20000 });
  assert.equal(pieces.filter((p) => p === "size_pages").length, 1, `pieces: ${pieces.join(", ")}`);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the first paint stays until the page is drawn, and nothing on screen shifts as it is", async () => {
  for (const rel of ["", "lesson", "size/fleet", "lab"]) {
    const page = await app.page(PHONE);
    await page.addInitScript(() => {
      window.__shifts = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) if (!e.hadRecentInput) window.__shifts.push(e.value);
      }).observe({ type: "layout-shift", buffered: true });
      // Record whether <main> was ever empty of a heading once the first paint had gone.
      window.__emptyFrame = false;
      new MutationObserver(() => {
        if (!document.getElementById("boot") && document.querySelector("body > main") && !document.querySelector("body > main h1")) {
          window.__emptyFrame = true;
        }
      }).observe(document, { childList: true, subtree: true });
    });
    await open(page, app.url, rel);
    await page.waitForTimeout(300);
    const [shift, empty] = await page.evaluate(() => [window.__shifts.reduce((a, b) => a + b, 0), window.__emptyFrame]);
    assert.equal(empty, false, `${rel || "home"}: an empty frame replaced the first paint`);
    assert.ok(shift < 0.01, `${rel || "home"}: layout shift ${shift.toFixed(4)}`);
    assert.deepEqual(page.problems, [], `${rel || "home"}: problems`);
    await page.context().close();
  }
});
