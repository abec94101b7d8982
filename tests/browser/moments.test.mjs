// Interview moments: answer each one, see every option's figures and the verdict, try again,
// reload and find the attempt kept; keyboard-only answering; the 375 px layout; and how long
// each moment's runs take in the browser (printed, and bounded per slice).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, open, shoot, DESKTOP, PHONE } from "./harness.mjs";

let app;
before(async () => { app = await start({ base: "/trainer/" }); });
after(async () => { await app?.close(); });

const KEY = "serving-trainer.progress";
const MOMENTS = ["routing", "autoscaler", "rag", "self-host", "long-prompts", "ttft-gap", "halve-cost", "spec-latency", "cheapest-fleet", "disconnect", "disaggregate", "long-chats", "adapters"];

test("the list shows every moment and opens each", async () => {
  const page = await app.page();
  await open(page, app.url, "moments");
  for (const id of MOMENTS) {
    assert.equal(await page.locator(`[data-testid="moment-card-${id}"]`).count(), 1, id);
  }
  await page.click('[data-testid="open-moment-rag"]');
  await page.waitForSelector('[data-testid="page-moment-rag"]');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("each moment: commit an answer, every option runs, the verdict and the winner show", async () => {
  const page = await app.page();
  const timings = [];
  for (const id of MOMENTS) {
    await open(page, app.url, `moments/${id}`);
    // Nothing is revealed before an answer is committed.
    assert.equal(await page.locator('[data-testid="moment-results"]').count(), 0);
    assert.ok(await page.isDisabled('[data-testid="commit-answer"]'));
    const options = await page.locator('[data-testid^="option-"]').evaluateAll((els) => els.map((e) => e.dataset.testid.slice(7)));
    assert.ok(options.length >= 3 && options.length <= 5, `${id}: ${options}`);
    // Answer with the first option (never the strong one in a shipped moment).
    await page.check(`[data-testid="option-${options[0]}"]`);
    await page.click('[data-testid="commit-answer"]');
    await page.waitForSelector('[data-testid="moment-results"]', { timeout: 120000 });
    for (const o of options) {
      assert.equal(await page.locator(`[data-testid="result-row-${o}"]`).count(), 1, `${id}: row ${o}`);
      const cells = await page.locator(`[data-testid="result-row-${o}"] td`).evaluateAll((tds) => tds.map((t) => t.textContent));
      assert.ok(cells.some((c) => /\d/.test(c)), `${id}/${o}: ${cells}`);
    }
    const mine = await page.getAttribute('[data-testid="moment-verdict"]', "data-grade");
    assert.match(mine, /^(weak|acceptable)$/, id);
    // Grades agree with the runs: an option whose figure misses the target is weak, its bar
    // is drawn as missing, and the best (rank 0) is graded strong.
    for (const o of options) {
      const grade = o === options[0] ? mine : await page.getAttribute(`[data-testid="why-${o}"]`, "data-grade");
      const misses = await page.locator(`[data-testid="result-row-${o}"] td.miss`).count();
      if (misses) assert.equal(grade, "weak", `${id}/${o} misses the target`);
      if (await page.locator('[data-testid="moment-chart"]').count()) {
        assert.equal(await page.getAttribute(`[data-testid="bar-${o}"]`, "data-miss"), String(misses > 0), `${id}/${o} bar`);
      }
    }
    const winner = (await page.locator('[data-testid^="result-row-"][data-rank="0"]').getAttribute("data-testid")).slice(11);
    assert.notEqual(winner, options[0], `${id}: the first option wins`);
    assert.equal(await page.getAttribute(`[data-testid="why-${winner}"]`, "data-grade"), "strong", `${id}: ${winner}`);
    assert.equal(await page.locator('[data-testid="moment-chart"] .bar').count(), options.length);
    // Every reason is filled from the runs: no placeholder is left.
    assert.doesNotMatch(await page.textContent("main"), /\{[a-z-]+\.[a-z_0-9]+\}/, id);
    assert.ok((await page.textContent('[data-testid="moment-closing"]')).length > 100);
    const t = await page.locator('[data-testid="moment-time"]').count()
      ? Number(await page.getAttribute('[data-testid="moment-time"]', "data-value")) : 0;
    const longest = t ? Number(await page.getAttribute('[data-testid="moment-time"]', "data-longest")) : 0;
    timings.push(`${id}: ${Math.round(t)} ms in all, longest read of a worker reply ${Math.round(longest)} ms`);
    if (t) assert.ok(longest < 100, `${id}: reading a reply took ${longest} ms`);
    assert.match(await page.evaluate(() => location.search), new RegExp(`choice=${options[0]}`));
  }
  console.log("moment runs in Chromium: " + timings.join("; "));
  const stored = await page.evaluate((k) => JSON.parse(localStorage.getItem(k)), KEY);
  assert.deepEqual(stored.moments.map((a) => a.moment), MOMENTS);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("try again, then the strong answer; a reload keeps the attempts and the committed choice", async () => {
  const page = await app.page();
  await open(page, app.url, "moments/ttft-gap");
  await page.check('[data-testid="option-more-replicas"]');
  await page.click('[data-testid="commit-answer"]');
  await page.waitForSelector('[data-testid="moment-verdict"]', { timeout: 60000 });
  await page.click('[data-testid="try-again"]');
  assert.equal(await page.locator('[data-testid="moment-verdict"]').count(), 0);
  await page.check('[data-testid="option-fixed"]');
  await page.click('[data-testid="commit-answer"]');
  await page.waitForSelector('[data-testid="moment-verdict"]');
  assert.equal(await page.getAttribute('[data-testid="moment-verdict"]', "data-grade"), "strong");
  assert.equal(await page.getAttribute('[data-testid="result-row-fixed"]', "data-rank"), "0");
  const fixed = Number(await page.getAttribute('[data-testid="result-fixed-server_ttft_p99"]', "data-value"));
  const more = Number(await page.getAttribute('[data-testid="result-more-replicas-server_ttft_p99"]', "data-value"));
  assert.ok(fixed * 2 < more, `fixed ${fixed} against more replicas ${more}`);
  await page.reload();
  await page.waitForSelector('[data-testid="moment-verdict"]', { timeout: 60000 });
  assert.equal(await page.getAttribute('[data-testid="moment-verdict"]', "data-grade"), "strong");
  const stored = await page.evaluate((k) => JSON.parse(localStorage.getItem(k)), KEY);
  assert.deepEqual(stored.moments.map((a) => [a.option, a.grade]), [["more-replicas", "weak"], ["fixed", "strong"]]);
  // The list says how the last attempt went.
  await page.click('[data-testid="moments-list"]');
  await page.waitForSelector('[data-testid="page-moments"]');
  assert.match(await page.textContent('[data-testid="moment-status-ttft-gap"]'), /Strong/);
  // "Open in the lab" carries the configuration of the committed answer.
  await open(page, app.url, "moments/ttft-gap?choice=fixed");
  await page.waitForSelector('[data-testid="open-in-lab"]', { timeout: 60000 });
  assert.match(await page.getAttribute('[data-testid="open-in-lab"]', "href"), /lab\?preset=fleet-ttft-gap&arm=fixed/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("by keyboard alone: the estimate, an option and the commit; a bad link is named", async () => {
  const page = await app.page();
  await open(page, app.url, "moments/rag?choice=nonsense");
  assert.match(await page.textContent('[data-testid="bad-choice"]'), /nonsense/);
  await page.focus('[data-testid="moment-estimate-input"]');
  await page.keyboard.type("600");
  await page.keyboard.press("Enter");
  await page.waitForSelector('[data-testid="moment-estimate-derived"]');
  const derived = Number(await page.getAttribute('[data-testid="moment-estimate-derived"]', "data-value"));
  // The parameter FLOPs and attention's (4 × 80 layers × 8,192 per attended position).
  const flops = 8000 * 2 * 70553706496 + 4 * 80 * 8192 * 8000 * 8001 / 2;
  assert.ok(Math.abs(derived - flops / (4 * 989e12 * 0.5) * 1e3) < 1e-6, `${derived}`);
  await page.focus('[data-testid="option-more-replicas"]');
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  assert.ok(await page.isChecked('[data-testid="option-trim-context"]'));
  await page.keyboard.press("Tab");
  await page.keyboard.press("Enter");
  await page.waitForSelector('[data-testid="moment-verdict"]', { timeout: 60000 });
  assert.equal(await page.getAttribute('[data-testid="moment-verdict"]', "data-grade"), "strong");
  const stored = await page.evaluate((k) => JSON.parse(localStorage.getItem(k)), KEY);
  assert.equal(stored.moments[0].estimate, 600);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a moment's answer is run again at other loads, and the page says whether it holds", async () => {
  const page = await app.page();
  await open(page, app.url, "moments/ttft-gap?choice=fixed");
  await page.waitForSelector('[data-testid="moment-results"]', { timeout: 120000 });
  assert.equal(await page.locator('[data-testid="moment-loads-table"]').count(), 0);
  await page.click('[data-testid="run-loads"]');
  await page.waitForSelector('[data-testid="moment-loads-table"]', { timeout: 120000 });
  const rows = await page.locator('[data-testid^="load-row-"]').evaluateAll((els) => els.map((e) => [e.dataset.testid, e.dataset.best]));
  assert.deepEqual(rows.map((r) => r[0]), ["load-row-0.75", "load-row-1", "load-row-1.25"]);
  // Fixing the gap in front of the engine is the best answer at every load, and the page says so.
  assert.ok(rows.every((r) => r[1] === "fixed"), JSON.stringify(rows));
  assert.match(await page.textContent('[data-testid="moment-loads-findings"]'), /stays the best at every load/);
  // The table names each load by its traffic, not a multiplier.
  assert.match(await page.textContent('[data-testid="load-row-1.25"] th'), /req\/s/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("an unknown moment says so, and the page fits 375 px", async () => {
  const page = await app.page(PHONE);
  await open(page, app.url, "moments/nope");
  assert.equal(await page.locator('[data-testid="moment-unknown"]').count(), 1);
  await open(page, app.url, "moments/self-host?choice=api");
  await page.waitForSelector('[data-testid="moment-results"]');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow} px`);
  await shoot(page, "moment-self-host-375");
  const desk = await app.page(DESKTOP, { colorScheme: "dark" });
  await open(desk, app.url, "moments/routing?choice=prefix-affinity");
  await desk.waitForSelector('[data-testid="moment-results"]', { timeout: 60000 });
  await shoot(desk, "moment-routing-1280-dark");
  assert.deepEqual(page.problems, []);
  assert.deepEqual(desk.problems, []);
  await page.context().close();
  await desk.context().close();
});

for (const viewport of [DESKTOP, PHONE]) {
  test(`at ${viewport.width} px a moment says which engine ran it, and reruns on the validated one`, async () => {
    const page = await app.page(viewport);
    await open(page, app.url, "moments/ttft-gap");
    await page.locator('[data-testid^="option-"]').first().check();
    await page.click('[data-testid="commit-answer"]');
    await page.waitForSelector('[data-testid="moment-results"]', { timeout: 120000 });
    // The validated engine teaches: every option ran on it.
    assert.equal(await page.getAttribute('[data-testid="moment-engine"]', "data-engine"), "validated");
    assert.match(await page.textContent('[data-testid="moment-engine"]'), /validated engine/);
    // Every figure of every option (one can be the same on both engines: a proxy's delay).
    const before = (await page.locator('[data-testid^="result-row-"] td').allTextContents()).join(" | ");
    // By keyboard: the switch reruns every option on the brief's assumptions.
    await page.focus('[data-testid="moment-engine-switch"]');
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelector('[data-testid="moment-engine"]')?.dataset.engine === "brief", null, { timeout: 120000 });
    await page.waitForSelector('[data-testid="moment-results"]', { timeout: 120000 });
    assert.match(await page.evaluate(() => location.search), /engine=brief/);
    assert.match(await page.textContent('[data-testid="moment-engine"]'), /brief's assumptions/);
    const after = (await page.locator('[data-testid^="result-row-"] td').allTextContents()).join(" | ");
    assert.notEqual(after, before, "the brief's engine gives other figures");
    assert.equal(await page.getAttribute('[data-testid="moment-engine-switch"]', "data-to"), "validated");
    // A reload keeps the engine.
    await page.reload();
    await page.waitForSelector('[data-testid="moment-results"]', { timeout: 120000 });
    await page.waitForSelector('[data-testid="moment-engine"][data-engine="brief"]');
    // Trying again keeps the engine in the link.
    await page.click('[data-testid="try-again"]');
    await page.waitForFunction(() => location.search === "?engine=brief");
    // An engine the trainer does not know is named, and the validated one runs.
    await open(page, app.url, "moments/ttft-gap?choice=more-replicas&engine=turbo");
    assert.match(await page.textContent('[data-testid="bad-engine"]'), /turbo/);
    await page.waitForSelector('[data-testid="moment-engine"][data-engine="validated"]', { timeout: 120000 });
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
}

test("the search moment: each option is a configuration, the search sizes each, and the advisor is a click away", async () => {
  const page = await app.page();
  await open(page, app.url, "moments/cheapest-fleet");
  // Before the commit: each option names its settings and no fleet size is shown.
  assert.match(await page.textContent('[data-testid="settings-fp8-256"]'), /Max sequences per step: 256/);
  assert.match(await page.textContent('[data-testid="settings-bf16-32"]'), /Max sequences per step: 32/);
  assert.equal(await page.locator('[data-testid="moment-results"]').count(), 0);
  await page.check('[data-testid="option-fp8-256"]');
  await page.click('[data-testid="commit-answer"]');
  await page.waitForSelector('[data-testid="moment-results"]', { timeout: 120000 });
  assert.equal(await page.getAttribute('[data-testid="moment-verdict"]', "data-grade"), "strong");
  // Every option was sized: a whole number of replicas, and its bill is replicas × GPUs × price.
  for (const o of ["bf16-32", "bf16-256", "tp2", "fp8-32", "fp8-256"]) {
    const n = Number(await page.getAttribute(`[data-testid="result-${o}-replicas"]`, "data-value"));
    const gpus = Number(await page.getAttribute(`[data-testid="result-${o}-gpus"]`, "data-value"));
    const bill = Number(await page.getAttribute(`[data-testid="result-${o}-dollars_per_hour"]`, "data-value"));
    assert.ok(Number.isInteger(n) && n >= 1, `${o}: ${n}`);
    assert.equal(gpus, n * (o === "tp2" ? 2 : 1), o);
    assert.ok(Math.abs(bill - gpus * 2.5) < 1e-9, `${o}: ${bill}`);
  }
  assert.match(await page.getAttribute('[data-testid="open-in-advisor"]', "href"), /\/trainer\/advisor$/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
