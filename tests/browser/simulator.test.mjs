// "How close is the simulator?": the published measurements are replayed in the browser, every
// row gets its simulated figure and its role (fitted on or held out), rows held to the band land
// within it, the residual plot draws a dot per row, and the page is reachable from every page's
// footer. A run on the validated engine carries the same gaps by regime.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, open, shoot, DESKTOP, PHONE } from "./harness.mjs";

let app;
before(async () => { app = await start({ base: "/trainer/" }); });
after(async () => { await app?.close(); });

for (const viewport of [DESKTOP, PHONE]) {
  test(`the validation table fills in at ${viewport.width} px`, async () => {
    const page = await app.page(viewport);
    await open(page, app.url, "simulator");
    const t0 = Date.now();
    await page.waitForFunction(
      () => /Held out: \d+ of \d+ within/.test(document.querySelector('[data-testid="validation-summary"]')?.textContent || ""),
      null,
      { timeout: 60000 },
    );
    console.log(`validation table at ${viewport.width} px: ${Date.now() - t0} ms to replay every row`);
    const rows = await page.$$eval('[data-testid^="validation-row-"]', (els) => els.map((e) => e.dataset.testid));
    assert.ok(rows.length >= 9, `${rows.length} rows`);
    for (const r of rows) {
      const id = r.replace("validation-row-", "");
      const sim = await page.textContent(`[data-testid="validation-simulated-${id}"]`);
      assert.match(sim, /^[0-9][0-9,.]*$/, `${id}: simulated "${sim}"`);
      const gap = await page.textContent(`[data-testid="validation-gap-${id}"]`);
      assert.match(gap, /within the band|not held to the band/, `${id}: gap "${gap}"`);
      assert.match(await page.textContent(`[data-testid="validation-role-${id}"]`), /^(Fitted on|Held out)$/);
    }
    const summary = await page.textContent('[data-testid="validation-summary"]');
    const [, fw, fn] = summary.match(/Fitted on: (\d+) of (\d+) within/);
    const [, hw, hn] = summary.match(/Held out: (\d+) of (\d+) within/);
    assert.equal(fw, fn, summary);
    assert.equal(hw, hn, summary);
    assert.ok(Number(hn) >= 8, summary);
    // The residual plot: a dot per row held to the band, and the band's two lines (two points each).
    const held = Number(fn) + Number(hn);
    await page.waitForFunction(
      (n) => Number(document.querySelector('[data-testid="validation-residuals-canvas"]')?.dataset.drawn) === n + 4,
      held,
      { timeout: 10000 },
    );
    assert.equal(await page.locator('[data-testid="validation-residuals-table"] tbody tr').count(), held);
    assert.ok((await page.locator('[data-testid="validation-leaves-out"] li').count()) > 0);
    assert.match(await page.textContent('[data-testid="metric-tpot"]'), /TPOT/);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `page is ${overflow}px wider than the viewport`);
    await shoot(page, `simulator-table-${viewport.width}`);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
}

test("the footer links to the page from anywhere, inside the app", async () => {
  const page = await app.page();
  await open(page, app.url, "size");
  await page.click('[data-testid="footer-simulator"]');
  await page.waitForSelector('[data-testid="page-simulator"]');
  assert.equal(new URL(page.url()).pathname, "/trainer/simulator");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a run on the validated engine says how far that engine lands from published measurements", async () => {
  const page = await app.page();
  await open(page, app.url, "size/fleet?reveal=all");
  await page.click('[data-testid="check-sim"]');
  await page.waitForSelector('[data-testid="simcheck-engine"][data-engine="validated"]', { timeout: 60000 });
  const note = page.locator('[data-testid="simcheck-engine-confidence"]');
  // Closed until asked: nothing is replayed before the learner opens it.
  assert.equal(await note.locator('[data-testid="simcheck-engine-confidence-line"]').count(), 0);
  await note.locator("summary").focus();
  await page.keyboard.press("Enter");
  await page.waitForSelector('[data-testid="simcheck-engine-confidence-line"]', { timeout: 60000 });
  const lines = await note.locator('[data-testid="simcheck-engine-confidence-line"]').allTextContents();
  const regimes = await note.locator('[data-testid="simcheck-engine-confidence-line"]').evaluateAll((els) => els.map((e) => e.dataset.regime));
  assert.deepEqual(regimes, ["SmallBatch", "MidBatch", "LargeBatch", "Fp8"]);
  for (const l of lines) assert.match(l, /\d+ rows \(\d+ held out\), the furthest [0-9.]+ ?% away, [0-9.]+ ?% on average\.$/, l);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
