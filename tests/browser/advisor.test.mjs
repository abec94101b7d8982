// The serving advisor: a learner sets the traffic and the choices by keyboard, runs the search
// in the simulators' workers, reads the answer chosen from the runs, opens a configuration in
// the lab from its table row and from its dot on the plot, comes back with Back; bad fields
// are named and block the search; a search can be stopped.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, open, shoot, DESKTOP, PHONE } from "./harness.mjs";

let app;
before(async () => { app = await start({ base: "/trainer/" }); });
after(async () => { await app?.close(); });

const tid = (id) => `[data-testid="${id}"]`;
// A small search: two formats and two batch limits on one GPU, at a fifth of the seed's rate.
const SMALL = "rate=10&tp=1&weights=bf16%2Cfp8&max_seqs=64%2C128&budget=2048";

/** Runs the search on the page by keyboard and waits for its answer. */
async function search(page) {
  await page.focus(tid("advisor-run"));
  await page.keyboard.press("Enter");
  await page.waitForSelector(tid("advisor-running"), { timeout: 10000 }).catch(() => {});
  await page.waitForSelector(tid("advisor-answer"), { timeout: 120000 });
}

for (const viewport of [DESKTOP, PHONE]) {
  test(`a search finds the cheapest configuration and says why, at ${viewport.width} px`, async () => {
    const page = await app.page(viewport);
    await open(page, app.url, `advisor?${SMALL}`);
    assert.equal(await page.inputValue(tid("adv-rate")), "10");
    assert.equal(await page.isChecked(tid("advtick-weights-fp8")), true);
    assert.equal(await page.isChecked(tid("advtick-weights-fp8-weight-only")), false);
    // Predict, then reveal: a guess typed before the search is set beside what it found.
    await page.fill(tid("adv-guess"), "2");
    const t0 = Date.now();
    await search(page);
    console.log(`advisor search at ${viewport.width} px: ${Date.now() - t0} ms`);
    const guess = await page.textContent(tid("advisor-guess"));
    assert.match(guess, /^You guessed 2 GPUs(, as many as|: \d+ (more|fewer) than the \d+) the runs needed/, guess);
    const best = await page.textContent(tid("advisor-best"));
    assert.match(best, /on \d+ replicas? \(\d+ GPUs?\) for \$[0-9.,]+ an hour/, best);
    assert.match(await page.textContent(tid("advisor-binds")), /replica/);
    assert.match(await page.textContent(tid("advisor-estimate")), /calculator's estimate/);
    const took = await page.textContent(tid("advisor-took"));
    assert.match(took, /^\d+ runs/, took);
    // Four candidates, each at its count; one is the answer, and its count is the one said.
    const rows = await page.$$eval(`${tid("plot-advisor-cost")} ${tid("advisor-row")}`, (els) =>
      els.map((e) => ({ best: e.dataset.best, replicas: e.dataset.replicas })));
    assert.equal(rows.length, 4, JSON.stringify(rows));
    const answer = rows.filter((r) => r.best === "true");
    assert.equal(answer.length, 1);
    assert.match(best, new RegExp(`on ${answer[0].replicas} replica`));
    // Both plots drew a dot per candidate (and the target line).
    for (const plot of ["plot-advisor-cost", "plot-advisor-speed"]) {
      const drawn = Number(await page.getAttribute(tid(`${plot}-canvas`), "data-drawn"));
      assert.ok(drawn >= 4, `${plot}: ${drawn} drawn`);
    }
    await shoot(page, `advisor-${viewport.width}`);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
}

test("a row's link and a dot open that configuration in the lab, and Back returns", async () => {
  const page = await app.page(DESKTOP);
  await open(page, app.url, `advisor?${SMALL}`);
  await search(page);
  const link = page.locator(`${tid("plot-advisor-cost")} [data-testid="advisor-row"][data-best="true"] ${tid("advisor-open-lab")}`);
  const href = await link.getAttribute("href");
  assert.match(href, /lab\?preset=fleet-seed&rate=10&.*replicas=\d+/, href);
  await link.focus();
  await page.keyboard.press("Enter");
  await page.waitForSelector(tid("page-lab"));
  assert.equal(decodeURIComponent(new URL(page.url()).search), decodeURIComponent(new URL(href, page.url()).search));
  const replicas = href.match(/replicas=(\d+)/)[1];
  assert.equal(await page.inputValue(tid("param-replicas")), replicas);
  await page.goBack();
  await page.waitForSelector(tid("page-advisor"));
  assert.equal(await page.inputValue(tid("adv-rate")), "10");
  // A click on a dot of the cost plot opens that dot's row in the lab.
  await search(page);
  const dots = await page.getAttribute(tid("advisor-cost-dots"), "data-dots");
  assert.ok(dots, "the plot says where its dots are");
  const [row, at] = dots.split(";")[0].split(":");
  const [x, y] = at.split(",").map(Number);
  const rowHref = await page
    .locator(`${tid("plot-advisor-cost")} [data-testid="advisor-row"][data-row="${row}"]`)
    .locator(tid("advisor-open-lab"))
    .getAttribute("href");
  await page.locator(tid("plot-advisor-cost-canvas")).click({ position: { x, y } });
  await page.waitForSelector(tid("page-lab"));
  assert.equal(decodeURIComponent(new URL(page.url()).search), decodeURIComponent(new URL(rowHref, page.url()).search));
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a bad field is named, blocks the search and is in the URL; a search can be stopped", async () => {
  const page = await app.page(PHONE);
  await open(page, app.url, "advisor");
  await page.fill(tid("adv-rate"), "-4");
  await page.waitForSelector(tid("error-rate"));
  assert.equal(await page.isDisabled(tid("advisor-run")), true);
  await page.fill(tid("adv-rate"), "20");
  await page.waitForFunction(() => !document.querySelector('[data-testid="error-rate"]'));
  assert.match(new URL(page.url()).search, /rate=20/);
  // Unticking every batch limit is refused on that choice.
  for (const v of ["64", "128", "256"]) await page.click(tid(`advtick-max_seqs-${v}`));
  await page.waitForSelector(tid("error-max_seqs"));
  await page.click(tid("advtick-max_seqs-128"));
  await page.waitForFunction(() => !document.querySelector('[data-testid="error-max_seqs"]'));
  // Speculation is one more choice: ticking a proposer puts it in the URL beside off.
  assert.equal(await page.isChecked(tid("advtick-spec-off")), true);
  await page.click(tid("advtick-spec-eagle"));
  await page.waitForFunction(() => /spec=off(%2C|,)eagle/.test(location.search));
  // A guess that is not a whole number is named, and nothing runs.
  await page.fill(tid("adv-guess"), "two");
  await page.click(tid("advisor-run"));
  await page.waitForSelector(tid("error-guess"));
  assert.equal(await page.locator(tid("advisor-running")).count(), 0);
  await page.fill(tid("adv-guess"), "");
  await page.click(tid("advisor-run"));
  await page.waitForSelector(tid("advisor-running"));
  await page.click(tid("advisor-stop"));
  await page.waitForSelector(tid("advisor-stopped"));
  assert.equal(await page.isDisabled(tid("advisor-run")), false);
  // A URL's bad values are named on their fields, and unknown keys in a notice.
  await open(page, app.url, "advisor?tp=7&gpus=nope&colour=red&model=gpt-9&guess=two");
  for (const key of ["tp", "gpus", "model", "guess"]) await page.waitForSelector(tid(`error-${key}`));
  assert.match(await page.textContent(tid("advisor-url-errors")), /colour/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the model is the learner's: a larger one is chosen, kept in the URL, and searched on the split that holds it", async () => {
  const page = await app.page();
  await open(page, app.url, "advisor?tpot=40&tp=1,4&weights=bf16&max_seqs=64&budget=2048");
  assert.equal(await page.inputValue(tid("adv-model")), "llama-3.1-8b");
  await page.selectOption(tid("adv-model"), "llama-3.1-70b");
  await page.waitForFunction(() => /model=llama-3\.1-70b/.test(location.search));
  // One GPU cannot hold the 70B's weights: that split is ruled out with the knob's reason, and
  // the search runs on four.
  await page.click(tid("advisor-run"));
  await page.waitForSelector(tid("advisor-answer"), { timeout: 180000 });
  const pruned = await page.textContent(tid("advisor-pruned"));
  assert.match(pruned, /Tensor parallelism: 1/);
  assert.match(pruned, /no room for a KV cache/);
  assert.match(await page.textContent(tid("advisor-answer")), /Llama 3\.1 70B/);
  // A reload keeps the model.
  await page.reload();
  await page.waitForSelector(tid("adv-model"));
  assert.equal(await page.inputValue(tid("adv-model")), "llama-3.1-70b");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a link carries the guess and the run: opening it runs the same search and sets the guess beside it", async () => {
  const page = await app.page();
  const q = "tp=1&weights=fp8&max_seqs=64&budget=2048";
  await open(page, app.url, "advisor?" + q);
  await page.fill(tid("adv-guess"), "5");
  await page.waitForFunction(() => /guess=5/.test(location.search));
  await page.click(tid("advisor-run"));
  await page.waitForSelector(tid("advisor-answer"), { timeout: 120000 });
  const link = new URL(page.url());
  assert.match(link.search, /guess=5&run=1$/);
  const first = await page.textContent(tid("advisor-best"));
  // The same link in a fresh page: no click, the same answer, the guess set beside it.
  const other = await app.page();
  await other.goto(link.href);
  await other.waitForSelector(tid("advisor-answer"), { timeout: 120000 });
  assert.equal(await other.inputValue(tid("adv-guess")), "5");
  assert.match(await other.textContent(tid("advisor-guess")), /^You guessed 5 GPUs/);
  assert.equal(await other.textContent(tid("advisor-best")), first);
  // Changing the traffic makes the result stale: the link no longer says it ran.
  await other.fill(tid("adv-rate"), "30");
  await other.waitForFunction(() => !/run=1/.test(location.search));
  // A bad run value is named.
  await open(other, app.url, "advisor?run=yes");
  assert.match(await other.textContent(tid("advisor-url-errors")), /run/);
  assert.deepEqual(page.problems, []);
  assert.deepEqual(other.problems, []);
  await page.context().close();
  await other.context().close();
});

test("the traffic can come from a shipped scenario: its rate, model and targets fill the form, and the link names it", async () => {
  const page = await app.page();
  await open(page, app.url, "advisor");
  assert.equal(await page.inputValue(tid("adv-scenario")), "fleet-seed");
  const seedRate = await page.inputValue(tid("adv-rate"));
  await page.selectOption(tid("adv-scenario"), "fleet-rag-70b");
  await page.waitForFunction(() => /scenario=fleet-rag-70b/.test(location.search));
  assert.equal(await page.inputValue(tid("adv-model")), "llama-3.1-70b");
  assert.notEqual(await page.inputValue(tid("adv-rate")), seedRate);
  // A reload keeps it; an unknown one is named on its field.
  await page.reload();
  await page.waitForSelector(tid("adv-scenario"));
  assert.equal(await page.inputValue(tid("adv-scenario")), "fleet-rag-70b");
  await open(page, app.url, "advisor?scenario=fleet-nope");
  await page.waitForSelector(tid("error-scenario"));
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
