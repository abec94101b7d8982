// Accessibility: axe-core (from node_modules, injected into the page) finds no violation on
// any page, in the light theme and in the dark one, once the page has rendered and again after
// a run where the page has one (a moment's results, the lab's plots, a build-up's frames, the
// calculator's simulation check). The context bypasses the page's Content-Security-Policy so
// the injected axe script may run.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import { start, DESKTOP } from "./harness.mjs";

const require = createRequire(import.meta.url);
const AXE = fs.readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

const QUESTIONS = ["fleet", "roofline", "chats-per-replica", "gpu-hours", "batch", "split", "host"];
const BUILDUPS = ["replica", "fleet"];
const MOMENTS = ["routing", "autoscaler", "rag", "self-host", "long-prompts", "ttft-gap", "halve-cost", "spec-latency", "cheapest-fleet", "disconnect", "disaggregate", "long-chats", "adapters"];
const KEY = "serving-trainer.progress";
const tid = (id) => `[data-testid="${id}"]`;

let app;
let page;
before(async () => {
  app = await start({ base: "/trainer/" });
  page = await app.page(DESKTOP, { bypassCSP: true });
});
after(async () => { await app?.close(); });

/** Runs axe in both colour schemes; returns one line per violation (empty when none). */
async function violations(label) {
  const out = [];
  for (const colorScheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme });
    // Let the restyle and its colour transitions (0.15 s) end before axe reads the colours.
    await page.waitForTimeout(400);
    if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.addScriptTag({ content: AXE });
    const found = await page.evaluate(async () => {
      const r = await window.axe.run(document, { resultTypes: ["violations"] });
      return r.violations.map((v) => ({
        id: v.id,
        help: v.help,
        nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(" ")}: ${n.failureSummary.split("\n").slice(1).join(" ").trim()}`),
        count: v.nodes.length,
      }));
    });
    for (const v of found) {
      out.push(`${label} [${colorScheme}] ${v.id} (${v.count}): ${v.help}\n    ${v.nodes.join("\n    ")}`);
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  return out;
}

/** Opens `rel` and waits for the page heading. */
async function visit(rel) {
  await page.goto(app.url + rel);
  await page.waitForSelector("body > main h1", { timeout: 20000 });
}

test("every page has no axe violation, light and dark", async () => {
  const pages = [
    "", "lesson", "size", ...QUESTIONS.map((q) => `size/${q}`), "size/no-such-question",
    "buildups", ...BUILDUPS.map((b) => `buildups/${b}`),
    "moments", ...MOMENTS.map((m) => `moments/${m}`), "moments/no-such-moment",
    "lab", "advisor", "mock", "mock/report", "simulator", "no/such/page",
  ];
  const all = [];
  for (const rel of pages) {
    await visit(rel);
    all.push(...(await violations(`/${rel}`)));
  }
  assert.deepEqual(all, [], "\n" + all.join("\n"));
  assert.deepEqual(page.problems, []);
});

test("after a run: each moment's results, the lab's plots, the build-ups' frames, the calculator's check", async () => {
  const all = [];
  for (const id of MOMENTS) {
    await visit(`moments/${id}`);
    const first = await page.locator('[data-testid^="option-"]').first().getAttribute("data-testid");
    await page.check(tid(first));
    await page.click(tid("commit-answer"));
    await page.waitForSelector(tid("moment-results"), { timeout: 120000 });
    all.push(...(await violations(`/moments/${id} (results)`)));
  }
  await visit("lab?preset=fleet-ttft-gap&duration=30");
  await page.waitForSelector(tid("lab-done"), { timeout: 120000 });
  all.push(...(await violations("/lab (a run's plots)")));
  for (const id of BUILDUPS) {
    await visit(`buildups/${id}?step=6`);
    await page.waitForSelector(tid("player"), { timeout: 60000 });
    all.push(...(await violations(`/buildups/${id} (frames)`)));
  }
  await visit("size/fleet?reveal=all");
  all.push(...(await violations("/size/fleet (every step)")));
  await visit("size/roofline?reveal=all");
  await page.waitForSelector('[data-testid="roofline-chart-canvas"]:not([data-drawn="0"])', { timeout: 60000 });
  all.push(...(await violations("/size/roofline (every step and the plot)")));
  await visit("size/host?reveal=all");
  await page.click(tid("host-check-run"));
  await page.waitForSelector(tid("host-check-table"), { timeout: 120000 });
  all.push(...(await violations("/size/host (every step and its check's tiers)")));
  // A finished mock on record: the report lists it.
  await page.evaluate(([k]) => localStorage.setItem(k, JSON.stringify({ schema: 2, mocks: [{}] })), [KEY]);
  await visit("mock/report");
  all.push(...(await violations("/mock/report (a mock on record)")));
  assert.deepEqual(all, [], "\n" + all.join("\n"));
  assert.deepEqual(page.problems, []);
});
