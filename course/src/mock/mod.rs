//! The mock interview (`content/mock.toml`): the interviewer's sequence of prompts, the rubric,
//! the curveballs, and the grading of a curveball's answer by a simulator run.
//!
//! A curveball is one of two kinds. A `replicas` curveball changes the fleet question's load
//! (the rate times `rate_factor`) and takes `spare` replicas away; the candidate answers a
//! replica count, which runs through [`crate::sizing::fleet_config`] at the new rate with the
//! spares gone, and is graded by [`grade_replicas`]: weak if the SLO does not hold, strong if
//! it holds at no more replicas than the derivation gives, acceptable if it holds but costs
//! more. A `moment` curveball is an interview moment's options: every option runs, and the
//! chosen one is graded by [`grade_option`] with the moment's own computed grades
//! ([`Moment::grades`]): weak if it misses the moment's SLO, strong if it is the best of those
//! that hold it (ties shared), acceptable otherwise.
//!
//! At one prompt (`[figures]`, the sizing stage) the candidate types the figures they would
//! say: replicas, GPUs, cost, open streams, KV per token. Each names a step of the fleet
//! question's derivation at the mock's load ([`expected_figures`]) and is graded by
//! [`grade_figure`] against the tolerance the file gives it: right within it, missed outside
//! it; an entry that is not a positive number gets a message, never a grade.

use crate::moments::{Grade, Moment, OptionOutcome};
use crate::sizing::{
    derive, fleet_config, page_query, EntryUnit, Inputs, PageQuery, Question, Reveal, SimCheck,
    SimCheckConfig, Step,
};
use crate::study::{FigureRecord, PushbackRecord};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use trainer_engine::error::ConfigError;
use trainer_engine::fleet::FleetConfig;
use trainer_engine::format::{duration, int, money, num, percent, sig};

mod calibration;
mod curveball;
mod draft;
mod figures;
mod pace;
mod requirements;

pub use calibration::*;
pub use curveball::*;
pub use draft::*;
pub use figures::*;
pub use pace::*;
pub use requirements::*;

/// The shipped mock interview.
pub const BUILTIN: &str = trainer_engine::files::MOCK;

/// How long a curveball's check simulates, seconds of traffic (the browser runs it in slices).
pub const CHECK: SimCheckConfig = SimCheckConfig {
    duration_s: 40.0,
    ..SimCheckConfig::DEFAULT
};

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mock {
    /// The clock's default length, minutes.
    pub minutes: u32,
    /// The curveball's share of the plan, minutes (each prompt has its own).
    pub curveball_minutes: u32,
    /// What an answer to any curveball says at each level.
    pub curveball_levels: Levels,
    /// The words of the plan: the pace beside the clock, the nudge, the report's table.
    pub pace: PaceWords,
    /// What the setup page says first.
    pub intro: String,
    pub rubric: Vec<RubricLine>,
    #[serde(rename = "prompt")]
    pub prompts: Vec<Prompt>,
    #[serde(rename = "curveball")]
    pub curveballs: Vec<Curveball>,
    /// The figures typed at one prompt and checked against the fleet question.
    pub figures: Figures,
    /// The questions that change the design, graded against the clarifying notes.
    pub requirements: Requirements,
    /// The self-assessment's level calibration.
    pub calibration: CalibrationWords,
    pub verdicts: BTreeMap<String, String>,
}

/// One line of the rubric the candidate assesses themselves against.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RubricLine {
    pub id: String,
    /// `hire` or `strong`.
    pub level: String,
    pub text: String,
    /// The app path that trains it.
    pub train: String,
}

/// One step of the interviewer's sequence.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prompt {
    pub id: String,
    pub stage: String,
    /// The interviewer's words.
    pub ask: String,
    /// Shown in practice mode.
    pub hint: String,
    /// The points a strong answer makes (interviewer mode shows them).
    pub expect: Vec<String>,
    /// Rubric lines this prompt gives evidence for.
    pub rubric: Vec<String>,
    pub train: String,
    /// The stage's share of the plan, minutes (the shares add up to `minutes`).
    pub minutes: u32,
    /// What an answer at each level says here.
    pub levels: Levels,
}

/// Level calibration for one stage: what a mid-level, a senior and a staff candidate's answer
/// says there, as evidence an interviewer can observe.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Levels {
    pub mid: String,
    pub senior: String,
    pub staff: String,
}

impl Levels {
    /// Each level's name and its evidence, lowest first.
    pub fn each(&self) -> [(&'static str, &str); 3] {
        [
            ("mid", self.mid.as_str()),
            ("senior", self.senior.as_str()),
            ("staff", self.staff.as_str()),
        ]
    }
}

/// The words of the interview's plan.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PaceWords {
    /// Beside the clock: `{spent}` on this stage of `{budget}`.
    pub label: String,
    /// When the stage has run past its share.
    pub over: String,
    pub report_title: String,
    pub report_intro: String,
    pub col_stage: String,
    pub col_plan: String,
    pub col_spent: String,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Curveball {
    pub id: String,
    pub title: String,
    pub ask: String,
    pub hint: String,
    /// `replicas` or `moment`.
    pub kind: String,
    #[serde(default)]
    pub rate_factor: Option<f64>,
    #[serde(default)]
    pub spare: Option<u32>,
    /// For a `moment` curveball about cost: the fraction finance takes off the bill of the
    /// fleet the arithmetic sizes (the moment's key figure must be a bill an hour).
    #[serde(default)]
    pub cost_cut: Option<f64>,
    /// For a `moment` curveball: the moment whose options are the answers.
    #[serde(default)]
    pub moment: Option<String>,
    pub train: String,
    /// The lab, set up for this curveball.
    pub lab: String,
}

/// A graded answer to a curveball.
#[derive(Clone, Debug, PartialEq)]
pub struct Pushback {
    pub grade: Grade,
    /// Whether the SLO held in the run.
    pub holds: bool,
    /// The interviewer's sentence, with the run's figures.
    pub summary: String,
}

/// The shipped mock interview, checked.
pub fn mock() -> Result<Mock, ConfigError> {
    parse(BUILTIN)
}

/// Reads a mock file and checks it hangs together.
pub fn parse(text: &str) -> Result<Mock, ConfigError> {
    let mut m: Mock = trainer_engine::files::read(text).map_err(|e| ConfigError::new("mock", e))?;
    m.check()?;
    m.fill_words()?;
    Ok(m)
}

impl Mock {
    /// Fills the figures of the interviewer's words: in a prompt, `{input NAME}` is an input
    /// of the mock's load (`[figures] inputs`) as the calculator shows it; in a curveball,
    /// `{rate_factor}` is its own factor on the traffic. (The grading's sentences keep their
    /// placeholders, which the page fills from the run.)
    fn fill_words(&mut self) -> Result<(), ConfigError> {
        let load = self.figures.load()?;
        let fill = |at: &str, t: &mut String, resolve: &dyn Fn(&str) -> Result<String, String>| {
            crate::text::fill(t, resolve)
                .map(|f| *t = f)
                .map_err(|e| ConfigError::new(format!("mock {at}"), e.join("; ")))
        };
        let input = |inside: &str| match inside.split_once(' ') {
            Some(("input", name)) => load
                .shown(Question::Fleet, name.trim())
                .ok_or_else(|| format!("the fleet question has no input {name:?}")),
            _ => Err("a prompt's words take {input NAME}".to_string()),
        };
        for p in &mut self.prompts {
            fill(&p.id, &mut p.ask, &input)?;
            fill(&p.id, &mut p.hint, &input)?;
            for e in &mut p.expect {
                fill(&p.id, e, &input)?;
            }
        }
        for c in &mut self.curveballs {
            let (factor, cut) = (c.rate_factor, c.cost_cut);
            let own = move |inside: &str| match (inside, factor, cut) {
                ("rate_factor", Some(f), _) => Ok(trainer_engine::format::num(f)),
                ("cost_cut", _, Some(c)) => {
                    Ok(format!("{} %", trainer_engine::format::num(c * 100.0)))
                }
                _ => Err(
                    "a curveball's words take {rate_factor} and {cost_cut} (when it has them)"
                        .to_string(),
                ),
            };
            fill(&c.id, &mut c.title, &own)?;
            fill(&c.id, &mut c.ask, &own)?;
            fill(&c.id, &mut c.hint, &own)?;
        }
        Ok(())
    }

    fn check(&self) -> Result<(), ConfigError> {
        let err = |field: &str, msg: String| Err(ConfigError::new(format!("mock {field}"), msg));
        if !(1..=180).contains(&self.minutes) {
            return err("minutes", format!("must be 1 to 180, got {}", self.minutes));
        }
        if self.intro.trim().is_empty() {
            return err("intro", "is empty".into());
        }
        self.check_plan()?;
        let levels = self
            .prompts
            .iter()
            .map(|p| (p.id.as_str(), &p.levels))
            .chain([("curveball_levels", &self.curveball_levels)]);
        for (id, l) in levels {
            if let Some((name, _)) = l.each().into_iter().find(|(_, t)| t.trim().is_empty()) {
                return err(id, format!("says nothing for the {name} level"));
            }
        }
        for r in &self.rubric {
            if !matches!(r.level.as_str(), "hire" | "strong") {
                return err(
                    &r.id,
                    format!("level must be hire or strong, got {}", r.level),
                );
            }
        }
        for p in &self.prompts {
            if let Some(bad) = p.rubric.iter().find(|r| self.line(r).is_none()) {
                return err(&p.id, format!("names no rubric line called {bad}"));
            }
            if p.expect.is_empty() {
                return err(&p.id, "lists no expected points".into());
            }
        }
        for c in &self.curveballs {
            match c.kind.as_str() {
                "replicas" => {
                    if !c.rate_factor.is_some_and(|f| f > 0.0 && f <= 10.0) || c.spare.is_none() {
                        return err(
                            &c.id,
                            "a replicas curveball needs rate_factor (0 to 10) and spare".into(),
                        );
                    }
                }
                "moment" => {
                    let Some(id) = &c.moment else {
                        return err(&c.id, "a moment curveball needs moment".into());
                    };
                    let moment = crate::moments::moment(id)?;
                    if let Some(cut) = c.cost_cut {
                        if !(cut > 0.0 && cut < 1.0) {
                            return err(&c.id, format!("cost_cut is a fraction, not {cut}"));
                        }
                        let bill = moment.figure_index(&moment.key).map(|i| &moment.figures[i]);
                        if !bill
                            .is_some_and(|f| f.unit == "dollars" && f.path == "dollars_per_hour")
                        {
                            return err(
                                &c.id,
                                "a cost_cut curveball's moment is keyed on dollars_per_hour".into(),
                            );
                        }
                    }
                }
                k => return err(&c.id, format!("kind must be replicas or moment, got {k}")),
            }
        }
        let req = &self.requirements;
        if self.prompts.iter().all(|p| p.id != req.prompt) {
            return err(
                "requirements",
                format!("names no prompt called {}", req.prompt),
            );
        }
        req.check().or_else(|e| err("requirements", e))?;
        let f = &self.figures;
        if self.prompts.iter().all(|p| p.id != f.prompt) {
            return err("figures", format!("names no prompt called {}", f.prompt));
        }
        if f.list.is_empty() {
            return err("figures", "lists no figure".into());
        }
        for (i, spec) in f.list.iter().enumerate() {
            if f.list[..i].iter().any(|o| o.id == spec.id) {
                return err("figures", format!("lists {} twice", spec.id));
            }
        }
        expected_figures(self, &f.load()?)?;
        for key in VERDICTS {
            if !self.verdicts.contains_key(key) {
                return err("verdicts", format!("has no {key}"));
            }
        }
        Ok(())
    }

    pub fn line(&self, id: &str) -> Option<&RubricLine> {
        self.rubric.iter().find(|r| r.id == id)
    }

    pub fn curveball(&self, id: &str) -> Option<&Curveball> {
        self.curveballs.iter().find(|c| c.id == id)
    }

    /// The prompts that give evidence for rubric line `id`.
    pub fn prompts_for(&self, id: &str) -> Vec<&Prompt> {
        self.prompts
            .iter()
            .filter(|p| p.rubric.iter().any(|r| r == id))
            .collect()
    }

    fn say(&self, key: &str, fill: &[(&str, String)]) -> String {
        let mut s = self.verdicts.get(key).cloned().unwrap_or_default();
        for (name, value) in fill {
            s = s.replace(&format!("{{{name}}}"), value);
        }
        s
    }
}

const VERDICTS: [&str; 14] = [
    "no_replica",
    "replicas_weak",
    "replicas_weak_none_lost",
    "replicas_strong",
    "replicas_acceptable",
    "moment_weak",
    "moment_weak_on_key",
    "moment_strong",
    "moment_acceptable",
    "moment_weak_behind",
    "moment_no_key",
    "moment_over_budget",
    "budget_met",
    "budget_missed",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn draft() -> (Mock, MockDraft) {
        let m = mock().unwrap();
        let d = MockDraft {
            timed: true,
            interviewer: false,
            curveball: m.curveballs[0].id.clone(),
            assessing: false,
            time_up: false,
            stage: 2,
            limit_s: 2_700.0,
            remaining_s: 1_234.5,
            notes: [(
                m.prompts[0].id.clone(),
                "fifty requests a second".to_string(),
            )]
            .into(),
            assessment: BTreeMap::new(),
            pushback: None,
            figures: [("replicas".to_string(), "9".to_string())].into(),
            marks: vec![FigureRecord {
                id: "replicas".into(),
                typed: "9".into(),
                value: 9.0,
                expected: 8.0,
                unit: "replicas".into(),
                tolerance: "within 1 replica".into(),
                right: true,
            }],
            spent_s: [("opening".to_string(), 150.0)].into(),
            levels: [
                ("opening".to_string(), "senior".to_string()),
                ("curveball".to_string(), "staff".to_string()),
            ]
            .into(),
        };
        (m, d)
    }

    #[test]
    fn a_draft_reads_back_as_saved() {
        let (m, d) = draft();
        assert_eq!(MockDraft::read(&d.to_json(), &m).unwrap(), d);
    }

    #[test]
    fn a_bad_draft_is_refused_with_its_reason_and_stale_entries_are_dropped() {
        let (m, d) = draft();
        assert!(MockDraft::read("{not json", &m)
            .unwrap_err()
            .contains("not readable"));
        let bad = |f: &dyn Fn(&mut MockDraft)| {
            let mut x = d.clone();
            f(&mut x);
            MockDraft::read(&x.to_json(), &m).unwrap_err()
        };
        assert!(bad(&|x| x.curveball = "nope".into()).contains("curveball"));
        assert!(bad(&|x| x.stage = 99).contains("stage"));
        assert!(bad(&|x| x.remaining_s = -1.0).contains("clock"));
        assert!(bad(&|x| x.remaining_s = 1e9).contains("clock"));
        assert!(bad(&|x| x.timed = false).contains("clock"));
        let mut x = d.clone();
        x.notes
            .insert("gone".into(), "a stage since removed".into());
        x.assessment.insert(m.rubric[0].id.clone(), "shown".into());
        x.assessment
            .insert(m.rubric[1].id.clone(), "brilliant".into());
        x.assessment.insert("gone".into(), "shown".into());
        x.spent_s.insert("sizing".into(), 120.0);
        x.spent_s.insert("gone".into(), 60.0);
        x.spent_s.insert("path".into(), -5.0);
        x.spent_s.insert("clocks".into(), x.limit_s + 1.0);
        x.levels.insert("gone".into(), "senior".into());
        x.levels.insert("sizing".into(), "guru".into());
        let r = MockDraft::read(&x.to_json(), &m).unwrap();
        // A level for a stage gone, or a level the mock does not offer, is dropped.
        assert_eq!(r.levels, d.levels);
        assert_eq!(r.notes, d.notes);
        assert_eq!(r.assessment.len(), 1);
        assert_eq!(r.assessment[&m.rubric[0].id], "shown");
        // Time on a stage: kept when real, dropped for a stage gone or a time no clock gives.
        let mut kept = d.spent_s.clone();
        kept.insert("sizing".into(), 120.0);
        assert_eq!(r.spent_s, kept);
    }

    /// The seed's figures, as the mock expects them.
    fn seed_figures() -> (Mock, Vec<ExpectedFigure>) {
        let m = mock().unwrap();
        let load = m.figures.load().unwrap();
        assert_eq!(
            load,
            Inputs::defaults(Question::Fleet),
            "the mock's load is the seed's"
        );
        let e = expected_figures(&m, &load).unwrap();
        (m, e)
    }

    fn figure<'a>(e: &'a [ExpectedFigure], id: &str) -> &'a ExpectedFigure {
        e.iter().find(|f| f.id == id).expect(id)
    }

    #[test]
    fn the_figures_are_the_fleet_derivations_steps_with_their_stated_tolerance() {
        let (_, e) = seed_figures();
        let ids: Vec<&str> = e.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "replicas",
                "gpus",
                "cost_per_hour",
                "cost_per_million",
                "open_streams",
                "kv_per_token"
            ]
        );
        let d = derive(Question::Fleet, &Inputs::defaults(Question::Fleet)).unwrap();
        for f in &e {
            let step = d.step(&f.id).unwrap();
            assert_eq!(&f.step, step);
            assert!(
                (f.value - step.value * f.unit.factor).abs() < 1e-12,
                "{}",
                f.id
            );
            let n = d.steps.iter().position(|s| s.id == f.id).unwrap() + 1;
            assert_eq!(f.link, format!("/size/fleet?reveal={n}#step-{}", f.id));
        }
        // The seed's reference figures: eight replicas of one H100 at $2.50 an hour.
        assert_eq!(figure(&e, "replicas").value, 8.0);
        assert_eq!(figure(&e, "gpus").value, 8.0);
        assert_eq!(figure(&e, "cost_per_hour").value, 20.0);
        // Llama 3.1 8B's KV: 32 layers × 8 KV heads × 128 dims × K and V × 2 bytes, in KB.
        assert_eq!(figure(&e, "kv_per_token").unit.label, "KB");
        assert!((figure(&e, "kv_per_token").value - 131.072).abs() < 1e-9);
        let stated: Vec<&str> = e.iter().map(|f| f.tolerance_text.as_str()).collect();
        assert_eq!(
            stated,
            [
                "within 1 replica",
                "within 1 GPU",
                "within 15 %",
                "within 25 %",
                "within 15 %",
                "within 10 %"
            ]
        );
        assert_eq!(figure(&e, "cost_per_hour").show(20.0), "$20/h");
        assert_eq!(figure(&e, "replicas").show(8.0), "8 replicas");
    }

    #[test]
    fn a_figure_is_right_within_its_tolerance_edges_included_and_missed_beyond() {
        let (m, e) = seed_figures();
        let grade = |id: &str, text: &str| grade_figure(&m, figure(&e, id), text).unwrap().right;
        // Within one replica of eight: seven to nine.
        for (text, right) in [
            ("8", true),
            ("7", true),
            ("9", true),
            ("6", false),
            ("10", false),
            ("9.5", false),
        ] {
            assert_eq!(grade("replicas", text), right, "replicas {text}");
        }
        // Within 15 % of $20 an hour: $17 to $23.
        for (text, right) in [
            ("20", true),
            ("$17", true),
            ("23", true),
            ("16.99", false),
            ("23.01", false),
        ] {
            assert_eq!(grade("cost_per_hour", text), right, "cost {text}");
        }
        // The edges of the relative tolerance follow the derived value, whatever it is.
        let streams = figure(&e, "open_streams");
        let (lo, hi) = (streams.value * 0.85, streams.value * 1.15);
        for (v, right) in [
            (lo, true),
            (hi, true),
            (lo * 0.999, false),
            (hi * 1.001, false),
        ] {
            assert_eq!(grade("open_streams", &format!("{v}")), right, "streams {v}");
        }
        let r = grade_figure(&m, streams, " 1,000 ").unwrap();
        assert_eq!((r.value, r.typed.as_str()), (1000.0, "1,000"));
        assert_eq!(r.expected, streams.value);
        // Exact: zero tolerance takes the value and nothing else.
        assert!(Tolerance::Absolute(0.0).holds(8.0, 8.0));
        assert!(!Tolerance::Absolute(0.0).holds(8.01, 8.0));
        assert!(!Tolerance::Relative(0.5).holds(f64::NAN, 8.0));
    }

    #[test]
    fn a_bad_entry_gets_a_message_not_a_grade() {
        let (m, e) = seed_figures();
        let f = figure(&e, "replicas");
        for (text, says) in [
            ("", "Type a figure"),
            ("   ", "Type a figure"),
            ("abc", "“abc” is not a number"),
            ("8 replicas", "is not a number"),
            ("inf", "is not a number"),
            ("NaN", "is not a number"),
            ("-3", "Replicas must be a positive number"),
            ("0", "Replicas must be a positive number"),
        ] {
            let why = grade_figure(&m, f, text).unwrap_err();
            assert!(why.contains(says), "{text:?}: {why}");
        }
        assert_eq!(read_entry("-3"), Err(EntryError::NotPositive));
        assert_eq!(read_entry("1_000"), Ok(1000.0));
    }

    #[test]
    fn the_marks_sum_up_in_a_sentence_naming_the_misses() {
        let (m, e) = seed_figures();
        let marks: Vec<FigureRecord> = [("replicas", "8"), ("gpus", "30"), ("open_streams", "1")]
            .into_iter()
            .map(|(id, t)| grade_figure(&m, figure(&e, id), t).unwrap())
            .collect();
        assert_eq!(
            m.figures.summary(&marks).unwrap(),
            "1 of 3 figures within their tolerance; missed: GPUs, Open streams."
        );
        assert_eq!(
            m.figures.summary(&marks[..1]).unwrap(),
            "1 of 1 figures within their tolerance."
        );
        assert_eq!(m.figures.summary(&[]), None);
        assert_eq!(
            m.figures.graded(&marks[1]),
            "You said 30 GPUs; the arithmetic gives 8 GPUs (within 1 GPU)."
        );
    }

    #[test]
    fn a_draft_keeps_its_figures_and_drops_unknown_ones_with_the_reason() {
        let (m, d) = draft();
        let mut x = d.clone();
        x.figures.insert("gone".into(), "12".into());
        x.marks.push(FigureRecord {
            id: "bogus".into(),
            value: 1.0,
            ..FigureRecord::default()
        });
        x.marks.push(d.marks[0].clone());
        // (JSON holds no NaN: a mark that reads back must be a number, but not a negative one.)
        x.marks.push(FigureRecord {
            id: "gpus".into(),
            value: -1.0,
            ..FigureRecord::default()
        });
        let (r, why) = MockDraft::resume(&x.to_json(), &m).unwrap();
        assert_eq!(r.figures, d.figures);
        assert_eq!(r.marks, d.marks);
        assert_eq!(why.len(), 4, "{why:?}");
        assert!(
            why[0].contains("\"gone\" is not one this mock asks for"),
            "{why:?}"
        );
        assert!(why.iter().any(|w| w.contains("\"bogus\"")), "{why:?}");
        assert!(why.iter().any(|w| w.contains("checked twice")), "{why:?}");
        assert!(
            why.iter().any(|w| w.contains("does not hold numbers")),
            "{why:?}"
        );
        // A draft saved before figures existed still reads.
        let old = r#"{"timed":false,"curveball":"traffic-triples","stage":1}"#;
        let (o, why) = MockDraft::resume(old, &m).unwrap();
        assert!(o.figures.is_empty() && o.marks.is_empty() && why.is_empty());
    }

    #[test]
    fn a_figures_section_that_does_not_hang_together_is_refused() {
        let good = BUILTIN.to_string();
        for (from, to) in [
            ("prompt = \"sizing\"", "prompt = \"nowhere\""),
            ("inputs = \"\"", "inputs = \"rate=abc\""),
            ("id = \"gpus\"", "id = \"no_such_step\""),
            ("id = \"gpus\"", "id = \"replicas\""),
            ("relative = 0.15", "relative = 1.5"),
            ("relative = 0.15", "relative = -0.1"),
            ("absolute = 1.0", "absolute = 1.0\nrelative = 0.1"),
            ("unit = \"KB\"", "unit = \"furlongs\""),
        ] {
            assert!(good.contains(from), "{from}");
            assert!(parse(&good.replacen(from, to, 1)).is_err(), "{to}");
        }
    }
    use trainer_engine::fleet::FleetSim;

    fn run(fleet: &FleetConfig) -> SimCheck {
        let mut sim = FleetSim::new(fleet.clone()).expect("sim");
        sim.run();
        SimCheck::from_report(fleet, &sim.report())
    }

    /// Runs an answer to a replicas curveball and grades it.
    fn answer(id: &str, n: u32) -> Pushback {
        let m = mock().expect("mock");
        let c = m.curveball(id).expect(id).clone();
        let base = Inputs::defaults(Question::Fleet);
        let check = replicas_fleet(&c, &base, n)
            .expect("fleet")
            .map(|f| run(&f));
        grade_replicas(&m, &c, &base, n, check.as_ref()).expect("grade")
    }

    #[test]
    fn the_shipped_mock_reads_and_every_curveball_is_set_up() {
        let m = mock().expect("mock");
        assert_eq!(m.minutes, 45);
        let ids: Vec<&str> = m.prompts.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(
            ids,
            ["opening", "clarify", "sizing", "path", "clocks", "probes"]
        );
        // Every rubric line has a prompt or the curveball that gives evidence for it.
        for r in &m.rubric {
            assert!(
                r.id == "pushback" || !m.prompts_for(&r.id).is_empty(),
                "{}",
                r.id
            );
        }
        let base = Inputs::defaults(Question::Fleet);
        let triple = m.curveball("traffic-triples").unwrap();
        // Three times the seed's replica-seconds per second at the same ceiling.
        assert_eq!(reference_replicas(triple, &base).unwrap(), 23);
        let fails = m.curveball("replica-fails").unwrap();
        assert_eq!(reference_replicas(fails, &base).unwrap(), 9);
    }

    #[test]
    fn a_file_that_does_not_hang_together_is_refused() {
        let good = BUILTIN.to_string();
        for (from, to) in [
            ("minutes = 45", "minutes = 0"),
            ("rubric = [\"load-tokens\"]", "rubric = [\"nowhere\"]"),
            (
                "kind = \"moment\"\nmoment = \"autoscaler\"",
                "kind = \"moment\"\nmoment = \"nope\"",
            ),
            (
                "kind = \"replicas\"\nrate_factor = 3.0",
                "kind = \"dice\"\nrate_factor = 3.0",
            ),
            ("no_replica =", "no_replicas ="),
        ] {
            assert!(good.contains(from), "{from}");
            assert!(parse(&good.replacen(from, to, 1)).is_err(), "{to}");
        }
    }

    #[test]
    fn too_few_replicas_after_traffic_triples_miss_the_slo_and_grade_weak() {
        // The simulated replicas batch far deeper than the estimate's 32, so the failure point
        // sits well under the derived count; four replicas are far short of it.
        let p = answer("traffic-triples", 4);
        assert_eq!(p.grade, Grade::Weak, "{p:?}");
        assert!(!p.holds);
        assert!(
            p.summary.contains("do not hold") && p.summary.contains("150 req/s"),
            "{}",
            p.summary
        );
    }

    #[test]
    fn a_miss_with_no_request_lost_says_so_in_words() {
        let m = mock().expect("mock");
        let c = m.curveball("traffic-triples").unwrap().clone();
        let base = Inputs::defaults(Question::Fleet);
        let f = replicas_fleet(&c, &base, 4).unwrap().unwrap();
        let mut check = run(&f);
        // The same miss with every request served: the TTFT target alone fails.
        check.timed_out = 0;
        check.rejected = 0;
        check.ttft_p99_s = check.ttft_target_s * 2.0;
        let p = grade_replicas(&m, &c, &base, 4, Some(&check)).unwrap();
        assert_eq!(p.grade, Grade::Weak);
        assert!(p.summary.contains("no request was lost"), "{}", p.summary);
        assert!(!p.summary.contains(" 0 requests"), "{}", p.summary);
        // With requests lost, their count is said.
        check.timed_out = 7;
        let p = grade_replicas(&m, &c, &base, 4, Some(&check)).unwrap();
        assert!(p.summary.contains("7 requests lost"), "{}", p.summary);
    }

    #[test]
    fn the_derived_count_after_traffic_triples_holds_and_grades_strong() {
        let p = answer("traffic-triples", 23);
        assert_eq!(p.grade, Grade::Strong, "{p:?}");
        assert!(p.summary.contains("$57.50"), "{}", p.summary);
    }

    #[test]
    fn more_than_needed_holds_but_costs_more_and_grades_acceptable() {
        let p = answer("replica-fails", 14);
        assert_eq!(p.grade, Grade::Acceptable, "{p:?}");
        assert!(
            p.summary.contains("$35 an hour") && p.summary.contains("$22.50"),
            "{}",
            p.summary
        );
        // One spare on top of the seed's eight holds the load with one replica gone.
        assert_eq!(answer("replica-fails", 9).grade, Grade::Strong);
        // With one replica and one lost, nothing runs.
        let none = answer("replica-fails", 1);
        assert_eq!(none.grade, Grade::Weak);
        assert!(none.summary.contains("nothing is left"), "{}", none.summary);
    }

    #[test]
    fn a_miss_on_the_key_figure_names_it_once() {
        let m = mock().unwrap();
        // A moment whose target is on its key figure.
        let moment = crate::moments::moments()
            .unwrap()
            .into_iter()
            .find(|m| m.slo.as_ref().is_some_and(|s| s.figure == m.key) && m.options.len() == 3)
            .expect("a moment with its target on its key figure and three options");
        let key = moment.figure_index(&moment.key).unwrap();
        let outcomes: Vec<OptionOutcome> = [3.0, 0.4, 0.3]
            .into_iter()
            .map(|v| {
                let mut figures = vec![None; moment.figures.len()];
                figures[key] = Some(v);
                OptionOutcome { figures }
            })
            .collect();
        let p = grade_option(&m, &moment, &outcomes, 0, None, |_, v| {
            format!("{:.2}", v.unwrap_or(0.0))
        });
        assert_eq!(p.grade, Grade::Weak);
        let label = &moment.figures[key].label;
        assert_eq!(
            p.summary.matches(label.as_str()).count(),
            1,
            "{}",
            p.summary
        );
        assert!(p.summary.contains("3.00 against 0.50"), "{}", p.summary);
    }

    #[test]
    fn a_moment_answer_is_graded_by_its_rank_among_the_runs() {
        let m = mock().unwrap();
        let moment = crate::moments::moment("autoscaler").unwrap();
        let (ttft, hours) = (
            moment.figure_index("server_ttft_p99").unwrap(),
            moment.figure_index("gpu_hours").unwrap(),
        );
        // Four options: the first misses the SLO, the last holds it most cheaply.
        let outcome = |t: f64, h: f64| {
            let mut figures = vec![None; moment.figures.len()];
            figures[ttft] = Some(t);
            figures[hours] = Some(h);
            OptionOutcome { figures }
        };
        let outcomes = vec![
            outcome(0.9, 10.0),
            outcome(0.4, 30.0),
            outcome(0.45, 20.0),
            outcome(0.3, 15.0),
        ];
        let shown = |_: usize, v: Option<f64>| format!("{:.2}", v.unwrap_or(0.0));
        let g = |i| grade_option(&m, &moment, &outcomes, i, None, shown);
        assert_eq!(g(0).grade, Grade::Weak);
        assert!(
            g(0).summary.contains("0.90") && g(0).summary.contains("0.50"),
            "{}",
            g(0).summary
        );
        assert_eq!(g(1).grade, Grade::Acceptable);
        assert!(
            g(1).summary.contains("30.00 against 15.00"),
            "{}",
            g(1).summary
        );
        assert_eq!(g(2).grade, Grade::Acceptable);
        assert_eq!(g(3).grade, Grade::Strong);
        // Equal figures get equal grades: two options that hold the SLO at the same cost are
        // both strong, and one that misses it is weak however cheap it is.
        let outcomes = vec![
            outcome(0.9, 1.0),
            outcome(0.4, 30.0),
            outcome(0.3, 15.0),
            outcome(0.2, 15.0),
        ];
        let g = |i| grade_option(&m, &moment, &outcomes, i, None, shown);
        assert_eq!(g(0).grade, Grade::Weak);
        assert_eq!(g(1).grade, Grade::Acceptable);
        assert_eq!(g(2).grade, Grade::Strong);
        assert_eq!(g(3).grade, Grade::Strong);
    }

    /// Regression: an option that holds the moment's target but trails the best by more than
    /// the moment allows is weak, and the sentence said it "misses the target". It says it
    /// holds it and trails.
    #[test]
    fn a_weak_answer_that_holds_the_target_is_not_said_to_miss_it() {
        let m = mock().unwrap();
        let moment = crate::moments::moment("halve-cost").unwrap();
        let key = moment.figure_index("tpot_p99").unwrap();
        let outcome = |v: f64| {
            let mut figures = vec![Some(0.0); moment.figures.len()];
            figures[key] = Some(v);
            OptionOutcome { figures }
        };
        // Every option holds the 20 ms target; the first is more than 1.5 times the best.
        let outcomes: Vec<OptionOutcome> = [0.016, 0.012, 0.011, 0.010, 0.013]
            .into_iter()
            .map(outcome)
            .collect();
        let p = grade_option(&m, &moment, &outcomes, 0, None, |_, v| {
            format!("{:.3}", v.unwrap_or(0.0))
        });
        assert_eq!(p.grade, Grade::Weak);
        assert!(p.holds);
        assert!(!p.summary.contains("misses"), "{}", p.summary);
        assert!(p.summary.contains("0.016 against 0.010"), "{}", p.summary);
    }

    /// Finance's cut is priced from the arithmetic's fleet at the mock's load; an answer over
    /// the budget is weak whatever its rank, one within it keeps the moment's grade, and
    /// both sentences name the budget.
    #[test]
    fn the_finance_cut_grades_by_the_budget_the_arithmetic_sets() {
        let m = mock().unwrap();
        let c = m
            .curveball("finance-cut")
            .expect("the finance curveball")
            .clone();
        let base = m.figures.load().unwrap();
        let b = budget(&c, &base).unwrap().expect("a budget");
        let inputs = curveball_inputs(&c, &base).unwrap();
        let price = inputs.get("price").unwrap();
        assert_eq!(b.reference_replicas, reference_replicas(&c, &base).unwrap());
        assert!(
            (b.reference_dollars_per_hour - b.reference_replicas as f64 * price).abs() < 1e-9,
            "{b:?}"
        );
        assert!((b.allowed_dollars_per_hour - b.reference_dollars_per_hour * 0.7).abs() < 1e-9);
        let moment = crate::moments::moment(c.moment.as_deref().unwrap()).unwrap();
        let key = moment.figure_index(&moment.key).unwrap();
        let bill = |v: Option<f64>| {
            let mut figures = vec![Some(1.0); moment.figures.len()];
            figures[key] = v;
            OptionOutcome { figures }
        };
        let allowed = b.allowed_dollars_per_hour;
        // Over the budget but best of the options; within it but behind; the cheapest; none.
        let outcomes = vec![
            bill(Some(allowed * 1.01)),
            bill(Some(allowed * 0.9)),
            bill(Some(allowed * 0.7)),
            bill(None),
            bill(Some(allowed * 0.95)),
        ];
        let shown = |_: usize, v: Option<f64>| format!("{:.2}", v.unwrap_or(0.0));
        let g = |i| grade_option(&m, &moment, &outcomes, i, Some(&b), shown);
        assert_eq!(g(0).grade, Grade::Weak);
        assert!(
            g(0).summary.contains("over what finance allows"),
            "{}",
            g(0).summary
        );
        assert_eq!(g(1).grade, Grade::Acceptable);
        assert!(g(1).summary.ends_with(": met."), "{}", g(1).summary);
        assert_eq!(g(2).grade, Grade::Strong);
        assert!(g(2).summary.contains("30 %"), "{}", g(2).summary);
        assert_eq!(g(3).grade, Grade::Weak);
        assert!(
            g(3).summary.contains("nothing it tried held"),
            "{}",
            g(3).summary
        );
    }
}
