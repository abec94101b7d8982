// The lab: a preset runs to completion and every plot draws, with tables that agree with the
// exported report; pause and resume; two runs compared; a deep link reloads to identical
// figures and Back returns to the previous preset; a bad value gets a message on its field
// while the previous run stays; a scenario file can be imported; the page fits 375 px.
// Runs are short (a simulated minute or less) except where the run itself is the point.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { start, open, shoot, repo, DESKTOP, PHONE } from "./harness.mjs";

let app;
before(async () => { app = await start({ base: "/trainer/" }); });
after(async () => { await app?.close(); });

const PLOTS = ["ttft", "itl", "engine", "kv", "replicas", "throughput", "outcomes", "fleet", "ttft-split", "caches"];
const tid = (id) => `[data-testid="${id}"]`;
const num = async (page, id) => Number(await page.getAttribute(tid(id), "data-value"));

/** Opens the lab at `query` and waits for its run to finish. */
async function openLab(page, query, { timeout = 120000 } = {}) {
  await open(page, app.url, `lab${query ? `?${query}` : ""}`);
  await page.waitForSelector(tid("lab-panel"));
  await waitDone(page, timeout);
}

async function waitDone(page, timeout = 120000) {
  await page.waitForSelector(tid("lab-done"), { timeout });
}

/** Every headline figure, by id. */
async function figures(page) {
  return page.$$eval('[data-testid^="lab-fig-"]', (els) =>
    Object.fromEntries(els.map((e) => [e.dataset.testid, e.dataset.value])));
}

/** Types into a knob's field as a person would. */
async function typeInto(page, key, text) {
  const input = page.locator(tid(`param-${key}`));
  await input.click();
  await input.press("ControlOrMeta+a");
  await input.pressSequentially(text);
}

/** How many pixels of a canvas differ from its top-left pixel (the background). */
async function inkedPixels(page, id) {
  return page.$eval(tid(id), (c) => {
    const ctx = c.getContext("2d");
    const { data } = ctx.getImageData(0, 0, c.width, c.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i] !== data[0] || data[i + 1] !== data[1] || data[i + 2] !== data[2]) n++;
    }
    return n;
  });
}

async function done(page) {
  assert.deepEqual(page.problems, []);
  await page.context().close();
}

test("a preset runs to completion, every plot draws, and its tables agree with the exported report", async () => {
  const page = await app.page();
  // The longest main-thread task while the page runs, from the Long Tasks API.
  await page.addInitScript(() => {
    window.__longest = 0;
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
    }).observe({ type: "longtask", buffered: true });
  });
  await openLab(page, "preset=fleet-ttft-gap&duration=60");
  // The backing store is sized for the screen: CSS width x devicePixelRatio.
  const dpr = await page.evaluate(() => devicePixelRatio);
  for (const p of PLOTS) {
    const canvas = `plot-${p}-canvas`;
    assert.ok(Number(await page.getAttribute(tid(canvas), "data-drawn")) > 0, `${p}: nothing drawn`);
    const ink = await inkedPixels(page, canvas);
    assert.ok(ink > 500, `${p}: the canvas is blank (${ink} inked pixels)`);
    const [w, cw] = await page.$eval(tid(canvas), (c) => [c.width, c.clientWidth]);
    assert.equal(w, Math.round(cw * dpr), `${p}: backing store not sized by devicePixelRatio`);
    assert.ok(await page.locator(`${tid(`plot-${p}`)} table`).count() > 0, `${p}: no table`);
  }
  const [download] = await Promise.all([page.waitForEvent("download"), page.click(tid("lab-export-json"))]);
  const exported = JSON.parse(fs.readFileSync(await download.path(), "utf8"));
  const r = exported.report;
  assert.equal(r.verdict, "completed");
  assert.equal(exported.query, "preset=fleet-ttft-gap&duration=60");
  const clocks = { ttft: ["engine", "server", "user"], itl: ["engine", "gateway", "client"] };
  for (const [plot, names] of Object.entries(clocks)) {
    for (const name of names) {
      const s = r.clocks[`${name}_${plot}`];
      for (const q of ["p50", "p90", "p99", "max"]) {
        assert.equal(await num(page, `${plot}-${name}-${q}`), s[q], `${plot} ${name} ${q}`);
      }
      assert.equal(await num(page, `${plot}-${name}-count`), s.count);
    }
  }
  // This scenario's point: the gateway's TTFT is far above the engine's.
  assert.ok(r.clocks.server_ttft.p99 > 2 * r.clocks.engine_ttft.p99);
  assert.equal(await num(page, "outcomes-completed"), r.outcomes.completed);
  assert.equal(await num(page, "outcomes-arrived"), r.outcomes.arrived);
  assert.equal(await num(page, "throughput-vllm"), r.vllm.output_throughput);
  assert.equal(await page.locator('[data-testid^="replica-row-"]').count(), exported.replicas.length);
  assert.equal(await num(page, "replica-1-routed"), exported.replicas[0].routed);
  assert.equal(Number(await page.getAttribute(tid("table-engine"), "data-points")), r.series.length);
  const maxWaiting = Math.max(...r.series.map((p) => p.waiting));
  assert.equal(await num(page, "engine-waiting-max"), maxWaiting);
  for (const f of exported.headline) assert.equal(await num(page, `lab-fig-${f.id}`), f.value, f.id);
  // The CSV export has a row per point of the series.
  const [csv] = await Promise.all([page.waitForEvent("download"), page.click(tid("lab-export-csv"))]);
  assert.equal(fs.readFileSync(await csv.path(), "utf8").trim().split("\n").length, r.series.length + 1);
  const longest = await page.evaluate(() => window.__longest);
  const slice = Number(await page.getAttribute(tid("lab-done"), "data-longest"));
  console.log(`lab, fleet-ttft-gap for 60 s: longest slice ${slice.toFixed(1)} ms, longest long task ${longest.toFixed(0)} ms`);
  await shoot(page, "lab-ttft-gap-1280");
  await done(page);
});

test("every preset runs in the lab", async () => {
  const page = await app.page();
  await open(page, app.url, "lab?preset=fleet-seed&duration=5");
  await waitDone(page);
  const presets = await page.$$eval(`${tid("lab-preset")} option`, (os) => os.map((o) => o.value).filter((v) => v !== "file"));
  // Every shipped scenario is a preset.
  assert.equal(presets.length, fs.readdirSync(path.join(repo, "content", "scenarios")).length);
  for (const id of presets) {
    // Short runs: past the evening peak's second wave, which starts at 300 s.
    const duration = id === "fleet-evening-peak" ? 310 : id === "replica-follow-one-chat" ? 10 : 5;
    // Let the last page's requests (its favicon) finish, so leaving it aborts none.
    await page.waitForLoadState("networkidle");
    await page.goto(`${app.url}lab?preset=${id}&duration=${duration}`);
    await page.waitForSelector(`${tid("lab-done")}, ${tid("lab-failed")}`, { timeout: 120000 });
    assert.equal(await page.locator(tid("lab-failed")).count(), 0, id);
    assert.ok(Number(await page.getAttribute(tid("lab-done"), "data-events")) > 0, id);
    if (id.startsWith("replica-")) assert.equal(await page.locator(tid("lab-replica-note")).count(), 1, id);
  }
  // The runaway stops at a work cap and says so.
  assert.equal(await page.locator(tid("lab-overloaded")).count(), 1);
  await done(page);
});

test("while a run comes in, a chart off screen waits, and draws when scrolled to or when the run ends", async () => {
  const page = await app.page();
  // Two simulated hours: at x100 the run lasts 72 s of wall time, so on a loaded machine it
  // is still coming in when the checks below read its progress (one hour once ended first).
  await open(page, app.url, "lab?preset=fleet-seed&duration=7200");
  await page.waitForSelector(`${tid("lab-progress")}[data-state="running"]`);
  await page.selectOption(tid("lab-speed"), "x100");
  const canvas = tid("plot-fleet-canvas");
  const below = await page.$eval(canvas, (c) => c.getBoundingClientRect().top > innerHeight);
  assert.ok(below, "the last chart should start below the fold");
  const now = async () => Number(await page.getAttribute(tid("lab-progress"), "data-now"));
  const points = async () => Number(await page.getAttribute(tid("table-fleet"), "data-points"));
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="table-fleet"]')?.dataset.points) > 0);
  const held = await page.getAttribute(canvas, "data-drawn");
  const [t0, p0] = [await now(), await points()];
  // Several live updates later its table has more points; its canvas has not been redrawn.
  await page.waitForFunction(
    (p) => Number(document.querySelector('[data-testid="table-fleet"]')?.dataset.points) > p + 100, p0,
    { timeout: 30000 },
  );
  assert.ok((await now()) > t0, "the run moved on");
  assert.equal(await page.getAttribute(canvas, "data-drawn"), held, "an off-screen chart redrew during the run");
  // On screen, it draws what the run has so far.
  await page.locator(canvas).scrollIntoViewIfNeeded();
  await page.waitForFunction((h) => document.querySelector('[data-testid="plot-fleet-canvas"]').dataset.drawn !== h, held);
  // Back at the top, the run finishes as fast as it goes, and every chart shows its end.
  await page.evaluate(() => scrollTo(0, 0));
  await page.selectOption(tid("lab-speed"), "max");
  await waitDone(page);
  const last = await points();
  for (const p of PLOTS) {
    await page.waitForFunction((id) => Number(document.querySelector(`[data-testid="plot-${id}-canvas"]`).dataset.drawn) > 0, p);
  }
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid="plot-fleet-canvas"]').dataset.drawn) >= n, last);
  await done(page);
});

test("a run's status line is updated in place, at most ten times a second", async () => {
  // The worker reports after every slice (25 ms); the line was built anew for each report,
  // forty layouts and paints a second on the main thread while the lab ran.
  const page = await app.page();
  await open(page, app.url, "lab?preset=fleet-seed&duration=7200");
  await page.waitForSelector(`${tid("lab-progress")}[data-state="running"]`);
  // At full speed the opening run can end before the speed change reaches it (two simulated
  // hours take about two seconds), so the run watched is started afresh at x100.
  await page.selectOption(tid("lab-speed"), "x100");
  await page.click(tid("lab-run"));
  await page.waitForSelector(`${tid("lab-progress")}[data-state="running"]`);
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="lab-progress"]')?.dataset.now) < 100);
  const seen = await page.evaluate(() => new Promise((resolve) => {
    const line = document.querySelector('[data-testid="lab-progress"]');
    let updates = 0;
    const watch = new MutationObserver((ms) => { updates += ms.filter((m) => m.attributeName === "data-now").length; });
    watch.observe(line, { attributes: true });
    setTimeout(() => {
      watch.disconnect();
      resolve({ updates, same: document.querySelector('[data-testid="lab-progress"]') === line });
    }, 2000);
  }));
  assert.ok(seen.same, "the status line was built again while the run went on");
  assert.ok(seen.updates >= 3, `the progress shown did not move (${seen.updates} updates in 2 s)`);
  assert.ok(seen.updates <= 22, `${seen.updates} progress updates shown in 2 s`);
  await done(page);
});

test("pause holds the simulated clock and resume carries on to the end", async () => {
  const page = await app.page();
  await open(page, app.url, "lab?preset=fleet-seed&duration=900");
  await page.waitForSelector(`${tid("lab-progress")}[data-state="running"]`);
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="lab-progress"]')?.dataset.now) > 5);
  await page.click(tid("lab-pause"));
  await page.waitForSelector(`${tid("lab-progress")}[data-state="paused"]`);
  const t1 = Number(await page.getAttribute(tid("lab-progress"), "data-now"));
  assert.ok(t1 > 0 && t1 < 900, `paused at ${t1}`);
  await page.waitForTimeout(600);
  assert.equal(Number(await page.getAttribute(tid("lab-progress"), "data-now")), t1, "the clock moved while paused");
  // The plots show the run so far while it is paused.
  assert.ok(Number(await page.getAttribute(tid("plot-engine-canvas"), "data-drawn")) > 0);
  assert.ok(await page.isDisabled(tid("lab-pause")));
  await page.click(tid("lab-resume"));
  await page.waitForSelector(`${tid("lab-progress")}[data-state="running"]`);
  await waitDone(page);
  // The run paused and resumed is the same as a run straight through.
  const paused = await figures(page);
  await page.click(tid("lab-run"));
  await waitDone(page);
  assert.deepEqual(await figures(page), paused);
  await page.click(tid("lab-reset"));
  await page.waitForSelector(tid("lab-idle"));
  assert.equal(await page.locator('[data-testid^="lab-fig-"]').count(), 0);
  await done(page);
});

test("clients who leave mid-reply: the engine drops them, or, not told, generates for nobody", async () => {
  const page = await app.page();
  await openLab(page, "preset=fleet-seed&duration=30&leave=30&leave_after=3");
  const left = await num(page, "outcomes-abandoned");
  assert.ok(left > 0, "some clients left");
  assert.ok((await num(page, "outcomes-abandoned_mid_reply")) > 0);
  assert.ok((await num(page, "outcomes-cancelled_in_engine")) > 0);
  assert.equal(await num(page, "outcomes-tokens_for_nobody"), 0);
  assert.equal(await page.inputValue(tid("param-abort")), "on");
  await page.selectOption(tid("param-abort"), "off");
  await page.waitForSelector(tid("lab-stale"));
  assert.equal(new URL(page.url()).searchParams.get("abort"), "off");
  await page.click(tid("lab-run"));
  await waitDone(page);
  assert.equal(await num(page, "outcomes-cancelled_in_engine"), 0);
  assert.ok((await num(page, "outcomes-tokens_for_nobody")) > 100, "work for nobody");
  // With nobody leaving, the rows are gone and the stay field is off.
  await typeInto(page, "leave", "0");
  assert.ok(await page.isDisabled(tid("param-leave_after")));
  await page.click(tid("lab-run"));
  await waitDone(page);
  assert.equal(await page.locator(tid("outcomes-abandoned")).count(), 0);
  await done(page);
});

test("prefill and decode split by a knob: first tokens pay for the KV cache's move, replies stop stalling", async () => {
  const page = await app.page();
  await openLab(page, "preset=fleet-disaggregate&duration=40");
  // One pool that does both: nothing moves, and the link's knobs are off.
  assert.equal(await num(page, "ttft_split-KV transfer-p99"), 0);
  assert.ok(await page.isDisabled(tid("param-link")));
  const mixedItl = await num(page, "itl-engine-p99");
  // Four of the eight prefill, four more decode, typed as a person would.
  await typeInto(page, "replicas", "4");
  await typeInto(page, "decode_replicas", "4");
  await page.waitForSelector(tid("lab-stale"));
  assert.equal(await page.textContent(`label[for="param-replicas"]`).then((t) => t.trim().startsWith("Prefill replicas")), true);
  assert.ok(!(await page.isDisabled(tid("param-link"))));
  const q = new URL(page.url()).searchParams;
  assert.equal(q.get("decode_replicas"), "4");
  await page.click(tid("lab-run"));
  await waitDone(page);
  const moved = await num(page, "ttft_split-KV transfer-p50");
  assert.ok(moved > 0, "every first token waits for its KV cache");
  assert.ok(await num(page, "ttft_split-first decode-p50") > 0);
  assert.ok(await num(page, "itl-engine-p99") < 0.5 * mixedItl, "decode replicas never run a prompt");
  // A slower link: the move takes longer, and the table agrees with the exported report.
  await page.selectOption(tid("param-link"), "ethernet-25g");
  await page.click(tid("lab-run"));
  await waitDone(page);
  assert.ok(await num(page, "ttft_split-KV transfer-p50") > 2 * moved);
  const [download] = await Promise.all([page.waitForEvent("download"), page.click(tid("lab-export-json"))]);
  const r = JSON.parse(fs.readFileSync(await download.path(), "utf8")).report;
  assert.equal(r.kv_transfer.link, "ethernet-25g");
  assert.equal(await num(page, "ttft_split-KV transfer-p99"), r.ttft_split.transfer.p99);
  assert.equal(await num(page, "ttft_split-on the link-count"), r.kv_transfer.transfers);
  assert.deepEqual(r.pools.map((p) => p.role), ["prefill", "decode"]);
  await done(page);
});

test("adapters by knobs: spread everywhere they miss and pass requests over; routed by adapter they stay loaded", async () => {
  const page = await app.page();
  await openLab(page, "preset=fleet-adapters&duration=40");
  // The preset routes by adapter: each replica keeps its share loaded.
  assert.equal(await page.inputValue(tid("param-max_loras")), "8");
  assert.equal(await page.inputValue(tid("param-policy")), "adapter_affinity");
  assert.ok(!(await page.isDisabled(tid("param-lora_rank"))));
  const affinityLoads = await num(page, "lab-fig-lora_loads");
  assert.ok(affinityLoads >= 40, `every tenant's adapter loads once at least (${affinityLoads})`);
  assert.equal(await num(page, "lab-fig-lora_passed_over"), 0);
  assert.equal(await num(page, "caches-0-adapter_loads"), affinityLoads, "the caches table agrees");
  const affinityTtft = await num(page, "lab-fig-server_ttft_p99");
  // The router a person picks by counting requests: every replica sees every adapter.
  await page.selectOption(tid("param-policy"), "least_outstanding");
  assert.equal(new URL(page.url()).searchParams.get("policy"), "least_outstanding");
  await page.click(tid("lab-run"));
  await waitDone(page);
  assert.ok(await num(page, "lab-fig-lora_loads") > 10 * affinityLoads);
  assert.ok(await num(page, "lab-fig-lora_passed_over") > 0);
  assert.ok(await num(page, "lab-fig-server_ttft_p99") > 5 * affinityTtft);
  // No adapters at all: the rank has nothing to set, and nothing loads.
  await typeInto(page, "max_loras", "0");
  assert.ok(await page.isDisabled(tid("param-lora_rank")));
  await page.click(tid("lab-run"));
  await waitDone(page);
  assert.equal(await num(page, "lab-fig-lora_loads"), 0);
  await done(page);
});

test("a replica that fails mid-run breaks its streams and sends the rest elsewhere", async () => {
  const page = await app.page();
  await openLab(page, "preset=fleet-seed&duration=60&prompt=constant&prompt_a=6000");
  assert.equal(await page.locator(tid("outcomes-replicas_failed")).count(), 0);
  assert.ok(await page.isDisabled(tid("param-retries")), "no retries to set without a failure");
  await typeInto(page, "fail_at", "30");
  assert.ok(!(await page.isDisabled(tid("param-retries"))));
  await page.click(tid("lab-run"));
  await waitDone(page);
  assert.equal(await num(page, "outcomes-replicas_failed"), 1);
  const broken = await num(page, "outcomes-failed");
  const resent = await num(page, "outcomes-retried");
  assert.ok(broken > 0 && resent > 0, `${broken} broken, ${resent} sent again`);
  // No retries: what was sent again is broken too.
  await typeInto(page, "retries", "0");
  await page.click(tid("lab-run"));
  await waitDone(page);
  assert.equal(await num(page, "outcomes-retried"), 0);
  assert.equal(await num(page, "outcomes-failed"), broken + resent);
  assert.equal(new URL(page.url()).searchParams.get("fail_at"), "30");
  await done(page);
});

test("two runs compared: pin A, change a knob, run B, see the difference", async () => {
  const page = await app.page();
  await openLab(page, "preset=fleet-seed&duration=30");
  const a = await num(page, "lab-fig-server_ttft_p99");
  await page.click(tid("lab-pin"));
  await page.waitForSelector(tid("lab-compare-same"));
  await typeInto(page, "replicas", "4");
  await page.waitForSelector(tid("lab-stale"));
  await page.click(tid("lab-run"));
  await waitDone(page);
  await page.waitForSelector(tid("lab-compare"));
  assert.equal(await page.locator(tid("lab-compare-same")).count(), 0);
  assert.equal(await num(page, "cmp-server_ttft_p99-a"), a);
  const b = await num(page, "cmp-server_ttft_p99-b");
  assert.equal(b, await num(page, "lab-fig-server_ttft_p99"));
  assert.ok(b > a, `half the replicas, slower first tokens (${a} -> ${b})`);
  assert.equal(await num(page, "cmp-server_ttft_p99-diff"), b - a);
  // Both runs are on the plots: A dashed under B.
  const url = new URL(page.url());
  assert.equal(url.searchParams.get("pin"), "preset=fleet-seed&duration=30");
  assert.equal(url.searchParams.get("replicas"), "4");
  // The link carries both runs: a reload reruns A, then B, and compares them again.
  await page.reload();
  await waitDone(page);
  await page.waitForSelector(tid("lab-compare"));
  assert.equal(await num(page, "cmp-server_ttft_p99-a"), a);
  assert.equal(await num(page, "cmp-server_ttft_p99-b"), b);
  await shoot(page, "lab-compare-1280");
  await done(page);
});

test("the lesson's link (scenario, arm, compare) opens the two arms compared", async () => {
  const page = await app.page();
  await openLab(page, "scenario=fleet-ttft-gap&arm=slow-router-cold-pool&compare=fixed&duration=30");
  await page.waitForSelector(tid("lab-compare"));
  assert.equal(await page.inputValue(tid("lab-arm")), "slow-router-cold-pool");
  const a = await num(page, "cmp-server_ttft_p99-a");
  const b = await num(page, "cmp-server_ttft_p99-b");
  assert.ok(b > 1.5 * a, `the slow router and cold pool (B, ${b}) against the fix (A, ${a})`);
  assert.equal(await page.locator(tid("lab-query-error")).count(), 0);
  await done(page);
});

test("a deep link reloads to identical figures, and Back returns to the previous preset", async () => {
  const page = await app.page();
  const q = "preset=fleet-long-prompts&arm=token-aware&duration=30&replicas=6&policy=least_outstanding";
  await openLab(page, q);
  assert.equal(await page.inputValue(tid("param-replicas")), "6");
  assert.equal(await page.inputValue(tid("param-policy")), "least_outstanding");
  const first = await figures(page);
  assert.ok(Object.keys(first).length >= 10);
  await page.reload();
  await waitDone(page);
  assert.deepEqual(await figures(page), first);
  // Choosing another preset is a new history entry; Back restores the link's set-up and run.
  await page.selectOption(tid("lab-preset"), "fleet-chat-affinity");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("preset") === "fleet-chat-affinity");
  await page.goBack();
  await page.waitForFunction(() => new URL(location.href).searchParams.get("preset") === "fleet-long-prompts");
  await waitDone(page);
  assert.equal(await page.inputValue(tid("lab-preset")), "fleet-long-prompts");
  assert.equal(await page.inputValue(tid("param-replicas")), "6");
  assert.deepEqual(await figures(page), first);
  await done(page);
});

test("a bad value gets a message on its field and the previous run stays", async () => {
  const page = await app.page();
  await openLab(page, "preset=fleet-seed&duration=20");
  const before = await figures(page);
  const url = page.url();
  await typeInto(page, "rate", "lots");
  await page.waitForSelector(tid("param-rate-error"));
  assert.match(await page.textContent(tid("param-rate-error")), /number/);
  assert.equal(await page.getAttribute(tid("param-rate"), "aria-invalid"), "true");
  assert.equal(await page.getAttribute(tid("param-rate"), "aria-describedby"), "param-rate-error");
  assert.ok(await page.isDisabled(tid("lab-run")));
  assert.deepEqual(await figures(page), before);
  assert.equal(page.url(), url, "a bad value does not go into the URL");
  // A value the whole fleet rejects: the 405B model does not fit on one H100.
  await page.selectOption(tid("param-model"), "llama-3.1-405b");
  await page.waitForSelector(tid("param-model-error"));
  await typeInto(page, "rate", "40");
  await page.waitForSelector(tid("param-rate-error"), { state: "detached" });
  assert.deepEqual(await figures(page), before);
  await done(page);
});

test("a bad deep link names every bad value on its field, and the rest still runs", async () => {
  const page = await app.page();
  await openLab(page, "preset=fleet-seed&duration=10&rate=-5&policy=telepathy&nonsense=1");
  assert.match(await page.textContent(tid("param-rate-error")), /between/);
  assert.equal(await page.inputValue(tid("param-rate")), "-5");
  assert.match(await page.textContent(tid("param-policy-error")), /one of/);
  assert.match(await page.textContent(tid("lab-query-error")), /nonsense/);
  await done(page);
  const other = await app.page();
  await openLab(other, "preset=no-such-thing&duration=10");
  assert.match(await other.textContent(tid("lab-preset-error")), /no preset/);
  assert.equal(await other.inputValue(tid("lab-preset")), "fleet-seed");
  await done(other);
});

test("a scenario file imported by pasting runs, and a bad one is refused with a message", async () => {
  const page = await app.page();
  await openLab(page, "preset=fleet-seed&duration=10");
  await page.click(`${tid("lab-import")} summary`);
  await page.fill(tid("lab-import-text"), 'kind = "fleet"\n[[traffic]]\nworkload = { arrival = { type = "poisson", rate = 5.0 }, duration_s = 10.0 }\n[[pools]]\nreplicas = 3\n');
  await page.click(tid("lab-import-run"));
  // The worker reads the file first; the old run stays on screen, marked done, until the
  // imported one starts (its link is written as it starts).
  await page.waitForFunction(() => (new URL(location.href).searchParams.get("file") ?? "").includes("replicas = 3"));
  assert.equal(await page.getAttribute(tid("lab-import-run"), "data-state"), "ready");
  await waitDone(page);
  assert.equal(await page.inputValue(tid("lab-preset")), "file");
  assert.equal(await page.inputValue(tid("param-replicas")), "3");
  assert.equal(await page.locator('[data-testid^="replica-row-"]').count(), 3);
  assert.ok(new URL(page.url()).searchParams.get("file").includes("replicas = 3"));
  const good = await figures(page);
  // The link alone opens the same file: the page has no TOML parser, so the worker reads it.
  const again = await app.page();
  await openLab(again, new URL(page.url()).search.slice(1));
  assert.equal(await again.inputValue(tid("lab-preset")), "file");
  assert.equal(await again.inputValue(tid("param-replicas")), "3");
  assert.equal(await again.locator(tid("lab-file-error")).count(), 0);
  assert.deepEqual(await figures(again), good);
  await done(again);
  await page.fill(tid("lab-import-text"), "[[pools]]\nreplicas = 0\nmodel = \"gpt-9\"\n");
  await page.click(tid("lab-import-run"));
  await page.waitForSelector(tid("lab-import-error"));
  assert.match(await page.textContent(tid("lab-import-error")), /pools\[0\]\.replicas/);
  assert.equal(await page.getAttribute(tid("lab-import-text"), "aria-invalid"), "true");
  assert.deepEqual(await figures(page), good);
  // The same file through the file picker.
  const file = "/tmp/lab-import-test.toml";
  fs.writeFileSync(file, 'kind = "replica"\n[workload]\nduration_s = 5.0\n');
  await page.setInputFiles(tid("lab-import-file"), file);
  await page.waitForFunction(() => document.querySelector('[data-testid="lab-replica-note"]'));
  await waitDone(page);
  assert.equal(await page.locator('[data-testid^="replica-row-"]').count(), 1);
  await done(page);
});

for (const [viewport, scheme] of [[PHONE, "light"], [PHONE, "dark"], [DESKTOP, "dark"]]) {
  test(`the lab fits ${viewport.width} px in the ${scheme} theme`, async () => {
    const page = await app.page(viewport, { colorScheme: scheme });
    await openLab(page, "preset=fleet-evening-peak&arm=ttft&duration=320");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `page is ${overflow}px wider than the viewport`);
    for (const p of PLOTS) {
      const [w, cw] = await page.$eval(tid(`plot-${p}-canvas`), (c) => [c.width, c.clientWidth]);
      assert.ok(cw <= viewport.width && w > 0, `${p}: ${cw}px wide`);
      assert.ok((await inkedPixels(page, `plot-${p}-canvas`)) > 300, `${p} blank`);
    }
    // The canvas is drawn in the theme's colours: its background is the surface colour.
    const [bg, surface] = await page.$eval(tid("plot-ttft-canvas"), (c) => {
      const d = c.getContext("2d").getImageData(1, 1, 1, 1).data;
      const s = getComputedStyle(c).getPropertyValue("--surface").trim();
      return [`#${[d[0], d[1], d[2]].map((v) => v.toString(16).padStart(2, "0")).join("")}`, s];
    });
    assert.equal(bg, surface);
    await shoot(page, `lab-${viewport.width}-${scheme}`);
    await done(page);
  });
}

test("the presets run the validated engine's fixed costs per step; changing them travels in the link", async () => {
  const page = await app.page();
  await openLab(page, "preset=fleet-seed&duration=20");
  // The presets run the validated engine: a fixed GPU cost and CPU work per step.
  assert.ok(Number(await page.inputValue(tid("param-step_overhead"))) > 0);
  assert.ok(Number(await page.inputValue(tid("param-cpu_overhead"))) > 0);
  const costly = await num(page, "itl-engine-p50");
  // The run says it used the validated engine; a fixed cost of the learner's own makes it theirs.
  assert.equal(await page.getAttribute(tid("lab-engine"), "data-engine"), "validated");
  await typeInto(page, "step_overhead", "0");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("step_overhead") === "0");
  await page.click(tid("lab-run"));
  await waitDone(page);
  const plain = await num(page, "itl-engine-p50");
  assert.equal(await page.getAttribute(tid("lab-engine"), "data-engine"), "custom");
  assert.match(await page.textContent(tid("lab-engine")), /engine of its own/);
  // Every decode step paid the fixed GPU time, so without it the median inter-token gap shrinks by about it.
  assert.ok(costly > plain + 0.001, `median ITL ${costly} -> ${plain}`);
  await typeInto(page, "cpu_overhead", "-1");
  await page.waitForSelector(tid("param-cpu_overhead-error"));
  await done(page);
});

// Issue 25: precision is three choices, each its own knob: FP8 weights only, FP8 weights and
// activations, an FP8 KV cache. Each changes the run where the cost model says, travels in the
// link, and brings a note of what it changes and what it may cost in quality, with its source.
test("each FP8 choice is a knob of its own that changes the run and says what it costs", async () => {
  const page = await app.page();
  await openLab(page, "preset=fleet-seed&duration=20");
  assert.equal(await page.inputValue(tid("param-weights")), "bf16");
  assert.equal(await page.inputValue(tid("param-kv_format")), "bf16");
  assert.equal(await page.locator(tid("lab-precision")).count(), 0, "all BF16: no note");
  const tpot = () => num(page, "lab-fig-tpot_p99");
  const bf16 = await tpot();
  // Weight-only FP8: a note with the weights' two sizes and its caveat's source.
  await page.selectOption(tid("param-weights"), "fp8-weight-only");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("weights") === "fp8-weight-only");
  const note = tid("lab-precision-fp8-weight-only");
  await page.waitForSelector(note);
  assert.match(await page.textContent(note), /GB of weights instead of .* GB/);
  assert.match(await page.textContent(note), /Quality:/);
  assert.match(await page.getAttribute(`${note} a`, "href"), /^https:\/\/github\.com\/vllm-project/);
  await page.click(tid("lab-run"));
  await waitDone(page);
  const w8a16 = await tpot();
  assert.ok(w8a16 < bf16, `half the weight bytes, faster decode steps (${bf16} -> ${w8a16})`);
  // FP8 weights and activations: the FP8 tensor cores speed up the compute-bound steps too.
  await page.selectOption(tid("param-weights"), "fp8");
  await page.waitForSelector(tid("lab-precision-fp8"));
  await page.click(tid("lab-run"));
  await waitDone(page);
  const w8a8 = await tpot();
  assert.ok(w8a8 <= w8a16, `FP8 matmuls (${w8a16} -> ${w8a8})`);
  // An FP8 KV cache: its own note beside the weights'.
  await page.selectOption(tid("param-kv_format"), "fp8");
  await page.waitForSelector(tid("lab-precision-kv-fp8"));
  assert.equal(await page.locator('[data-testid^="lab-precision-"]').count(), 2);
  assert.match(await page.textContent(tid("lab-precision-kv-fp8")), /KiB a token instead of/);
  await page.click(tid("lab-run"));
  await waitDone(page);
  const both = await figures(page);
  // The link carries every choice: a reload reruns to the same figures.
  await page.reload();
  await page.waitForSelector(tid("lab-panel"));
  await waitDone(page);
  assert.equal(await page.inputValue(tid("param-weights")), "fp8");
  assert.equal(await page.inputValue(tid("param-kv_format")), "fp8");
  assert.deepEqual(await figures(page), both);
  await done(page);
});

// Issue 25: speculative decoding is three knobs (the proposer, guesses per step, the acceptance
// rate); at a quiet hour a draft model that guesses well shortens every reply, and one that
// never guesses right only adds its cost. The run says what each verifying step yielded.
test("speculative decoding: a good draft speeds a quiet fleet, a useless one slows it", async () => {
  const page = await app.page();
  await openLab(page, "preset=fleet-seed&duration=20&rate=4");
  assert.equal(await page.inputValue(tid("param-spec")), "off");
  assert.ok(await page.isDisabled(tid("param-spec_k")), "no guesses while it is off");
  assert.equal(await num(page, "lab-fig-spec_tokens_per_step"), 0);
  const plain = await num(page, "lab-fig-tpot_p99");
  await page.selectOption(tid("param-spec"), "draft:llama-3.2-1b");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("spec") === "draft:llama-3.2-1b");
  assert.ok(!(await page.isDisabled(tid("param-spec_k"))));
  await typeInto(page, "spec_accept", "80");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("spec_accept") === "80");
  await page.click(tid("lab-run"));
  await waitDone(page);
  const good = await num(page, "lab-fig-tpot_p99");
  const perStep = await num(page, "lab-fig-spec_tokens_per_step");
  assert.ok(perStep > 2, `tokens per decoding step ${perStep}`);
  assert.ok(good < plain, `a draft that guesses well (${plain} -> ${good})`);
  await typeInto(page, "spec_accept", "0");
  await page.waitForFunction(() => new URL(location.href).searchParams.get("spec_accept") === "0");
  await page.click(tid("lab-run"));
  await waitDone(page);
  assert.equal(await num(page, "lab-fig-spec_tokens_per_step"), 1);
  const useless = await num(page, "lab-fig-tpot_p99");
  assert.ok(useless > plain, `a draft that never guesses right (${plain} -> ${useless})`);
  // Out of range: a message on the field, the last run stays.
  await typeInto(page, "spec_k", "40");
  await page.waitForSelector(tid("param-spec_k-error"));
  await done(page);
});

// Issue 29: on a phone the set-up panel is long; the controls that start a run and say how it
// goes stay on screen (a run bar fixed to the bottom), so Run is in the first screenful, beside
// a knob deep in the panel and at the end of the results alike. On a desktop it is in the
// first screenful too, at the top of the results column.
for (const viewport of [DESKTOP, PHONE]) {
  test(`Run is on screen on load and runs by keyboard (${viewport.width} px)`, async () => {
    const page = await app.page(viewport);
    await open(page, app.url, "lab?preset=fleet-seed&duration=20");
    await page.waitForSelector(tid("lab-run"));
    const onScreen = async (id) => {
      const b = await page.locator(tid(id)).boundingBox();
      return b !== null && b.y >= 0 && b.y + b.height <= viewport.height && b.x >= 0 && b.x + b.width <= viewport.width;
    };
    const top = (await page.locator(tid("lab-run")).boundingBox()).y;
    assert.ok(top < viewport.height && (await onScreen("lab-run")), `Run's top is ${top} px down`);
    await waitDone(page);
    // A knob changed: the run is stale; on a phone, Run (with the note) is on screen beside
    // the knob deep in the panel.
    await typeInto(page, "duration", "15");
    await page.waitForSelector(tid("lab-stale"));
    if (viewport === PHONE) {
      assert.ok(await onScreen("lab-run"), "Run beside the knob");
      assert.ok(await onScreen("lab-stale"), "the stale note beside the knob");
      // The field typed in is not behind the bar.
      const [field, bar] = await page.evaluate(() => [
        document.querySelector('[data-testid="param-duration"]').getBoundingClientRect().bottom,
        document.querySelector('[data-testid="lab-controls"]').getBoundingClientRect().top,
      ]);
      assert.ok(field <= bar, `the field (bottom ${field}) is above the bar (top ${bar})`);
      await shoot(page, `lab-run-bar-${viewport.width}`);
    }
    await page.focus(tid("lab-run"));
    await page.keyboard.press("Enter");
    await page.waitForSelector(tid("lab-stale"), { state: "detached" });
    await waitDone(page);
    assert.equal(new URL(page.url()).searchParams.get("duration"), "15");
    if (viewport === PHONE) {
      // At the end of the results, Run and its status are still on screen, and nothing of the
      // page is left behind the bar.
      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      assert.ok(await onScreen("lab-run"), "Run at the end of the page");
      assert.ok(await onScreen("lab-done"), "the status at the end of the page");
      const [footer, bar] = await page.evaluate(() => [
        document.querySelector(".site-footer").getBoundingClientRect().bottom,
        document.querySelector('[data-testid="lab-controls"]').getBoundingClientRect().top,
      ]);
      assert.ok(footer <= bar + 1, `the footer (bottom ${footer}) is above the bar (top ${bar})`);
      await shoot(page, `lab-run-bar-end-${viewport.width}`);
    }
    await done(page);
  });
}

// Issue 25: a set-up that speculates can be swept across load, with and without speculation;
// the tokens per step follow the acceptance rate, and the speedup is drawn against the rate.
test("a speculating set-up sweeps the load: tokens per step and the speedup, drawn and tabled", async () => {
  const page = await app.page();
  await openLab(page, "preset=fleet-spec-latency&arm=eagle&duration=30");
  // A set-up without speculation offers no sweep (the seed's, below, after this one).
  await page.click(tid("sweep-run"));
  await page.waitForSelector(tid("sweep-reading"), { timeout: 120000 });
  const rows = await page.$$eval(tid("sweep-row"), (els) => els.map((e) => ({
    rate: Number(e.dataset.rate), tokens: Number(e.dataset.tokens),
  })));
  const speedups = await page.$$eval(tid("sweep-speedup-row"), (els) => els.map((e) => ({
    rate: Number(e.dataset.rate), speedup: Number(e.dataset.speedup),
  })));
  // Each chart tables its own figures, at the same seven levels.
  assert.equal(rows.length, 7);
  assert.deepEqual(speedups.map((r) => r.rate), rows.map((r) => r.rate));
  for (const r of rows) assert.ok(Math.abs(r.tokens / 2.176 - 1) < 0.05, JSON.stringify(r));
  assert.ok(speedups[0].speedup > 1.3, JSON.stringify(speedups[0]));
  assert.ok(rows[1].rate > rows[0].rate);
  for (const id of ["plot-sweep-tokens-canvas", "plot-sweep-speedup-canvas"]) {
    await page.waitForFunction((id) => Number(document.querySelector(`[data-testid="${id}"]`)?.dataset.drawn) > 0, id);
    assert.ok((await inkedPixels(page, id)) > 100, id);
  }
  assert.match(await page.textContent(tid("sweep-reading")), /requests a second/);
  // The seed does not speculate: no sweep to offer.
  await openLab(page, "preset=fleet-seed&duration=5");
  assert.equal(await page.locator(tid("lab-sweep")).count(), 0);
  await done(page);
});
