// Where the main thread's time goes while the lab runs the seed fleet's hour: a CPU profile
// (V8's sampling profiler over DevTools) of the page, from the first frame of the run to its
// end, summed by function (self time), the heaviest first. Run it on a build whose WebAssembly
// keeps its function names (`SPLIT_KEEP_NAMES=1 trunk build --release`: tools/split.mjs then
// keeps the names in every piece of the page's module) to see Rust names.
//
//   node tests/bench/lab-profile.mjs [--cpu N] [--dist DIR] [--top N]

import { arg, launch } from "./common.mjs";

const cpu = Number(arg("cpu", "1"));
const top = Number(arg("top", "40"));

const { server, url, browser } = await launch();
try {
  const page = await browser.newPage();
  const cdp = await page.context().newCDPSession(page);
  if (cpu > 1) await cdp.send("Emulation.setCPUThrottlingRate", { rate: cpu });
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await page.goto(url + "lab?preset=fleet-seed");
  await page.waitForSelector('[data-testid="lab-progress"]', { timeout: 60000 });
  await cdp.send("Profiler.start");
  await page.waitForSelector('[data-testid="lab-done"]', { timeout: 600000 });
  const { profile } = await cdp.send("Profiler.stop");
  const self = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const dt = profile.timeDeltas;
  let total = 0;
  profile.samples.forEach((id, i) => {
    const n = byId.get(id);
    const name = n.callFrame.functionName || `(${n.callFrame.url.split("/").pop() || "program"})`;
    const ms = (dt[i] ?? 0) / 1000;
    if (name === "(idle)" || name === "(program)") return;
    total += ms;
    self.set(name, (self.get(name) ?? 0) + ms);
  });
  const print = (heading, map) => {
    console.log(heading);
    for (const [name, ms] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`${ms.toFixed(1).padStart(8)} ms  ${name.slice(0, 140)}`);
    }
  };
  print(`lab, seed fleet hour, CPU ${cpu}x slower: ${total.toFixed(0)} ms of main-thread samples (not idle)`, self);
  // The longest stretch without an idle sample (a long task, near enough), on its own.
  let best = [0, 0, 0];
  let from = 0;
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const idle = byId.get(id).callFrame.functionName === "(idle)";
    if (idle) {
      from = i + 1;
      busy = 0;
    } else {
      busy += (dt[i] ?? 0) / 1000;
      if (busy > best[0]) best = [busy, from, i];
    }
  });
  const stretch = new Map();
  for (let i = best[1]; i <= best[2]; i++) {
    const n = byId.get(profile.samples[i]);
    const name = n.callFrame.functionName || `(${n.callFrame.url.split("/").pop() || "program"})`;
    stretch.set(name, (stretch.get(name) ?? 0) + (dt[i] ?? 0) / 1000);
  }
  print(`the longest busy stretch: ${best[0].toFixed(0)} ms`, stretch);
} finally {
  await browser.close();
  server.close();
}
