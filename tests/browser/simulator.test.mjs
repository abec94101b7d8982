// "How close is the simulator?": the published measurements are replayed in the browser, every
// row gets its simulated figure, held rows land within the band, and the page is reachable
// from every page's footer.

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
      () => /rows land within/.test(document.querySelector('[data-testid="validation-summary"]')?.textContent || ""),
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
    }
    const summary = await page.textContent('[data-testid="validation-summary"]');
    const [, within, held] = summary.match(/(\d+) of (\d+) rows/);
    assert.equal(within, held, summary);
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
