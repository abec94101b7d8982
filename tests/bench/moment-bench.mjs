// The routing moment's runs in headless Chromium: every option is a fleet run in the
// simulators' workers, side by side on as many workers as the machine has cores. Times the
// whole batch with one worker and with navigator.hardwareConcurrency, so the gain from running
// options in parallel is measured. Run by `./dev bench`.

import { start, open, cores } from "../browser/harness.mjs";

const MOMENT = process.env.BENCH_MOMENT || "routing";
const app = await start({ base: "/" });
try {
  const machine = await cores(app);
  for (const workers of [...new Set([1, machine])]) {
    const page = await app.page();
    await open(page, app.url, `moments/${MOMENT}`);
    await page.waitForFunction(() => window.wasmBindings && window.wasmBindings.set_worker_limit);
    await page.evaluate((n) => window.wasmBindings.set_worker_limit(n), workers);
    // Commit the first option: the page then runs every option.
    await page.locator('[data-testid^="option-"]').first().check();
    await page.click('[data-testid="commit-answer"]');
    await page.waitForSelector('[data-testid="moment-time"]', { timeout: 600000 });
    const wall = Number(await page.getAttribute('[data-testid="moment-time"]', "data-value"));
    console.log(`moment ${MOMENT}: every option run in ${(wall / 1e3).toFixed(2)} s of wall time on ${workers} worker(s) (this machine has ${machine} cores)`);
    if (page.problems.length) {
      console.error(page.problems.join("\n"));
      process.exitCode = 1;
    }
    await page.context().close();
  }
} finally {
  await app.close();
}
