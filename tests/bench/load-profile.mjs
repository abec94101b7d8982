// What the main thread runs while a page opens, by function: a CPU profile (V8's sampling
// profiler over DevTools) from the navigation until the page is drawn whole (and, with
// `--until`, until an element shows), cut into the main thread's tasks (from a trace taken
// at the same time); for every task over `--min` ms it prints the functions with the
// most time inside them (their callees included) and the most time of their own. Run it on a
// build whose WebAssembly keeps its function names (`SPLIT_KEEP_NAMES=1 trunk build --release
// --dist DIR`) to read Rust names; load-trace.mjs gives the same tasks from a trace, by event.
//
//   node tests/bench/load-profile.mjs [page] [--cpu N] [--dist DIR] [--until SELECTOR] [--min MS] [--top N] [--filter REGEX] [--callers REGEX]

import { arg, launch } from "./common.mjs";

const rel = (process.argv[2] && !process.argv[2].startsWith("--") ? process.argv[2] : "").replace(/^home$/, "");
const cpu = Number(arg("cpu", "1"));
const min = Number(arg("min", "30"));
const top = Number(arg("top", "14"));
const until = arg("until", null);
// Only functions whose names match (a regular expression), e.g. "trainer_".
const filter = arg("filter", null);
// Where the time of functions whose names match goes from: their callers' chains, e.g. "clone".
const callers = arg("callers", null);

const { server, url, browser } = await launch();
try {
  const page = await browser.newPage();
  const cdp = await page.context().newCDPSession(page);
  if (cpu > 1) await cdp.send("Emulation.setCPUThrottlingRate", { rate: cpu });
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
  await browser.startTracing(page, { categories: ["devtools.timeline", "toplevel"] });
  await cdp.send("Profiler.start");
  await page.goto(url + rel);
  await page.waitForSelector("html:not([data-drawing]) body > main h1", { timeout: 60000 });
  if (until) await page.waitForSelector(until, { timeout: 600000 });
  await page.waitForTimeout(500);
  const { profile } = await cdp.send("Profiler.stop");
  const events = JSON.parse((await browser.stopTracing()).toString()).traceEvents;
  const mainThread = events.find((e) => e.name === "thread_name" && e.args.name === "CrRendererMain");
  // The main thread's tasks (the trace and the profile read the same clock, in microseconds).
  const tasks = events
    .filter((e) => e.pid === mainThread.pid && e.tid === mainThread.tid && e.ph === "X")
    .filter((e) => e.name === "ThreadControllerImpl::RunTask" && e.dur >= min * 1000)
    .map((e) => ({ from: e.ts, to: e.ts + e.dur, ms: e.dur / 1000, samples: [] }));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n) => n.callFrame.functionName || `(${n.callFrame.url.split("/").pop() || "program"})`;
  const dt = profile.timeDeltas;
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += dt[i] ?? 0;
    const task = tasks.find((k) => t >= k.from && t < k.to);
    if (task) task.samples.push([id, (dt[i + 1] ?? 0) / 1000]);
  });
  const t0 = tasks.length ? tasks[0].from : 0;
  console.log(`${url}${rel}, CPU ${cpu}x slower: ${tasks.length} tasks of ${min} ms or more`);
  for (const s of tasks) {
    const inclusive = new Map();
    const own = new Map();
    for (const [id, ms] of s.samples) {
      const seen = new Set();
      own.set(name(byId.get(id)), (own.get(name(byId.get(id))) ?? 0) + ms);
      for (let k = id; k !== undefined; k = parent.get(k)) {
        const nm = name(byId.get(k));
        if (seen.has(nm)) continue;
        seen.add(nm);
        inclusive.set(nm, (inclusive.get(nm) ?? 0) + ms);
      }
    }
    const list = (m) =>
      [...m]
        .filter(([nm]) => !["(root)", "(program)"].includes(nm))
        .filter(([nm]) => !filter || new RegExp(filter).test(nm))
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([nm, ms]) => `      ${ms.toFixed(1).padStart(7)} ms  ${nm.slice(0, 150)}`)
        .join("\n");
    console.log(`\n  ${s.ms.toFixed(1)} ms at ${((s.from - t0) / 1000).toFixed(0)} ms; inside:`);
    console.log(list(inclusive));
    console.log("    own:");
    console.log(list(own));
    if (callers) {
      const chains = new Map();
      for (const [id, ms] of s.samples) {
        const path = [];
        for (let k = id; k !== undefined; k = parent.get(k)) path.push(name(byId.get(k)));
        const at = path.findIndex((nm) => new RegExp(callers).test(nm));
        if (at < 0) continue;
        const chain = path.slice(at, at + 8).map((nm) => nm.slice(0, 90)).join("\n          < ");
        chains.set(chain, (chains.get(chain) ?? 0) + ms);
      }
      console.log(`    callers of /${callers}/:`);
      for (const [chain, ms] of [...chains].sort((a, b) => b[1] - a[1]).slice(0, 6)) {
        console.log(`      ${ms.toFixed(1).padStart(7)} ms  ${chain}`);
      }
    }
  }
} finally {
  await browser.close();
  server.close();
}
