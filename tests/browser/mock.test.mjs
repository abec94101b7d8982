// The mock interview and the progress the learner owns: a short timed mock end to end (the
// clock sped up through the test exports, never by sleeping), interviewer mode, the
// curveball graded by a run, the self-assessment and the printable report; what the schedule
// brings back after a missed drill; export then import into a fresh profile; corrupt and
// unknown stored data; schema 1 migrated; the 375 px layout; keyboard only.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { start, open, missDrill, shoot, shots, DESKTOP, PHONE } from "./harness.mjs";

let app;
before(async () => { app = await start({ base: "/trainer/" }); });
after(async () => { await app?.close(); });

const KEY = "serving-trainer.progress";
const LEGACY = "serving-trainer.progress.v1";
const ASIDE = "serving-trainer.progress.unreadable";

const stored = (page) => page.evaluate((k) => JSON.parse(localStorage.getItem(k)), KEY);
const bindings = (page) => page.waitForFunction(() => window.wasmBindings && window.wasmBindings.mock_clock_speed);

/** Sets up a mock and starts it: mode, interviewer, minutes, curveball. */
async function startMock(page, { mode = "mock", interviewer = false, minutes = "5", curveball = "traffic-triples" } = {}) {
  await open(page, app.url, "mock");
  await page.check(`[data-testid="mode-${mode}"]`);
  if (interviewer) await page.check('[data-testid="mode-interviewer"]');
  if (mode === "mock") await page.fill('[data-testid="mock-minutes"]', minutes);
  await page.selectOption('[data-testid="mock-curveball"]', curveball);
  await page.click('[data-testid="mock-start"]');
  await page.waitForSelector('[data-testid="mock-prompt"]');
}

async function stage(page) {
  return page.getAttribute('[data-testid="mock-prompt"]', "data-stage");
}

test("a short mock end to end: the clock, notes, the curveball graded by a run, time up, the assessment, the report", async () => {
  const page = await app.page();
  await startMock(page, { minutes: "2" });
  await bindings(page);
  assert.match(await page.textContent('[data-testid="mock-clock"]'), /^0[12]:\d\d$/);
  assert.equal(await page.locator('[data-testid="mock-hint"]').count(), 0, "no hints against the clock");
  assert.equal(await page.locator('[data-testid="interviewer-notes"]').count(), 0, "no interviewer notes alone");
  const order = [];
  order.push(await stage(page));
  await page.fill('[data-testid="notes-opening"]', "Load in tokens first: 50,000 prompt and 12,500 output tokens a second.");
  for (let i = 0; i < 6; i++) {
    await page.click('[data-testid="mock-next"]');
    order.push(await stage(page));
    if (order.at(-1) === "clarify") {
      await page.fill('[data-testid="notes-clarify"]', "Prompt length distribution and its p99? Is the TTFT target measured at the client? Peak or average?");
    }
  }
  assert.deepEqual(order, ["opening", "clarify", "sizing", "path", "clocks", "probes", "curveball"]);
  assert.equal(await page.locator('[data-testid="mock-next"]').count(), 0);
  // Notes survive going back and forth.
  await page.click('[data-testid="mock-prev"]');
  await page.fill('[data-testid="notes-probes"]', "The gap is outside the engine.");
  await page.click('[data-testid="mock-next"]');
  // The curveball's load is computed: three times the fleet question's rate.
  assert.equal(Number(await page.getAttribute('[data-testid="pushback-load"]', "data-value")), 150);
  // Too few replicas: the run misses the SLO.
  await page.fill('[data-testid="pushback-answer"]', "4");
  await page.click('[data-testid="pushback-run"]');
  await page.waitForSelector('[data-testid="pushback-result"]', { timeout: 60000 });
  assert.equal(await page.getAttribute('[data-testid="pushback-result"]', "data-grade"), "weak");
  assert.match(await page.textContent('[data-testid="pushback-result"]'), /150 req\/s do not hold the SLO/);
  // A bad answer is refused with a message, and nothing runs.
  await page.fill('[data-testid="pushback-answer"]', "many");
  await page.click('[data-testid="pushback-run"]');
  assert.match(await page.textContent('[data-testid="pushback-error"]'), /whole number/);
  // The derived count holds, at its cost.
  await page.fill('[data-testid="pushback-answer"]', "23");
  await page.click('[data-testid="pushback-run"]');
  await page.waitForSelector('[data-testid="pushback-result"][data-grade="strong"]', { timeout: 60000 });
  assert.match(await page.textContent('[data-testid="pushback-result"]'), /hold the SLO.*\$57\.50 an hour/);
  assert.match(await page.getAttribute('[data-testid="pushback-lab"]', "href"), /\/trainer\/lab\?preset=fleet-seed$/);
  // Pause stops the clock even when it runs fast.
  await page.click('[data-testid="mock-clock-pause"]');
  assert.equal(await page.getAttribute('[data-testid="mock-clock-pause"]', "aria-pressed"), "true");
  const held = await page.getAttribute('[data-testid="mock-clock"]', "data-remaining");
  await page.evaluate(() => window.wasmBindings.mock_clock_speed(1000));
  await page.waitForTimeout(600);
  assert.equal(await page.getAttribute('[data-testid="mock-clock"]', "data-remaining"), held);
  // Resumed at that speed, the rest of the two minutes is gone in well under a second.
  await page.click('[data-testid="mock-clock-pause"]');
  await page.waitForSelector('[data-testid="time-up"]', { timeout: 10000 });
  await page.evaluate(() => window.wasmBindings.mock_clock_speed(1));
  // The questions that change the design, graded from the clarifying notes.
  assert.equal(await page.getAttribute('[data-testid="assess-requirements-lengths"]', "data-asked"), "true");
  assert.equal(await page.getAttribute('[data-testid="assess-requirements-where-measured"]', "data-asked"), "true");
  assert.equal(await page.getAttribute('[data-testid="assess-requirements-tenants"]', "data-asked"), "false");
  assert.match(await page.textContent('[data-testid="assess-requirements-summary"]'), /asked 4 of the 7 questions/);
  // The assessment: each rubric line with the evidence given.
  assert.match(await page.textContent('[data-testid="evidence-load-tokens"]'), /Load in tokens first/);
  assert.match(await page.textContent('[data-testid="evidence-three-ttfts"]'), /outside the engine/);
  assert.match(await page.textContent('[data-testid="evidence-pushback"]'), /23 \(strong\)/);
  assert.match(await page.textContent('[data-testid="evidence-buffering"]'), /outside the engine/);
  assert.match(await page.textContent('[data-testid="evidence-ceiling"]'), /Nothing noted/);
  assert.match(await page.getAttribute('[data-testid="train-ceiling"]', "href"), /\/trainer\/size\/fleet#step-replicas$/);
  await page.check('[data-testid="assess-load-tokens-shown"]');
  await page.check('[data-testid="assess-pushback-shown"]');
  await page.check('[data-testid="assess-ceiling-missed"]');
  await page.check('[data-testid="assess-buffering-partly"]');
  // Calibrate: the level each stage's answer reads at, against what each level says there.
  assert.match(await page.textContent('[data-testid="level-sizing"]'), /Senior: .*utilisation ceiling/);
  await page.check('[data-testid="level-opening-senior"]');
  await page.check('[data-testid="level-clarify-senior"]');
  await page.check('[data-testid="level-sizing-mid"]');
  await page.click('[data-testid="mock-save"]');
  await page.waitForSelector('[data-testid="mock-done"]');
  // What to study next: missed first, then partly, then what was not assessed; never what was shown.
  const next = await page.$$eval('[data-testid^="study-next-"]', (els) => els.map((e) => [e.dataset.testid.slice(11), e.dataset.mark]));
  assert.deepEqual(next.slice(0, 2), [["ceiling", "missed"], ["buffering", "partly"]]);
  assert.ok(!next.some(([id]) => id === "load-tokens" || id === "pushback"), JSON.stringify(next));
  assert.equal(next.length, 6);
  // Kept in progress, with the curveball in the schedule (a strong answer: box 2, two days).
  const p = await stored(page);
  assert.equal(p.schema, 3);
  assert.equal(p.mocks.length, 1);
  const m = p.mocks[0];
  assert.equal(m.mode, "mock");
  assert.equal(m.limit_s, 120);
  assert.ok(m.used_s >= 119 && m.used_s <= 120, `${m.used_s}`);
  assert.equal(m.pushback.grade, "strong");
  assert.equal(m.pushback.answer, "23");
  assert.equal(m.notes.opening.slice(0, 20), "Load in tokens first");
  assert.equal(m.assessment.ceiling, "missed");
  assert.equal(m.requirements.lengths, true);
  assert.deepEqual(m.levels, { opening: "senior", clarify: "senior", sizing: "mid" });
  assert.equal(m.requirements.budget, false);
  const card = p.schedule["curveball:traffic-triples"];
  assert.equal(card.box, 2);
  assert.equal(card.due - card.last, 2);
  // The printable report.
  await page.click('[data-testid="mock-report-link"]');
  await page.waitForSelector('[data-testid="page-mock-report"]');
  assert.equal(new URL(page.url()).pathname, "/trainer/mock/report");
  assert.equal(await page.getAttribute('[data-testid="report-line-ceiling"]', "data-mark"), "missed");
  assert.equal(await page.getAttribute('[data-testid="report-line-load-tokens"]', "data-mark"), "shown");
  assert.equal(await page.getAttribute('[data-testid="report-pushback"]', "data-grade"), "strong");
  assert.equal(await page.getAttribute('[data-testid="report-requirements-peak"]', "data-asked"), "true");
  assert.equal(await page.getAttribute('[data-testid="report-level-sizing"]', "data-level"), "mid");
  assert.match(await page.textContent('[data-testid="report-calibration"]'), /senior level \(2 of 3\); the lowest is Sizing/);
  assert.equal(await page.getAttribute('[data-testid="report-requirements-streaming"]', "data-asked"), "false");
  assert.match(await page.textContent('[data-testid="report-session"]'), /against the clock · .* used/);
  await page.emulateMedia({ media: "print" });
  assert.equal(await page.isVisible(".site-header"), false, "the header does not print");
  assert.equal(await page.isVisible('[data-testid="report-print"]'), false, "the print button does not print");
  assert.equal(await page.isVisible('[data-testid="report-line-ceiling"]'), true);
  await page.pdf({ path: "target/screenshots/mock-report.pdf", format: "A4" }).catch(() => {});
  await page.emulateMedia({ media: "screen" });
  await shoot(page, "mock-report-1280");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("interviewer mode shows the expected points and the rubric beside each prompt; practice mode hints and has no clock", async () => {
  const page = await app.page();
  await startMock(page, { mode: "practice", interviewer: true, curveball: "long-prompts" });
  assert.equal(await page.locator('[data-testid="mock-clock"]').count(), 0);
  assert.ok(await page.isVisible('[data-testid="mock-no-clock"]'));
  assert.ok((await page.textContent('[data-testid="mock-hint"]')).length > 20);
  assert.ok(await page.isVisible('[data-testid="interviewer-notes"]'));
  assert.equal(await page.locator('[data-testid="interviewer-rubric-load-tokens"]').count(), 1);
  // Level calibration: what a mid-level, senior and staff answer says at this stage.
  for (const level of ["mid", "senior", "staff"]) {
    assert.ok((await page.textContent(`[data-testid="interviewer-level-${level}"]`)).length > 20, level);
  }
  await page.click('[data-testid="mock-next"]');
  // At the clarifying stage the interviewer sees the checklist tick as the notes are taken.
  assert.equal(await stage(page), "clarify");
  assert.equal(await page.getAttribute('[data-testid="interviewer-requirements-tenants"]', "data-asked"), "false");
  await page.fill('[data-testid="notes-clarify"]', "Asked about tenants and their quotas.");
  await page.waitForSelector('[data-testid="interviewer-requirements-tenants"][data-asked="true"]');
  await page.click('[data-testid="mock-next"]');
  assert.equal(await stage(page), "sizing");
  assert.ok((await page.locator('[data-testid="interviewer-notes"] li').count()) >= 4);
  assert.equal(await page.locator('[data-testid="interviewer-rubric-littles-law"]').count(), 1);
  assert.match(await page.getAttribute('[data-testid="interviewer-train"]', "href"), /\/trainer\/size\/fleet$/);
  await shoot(page, "mock-interviewer-1280");
  // The router curveball: every approach runs, and the chosen one is graded by its rank.
  for (let i = 0; i < 4; i++) await page.click('[data-testid="mock-next"]');
  assert.equal(await stage(page), "curveball");
  assert.match(await page.textContent('[data-testid="interviewer-level-staff"]'), /what it costs/);
  const options = await page.$$eval('[data-testid^="pushback-option-"]', (els) => els.map((e) => e.dataset.testid.slice(16)));
  assert.ok(options.includes("request-count"), options.join());
  await page.check('[data-testid="pushback-option-request-count"]');
  await page.click('[data-testid="pushback-run"]');
  await page.waitForSelector('[data-testid="pushback-result"]', { timeout: 120000 });
  // Counting requests never comes out best here: weak when it misses the target, acceptable otherwise.
  assert.match(await page.getAttribute('[data-testid="pushback-result"]', "data-grade"), /^(weak|acceptable)$/);
  assert.match(await page.textContent('[data-testid="pushback-result"]'), /Server TTFT, p95 [\d.]+ m?s against/);
  assert.match(await page.getAttribute('[data-testid="pushback-lab"]', "href"), /lab\?preset=fleet-long-prompts&arm=token-aware$/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("finance wants a cut: the configuration runs with the others and is graded against the arithmetic's bill", async () => {
  const page = await app.page();
  await startMock(page, { mode: "practice", curveball: "finance-cut" });
  for (let i = 0; i < 6; i++) await page.click('[data-testid="mock-next"]');
  assert.equal(await stage(page), "curveball");
  assert.match(await page.textContent("main"), /Finance wants 30 % off/);
  // Capped at the sizing's batch in BF16: it holds the targets but costs more than finance allows.
  await page.check('[data-testid="pushback-option-bf16-32"]');
  await page.click('[data-testid="pushback-run"]');
  await page.waitForSelector('[data-testid="pushback-result"]', { timeout: 120000 });
  assert.equal(await page.getAttribute('[data-testid="pushback-result"]', "data-grade"), "weak");
  const said = await page.textContent('[data-testid="pushback-result"]');
  assert.match(said, /over what finance allows/);
  assert.match(said, /30 % off the \$[\d.]+ an hour of the \d+ replicas the arithmetic sized/);
  assert.match(await page.getAttribute('[data-testid="pushback-lab"]', "href"), /\/trainer\/advisor$/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a paced mock: each stage's share of the clock, a nudge past it, kept over a reload, and the time per stage in the report", async () => {
  const page = await app.page();
  await startMock(page, { minutes: "10" });
  await bindings(page);
  const pace = async () => [
    Number(await page.getAttribute('[data-testid="mock-pace"]', "data-spent")),
    Number(await page.getAttribute('[data-testid="mock-pace"]', "data-budget")),
  ];
  // The opening's share of a ten-minute clock: its minutes of the plan's, scaled (3 of 45).
  assert.equal((await pace())[1], 40);
  assert.equal(await page.locator('[data-testid="mock-pace-over"]').count(), 0);
  await page.evaluate(() => window.wasmBindings.mock_clock_speed(100));
  await page.waitForSelector('[data-testid="mock-pace-over"]', { timeout: 10000 });
  await page.evaluate(() => window.wasmBindings.mock_clock_speed(1));
  assert.match(await page.textContent('[data-testid="mock-pace"]'), /of the 0:40 the plan gives it/);
  const [opening] = await pace();
  assert.ok(opening > 40, `${opening}`);
  // The next stage starts from nothing, with its own share (5 of 45).
  await page.click('[data-testid="mock-next"]');
  const [spent, budget] = await pace();
  assert.ok(spent < 5 && Math.abs(budget - 66.7) < 0.05, `${spent} ${budget}`);
  assert.equal(await page.locator('[data-testid="mock-pace-over"]').count(), 0);
  // A reload keeps the time per stage.
  await page.reload();
  await page.waitForSelector('[data-testid="mock-resumed"]');
  await page.click('[data-testid="mock-prev"]');
  assert.ok((await pace())[0] >= opening, "the opening's time is kept");
  assert.equal(await page.locator('[data-testid="mock-pace-over"]').count(), 1);
  for (let i = 0; i < 6; i++) await page.click('[data-testid="mock-next"]');
  await page.click('[data-testid="mock-finish"]');
  await page.click('[data-testid="mock-save"]');
  await page.waitForSelector('[data-testid="mock-done"]');
  await page.click('[data-testid="mock-report-link"]');
  await page.waitForSelector('[data-testid="report-pace"]');
  assert.equal(await page.getAttribute('[data-testid="report-pace-opening"]', "data-over"), "true");
  assert.equal(await page.getAttribute('[data-testid="report-pace-clarify"]', "data-over"), "false");
  assert.match(await page.textContent('[data-testid="report-pace-opening"]'), /0:40.*\(long\)/);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a missed drill is due today on the home page, which takes the learner there; later it is overdue", async () => {
  const page = await app.page();
  await open(page, app.url);
  assert.equal(await page.locator('[data-testid="due-none"]').count(), 1);
  await page.goto(app.url + "size/fleet");
  const target = await missDrill(page);
  await page.click('[data-testid="nav-home"]');
  await page.waitForSelector('[data-testid="due-today"]');
  const item = `[data-testid="due-drill-fleet-${target}"]`;
  // The labels come from a piece of the module fetched when something is first due.
  await page.waitForSelector(item);
  assert.equal(await page.locator(item).count(), 1, target);
  assert.equal(await page.getAttribute(item, "data-box"), "1");
  assert.match(await page.textContent(item), /missed last time/);
  assert.equal(await page.getAttribute('[data-testid="due-count"]', "data-value"), "1");
  // Two days later it is still there, overdue.
  await bindings(page);
  await page.evaluate(() => window.wasmBindings.progress_day_offset(2));
  await page.click('[data-testid="nav-lesson"]');
  await page.click('[data-testid="nav-home"]');
  await page.waitForSelector(item);
  assert.match(await page.textContent(item), /2 days overdue/);
  // The first due item is one click away, at the drill.
  await page.click('[data-testid="due-start"]');
  await page.waitForSelector('[data-testid="drill-new"]');
  assert.equal(new URL(page.url()).pathname, "/trainer/size/fleet");
  assert.equal(new URL(page.url()).hash, "#drill-h");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("export, then import into a fresh profile; a bad file is refused and changes nothing", async () => {
  const a = await app.page();
  // Schema 1, as the app stored it before: migrated on load into the current schema.
  await a.addInitScript(([k, v]) => { if (!localStorage.getItem("serving-trainer.progress")) localStorage.setItem(k, v); }, [LEGACY, JSON.stringify({
    done: ["lesson", "moments", "moments/routing"],
    drills: [{ question: "fleet", step: "decode_step", correct: false }, { question: "fleet", step: "replicas", correct: true }],
    inputs: { fleet: "question=fleet&rate=60" },
    estimates: [],
    moments: [{ moment: "routing", option: "round-robin", grade: "weak", estimate: null }],
  })]);
  await open(a, app.url);
  assert.equal(await a.evaluate((k) => localStorage.getItem(k), LEGACY), null, "schema 1's key is retired");
  const p = await stored(a);
  assert.equal(p.schema, 3);
  assert.deepEqual(p.done, ["lesson", "moments", "moments/routing"]);
  assert.equal(await a.locator('[data-testid="due-drill-fleet-decode_step"]').count(), 1);
  assert.equal(await a.locator('[data-testid="due-moment-routing"]').count(), 1);
  assert.equal(await a.locator('[data-testid="due-drill-fleet-replicas"]').count(), 0, "a right answer is not due today");
  assert.match(await a.textContent('[data-testid="progress-summary"]'), /3 parts started; 1 of 2 drills/);
  const [download] = await Promise.all([a.waitForEvent("download"), a.click('[data-testid="progress-export"]')]);
  assert.equal(download.suggestedFilename(), "serving-trainer-progress.json");
  // Kept outside the browser context, which deletes its downloads when it closes.
  const file = path.join(shots, "exported-progress.json");
  await download.saveAs(file);
  const exported = JSON.parse(fs.readFileSync(file, "utf8"));
  assert.deepEqual(exported, await stored(a));
  await a.context().close();

  const b = await app.page();
  await open(b, app.url);
  assert.equal(await b.locator('[data-testid="due-none"]').count(), 1, "a fresh profile has nothing due");
  // A file that is not progress is refused, and nothing changes.
  const bad = file + ".bad.json";
  fs.writeFileSync(bad, '{"schema": 99}');
  await b.setInputFiles('[data-testid="progress-import"]', bad);
  await b.waitForSelector('[data-testid="progress-message"][data-ok="false"]');
  assert.match(await b.textContent('[data-testid="progress-message"]'), /schema 99/);
  assert.equal(await b.locator('[data-testid="due-none"]').count(), 1);
  await b.setInputFiles('[data-testid="progress-import"]', file);
  await b.waitForSelector('[data-testid="progress-message"][data-ok="true"]');
  // The due list's labels come from a piece of the module fetched when something is first due.
  await b.waitForSelector('[data-testid="due-drill-fleet-decode_step"]');
  assert.deepEqual(await stored(b), exported);
  // It survives a reload.
  await b.waitForLoadState("networkidle");
  await open(b, app.url);
  assert.equal(await b.locator('[data-testid="due-moment-routing"]').count(), 1);
  // Reset asks first; keeping it changes nothing, confirming forgets everything.
  await b.click('[data-testid="progress-reset"]');
  await b.click('[data-testid="reset-no"]');
  assert.equal((await stored(b)).done.length >= 3, true);
  await b.click('[data-testid="progress-reset"]');
  await b.click('[data-testid="reset-yes"]');
  assert.equal(await b.locator('[data-testid="due-none"]').count(), 1);
  const after = await stored(b);
  assert.deepEqual([after.done, after.drills, Object.keys(after.schedule)], [[], [], []]);
  assert.deepEqual(b.problems, []);
  await b.context().close();
});

test("corrupt or unknown stored progress: a notice, a clean start, the old copy kept aside", async () => {
  for (const [text, pattern] of [["{broken", /could not be read/], ['{"schema": 99, "done": []}', /schema 99/]]) {
    const page = await app.page();
    await page.addInitScript(([k, v]) => { if (!sessionStorage.getItem("seeded")) { localStorage.setItem(k, v); sessionStorage.setItem("seeded", "1"); } }, [KEY, text]);
    await open(page, app.url);
    assert.match(await page.textContent('[data-testid="progress-problem"]'), pattern);
    assert.equal(await page.evaluate((k) => localStorage.getItem(k), ASIDE), text);
    const p = await stored(page);
    assert.equal(p.schema, 3);
    // The app keeps working and saves again.
    await page.click('[data-testid="nav-moments"]');
    await page.waitForSelector('[data-testid="page-moments"]');
    assert.deepEqual((await stored(page)).done, ["moments"]);
    // Reload once the first load is quiet (a reload cuts off a favicon still loading).
    await page.waitForLoadState("networkidle");
    await open(page, app.url);
    assert.equal(await page.locator('[data-testid="progress-problem"]').count(), 0, "read cleanly the next time");
    assert.deepEqual(page.problems, []);
    await page.context().close();
  }
});

test("the mock and its report fit a 375 px phone", async () => {
  const page = await app.page(PHONE);
  await startMock(page, { mode: "practice", interviewer: true });
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok((await overflow()) <= 1, `prompt: ${await overflow()} px too wide`);
  await shoot(page, "mock-prompt-375");
  for (let i = 0; i < 6; i++) await page.click('[data-testid="mock-next"]');
  assert.ok((await overflow()) <= 1, `curveball: ${await overflow()} px too wide`);
  await page.click('[data-testid="mock-finish"]');
  await page.waitForSelector('[data-testid="assess"]');
  assert.ok((await overflow()) <= 1, `assessment: ${await overflow()} px too wide`);
  await shoot(page, "mock-assess-375");
  await page.click('[data-testid="mock-save"]');
  await page.click('[data-testid="mock-report-link"]');
  await page.waitForSelector('[data-testid="page-mock-report"]');
  assert.ok((await overflow()) <= 1, `report: ${await overflow()} px too wide`);
  await shoot(page, "mock-report-375");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

/** Presses Tab until the element with `testid` has focus (at most 80 times). */
async function tabTo(page, testid) {
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate((t) => document.activeElement?.dataset?.testid === t, testid)) return;
  }
  throw new Error(`Tab never reached ${testid}`);
}

test("keyboard only: set up, answer, run the curveball, assess and save", async () => {
  const page = await app.page();
  await open(page, app.url, "mock");
  await tabTo(page, "mode-mock");
  await page.keyboard.press("ArrowDown");
  assert.ok(await page.isChecked('[data-testid="mode-practice"]'));
  await tabTo(page, "mock-curveball");
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.inputValue('[data-testid="mock-curveball"]'), "traffic-triples");
  await tabTo(page, "mock-start");
  await page.keyboard.press("Enter");
  await page.waitForSelector('[data-testid="mock-prompt"]');
  await page.waitForFunction(() => document.activeElement?.id === "mock-prompt-h");
  await tabTo(page, "notes-opening");
  await page.keyboard.type("Tokens per phase first.");
  for (let i = 0; i < 6; i++) {
    await tabTo(page, "mock-next");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.activeElement?.id === "mock-prompt-h");
  }
  assert.equal(await stage(page), "curveball");
  await tabTo(page, "pushback-answer");
  await page.keyboard.type("30");
  await page.keyboard.press("Enter");
  await page.waitForSelector('[data-testid="pushback-result"]', { timeout: 60000 });
  assert.equal(await page.getAttribute('[data-testid="pushback-result"]', "data-grade"), "acceptable");
  await tabTo(page, "mock-finish");
  await page.keyboard.press("Enter");
  await page.waitForSelector('[data-testid="assess"]');
  await tabTo(page, "assess-load-tokens-shown");
  await page.keyboard.press("Space");
  assert.ok(await page.isChecked('[data-testid="assess-load-tokens-shown"]'));
  await tabTo(page, "mock-save");
  await page.keyboard.press("Enter");
  await page.waitForSelector('[data-testid="mock-done"]');
  const p = await stored(page);
  assert.equal(p.mocks[0].mode, "practice");
  assert.equal(p.mocks[0].pushback.grade, "acceptable");
  assert.equal(p.mocks[0].assessment["load-tokens"], "shown");
  // An acceptable answer drops a box: due again tomorrow.
  const card = p.schedule["curveball:traffic-triples"];
  assert.deepEqual([card.box, card.due - card.last], [1, 1]);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a reload mid-interview resumes it where it stood, with the clock paused; a bad saved one is discarded with the reason", async () => {
  const page = await app.page();
  await startMock(page, { minutes: "30" });
  await page.fill('[data-testid="notes-opening"]', "Tokens per second first.");
  await page.click('[data-testid="mock-next"]');
  await page.fill('[data-testid="notes-clarify"]', "Streaming, a 20 ms TPOT target.");
  await page.click('[data-testid="mock-next"]');
  await page.reload();
  await page.waitForSelector('[data-testid="mock-resumed"]');
  assert.equal(await stage(page), "sizing");
  assert.equal(await page.getAttribute('[data-testid="mock-clock-pause"]', "aria-pressed"), "true");
  assert.match(await page.textContent('[data-testid="mock-clock"]'), /^(29|30):\d\d$/);
  await page.click('[data-testid="mock-prev"]');
  assert.equal(await page.inputValue('[data-testid="notes-clarify"]'), "Streaming, a 20 ms TPOT target.");
  await page.click('[data-testid="mock-prev"]');
  assert.equal(await page.inputValue('[data-testid="notes-opening"]'), "Tokens per second first.");
  // A saved interview that cannot be resumed is set aside with the reason; the set-up shows.
  await page.evaluate(() => localStorage.setItem("serving-trainer.mock-draft", '{"curveball":"no-such","timed":false}'));
  await page.reload();
  await page.waitForSelector('[data-testid="mock-draft-error"]');
  assert.match(await page.textContent('[data-testid="mock-draft-error"]'), /curveball/);
  await page.waitForSelector('[data-testid="mock-setup"]');
  assert.equal(await page.evaluate(() => localStorage.getItem("serving-trainer.mock-draft")), null);
  await page.context().close();
});

// The figures said at the sizing stage, checked against the fleet question's derivation: at
// both widths, by keyboard, one right and one wrong, an entry that is not a number, the
// tolerance stated beside each, the derivation and its link for the miss, the draft keeping
// them over a reload, the interviewer's expected figures, and the miss due on the home page.
for (const [name, viewport] of [["1280", DESKTOP], ["375", PHONE]]) {
  test(`figures at the sizing stage are graded with their tolerance, a miss shows its derivation and is due for review (${name} px)`, async () => {
    const page = await app.page(viewport);
    await startMock(page, { mode: "practice", interviewer: true });
    await page.click('[data-testid="mock-next"]');
    await page.click('[data-testid="mock-next"]');
    assert.equal(await stage(page), "sizing");
    // The interviewer sees every figure the derivation gives, with its tolerance, beside the
    // prompt; each is the value the check grades against.
    const ids = await page.$$eval('[data-testid^="figure-input-"]', (els) => els.map((e) => e.dataset.testid.slice(13)));
    assert.deepEqual(ids, ["replicas", "gpus", "cost_per_hour", "cost_per_million", "open_streams", "kv_per_token"]);
    for (const id of ids) {
      const shown = page.locator(`[data-testid="interviewer-figures"] [data-testid="expected-${id}"]`);
      assert.equal(await shown.getAttribute("data-value"), await page.getAttribute(`[data-testid="figure-${id}"]`, "data-expected"), id);
      assert.match(await shown.textContent(), new RegExp(`\\(${await page.textContent(`[data-testid="figure-tolerance-${id}"]`)}\\)$`), id);
    }
    const expected = (id) => page.getAttribute(`[data-testid="figure-${id}"]`, "data-expected").then(Number);
    assert.equal(await page.textContent('[data-testid="figure-tolerance-replicas"]'), "within 1 replica");
    assert.equal(await page.textContent('[data-testid="figure-tolerance-cost_per_hour"]'), "within 15 %");
    // The derivation's replicas and cost, read live: one said right, the other a third too high.
    const replicas = await expected("replicas");
    const cost = await expected("cost_per_hour");
    assert.ok(replicas >= 1 && cost > 0, `${replicas} ${cost}`);
    await tabTo(page, "figure-input-replicas");
    await page.keyboard.type(String(replicas));
    await tabTo(page, "figure-input-cost_per_hour");
    await page.keyboard.type(String(Math.round(cost * 1.3 * 100) / 100));
    await tabTo(page, "figure-input-open_streams");
    await page.keyboard.type("abc");
    await page.keyboard.press("Enter");
    await page.waitForSelector('[data-testid="figure-mark-replicas"]');
    assert.equal(await page.getAttribute('[data-testid="figure-mark-replicas"]', "data-right"), "true");
    assert.match(await page.textContent('[data-testid="figure-mark-replicas"]'), /^Right\. .*\(within 1 replica\)/);
    assert.equal(await page.getAttribute('[data-testid="figure-mark-cost_per_hour"]', "data-right"), "false");
    assert.match(await page.textContent('[data-testid="figure-mark-cost_per_hour"]'), /^Missed\. .*\(within 15 %\)/);
    // A bad entry and an empty one get a message, not a mark.
    assert.match(await page.textContent('[data-testid="figure-error-open_streams"]'), /“abc” is not a number/);
    assert.equal(await page.getAttribute('[data-testid="figure-input-open_streams"]', "aria-invalid"), "true");
    assert.match(await page.textContent('[data-testid="figure-error-gpus"]'), /Type a figure/);
    assert.equal(await page.locator('[data-testid="figure-mark-open_streams"]').count(), 0);
    assert.equal(await page.locator('[data-testid="figure-mark-gpus"]').count(), 0);
    // A checked figure is final.
    assert.equal(await page.getAttribute('[data-testid="figure-input-replicas"]', "readonly"), "");
    assert.match(await page.textContent('[data-testid="figures-summary"]'), /1 of 2 figures within their tolerance; missed: Cost per hour/);
    // Only the miss shows its derivation: the formula, the numbers in it, the value, a link.
    assert.equal(await page.locator('[data-testid="figure-derivation-replicas"]').count(), 0);
    assert.match(await page.textContent('[data-testid="figure-formula-cost_per_hour"]'), /GPUs × price/);
    assert.match(await page.textContent('[data-testid="figure-substituted-cost_per_hour"]'), /× \$.* = \$[\d,.]+\/h$/);
    const link = await page.getAttribute('[data-testid="figure-link-cost_per_hour"]', "href");
    assert.match(link, /\/trainer\/size\/fleet\?reveal=\d+#step-cost_per_hour$/);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(wide <= 1, `${wide} px too wide`);
    await shoot(page, `mock-figures-${name}`);
    // The draft keeps the typed and the checked figures over a reload.
    await page.reload();
    await page.waitForSelector('[data-testid="mock-resumed"]');
    assert.equal(await stage(page), "sizing");
    assert.equal(await page.inputValue('[data-testid="figure-input-open_streams"]'), "abc");
    assert.equal(await page.getAttribute('[data-testid="figure-mark-cost_per_hour"]', "data-right"), "false");
    // The link opens the calculator at that step, which shows the same figure.
    await page.click('[data-testid="figure-link-cost_per_hour"]');
    await page.waitForSelector('[data-testid="step-cost_per_hour"]');
    assert.equal(new URL(page.url()).hash, "#step-cost_per_hour");
    assert.equal(Number(await page.getAttribute('[data-testid="step-cost_per_hour"]', "data-value")), cost);
    // The miss is due today on the home page; the right one climbed a box and is not.
    await page.click('[data-testid="nav-home"]');
    await page.waitForSelector('[data-testid="due-today"]');
    const due = '[data-testid="due-step-fleet-cost_per_hour"]';
    await page.waitForSelector(due);
    assert.equal(await page.locator(due).count(), 1);
    assert.match(await page.textContent(due), /Mock figure: .*cost per hour.*missed last time/);
    assert.equal(await page.locator('[data-testid="due-step-fleet-replicas"]').count(), 0);
    const p = await stored(page);
    assert.deepEqual([p.schedule["step:fleet/replicas"].box, p.schedule["step:fleet/cost_per_hour"].box], [2, 1]);
    await page.click('[data-testid="due-start"]');
    await page.waitForSelector('[data-testid="step-cost_per_hour"]');
    assert.equal(new URL(page.url()).hash, "#step-cost_per_hour");
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
}

test("a saved interview with a figure this mock does not ask for comes back without it, saying so", async () => {
  const page = await app.page();
  await page.addInitScript(() => {
    if (sessionStorage.getItem("seeded")) return;
    sessionStorage.setItem("seeded", "1");
    localStorage.setItem("serving-trainer.mock-draft", JSON.stringify({
      timed: false, curveball: "traffic-triples", stage: 2,
      figures: { replicas: "7", furlongs: "3" },
      marks: [{ id: "furlongs", typed: "3", value: 3, expected: 4, unit: "", tolerance: "", right: false }],
    }));
  });
  await open(page, app.url, "mock");
  await page.waitForSelector('[data-testid="mock-resumed"]');
  assert.match(await page.textContent('[data-testid="mock-resumed"]'), /Set aside from it: .*"furlongs" is not one this mock asks for/);
  assert.equal(await page.inputValue('[data-testid="figure-input-replicas"]'), "7");
  assert.equal(await page.locator('[data-testid^="figure-mark-"]').count(), 0);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
