// Trunk post-build step (every build runs it: `./dev build`, `./dev test`, CI). It splits the
// page's WebAssembly into the frame and a piece per page (tools/split.mjs) and turns Trunk's
// one index.html into the site:
//
// 0. The page's module is split by page (tools/split.mjs), and the stylesheets become one
//    minified file.
// 1. The assets wait for the base. Trunk writes the stylesheets, the module script and the
//    preload hints as ordinary tags with relative URLs; a browser's preload scanner would fetch
//    those at once against the page's own URL, before any script runs (on /trainer/size/fleet,
//    requests for /trainer/size/app.js that fail). So everything between `<!-- app-assets -->`
//    and </head> moves into an inert <template>, and a one-line script clones it into the head
//    once `window.appBase` (set by index.html's inline script) has settled. The template also
//    gets the web app manifest and the service worker's registration (tools/sw-register.js).
// 2. One HTML file per route. `cargo run -p trainer-site` (site/) prints every route of the
//    app's one route table with its title and first paint (the page's heading and
//    introduction, rendered from the content files); each is written as `<route>/index.html`,
//    so a static host answers every deep link with 200, and the first paint is the page.
//    404.html (unknown addresses only) gets a neutral first paint.
// 3. A Content-Security-Policy meta in every file: scripts from the page's origin only, plus
//    the inline scripts by their SHA-256 computed here, and 'wasm-unsafe-eval'.
// 4. Offline: manifest.webmanifest (icon, colours from style/main.css) and sw.js, whose
//    precache list is every file of this build (so any later file, such as a worker's module,
//    is in it) and whose version is a hash of their contents.

import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { split } from "./split.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) fail("TRUNK_STAGING_DIR is not set (run through trunk)");

function fail(msg) {
  console.error(`post-build: ${msg}`);
  process.exit(2);
}

// 0. The page's module, split into the frame and a piece per page (tools/split.mjs), before
// anything below lists or hashes the build's files.
const profile = process.env.TRUNK_PROFILE === "debug" ? "debug" : "release";
const targetDir = process.env.CARGO_TARGET_DIR ? path.resolve(repo, process.env.CARGO_TARGET_DIR) : path.join(repo, "target");
try {
  await split(dir, { wasm: path.join(targetDir, "wasm32-unknown-unknown", profile, "trainer-app.wasm") });
} catch (e) {
  fail(`splitting the page's module failed: ${e.message}`);
}

// 0b. The stylesheets, as one minified file: Trunk writes one file per stylesheet of
// index.html, as written (comments and all), and every page loads all of them. One file in
// the same order is the same cascade, one request instead of eight, and a third of the bytes.
try {
  combineStyles(dir);
} catch (e) {
  fail(`combining the stylesheets failed: ${e.message}`);
}

// The routes and their first paints, from the native generator. Cargo builds it for the host
// (Trunk's wasm32 target is a command-line flag of its own cargo call, not inherited).
const env = { ...process.env };
delete env.CARGO_BUILD_TARGET;
let site;
try {
  const out = execFileSync("cargo", ["run", "--quiet", "-p", "trainer-site"], { cwd: repo, env, encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "inherit"] });
  site = JSON.parse(out);
} catch (e) {
  fail(`the site generator failed: ${e.message}`);
}

// 1. The asset template, with the manifest and the service worker's registration in it.
const html = fs.readFileSync(path.join(dir, "index.html"), "utf8");
const marker = "<!-- app-assets -->";
const start = html.indexOf(marker);
const end = html.indexOf("</head>");
if (start < 0 || end < start) fail("index.html lacks the <!-- app-assets --> marker before </head>");
// The service worker's registration goes out minified (Terser, as the split's loader): its
// comments are for the repository, and every page downloads it before it is usable.
try {
  const { minify } = await import(path.join(repo, "tests", "node_modules", "terser", "main.js"));
  const register = await minify(fs.readFileSync(path.join(repo, "tools", "sw-register.js"), "utf8"), { ecma: 2015 });
  fs.writeFileSync(path.join(dir, "sw-register.js"), register.code);
} catch (e) {
  fail(`minifying tools/sw-register.js failed: ${e.message}`);
}
// Stylesheets block rendering even though a script inserts them (they are in the head before
// the body exists), so the first paint is styled.
const assets =
  html.slice(start + marker.length, end).replace(/<link rel="stylesheet"/g, '<link rel="stylesheet" blocking="render"') +
  `<link rel="manifest" href="manifest.webmanifest">\n<script src="sw-register.js"></script>\n`;
const colours = themeColours(fs.readFileSync(path.join(repo, "style", "main.css"), "utf8"));
const theme =
  `<meta name="theme-color" content="${colours.light}" media="(prefers-color-scheme: light)">\n` +
  `  <meta name="theme-color" content="${colours.dark}" media="(prefers-color-scheme: dark)">\n  `;
const shell =
  html.slice(0, start) +
  theme +
  `<template id="app-assets">${assets}</template>\n` +
  `<script>window.appBase.then(function () { document.head.appendChild(document.getElementById("app-assets").content.cloneNode(true)); });</script>\n` +
  html.slice(end).replace("</body>", `${site.notice}\n</body>`);

// 3. The policy: every inline script (the base script, the clone line and Trunk's module loader
// inside the template) allowed by its hash, nothing else inline. Leptos sets `style`
// attributes (bar widths), hence style-src-attr; no <style> element is allowed.
const hashes = [...shell.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
  (m) => `'sha256-${crypto.createHash("sha256").update(m[1], "utf8").digest("base64")}'`,
);
const policy = [
  "default-src 'self'",
  `script-src 'self' 'wasm-unsafe-eval' ${[...new Set(hashes)].join(" ")}`,
  "style-src 'self'",
  "style-src-attr 'unsafe-inline'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join("; ");
const charset = '<meta charset="utf-8">';
if (!shell.includes(charset)) fail(`index.html lacks ${charset}`);
const locked = shell.replace(charset, `${charset}\n  <meta http-equiv="Content-Security-Policy" content="${policy}">`);

// 2. One file per route, and 404.html.
const boot = /<div id="boot"[^>]*>[\s\S]*?<\/div>/;
if (!boot.test(locked)) fail('index.html lacks <div id="boot">');
const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");
function page(p) {
  return locked.replace(/<title>[\s\S]*?<\/title>/, `<title>${esc(p.title)}</title>`).replace(boot, () => p.boot);
}
let routeFiles = 0;
let routeBytes = 0;
for (const p of site.pages) {
  const file = path.join(dir, p.path, "index.html");
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const text = page(p);
  fs.writeFileSync(file, text);
  routeFiles += 1;
  routeBytes += Buffer.byteLength(text);
}
fs.writeFileSync(path.join(dir, "404.html"), page(site.unknown));

// 4. The manifest and the service worker.
const icon = fs.readdirSync(dir).find((f) => /^favicon.*\.svg$/.test(f));
if (!icon) fail("no favicon*.svg in the build");
const manifest = {
  name: site.manifest.name,
  short_name: site.manifest.short_name,
  start_url: "./",
  scope: "./",
  display: "standalone",
  background_color: colours.light,
  theme_color: colours.light,
  icons: [{ src: icon, sizes: "any", type: "image/svg+xml", purpose: "any" }],
};
fs.writeFileSync(path.join(dir, "manifest.webmanifest"), JSON.stringify(manifest, null, 2) + "\n");

const files = listFiles(dir).filter((f) => f !== "sw.js").sort();
const version = crypto.createHash("sha256");
for (const f of files) version.update(f + "\0").update(fs.readFileSync(path.join(dir, f)));
const sw = fs
  .readFileSync(path.join(repo, "tools", "sw.js"), "utf8")
  .replace('"__VERSION__"', JSON.stringify(version.digest("hex").slice(0, 16)))
  .replace("[/* __FILES__ */]", JSON.stringify(files, null, 1));
if (sw.includes("__VERSION__") || sw.includes("__FILES__")) fail("tools/sw.js lacks its placeholders");
fs.writeFileSync(path.join(dir, "sw.js"), sw);
console.error(`post-build: ${routeFiles} route files (${routeBytes} bytes), 404.html, sw.js precaching ${files.length} files`);

/** Every file under `root`, as paths relative to it with forward slashes. */
function listFiles(root, rel = "") {
  return fs.readdirSync(path.join(root, rel), { withFileTypes: true }).flatMap((e) => {
    const r = rel ? `${rel}/${e.name}` : e.name;
    return e.isDirectory() ? listFiles(root, r) : [r];
  });
}

/** The page's background in light and dark (`--surface` in main.css), for the theme colour. */
/** Replaces the stylesheets index.html links (in `dir`) by one file, `style-<hash>.css`, their
 * contents in the same order, minified. */
function combineStyles(dir) {
  const file = path.join(dir, "index.html");
  let html = fs.readFileSync(file, "utf8");
  const links = [...html.matchAll(/<link rel="stylesheet" href="\.\/([^"]+\.css)"[^>]*>\n?/g)];
  if (links.length === 0) throw new Error("index.html links no stylesheet");
  const css = links.map((m) => minifyCss(fs.readFileSync(path.join(dir, m[1]), "utf8"))).join("\n");
  const name = `style-${crypto.createHash("sha256").update(css).digest("hex").slice(0, 16)}.css`;
  fs.writeFileSync(path.join(dir, name), css);
  const sri = `sha384-${crypto.createHash("sha384").update(css).digest("base64")}`;
  html = html.replace(links[0][0], `<link rel="stylesheet" href="./${name}" integrity="${sri}"/>\n`);
  for (const m of links.slice(1)) html = html.replace(m[0], "");
  fs.writeFileSync(file, html);
  for (const m of links) fs.rmSync(path.join(dir, m[1]));
}

/** CSS without its comments and the white space it does not need. Quoted strings are kept as
 * they are (a comment is found only outside one, and a quote only outside a comment); outside
 * them, runs of white space become one space, and the space around braces, semicolons and the
 * child combinator goes (never around `+` or `-`, which `calc()` needs spaced, nor after a
 * comma: a custom property's value and a `var()` keep their text as written, so the browser's
 * reading of the rules stays the same, which a browser test compares). */
function minifyCss(css) {
  return css
    .split(/("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\/\*[\s\S]*?\*\/)/)
    .map((part, i) => {
      if (i % 2 === 1) return part.startsWith("/*") ? " " : part;
      return part
        .replace(/\s+/g, " ")
        .replace(/ ?([{};>]) ?/g, "$1")
        .replace(/;}/g, "}");
    })
    .join("")
    .trim();
}

function themeColours(css) {
  const all = [...css.matchAll(/--surface:\s*(#[0-9a-fA-F]{3,8})\s*;/g)].map((m) => m[1]);
  if (all.length < 2) fail("style/main.css lacks a light and a dark --surface colour");
  return { light: all[0], dark: all[1] };
}
