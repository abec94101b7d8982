// Shared set-up for the browser tests: serve the release build the way a static host would,
// drive Debian's headless Chromium with playwright-core, and watch every page for console
// errors and for requests that leave the origin.

import { chromium } from "playwright-core";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "../serve.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, "..", "..");
export const dist = path.join(repo, "dist");
export const shots = path.join(repo, "target", "screenshots");

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 375, height: 812 };

/** Starts the server for the build in `dir` under `base` and a browser; returns helpers and a
 * `close` (and `stopServer`, to take the site off the network while the browser stays). */
export async function start({ base = "/trainer/", dir = dist } = {}) {
  if (!fs.existsSync(path.join(dir, "index.html"))) {
    throw new Error(`${dir}/index.html is missing: run ./dev build (./dev test does it first)`);
  }
  fs.mkdirSync(shots, { recursive: true });
  const { server, url } = await serve({ dir, base });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: [
      "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
  const origin = new URL(url).origin;
  return {
    url,
    origin,
    browser,
    /** A fresh page at `viewport` whose problems are collected in `page.problems`; other
     * options go to the browser context (e.g. `bypassCSP` for a test that injects a script).
     * The app's service worker is blocked unless a test asks for it (`serviceWorkers: "allow"`,
     * as the offline and site tests do): its install on a first visit fetches the whole build in
     * the background, which competes with a page's first run on a loaded two-core machine. */
    async page(viewport = DESKTOP, { colorScheme = "light", serviceWorkers = "block", ...contextOptions } = {}) {
      const context = await browser.newContext({ viewport, colorScheme, serviceWorkers, ...contextOptions });
      const page = await context.newPage();
      page.problems = [];
      page.on("console", (msg) => {
        if (msg.type() !== "error") return;
        // The host answers a deep link with 404.html and status 404, as GitHub Pages does;
        // Chromium logs that status for the document itself. It is expected, not a fault.
        const loc = msg.location().url || "";
        if (/status of 404/.test(msg.text()) && loc.startsWith(origin) && !/\.(js|wasm|css|svg)$/.test(loc)) return;
        page.problems.push(`console error: ${msg.text()} (${loc})`);
      });
      page.on("pageerror", (err) => page.problems.push(`page error: ${err.message}`));
      page.on("request", (req) => {
        const u = req.url();
        if (u.startsWith("data:") || u.startsWith("blob:")) return;
        if (new URL(u).origin !== origin) page.problems.push(`request left the origin: ${u}`);
      });
      page.on("requestfailed", (req) => {
        // Leaving a page while its favicon or the simulators' worker module still loads aborts
        // that request: not a fault.
        if (req.failure()?.errorText === "net::ERR_ABORTED" && /\/(favicon[^/]*|trainer-worker[^/]*)$/.test(new URL(req.url()).pathname)) return;
        page.problems.push(`request failed: ${req.url()} (${req.failure()?.errorText})`);
      });
      return page;
    },
    async stopServer() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
    async close() {
      await browser.close();
      if (server.listening) await new Promise((r) => server.close(r));
    },
  };
}

/** Opens `rel` (relative to the base) and waits for the app to mount its page heading (the
 * first paint each HTML file carries has one too, inside #boot, which the app removes). */
export async function open(page, url, rel = "") {
  await page.goto(url + rel);
  await page.waitForSelector("body > main h1", { timeout: 20000 });
  await drawn(page);
}

/** Waits until the page has drawn its deferred parts (app/src/components/deferred.rs marks the
 * document's root with `data-drawing` while any is queued). */
export async function drawn(page) {
  await page.waitForSelector("html:not([data-drawing])", { state: "attached", timeout: 20000 });
}

/** Every page's path relative to the base ("" for home, "size/fleet", ...), read from the
 * build: each has its own index.html (tools/post-build.mjs writes one per route of the app's
 * route table). */
export function routeFiles(root = dist, rel = "") {
  return fs.readdirSync(path.join(root, rel), { withFileTypes: true }).flatMap((e) => {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) return routeFiles(root, r);
    return e.name === "index.html" ? [rel] : [];
  }).sort();
}

/** Collects Content-Security-Policy violations in `window.cspViolations`, from the first
 * script of every document the page loads. */
export async function watchCsp(page) {
  await page.addInitScript(() => {
    window.cspViolations = [];
    document.addEventListener("securitypolicyviolation", (e) => {
      window.cspViolations.push(`${e.violatedDirective}: ${e.blockedURI || "inline"} (${e.sourceFile}:${e.lineNumber})`);
    });
  });
}

/** Saves a full-page screenshot under target/screenshots. */
export async function shoot(page, name) {
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
}

/** On a calculator page: draws a new drill and answers it far outside its band, so it is due
 * today. Returns the drilled step's id. */
export async function missDrill(page) {
  await page.waitForSelector('[data-testid="drill-new"]');
  await page.click('[data-testid="drill-new"]');
  const target = await page.getAttribute('[data-testid="drill-card"]', "data-target");
  await page.fill('[data-testid="drill-answer"]', "0.0000001");
  await page.click('[data-testid="drill-check"]');
  await page.waitForSelector('[data-testid="drill-result"][data-correct="false"]');
  return target;
}

/** How many cores the browser says the machine has (navigator.hardwareConcurrency): the
 *  benchmarks time a batch on one worker and on that many. */
export async function cores(app) {
  const page = await app.page();
  await open(page, app.url);
  const n = await page.evaluate(() => navigator.hardwareConcurrency);
  await page.context().close();
  return n;
}
