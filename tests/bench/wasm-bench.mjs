// A timed run of the release WASM build in headless Chromium: the seed replica and the seed
// fleet, each for one simulated hour, called through the exports in app/src/bench.rs.
// Run by `./dev bench` after the criterion benchmarks; prints one line per run.

import { start, open } from "../browser/harness.mjs";

const RUNS = Number(process.env.BENCH_RUNS || 3);
const app = await start({ base: "/" });
try {
  const page = await app.page();
  await open(page, app.url);
  await page.waitForFunction(() => window.wasmBindings && window.wasmBindings.bench_fleet_hour);
  for (const name of ["bench_replica_hour", "bench_fleet_hour"]) {
    const times = [];
    let summary = "";
    for (let i = 0; i < RUNS; i++) {
      const r = await page.evaluate((fn) => {
        const t0 = performance.now();
        const s = window.wasmBindings[fn]();
        return { ms: performance.now() - t0, s };
      }, name);
      times.push(r.ms);
      summary = r.s;
    }
    times.sort((a, b) => a - b);
    const heap = await page.evaluate(() => performance.memory ? performance.memory.usedJSHeapSize : 0);
    console.log(`${name}: median ${times[Math.floor(times.length / 2)].toFixed(0)} ms, best ${times[0].toFixed(0)} ms over ${RUNS} runs; ${summary}; JS heap ${(heap / 1e6).toFixed(1)} MB`);
  }
  if (page.problems.length) {
    console.error(page.problems.join("\n"));
    process.exitCode = 1;
  }
} finally {
  await app.close();
}
