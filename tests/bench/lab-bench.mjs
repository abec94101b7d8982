// The lab in headless Chromium: one simulated hour of the seed fleet, run by the simulators'
// worker at full speed as a learner would run it, first at the machine's speed and then with
// the CPU slowed 4x (DevTools' mobile throttling). Prints the wall time, the time the worker
// spent simulating, its longest slice and the longest main-thread task the Long Tasks API saw
// during the run (the page must stay under 50 ms: the main thread only reads progress and the
// live results). Run by `./dev bench`.

import { start, open } from "../browser/harness.mjs";

const RUNS = Number(process.env.BENCH_RUNS || 2);
const app = await start({ base: "/", dir: process.env.BENCH_DIST || undefined });
try {
  for (let run = 0; run < 2 * RUNS; run++) {
    const throttle = run < RUNS ? 1 : 4;
    const page = await app.page();
    if (throttle > 1) {
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("Emulation.setCPUThrottlingRate", { rate: throttle });
    }
    await page.addInitScript(() => {
      window.__longtasks = [];
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) window.__longtasks.push(e.duration);
      }).observe({ type: "longtask", buffered: true });
    });
    await open(page, app.url, "lab?preset=fleet-seed");
    // Long tasks while the page loads are not the run's: count from the first frame of the run.
    await page.waitForSelector('[data-testid="lab-progress"]');
    await page.evaluate(() => { window.__longtasks = []; });
    await page.waitForSelector('[data-testid="lab-done"]', { timeout: 600000 });
    const done = await page.$eval('[data-testid="lab-done"]', (e) => ({ ...e.dataset }));
    const tasks = await page.evaluate(() => window.__longtasks);
    const longest = tasks.length ? Math.max(...tasks) : 0;
    console.log(
      `lab, seed fleet for one simulated hour (CPU ${throttle}x slower, run ${(run % RUNS) + 1} of ${RUNS}): ${(done.wall / 1e3).toFixed(2)} s of wall time, ` +
      `${(done.busy / 1e3).toFixed(2)} s simulating in the worker, its longest slice ${Number(done.longest).toFixed(1)} ms, ` +
      `${done.events} events; long tasks (over 50 ms) during the run: ${tasks.length}, longest ${longest.toFixed(0)} ms`,
    );
    if (page.problems.length) {
      console.error(page.problems.join("\n"));
      process.exitCode = 1;
    }
    await page.context().close();
  }
} finally {
  await app.close();
}
