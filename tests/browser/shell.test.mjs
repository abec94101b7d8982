// The app shell: every route renders its page under a sub-path, deep links work on a plain
// static host, navigation stays inside the app, and nothing reaches another origin.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, open, shoot, DESKTOP, PHONE } from "./harness.mjs";

// Each route, the heading it must show, and the header entry it must mark as current.
const ROUTES = [
  { rel: "", name: "home", heading: /Serve Llama 3\.1 8B at 50 requests per second/, nav: "home" },
  { rel: "lesson", name: "lesson", heading: /The strong answer/, nav: "lesson" },
  { rel: "size", name: "size", heading: /Size it up/i, nav: "size" },
  { rel: "size/fleet", name: "size-fleet", heading: /./, nav: "size" },
  { rel: "buildups", name: "buildups", heading: /Build-ups/i, nav: "buildups" },
  { rel: "moments", name: "moments", heading: /Interview moments/i, nav: "moments" },
  { rel: "lab", name: "lab", heading: /Lab/i, nav: "lab" },
  { rel: "advisor", name: "advisor", heading: /serving advisor/i, nav: "advisor" },
  { rel: "mock", name: "mock", heading: /Mock interview/i, nav: "mock" },
  { rel: "simulator", name: "simulator", heading: /How close is the simulator/, nav: null },
  { rel: "no/such/page", name: "not-found", heading: /Page not found/, nav: null },
];

let app;
before(async () => { app = await start({ base: "/trainer/" }); });
after(async () => { await app?.close(); });

for (const viewport of [DESKTOP, PHONE]) {
  test(`every route renders its page at ${viewport.width} px, by direct visit`, async () => {
    for (const r of ROUTES) {
      const page = await app.page(viewport);
      await open(page, app.url, r.rel);
      const h1 = await page.textContent("main h1");
      assert.match(h1, r.heading, `${r.rel}: heading "${h1}"`);
      const current = await page.$$eval('nav [aria-current="page"]', (els) => els.map((e) => e.dataset.testid));
      assert.deepEqual(current, r.nav ? [`nav-${r.nav}`] : [], `${r.rel}: aria-current`);
      // No horizontal scrolling on a phone: the page must fit its width.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `${r.rel}: page is ${overflow}px wider than the ${viewport.width}px viewport`);
      await shoot(page, `${r.name}-${viewport.width}`);
      assert.deepEqual(page.problems, [], `${r.rel}: problems`);
      await page.context().close();
    }
  });
}

test("header links navigate inside the app without reloading, and back works", async () => {
  const page = await app.page();
  await open(page, app.url);
  await page.evaluate(() => { window.__marker = 42; });
  await page.click('[data-testid="nav-lab"]');
  await page.waitForSelector('[data-testid="page-lab"]');
  assert.equal(new URL(page.url()).pathname, "/trainer/lab");
  await page.click('[data-testid="nav-moments"]');
  await page.waitForSelector('[data-testid="page-moments"]');
  assert.equal(await page.getAttribute('[data-testid="nav-moments"]', "aria-current"), "page");
  await page.goBack();
  await page.waitForSelector('[data-testid="page-lab"]');
  assert.equal(await page.evaluate(() => window.__marker), 42, "the page reloaded");
  assert.match(await page.title(), /Lab/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the not-found page offers the way home", async () => {
  const page = await app.page();
  await open(page, app.url, "lesson/extra/deep");
  assert.equal(await page.textContent('[data-testid="missing-path"]'), "/lesson/extra/deep");
  await page.click('[data-testid="go-home"]');
  await page.waitForSelector('[data-testid="page-home"]');
  assert.equal(new URL(page.url()).pathname, "/trainer/");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("unreadable stored progress gets a message and the app keeps working", async () => {
  const page = await app.page();
  await page.addInitScript(() => localStorage.setItem("serving-trainer.progress.v1", "{not json"));
  await open(page, app.url);
  const note = await page.textContent('[data-testid="progress-problem"]');
  assert.match(note, /could not be read/);
  await page.click('[data-testid="nav-home"]');
  await page.waitForSelector('[data-testid="page-home"]');
  assert.equal(await page.textContent('[data-testid="status-size"]'), "Not started");
  await page.click('[data-testid="nav-lesson"]');
  await page.waitForSelector('[data-testid="page-lesson"]');
  await page.click('[data-testid="nav-size"]');
  await page.waitForSelector("main h1");
  await page.click('[data-testid="nav-home"]');
  await page.waitForSelector('[data-testid="page-home"]');
  // Both visits count: the lesson's card and the calculator's say so.
  assert.equal(await page.textContent('[data-testid="status-lesson"]'), "Started");
  assert.equal(await page.textContent('[data-testid="status-size"]'), "Started");
  const stored = await page.evaluate(() => JSON.parse(localStorage.getItem("serving-trainer.progress")));
  assert.deepEqual(stored.done, ["lesson", "size"]);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the home page's figures come from the cost model", async () => {
  const page = await app.page();
  await open(page, app.url);
  assert.match(await page.textContent('[data-testid="fig-prefill"]'), /32\.5 µs/);
  assert.match(await page.textContent('[data-testid="fig-decode"]'), /8\.3 ms/);
  assert.match(await page.textContent('[data-testid="fig-throughput"]'), /3,869/);
  assert.match(await page.textContent('[data-testid="fig-kv"]'), /416,103/);
  // The words around them are filled from the seed inputs (content/home.toml types no figure).
  assert.match(await page.textContent('[data-testid="fig-decode"]'), /per decode step at batch 32/);
  assert.match(await page.textContent('[data-testid="page-home"]'), /about 1,000 prompt tokens and streams back about 250/);
  assert.match(await page.textContent("#glance + p"), /Llama 3\.1 8B in BF16 on one H100 SXM 80 GB, at 50 % of peak FLOP\/s and 75 % of HBM bandwidth/);
  await page.context().close();
});

test("the same build works at the root of a host and in dark mode", async () => {
  const root = await start({ base: "/" });
  try {
    const page = await root.page(PHONE, { colorScheme: "dark" });
    await open(page, root.url, "size/fleet");
    assert.equal(await page.getAttribute('[data-testid="nav-size"]', "aria-current"), "page");
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, "rgb(13, 17, 23)", "dark theme background");
    await shoot(page, "size-fleet-375-dark");
    assert.deepEqual(page.problems, []);
    await page.context().close();
  } finally {
    await root.close();
  }
});
