import { chromium } from "playwright-core";
import { serve } from "../serve.mjs";
const dist = process.argv[2], rel = process.argv[3];
const { server, url } = await serve({ dir: dist, base: "/", gzip: true });
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
const page = await browser.newPage({ viewport: { width: 412, height: 823 }, deviceScaleFactor: 1.75, isMobile: true });
const cdp = await page.context().newCDPSession(page);
await cdp.send("Profiler.enable"); await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
await cdp.send("Profiler.start");
await page.goto(url + rel);
await page.waitForSelector("html:not([data-drawing]) body > main h1", { timeout: 60000 });
await page.waitForTimeout(500);
const { profile } = await cdp.send("Profiler.stop");
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map(); for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const dt = profile.timeDeltas;
let best = [0, 0, 0], from = 0, busy = 0;
profile.samples.forEach((id, i) => { const nm = byId.get(id).callFrame.functionName; if (nm === "(idle)") { from = i + 1; busy = 0; } else { busy += (dt[i] ?? 0) / 1000; if (busy > best[0]) best = [busy, from, i]; } });
const self = new Map(), incl = new Map();
for (let i = best[1]; i <= best[2]; i++) {
  let id = profile.samples[i]; const ms = (dt[i] ?? 0) / 1000;
  const n = byId.get(id); const nm = n.callFrame.functionName || "(" + (n.callFrame.url.split("/").pop() || "program") + ")";
  self.set(nm, (self.get(nm) ?? 0) + ms);
  const seen = new Set();
  while (id) { const f = byId.get(id).callFrame.functionName; if (f && !seen.has(f)) { seen.add(f); incl.set(f, (incl.get(f) ?? 0) + ms); } id = parent.get(id); }
}
console.log(`longest busy stretch ${best[0].toFixed(1)} ms`);
const clean = (s) => s.replace(/::h[0-9a-f]{16}/g, "").slice(0, 150);
console.log("-- self"); for (const [n, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(ms.toFixed(1).padStart(7), clean(n));
console.log("-- inclusive"); for (const [n, ms] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 60)) console.log(ms.toFixed(1).padStart(7), clean(n));
await browser.close(); server.close();
