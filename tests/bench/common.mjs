// What the bench scripts that open the built app in Chromium share: their `--name value`
// options, and the app served from a build (gzipped, as a static host would) with Debian's
// Chromium started headless beside it.

import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { serve } from "../serve.mjs";

/** The value after `--name` on the command line, or `fallback`. */
export const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};

/** Serves `--dist` (dist/ by default) and starts Chromium: { server, url, browser }. */
export async function launch() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dist = path.resolve(arg("dist", path.join(here, "..", "..", "dist")));
  const { server, url } = await serve({ dir: dist, base: "/", gzip: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  return { server, url, browser };
}
