// The same (scenario, seed) gives the same simulation bit for bit natively and in WASM: each
// case runs through the native `trainer-sim` command and through the release WASM build in
// Chromium (app/src/bench.rs: run_scenario), and the two JSON reports must be identical; a
// fleet also runs in the simulators' Web Worker (run_scenario_in_worker), through the JSON
// messages the pages use, and must give the same report again.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { start, open, repo } from "./harness.mjs";

// Small enough to run in the dev profile in a few seconds each, varied enough to cover the
// scheduler, preemption, prefix caching, routing, the relay and the autoscaler.
const CASES = [
  { file: "replica-follow-one-chat.toml" },
  { file: "replica-chat-prefix-cache.toml", horizon: 60 },
  { file: "fleet-chat-affinity.toml", arm: "prefix-affinity", horizon: 20 },
  { file: "fleet-buffering.toml", arm: "proxy-buffering", horizon: 10 },
  { file: "fleet-long-prompts.toml", arm: "token-aware", horizon: 20 },
  { file: "fleet-evening-peak.toml", arm: "queued-tokens", horizon: 60 },
  // Random routing and empirical lengths: integer draws that must be 64-bit on every target.
  { file: "random-routing-empirical.toml", dir: "tests/browser/fixtures", arm: "random" },
];

function native({ file, dir = "content/scenarios", arm, horizon }) {
  const args = ["run", "-q", "-p", "trainer-engine", "--bin", "trainer-sim", "--", `${dir}/${file}`, "--compact"];
  if (arm) args.push("--arm", arm);
  if (horizon) args.push("--horizon", String(horizon));
  return execFileSync("cargo", args, { cwd: repo, encoding: "utf8", maxBuffer: 1 << 28 }).trim();
}

let app;
let page;
before(async () => {
  app = await start({ base: "/" });
  page = await app.page();
  await open(page, app.url);
  await page.waitForFunction(() => window.wasmBindings && window.wasmBindings.run_scenario);
});
after(async () => { await app?.close(); });

for (const c of CASES) {
  test(`${c.file}${c.arm ? ` (${c.arm})` : ""}: WASM report equals the native one`, async () => {
    const text = fs.readFileSync(path.join(repo, c.dir || "content/scenarios", c.file), "utf8");
    const wasm = await page.evaluate(
      ([file, text, arm, horizon]) => window.wasmBindings.run_scenario(file, text, arm, horizon),
      [c.file, text, c.arm ?? null, c.horizon ?? null],
    );
    const nat = native(c);
    assert.ok(nat.length > 100, "the native report is not empty");
    assert.equal(wasm, nat);
    // A fleet runs in the simulators' worker as the pages run it: the same report again.
    if (c.file.startsWith("fleet") || c.arm) {
      const worker = await page.evaluate(
        ([file, text, arm, horizon]) => window.wasmBindings.run_scenario_in_worker(file, text, arm, horizon),
        [c.file, text, c.arm ?? null, c.horizon ?? null],
      );
      assert.equal(worker, nat);
    }
    assert.deepEqual(page.problems, []);
  });
}
