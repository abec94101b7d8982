// The page's module is split (tools/split.mjs): a page downloads the frame and its own piece,
// not the others'; another page's piece arrives when that page is opened; the first paint is
// never replaced by an empty frame, and the footer does not jump while a page is drawn.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, open, missDrill, PHONE } from "./harness.mjs";

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

// Regression: the loader wasm-split-cli writes started every file of a page (its piece and some
// thirty chunks) in one task, which with DevTools watching the network held the main thread
// for some 40 ms (the lab's longest task under Lighthouse). tools/split.mjs has each file's fetch
// start in a task of its own: no two of the module's files are fetched in one run of script.
test("each of a page's pieces is fetched in a task of its own", async () => {
  const page = await app.page();
  await page.addInitScript(() => {
    const plain = window.fetch;
    let run = 0;
    let inRun = false;
    window.__wasmFetches = [];
    window.fetch = function (input, init) {
      // Calls in one synchronous run of script share its number: a microtask ends the run.
      if (!inRun) {
        inRun = true;
        run += 1;
        queueMicrotask(() => { inRun = false; });
      }
      const url = String(input instanceof Request ? input.url : input);
      if (url.endsWith(".wasm")) window.__wasmFetches.push({ file: url.split("/").pop(), run });
      return plain.call(this, input, init);
    };
  });
  await open(page, app.url, "lab");
  const fetches = await page.evaluate(() => window.__wasmFetches);
  const pieces = fetches.filter((f) => /^(split|chunk|bundle)_/.test(f.file));
  assert.ok(pieces.length >= 5, `the lab fetched ${pieces.length} pieces: ${fetches.map((f) => f.file).join(", ")}`);
  const runs = new Map();
  for (const f of pieces) runs.set(f.run, [...(runs.get(f.run) ?? []), f.file]);
  const shared = [...runs.values()].filter((files) => files.length > 1);
  assert.deepEqual(shared, [], "pieces fetched in one run of script");
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

test("a region drawn from its own piece arrives after the page, and the page counts as drawing until it is in", async () => {
  const page = await app.page();
  const pieces = watchPieces(page);
  // `open` waits until the root loses data-drawing (tests/browser/harness.mjs): by then every
  // lazily loaded region must be in the page.
  await open(page, app.url, "lesson");
  assert.deepEqual(pieces.slice(0, 2), ["lesson_page", "widgets"], `pieces: ${pieces.join(", ")}`);
  assert.equal(await page.locator('[data-testid="estimate-replicas"]').count(), 1, "the lesson's estimate box");
  assert.equal(await page.locator('[data-testid="diagram-request-path"]').count(), 1, "the lesson's diagram");
  await open(page, app.url, "size/fleet");
  for (const p of ["size_pages", "below"]) assert.ok(pieces.includes(p), `${p} in ${pieces.join(", ")}`);
  for (const id of ["simcheck", "sensitivity"]) {
    assert.equal(await page.locator(`[data-testid="${id}"]`).count(), 1, id);
  }
  assert.deepEqual(page.problems, []);
  await page.context().close();
  // A deep link to a part of a lazily loaded region scrolls to it once it is drawn.
  const deep = await app.page();
  await open(deep, app.url, "size/fleet#simcheck-h");
  await deep.waitForFunction(() => {
    const r = document.getElementById("simcheck-h")?.getBoundingClientRect();
    return r && r.top >= -2 && r.top < window.innerHeight / 2;
  }, null, { timeout: 10000 });
  assert.deepEqual(deep.problems, []);
  await deep.context().close();
});

test("the due list reads its labels from a piece fetched only when something is due", async () => {
  const page = await app.page();
  const pieces = watchPieces(page);
  await open(page, app.url, "");
  assert.ok(!pieces.includes("due_entries"), "nothing is due on a fresh profile");
  // A drill answered wrong today is due today.
  await open(page, app.url, "size/fleet");
  const target = await missDrill(page);
  await page.click('[data-testid="brand"]');
  await page.waitForSelector('[data-testid="due-today"]');
  const item = `[data-testid="due-drill-fleet-${target}"]`;
  await page.waitForSelector(item, { timeout: 20000 });
  assert.ok(pieces.includes("due_entries"), `pieces: ${pieces.join(", ")}`);
  assert.match(await page.textContent(item), /^Drill: Size the fleet, /);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the one stylesheet holds every rule of the source stylesheets, in their order", async () => {
  const fs = await import("node:fs");
  const path = await import("node:path");
  const repo = path.resolve(import.meta.dirname, "..", "..");
  const index = fs.readFileSync(path.join(repo, "index.html"), "utf8");
  const sources = [...index.matchAll(/<link data-trunk rel="css" href="([^"]+)">/g)].map((m) => fs.readFileSync(path.join(repo, m[1]), "utf8"));
  assert.ok(sources.length > 1, "index.html names its stylesheets");
  const page = await app.page();
  await open(page, app.url, "");
  const [served, source, sheets] = await page.evaluate((texts) => {
    const rules = (sheet) => [...sheet.cssRules].map((r) => r.cssText);
    const parsed = texts.flatMap((t) => {
      const s = new CSSStyleSheet();
      s.replaceSync(t);
      return rules(s);
    });
    return [rules(document.styleSheets[0]), parsed, document.styleSheets.length];
  }, sources).then(([a, b, n]) => {
    // White space outside strings means nothing in CSS; a value the browser keeps as written
    // (a custom property's, or one with `var()`) keeps the source's line breaks.
    const ws = (rules) => rules.map((r) => r.replace(/\s+/g, " "));
    return [ws(a), ws(b), n];
  });
  assert.equal(sheets, 1, "one stylesheet");
  assert.ok(source.length > 100, `rules: ${source.length}`);
  assert.deepEqual(served, source);
  await page.context().close();
});
