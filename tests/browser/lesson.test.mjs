// The lesson: every live figure shows a number and links to a step that exists; the figures
// follow the calculator's inputs; the estimate boxes hide the answer until a number is
// committed, then compare it with the derivation and the simulator and keep it in progress;
// a probe runs both designs; the request-path diagram opens the fleet build-up; the reversal
// compares the batch answer; and printing gives one A4 page.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, open, drawn, shoot, DESKTOP, PHONE } from "./harness.mjs";

let app;
before(async () => { app = await start({ base: "/trainer/" }); });
after(async () => { await app?.close(); });

const KEY = "serving-trainer.progress";
const ESTIMATES = ["replicas", "open_streams", "kv_in_use", "weight_floor", "tpot_batch"];

/** Shows every estimate's answer without estimating, as a reader who skips them would. */
async function revealAll(page) {
  for (const s of ESTIMATES) await page.click(`[data-testid="estimate-${s}-peek"]`);
  await page.waitForSelector('[data-testid="verdict-fleet"]');
}

test("every live figure renders a number and links to a step the calculator shows", async () => {
  const page = await app.page();
  await open(page, app.url, "lesson");
  await revealAll(page);
  const figs = page.locator('.lesson-article [data-testid^="fig-"]');
  const n = await figs.count();
  assert.ok(n >= 20, `only ${n} live figures`);
  const seen = new Map();
  for (let i = 0; i < n; i++) {
    const f = figs.nth(i);
    const id = await f.getAttribute("data-testid");
    const value = Number(await f.getAttribute("data-value"));
    assert.ok(Number.isFinite(value), `${id} has no number`);
    const text = (await f.textContent()).trim();
    // A crossing that no batch reaches reads as a word, with the value zero.
    if (!(id === "fig-roofline-compute_bound_batch" && value === 0)) {
      assert.match(text, /\d/, `${id} shows “${text}”`);
    }
    const href = await f.locator("a").getAttribute("href");
    assert.match(href, /\/trainer\/size\/(fleet|roofline)\?.*reveal=\d+.*#step-/, `${id} links to ${href}`);
    seen.set(id, href);
  }
  // Each distinct target is a step the calculator reveals, holding the same value.
  for (const [id, href] of [...seen].slice(0, 6)) {
    const p = await app.page();
    await p.goto(new URL(href, app.url).href);
    const step = href.split("#step-")[1];
    await p.waitForSelector(`[data-testid="step-${step}"]`, { timeout: 20000 });
    const lessonValue = Number(await page.getAttribute(`[data-testid="${id}"]`, "data-value"));
    const stepValue = Number(await p.getAttribute(`[data-testid="step-${step}"]`, "data-value"));
    assert.equal(stepValue, lessonValue, `${id} against its step`);
    await p.context().close();
  }
  // A click on a figure navigates inside the app, to the step, focused.
  // (Focus moves once the page is drawn whole, its lazily loaded regions too: a moment after
  // the step itself shows.)
  await page.click('[data-testid="fig-fleet-replicas"] a');
  await page.waitForSelector('[data-testid="step-replicas"]');
  await drawn(page);
  assert.equal(await page.evaluate(() => document.activeElement?.id), "step-replicas");
  await page.goBack();
  await page.waitForSelector('[data-testid="page-lesson"]');
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

// Issue 27, part 1: the roofline section. Its estimates are compared with the derivation and
// with the same step on the simulator's engine, and its plot waits until both are answered.
test("the roofline section: predict the floor and the batch, then see the plot", async () => {
  const page = await app.page();
  await open(page, app.url, "lesson#roofline");
  await page.waitForSelector('[data-testid="lesson-roofline-hidden"]');
  // The floor's figure is hidden while its estimate is open.
  assert.equal(await page.locator('[data-testid="fig-roofline-weight_floor"] a').count(), 0);
  const box = "estimate-weight_floor";
  await page.focus(`[data-testid="${box}-input"]`);
  await page.keyboard.type("5");
  await page.keyboard.press("Enter");
  await page.waitForSelector(`[data-testid="${box}-derived"]`);
  const derived = Number(await page.getAttribute(`[data-testid="${box}-derived"]`, "data-value"));
  // In milliseconds: the weights over the bandwidth the brief assumes.
  assert.ok(Math.abs(derived - (16.060522496e9 / (3.35e12 * 0.75)) * 1e3) < 1e-6, `${derived}`);
  const engine = Number(await page.getAttribute(`[data-testid="${box}-simulated"]`, "data-value"));
  assert.ok(engine > 0 && engine !== derived, `${engine}`);
  assert.match(await page.textContent(`[data-testid="${box}-gap"]`), /fixed cost per step/);
  // The plot still waits for the batch estimate; skipping it shows the plot.
  assert.equal(await page.locator('[data-testid="lesson-roofline-hidden"]').count(), 1);
  await page.click('[data-testid="estimate-tpot_batch-peek"]');
  await page.waitForSelector('[data-testid="lesson-roofline-chart-canvas"]:not([data-drawn="0"])');
  assert.equal(await page.getAttribute('[data-testid="fig-roofline-tpot_batch"]', "data-value"), "231");
  // Its verdict reads the fleet's count back, so it also waits for the fleet's estimates.
  assert.equal(await page.locator('[data-testid="verdict-roofline"]').count(), 0);
  for (const s of ["replicas", "open_streams", "kv_in_use"]) await page.click(`[data-testid="estimate-${s}-peek"]`);
  await page.waitForSelector('[data-testid="verdict-roofline"]');
  assert.match(await page.textContent('[data-testid="verdict-roofline"]'), /ridge/);
  // The estimate is kept in progress under the question and step.
  const stored = await page.evaluate((k) => JSON.parse(localStorage.getItem(k)), KEY);
  assert.ok(JSON.stringify(stored).includes("weight_floor"), "the estimate is stored");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the lesson is drawn in slices after its heading, and every part of it arrives", async () => {
  const page = await app.page();
  // Watch the document's root from the first script on: the page marks it while parts of it
  // wait to be drawn (app/src/components/deferred.rs).
  await page.addInitScript(() => {
    window.__drawing = { seen: false, h2AtStart: null };
    new MutationObserver(() => {
      if (document.documentElement.hasAttribute("data-drawing") && !window.__drawing.seen) {
        window.__drawing.seen = true;
        window.__drawing.h2AtStart = document.querySelectorAll(".lesson-article h2").length;
      }
    }).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-drawing"] });
  });
  await open(page, app.url, "lesson");
  const d = await page.evaluate(() => window.__drawing);
  assert.equal(d.seen, true, "the lesson was drawn in one go");
  const sections = await page.locator(".lesson-article h2").count();
  assert.ok(d.h2AtStart < sections, `${d.h2AtStart} of ${sections} sections were there at once`);
  // Every section in the contents is on the page, and the contents' links reach them.
  const toc = await page.locator('.lesson-toc a').evaluateAll((as) => as.map((a) => a.getAttribute("href")));
  assert.ok(toc.length >= 4, `${toc.length} contents links`);
  for (const href of toc) assert.equal(await page.locator(href).count(), 1, `${href} is not on the page`);
});

test("changing an input in the calculator and coming back changes the lesson's figures", async () => {
  const page = await app.page();
  await open(page, app.url, "lesson");
  await revealAll(page);
  const before = Number(await page.getAttribute('[data-testid="fig-fleet-prompt_tps"]', "data-value"));
  const replicas = Number(await page.getAttribute('[data-testid="fig-fleet-replicas"]', "data-value"));
  await page.click('[data-testid="input-fleet-rate"] a');
  await page.waitForSelector('[data-testid="input-rate"]');
  await page.fill('[data-testid="input-rate"]', "100");
  await page.waitForFunction(() => location.search.includes("rate=100"));
  await page.click('[data-testid="nav-lesson"]');
  await page.waitForSelector('[data-testid="page-lesson"]');
  await revealAll(page);
  const after = Number(await page.getAttribute('[data-testid="fig-fleet-prompt_tps"]', "data-value"));
  assert.equal(after, before * 2);
  assert.ok(Number(await page.getAttribute('[data-testid="fig-fleet-replicas"]', "data-value")) > replicas);
  assert.equal(await page.getAttribute('[data-testid="input-fleet-rate"]', "data-value"), "100");
  // The figure's link carries the new inputs into the calculator.
  assert.match(await page.getAttribute('[data-testid="fig-fleet-replicas"] a', "href"), /rate=100/);
  // A reload keeps them: they live in this browser's progress.
  await page.reload();
  await page.waitForSelector('[data-testid="page-lesson"]');
  await revealAll(page);
  assert.equal(Number(await page.getAttribute('[data-testid="fig-fleet-prompt_tps"]', "data-value")), after);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the lesson's conclusions follow the calculator's inputs: 8,000-token prompts, then 70B on four GPUs", async () => {
  const page = await app.page();
  await open(page, app.url, "lesson");
  await revealAll(page);
  const key = (id) => page.getAttribute(`[data-testid="say-fleet-${id}"]`, "data-key");
  const verdict = () => page.textContent('[data-testid="verdict-fleet"]');
  // The seed: HBM bandwidth sets the count; the target leaves room.
  assert.match(await verdict(), /^HBM bandwidth bounds the answer\./);
  assert.equal(await key("decode"), "decode_memory");
  assert.equal(await key("pace"), "pace_faster");
  assert.equal(await key("kv"), "kv_room");
  const setAndReturn = async (change) => {
    await page.click('[data-testid="input-fleet-rate"] a');
    await page.waitForSelector('[data-testid="input-rate"]');
    await change();
    await page.click('[data-testid="nav-lesson"]');
    await page.waitForSelector('[data-testid="page-lesson"]');
    await revealAll(page);
  };
  await setAndReturn(async () => {
    await page.fill('[data-testid="input-prompt_tokens"]', "8000");
    await page.waitForFunction(() => location.search.includes("prompt_tokens=8000"));
  });
  // The decode step now reaches the target: it binds, and the lesson no longer says that
  // replies finish sooner.
  assert.match(await verdict(), /^Compute and the latency target bound the answer\./);
  assert.equal(await key("pace"), "pace_close");
  assert.doesNotMatch(await page.textContent('[data-testid="say-fleet-pace"]'), /finish sooner and fewer/);
  await setAndReturn(async () => {
    await page.fill('[data-testid="input-prompt_tokens"]', "1000");
    await page.fill('[data-testid="input-gpus_per_replica"]', "4");
    await page.selectOption('[data-testid="input-model"]', "llama-3.1-70b");
    await page.waitForFunction(() => location.search.includes("model=llama-3.1-70b"));
  });
  assert.equal(await key("decode"), "decode_memory");
  assert.equal(await key("pace"), "pace_close");
  assert.match(await verdict(), /the latency target also weigh in/);
  assert.match(await page.textContent(".lesson-article"), /the model is Llama 3\.1 70B in BF16/);
  await shoot(page, "lesson-conclusions-70b-tp4");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("an estimate stays hidden until committed, then stands beside the derivation and the simulator", async () => {
  const page = await app.page();
  await open(page, app.url, "lesson");
  const box = '[data-testid="estimate-replicas"]';
  await page.locator(box).scrollIntoViewIfNeeded();
  assert.equal(await page.locator(`${box} [data-testid="estimate-replicas-derived"]`).count(), 0);
  // A bad entry gets a message, not a reveal.
  await page.fill('[data-testid="estimate-replicas-input"]', "lots");
  await page.click('[data-testid="estimate-replicas-commit"]');
  assert.match(await page.textContent(`${box} .field-error`), /Type a number/);
  assert.equal(await page.locator('[data-testid="estimate-replicas-reveal"]').count(), 0);
  // By keyboard: type and press Enter.
  await page.focus('[data-testid="estimate-replicas-input"]');
  await page.fill('[data-testid="estimate-replicas-input"]', "12");
  await page.keyboard.press("Enter");
  await page.waitForSelector('[data-testid="estimate-replicas-derived"]');
  assert.equal(await page.getAttribute('[data-testid="estimate-replicas-yours"]', "data-value"), "12");
  const derived = Number(await page.getAttribute('[data-testid="estimate-replicas-derived"]', "data-value"));
  assert.equal(derived, Number(await page.getAttribute('[data-testid="fig-fleet-replicas"]', "data-value")));
  assert.match(await page.textContent('[data-testid="estimate-replicas-off"]'), /above the derivation/);
  // The simulator runs in slices, then gives its figure and the reason for the gap.
  await page.click('[data-testid="estimate-replicas-simulate"]');
  await page.waitForSelector('[data-testid="estimate-replicas-simulated"]', { timeout: 60000 });
  const sim = Number(await page.getAttribute('[data-testid="estimate-replicas-simulated"]', "data-value"));
  assert.ok(sim >= 1 && sim <= derived + 1, `simulated ${sim}`);
  assert.match(await page.textContent('[data-testid="estimate-replicas-gap"]'), /decode step/);
  // The same run serves the other boxes once they are committed.
  await page.fill('[data-testid="estimate-open_streams-input"]', "250");
  await page.click('[data-testid="estimate-open_streams-commit"]');
  await page.waitForSelector('[data-testid="estimate-open_streams-simulated"]');
  const streams = Number(await page.getAttribute('[data-testid="estimate-open_streams-simulated"]', "data-value"));
  const est = Number(await page.getAttribute('[data-testid="estimate-open_streams-derived"]', "data-value"));
  assert.ok(streams > 0 && streams < est, `simulated streams ${streams} against ${est}`);
  assert.match(await page.textContent('[data-testid="estimate-open_streams-gap"]'), /Little's law/);
  // Both estimates are kept in progress.
  const stored = await page.evaluate((k) => JSON.parse(localStorage.getItem(k)), KEY);
  assert.deepEqual(stored.estimates.map((e) => [e.step, e.estimate]), [["replicas", 12], ["open_streams", 250]]);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the disconnect probe: an engine not told generates for nobody, the fixed design for none", async () => {
  const page = await app.page();
  await open(page, app.url, "lesson#probe-disconnect");
  await page.focus('[data-testid="probe-disconnect-run"]');
  await page.keyboard.press("Enter");
  await page.waitForSelector('[data-testid="probe-disconnect-none"]', { timeout: 60000 });
  const val = async (id) => Number(await page.getAttribute(`[data-testid="probe-disconnect-${id}"]`, "data-value"));
  assert.ok((await val("broken-tokens_for_nobody")) > 1000, "tokens for nobody when the engine is not told");
  assert.equal(await val("fixed-tokens_for_nobody"), 0);
  assert.ok((await val("broken-left_mid_reply")) > 0 && (await val("fixed-left_mid_reply")) > 0);
  assert.ok((await val("broken-engine_tokens")) > (await val("fixed-engine_tokens")));
  assert.match(await page.textContent('[data-testid="probe-disconnect-none"]'), /Tokens sampled after the client had left/);
  assert.equal(await page.locator('[data-testid="probe-disconnect-ratio"]').count(), 0);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the dashboard runs the seed fleet and reads it under the exported metric names", async () => {
  const page = await app.page();
  await open(page, app.url, "lesson#observability");
  await page.focus('[data-testid="dashboard-run"]');
  await page.keyboard.press("Enter");
  await page.waitForSelector('[data-testid^="dashboard-row-"]', { timeout: 60000 });
  const val = async (name, what = "data-value") =>
    Number(await page.getAttribute(`[data-testid="dashboard-value-${name.replace(":", "-")}"]`, what));
  const server = await val("gateway_server_ttft_seconds");
  const engine = await val("vllm:time_to_first_token_seconds");
  assert.ok(engine > 0 && server >= engine, `server ${server}, engine ${engine}`);
  const kvMean = await val("vllm:kv_cache_usage_perc");
  const kvPeak = await val("vllm:kv_cache_usage_perc", "data-peak");
  assert.ok(kvMean > 0 && kvPeak >= kvMean && kvPeak <= 1, `KV ${kvMean} · ${kvPeak}`);
  assert.ok((await val("vllm:generation_tokens_total")) > 1000);
  assert.ok((await val("vllm:request_success_total")) > 100);
  assert.equal(await page.getAttribute('[data-testid="dashboard-engine"]', "data-engine"), "validated");
  assert.equal(await page.locator('[data-testid^="dashboard-row-"]').count(), 10);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a probe runs the broken and the fixed design and links into the lab", async () => {
  const page = await app.page();
  await open(page, app.url, "lesson");
  await page.click('[data-testid="probe-ttft-gap-run"]');
  await page.waitForSelector('[data-testid="probe-ttft-gap-ratio"]', { timeout: 60000 });
  const b = Number(await page.getAttribute('[data-testid="probe-ttft-gap-broken-server_ttft_p99"]', "data-value"));
  const f = Number(await page.getAttribute('[data-testid="probe-ttft-gap-fixed-server_ttft_p99"]', "data-value"));
  assert.ok(b > 1.5 * f, `broken ${b}, fixed ${f}`);
  // The run says which engine it used (the validated one), and reruns both designs on the brief's.
  assert.equal(await page.getAttribute('[data-testid="probe-ttft-gap-engine"]', "data-engine"), "validated");
  await page.click('[data-testid="probe-ttft-gap-engine-switch"]');
  await page.waitForSelector('[data-testid="probe-ttft-gap-engine"][data-engine="brief"]', { timeout: 60000 });
  await page.waitForSelector('[data-testid="probe-ttft-gap-ratio"]', { timeout: 60000 });
  const bv = Number(await page.getAttribute('[data-testid="probe-ttft-gap-broken-server_ttft_p99"]', "data-value"));
  const fv = Number(await page.getAttribute('[data-testid="probe-ttft-gap-fixed-server_ttft_p99"]', "data-value"));
  assert.ok(bv > 1.5 * fv, `on the brief's engine: broken ${bv}, fixed ${fv}`);
  // The long-prompt probe prices the one prefill from the learner's inputs, attention
  // included: the parameters' share is tokens × the prefill time per token, and attention,
  // which grows with the square of the prompt, adds a third again at this length.
  const per = Number(await page.getAttribute('[data-testid="fig-fleet-prefill_per_token"]', "data-value"));
  const pre = Number(await page.getAttribute('[data-testid="probe-long-prompt-prefill"]', "data-value"));
  const params = Number(await page.getAttribute('[data-testid="probe-long-prompt-prefill"]', "data-params"));
  const attn = Number(await page.getAttribute('[data-testid="probe-long-prompt-prefill"]', "data-attention"));
  assert.ok(Math.abs(params - 32000 * per) < 1e-9, `${params} against ${32000 * per}`);
  assert.ok(Math.abs(pre - params - attn) < 1e-12 && attn > 0.4 * params, `${pre} = ${params} + ${attn}`);
  // The budget-cut probe (issue 25): the same GPUs in BF16 and in FP8 weights and activations.
  await page.click('[data-testid="probe-budget-cut-run"]');
  await page.waitForSelector('[data-testid="probe-budget-cut-ratio"]', { timeout: 60000 });
  const bf16 = Number(await page.getAttribute('[data-testid="probe-budget-cut-broken-tpot_p99"]', "data-value"));
  const fp8 = Number(await page.getAttribute('[data-testid="probe-budget-cut-fixed-tpot_p99"]', "data-value"));
  assert.ok(bf16 > 1.5 * fp8, `BF16 ${bf16}, FP8 ${fp8}`);
  // Each figure in its own unit: dollars as money, not as a duration (a regression).
  assert.match(await page.textContent('[data-testid="probe-budget-cut-fixed-dollars_per_m"]'), /^\$\d/);
  // The slow-streams probe: the budget fleet without speculation and with an EAGLE-style head.
  await page.click('[data-testid="probe-slow-streams-run"]');
  await page.waitForSelector('[data-testid="probe-slow-streams-ratio"]', { timeout: 60000 });
  const off = Number(await page.getAttribute('[data-testid="probe-slow-streams-broken-tpot_p50"]', "data-value"));
  const eagle = Number(await page.getAttribute('[data-testid="probe-slow-streams-fixed-tpot_p50"]', "data-value"));
  assert.ok(off > 1.5 * eagle, `off ${off}, EAGLE ${eagle}`);
  const gained = Number(await page.getAttribute('[data-testid="probe-slow-streams-fixed-tokens_per_step"]', "data-value"));
  assert.ok(gained > 1 && gained < 4, `${gained} tokens per verifying step`);
  assert.match(await page.textContent('[data-testid="probe-slow-streams-fixed-tokens_per_step"]'), /tokens$/);
  await page.click('[data-testid="probe-ttft-gap-lab"]');
  await page.waitForFunction(() => location.pathname.endsWith("/lab"));
  assert.match(await page.evaluate(() => location.search), /preset=fleet-ttft-gap&arm=slow-router-cold-pool/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the request-path diagram opens each hop's build-up step, by mouse and by keyboard", async () => {
  const page = await app.page();
  await open(page, app.url, "lesson");
  const hops = await page.locator('[data-testid^="hop-"]').count();
  assert.equal(hops, 8);
  await page.click('[data-testid="hop-router"]');
  await page.waitForFunction(() => location.pathname.endsWith("/buildups/fleet") && location.search === "?step=2");
  await page.goBack();
  await page.waitForSelector('[data-testid="hop-engine"]');
  // The app moves focus to the page's heading once the page has drawn its deferred parts (a
  // page reached by navigation): wait for that before focusing the hop, or the heading takes it.
  await drawn(page);
  await page.focus('[data-testid="hop-engine"]');
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => location.search === "?step=3");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the reversal sets the batch answer beside the streaming one", async () => {
  const page = await app.page();
  await open(page, app.url, "lesson");
  await page.waitForSelector('[data-testid="reversal-table"]');
  await revealAll(page);
  const s = Number(await page.getAttribute('[data-testid="reversal-replicas-streaming"]', "data-value"));
  const b = Number(await page.getAttribute('[data-testid="reversal-replicas-batch"]', "data-value"));
  assert.ok(b < s, `batch ${b} replicas against streaming ${s}`);
  assert.equal(await page.getAttribute('[data-testid="reversal-gateway_streams-batch"]', "data-value"), "0");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("printing the lesson gives its one-page summary on one A4 page", async () => {
  const page = await app.page();
  await open(page, app.url, "lesson");
  await revealAll(page);
  await page.waitForSelector('[data-testid="sheet-replicas"]');
  const pdf = await page.pdf({ format: "A4", printBackground: true });
  const pages = (pdf.toString("latin1").match(/\/Type\s*\/Page[^s]/g) || []).length;
  assert.equal(pages, 1, `the summary printed on ${pages} pages`);
  assert.ok(pdf.length > 10000, "the PDF has content");
  await page.context().close();
});

for (const viewport of [DESKTOP, PHONE]) {
  for (const colorScheme of ["light", "dark"]) {
    test(`the lesson reads at ${viewport.width} px in ${colorScheme} mode, headings in order`, async () => {
      const page = await app.page(viewport, { colorScheme });
      await open(page, app.url, "lesson");
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow} px`);
      const levels = await page.evaluate(() =>
        [...document.querySelectorAll("main h1, main h2, main h3, main h4")].map((h) => Number(h.tagName[1])));
      assert.equal(levels[0], 1);
      for (let i = 1; i < levels.length; i++) assert.ok(levels[i] <= levels[i - 1] + 1, `heading ${i} skips a level`);
      await shoot(page, `lesson-${viewport.width}-${colorScheme}`);
      assert.deepEqual(page.problems, []);
      await page.context().close();
    });
  }
}

for (const viewport of [DESKTOP, PHONE]) {
  test(`at ${viewport.width} px no answer is in the page before its estimate is committed`, async () => {
    // What the answers read, from a page where they are all shown.
    const peek = await app.page(viewport);
    await open(peek, app.url, "lesson");
    await revealAll(peek);
    const shown = {};
    for (const id of ["replicas", "replicas_exact", "gpus", "cost_per_hour", "cost_per_million", "open_streams", "streams_per_replica", "kv_in_use", "kv_share"]) {
      shown[id] = (await peek.textContent(`.lesson-article [data-testid="fig-fleet-${id}"]`)).trim();
    }
    await peek.context().close();

    const page = await app.page(viewport);
    await open(page, app.url, "lesson");
    const text = () => page.evaluate(() => document.querySelector("main").innerText);
    const hiddenNow = async (id) => (await page.getAttribute(`.lesson-article [data-testid="fig-fleet-${id}"]`, "data-hidden")) === "true";
    let body = await text();
    for (const [id, t] of Object.entries(shown)) {
      assert.ok(!body.includes(t), `${id} (“${t}”) is in the page before any estimate`);
      assert.ok(await hiddenNow(id), `${id} is not held back`);
    }
    // The roofline section counts the fleet again: those figures wait for the fleet's estimates.
    assert.equal(await page.getAttribute('[data-testid="fig-roofline-replicas_assumed"]', "data-hidden"), "true");
    assert.equal(await page.locator('[data-testid="verdict-roofline"]').count(), 0);
    // Nothing hidden carries its value for a curious reader of the DOM either.
    assert.equal(await page.locator('[data-hidden="true"][data-value]').count(), 0);
    // The summary and the reversal hold the same figures back, with a visible placeholder.
    assert.equal(await page.getAttribute('[data-testid="sheet-replicas"]', "data-hidden"), "true");
    assert.equal(await page.getAttribute('[data-testid="reversal-replicas-streaming"]', "data-hidden"), "true");
    assert.ok((await page.locator('.lesson-article [data-testid="fig-fleet-replicas"]').boundingBox()).width > 20, "a visible placeholder");
    // A placeholder takes the learner to the box that opens it, by keyboard.
    await page.focus('.lesson-article [data-testid="fig-fleet-replicas"]');
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.activeElement?.getAttribute("data-testid") === "estimate-replicas-input");
    // Committing the replica estimate opens what reads it back, and only that.
    await page.keyboard.type("9");
    await page.keyboard.press("Enter");
    await page.waitForSelector('[data-testid="estimate-replicas-derived"]');
    assert.ok(!(await hiddenNow("replicas")) && !(await hiddenNow("gpus")) && !(await hiddenNow("cost_per_million")));
    assert.equal((await page.textContent('.lesson-article [data-testid="fig-fleet-replicas"]')).trim(), shown.replicas);
    assert.ok(await hiddenNow("open_streams") && await hiddenNow("streams_per_replica") && await hiddenNow("kv_in_use"));
    body = await text();
    assert.ok(!body.includes(shown.open_streams), "open streams shown before their estimate");
    assert.equal(await page.locator('[data-testid="verdict-fleet"]').count(), 0, "the verdict waits for every estimate");
    // Choosing to see an answer without estimating opens it too.
    await page.click('[data-testid="estimate-open_streams-peek"]');
    assert.ok(!(await hiddenNow("open_streams")));
    assert.ok(await hiddenNow("kv_in_use"), "the KV estimate is still open");
    assert.equal((await page.textContent('[data-testid="estimate-open_streams-yours"]')).trim(), "—");
    await page.fill('[data-testid="estimate-kv_in_use-input"]', "100000");
    await page.click('[data-testid="estimate-kv_in_use-commit"]');
    await page.waitForSelector('[data-testid="verdict-fleet"]');
    body = await text();
    for (const [id, t] of Object.entries(shown)) assert.ok(body.includes(t), `${id} (“${t}”) is shown after the estimates`);
    // Only the roofline's own estimates hold figures back now (its counts repeat the fleet's
    // and were held with them until here).
    assert.equal(await page.locator('[data-hidden="true"]:not([data-testid*="roofline"])').count(), 0);
    assert.notEqual(await page.getAttribute('[data-testid="fig-roofline-replicas_assumed"]', "data-hidden"), "true");
    await shoot(page, `lesson-revealed-${viewport.width}`);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test(`at ${viewport.width} px the lesson says whose numbers it shows, and its headings follow them`, async () => {
    const page = await app.page(viewport);
    await open(page, app.url, "lesson");
    assert.ok(await page.isVisible('[data-testid="lesson-inputs-seed"]'));
    assert.match(await page.textContent("main h1"), /Llama 3\.1 8B/);
    // The learner sizes 70B on four GPUs at 100 req/s in the calculator, then comes back.
    await open(page, app.url, "size/fleet?model=llama-3.1-70b&gpus_per_replica=4&rate=100");
    await page.waitForFunction(() => location.search.includes("rate=100"));
    await page.click('[data-testid="nav-lesson"]');
    await page.waitForSelector('[data-testid="lesson-inputs-list"]');
    const list = await page.textContent('[data-testid="lesson-inputs-list"]');
    assert.match(list, /Llama 3\.1 70B/);
    assert.match(list, /GPUs per replica\s*4/);
    assert.match(list, /Arrival rate\s*100 req\/s/);
    assert.match(await page.textContent("main h1"), /Llama 3\.1 70B/);
    assert.doesNotMatch(await page.textContent("main h1"), /8B/);
    assert.match(await page.textContent('[data-testid="sheet-title"]'), /Llama 3\.1 70B/);
    // Back to the seed, by keyboard.
    await page.focus('[data-testid="lesson-inputs-reset"]');
    await page.keyboard.press("Enter");
    await page.waitForSelector('[data-testid="lesson-inputs-seed"]');
    assert.match(await page.textContent("main h1"), /Llama 3\.1 8B/);
    assert.match(await page.textContent('[data-testid="sheet-title"]'), /Llama 3\.1 8B/);
    await revealAll(page);
    assert.equal(Number(await page.getAttribute('[data-testid="fig-fleet-prompt_tps"]', "data-value")), 50000);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
}
