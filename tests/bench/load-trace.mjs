// What the main thread does while a page opens: loads a page of the built app in headless
// Chromium with a trace running, and prints every task over 30 ms with the events that make it
// up (script, compile, layout, paint, garbage collection) and how many functions V8 compiled
// on their first call inside it. This is how README's account of the blocking time was found;
// Lighthouse (tests/lighthouse.mjs) gives the totals, this the parts.
//
//   node tests/bench/load-trace.mjs [page] [--cpu N] [--dist DIR] [--until SELECTOR] [--mobile] [--min MS] [--wait MS]
//
// `page` is a path relative to the base ("" or "home" for the home page, "lesson",
// "size/fleet", "lab?preset=fleet-seed"); `--cpu 4` slows the CPU as Lighthouse's mobile run
// does (here for real, not simulated); `--until '[data-testid="lab-done"]'` traces until that
// element shows (a lab run to its end), not only the opening; `--mobile` opens the page on the
// screen Lighthouse's mobile run emulates (412 x 823 CSS pixels at 1.75 device pixels each), where
// the canvases have three times the pixels of a desktop's at the same width.

import { arg, launch } from "./common.mjs";

const rel = (process.argv[2] && !process.argv[2].startsWith("--") ? process.argv[2] : "").replace(/^home$/, "");
const cpu = Number(arg("cpu", "1"));
const until = arg("until", null);

const { server, url, browser } = await launch();
try {
  const mobile = process.argv.includes("--mobile");
  const page = await browser.newPage(
    mobile ? { viewport: { width: 412, height: 823 }, deviceScaleFactor: 1.75, isMobile: true, hasTouch: true } : {},
  );
  if (cpu > 1) {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: cpu });
  }
  await browser.startTracing(page, {
    categories: ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8", "v8.wasm", "toplevel"],
  });
  await page.goto(url + rel);
  await page.waitForSelector("html:not([data-drawing]) body > main h1", { timeout: 60000 });
  if (until) await page.waitForSelector(until, { timeout: 600000 });
  await page.waitForTimeout(Number(arg("wait", "1000")));
  const events = JSON.parse((await browser.stopTracing()).toString()).traceEvents;
  const main = events.find((e) => e.name === "thread_name" && e.args.name === "CrRendererMain");
  const own = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === "X" && e.dur);
  const within = (t, e) => e !== t && e.ts >= t.ts && e.ts + e.dur <= t.ts + t.dur;
  const min = Number(arg("min", "30"));
  const tasks = own.filter((e) => e.name === "ThreadControllerImpl::RunTask" && e.dur > min * 1000);
  console.log(`${url}${rel}, CPU ${cpu}x slower: ${tasks.length} tasks over ${min} ms`);
  for (const t of tasks) {
    const parts = new Map();
    for (const e of own) {
      if (within(t, e) && e.dur > 2000 && e.name !== "ThreadControllerImpl::RunTask") {
        parts.set(e.name, Math.max(parts.get(e.name) ?? 0, e.dur));
      }
    }
    const lazy = own.filter((e) => e.name === "wasm.CompileLazy" && within(t, e));
    const top = [...parts].sort((a, b) => b[1] - a[1]).slice(0, 6);
    console.log(
      `  ${(t.dur / 1000).toFixed(1).padStart(7)} ms at ${((t.ts - tasks[0].ts) / 1000).toFixed(0).padStart(5)} ms: ` +
      top.map(([n, d]) => `${n} ${(d / 1000).toFixed(1)}`).join(", ") +
      (lazy.length ? `; ${lazy.length} functions compiled on first call` : ""),
    );
  }
} finally {
  await browser.close();
  server.close();
}
