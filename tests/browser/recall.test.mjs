// Recall prompts (issue 27, part 4): a question set where the material is taught, its answer
// on one tap with the learner's own figures, a self-grade that enters the study schedule on
// its own, the home page's review that brings it back, and stored progress of the previous
// schema migrated on load.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { start, open, PHONE } from "./harness.mjs";

let app;
before(async () => { app = await start({ base: "/trainer/" }); });
after(async () => { await app?.close(); });

const KEY = "serving-trainer.progress";
const stored = (page) => page.evaluate((k) => JSON.parse(localStorage.getItem(k)), KEY);
const tid = (id) => `[data-testid="${id}"]`;

test("a calculator's prompt answers with the learner's figures, and a miss comes back on the home page", async () => {
  const page = await app.page();
  await open(page, app.url, "size/fleet?rate=100");
  const card = "recall-streams-littles-law";
  await page.waitForSelector(tid(card), { timeout: 20000 });
  assert.equal(await page.locator(tid(`${card}-answer`)).count(), 0, "the answer waits for the tap");
  // By keyboard: focus the button and press Enter.
  await page.focus(tid(`${card}-show`));
  await page.keyboard.press("Enter");
  await page.waitForSelector(tid(`${card}-answer`));
  // The answer carries the figure at the inputs on the page: 100 req/s × 250 × 20 ms.
  assert.match(await page.textContent(tid(`${card}-answer`)), /500 streams/);
  await page.click(tid(`${card}-missed`));
  await page.waitForSelector(tid(`${card}-next`));
  assert.match(await page.textContent(tid(`${card}-next`)), /today/);
  const p = await stored(page);
  assert.equal(p.schema, 3);
  assert.deepEqual(p.recalls.map((r) => [r.prompt, r.outcome]), [["streams-littles-law", "missed"]]);
  assert.equal(p.schedule["recall:streams-littles-law"].box, 1);

  // The home page lists it and asks it again, right there.
  await page.click(tid("nav-home"));
  await page.waitForSelector(tid("due-recall-streams-littles-law"));
  assert.match(await page.textContent(tid("due-recall-streams-littles-law")), /How do you count the streams/);
  await page.waitForSelector(`${tid("recall-review")} ${tid(card)}`);
  await page.click(`${tid("recall-review")} ${tid(`${card}-show`)}`);
  assert.match(await page.textContent(`${tid("recall-review")} ${tid(`${card}-answer`)}`), /500 streams/);
  await page.click(`${tid("recall-review")} ${tid(`${card}-right`)}`);
  // A right answer after a miss: box 2, back in two days.
  await page.waitForFunction((k) => JSON.parse(localStorage.getItem(k)).schedule["recall:streams-littles-law"].box === 2, KEY);
  const after = await stored(page);
  assert.equal(after.recalls.length, 2);
  assert.equal(after.schedule["recall:streams-littles-law"].due - after.recalls[1].day, 2);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("the lesson and the build-ups set their prompts; each is graded on its own", async () => {
  const page = await app.page();
  await open(page, app.url, "lesson");
  for (const id of ["decode-reads", "server-clock", "disconnect", "ridge-point"]) {
    await page.waitForSelector(tid(`recall-${id}`), { timeout: 30000 });
  }
  await page.click(tid("recall-decode-reads-show"));
  assert.match(await page.textContent(tid("recall-decode-reads-answer")), /20\.78 GB/);
  await page.click(tid("recall-decode-reads-partly"));
  await page.click(tid("recall-server-clock-show"));
  await page.click(tid("recall-server-clock-right"));
  await page.waitForSelector(tid("recall-server-clock-next"));
  const p = await stored(page);
  assert.equal(p.schedule["recall:decode-reads"].box, 1);
  assert.equal(p.schedule["recall:server-clock"].box, 2);
  assert.equal(Object.keys(p.schedule).length, 2, "only what was graded is scheduled");
  await open(page, app.url, "buildups/replica");
  await page.waitForSelector(tid("recall-continuous-batching"), { timeout: 30000 });
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("progress stored under the previous schema is migrated on load, its schedule intact", async () => {
  const page = await app.page(PHONE);
  await page.addInitScript(([k, v]) => { if (!sessionStorage.getItem("seeded")) { sessionStorage.setItem("seeded", "1"); localStorage.setItem(k, v); } }, [KEY, JSON.stringify({
    schema: 2,
    done: ["lesson"],
    drills: [{ question: "fleet", step: "decode_step", correct: false, day: 1 }],
    inputs: { fleet: "rate=60" },
    estimates: [],
    moments: [],
    mocks: [],
    schedule: { "drill:fleet/decode_step": { box: 1, due: 1, last: 1, reviews: 1, lapses: 1 } },
  })]);
  await open(page, app.url);
  await page.waitForSelector(tid("due-drill-fleet-decode_step"));
  const p = await stored(page);
  assert.equal(p.schema, 3);
  assert.deepEqual(p.recalls, []);
  assert.equal(p.inputs.fleet, "rate=60");
  assert.equal(p.schedule["drill:fleet/decode_step"].lapses, 1);
  assert.equal(await page.locator(tid("recall-review")).count(), 0, "no prompt is due yet");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
