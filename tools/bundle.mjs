// Bundles the split's shared chunks so that a landing page fetches a few files, not a hundred.
//
// `wasm-split-cli` puts each function shared by several split points into a chunk named by the
// exact set of split points that need it: some 280 chunks, most under 2 KB, and a landing page
// fetched 80 to 150 of them, each a request and a module's fixed bytes (its header, imports,
// types), compressed alone. Here the chunks a landing page needs are merged by what the
// landing pages need of them: two chunks go into one bundle when the same landing split points
// (tools/landing.mjs: a landing page and the regions it draws later) need both, so a landing
// page fetches exactly the code it fetched before, in one file per such set. A page off the
// landing path may fetch a bundle holding code only other pages use; it is fetched once and
// cached. A chunk is never in two files: a chunk's data segments are instantiated once, and
// loading its functions twice would write its statics twice.
//
// A chunk imports only what the main module shares (its memory, its function table, the stack
// pointer) from "__wasm_split", installs its functions into fixed slots of the table and its
// data at fixed addresses, and exports nothing, so a bundle is the chunks' functions, element
// and data segments side by side, over one set of those imports. Binaryen's `wasm-merge` links
// modules by their exports; each chunk's imports are pointed at a hub module that imports the
// shared items once and exports them, and the hub's exports are dropped after the merge.
//
//   bundleChunks(dir, loader, splitPoints)   from tools/split.mjs, before the pieces are optimised

import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

/** The import module the split's pieces read the main module's shared items from. */
const SHARED = "__wasm_split";
/** The hub's name: as long as SHARED, so a chunk's imports are renamed in place. */
const HUB = "__wasm_hub__";
/** A chunk larger than this (bytes, before optimisation) stays a file of its own, so a page
 * off the landing path never fetches much code it does not run. Measured on one build (3
 * December 2026), the calculator's first load and the lab's pieces, KB gzipped: unbundled
 * 414.7 and 519; every chunk bundled 385.3 and 625 (the moments, the mock and the build-ups
 * also some 120 KB heavier); at 4 KB 403.7 and 519; at 16 KB 390.4 and 529. `BUNDLE_SMALL`
 * sets it for such a measurement. */
const SMALL = Number(process.env.BUNDLE_SMALL ?? 16384);
/** The features the compiler's output uses (its target_features section). */
const FEATURES = ["bulk-memory", "multivalue", "mutable-globals", "nontrapping-float-to-int", "reference-types", "sign-ext"];

/** Merges the chunks in `dir` that the same landing split points need (`landing`, names of
 * `#[lazy]` functions) and rewrites the loader `js` to fetch each bundle once. Returns the
 * rewritten loader and what was merged: `{ js, bundles: [{ file, chunks, exports }] }`, where
 * `exports` are the hub's exports the bundle carries (the shared items' names), for the
 * optimiser to remove: nothing reads a piece's exports. */
export function bundleChunks(dir, js, landing) {
  const { chunks, splits } = readLoader(js);
  const needs = new Map([...chunks.keys()].map((c) => [c, new Set()]));
  for (const s of splits) for (const c of s.deps) needs.get(c)?.add(s.name);
  const groups = new Map();
  for (const [chunk, by] of needs) {
    if (fs.statSync(path.join(dir, chunks.get(chunk))).size > SMALL) continue;
    const key = landing.filter((p) => by.has(p)).join(" ");
    if (!key) continue;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(chunk);
  }
  const alias = new Map();
  const bundles = [];
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    const file = `bundle_${bundles.length}.wasm`;
    const exports = merge(members.map((c) => path.join(dir, chunks.get(c))), path.join(dir, file));
    for (const c of members) fs.rmSync(path.join(dir, chunks.get(c)));
    const [first, ...rest] = members;
    js = js.split(`"./${chunks.get(first)}"`).join(`"./${file}"`);
    for (const c of rest) {
      alias.set(c, first);
      const def = new RegExp(`/\\*[^*]*\\*/\\nconst ${c} = makeLoad\\(\\(\\) => \\{\\n[\\s\\S]*?\\n\\}\\n, \\[\\]\\);\\n`);
      if (!def.test(js)) throw new Error(`bundle: the loader's definition of ${c} has an unexpected form`);
      js = js.replace(def, "");
    }
    bundles.push({ file, chunks: members.map((c) => chunks.get(c)), exports });
  }
  // Each split point waits for its chunks' bundles, each once.
  js = js.replace(SPLIT_LOADER, (whole, _name, _file, deps) => {
    const list = [...new Set(depList(deps).map((c) => alias.get(c) ?? c))];
    return whole.replace(/\[[^\]]*\]\)\);$/, `[${list.join(", ")}]));`);
  });
  return { js, bundles };
}

const CHUNK = /const (__chunk_\d+) = makeLoad\(\(\) => \{\s*const src = fetch\(new URL\("\.\/([^"]+)"/g;
/** A split point's loader: its name, its piece's file and the chunks it waits for. */
const SPLIT_LOADER = /export const __wasm_split_load_([A-Za-z0-9_]+?)_\d+ = wrapAsyncCb\(makeLoad\(\(\) => \{\s*const src = fetch\(new URL\("\.\/([^"]+)"[\s\S]*?, \[([^\]]*)\]\)\);/g;
const depList = (deps) => deps.split(",").map((d) => d.trim()).filter(Boolean);

/** The loader's chunks (variable to file) and split points (name, piece file and the chunks
 * each waits for), as `wasm-split-cli` 0.2.4 writes them; tools/split.mjs reads its manifest
 * off the same. */
export function readLoader(js) {
  const chunks = new Map([...js.matchAll(CHUNK)].map((m) => [m[1], m[2]]));
  const splits = [...js.matchAll(SPLIT_LOADER)].map((m) => ({ name: m[1], file: m[2], deps: depList(m[3]) }));
  if (chunks.size === 0 || splits.length === 0) throw new Error("bundle: no chunk or split point in the loader (has wasm-split-cli's output changed?)");
  for (const s of splits) {
    const unknown = s.deps.filter((d) => !chunks.has(d));
    if (unknown.length) throw new Error(`bundle: ${s.name} waits for chunks the loader does not define: ${unknown.join(", ")}`);
  }
  return { chunks, splits };
}

/** Merges the chunk files `files` into `out`, keeping the first one's target features.
 * Returns the names the bundle exports from its hub. */
function merge(files, out) {
  const bufs = files.map((f) => Buffer.from(fs.readFileSync(f)));
  const shared = new Map();
  for (const [i, buf] of bufs.entries()) {
    for (const im of imports(buf)) {
      if (im.module !== SHARED) throw new Error(`bundle: ${files[i]} imports from "${im.module}"`);
      if (im.kind === 0) throw new Error(`bundle: ${files[i]} imports a function (${im.field})`);
      const seen = shared.get(im.field);
      if (seen && !seen.desc.equals(im.desc)) throw new Error(`bundle: the chunks import ${im.field} with different types`);
      if (!seen) shared.set(im.field, im);
      buf.write(HUB, im.moduleAt, "latin1");
    }
  }
  const parts = `${out}.parts`;
  fs.mkdirSync(parts, { recursive: true });
  try {
    fs.writeFileSync(path.join(parts, "hub.wasm"), hub([...shared.values()]));
    const args = [path.join(parts, "hub.wasm"), HUB];
    for (const [i, buf] of bufs.entries()) {
      const f = path.join(parts, `${i}.wasm`);
      fs.writeFileSync(f, buf);
      args.push(f, `chunk${i}`);
    }
    try {
      execFileSync("wasm-merge", [...args, ...FEATURES.map((f) => `--enable-${f}`), "-o", out], { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
    } catch (e) {
      throw new Error(`wasm-merge failed: ${(e.stderr || e.message).trim().split("\n").filter((l) => !/name subsection/.test(l)).slice(-3).join(" / ")}`);
    }
  } finally {
    fs.rmSync(parts, { recursive: true, force: true });
  }
  // Binaryen learns a module's features from this section when the bundle is optimised.
  const features = customSection(bufs[0], "target_features");
  if (features) fs.appendFileSync(out, features);
  return [...shared.keys()];
}

/** The hub: imports each shared item once and exports it under its own name. Its items are
 * named in a "name" section, since Binaryen names every module's imports alike. */
function hub(entries) {
  const index = [0, 0, 0, 0];
  const exports = [];
  const names = { 1: [], 2: [], 3: [] };
  for (const im of entries) {
    const i = index[im.kind]++;
    exports.push(Buffer.concat([str(im.field), Buffer.from([im.kind]), leb(i)]));
    names[im.kind].push(Buffer.concat([leb(i), str(`hub_${im.field}`)]));
  }
  const sub = (id, items) => (items.length ? section(id, vec(items)) : Buffer.alloc(0));
  return Buffer.concat([
    Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]),
    section(2, vec(entries.map((e) => e.raw))),
    section(7, vec(exports)),
    section(0, Buffer.concat([str("name"), sub(5, names[1]), sub(6, names[2]), sub(7, names[3])])),
  ]);
}

const leb = (n) => {
  const out = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return Buffer.from(out);
};
const str = (s) => Buffer.concat([leb(Buffer.byteLength(s)), Buffer.from(s)]);
const vec = (items) => Buffer.concat([leb(items.length), ...items]);
const section = (id, body) => Buffer.concat([Buffer.from([id]), leb(body.length), body]);
function readLeb(buf, at) {
  let v = 0;
  let shift = 0;
  for (let i = at; ; i++) {
    v += (buf[i] & 0x7f) * 2 ** shift;
    shift += 7;
    if (buf[i] < 0x80) return [v, i + 1];
  }
}

/** The module's sections: id, where its body starts and where it ends. */
function sections(buf) {
  const out = [];
  for (let i = 8; i < buf.length; ) {
    const [size, body] = readLeb(buf, i + 1);
    out.push({ id: buf[i], start: i, body, end: body + size });
    i = body + size;
  }
  return out;
}

/** The whole custom section named `name`, or undefined. */
function customSection(buf, name) {
  for (const s of sections(buf)) {
    if (s.id !== 0) continue;
    const [len, at] = readLeb(buf, s.body);
    if (buf.subarray(at, at + len).toString("latin1") === name) return Buffer.from(buf.subarray(s.start, s.end));
  }
  return undefined;
}

/** The module's imports: module and field names, kind, the entry's bytes, its description's
 * bytes, and where the module name's bytes start. */
function imports(buf) {
  const sec = sections(buf).find((s) => s.id === 2);
  if (!sec) return [];
  let [n, i] = readLeb(buf, sec.body);
  const out = [];
  const skipLimits = () => {
    const flags = buf[i++];
    [, i] = readLeb(buf, i);
    if (flags & 1) [, i] = readLeb(buf, i);
  };
  for (let k = 0; k < n; k++) {
    const start = i;
    let len;
    [len, i] = readLeb(buf, i);
    const moduleAt = i;
    const module = buf.subarray(i, i + len).toString("latin1");
    i += len;
    [len, i] = readLeb(buf, i);
    const field = buf.subarray(i, i + len).toString("latin1");
    i += len;
    const kind = buf[i++];
    const descAt = i;
    if (kind === 0) [, i] = readLeb(buf, i);
    else if (kind === 1) {
      i++; // the element type
      skipLimits();
    } else if (kind === 2) skipLimits();
    else if (kind === 3) i += 2; // value type and mutability
    else throw new Error(`bundle: an import of kind ${kind}`);
    out.push({ module, moduleAt, field, kind, raw: Buffer.from(buf.subarray(start, i)), desc: Buffer.from(buf.subarray(descAt, i)) });
  }
  return out;
}
