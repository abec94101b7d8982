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

/** Starts the server under `base` and a browser; returns helpers and a `close`. */
export async function start({ base = "/trainer/" } = {}) {
  if (!fs.existsSync(path.join(dist, "index.html"))) {
    throw new Error("dist/index.html is missing: run ./dev build (./dev test does it first)");
  }
  fs.mkdirSync(shots, { recursive: true });
  const { server, url } = await serve({ dir: dist, base });
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
     *  options go to the browser context (e.g. `bypassCSP` for a test that injects a script). */
    async page(viewport = DESKTOP, { colorScheme = "light", ...contextOptions } = {}) {
      const context = await browser.newContext({ viewport, colorScheme, ...contextOptions });
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
        // Leaving a page while its favicon still loads aborts that request: not a fault.
        if (req.failure()?.errorText === "net::ERR_ABORTED" && /\/favicon[^/]*$/.test(new URL(req.url()).pathname)) return;
        page.problems.push(`request failed: ${req.url()} (${req.failure()?.errorText})`);
      });
      return page;
    },
    async close() {
      await browser.close();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Opens `rel` (relative to the base) and waits for the app to mount its page heading. */
export async function open(page, url, rel = "") {
  await page.goto(url + rel);
  await page.waitForSelector("main h1", { timeout: 20000 });
}

/** Saves a full-page screenshot under target/screenshots. */
export async function shoot(page, name) {
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
}
