// The build-ups: both walk through six steps by keys and by buttons, keeping the step in the
// URL; a deep link to step 5 names the preempted request; changing D's prompt replays the
// replica with new figures (and a pool that never fills says there was no preemption); the
// fleet's request lights its hop and its clocks stop in order; bad URL values get a message;
// Space plays and pauses; reduced motion skips the animation; the layout fits 375 px.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { start, open, shoot, shots, DESKTOP, PHONE } from "./harness.mjs";

let app;
before(async () => { app = await start({ base: "/trainer/" }); });
after(async () => { await app?.close(); });

const position = (page) => page.textContent('[data-testid="player-position"]');
const stepInUrl = (page) => page.evaluate(() => new URLSearchParams(location.search).get("step"));
const fig = async (page, name) => Number(await page.getAttribute(`[data-testid="fig-${name}"]`, "data-value"));
const figText = async (page, name) => (await page.textContent(`[data-testid="fig-${name}"]`)).trim();

async function openBuildUp(page, rel) {
  await open(page, app.url, rel);
  await page.waitForSelector('[data-testid="player"]', { timeout: 30000 });
}

test("the replica build-up walks by keys and by buttons, with the step in the URL", async () => {
  const page = await app.page();
  await openBuildUp(page, "buildups/replica");
  assert.equal(await position(page), "Step 1 of 6");
  assert.equal(await page.getAttribute('[data-testid="narration"]', "data-step"), "arrive");
  assert.equal(await figText(page, "d_prompt"), "2,000");
  assert.equal(await page.locator('[data-testid="batch"] tbody tr').count() > 0, true);
  // Keys: Right to the end, Home, End, Left.
  for (let k = 2; k <= 6; k++) {
    await page.keyboard.press("ArrowRight");
    assert.equal(await position(page), `Step ${k} of 6`);
  }
  await page.waitForFunction(() => new URLSearchParams(location.search).get("step") === "6");
  await page.keyboard.press("Home");
  assert.equal(await position(page), "Step 1 of 6");
  await page.keyboard.press("End");
  assert.equal(await position(page), "Step 6 of 6");
  await page.keyboard.press("ArrowLeft");
  assert.equal(await stepInUrl(page), "5");
  // Buttons, and the timeline.
  await page.click('[data-testid="chapter-1"]');
  assert.equal(await position(page), "Step 1 of 6");
  assert.equal(await page.isDisabled('[data-testid="player-prev"]'), true);
  for (let k = 2; k <= 6; k++) {
    await page.click('[data-testid="player-next"]');
    assert.equal(await position(page), `Step ${k} of 6`);
  }
  assert.equal(await page.isDisabled('[data-testid="player-next"]'), true);
  await page.click('[data-testid="player-prev"]');
  assert.equal(await position(page), "Step 5 of 6");
  // D's TTFT is the wait plus the chunk steps, and D's clock shows it at step 4.
  await page.click('[data-testid="chapter-4"]');
  await page.waitForFunction(() => document.querySelector('[data-testid="d-ttft"]')?.dataset.value);
  const ttft = await fig(page, "d_ttft");
  assert.ok(Math.abs(ttft - (await fig(page, "d_wait")) - (await fig(page, "prefill_time"))) < 1e-9);
  assert.equal(Number(await page.getAttribute('[data-testid="d-ttft"]', "data-value")), ttft);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a deep link to step 5 names the preempted request and shows its blocks freed", async () => {
  const page = await app.page();
  await openBuildUp(page, "buildups/replica?step=5");
  assert.equal(await position(page), "Step 5 of 6");
  assert.equal(await figText(page, "victim"), "D");
  assert.match(await page.textContent('[data-testid="event-preempted"]'), /preempted: D/);
  // D's blocks are freed (some taken again at once by the request that needed them).
  const freed = Number(await page.textContent('[data-testid="blocks-freed"]'));
  assert.ok(freed > 0 && freed <= (await fig(page, "victim_blocks")), `${freed} freed`);
  assert.equal(Number(await page.textContent('[data-testid="blocks-D"]')), 0);
  // The sub-step scrubber shows the step before it too, where D holds them; the URL keeps it.
  await page.fill('[data-testid="player-sub"]', "0");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("sub") === "1");
  assert.equal(await page.locator('[data-testid="event-preempted"]').count(), 0);
  assert.equal(Number(await page.textContent('[data-testid="blocks-D"]')), await fig(page, "victim_blocks"));
  // Linked views: hovering D lights exactly D's blocks.
  await page.hover('[data-testid="kv-legend"] [data-testid="who-D"]');
  const lit = await page.locator(".kv-grid .kv-cell.linked").count();
  assert.equal(lit, Number(await page.textContent('[data-testid="blocks-D"]')));
  assert.ok(lit > 0);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("changing D's prompt replays the run with new figures; a big pool has no preemption", async () => {
  const page = await app.page();
  await openBuildUp(page, "buildups/replica?step=2");
  const chunks = await fig(page, "chunks");
  await page.fill('[data-testid="change-prompt"]', "3000");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("prompt") === "3000");
  // The run comes back from the simulators' worker: until then the frames are the old ones.
  await page.waitForSelector('[data-testid="frames-stale"]', { state: "detached" });
  assert.ok((await fig(page, "chunks")) > chunks, "more chunks for a longer prompt");
  await page.click('[data-testid="chapter-1"]');
  assert.equal(await fig(page, "d_prompt"), 3000);
  await page.fill('[data-testid="change-pool"]', "4096");
  await page.click('[data-testid="chapter-5"]');
  await page.waitForSelector('[data-testid="frames-stale"]', { state: "detached" });
  assert.match(await page.textContent('[data-testid="step-text"]'), /No preemption/);
  assert.equal(await page.locator('[data-testid="fig-victim"]').count(), 0);
  // A value out of range is named under its field, and the run stays as it was.
  await page.fill('[data-testid="change-budget"]', "5");
  assert.match(await page.textContent('[data-testid="change-budget-error"]'), /16 to 8192/);
  await page.click('[data-testid="change-reset"]');
  await page.waitForFunction(() => !new URLSearchParams(location.search).has("prompt"));
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("bad URL values get a message, never a broken page", async () => {
  const page = await app.page();
  await openBuildUp(page, "buildups/replica?step=9&pool=12&cache=maybe");
  const msg = await page.textContent('[data-testid="url-errors"]');
  assert.match(msg, /step=9/);
  assert.match(msg, /pool=12/);
  assert.match(msg, /cache=maybe/);
  assert.equal(await position(page), "Step 1 of 6");
  await open(page, app.url, "buildups/nope");
  assert.match(await page.textContent('[data-testid="buildup-unknown"]'), /nope/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the fleet build-up follows one request hop by hop with its clocks", async () => {
  const page = await app.page();
  await openBuildUp(page, "buildups/fleet");
  assert.equal(await position(page), "Step 1 of 6");
  // Step 1: the gateway is lit; another tenant's 429 with Retry-After.
  assert.match(await page.textContent('[data-testid="refused"]'), /429 Too Many Requests · Retry-After: \d+/);
  assert.equal(await page.getAttribute('[data-testid="hop-quota"]', "aria-current"), "step");
  assert.ok((await fig(page, "retry_after")) > 0);
  // Step 2 by key: the router's choice, with the replicas' live load.
  await page.keyboard.press("ArrowRight");
  assert.equal(await page.getAttribute('[data-testid="hop-router"]', "aria-current"), "step");
  const chosen = page.locator('[data-testid="candidates"] tr[data-chosen="true"]');
  assert.equal(await chosen.count(), 1);
  assert.match(await figText(page, "chosen"), /replica \d/);
  // Step 3 by button: the engine clock runs, the others too; step 4: all three TTFTs stop.
  await page.click('[data-testid="player-next"]');
  await page.fill('[data-testid="player-sub"]', "0");
  assert.equal(await page.getAttribute('[data-testid="clock-engine_ttft"]', "data-state"), "running");
  assert.equal(await page.getAttribute('[data-testid="clock-server_ttft"]', "data-state"), "running");
  await page.click('[data-testid="player-next"]');
  await page.fill('[data-testid="player-sub"]', "2");
  for (const c of ["engine_ttft", "server_ttft", "user_ttft", "gateway_itl", "client_itl"]) {
    assert.equal(await page.getAttribute(`[data-testid="clock-${c}"]`, "data-state"), "stopped", c);
  }
  const engine = Number(await page.getAttribute('[data-testid="clock-engine_ttft"]', "data-value"));
  const server = Number(await page.getAttribute('[data-testid="clock-server_ttft"]', "data-value"));
  const user = Number(await page.getAttribute('[data-testid="clock-user_ttft"]', "data-value"));
  assert.ok(engine < server && server < user, `${engine} < ${server} < ${user}`);
  assert.equal(await fig(page, "server_ttft"), server);
  // Steps 5 and 6: the scale-up with its lead time, the overflow path. (The scrubber keeps
  // its arrow keys for itself; from anywhere else they move between steps.)
  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press("ArrowRight");
  assert.match(await page.textContent('[data-testid="scale-replicas"]'), /\d+ → \d+ replicas/);
  assert.equal((await fig(page, "ready_at")) - (await fig(page, "scale_at")), await fig(page, "lead_time"));
  await page.keyboard.press("End");
  assert.equal(await position(page), "Step 6 of 6");
  assert.equal(await page.getAttribute('[data-testid="hop-overflow"]', "aria-current"), "step");
  // A hop of the diagram opens its step.
  await page.click('[data-testid="hop-router"]');
  await page.waitForFunction(() => new URLSearchParams(location.search).get("step") === "2");
  assert.equal(await position(page), "Step 2 of 6");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("split into prefill and decode, the engine step follows the prompt, its KV cache over the link and the first decode", async () => {
  const page = await app.page();
  await openBuildUp(page, "buildups/fleet?step=3");
  assert.equal(await page.locator('[data-testid="split-path"]').count(), 0, "one pool: no split");
  // Chosen as a person would: the page runs the fleet again and the URL keeps the split.
  await page.selectOption('[data-testid="buildup-split"]', "2");
  await page.waitForFunction(() => new URLSearchParams(location.search).get("split") === "2");
  await page.waitForSelector('[data-testid="split-path"]', { timeout: 30000 });
  assert.equal(await position(page), "Step 3 of 6");
  const kinds = [];
  for (let i = 0; i < 5; i++) {
    await page.fill('[data-testid="player-sub"]', String(i));
    kinds.push(await page.getAttribute('[data-testid="moment"]', "data-kind"));
  }
  assert.deepEqual(kinds, ["AtEngine", "PrefillDone", "TransferStart", "KvArrived", "FirstToken"]);
  // The parts add up to the engine clock's reading, which stops at the first token.
  const part = async (n) => Number(await page.getAttribute(`[data-testid="split-${n}"]`, "data-value"));
  let sum = 0;
  for (const n of ["prefill_queue", "prefill_time", "link_wait", "transfer", "decode_queue", "first_decode"]) sum += await part(n);
  const engine = Number(await page.getAttribute('[data-testid="clock-engine_ttft"]', "data-value"));
  assert.ok(Math.abs(sum - engine) < 1e-9, `${sum} against ${engine}`);
  assert.ok(await part("transfer") > 0);
  assert.match(await figText(page, "decode_replica"), /replica \d/);
  // Back to one pool: the plain engine step again, and the URL says nothing of a split.
  await page.selectOption('[data-testid="buildup-split"]', "0");
  await page.waitForFunction(() => !new URLSearchParams(location.search).get("split"));
  await page.waitForSelector('[data-testid="player"]', { timeout: 30000 });
  assert.equal(await page.locator('[data-testid="split-path"]').count(), 0);
  // A split beyond the page's range is named, and the page runs the fleet as shipped.
  await openBuildUp(page, "buildups/fleet?split=99");
  assert.match(await page.textContent('[data-testid="url-errors"]'), /split/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("Space plays and pauses; reduced motion shows each step's end at once", async () => {
  const page = await app.page();
  await page.emulateMedia({ reducedMotion: "reduce" });
  await openBuildUp(page, "buildups/replica");
  await page.keyboard.press("ArrowRight");
  const sub = await page.textContent('[data-testid="player-sub-position"]');
  const [at, of] = sub.split(" of ").map(Number);
  assert.equal(at, of, `at the end of the step at once (${sub})`);
  await page.focus("main h1");
  await page.keyboard.press(" ");
  assert.equal(await page.getAttribute('[data-testid="player-play"]', "aria-pressed"), "true");
  await page.keyboard.press(" ");
  assert.equal(await page.getAttribute('[data-testid="player-play"]', "aria-pressed"), "false");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

for (const viewport of [DESKTOP, PHONE]) {
  test(`both build-ups fit ${viewport.width} px`, async () => {
    for (const [rel, name] of [["buildups/replica?step=5", "replica"], ["buildups/fleet?step=4", "fleet"], ["buildups", "index"]]) {
      const page = await app.page(viewport);
      await open(page, app.url, rel);
      if (name !== "index") await page.waitForSelector('[data-testid="player"]', { timeout: 30000 });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `${rel}: ${overflow}px wider than the viewport`);
      await shoot(page, `buildup-${name}-${viewport.width}`);
      assert.deepEqual(page.problems, [], rel);
      await page.context().close();
    }
  });
}

// Issue 29: the token budget's bar, the "change it" fields while typing, where the fleet
// build-up opens, and the request-path diagram's text on a phone; each at 1280 and 375 px.

/** The sub-step scrubber's "k of n". */
const subPosition = async (page) => (await page.textContent('[data-testid="player-sub-position"]')).split(" of ").map(Number);

/** Every history.replaceState the page makes, kept in window.__replaced. */
const logReplaced = (page) => page.addInitScript(() => {
  window.__replaced = [];
  const replace = history.replaceState.bind(history);
  history.replaceState = (state, title, url) => {
    window.__replaced.push(String(url ?? ""));
    return replace(state, title, url);
  };
});

for (const viewport of [DESKTOP, PHONE]) {
  const w = viewport.width;

  test(`the token budget's bar is full at a full budget (${w} px)`, async () => {
    const page = await app.page(viewport);
    await openBuildUp(page, "buildups/replica?step=2");
    // Walk the step's sub-steps with the scrubber's own keys until a step uses the whole budget.
    await page.focus('[data-testid="player-sub"]');
    await page.keyboard.press("Home");
    let full = null;
    for (let k = 0; k < 400 && full === null; k++) {
      const [at, of] = await subPosition(page);
      const used = Number(await page.getAttribute('[data-testid="budget-used"]', "data-value"));
      const budget = Number((await page.textContent('[data-testid="budget-used"]')).match(/of ([\d,]+)/)[1].replace(/,/g, ""));
      if (used === budget) full = { at, budget };
      else if (at === of) break;
      else await page.keyboard.press("ArrowRight");
    }
    assert.ok(full, "some scheduler step of the chunked prefill fills the budget");
    const [fill, meter] = await page.evaluate(() => [
      document.querySelector('[data-testid="budget-meter-fill"]').getBoundingClientRect().width,
      document.querySelector('[data-testid="budget-meter"]').getBoundingClientRect().width,
    ]);
    assert.ok(meter > 0 && fill > 0, `the bar at ${full.budget} of ${full.budget} is ${fill} px of ${meter}`);
    assert.ok(Math.abs(fill - meter) <= 1, `a full budget fills the bar: ${fill} of ${meter} px`);
    const h = await page.$eval('[data-testid="budget-meter-fill"]', (e) => e.getBoundingClientRect().height);
    assert.ok(h > 0, "the bar has height");
    await shoot(page, `buildup-budget-full-${w}`);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test(`typing 4000 into "change it" runs 4000, never 400, with the frames marked stale meanwhile (${w} px)`, async () => {
    const page = await app.page(viewport);
    await logReplaced(page);
    await openBuildUp(page, "buildups/replica?step=2");
    assert.equal(await figText(page, "budget"), "512");
    assert.equal(await page.getAttribute('[data-testid="frames"]', "data-stale"), "false");
    await page.focus('[data-testid="change-budget"]');
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.press("Backspace");
    // A person typing, a key every 150 ms; the run waits for the keys to settle.
    for (const key of "4000") {
      await page.keyboard.type(key);
      assert.equal(await page.getAttribute('[data-testid="frames"]', "data-stale"), "true", `after ${key}`);
      assert.equal(await page.getAttribute('[data-testid="frames"]', "aria-busy"), "true");
      assert.match(await page.textContent('[data-testid="frames-stale"]'), /previous values/);
      await page.waitForTimeout(150);
    }
    await shoot(page, `buildup-change-stale-${w}`);
    await page.waitForSelector('[data-testid="frames-stale"]', { state: "detached" });
    assert.equal(await page.getAttribute('[data-testid="frames"]', "data-stale"), "false");
    assert.equal(await page.getAttribute('[data-testid="frames"]', "aria-busy"), "false");
    assert.equal(await fig(page, "budget"), 4000);
    assert.match(await page.textContent('[data-testid="budget-used"]'), /of 4,000/);
    assert.equal(await page.evaluate(() => new URLSearchParams(location.search).get("budget")), "4000");
    const budgets = await page.evaluate(() =>
      window.__replaced.map((u) => new URL(u, location.href).searchParams.get("budget")).filter((p) => p !== null));
    assert.deepEqual([...new Set(budgets)], ["4000"], `the runs on the way: ${budgets}`);
    assert.equal(await page.locator('[data-testid="change-budget-error"]').count(), 0);
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "change-budget", "focus stays");
    // Enter runs at once, without waiting for the typing to settle.
    await page.keyboard.press("Backspace");
    await page.keyboard.type("5");
    await page.keyboard.press("Enter");
    // No wait for the typing to settle: only the run's trip to the simulators' worker.
    assert.notEqual(await page.getAttribute('[data-testid="frames-stale"]', "data-reason", { timeout: 100 }).catch(() => null), "typing");
    await page.waitForSelector('[data-testid="frames-stale"]', { state: "detached" });
    assert.equal(await fig(page, "budget"), 4005);
    // A value that cannot run keeps the previous frames, marked, with the field's message.
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("9");
    await page.keyboard.press("Tab");
    assert.match(await page.textContent('[data-testid="change-budget-error"]'), /16 to 8192/);
    assert.equal(await page.getAttribute('[data-testid="frames-stale"]', "data-reason"), "invalid");
    assert.equal(await fig(page, "budget"), 4005);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test(`the fleet build-up opens on the followed request, not another tenant's 429 (${w} px)`, async () => {
    const page = await app.page(viewport);
    await openBuildUp(page, "buildups/fleet");
    assert.equal(await position(page), "Step 1 of 6");
    const kind = () => page.getAttribute('[data-testid="moment"]', "data-kind");
    // It opens on the step's last moment, the followed request's answer from the quota store.
    const [at, of] = await subPosition(page);
    assert.equal(at, of);
    assert.equal(await kind(), "QuotaChecked");
    assert.match(await page.textContent('[data-testid="moment"]'), /within budget/);
    assert.equal(await page.getAttribute('[data-testid="clock-server_ttft"]', "data-state"), "running");
    // Its first moment is the followed request leaving the client; the 429 is in between.
    await page.focus('[data-testid="player-sub"]');
    await page.keyboard.press("Home");
    assert.equal(await kind(), "Sent");
    const kinds = [await kind()];
    for (let k = 1; k < of; k++) {
      await page.keyboard.press("ArrowRight");
      kinds.push(await kind());
    }
    assert.equal(kinds[0], "Sent");
    assert.equal(kinds.at(-1), "QuotaChecked");
    assert.ok(kinds.includes("Refused"), `${kinds}`);
    assert.match(await page.textContent('[data-testid="refused"]'), /429 Too Many Requests/);
    await shoot(page, `buildup-fleet-open-${w}`);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test(`the request-path diagram's text is 12 px or more on the lesson and the fleet build-up (${w} px)`, async () => {
    for (const [rel, id] of [["lesson", "diagram-request-path"], ["buildups/fleet?step=5", "fleet-diagram"]]) {
      const page = await app.page(viewport);
      await open(page, app.url, rel);
      await page.waitForSelector(`[data-testid="${id}"] svg`, { timeout: 30000 });
      await page.locator(`[data-testid="${id}"]`).scrollIntoViewIfNeeded();
      const sizes = await page.$$eval(`[data-testid="${id}"] svg text`, (texts) => texts.map((t) => {
        const svg = t.ownerSVGElement;
        const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        return { text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale, h: t.getBoundingClientRect().height };
      }));
      assert.ok(sizes.length >= 17, `${rel}: ${sizes.length} texts`);
      for (const s of sizes) {
        assert.ok(s.px >= 12 - 1e-6, `${rel}: "${s.text}" renders at ${s.px.toFixed(2)} px`);
        assert.ok(s.h >= 12, `${rel}: "${s.text}" is ${s.h.toFixed(1)} px tall`);
      }
      // The page never scrolls sideways; a diagram wider than the screen scrolls in its frame.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `${rel}: ${overflow}px wider than the viewport`);
      if (id === "fleet-diagram") {
        // The lit hop (the autoscaler, at the diagram's right edge) is scrolled into view.
        assert.equal(await page.getAttribute('[data-testid="hop-autoscaler"]', "aria-current"), "step");
        const [hop, frame] = await page.evaluate(() => [
          document.querySelector('[data-testid="hop-autoscaler"] rect').getBoundingClientRect().toJSON(),
          document.querySelector('[data-testid="fleet-diagram-scroll"]').getBoundingClientRect().toJSON(),
        ]);
        assert.ok(hop.left >= frame.left - 1 && hop.right <= frame.right + 1, `the lit hop ${hop.left}-${hop.right} in ${frame.left}-${frame.right}`);
      }
      await page.locator(`[data-testid="${id}"]`).screenshot({ path: path.join(shots, `request-path-${rel.split("?")[0].replace("/", "-")}-${w}.png`) });
      // Each hop is still reachable by keyboard and opens its step.
      await page.focus('[data-testid="hop-engine"]');
      await page.keyboard.press("Enter");
      await page.waitForFunction(() => new URLSearchParams(location.search).get("step") === "3");
      assert.deepEqual(page.problems, [], rel);
      await page.context().close();
    }
  });
}

test("each build-up says which engine its run used", async () => {
  const page = await app.page();
  await open(page, app.url, "buildups/replica");
  await page.waitForSelector('[data-testid="buildup-replica-engine"]');
  assert.equal(await page.getAttribute('[data-testid="buildup-replica-engine"]', "data-engine"), "validated");
  await open(page, app.url, "buildups/fleet");
  await page.waitForSelector('[data-testid="buildup-fleet-engine"]');
  assert.equal(await page.getAttribute('[data-testid="buildup-fleet-engine"]', "data-engine"), "validated");
  assert.match(await page.textContent('[data-testid="buildup-fleet-engine"]'), /validated engine/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
