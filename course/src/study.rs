//! The learner's progress as data: a versioned schema with migrations from every older shape
//! the app has stored, and the spaced-repetition schedule that brings back what was missed.
//!
//! Nothing here touches storage: the app hands in the text it read (and today's day number)
//! and stores the text it is given back. Stored text is untrusted input: whatever cannot be
//! read, or comes from a schema this build does not know, yields a clean start and a notice,
//! never a panic.
//!
//! The schedule is a Leitner system of [`BOXES`] boxes. Every drill step, interview moment,
//! mock curveball, figure checked in a mock (a step of a sizing question) and recall prompt
//! the learner answers is an item with a box and a due day:
//!
//! - answered well, an item moves up one box (a new item lands in box 2) and comes back after
//!   that box's interval ([`INTERVAL_DAYS`]: 1, 2, 4, 8 and 16 days);
//! - answered partly (an acceptable answer), it moves down one box, at least to box 1, and
//!   comes back after that box's interval;
//! - missed, it goes back to box 1 and is due again the same day;
//! - an item is due on and after its due day; the due list puts the longest overdue first,
//!   then the lower box, then the item's key.

use crate::sizing;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema this build writes.
pub const SCHEMA_VERSION: u32 = 3;

/// Leitner boxes, numbered 1 to `BOXES`.
pub const BOXES: u8 = 5;

/// Days until an item in box `n` comes back (index `n - 1`).
pub const INTERVAL_DAYS: [i64; BOXES as usize] = [1, 2, 4, 8, 16];

/// Milliseconds in a day, for turning a clock reading into a day number.
pub const MS_PER_DAY: f64 = 86_400_000.0;

/// Today's day number (days since 1970-01-01 UTC) from a clock reading in milliseconds.
pub fn day_from_ms(ms: f64) -> i64 {
    (ms / MS_PER_DAY).floor() as i64
}

/// A day number as a calendar date, `YYYY-MM-DD` (proleptic Gregorian, UTC), by Howard
/// Hinnant's days-to-civil algorithm.
pub fn date(day: i64) -> String {
    let z = day + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// What the learner has done so far (schema [`SCHEMA_VERSION`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Progress {
    /// Always [`SCHEMA_VERSION`] once read.
    pub schema: u32,
    /// Ids of the parts visited or completed, e.g. `lesson`, `size/fleet`, `moments/routing`.
    pub done: Vec<String>,
    /// Drill attempts, oldest first.
    pub drills: Vec<DrillResult>,
    /// The inputs last used in each calculator, as its query string (question id to query).
    pub inputs: BTreeMap<String, String>,
    /// Estimates committed in the lesson before the answer was shown.
    pub estimates: Vec<EstimateRecord>,
    /// Answers given to interview moments, oldest first.
    pub moments: Vec<MomentAttempt>,
    /// Mock interviews finished, oldest first.
    pub mocks: Vec<MockRecord>,
    /// The spaced-repetition schedule, by item key (see [`Item`]).
    pub schedule: BTreeMap<String, Card>,
    /// Recall prompts answered and graded by the learner, oldest first (schema 3).
    pub recalls: Vec<RecallAttempt>,
}

/// One recall prompt answered, as the learner graded it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecallAttempt {
    /// The prompt's id (`content/recall.toml`).
    pub prompt: String,
    /// `right`, `partly` or `missed`.
    pub outcome: String,
    pub day: i64,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            schema: SCHEMA_VERSION,
            done: Vec::new(),
            drills: Vec::new(),
            inputs: BTreeMap::new(),
            estimates: Vec::new(),
            moments: Vec::new(),
            mocks: Vec::new(),
            schedule: BTreeMap::new(),
            recalls: Vec::new(),
        }
    }
}

/// One drill attempt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DrillResult {
    pub question: String,
    pub step: String,
    /// Whether the estimate was within the band.
    pub correct: bool,
    /// The day it was answered (absent in data migrated from schema 1).
    #[serde(default)]
    pub day: Option<i64>,
}

/// One answer to an interview moment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MomentAttempt {
    pub moment: String,
    pub option: String,
    /// `weak`, `acceptable` or `strong`.
    pub grade: String,
    /// The learner's estimate, where the moment asks for one.
    #[serde(default)]
    pub estimate: Option<f64>,
    #[serde(default)]
    pub day: Option<i64>,
}

/// One estimate, with the derived figure it was compared with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EstimateRecord {
    pub question: String,
    pub step: String,
    pub estimate: f64,
    pub derived: f64,
}

/// A finished mock interview.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MockRecord {
    pub day: i64,
    /// `practice` (hints, no clock) or `mock` (timed).
    pub mode: String,
    /// Whether a second person played the interviewer.
    pub interviewer: bool,
    /// The clock's length and the time used, seconds (0 in practice mode).
    pub limit_s: f64,
    pub used_s: f64,
    /// The learner's notes, by prompt id.
    pub notes: BTreeMap<String, String>,
    /// The curveball drawn and the graded answer to it.
    pub pushback: Option<PushbackRecord>,
    /// The self-assessment, by rubric line id: `shown`, `partly` or `missed`.
    pub assessment: BTreeMap<String, String>,
    /// The figures checked at the sizing stage (scheduled when they were checked).
    pub figures: Vec<FigureRecord>,
    /// Seconds spent on each stage against the clock, by stage id (empty in practice mode and
    /// in records saved before the plan).
    pub stage_s: BTreeMap<String, f64>,
    /// The questions that change the design, by id: whether the clarifying notes asked each
    /// (empty in records saved before the checklist).
    pub requirements: BTreeMap<String, bool>,
    /// The level the candidate read each stage at (`mid`, `senior`, `staff`), by stage id.
    pub levels: BTreeMap<String, String>,
}

/// A figure the candidate typed in a mock, checked against a step of the fleet question.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FigureRecord {
    /// The step's id (the fleet question's).
    pub id: String,
    /// As typed.
    pub typed: String,
    /// As read, in `unit`.
    pub value: f64,
    /// The derived value, in `unit`.
    pub expected: f64,
    /// The unit it was typed in.
    pub unit: String,
    /// The tolerance as it was stated, e.g. `within 15 %`.
    pub tolerance: String,
    /// Whether it was within the tolerance.
    pub right: bool,
}

/// An answer to a curveball, as the simulator graded it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PushbackRecord {
    pub curveball: String,
    /// What the candidate answered (a replica count or an option id), as text.
    pub answer: String,
    /// `weak`, `acceptable` or `strong`.
    pub grade: String,
    /// The interviewer's sentence with the run's figures.
    pub summary: String,
}

/// An item's place in the schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Card {
    /// Leitner box, 1 to [`BOXES`].
    #[serde(rename = "box")]
    pub box_: u8,
    /// The day it is due next.
    pub due: i64,
    /// The day it was last answered.
    pub last: i64,
    pub reviews: u32,
    /// Times it was missed.
    pub lapses: u32,
}

/// How an answer went, for the schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Missed,
    Partly,
    Right,
}

impl Outcome {
    /// From a moment's or a curveball's grade (`weak`, `acceptable`, `strong`).
    pub fn from_grade(grade: &str) -> Outcome {
        match grade {
            "strong" => Outcome::Right,
            "acceptable" => Outcome::Partly,
            _ => Outcome::Missed,
        }
    }
}

/// Something the schedule brings back, parsed from its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// `drill:<question>/<step>`: a drill on one step of a sizing question.
    Drill { question: String, step: String },
    /// `moment:<id>`: an interview moment.
    Moment(String),
    /// `curveball:<id>`: a mock interview's curveball.
    Curveball(String),
    /// `step:<question>/<step>`: one step of a sizing question, as a figure said in a mock.
    Step { question: String, step: String },
    /// `recall:<id>`: a recall prompt (`crate::recall`).
    Recall(String),
}

impl Item {
    pub fn key(&self) -> String {
        match self {
            Item::Drill { question, step } => format!("drill:{question}/{step}"),
            Item::Moment(id) => format!("moment:{id}"),
            Item::Curveball(id) => format!("curveball:{id}"),
            Item::Step { question, step } => format!("step:{question}/{step}"),
            Item::Recall(id) => format!("recall:{id}"),
        }
    }

    pub fn parse(key: &str) -> Option<Item> {
        let (kind, rest) = key.split_once(':')?;
        match kind {
            "drill" => {
                let (q, s) = rest.split_once('/')?;
                Some(Item::Drill {
                    question: q.to_string(),
                    step: s.to_string(),
                })
            }
            "moment" => Some(Item::Moment(rest.to_string())),
            "curveball" => Some(Item::Curveball(rest.to_string())),
            "recall" => Some(Item::Recall(rest.to_string())),
            "step" => {
                let (q, s) = rest.split_once('/')?;
                Some(Item::Step {
                    question: q.to_string(),
                    step: s.to_string(),
                })
            }
            _ => None,
        }
    }

    /// Whether this build can practise the item: a recall prompt must still be in
    /// `content/recall.toml` (a learner's schedule outlives a prompt the course dropped).
    pub fn ships(&self) -> bool {
        match self {
            Item::Recall(id) => crate::recall::prompt(id).is_some(),
            _ => true,
        }
    }

    /// The app path that practises the item (relative to the base, no leading slash): a
    /// drill opens its question at the drill (`#drill-h`), a step its question with the steps
    /// up to it revealed, at that step.
    pub fn path(&self) -> String {
        match self {
            Item::Drill { question, .. } => format!("size/{question}#drill-h"),
            Item::Moment(id) => format!("moments/{id}"),
            Item::Curveball(id) => format!("mock?curveball={id}"),
            // Where the prompt is set: its lesson section, calculator or build-up.
            Item::Recall(id) => {
                crate::recall::prompt(id).map_or_else(|| "lesson".to_string(), |p| p.place.clone())
            }
            Item::Step { question, step } => {
                use crate::sizing::{derive, Inputs, Question};
                let shown = Question::from_id(question).and_then(|q| {
                    let d = derive(q, &Inputs::defaults(q)).ok()?;
                    let i = d.steps.iter().position(|s| s.id == step)?;
                    Some(if i + 1 >= d.steps.len() {
                        "all".to_string()
                    } else {
                        (i + 1).to_string()
                    })
                });
                format!(
                    "size/{question}?reveal={}#step-{step}",
                    shown.as_deref().unwrap_or("all")
                )
            }
        }
    }
}

impl Card {
    /// A card for an item answered for the first time on `day`: it starts in box 1, so a
    /// first right answer lands in box 2.
    fn first(outcome: Outcome, day: i64) -> Card {
        let mut c = Card {
            box_: 1,
            due: day,
            last: day,
            reviews: 0,
            lapses: 0,
        };
        c.review(outcome, day);
        c
    }

    /// Applies one answer given on `day` (see the module's rules).
    pub fn review(&mut self, outcome: Outcome, day: i64) {
        self.box_ = match outcome {
            Outcome::Right => (self.box_ + 1).min(BOXES),
            Outcome::Partly => self.box_.saturating_sub(1).max(1),
            Outcome::Missed => 1,
        };
        self.due = match outcome {
            Outcome::Missed => day,
            _ => day + interval(self.box_),
        };
        if outcome == Outcome::Missed {
            self.lapses += 1;
        }
        self.reviews += 1;
        self.last = day;
    }

    pub fn is_due(&self, today: i64) -> bool {
        self.due <= today
    }
}

/// Days until an item in `box_` comes back.
pub fn interval(box_: u8) -> i64 {
    INTERVAL_DAYS[(box_.clamp(1, BOXES) - 1) as usize]
}

/// One item due, for the home page.
#[derive(Clone, Debug, PartialEq)]
pub struct DueItem {
    pub key: String,
    pub item: Item,
    pub card: Card,
    /// Days past its due day (0: due today).
    pub overdue: i64,
}

impl Progress {
    /// Feeds one answer to the schedule.
    pub fn review(&mut self, item: &Item, outcome: Outcome, day: i64) {
        let key = item.key();
        match self.schedule.get_mut(&key) {
            Some(c) => c.review(outcome, day),
            None => {
                self.schedule.insert(key, Card::first(outcome, day));
            }
        }
    }

    /// Records a drill attempt and schedules its step.
    pub fn record_drill(&mut self, question: &str, step: &str, correct: bool, day: i64) {
        self.drills.push(DrillResult {
            question: question.to_string(),
            step: step.to_string(),
            correct,
            day: Some(day),
        });
        let outcome = if correct {
            Outcome::Right
        } else {
            Outcome::Missed
        };
        self.review(
            &Item::Drill {
                question: question.to_string(),
                step: step.to_string(),
            },
            outcome,
            day,
        );
    }

    /// Records an answer to a moment and schedules the moment.
    pub fn record_moment(&mut self, mut attempt: MomentAttempt, day: i64) {
        attempt.day = Some(day);
        let outcome = Outcome::from_grade(&attempt.grade);
        self.review(&Item::Moment(attempt.moment.clone()), outcome, day);
        self.moments.push(attempt);
    }

    /// Schedules a figure said in a mock by its check: one step of a sizing question, right or
    /// missed.
    pub fn record_figure(&mut self, question: &str, step: &str, right: bool, day: i64) {
        let outcome = if right {
            Outcome::Right
        } else {
            Outcome::Missed
        };
        self.review(
            &Item::Step {
                question: question.to_string(),
                step: step.to_string(),
            },
            outcome,
            day,
        );
    }

    /// Records a recall prompt as the learner graded it and schedules it.
    pub fn record_recall(&mut self, prompt: &str, outcome: Outcome, day: i64) {
        self.recalls.push(RecallAttempt {
            prompt: prompt.to_string(),
            outcome: match outcome {
                Outcome::Right => "right",
                Outcome::Partly => "partly",
                Outcome::Missed => "missed",
            }
            .to_string(),
            day,
        });
        self.review(&Item::Recall(prompt.to_string()), outcome, day);
    }

    /// Records a finished mock and schedules its curveball by the pushback's grade (its
    /// figures were scheduled as they were checked).
    pub fn record_mock(&mut self, mut mock: MockRecord, day: i64) {
        mock.day = day;
        if let Some(p) = &mock.pushback {
            let outcome = Outcome::from_grade(&p.grade);
            self.review(&Item::Curveball(p.curveball.clone()), outcome, day);
        }
        self.mocks.push(mock);
    }

    /// The items due on `today`: longest overdue first, then the lower box, then by key. (A
    /// recall prompt a later build no longer ships is listed too: [`Item::ships`] tells.)
    pub fn due(&self, today: i64) -> Vec<DueItem> {
        let mut out: Vec<DueItem> = self
            .schedule
            .iter()
            .filter(|(_, c)| c.is_due(today))
            .filter_map(|(k, c)| {
                Some(DueItem {
                    key: k.clone(),
                    item: Item::parse(k)?,
                    card: *c,
                    overdue: today - c.due,
                })
            })
            .collect();
        out.sort_by(|a, b| {
            b.overdue
                .cmp(&a.overdue)
                .then(a.card.box_.cmp(&b.card.box_))
                .then(a.key.cmp(&b.key))
        });
        out
    }

    /// The next day anything is due after `today` (None when nothing is scheduled later).
    pub fn next_due_after(&self, today: i64) -> Option<i64> {
        self.schedule
            .values()
            .map(|c| c.due)
            .filter(|d| *d > today)
            .min()
    }
}

/// Why stored progress was not used as it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unreadable {
    /// Not JSON, or not the shape its schema says.
    Corrupt,
    /// A schema this build has no migration for (older than any it knows, or newer).
    UnknownSchema(u64),
}

impl Unreadable {
    /// The sentence for the learner.
    pub fn notice(&self) -> String {
        match self {
            Unreadable::Corrupt => "Your saved progress could not be read, so this session starts fresh. The unreadable copy is kept aside in this browser; progress will be saved again as you go.".into(),
            Unreadable::UnknownSchema(v) => format!("Your saved progress was written by a version of the trainer this one cannot read (schema {v}), so this session starts fresh. The old copy is kept aside in this browser."),
        }
    }
}

/// Reads stored progress of any known schema, migrating it to the current one.
///
/// Schema 2 (before recall prompts) migrates by keeping every field and starting an empty
/// list of recall answers; its schedule's keys are all keys of schema 3.
///
/// Schema 1 (the app's first shape: `done`, `drills`, `inputs`, `estimates`, `moments`, no
/// `schema` field) migrates by keeping every field and replaying its drills and moments, in
/// order, into a schedule dated `today` (schema 1 recorded no dates), so what was missed is
/// due at once and what was right comes back after its interval.
pub fn read(text: &str, today: i64) -> Result<Progress, Unreadable> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|_| Unreadable::Corrupt)?;
    if !value.is_object() {
        return Err(Unreadable::Corrupt);
    }
    let schema = match value.get("schema") {
        None => 1,
        Some(v) => v.as_u64().ok_or(Unreadable::Corrupt)?,
    };
    match schema {
        1 => migrate_v1(value, today),
        2 => migrate_v2(value),
        3 => {
            let p: Progress = serde_json::from_value(value).map_err(|_| Unreadable::Corrupt)?;
            p.check()?;
            Ok(p)
        }
        v => Err(Unreadable::UnknownSchema(v)),
    }
}

/// The shape schema 1 stored.
#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
#[derive(Default)]
struct V1 {
    done: Vec<String>,
    drills: Vec<V1Drill>,
    inputs: BTreeMap<String, String>,
    estimates: Vec<EstimateRecord>,
    moments: Vec<V1Moment>,
}

#[derive(Deserialize)]
struct V1Drill {
    question: String,
    step: String,
    correct: bool,
}

#[derive(Deserialize)]
struct V1Moment {
    moment: String,
    option: String,
    grade: String,
    #[serde(default)]
    estimate: Option<f64>,
}

/// Schema 2 is schema 3 without the recall answers: read as schema 3 (the list starts empty).
fn migrate_v2(value: serde_json::Value) -> Result<Progress, Unreadable> {
    // Schema 2 wrote no recall answer and no recall item: a file with either is not one this
    // app wrote.
    if value.get("recalls").is_some() {
        return Err(Unreadable::Corrupt);
    }
    let mut p: Progress = serde_json::from_value(value).map_err(|_| Unreadable::Corrupt)?;
    if p.schedule.keys().any(|k| k.starts_with("recall:")) {
        return Err(Unreadable::Corrupt);
    }
    p.schema = SCHEMA_VERSION;
    p.check()?;
    Ok(p)
}

fn migrate_v1(value: serde_json::Value, today: i64) -> Result<Progress, Unreadable> {
    let v1: V1 = serde_json::from_value(value).map_err(|_| Unreadable::Corrupt)?;
    let mut p = Progress {
        done: v1.done,
        inputs: v1.inputs,
        estimates: v1.estimates,
        ..Progress::default()
    };
    for d in v1.drills {
        p.record_drill(&d.question, &d.step, d.correct, today);
        if let Some(last) = p.drills.last_mut() {
            last.day = None;
        }
    }
    for m in v1.moments {
        p.record_moment(
            MomentAttempt {
                moment: m.moment,
                option: m.option,
                grade: m.grade,
                estimate: m.estimate,
                day: None,
            },
            today,
        );
        if let Some(last) = p.moments.last_mut() {
            last.day = None;
        }
    }
    Ok(p)
}

impl Progress {
    /// Refuses a schedule that could not have been written by this schema.
    fn check(&self) -> Result<(), Unreadable> {
        let ok = self.schema == SCHEMA_VERSION
            && self
                .schedule
                .iter()
                .all(|(k, c)| Item::parse(k).is_some() && (1..=BOXES).contains(&c.box_));
        if ok {
            Ok(())
        } else {
            Err(Unreadable::Corrupt)
        }
    }

    /// The progress as the JSON the app stores and exports.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The same, indented, for an exported file.
    pub fn to_pretty_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

impl Progress {
    /// Resets every stored calculator input its question cannot use (a value that is not one,
    /// or out of range) to the question's own, keeps the others, and forgets the inputs of a
    /// question that does not exist. Returns what was dropped, each as `question: field=value`
    /// (a long value clipped), for the notice that tells the learner.
    pub fn drop_bad_inputs(&mut self) -> Vec<String> {
        let clip = |s: &str| {
            let mut out: String = s.chars().take(40).collect();
            if s.chars().count() > 40 {
                out.push('…');
            }
            out
        };
        let mut dropped = Vec::new();
        let stored = std::mem::take(&mut self.inputs);
        for (id, query) in stored {
            let Some(q) = sizing::Question::from_id(&id) else {
                dropped.push(format!("{}: every input (no such question)", clip(&id)));
                continue;
            };
            let page = sizing::PageQuery::parse(q, &query);
            for e in &page.errors {
                let value = page.bad_text.get(&e.field).map_or("", String::as_str);
                dropped.push(format!("{id}: {}={}", e.field, clip(value)));
            }
            let kept = if page.errors.is_empty() {
                query
            } else {
                sizing::page_query(q, &page.inputs, sizing::Reveal::NONE, 0)
            };
            self.inputs.insert(id, kept);
        }
        dropped
    }
}

/// Reads an exported file for import: the same migrations as [`read`], but a file that cannot
/// be read is refused with a sentence for the learner and the current progress stays.
pub fn import(text: &str, today: i64) -> Result<Progress, String> {
    read(text, today).map_err(|e| match e {
        Unreadable::Corrupt => "That file is not a progress file this trainer wrote (it is not JSON of the right shape), so nothing was imported.".to_string(),
        Unreadable::UnknownSchema(v) => format!("That file was written under a progress schema this version cannot read (schema {v}), so nothing was imported."),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 20_000;

    fn drill(step: &str) -> Item {
        Item::Drill {
            question: "fleet".into(),
            step: step.into(),
        }
    }

    /// Answers one item a sequence of times, each on its due day, and returns the boxes and
    /// the gaps in days between answers.
    fn walk(outcomes: &[Outcome]) -> Vec<(u8, i64)> {
        let mut p = Progress::default();
        let item = drill("replicas");
        let mut day = DAY;
        let mut out = Vec::new();
        for o in outcomes {
            p.review(&item, *o, day);
            let c = p.schedule[&item.key()];
            out.push((c.box_, c.due - day));
            day = c.due;
        }
        out
    }

    #[test]
    fn right_answers_climb_the_boxes_and_come_back_later_each_time() {
        use Outcome::*;
        assert_eq!(
            walk(&[Right, Right, Right, Right, Right, Right]),
            vec![(2, 2), (3, 4), (4, 8), (5, 16), (5, 16), (5, 16)]
        );
    }

    #[test]
    fn a_miss_sends_an_item_back_to_box_one_due_the_same_day() {
        use Outcome::*;
        assert_eq!(
            walk(&[Right, Right, Right, Missed, Right]),
            vec![(2, 2), (3, 4), (4, 8), (1, 0), (2, 2)]
        );
        let mut p = Progress::default();
        p.record_drill("fleet", "replicas", false, DAY);
        assert_eq!(p.schedule["drill:fleet/replicas"].lapses, 1);
        assert_eq!(p.due(DAY).len(), 1);
    }

    #[test]
    fn a_partial_answer_drops_one_box_but_never_below_the_first() {
        use Outcome::*;
        assert_eq!(
            walk(&[Right, Right, Partly, Partly, Partly]),
            vec![(2, 2), (3, 4), (2, 2), (1, 1), (1, 1)]
        );
    }

    #[test]
    fn a_missed_item_returns_sooner_than_one_answered_right() {
        let mut p = Progress::default();
        p.record_drill("fleet", "replicas", true, DAY);
        p.record_drill("fleet", "decode_step", false, DAY);
        p.record_moment(
            MomentAttempt {
                moment: "routing".into(),
                option: "round-robin".into(),
                grade: "weak".into(),
                estimate: None,
                day: None,
            },
            DAY,
        );
        let keys = |d: i64| -> Vec<String> { p.due(d).into_iter().map(|i| i.key).collect() };
        assert_eq!(keys(DAY), vec!["drill:fleet/decode_step", "moment:routing"]);
        assert_eq!(
            keys(DAY + 1),
            vec!["drill:fleet/decode_step", "moment:routing"]
        );
        assert_eq!(
            keys(DAY + 2),
            vec![
                "drill:fleet/decode_step",
                "moment:routing",
                "drill:fleet/replicas"
            ]
        );
        assert_eq!(p.next_due_after(DAY), Some(DAY + 2));
    }

    #[test]
    fn the_longest_overdue_comes_first_then_the_lower_box() {
        let mut p = Progress::default();
        p.review(&drill("a"), Outcome::Right, DAY); // box 2, due DAY + 2
        p.review(&drill("b"), Outcome::Missed, DAY + 2); // box 1, due DAY + 2
        p.review(&drill("c"), Outcome::Missed, DAY); // box 1, due DAY
        let order: Vec<String> = p.due(DAY + 3).into_iter().map(|i| i.key).collect();
        assert_eq!(
            order,
            vec!["drill:fleet/c", "drill:fleet/b", "drill:fleet/a"]
        );
        assert_eq!(p.due(DAY + 3)[0].overdue, 3);
    }

    #[test]
    fn a_mock_schedules_its_curveball_by_the_pushback_grade() {
        let mut p = Progress::default();
        p.record_mock(
            MockRecord {
                pushback: Some(PushbackRecord {
                    curveball: "traffic-triples".into(),
                    answer: "12".into(),
                    grade: "weak".into(),
                    summary: String::new(),
                }),
                ..MockRecord::default()
            },
            DAY,
        );
        let due = p.due(DAY);
        assert_eq!(due[0].item, Item::Curveball("traffic-triples".into()));
        assert_eq!(due[0].item.path(), "mock?curveball=traffic-triples");
        assert_eq!(p.mocks[0].day, DAY);
    }

    #[test]
    fn a_figure_checked_in_a_mock_schedules_its_step_missed_today_right_later() {
        let mut p = Progress::default();
        p.record_figure("fleet", "cost_per_hour", false, DAY);
        p.record_figure("fleet", "replicas", true, DAY);
        let due = p.due(DAY);
        assert_eq!(due.len(), 1);
        let step = Item::Step {
            question: "fleet".into(),
            step: "cost_per_hour".into(),
        };
        assert_eq!(due[0].item, step);
        assert_eq!(due[0].key, "step:fleet/cost_per_hour");
        // The calculator, with the steps up to this one revealed, at this one.
        let d = crate::sizing::derive(
            crate::sizing::Question::Fleet,
            &crate::sizing::Inputs::defaults(crate::sizing::Question::Fleet),
        )
        .unwrap();
        let n = d
            .steps
            .iter()
            .position(|s| s.id == "cost_per_hour")
            .unwrap()
            + 1;
        assert_eq!(
            step.path(),
            format!("size/fleet?reveal={n}#step-cost_per_hour")
        );
        // A right figure climbs: box 2, back in two days; a second right one, box 3.
        let right = p.schedule["step:fleet/replicas"];
        assert_eq!((right.box_, right.due), (2, DAY + 2));
        p.record_figure("fleet", "replicas", true, DAY + 2);
        assert_eq!(p.schedule["step:fleet/replicas"].box_, 3);
        // The progress with figures reads back.
        assert_eq!(read(&p.to_json(), DAY), Ok(p.clone()));
    }

    #[test]
    fn item_keys_round_trip_and_name_where_to_practise() {
        for item in [
            drill("replicas"),
            Item::Moment("rag".into()),
            Item::Curveball("replica-fails".into()),
            Item::Step {
                question: "fleet".into(),
                step: "gpus".into(),
            },
        ] {
            assert_eq!(Item::parse(&item.key()), Some(item.clone()));
        }
        assert_eq!(drill("replicas").path(), "size/fleet#drill-h");
        assert_eq!(Item::Moment("rag".into()).path(), "moments/rag");
        assert_eq!(Item::parse("nonsense"), None);
        assert_eq!(Item::parse("drill:no-step"), None);
        assert_eq!(Item::parse("step:no-step"), None);
        // An unknown question still has a path, which shows every step.
        assert_eq!(
            Item::Step {
                question: "nope".into(),
                step: "x".into()
            }
            .path(),
            "size/nope?reveal=all#step-x"
        );
    }

    /// Schema 1 as the app stored it before schema 2 (copied from a browser's storage).
    const V1_TEXT: &str = r#"{"done":["lesson","size","size/fleet","moments/routing"],
        "drills":[{"question":"fleet","step":"replicas","correct":true},
                  {"question":"fleet","step":"decode_step","correct":false}],
        "inputs":{"fleet":"question=fleet&rate=60"},
        "estimates":[{"question":"fleet","step":"replicas","estimate":9.0,"derived":8.0}],
        "moments":[{"moment":"routing","option":"round-robin","grade":"weak","estimate":null}]}"#;

    #[test]
    fn schema_one_migrates_keeping_every_field_and_scheduling_its_answers() {
        let p = read(V1_TEXT, DAY).expect("v1 reads");
        assert_eq!(p.schema, SCHEMA_VERSION);
        assert_eq!(p.done.len(), 4);
        assert_eq!(p.drills.len(), 2);
        assert!(p.drills.iter().all(|d| d.day.is_none()));
        assert_eq!(p.inputs["fleet"], "question=fleet&rate=60");
        assert_eq!(p.estimates[0].estimate, 9.0);
        assert_eq!(p.moments[0].option, "round-robin");
        let due: Vec<String> = p.due(DAY).into_iter().map(|i| i.key).collect();
        assert_eq!(due, vec!["drill:fleet/decode_step", "moment:routing"]);
        assert_eq!(p.schedule["drill:fleet/replicas"].due, DAY + 2);
        // The migrated progress reads back as the current schema, unchanged.
        assert_eq!(read(&p.to_json(), DAY + 5), Ok(p.clone()));
        // An empty object is a fresh schema-1 start.
        assert_eq!(read("{}", DAY), Ok(Progress::default()));
    }

    #[test]
    fn schema_two_round_trips_through_export_and_import() {
        let mut p = read(V1_TEXT, DAY).unwrap();
        p.record_mock(
            MockRecord {
                mode: "mock".into(),
                limit_s: 2700.0,
                used_s: 1500.0,
                notes: [("opening".to_string(), "tokens first".to_string())].into(),
                assessment: [("load-numbers".to_string(), "shown".to_string())].into(),
                figures: vec![FigureRecord {
                    id: "replicas".into(),
                    typed: "9".into(),
                    value: 9.0,
                    expected: 8.0,
                    unit: "replicas".into(),
                    tolerance: "within 1 replica".into(),
                    right: true,
                }],
                ..MockRecord::default()
            },
            DAY + 1,
        );
        assert_eq!(import(&p.to_pretty_json(), DAY + 9), Ok(p));
    }

    /// Schema 2 as the app stored it before recall prompts (a drill, a moment, a mock and a
    /// figure scheduled).
    const V2_TEXT: &str = r#"{"schema":2,"done":["lesson","size/fleet"],"drills":[{"question":"fleet","step":"replicas","correct":false,"day":20001}],"inputs":{"fleet":"rate=80"},"estimates":[{"question":"fleet","step":"replicas","estimate":9.0,"derived":13.0}],"moments":[{"moment":"routing","option":"prefix","grade":"strong","estimate":null,"day":20001}],"mocks":[{"day":20002,"mode":"mock","interviewer":false,"limit_s":2700.0,"used_s":1800.0,"notes":{},"pushback":null,"assessment":{},"figures":[],"stage_s":{"requirements":300.0}}],"schedule":{"drill:fleet/replicas":{"box":1,"due":20001,"last":20001,"reviews":1,"lapses":1},"moment:routing":{"box":2,"due":20003,"last":20001,"reviews":1,"lapses":0},"step:fleet/open_streams":{"box":3,"due":20006,"last":20002,"reviews":2,"lapses":0}}}"#;

    #[test]
    fn schema_two_migrates_keeping_every_field_with_no_recall_yet() {
        let p = read(V2_TEXT, DAY).unwrap();
        assert_eq!(p.schema, 3);
        assert_eq!(p.done, ["lesson", "size/fleet"]);
        assert_eq!(p.inputs["fleet"], "rate=80");
        assert_eq!(p.drills.len(), 1);
        assert_eq!(p.moments[0].grade, "strong");
        assert_eq!(p.mocks[0].stage_s["requirements"], 300.0);
        assert_eq!(p.schedule.len(), 3);
        assert_eq!(p.schedule["step:fleet/open_streams"].box_, 3);
        assert!(p.recalls.is_empty());
        // Nothing is rescheduled: the same items are due on the same days.
        let keys = |p: &Progress, day| p.due(day).into_iter().map(|d| d.key).collect::<Vec<_>>();
        assert_eq!(keys(&p, 20_001), ["drill:fleet/replicas"]);
        assert_eq!(keys(&p, 20_003).len(), 2);
        // It is written back as schema 3 and reads back unchanged.
        assert!(p.to_json().contains(r#""schema":3"#));
        assert_eq!(read(&p.to_json(), DAY), Ok(p.clone()));
        // A schema-2 file with a recall item in it, or a field schema 2 never had, is not one
        // this app wrote.
        for bad in [
            V2_TEXT.replace("moment:routing", "recall:decode-reads"),
            V2_TEXT.replace(r#""done""#, r#""recalls":[],"done""#),
        ] {
            assert_eq!(read(&bad, DAY), Err(Unreadable::Corrupt), "{bad}");
        }
    }

    #[test]
    fn a_recall_prompt_is_scheduled_on_its_own_and_practised_where_it_is_set() {
        let mut p = Progress::default();
        p.record_recall("decode-reads", Outcome::Missed, DAY);
        p.record_recall("server-clock", Outcome::Right, DAY);
        p.record_recall("stutter", Outcome::Partly, DAY);
        assert_eq!(p.recalls.len(), 3);
        assert_eq!(p.recalls[0].outcome, "missed");
        // Missed: due today; right: box 2, back in two days; partly: box 1, tomorrow.
        let due: Vec<String> = p.due(DAY).into_iter().map(|d| d.key).collect();
        assert_eq!(due, ["recall:decode-reads"]);
        assert_eq!(p.schedule["recall:server-clock"].due, DAY + 2);
        assert_eq!(p.schedule["recall:stutter"].due, DAY + 1);
        // Each comes back at its own place.
        let item = Item::parse("recall:decode-reads").unwrap();
        assert_eq!(item, Item::Recall("decode-reads".into()));
        assert_eq!(item.path(), "lesson#answer");
        assert_eq!(Item::Recall("weight-floor".into()).path(), "size/roofline");
        // Round trip, and a prompt a later build dropped is kept but not brought back.
        assert_eq!(read(&p.to_json(), DAY), Ok(p.clone()));
        p.record_recall("gone-from-the-file", Outcome::Missed, DAY);
        let back = read(&p.to_json(), DAY).unwrap();
        assert!(back.schedule.contains_key("recall:gone-from-the-file"));
        let gone = back
            .due(DAY)
            .into_iter()
            .find(|d| d.key == "recall:gone-from-the-file");
        assert!(!gone.unwrap().item.ships());
        assert!(Item::Recall("decode-reads".into()).ships());
    }

    #[test]
    fn unreadable_or_unknown_data_is_refused_with_a_reason() {
        for bad in [
            "{not json",
            "[]",
            "42",
            "null",
            r#"{"schema":"two"}"#,
            r#"{"done":"lesson"}"#,
            r#"{"done":[],"surprise":1}"#,
            r#"{"schema":2,"schedule":{"drill:fleet/replicas":{"box":9,"due":1,"last":1,"reviews":1,"lapses":0}}}"#,
            r#"{"schema":2,"schedule":{"bogus":{"box":1,"due":1,"last":1,"reviews":1,"lapses":0}}}"#,
        ] {
            assert_eq!(read(bad, DAY), Err(Unreadable::Corrupt), "{bad}");
            assert!(import(bad, DAY).is_err(), "{bad}");
        }
        assert_eq!(
            read(r#"{"schema":7}"#, DAY),
            Err(Unreadable::UnknownSchema(7))
        );
        assert_eq!(
            read(r#"{"schema":0}"#, DAY),
            Err(Unreadable::UnknownSchema(0))
        );
        assert!(Unreadable::UnknownSchema(7).notice().contains("schema 7"));
    }

    #[test]
    fn days_are_counted_from_the_epoch_in_utc() {
        assert_eq!(day_from_ms(0.0), 0);
        assert_eq!(day_from_ms(MS_PER_DAY - 1.0), 0);
        assert_eq!(day_from_ms(MS_PER_DAY * 3.5), 3);
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(59), "1970-03-01");
        assert_eq!(date(11_016), "2000-02-29");
        assert_eq!(date(20_423), "2025-12-01");
        assert_eq!(date(-1), "1969-12-31");
    }

    #[test]
    fn stored_inputs_a_question_cannot_use_are_dropped_and_named() {
        let mut p = Progress::default();
        p.inputs
            .insert("fleet".into(), "rate=abc&output_tokens=300".into());
        p.inputs.insert("batch".into(), "rate=60".into());
        p.inputs.insert("gpu-hours".into(), "gpu=nope".into());
        p.inputs.insert("no-such".into(), "rate=60".into());
        let dropped = p.drop_bad_inputs();
        assert_eq!(
            dropped,
            [
                "fleet: rate=abc",
                "gpu-hours: gpu=nope",
                "no-such: every input (no such question)"
            ]
        );
        // The good values stay; the bad ones are the question's own again.
        assert_eq!(p.inputs["fleet"], "output_tokens=300");
        assert_eq!(p.inputs["batch"], "rate=60");
        assert_eq!(p.inputs["gpu-hours"], "");
        assert!(!p.inputs.contains_key("no-such"));
        // Nothing left to drop.
        assert!(p.drop_bad_inputs().is_empty());
    }
}
