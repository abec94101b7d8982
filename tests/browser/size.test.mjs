// "Size it up": deep links reproduce a derivation, the keyboard reveals steps, typing
// recomputes them and rewrites the URL, bad input gets a message while the last good result
// stays, the simulator check gives a verdict, and a drill is graded and recorded.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, open, shoot, DESKTOP, PHONE } from "./harness.mjs";

let app;
before(async () => { app = await start({ base: "/trainer/" }); });
after(async () => { await app?.close(); });

const step = (id) => `[data-testid="step-${id}"]`;
const value = async (page, id) => Number(await page.getAttribute(step(id), "data-value"));
const display = (page, id) => page.textContent(`[data-testid="value-${id}"]`);
const query = (page) => new URL(page.url()).searchParams;

/** Opens a page of the calculator and waits for it. */
async function openSize(page, rel) {
  await open(page, app.url, rel);
  await page.waitForSelector('[data-testid="inputs"]');
}

/** Types into a field as a person would: select what is there, then type over it. */
async function typeInto(page, name, text) {
  const input = page.locator(`[data-testid="input-${name}"]`);
  await input.click();
  await input.press("ControlOrMeta+a");
  if (text === "") await input.press("Backspace");
  else await input.pressSequentially(text);
}

async function done(page) {
  assert.deepEqual(page.problems, []);
  await page.context().close();
}

test("the seed deep link shows every reference figure of the brief", async () => {
  const page = await app.page();
  await openSize(page, "size/fleet?reveal=all");
  const expected = {
    prefill_per_token: "32.5 µs",
    decode_step: "8.3 ms",
    decode_throughput: "3,869 tok/s",
    replicas: "8 replicas",
    cost_per_hour: "$20/h",
    cost_per_million: "$0.44",
    open_streams: "250 streams",
    kv_pool: "416,103 tokens",
    kv_share: "8 %",
  };
  for (const [id, text] of Object.entries(expected)) {
    assert.equal((await display(page, id)).trim(), text, id);
  }
  // Figures that are one multiplication, checked from the brief's formulas.
  assert.equal(await value(page, "prompt_tps"), 50 * 1000);
  assert.equal(await value(page, "output_tps"), 50 * 250);
  assert.equal(await value(page, "avg_context"), 1000 + 250 / 2);
  assert.equal(await value(page, "kv_per_token"), 2 * 32 * 8 * 128 * 2);
  assert.equal(await value(page, "gpus"), (await value(page, "replicas")) * 1);
  assert.equal(await value(page, "cost_per_hour"), (await value(page, "gpus")) * 2.5);
  // The check steps are styled as passing, and the verdict names what binds.
  assert.match(await page.getAttribute(step("tpot_check"), "class"), /pass/);
  assert.match(await page.textContent('[data-testid="verdict-summary"]'), /HBM bandwidth/);
  assert.equal(await page.getAttribute('[data-testid="reading-kvcapacity"]', "class"), "reading slack");
  await shoot(page, "size-fleet-all-1280");
  await done(page);
});

test("a deep link with twice the rate doubles the demand, and the steps follow", async () => {
  const page = await app.page();
  await openSize(page, "size/fleet?reveal=all");
  const seed = {
    prefill: await value(page, "prefill_demand"),
    decode: await value(page, "decode_demand"),
    exact: await value(page, "replicas_exact"),
  };
  await page.context().close();
  const p2 = await app.page();
  await openSize(p2, "size/fleet?rate=100&reveal=all");
  assert.equal(await p2.inputValue('[data-testid="input-rate"]'), "100");
  assert.equal(await value(p2, "prompt_tps"), 100 * 1000);
  const close = (a, b) => Math.abs(a / b - 1) < 1e-12;
  assert.ok(close(await value(p2, "prefill_demand"), 2 * seed.prefill));
  assert.ok(close(await value(p2, "decode_demand"), 2 * seed.decode));
  assert.ok(close(await value(p2, "replicas_exact"), 2 * seed.exact));
  assert.equal(await value(p2, "replicas"), Math.ceil(2 * seed.exact));
  await done(p2);
});

test("the right arrow reveals steps one by one, but not while typing in a field", async () => {
  const page = await app.page();
  await openSize(page, "size/fleet");
  assert.equal(await page.locator(".steps > li").count(), 0);
  await page.locator("h1").click();
  for (let n = 1; n <= 3; n++) {
    await page.keyboard.press("ArrowRight");
    await page.waitForFunction((n) => document.querySelectorAll(".steps > li").length === n, n);
  }
  const ids = await page.$$eval(".steps > li", (els) => els.map((e) => e.dataset.testid));
  assert.deepEqual(ids, ["step-prompt_tps", "step-output_tps", "step-prefill_per_token"]);
  assert.equal(query(page).get("reveal"), "3");
  // Inside a field the arrow moves the caret instead.
  await page.click('[data-testid="input-rate"]');
  await page.keyboard.press("ArrowRight");
  assert.equal(await page.locator(".steps > li").count(), 3);
  // The button does the same, "Show all" reveals the rest and the verdict, "Start over" hides them.
  await page.click('[data-testid="next-step"]');
  assert.equal(await page.locator(".steps > li").count(), 4);
  await page.click('[data-testid="show-all"]');
  await page.waitForSelector('[data-testid="verdict"]');
  assert.equal(query(page).get("reveal"), "all");
  const progress = await page.evaluate(() => JSON.parse(localStorage.getItem("serving-trainer.progress")));
  assert.ok(progress.done.includes("size/fleet"), "reaching the last step marks the question done");
  await page.click('[data-testid="start-over"]');
  assert.equal(await page.locator(".steps > li").count(), 0);
  await done(page);
});

test("editing an input recomputes the revealed steps and rewrites the URL without history", async () => {
  const page = await app.page();
  await openSize(page, "size/fleet?reveal=all");
  const before = await page.evaluate(() => history.length);
  await typeInto(page, "rate", "60");
  await page.waitForFunction(() => document.querySelector('[data-testid="step-prompt_tps"]').dataset.value === "60000");
  assert.equal(await value(page, "output_tps"), 60 * 250);
  assert.equal(query(page).get("rate"), "60");
  assert.equal(await page.evaluate(() => history.length), before, "typing added history entries");
  // A percentage is typed in percent.
  await typeInto(page, "ceiling", "50");
  await page.waitForFunction(() => location.search.includes("ceiling=0.5"));
  const exact = await value(page, "replicas_exact");
  const demand = (await value(page, "prefill_demand")) + (await value(page, "decode_demand"));
  assert.ok(Math.abs(exact - demand / 0.5) < 1e-9);
  // A preset choice resets the figures it provides and the steps follow (the 70B model needs
  // more than one GPU for its weights).
  await typeInto(page, "gpus_per_replica", "4");
  await page.selectOption('[data-testid="input-model"]', "llama-3.1-70b");
  await page.waitForFunction(() => document.querySelector('[data-testid="step-kv_per_token"]').dataset.value === String(2 * 80 * 8 * 128 * 2));
  assert.equal(query(page).get("model"), "llama-3.1-70b");
  // Reloading the URL reproduces the same derivation.
  const replicas = await value(page, "replicas");
  // Let the favicon finish loading first: a reload would abort it, which the harness reports.
  await page.waitForLoadState("networkidle");
  await page.reload();
  await page.waitForSelector(step("replicas"));
  assert.equal(await value(page, "replicas"), replicas);
  assert.equal(await page.inputValue('[data-testid="input-ceiling"]'), "50");
  await done(page);
});

// Issue 25: the weight format is three choices. Weight-only FP8 halves the weights' bytes and
// keeps the BF16 peak; FP8 weights and activations take the FP8 peak; each brings its note.
test("the weight format's three choices set the bytes and the peak apart, each with its note", async () => {
  const page = await app.page();
  await openSize(page, "size/fleet?reveal=all");
  await page.waitForSelector(step("weight_bytes"));
  assert.equal(await page.locator('[data-testid="precision"]').count(), 0, "BF16: no note");
  const bf16 = { bytes: await value(page, "weight_bytes"), prefill: await value(page, "prefill_per_token") };
  const peak = await page.inputValue('[data-testid="input-peak_tflops"]');
  await page.selectOption('[data-testid="input-weight_dtype"]', "fp8-weight-only");
  await page.waitForFunction((b) => Number(document.querySelector('[data-testid="step-weight_bytes"]').dataset.value) === b / 2, bf16.bytes);
  assert.equal(query(page).get("weight_dtype"), "fp8-weight-only");
  assert.equal(await page.inputValue('[data-testid="input-peak_tflops"]'), peak, "weight-only keeps the BF16 peak");
  assert.equal(await value(page, "prefill_per_token"), bf16.prefill);
  await page.waitForSelector('[data-testid="precision-fp8-weight-only"]');
  assert.match(await page.textContent('[data-testid="precision-fp8-weight-only"]'), /Quality:/);
  await page.selectOption('[data-testid="input-weight_dtype"]', "fp8");
  await page.waitForSelector('[data-testid="precision-fp8"]');
  assert.ok(Number(await page.inputValue('[data-testid="input-peak_tflops"]')) > Number(peak), "W8A8 takes the FP8 peak");
  assert.ok((await value(page, "prefill_per_token")) < bf16.prefill);
  assert.match(await page.textContent('[data-testid="precision-fp8"]'), /99\.5 %/);
  await done(page);
});

test("bad input shows a message on its field and the last good result stays, marked stale", async () => {
  const page = await app.page();
  await openSize(page, "size/fleet?reveal=all");
  const cases = [
    ["", /empty/],
    ["-5", /negative/],
    ["0", /greater than zero/],
    ["abc", /not a number/],
    ["1e99", /at most/],
  ];
  for (const [text, message] of cases) {
    // Pasted whole: typed key by key, "1e99" would pass through "1", a good value.
    await page.fill('[data-testid="input-rate"]', text);
    const err = page.locator('[data-testid="error-rate"]');
    await err.waitFor();
    assert.match(await err.textContent(), message, `"${text}"`);
    assert.equal(await page.getAttribute('[data-testid="input-rate"]', "aria-invalid"), "true");
    assert.ok(await page.isVisible('[data-testid="stale"]'), `"${text}": stale note`);
    assert.equal(await value(page, "prompt_tps"), 50000, `"${text}": last good result`);
    assert.equal(await display(page, "replicas"), "8 replicas");
  }
  await shoot(page, "size-fleet-bad-input-1280");
  await typeInto(page, "rate", "50");
  await page.waitForSelector('[data-testid="stale"]', { state: "detached" });
  assert.equal(await page.locator('[data-testid="error-rate"]').count(), 0);
  await done(page);
});

test("bad values in a deep link get their messages in their fields", async () => {
  const page = await app.page();
  await openSize(page, "size/fleet?rate=abc&batch=-3&gpu=nope&reveal=2");
  assert.match(await page.textContent('[data-testid="error-rate"]'), /not a number/);
  assert.match(await page.textContent('[data-testid="error-batch"]'), /negative/);
  assert.equal(await page.inputValue('[data-testid="input-rate"]'), "abc");
  assert.match(await page.textContent('[data-testid="error-gpu"]'), /no preset/);
  assert.equal(await page.locator(".steps > li").count(), 2);
  await done(page);
});

test("the index lists the questions and an unknown question links to them", async () => {
  const page = await app.page();
  await open(page, app.url, "size");
  assert.equal(await page.locator('[data-testid^="question-"]').count(), 9);
  await page.waitForLoadState("networkidle");
  await open(page, app.url, "size/nope");
  assert.match(await page.textContent("main h1"), /No such question/);
  await page.click('[data-testid="open-gpu-hours"]');
  await page.waitForSelector('[data-testid="page-size-gpu-hours"]');
  await page.click('[data-testid="show-all"]');
  const thr = await value(page, "decode_throughput");
  const perM = await value(page, "gpu_hours_per_million");
  assert.ok(Math.abs(perM - 1e6 / thr / 3600) / perM < 1e-9, "GPU-hours per million = 10⁶ / throughput / 3,600");
  await done(page);
});

// Issue 27, part 1: the roofline. Decode sits under the ridge, prefill above it; the plot waits
// until the learner has worked the steps it would give away, then moves with the inputs.
test("the roofline question: the ridge, the batch limits and a plot that follows the inputs", async () => {
  const page = await app.page();
  await openSize(page, "size/roofline");
  await page.waitForSelector('[data-testid="roofline-waiting"]');
  assert.equal(await page.locator('[data-testid="roofline-chart-canvas"]').count(), 0);
  // Reveal step by step with the keyboard until the plot appears.
  await page.locator("main h1").click();
  for (let i = 0; i < 40 && (await page.locator('[data-testid="roofline-chart-canvas"]').count()) === 0; i++) {
    await page.keyboard.press("ArrowRight");
  }
  assert.ok(await page.locator(step("largest_batch")).count() === 1, "the plot came with the largest batch");
  assert.equal(await page.locator(step("replicas_traffic")).count(), 0, "and not before the steps after it");
  await page.waitForSelector('[data-testid="roofline-chart-canvas"]:not([data-drawn="0"])');
  const ridge = await value(page, "ridge_point");
  assert.ok(Math.abs(ridge - (989e12 * 0.5) / (3.35e12 * 0.75)) < 1e-9, `${ridge}`);
  assert.ok((await value(page, "decode_intensity")) < ridge);
  assert.ok((await value(page, "prefill_intensity")) > ridge);
  assert.equal(await value(page, "tpot_batch"), 231);
  assert.match(await page.textContent('[data-testid="roofline-note"]'), /no batch brings decode to the ridge/);
  // The text alternative lists the learner's batch; typing a bigger one moves its point.
  const assumed = () => page.locator('[data-testid="roofline-row"]').nth(1).getAttribute("data-intensity");
  const before = Number(await assumed());
  await typeInto(page, "batch", "128");
  await page.waitForFunction((b) => {
    const row = document.querySelectorAll('[data-testid="roofline-row"]')[1];
    return row && Number(row.getAttribute("data-intensity")) > b;
  }, before);
  assert.equal(query(page).get("batch"), "128");
  // A shorter context lets decode cross the ridge inside the pool, and the note says so.
  await typeInto(page, "prompt_tokens", "10");
  await typeInto(page, "output_tokens", "10");
  await page.waitForFunction(() => /reaches the ridge at a batch of/.test(document.querySelector('[data-testid="roofline-note"]')?.textContent ?? ""));
  await page.click('[data-testid="show-all"]');
  assert.ok((await value(page, "compute_bound_batch")) > 0);
  await done(page);
});

// Issue 25: when speculative decoding stops paying. Three guesses right 60 % of the time gain
// 1 + 0.6 + 0.36 + 0.216 tokens a step; the crossover is where the speedup reaches one, and
// better guesses push it to a bigger batch.
test("the speculation question: the gain at a quiet batch, and the batch where it ends", async () => {
  const page = await app.page();
  await openSize(page, "size/speculation?reveal=all");
  assert.ok(Math.abs(await value(page, "tokens_per_step") - 2.176) < 1e-12);
  const speedup = await value(page, "speedup");
  assert.ok(speedup > 1.5, `${speedup}`);
  const spec = await value(page, "spec_step");
  assert.ok(Math.abs(spec - (await value(page, "verify_step")) - (await value(page, "proposer_time"))) < 1e-12);
  const b = await value(page, "crossover_batch");
  assert.ok(b > 8 && b < (await value(page, "pool_batch")), `${b}`);
  const rate = await value(page, "crossover_rate");
  assert.ok(Math.abs(rate - b / (250 * (await value(page, "crossover_tpot")))) < 1e-9 * rate);
  await page.waitForSelector('[data-testid="verdict"]');
  // Better guesses pay to a bigger batch; the URL keeps the input.
  await typeInto(page, "acceptance", "80");
  await page.waitForFunction((old) => Number(document.querySelector('[data-testid="step-crossover_batch"]').dataset.value) > old, b);
  assert.equal(query(page).get("acceptance"), "0.8");
  // The simulator check sweeps one replica around the crossover the arithmetic found: every
  // level guessing and not, drawn and tabled, and a reading that sets the two side by side.
  await typeInto(page, "acceptance", "60");
  await page.waitForFunction((old) => Number(document.querySelector('[data-testid="step-crossover_batch"]').dataset.value) === old, b);
  const check = page.locator('[data-testid="spec-check"]');
  await check.locator('[data-testid="sweep-run"]').click();
  await page.waitForSelector('[data-testid="spec-check"] [data-testid="sweep-reading"]', { timeout: 120000 });
  const rows = await check.locator('[data-testid="sweep-row"]').evaluateAll((els) => els.map((e) => ({
    rate: Number(e.dataset.rate), tokens: Number(e.dataset.tokens),
  })));
  const speedups = await check.locator('[data-testid="sweep-speedup-row"]').evaluateAll((els) => els.map((e) => ({
    rate: Number(e.dataset.rate), speedup: Number(e.dataset.speedup),
  })));
  // Each chart tables its own figures, at the same seven levels.
  assert.equal(rows.length, 7);
  assert.deepEqual(speedups.map((r) => r.rate), rows.map((r) => r.rate));
  assert.ok(rows.some((r) => Math.abs(r.rate - rate) < 1e-9 * rate), "the arithmetic's rate is a level");
  for (const r of rows) assert.ok(Math.abs(r.tokens / 2.176 - 1) < 0.05, JSON.stringify(r));
  assert.ok(speedups[0].speedup > 1.5, JSON.stringify(speedups[0]));
  const reading = await check.locator('[data-testid="sweep-reading"]').textContent();
  assert.match(reading, new RegExp(`crossover at ${(await display(page, "crossover_rate")).replace(/ req\/s$/, "").replace(/\./g, "\\.")} requests a second`));
  for (const id of ["plot-sweep-tokens-canvas", "plot-sweep-speedup-canvas"]) {
    await page.waitForSelector(`[data-testid="spec-check"] [data-testid="${id}"]`);
  }
  // Another input marks the sweep stale.
  await typeInto(page, "spec_k", "4");
  await check.locator('[data-testid="sweep-stale"]').waitFor();
  await done(page);
});

// Issue 25: the budget is cut to half the replicas. Each replica settles at the batch whose
// output keeps pace (Little's law), FP8 weights and activations shorten the step against BF16,
// a tighter target parts the two, and the simulator runs the budget in the learner's formats.
test("the halve-cost question: BF16 against your formats on half the replicas, then the simulator", async () => {
  const page = await app.page();
  await openSize(page, "size/halve-cost?reveal=all");
  assert.equal(await value(page, "cost_after") * 2, await value(page, "cost_before"));
  assert.equal(await value(page, "replica_rate"), 50 * 250 / 4);
  for (const [batch, tpot] of [["bf16_batch", "bf16_tpot"], ["chosen_batch", "budget_tpot"]]) {
    const b = await value(page, batch);
    const t = await value(page, tpot);
    assert.ok(b >= 3125 * t && b - 1 < 3125 * t, `${batch} ${b} at ${t}`);
  }
  const bf16 = await value(page, "bf16_tpot");
  assert.ok((await value(page, "budget_tpot")) < 0.6 * bf16);
  // Back to BF16: the proposal is the baseline itself.
  await page.selectOption('[data-testid="input-weight_dtype"]', "bf16");
  await page.waitForFunction((b) => Number(document.querySelector('[data-testid="step-budget_tpot"]').dataset.value) === b, bf16);
  assert.equal(query(page).get("weight_dtype"), "bf16");
  await page.selectOption('[data-testid="input-weight_dtype"]', "fp8");
  // A 6 ms target: BF16 misses, FP8 weights and activations hold.
  await typeInto(page, "tpot_ms", "6");
  await page.waitForFunction(() => /inside the 6 ms target/.test(document.querySelector('[data-testid="verdict"]')?.textContent ?? ""));
  assert.match(await page.textContent('[data-testid="step-bf16_check"]'), /fails/);
  assert.match(await page.textContent('[data-testid="step-budget_check"]'), /passes/);
  // The simulator runs the budget (4 replicas) and one fewer, in these formats.
  await typeInto(page, "tpot_ms", "20");
  await page.click('[data-testid="check-sim"]');
  await page.waitForSelector('[data-testid="sim-results"]', { timeout: 60000 });
  assert.equal(await page.locator('[data-testid="sim-row-4"]').count(), 1);
  assert.equal(await page.locator('[data-testid="sim-row-3"]').count(), 1);
  const tpot4 = Number(await page.getAttribute('[data-testid="sim-tpot-4"]', "data-value"));
  assert.ok(tpot4 > 0 && tpot4 < 0.02, `p99 TPOT at 4 replicas ${tpot4}`);
  await done(page);
});

test("the split question: prefill and decode pools sized apart, the cache's move, then the simulator on split pools", async () => {
  const page = await app.page();
  await openSize(page, "size/split?reveal=all");
  assert.equal(await value(page, "prefill_replicas"), 3);
  assert.equal(await value(page, "decode_replicas"), 5);
  assert.equal(await value(page, "split_gpus"), 8);
  assert.equal(await value(page, "mixed_replicas"), 8);
  assert.equal(await value(page, "kv_moved"), 1000 * 131072);
  const fast = await value(page, "transfer_time");
  // A slower link: the move grows, the pools do not.
  await typeInto(page, "link_gbps", "25");
  await page.waitForFunction((f) => Number(document.querySelector('[data-testid="step-transfer_time"]').dataset.value) > 10 * f, fast);
  assert.equal(query(page).get("link_gbps"), "25");
  assert.equal(await value(page, "split_gpus"), 8);
  await typeInto(page, "link_gbps", "400");
  // The simulator runs the pools as the answer splits them, and one decode replica fewer.
  await page.click('[data-testid="check-sim"]');
  await page.waitForSelector('[data-testid="sim-results"]', { timeout: 60000 });
  assert.equal(await page.locator('[data-testid="sim-row-8"]').count(), 1);
  assert.equal(await page.locator('[data-testid="sim-row-7"]').count(), 1);
  assert.match(await page.textContent('[data-testid="sim-split-note"]'), /runs 3 of them as the prefill pool/);
  const tpot8 = Number(await page.getAttribute('[data-testid="sim-tpot-8"]', "data-value"));
  assert.ok(tpot8 > 0 && tpot8 < 0.02, `p99 TPOT at 3 + 5 replicas ${tpot8}`);
  await done(page);
});

test("the host-memory question: a day of chats against the fleet's host memory, what returning chats need, then the tiers simulated", async () => {
  const page = await app.page();
  await openSize(page, "size/host?reveal=all");
  // 10 new chats a second, 6,250 tokens of history at 128 KiB each, for a day.
  assert.equal(await value(page, "window_host_bytes"), 864000 * 6250 * 131072);
  assert.equal(await value(page, "fleet_host_bytes"), 8 * 192e9);
  assert.match(await page.textContent('[data-testid="step-window_check"]'), /fails/);
  assert.match(await page.textContent('[data-testid="step-host_check"]'), /passes/);
  // Less host memory per GPU: the returning chats no longer fit, and the verdict says so.
  await typeInto(page, "host_gb", "64");
  await page.waitForFunction(() => /fails/.test(document.querySelector('[data-testid="step-host_check"]')?.textContent ?? ""));
  assert.equal(query(page).get("host_gb"), "64");
  await page.waitForFunction(() => /go before their chats come back/.test(document.querySelector('[data-testid="verdict"]')?.textContent ?? ""));
  await typeInto(page, "host_gb", "192");
  // The host link is the GPU's own: an A100's PCIe Gen4 doubles the copy back.
  assert.equal(await page.inputValue('[data-testid="input-pcie_gb_s"]'), "64");
  const copy = await value(page, "reload_time");
  await page.selectOption('[data-testid="input-gpu"]', "a100-80gb");
  await page.waitForFunction(() => document.querySelector('[data-testid="input-pcie_gb_s"]')?.value === "32");
  await page.waitForFunction((c) => Math.abs(Number(document.querySelector('[data-testid="step-reload_time"]').dataset.value) / c - 2) < 1e-9, copy);
  await page.selectOption('[data-testid="input-gpu"]', "h100-sxm");
  // The simulator runs the chats with no tier, the need, the answer and twice it.
  await page.click('[data-testid="host-check-run"]');
  await page.waitForSelector('[data-testid="host-check-table"]', { timeout: 120000 });
  for (const id of ["none", "exact", "answer", "double"]) {
    assert.equal(await page.locator(`[data-testid="host-row-${id}"]`).count(), 1, id);
  }
  assert.equal(Number(await page.getAttribute('[data-testid="host-host-none"]', "data-value")), 0);
  const found = Number(await page.getAttribute('[data-testid="host-host-answer"]', "data-value"));
  assert.ok(found > 0.3, `the answer's tier copied back ${found} of prompt tokens`);
  assert.match(await page.textContent('[data-testid="host-check-verdict"]'), /the size holds/);
  assert.match(await page.textContent('[data-testid="host-check-exact"]'), /Without the headroom/);
  assert.equal(await page.locator('[data-testid="host-check-stale"]').count(), 0);
  await typeInto(page, "think_s", "60");
  await page.waitForSelector('[data-testid="host-check-stale"]');
  await done(page);
});

test("the chats question: 320 KiB per token on the 70B replica", async () => {
  const page = await app.page();
  await openSize(page, "size/chats-per-replica?reveal=all");
  assert.equal(await value(page, "kv_per_token"), 2 * 80 * 8 * 128 * 2);
  const pool = await value(page, "kv_pool");
  assert.equal(await value(page, "chats"), Math.floor(pool / 4096));
  await page.waitForSelector('[data-testid="verdict"]');
  await done(page);
});

test("the simulator check runs both fleets and sets its streams beside the estimate", async () => {
  const page = await app.page();
  await openSize(page, "size/fleet?reveal=all");
  await page.click('[data-testid="check-sim"]');
  await page.waitForSelector('[data-testid="sim-results"]', { timeout: 30000 });
  assert.equal(await page.getAttribute('[data-testid="sim-row-8"]', "data-pass"), "true");
  assert.match(await page.textContent('[data-testid="sim-verdict-8"]'), /meets/);
  assert.equal(await page.locator('[data-testid="sim-row-7"]').count(), 1);
  const sim = Number(await page.getAttribute('[data-testid="sim-open-streams"]', "data-value"));
  const est = Number(await page.getAttribute('[data-testid="sim-estimate-streams"]', "data-value"));
  assert.ok(Math.abs(est / 250 - 1) < 0.05, `estimate ${est}`);
  assert.ok(sim < est, `simulated ${sim} streams vs estimate ${est}`);
  assert.match(await page.textContent('[data-testid="sim-lesson"]'), /Little's law/);
  // The calibrated simulator departs from the estimate's arithmetic, and says where.
  assert.match(await page.textContent('[data-testid="sim-assumption-kv_pool"]'), /Estimate 416,103 tokens/);
  assert.equal(await page.locator('[data-testid="sim-assumption-decode_step"]').count(), 1);
  const util = Number(await page.getAttribute('[data-testid="sim-util-8"]', "data-value"));
  assert.ok(util > 0 && util <= 1);
  const wall = Number(await page.getAttribute('[data-testid="sim-time"]', "data-value"));
  const longest = Number(await page.getAttribute('[data-testid="sim-time"]', "data-longest"));
  console.log(`simulator check: ${Math.round(wall)} ms of wall time for both runs, longest read of a worker reply ${Math.round(longest)} ms`);
  assert.equal(await page.locator('[data-testid="sim-stale"]').count(), 0);
  // Editing an input marks the result as belonging to other inputs.
  await typeInto(page, "rate", "55");
  await page.waitForSelector('[data-testid="sim-stale"]');
  await shoot(page, "size-fleet-sim-1280");
  await done(page);
});

test("a drill is graded, shows its worked steps and goes to progress", async () => {
  const page = await app.page();
  await openSize(page, "size/fleet");
  await page.click('[data-testid="drill-new"]');
  const target = await page.getAttribute('[data-testid="drill-card"]', "data-target");
  const seed = await page.getAttribute('[data-testid="drill-card"]', "data-seed");
  await page.fill('[data-testid="drill-answer"]', "abc");
  await page.click('[data-testid="drill-check"]');
  await page.waitForSelector('[data-testid="drill-error"]');
  await page.fill('[data-testid="drill-answer"]', "1");
  await page.click('[data-testid="drill-check"]');
  await page.waitForSelector('[data-testid="drill-worked"]');
  const correct = await page.getAttribute('[data-testid="drill-result"]', "data-correct");
  assert.ok(await page.isVisible(`[data-testid="drill-step-${target}"]`));
  const progress = await page.evaluate(() => JSON.parse(localStorage.getItem("serving-trainer.progress")));
  const last = progress.drills.at(-1);
  assert.deepEqual({ question: last.question, step: last.step, correct: last.correct }, { question: "fleet", step: target, correct: correct === "true" });
  assert.equal(typeof last.day, "number");
  // Loading the drill's inputs puts them in the calculator.
  assert.equal(query(page).get("drill"), seed);
  await page.click('[data-testid="drill-load"]');
  await page.waitForFunction(() => [...new URL(location.href).searchParams.keys()].some((k) => k !== "drill"));
  // A new drill draws fresh inputs.
  await page.click('[data-testid="drill-new"]');
  assert.notEqual(await page.getAttribute('[data-testid="drill-card"]', "data-seed"), seed);
  await done(page);
});

test("the drill and the sensitivity's step live in the URL: a reload brings back both", async () => {
  const page = await app.page();
  await openSize(page, "size/fleet");
  await page.click('[data-testid="drill-new"]');
  const seed = await page.getAttribute('[data-testid="drill-card"]', "data-seed");
  const given = await page.textContent('[data-testid="drill-given"]');
  const sens = '[data-testid="sens-target"]';
  await page.waitForSelector('[data-testid="sens-plot"]');
  const first = await page.$eval(sens, (e) => e.value);
  const other = (await page.$$eval(`${sens} option`, (os) => os.map((o) => o.value))).find((v) => v !== first);
  await page.selectOption(sens, other);
  await page.waitForFunction((o) => new URL(location.href).searchParams.get("sens") === o, other);
  const rows = () => page.$$eval('[data-testid^="sens-row-"]', (els) => els.map((e) => e.dataset.value).join(" "));
  const before = await rows();
  assert.equal(query(page).get("drill"), seed);
  await page.reload();
  await page.waitForSelector('[data-testid="drill-card"]');
  assert.equal(await page.getAttribute('[data-testid="drill-card"]', "data-seed"), seed);
  assert.equal(await page.textContent('[data-testid="drill-given"]'), given);
  assert.equal(await page.$eval(sens, (e) => e.value), other);
  assert.equal(await rows(), before);
  // A step the derivation does not have falls back to the question's own.
  await openSize(page, "size/fleet?sens=nope");
  await page.waitForSelector('[data-testid="sens-plot"]');
  assert.equal(await page.$eval(sens, (e) => e.value), first);
  await done(page);
});

test("the sensitivity plot sorts the inputs and has a table of the numbers", async () => {
  const page = await app.page();
  await openSize(page, "size/fleet");
  await page.waitForSelector('[data-testid="sens-plot"]');
  const values = await page.$$eval('[data-testid^="sens-row-"]', (els) => els.map((e) => Number(e.dataset.value)));
  assert.ok(values.length >= 8);
  for (let i = 1; i < values.length; i++) assert.ok(Math.abs(values[i - 1]) >= Math.abs(values[i]));
  // The replica count is proportional to the rate and inversely proportional to the ceiling.
  const row = async (n) => Number(await page.getAttribute(`[data-testid="sens-row-${n}"]`, "data-value"));
  assert.ok(Math.abs((await row("rate")) - 1) < 1e-9);
  assert.ok((await row("ceiling")) < -0.8);
  await done(page);
});

for (const [viewport, scheme] of [[DESKTOP, "light"], [PHONE, "light"], [PHONE, "dark"], [DESKTOP, "dark"]]) {
  test(`the calculator fits ${viewport.width} px (${scheme})`, async () => {
    const page = await app.page(viewport, { colorScheme: scheme });
    await openSize(page, "size/fleet?reveal=6");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `page is ${overflow}px wider than the viewport`);
    await shoot(page, `size-fleet-${viewport.width}-${scheme}`);
    await done(page);
  });
}

test("a check far short of the load says what the run saw, not only that it failed", async () => {
  const page = await app.page();
  // An optimistic estimate (full MFU and bandwidth, a 200 ms TPOT target, no headroom) sizes a
  // few replicas; the calibrated simulator at one fewer is overwhelmed and its gateway sheds.
  await openSize(page, "size/fleet?ceiling=1&batch=1024&tpot_ms=200&mbu=1&mfu=1&reveal=all");
  await page.click('[data-testid="check-sim"]');
  await page.waitForSelector('[data-testid="sim-results"]', { timeout: 60000 });
  const counts = await page.$$eval('[data-testid^="sim-row-"]', (rows) =>
    rows.map((r) => Number(r.dataset.testid.replace("sim-row-", ""))).filter((n) => n > 0));
  const fewest = Math.min(...counts);
  assert.ok(counts.length === 2 && fewest >= 1, `${counts}`);
  const note = await page.textContent(`[data-testid="sim-shortfall-${fewest}"]`);
  assert.match(note, /refused|gave up/);
  assert.match(note, /far short of this load/);
  assert.equal(await page.getAttribute(`[data-testid="sim-row-${fewest}"]`, "data-pass"), "false");
  await done(page);
});

// Issue 29: the learner's path, tried end to end, at a desktop's width and a phone's.

/** Opens the inputs panel by keyboard if it is folded (a phone shows it folded at first). */
async function openInputs(page) {
  const open = await page.$eval('[data-testid="inputs"] details', (d) => d.open);
  if (!open) {
    await page.focus('[data-testid="inputs-toggle"]');
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelector('[data-testid="inputs"] details').open);
  }
}

const negative = /(^|[^\w.])[-−]\d/;

for (const viewport of [DESKTOP, PHONE]) {
  const w = viewport.width;

  test(`${w} px: the first step is in view after load, without scrolling`, async () => {
    const page = await app.page(viewport);
    await openSize(page, "size/fleet?reveal=1");
    const first = page.locator(step("prompt_tps"));
    await first.waitFor();
    assert.equal(await page.evaluate(() => window.scrollY), 0);
    const box = await first.boundingBox();
    assert.ok(box.y + 40 < 812, `the first step starts at ${Math.round(box.y)} px`);
    // With nothing revealed, the button that reveals it is in view too.
    await page.context().close();
    const p2 = await app.page(viewport);
    await openSize(p2, "size/fleet");
    const start = await p2.locator('[data-testid="next-step"]').boundingBox();
    assert.ok(start.y + start.height < 812, `the first step's button is at ${Math.round(start.y)} px`);
    await shoot(p2, `size-fleet-first-step-${w}`);
    await done(p2);
  });

  test(`${w} px: 70B on one H100 is named above the steps with its field, and one key press fixes it`, async () => {
    const page = await app.page(viewport);
    await openSize(page, "size/fleet?reveal=3");
    const seed = await value(page, "prefill_per_token");
    await openInputs(page);
    // Choose the 70B model with the keyboard: the next option of the model list.
    await page.focus('[data-testid="input-model"]');
    await page.keyboard.press("ArrowDown");
    await page.waitForFunction(() => new URL(location.href).searchParams.get("model") === "llama-3.1-70b");
    const banner = page.locator('[data-testid="misfit"]');
    await banner.waitFor();
    assert.match(await banner.textContent(), /Llama 3\.1 70B does not fit on 1 GPU/);
    assert.match(await page.textContent('[data-testid="misfit-field"]'), /GPUs per replica/);
    assert.match(await page.textContent('[data-testid="misfit-fix"]'), /Set GPUs per replica to 2/);
    // Above the steps, and outside every folded panel.
    const top = (await banner.boundingBox()).y;
    assert.ok(top < (await page.locator('[data-testid="steps"]').boundingBox()).y);
    assert.equal(await banner.evaluate((el) => el.closest("details") === null), true);
    assert.ok(await page.isVisible('[data-testid="stale"]'));
    // The field itself says the same, as a sentence after its label.
    assert.match(await page.textContent('[data-testid="error-gpus_per_replica"]'), /^GPUs per replica is too few/);
    await page.evaluate(() => window.scrollTo(0, 0));
    await shoot(page, `size-fleet-70b-misfit-${w}`);
    await page.focus('[data-testid="misfit-fix"]');
    await page.keyboard.press("Enter");
    await page.waitForSelector('[data-testid="misfit"]', { state: "detached" });
    await page.waitForSelector('[data-testid="stale"]', { state: "detached" });
    assert.equal(query(page).get("gpus_per_replica"), "2");
    assert.equal(await page.inputValue('[data-testid="input-gpus_per_replica"]'), "2");
    // The revealed steps are live again: 70B's prefill on two GPUs.
    const live = await value(page, "prefill_per_token");
    const want = (seed * 70_553_706_496) / 8_030_261_248 / 2;
    assert.ok(Math.abs(live / want - 1) < 1e-9, `${live} against ${want}`);
    assert.equal(await page.locator('[data-testid="error-gpus_per_replica"]').count(), 0);
    await done(page);
  });

  test(`${w} px: arrow keys on the focused model list never reveal steps`, async () => {
    const page = await app.page(viewport);
    await openSize(page, "size/fleet");
    await openInputs(page);
    await page.focus('[data-testid="input-model"]');
    for (const key of ["ArrowRight", "ArrowLeft", "ArrowRight", "ArrowLeft"]) await page.keyboard.press(key);
    await page.focus('[data-testid="input-rate"]');
    await page.keyboard.press("ArrowRight");
    assert.equal(await page.locator(".steps > li").count(), 0);
    assert.equal(query(page).get("reveal"), null);
    assert.match(await page.textContent('[data-testid="steps-tip"]'), /outside the inputs/);
    // Outside a control the arrow reveals the next step, as the tip says.
    await page.focus('[data-testid="next-step"]');
    await page.keyboard.press("ArrowRight");
    await page.waitForFunction(() => document.querySelectorAll(".steps > li").length === 1);
    await done(page);
  });

  test(`${w} px: a small job batch says batching needs more GPUs, with no negative figure`, async () => {
    const page = await app.page(viewport);
    await openSize(page, "size/batch?job_batch=16&reveal=all");
    await page.waitForSelector('[data-testid="verdict"]');
    const saved = (await display(page, "gpus_saved")).trim();
    assert.doesNotMatch(saved, negative, saved);
    assert.match(saved, /more/);
    assert.match(await page.textContent(`${step("gpus_saved")} .step-label`), /more GPUs batching needs/i);
    const more = await value(page, "gpus_saved");
    assert.equal(more, (await value(page, "replicas")) - (await value(page, "streaming_replicas")));
    assert.ok(more > 0, `${more}`);
    for (const text of await page.$$eval(".step-value", (els) => els.map((e) => e.textContent))) {
      assert.doesNotMatch(text, negative, text);
    }
    await shoot(page, `size-batch-more-gpus-${w}`);
    await done(page);
  });

  test(`${w} px: a bad value survives "Show all" and a reload, with its message`, async () => {
    const page = await app.page(viewport);
    await openSize(page, "size/fleet?reveal=2");
    await openInputs(page);
    await typeInto(page, "rate", "abc");
    await page.waitForSelector('[data-testid="error-rate"]');
    assert.equal(await page.textContent('[data-testid="error-rate"]'), 'Arrival rate is not a number: "abc".');
    await page.focus('[data-testid="show-all"]');
    await page.keyboard.press("Enter");
    await page.waitForSelector('[data-testid="verdict"]');
    assert.equal(query(page).get("rate"), "abc");
    assert.equal(query(page).get("reveal"), "all");
    await page.waitForLoadState("networkidle");
    await page.reload();
    await page.waitForSelector('[data-testid="error-rate"]');
    // The panel opens on its own when a field needs fixing, so the message shows.
    assert.ok(await page.isVisible('[data-testid="error-rate"]'));
    assert.equal(await page.inputValue('[data-testid="input-rate"]'), "abc");
    assert.match(await page.textContent('[data-testid="error-rate"]'), /not a number/);
    assert.ok(await page.isVisible('[data-testid="stale"]'));
    // Typing a good value drops the bad text from the URL.
    await typeInto(page, "rate", "60");
    await page.waitForFunction(() => new URL(location.href).searchParams.get("rate") === "60");
    await page.waitForSelector('[data-testid="error-rate"]', { state: "detached" });
    await done(page);
  });
}

test("a chat longer than the pool reads as a sentence and offers the size that holds it", async () => {
  const page = await app.page(PHONE);
  await openSize(page, "size/chats-per-replica?chat_tokens=2000000&reveal=all");
  const message = await page.textContent('[data-testid="error-chat_tokens"]');
  assert.match(message, /^Tokens per chat is longer than the whole KV pool/);
  assert.doesNotMatch(message, /Tokens per chat a chat/);
  assert.equal(await page.getAttribute('[data-testid="misfit"]', "data-fix"), "16");
  await page.click('[data-testid="misfit-fix"]');
  await page.waitForSelector('[data-testid="verdict"]');
  assert.equal(query(page).get("gpus_per_replica"), "16");
  assert.equal(await value(page, "chats"), Math.floor((await value(page, "kv_pool")) / 2000000));
  await done(page);
});
