import { start, open, DESKTOP, PHONE } from "./browser/harness.mjs";
const app = await start({ base: "/trainer/" });
const page = await app.page();
const tid = (id) => `[data-testid="${id}"]`;
await page.setViewportSize(PHONE);
// Absurd values through the URL.
for (const q of ["decode_replicas=100000", "decode_replicas=-3", "link=warp-drive&decode_replicas=2", "link_share=0&decode_replicas=2", "link_share=5000&decode_replicas=2", "kv_offload=1e12", "kv_offload=abc", "preset=fleet-disaggregate&arm=split-4-4&decode_replicas=0&replicas=1&duration=5", "decode_replicas=8&replicas=1&model=llama-3.1-70b&tp=4&prompt=constant&prompt_a=8000&duration=20"]) {
  await open(page, app.url, `lab?${q}`);
  await page.waitForSelector(tid("lab-panel"));
  await page.waitForSelector(`${tid("lab-done")}, ${tid("lab-failed")}, ${tid("lab-overloaded")}`, { timeout: 120000 }).catch(() => {});
  const errs = await page.$$eval('[id$="-error"]', (els) => els.map((e) => e.textContent.trim()).filter(Boolean));
  const q2 = await page.$$eval('[data-testid="lab-query-error"], [data-testid^="lab-error"]', (els) => els.map((e) => e.textContent.trim()));
  console.log(q, "=>", JSON.stringify(errs).slice(0, 300), q2.join(" | ").slice(0, 200), "problems", page.problems.length);
}
await page.screenshot({ path: "/tmp/lab70b-phone.png", fullPage: false });
await page.locator(tid("plot-ttft-split")).scrollIntoViewIfNeeded();
await page.locator(tid("plot-ttft-split")).screenshot({ path: "/tmp/split-phone.png" });
// Keyboard: Tab to the decode replicas field and type.
await page.setViewportSize(DESKTOP);
await open(page, app.url, "lab?preset=fleet-disaggregate&duration=5");
await page.waitForSelector(tid("lab-done"), { timeout: 120000 });
await page.focus(tid("param-decode_replicas"));
await page.keyboard.press("ControlOrMeta+a");
await page.keyboard.type("3");
await page.waitForTimeout(300);
console.log("url after typing:", new URL(page.url()).search);
await app.close();
