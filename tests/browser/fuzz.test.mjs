// Fuzzing the app's two inputs from outside: the URL and the browser's storage. With a seeded
// PRNG (the same links every run), 200 random deep links (known route prefixes and garbage
// paths; the query keys each page reads, with good values, garbage, huge and unicode ones;
// keys no page reads) and 50 corrupted values of the keys the app stores (app/src/progress.rs,
// the mock's draft). Every one must leave a page with its heading, no panic notice (main.rs),
// no console error, and, for every bad value of a key the page reads, a message naming it.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, DESKTOP } from "./harness.mjs";

const SEED = 22;
const LINKS = 200;
const STORES = 50;
const tid = (id) => `[data-testid="${id}"]`;

let app;
let page;
before(async () => {
  app = await start({ base: "/trainer/" });
  page = await app.page(DESKTOP);
});
after(async () => { await app?.close(); });

/** mulberry32: a small seeded PRNG, so every run throws the same values. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(SEED);
const int = (n) => Math.floor(rand() * n);
const pick = (xs) => xs[int(xs.length)];

// Values that no field takes: each has something no number, id or step has.
const UNICODE = ["ünïcödé", "数字", "🚀🔥", "\u202eevil", "Ω≈ç√", "١٢٣", "\u0000nul", "e\u0301"];
function garbage() {
  switch (int(8)) {
    case 0: return pick(UNICODE);
    case 1: return "x".repeat(10000);
    case 2: return "9".repeat(5000) + "é" + "9".repeat(4999);
    case 3: return pick(["NaN", "-inf", "Infinity", "1e999", "-1e999", "0x10", "1..2", "--3", "1/0"]);
    case 4: return pick(["<script>alert(1)</script>", "<b>bold</b>", "\"quoted\"", "'; drop", "{x}", "%zz", "a&b=c"]);
    case 5: return `${pick(UNICODE)}${int(1000)}`;
    case 6: return " ".repeat(1 + int(3)) + "?" + pick(UNICODE);
    default: return Array.from({ length: 1 + int(40) }, () => String.fromCodePoint(0x21 + int(0x2ff))).join("") + "\u00a7";
  }
}

/** The query keys a page reads, found on the page itself (its fields), plus its other keys. */
const KINDS = {
  size: { paths: ["size/fleet", "size/chats-per-replica", "size/gpu-hours", "size/batch", "size/speculation", "size/halve-cost", "size/roofline", "size/split", "size/host"], fields: '[data-testid^="input-"]', prefix: "input-", extra: ["reveal", "sens", "drill"] },
  lab: { paths: ["lab"], fields: '[data-testid^="param-"]:is(input, select)', prefix: "param-", extra: ["preset", "scenario", "arm", "compare", "pin", "file"] },
  buildup: { paths: ["buildups/replica", "buildups/fleet"], fields: null, extra: ["step", "sub", "prompt", "budget", "pool", "cache"] },
  moment: { paths: ["moments/routing", "moments/autoscaler", "moments/rag", "moments/self-host", "moments/long-prompts", "moments/ttft-gap", "moments/halve-cost", "moments/spec-latency", "moments/cheapest-fleet", "moments/disconnect", "moments/disaggregate", "moments/long-chats", "moments/adapters"], fields: null, extra: ["choice", "engine"] },
  mock: { paths: ["mock"], fields: null, extra: ["curveball"] },
  advisor: { paths: ["advisor"], fields: '[data-testid^="adv-"]:is(input, select)', prefix: "adv-", extra: ["tp", "weights", "max_seqs", "budget", "gpus"] },
};
const PLAIN = ["", "lesson", "size", "buildups", "moments", "mock/report", "simulator"];
const PREFIXES = ["lesson", "size", "buildups", "moments", "lab", "advisor", "mock", "simulator", "index.html", "404.html"];

/** Reads the keys of the page at `rel` (of kind `kind`) from its fields, once per page. */
const known = new Map();
async function keysOf(kind, rel) {
  const k = KINDS[kind];
  if (known.has(rel)) return known.get(rel);
  let fields = [];
  if (k.fields) {
    await visit(rel);
    await page.waitForSelector(k.fields);
    fields = await page.$$eval(k.fields, (els, prefix) => els.map((e) => e.dataset.testid.slice(prefix.length)), k.prefix);
    fields = fields.filter((f) => /^[a-z_0-9]+$/.test(f));
  }
  known.set(rel, [...new Set([...fields, ...k.extra])]);
  return known.get(rel);
}

async function visit(rel) {
  await page.goto(app.url + rel);
  await page.waitForSelector("body > main h1", { timeout: 20000 });
}

/** A path that ends in "/" names a directory: index.html takes it for the app's base (one
 *  build serves any prefix), finds no assets there, and says so with a link to the start page.
 *  Waits for the app's heading or that sentence; true for the sentence. */
const junkDirectories = [];
async function visitDirectory(rel) {
  await page.goto(app.url + rel);
  const boot = page.locator('[data-testid="boot"]', { hasText: "could not load" });
  await Promise.race([page.waitForSelector("body > main h1", { timeout: 20000 }), boot.waitFor({ timeout: 20000 })]);
  if (!(await boot.count())) return false;
  // Its assets were not found there: those 404s (the favicon's may come later) are the
  // reason for the sentence, not faults.
  junkDirectories.push(app.url + rel);
  page.problems.splice(0);
  return (await boot.locator("a").count()) === 1;
}

/** What is wrong with the page now: a panic notice, no heading, a console or page error. */
async function faults(label) {
  const out = [];
  if (await page.locator(tid("crash-notice")).count()) out.push(`${label}: the panic notice shows`);
  const h1 = await page.locator("body > main h1").count();
  if (!h1 || !(await page.textContent("body > main h1")).trim()) out.push(`${label}: no heading`);
  // Leaving a page aborts what it was still loading: not a fault of the page.
  const problems = page.problems.splice(0)
    .filter((p) => !/net::ERR_ABORTED/.test(p) && !junkDirectories.some((d) => p.includes(d)));
  if (problems.length) out.push(`${label}: ${problems.join("; ").slice(0, 400)}`);
  return out;
}

// Keys that are another name for a field, whose message that field shows.
const ALIASES = { scenario: "preset" };

/** Whether a message on the page names `key`: a field's own message, or a message that says it.
 *  Waits a little: some messages come with a run from the simulators' worker (a build-up's
 *  sub-step past its end is known only once its run is there). */
async function named(key) {
  // A key is named under its own name or, where it is another name for a field (the lab's
  // `scenario`), under that field's; the advisor's `scenario` is a field of its own.
  const names = [key, ALIASES[key]].filter(Boolean);
  const found = await page.waitForFunction((names) => names.some((key) => {
    const own = document.querySelector(`[data-testid="error-${key}"], [data-testid="param-${key}-error"], [data-testid="lab-${key}-error"], [data-testid="bad-${key}"]`);
    if (own && own.textContent.trim()) return true;
    const words = new RegExp(`(^|[^a-z_])${key}([^a-z_]|$)`);
    const messages = document.querySelectorAll(".field-error, [role=alert], .notice, [data-testid$=\"-error\"]");
    return [...messages].some((m) => words.test(m.textContent));
  }), names, { timeout: 5000 }).then(() => true, () => false);
  return found;
}

const short = (s) => (s.length > 60 ? `${s.slice(0, 57)}...` : s);

/** A fresh tab every so many visits: each full load instantiates the page's WebAssembly and
 *  the simulators' worker, and Chromium reclaims an abandoned instance's reserved memory
 *  lazily, so one tab through hundreds of loads in a few minutes runs out of it ("Cannot
 *  allocate Wasm memory"), which no learner's tab does. */
const VISITS_PER_TAB = 25;
async function freshTab(i) {
  if (i > 0 && i % VISITS_PER_TAB === 0) {
    await page.context().close();
    page = await app.page(DESKTOP);
  }
}

test(`${LINKS} random deep links: no panic, a heading, every bad value named`, async () => {
  const found = [];
  const started = Date.now();
  for (let i = 0; i < LINKS; i++) {
    await freshTab(i);
    const roll = rand();
    let rel;
    let kind = null;
    const bad = [];
    const q = new URLSearchParams();
    if (roll < 0.7) {
      kind = pick(Object.keys(KINDS));
      rel = pick(KINDS[kind].paths);
      const keys = await keysOf(kind, rel);
      for (let n = 1 + int(3); n > 0; n--) {
        const key = pick(keys);
        const v = garbage();
        q.set(key, v);
        if (!bad.includes(key)) bad.push(key);
      }
    } else if (roll < 0.85) {
      rel = pick(PLAIN);
    } else {
      // Garbage paths: a known prefix with junk after it, or junk alone. (No NUL: a host
      // refuses such a path with 400 before any page loads.)
      const junk = () => encodeURIComponent(garbage().replaceAll("\0", "").slice(0, 200));
      rel = rand() < 0.5 ? `${pick(PREFIXES)}/${junk()}` : junk() + (rand() < 0.3 ? "/" : "");
    }
    // Keys no page reads, with any value: ignored (the lab names them), never a fault.
    if (rand() < 0.4) q.set(`k${int(100)}_${pick(UNICODE)}`, garbage());
    const query = q.toString();
    const url = rel + (query ? `?${query}` : "");
    const label = `#${i} /${short(url)}`;
    const directory = rel.endsWith("/") && kind === null && !PLAIN.includes(rel);
    try {
      if (directory) {
        if (await visitDirectory(url)) continue;
      } else {
        await visit(url);
      }
    } catch (e) {
      found.push(`#${i} /${url.slice(0, 300)}: ${e.message.split("\n")[0]}`);
      page.problems.splice(0);
      continue;
    }
    found.push(...(await faults(label)));
    for (const key of bad) {
      if (!(await named(key))) found.push(`${label}: the bad ${key}= is not named on the page (${short(q.get(key))})`);
    }
  }
  console.log(`${LINKS} links in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  assert.deepEqual(found, [], "\n" + found.join("\n"));
});

// What the app keeps in localStorage (app/src/progress.rs; the mock's draft in pages/mock).
const PROGRESS = "serving-trainer.progress";
const LEGACY = "serving-trainer.progress.v1";
const DRAFT = "serving-trainer.mock-draft";

/** A corrupted value for a stored key (broken JSON, wrong types, huge, unicode), and the
 *  calculator fields it holds bad values for, when it is otherwise readable. */
function corrupt() {
  let named = [];
  const anything = () => pick([null, true, -1, 1e308, -0, "", garbage(), [], {}, [garbage()], { [garbage()]: garbage() }, 2 ** 53 + 1]);
  const progressish = () => {
    const p = { schema: pick([2, 2, 2, 1, 0, 3, -1, "2", 2.5, null, 1e20]) };
    for (const f of ["done", "drills", "inputs", "estimates", "moments", "mocks", "schedule"]) {
      if (rand() < 0.5) p[f] = anything();
    }
    if (rand() < 0.4) {
      const [question, field] = pick([["fleet", "rate"], ["batch", "rate"], ["gpu-hours", "batch"], ["chats-per-replica", "chat_tokens"]]);
      const value = pick(["abc", garbage(), "-5", "60"]);
      p.inputs = { [question]: new URLSearchParams({ [field]: value }).toString() };
      named = value === "60" ? [] : [field];
    }
    if (rand() < 0.3) p.schedule = { [pick(["drill:fleet:replicas", "moment:routing", garbage()])]: { box: pick([1, 5, 0, 6, 255, -1]), due: pick([0, -1e15, 1e15, 2 ** 62, "x", null]) } };
    if (rand() < 0.3) p.drills = [{ question: garbage(), step: garbage(), correct: pick([true, "yes"]), day: pick([null, 1e15, -1e15, 2 ** 62]) }];
    if (rand() < 0.3) p.moments = [{ moment: pick(["routing", garbage()]), option: garbage(), grade: pick(["strong", garbage()]), estimate: pick([null, 1e308, -1]), day: pick([null, 2 ** 62]) }];
    if (rand() < 0.3) p.mocks = [{ [pick(["minutes", "curveball", "figures", "notes", garbage()])]: anything(), day: pick([2 ** 62, -(2 ** 62), 0]) }];
    return JSON.stringify(p);
  };
  switch (int(5)) {
    case 0: return { value: garbage(), named: [] };
    case 1: return { value: JSON.stringify(anything()), named: [] };
    case 2: return { value: progressish().slice(0, 1 + int(80)), named: [] };
    default: return { value: progressish(), named };
  }
}

test(`${STORES} corrupted stored values: no panic, a heading on every page that reads them, and a notice`, async () => {
  const found = [];
  const started = Date.now();
  const readers = ["", "lesson", "size", "size/fleet", "moments", "mock", "mock/report"];
  await visit("");
  for (let i = 0; i < STORES; i++) {
    if (i > 0 && i % VISITS_PER_TAB === 0) {
      await freshTab(i);
      await visit("");
    }
    const key = pick([PROGRESS, PROGRESS, PROGRESS, LEGACY, DRAFT]);
    const { value, named: fields } = corrupt();
    await page.evaluate(([k, v]) => { localStorage.clear(); localStorage.setItem(k, v); }, [key, value]);
    const rel = pick(readers);
    const label = `#${i} ${key}=${short(value)} on /${rel}`;
    try {
      await visit(key === DRAFT ? "mock" : rel);
    } catch (e) {
      found.push(`${label}: ${e.message.split("\n")[0]}`);
      page.problems.splice(0);
      continue;
    }
    found.push(...(await faults(label)));
    // Progress that could not be read is kept aside, and the learner is told.
    const aside = await page.evaluate(() => localStorage.getItem("serving-trainer.progress.unreadable"));
    const notice = (await page.locator(tid("progress-problem")).count()) ? await page.textContent(tid("progress-problem")) : null;
    if (aside !== null && key !== DRAFT && notice === null) found.push(`${label}: set aside without a notice`);
    // Readable progress whose calculator inputs hold a bad value: the notice names the field.
    if (aside === null && key === PROGRESS) {
      for (const f of fields) {
        if (!notice || !notice.includes(`${f}=`)) found.push(`${label}: the saved bad ${f}= is not named (${notice})`);
      }
    }
    if (key === DRAFT && !(await page.locator(tid("mock-draft-error")).count()) && !(await page.locator(tid("mock-resumed")).count())) {
      found.push(`${label}: a bad saved mock is neither resumed nor named`);
    }
    // Whatever the app did with the value, what it keeps now must read back on a reload.
    await visit("");
    found.push(...(await faults(`${label}, then the home page`)));
  }
  console.log(`${STORES} stored values in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  assert.deepEqual(found, [], "\n" + found.join("\n"));
});
