// Lighthouse on the built app: serves dist/ the way a static host would (tests/serve.mjs, with
// gzip on), runs Lighthouse (npm, pinned in package.json) with its mobile preset (a mid-range
// phone on slow 4G, simulated throttling) and its desktop preset on the landing pages, in
// Debian's Chromium, prints one table and writes every figure to target/lighthouse.json.
//
//   node tests/lighthouse.mjs [--pages home,lesson,size/fleet,lab] [--presets mobile,desktop] [--dist DIR]
//
// Measure the build a learner downloads (`./dev build`, no test exports); `./dev bench` runs it.
// A deep link the host answers with its 404.html fallback is measured all the same (Lighthouse
// is told to ignore the status) and its row says so.

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import lighthouse from "lighthouse";
import desktopConfig from "lighthouse/core/config/desktop-config.js";
import { serve } from "./serve.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const distArg = process.argv.indexOf("--dist");
const dist = distArg > 0 ? path.resolve(process.argv[distArg + 1]) : path.join(repo, "dist");
const out = path.join(repo, "target", "lighthouse.json");

const PAGES = { home: "", lesson: "lesson", "size/fleet": "size/fleet", lab: "lab" };
const PRESETS = { mobile: undefined, desktop: desktopConfig };
// The same flags as the browser tests' harness (tests/browser/harness.mjs), headless.
const FLAGS = [
  "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

function option(name, all) {
  const i = process.argv.indexOf(`--${name}`);
  const wanted = i > 0 ? process.argv[i + 1].split(",") : Object.keys(all);
  for (const w of wanted) {
    if (!(w in all)) {
      console.error(`unknown ${name} ${JSON.stringify(w)}: one of ${Object.keys(all).join(", ")}`);
      process.exit(2);
    }
  }
  return wanted;
}

/** Starts Chromium with a DevTools port; resolves to { port, stop }. */
function launchChromium() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "lighthouse-chromium-"));
  const exe = process.env.CHROMIUM || "/usr/bin/chromium";
  const child = spawn(exe, [...FLAGS, "--remote-debugging-port=0", `--user-data-dir=${profile}`, "about:blank"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise((r) => child.on("exit", r));
  const stop = async () => {
    child.kill();
    await exited;
    // Chromium's helper processes can still be writing its cache when the browser has exited;
    // a profile left in the temporary directory must not throw away the measurements.
    try {
      fs.rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    } catch (e) {
      console.error(`lighthouse: left ${profile} behind (${e.code})`);
    }
  };
  return new Promise((resolve, reject) => {
    let err = "";
    const timer = setTimeout(() => { stop().finally(() => reject(new Error(`${exe} gave no DevTools port:\n${err}`))); }, 30000);
    child.stderr.on("data", (d) => {
      err += d;
      const m = /DevTools listening on ws:\/\/[^:]+:(\d+)\//.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ port: Number(m[1]), stop });
      }
    });
    child.on("error", (e) => { clearTimeout(timer); reject(e); });
  });
}

const ms = (v) => (v == null ? "-" : `${Math.round(v)} ms`);
const score = (c) => (c?.score == null ? "-" : String(Math.round(c.score * 100)));

async function main() {
  const pages = option("pages", PAGES);
  const presets = option("presets", PRESETS);
  if (!fs.existsSync(path.join(dist, "index.html"))) {
    console.error(`${path.relative(repo, dist) || dist}/index.html is missing: build the app first (./dev build)`);
    process.exit(2);
  }
  const { server, url } = await serve({ dir: dist, base: "/", gzip: true });
  const chromium = await launchChromium();
  const rows = [];
  try {
    for (const preset of presets) {
      for (const name of pages) {
        const target = url + PAGES[name];
        const flags = {
          port: chromium.port,
          output: "json",
          logLevel: "error",
          onlyCategories: ["performance", "accessibility"],
          ignoreStatusCode: true,
        };
        const result = await lighthouse(target, flags, PRESETS[preset]);
        if (process.env.LIGHTHOUSE_TASKS) printTasks(result.artifacts?.Trace ?? result.artifacts?.traces?.defaultPass);
        const lhr = result.lhr;
        const audit = (id) => lhr.audits[id]?.numericValue ?? null;
        const failed = Object.values(lhr.audits)
          .filter((a) => a.score === 0 && lhr.categories.accessibility.auditRefs.some((r) => r.id === a.id))
          .map((a) => a.id);
        rows.push({
          page: name,
          preset,
          url: target,
          performance: lhr.categories.performance.score,
          accessibility: lhr.categories.accessibility.score,
          lcp_ms: audit("largest-contentful-paint"),
          tbt_ms: audit("total-blocking-time"),
          fcp_ms: audit("first-contentful-paint"),
          accessibility_failures: failed,
          // Where the main thread's time went (Lighthouse's own breakdown, in ms) and its long
          // tasks: what the blocking time is made of.
          main_thread: Object.fromEntries(
            (lhr.audits["mainthread-work-breakdown"]?.details?.items ?? []).map((i) => [i.group, Math.round(i.duration)]),
          ),
          long_tasks: (lhr.audits["long-tasks"]?.details?.items ?? []).map((t) => ({
            url: t.url, start_ms: Math.round(t.startTime), duration_ms: Math.round(t.duration),
          })),
          bootup: (lhr.audits["bootup-time"]?.details?.items ?? []).map((i) => ({
            url: i.url, total_ms: Math.round(i.total), script_ms: Math.round(i.scripting), parse_compile_ms: Math.round(i.scriptParseCompile),
          })),
          warnings: lhr.runWarnings,
          runtime_error: lhr.runtimeError?.code ?? null,
        });
        const r = rows.at(-1);
        console.error(`${preset} ${name}: performance ${score(lhr.categories.performance)}, accessibility ${score(lhr.categories.accessibility)}${failed.length ? ` (failing: ${failed.join(", ")})` : ""}${r.runtime_error ? `, error ${r.runtime_error}` : ""}`);
      }
    }
  } finally {
    await chromium.stop();
    await new Promise((r) => server.close(r));
  }
  const head = ["page", "preset", "performance", "accessibility", "LCP", "TBT", "note"];
  const table = rows.map((r) => [
    r.page, r.preset, score({ score: r.performance }), score({ score: r.accessibility }),
    ms(r.lcp_ms), ms(r.tbt_ms), r.warnings.some((w) => /404/.test(w)) ? "answered by 404.html" : "",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((t) => t[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
  console.log(line(head));
  for (const t of table) console.log(line(t));
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify({ lighthouse: lighthouseVersion(), measured: new Date().toISOString(), rows }, null, 2) + "\n");
  console.log(`\nwritten to ${path.relative(repo, out)}`);
}

function lighthouseVersion() {
  const pkg = path.join(here, "node_modules", "lighthouse", "package.json");
  return JSON.parse(fs.readFileSync(pkg, "utf8")).version;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

/** With LIGHTHOUSE_TASKS=1: the main thread's tasks of 12 ms or more in the trace Lighthouse
 * took (unthrottled: its mobile figures are these times 4), each with its longest events. */
function printTasks(trace) {
  if (!trace) return console.log("(no trace in the artifacts)");
  const events = trace.traceEvents;
  // The renderer's main thread that ran the most (the trace has others: about:blank's).
  const busy = new Map();
  for (const e of events) {
    if (["RunTask", "ThreadControllerImpl::RunTask"].includes(e.name) && e.dur) busy.set(`${e.pid}:${e.tid}`, (busy.get(`${e.pid}:${e.tid}`) ?? 0) + e.dur);
  }
  const mains = events.filter((e) => e.name === "thread_name" && e.args.name === "CrRendererMain");
  const main = mains.sort((a, b) => (busy.get(`${b.pid}:${b.tid}`) ?? 0) - (busy.get(`${a.pid}:${a.tid}`) ?? 0))[0];
  const own = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === "X" && e.dur);
  const tasks = own.filter((e) => ["RunTask", "ThreadControllerImpl::RunTask"].includes(e.name) && e.dur > 12000);
  const t0 = tasks[0]?.ts ?? 0;
  for (const t of tasks) {
    const parts = new Map();
    for (const e of own) {
      if (e !== t && e.ts >= t.ts && e.ts + e.dur <= t.ts + t.dur && e.dur > 1000 && !["RunTask", "ThreadControllerImpl::RunTask"].includes(e.name)) {
        parts.set(e.name, Math.max(parts.get(e.name) ?? 0, e.dur));
      }
    }
    const top = [...parts].sort((a, b) => b[1] - a[1]).slice(0, 6);
    console.log(`  ${(t.dur / 1000).toFixed(1).padStart(6)} ms at ${((t.ts - t0) / 1000).toFixed(0).padStart(5)} ms: ` + top.map(([n, d]) => `${n} ${(d / 1000).toFixed(1)}`).join(", "));
  }
}
