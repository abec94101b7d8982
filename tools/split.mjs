// Splits the page's WebAssembly into the frame and one lazily loaded piece per page.
//
// Every page of the app is a Leptos `#[lazy]` function (app/src/pages/mod.rs), which marks a
// split point in the module; `wasm-split-cli` (wasm_split_cli_support 0.2.4, installed by
// ./dev) cuts the module the compiler linked (kept with its relocations: .cargo/config.toml)
// into a main module, one module per page and chunks of code shared by several pages, plus a
// JS loader (`__wasm_split.js`) that fetches a page's piece and its chunks when the page is
// first drawn. The main module then goes through wasm-bindgen as Trunk's would have, and
// every module through Binaryen's optimiser (as `wasm-opt -Oz`, in this one process: the
// command starts Binaryen anew for each of some two hundred files).
//
// Trunk has already written its own, unsplit, page module and JS; they are replaced under the
// same names (which index.html's loader and preload hints name, with their integrity hashes
// recomputed here). The pieces and the loader get content hashes in their names, so a browser
// never mixes a cached piece of one build with another build's main module. The loader and the
// main JS are minified (Terser), and `wasm-pieces.json` lists what each split point fetches
// (tests/budget.mjs reads it).
//
//   split(stagingDir, { wasm, log })   from tools/post-build.mjs
//   node tools/split.mjs DIR WASM      on a copy of a build, for measuring

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import crypto from "node:crypto";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { bundleChunks, readLoader } from "./bundle.mjs";
import { LANDING_SPLIT_POINTS } from "./landing.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const LOADER = "__wasm_split.js";
/** The split's table of contents, written beside the pieces: for each split point (a
 * `#[lazy]` function's name), the files it fetches before it runs. */
export const MANIFEST = "wasm-pieces.json";

/** Replaces the page's module in `dir` (a Trunk staging or dist directory) by its split form,
 * cut from `wasm` (the linker's output, with relocations). Returns what it wrote. */
export async function split(dir, { wasm, log = console.error } = {}) {
  const mainJs = fs.readdirSync(dir).find((f) => /^trainer-app-[0-9a-f]+\.js$/.test(f));
  if (!mainJs) throw new Error(`no trainer-app-<hash>.js in ${dir}`);
  const stem = mainJs.replace(/\.js$/, "");
  const mainWasm = `${stem}_bg.wasm`;
  if (!fs.existsSync(path.join(dir, mainWasm))) throw new Error(`no ${mainWasm} in ${dir}`);
  if (!fs.existsSync(wasm)) throw new Error(`no linked module at ${wasm}`);

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "trainer-split-"));
  try {
    run("wasm-split-cli", [wasm, tmp, "--target", "web", "--out-name", stem]);
    // The chunks the landing pages need, merged by what they need of them (tools/bundle.mjs).
    const bundled = bundleChunks(tmp, fs.readFileSync(path.join(tmp, LOADER), "utf8"), LANDING_SPLIT_POINTS);
    let loader = fetchInTurns(bundled.js);
    const hubExports = new Map(bundled.bundles.map((b) => [b.file, b.exports]));
    const pieces = fs.readdirSync(tmp).filter((f) => f.endsWith(".wasm") && f !== `${stem}.wasm`);
    if (pieces.length === 0) {
      throw new Error("wasm-split-cli found no split point: was the module linked with --emit-relocs and are the pages #[lazy]?");
    }
    run("wasm-bindgen", ["--target", "web", "--no-typescript", "--keep-lld-exports", "--out-dir", tmp, "--out-name", stem, path.join(tmp, `${stem}.wasm`)]);

    const { default: binaryen } = await import(binaryenModule());
    binaryen.setOptimizeLevel(2);
    binaryen.setShrinkLevel(2);
    // SPLIT_KEEP_NAMES=1 keeps the functions' names (tests/bench/lab-profile.mjs reads them).
    const keepNames = process.env.SPLIT_KEEP_NAMES === "1";
    binaryen.setDebugInfo(keepNames);
    const optimise = (file, dropExports = []) => {
      const bytes = fs.readFileSync(file);
      // (Binaryen learns the module's features from its "target_features" section.)
      const mod = binaryen.readBinary(withoutCustomSections(bytes, keepNames, ["target_features"]));
      try {
        for (const name of dropExports) mod.removeExport(name);
        mod.setFeatures(binaryen.Features.Default | mod.getFeatures());
        mod.optimize();
        fs.writeFileSync(file, withoutCustomSections(Buffer.from(mod.emitBinary()), keepNames));
      } finally {
        mod.dispose();
      }
    };

    // The pieces, optimised and named by their contents.
    const hash = (buf) => crypto.createHash("sha256").update(buf).digest("hex").slice(0, 16);
    for (const f of pieces) {
      const p = path.join(tmp, f);
      optimise(p, hubExports.get(f));
      const named = f.replace(/\.wasm$/, `-${hash(fs.readFileSync(p))}.wasm`);
      const ref = `"./${f}"`;
      if (!loader.includes(ref)) throw new Error(`the loader does not name ${f}`);
      loader = loader.split(ref).join(`"./${named}"`);
      fs.renameSync(p, path.join(dir, named));
    }
    // What each split point fetches before it runs (its piece and the chunks it lists), read
    // off the loader before it is minified: tests/budget.mjs reads it.
    const manifest = pieceManifest(loader);
    fs.writeFileSync(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`);
    // The loader and the main module's JS, minified (Terser): a tenth of a landing page's
    // download was their white space and long local names.
    const { minify } = await import(path.join(repo, "tests", "node_modules", "terser", "main.js"));
    const small = async (code) => (await minify(code, { module: true, ecma: 2020 })).code;
    loader = await small(loader);
    // The loader imports initSync from the main module's JS, by that file's (unchanged) name.
    const loaderName = LOADER.replace(/\.js$/, `-${hash(loader)}.js`);
    fs.writeFileSync(path.join(dir, loaderName), loader);

    const bgWasm = path.join(tmp, `${stem}_bg.wasm`);
    optimise(bgWasm);
    let js = fs.readFileSync(path.join(tmp, `${stem}.js`), "utf8");
    // Only the import statements: the imports object keeps the module's own name for it.
    const importRef = ` from "./${LOADER}"`;
    if (!js.includes(importRef)) throw new Error(`the main module's JS does not import ${LOADER}`);
    js = js.split(importRef).join(` from "./${loaderName}"`);
    fs.writeFileSync(path.join(dir, mainJs), await small(js));
    fs.copyFileSync(bgWasm, path.join(dir, mainWasm));

    // The HTML files' preload hints carry Trunk's integrity hashes of the files just replaced.
    const sris = [mainJs, mainWasm].map((f) => [
      new RegExp(`(<link\\b[^>]*href="\\./${f.replace(/[.]/g, "\\.")}"[^>]*integrity=")[^"]*(")`),
      `sha384-${crypto.createHash("sha384").update(fs.readFileSync(path.join(dir, f))).digest("base64")}`,
    ]);
    for (const file of htmlFiles(dir)) {
      let html = fs.readFileSync(file, "utf8");
      for (const [tag, sri] of sris) html = html.replace(tag, `$1${sri}$2`);
      fs.writeFileSync(file, html);
    }
    log(`split: ${mainWasm} ${fs.statSync(path.join(dir, mainWasm)).size} bytes, ${pieces.length} pieces, ${loaderName}`);
    return { mainJs, mainWasm, loader: loaderName, pieces: pieces.length };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** The loader as wasm-split-cli writes it starts every file a page needs (its piece and some
 * thirty chunks) in the one task that asks for the piece: with DevTools watching the network, as
 * Lighthouse does, the fetches alone held the main thread for some 40 ms (160 ms on its phone),
 * the longest task of the lab's opening. Each file's fetch now starts in a task of its own (a
 * timer's), so the thread is given back between them. */
export function fetchInTurns(loader) {
  const from = "    const loader = async () => {\n        const parallelStuff = deps.map(d => d());";
  const to =
    "    const loader = async () => {\n" +
    "        // Each file's fetch in a task of its own (tools/split.mjs, fetchInTurns).\n" +
    "        await new Promise((go) => setTimeout(go, 0));\n" +
    "        const parallelStuff = deps.map(d => d());";
  if (!loader.includes(from)) throw new Error("the loader's makeLoad is not the one tools/split.mjs knows (wasm-split-cli changed?)");
  return loader.replace(from, to);
}

/** For each split point, the files the loader fetches before it runs: its piece, then every
 * chunk (or bundle) it lists, in the loader's order. */
function pieceManifest(js) {
  const { chunks, splits } = readLoader(js);
  return Object.fromEntries(splits.map((s) => [s.name, [s.file, ...s.deps.map((d) => chunks.get(d))]]));
}

/** The module without its custom sections but those named in `keep` and, when `keepNames`, its
 * "name" section: a piece that carried the compiler's "producers" and "target_features"
 * sections spent about 200 bytes on them (over 280 pieces, 50 KB that no browser reads), and
 * Binaryen 132 reads the linker's newer name subsections with a warning per module. */
function withoutCustomSections(buf, keepNames, keep = []) {
  const out = [buf.subarray(0, 8)];
  let i = 8;
  const leb = () => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = buf[i++];
      v += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) return v;
    }
  };
  while (i < buf.length) {
    const start = i;
    const id = buf[i++];
    const size = leb();
    const end = i + size;
    let kept = true;
    if (id === 0) {
      const len = leb();
      const name = buf.subarray(i, i + len).toString("latin1");
      kept = keep.includes(name) || (keepNames && name === "name");
    }
    if (kept) out.push(buf.subarray(start, end));
    i = end;
  }
  return Buffer.concat(out);
}

/** Every HTML file under `root`. */
function htmlFiles(root) {
  return fs.readdirSync(root, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(root, e.name);
    return e.isDirectory() ? htmlFiles(p) : e.name.endsWith(".html") ? [p] : [];
  });
}

function run(cmd, args) {
  try {
    execFileSync(cmd, args, { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  } catch (e) {
    throw new Error(`${cmd} failed: ${(e.stderr || e.message).trim().split("\n").slice(-5).join(" / ")}`);
  }
}

/** Binaryen's JS API, from the Node tools (tests/node_modules, pinned by its lock file). */
function binaryenModule() {
  return path.join(repo, "tests", "node_modules", "binaryen", "index.js");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [dir, wasm] = process.argv.slice(2);
  if (!dir || !wasm) {
    console.error("usage: node tools/split.mjs DIR WASM");
    process.exit(2);
  }
  split(dir, { wasm }).catch((e) => {
    console.error(`split: ${e.message}`);
    process.exit(1);
  });
}
