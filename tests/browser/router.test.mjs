// The router as a reader meets it: every first segment index.html resolves a base by is a
// page of the app (the two route lists agree), navigation moves focus to the new page's
// heading, Back restores the scroll position, and a crash shows a notice instead of a dead page.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { start, open, repo } from "./harness.mjs";

let app;
before(async () => { app = await start({ base: "/trainer/" }); });
after(async () => { await app?.close(); });

function listIn(file, pattern) {
  const text = fs.readFileSync(path.join(repo, file), "utf8");
  const m = text.match(pattern);
  assert.ok(m, `no route list in ${file}`);
  return [...m[1].matchAll(/"([^"]+)"/g)].map((x) => x[1]);
}

test("index.html and the app's route table list the same first segments, and each opens a page", async () => {
  const html = listIn("index.html", /var roots = \[([^\]]*)\]/);
  const rust = listIn("content/src/route.rs", /pub const ROOTS: \[&str; \d+\] = \[([^\]]*)\]/);
  assert.deepEqual(html, rust);
  const page = await app.page();
  for (const root of html) {
    await open(page, app.url, root);
    assert.equal(await page.locator('[data-testid="page-not-found"]').count(), 0, `/${root} is not found`);
  }
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("navigation focuses the new page's heading and Back restores the scroll position", async () => {
  // The lesson's layout holds still (the simulator page replays its rows as it opens, and
  // rows that fill in above the viewport move it under a loaded machine).
  const page = await app.page({ width: 1280, height: 500 });
  await open(page, app.url, "lesson");
  await page.evaluate(() => window.scrollTo(0, 900));
  await page.waitForFunction(() => window.scrollY > 800);
  const before = await page.evaluate(() => window.scrollY);
  await page.click('[data-testid="nav-size"]');
  await page.waitForSelector('[data-testid="page-size"]');
  await page.waitForFunction(() => document.activeElement && document.activeElement.matches("main h1"));
  assert.equal(await page.evaluate(() => window.scrollY), 0);
  await page.goBack();
  await page.waitForSelector('[data-testid="page-lesson"]');
  await page.waitForFunction((y) => Math.abs(window.scrollY - y) < 2, before);
  assert.ok(await page.evaluate(() => document.activeElement.matches("main h1")));
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a panic shows a notice that says how to recover", async () => {
  const page = await app.page();
  await open(page, app.url);
  await page.waitForFunction(() => window.wasmBindings && window.wasmBindings.panic_for_test);
  await page.evaluate(() => { try { window.wasmBindings.panic_for_test(); } catch (e) { /* the abort surfaces here */ } });
  await page.waitForSelector('[data-testid="crash-notice"]');
  assert.match(await page.textContent('[data-testid="crash-notice"]'), /Reload the page/);
  await page.context().close();
});
