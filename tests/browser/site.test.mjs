// The site as a static host serves it: every page of the route table is a file of its own
// (200, with or without the trailing slash; 404.html only for unknown addresses), each file's
// first paint is that page's heading and introduction where the app draws them, and every
// file carries a Content-Security-Policy that no page breaks, at "/" and under a sub-path.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { start, open, dist, routeFiles, watchCsp } from "./harness.mjs";

const ROUTES = routeFiles();
// The pages run with the service worker, as a learner's do: what it serves is checked too.
const SW = { serviceWorkers: "allow" };

let app;
before(async () => { app = await start({ base: "/trainer/" }); });
after(async () => { await app?.close(); });

test("every page of the route table is its own file, answered with 200; 404.html answers only unknown addresses", async () => {
  // The route table's pages of each kind are all there (content/src/route.rs, Route::all).
  for (const r of ["", "lesson", "size", "size/fleet", "buildups", "buildups/fleet", "moments", "moments/routing", "lab", "advisor", "mock", "mock/report", "simulator"]) {
    assert.ok(ROUTES.includes(r), `no ${r}/index.html in dist`);
  }
  let bytes = 0;
  for (const r of ROUTES) {
    const variants = r === "" ? [""] : [r, `${r}/`, `${r}/index.html`];
    for (const v of variants) {
      const res = await fetch(app.url + v);
      assert.equal(res.status, 200, `/${v}`);
      assert.match(await res.text(), /<div id="boot"[^>]*>[\s\S]*<h1>/, `/${v} has no first paint`);
    }
    bytes += fs.statSync(path.join(dist, r, "index.html")).size;
  }
  console.log(`route files: ${ROUTES.length}, ${bytes} bytes`);
  for (const unknown of ["no/such/page", "size/no-such-question", "lab/extra/deep", "index.htm"]) {
    const res = await fetch(app.url + unknown);
    assert.equal(res.status, 404, `/${unknown}`);
    assert.equal(await res.text(), fs.readFileSync(path.join(dist, "404.html"), "utf8"));
  }
});

test("every HTML file has one policy: scripts from the origin and by hash only, nothing from another origin", () => {
  const files = [...ROUTES.map((r) => path.join(r, "index.html")), "404.html"];
  const policies = new Set();
  for (const f of files) {
    const html = fs.readFileSync(path.join(dist, f), "utf8");
    const m = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/);
    assert.ok(m, `${f} has no policy`);
    // The policy comes before any script, or it would not govern it.
    assert.ok(html.indexOf(m[0]) < html.indexOf("<script"), `${f}: a script comes before the policy`);
    policies.add(m[1]);
  }
  assert.equal(policies.size, 1, "the files disagree on the policy");
  const directives = Object.fromEntries([...policies][0].split(";").map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v]));
  assert.deepEqual(directives["default-src"], ["'self'"]);
  assert.deepEqual(directives["object-src"], ["'none'"]);
  for (const d of ["connect-src", "worker-src", "base-uri", "img-src", "style-src"]) assert.deepEqual(directives[d], ["'self'"], d);
  const script = directives["script-src"];
  assert.deepEqual(script.slice(0, 2), ["'self'", "'wasm-unsafe-eval'"]);
  for (const s of script.slice(2)) assert.match(s, /^'sha256-[A-Za-z0-9+/]+=*'$/, `script-src allows ${s}`);
  for (const [k, v] of Object.entries(directives)) {
    for (const s of v) assert.doesNotMatch(s, /^(https?:|\*|data:|blob:|'unsafe-eval'$)/, `${k} allows ${s}`);
    if (k !== "style-src-attr") assert.ok(!v.includes("'unsafe-inline'"), `${k} allows inline`);
  }
});

test("each page's first paint is its heading and introduction, and the app takes over in place with no policy violation", async () => {
  // The first paint alone: the WASM never arrives, so what shows is the file's own.
  // (Service workers off: a request they answer would pass the route by.)
  const still = await app.page(undefined, { serviceWorkers: "block" });
  await still.route("**/*.wasm", () => {});
  const page = await app.page(undefined, SW);
  await watchCsp(page);
  for (const r of ROUTES) {
    await still.goto(app.url + r);
    await still.waitForSelector("#boot main h1");
    const first = await still.evaluate(() => {
      const h1 = document.querySelector("#boot main h1");
      const lede = document.querySelector("#boot main .lede");
      return { h1: h1.textContent, top: h1.getBoundingClientRect().top, lede: lede && lede.textContent, styled: getComputedStyle(document.body).display };
    });
    assert.equal(first.styled, "flex", `/${r}: the first paint is not styled`);
    await open(page, app.url, r);
    const drawn = await page.evaluate(() => {
      const h1 = document.querySelector("body > main h1");
      const lede = document.querySelector("body > main .lede");
      return { h1: h1.textContent, top: h1.getBoundingClientRect().top, lede: lede && lede.textContent, boot: !!document.getElementById("boot") };
    });
    assert.equal(drawn.boot, false, `/${r}: the first paint stays`);
    assert.equal(first.h1, drawn.h1, `/${r}: heading`);
    if (first.lede !== null) assert.equal(first.lede, drawn.lede, `/${r}: introduction`);
    assert.ok(Math.abs(first.top - drawn.top) <= 2, `/${r}: the heading moves from ${first.top} to ${drawn.top} px`);
    assert.deepEqual(await page.evaluate(() => window.cspViolations), [], `/${r}: policy violations`);
  }
  assert.deepEqual(page.problems, []);
  await still.context().close();
  await page.context().close();
});

/** An unknown address under `server`'s base gets the app's not-found page with the right base. */
async function unknownFindsItsBase(server) {
  const page = await server.page(undefined, SW);
  await watchCsp(page);
  await open(page, server.url, "no/such/page");
  await page.waitForSelector('[data-testid="page-not-found"]');
  assert.equal(await page.evaluate(() => document.baseURI), server.url);
  assert.deepEqual(await page.evaluate(() => window.cspViolations), []);
  assert.deepEqual(page.problems, []);
  await page.context().close();
}

test("deep links, unknown addresses and the policy hold at the root of a host too", async () => {
  const root = await start({ base: "/" });
  try {
    const page = await root.page(undefined, SW);
    await watchCsp(page);
    for (const rel of ["", "size/fleet", "moments/routing/", "mock/report"]) {
      await open(page, root.url, rel);
      assert.equal(await page.locator('[data-testid="page-not-found"]').count(), 0, `/${rel}`);
      assert.equal(await page.evaluate(() => document.baseURI), root.url, `/${rel}: base`);
    }
    assert.deepEqual(await page.evaluate(() => window.cspViolations), []);
    assert.deepEqual(page.problems, []);
    await page.context().close();
    await unknownFindsItsBase(root);
  } finally {
    await root.close();
  }
  await unknownFindsItsBase(app);
});
