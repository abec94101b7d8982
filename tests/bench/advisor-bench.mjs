// The serving advisor's search of the seed problem (the page's defaults) in headless Chromium:
// its rounds of runs go to the simulators' workers side by side. Times the whole search with one
// worker and with navigator.hardwareConcurrency, and checks both give the same answer. Run by
// `./dev bench`.

import { start, open, cores } from "../browser/harness.mjs";

const app = await start({ base: "/" });
try {
  const machine = await cores(app);
  const answers = new Set();
  for (const workers of [...new Set([1, machine])]) {
    const page = await app.page();
    await open(page, app.url, "advisor");
    await page.waitForFunction(() => window.wasmBindings && window.wasmBindings.set_worker_limit);
    await page.evaluate((n) => window.wasmBindings.set_worker_limit(n), workers);
    await page.click('[data-testid="advisor-run"]');
    await page.waitForSelector('[data-testid="advisor-took"]', { timeout: 600000 });
    const wall = Number(await page.getAttribute('[data-testid="advisor-took"]', "data-wall-ms"));
    const runs = await page.getAttribute('[data-testid="advisor-took"]', "data-runs");
    answers.add(await page.textContent('[data-testid="advisor-best"]'));
    console.log(`advisor: the seed's search (${runs} runs) in ${(wall / 1e3).toFixed(2)} s of wall time on ${workers} worker(s) (this machine has ${machine} cores)`);
    if (page.problems.length) {
      console.error(page.problems.join("\n"));
      process.exitCode = 1;
    }
    await page.context().close();
  }
  if (answers.size !== 1) {
    console.error(`advisor: the answers differ with the number of workers:\n${[...answers].join("\n")}`);
    process.exitCode = 1;
  }
} finally {
  await app.close();
}
