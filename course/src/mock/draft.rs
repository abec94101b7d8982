//! A mock in progress (`MockDraft`): the stage, the clock, notes, answers and marks so far, and
//! the check a saved one passes before it is resumed.

use super::*;

/// A mock interview in progress, kept in the browser so a reload or a closed tab resumes it
/// where it stood: the set-up, the stage, the clock, the notes, the curveball's graded answer
/// and the self-assessment so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MockDraft {
    /// Against the clock (else practice).
    pub timed: bool,
    /// Two people: the interviewer's points shown beside each prompt.
    pub interviewer: bool,
    /// The curveball drawn for this session.
    pub curveball: String,
    /// Past the sequence, in the self-assessment.
    pub assessing: bool,
    /// The clock ran out (the assessment then says so).
    pub time_up: bool,
    /// The stage shown: a prompt's index, or the number of prompts for the curveball.
    pub stage: usize,
    /// The clock's length and what was left, seconds (0 and 0 in practice).
    pub limit_s: f64,
    pub remaining_s: f64,
    /// Notes by stage id.
    pub notes: BTreeMap<String, String>,
    /// Self-assessment marks by rubric line id.
    pub assessment: BTreeMap<String, String>,
    pub pushback: Option<PushbackRecord>,
    /// The figures typed at the figures' prompt, by figure id, as typed.
    pub figures: BTreeMap<String, String>,
    /// The figures checked so far (a checked figure is final).
    pub marks: Vec<FigureRecord>,
    /// Seconds the clock ran on each stage, by stage id.
    pub spent_s: BTreeMap<String, f64>,
    /// The level picked for each stage so far, by stage id.
    pub levels: BTreeMap<String, String>,
}

/// Marks a self-assessment takes.
pub const ASSESSMENT_MARKS: [&str; 3] = ["shown", "partly", "missed"];

impl MockDraft {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a saved draft and checks it against this mock: its curveball exists, its stage is
    /// one of the interview's, its clock is a real one. Notes for stages and marks for lines the
    /// mock no longer has are dropped (the content may have changed since), as are marks it
    /// does not offer. An error says why the draft cannot be resumed.
    pub fn read(text: &str, m: &Mock) -> Result<MockDraft, String> {
        Self::resume(text, m).map(|(d, _)| d)
    }

    /// [`MockDraft::read`], and the reasons for every typed or checked figure it dropped: one
    /// whose id the mock does not ask for, a second check of the same figure, or a check whose
    /// figures are not numbers.
    pub fn resume(text: &str, m: &Mock) -> Result<(MockDraft, Vec<String>), String> {
        let mut d: MockDraft = serde_json::from_str(text)
            .map_err(|e| format!("the saved interview is not readable ({e})"))?;
        if m.curveball(&d.curveball).is_none() {
            return Err(format!(
                "the saved interview's curveball {:?} is not one this mock has",
                d.curveball
            ));
        }
        if d.stage > m.prompts.len() {
            return Err(format!(
                "the saved interview stood at stage {}, past the last of {}",
                d.stage + 1,
                m.prompts.len() + 1
            ));
        }
        let clock_ok = d.limit_s.is_finite()
            && d.remaining_s.is_finite()
            && d.limit_s >= 0.0
            && d.limit_s <= 180.0 * 60.0
            && (0.0..=d.limit_s).contains(&d.remaining_s);
        if !clock_ok || d.timed != (d.limit_s > 0.0) {
            return Err("the saved interview's clock is not a real one".into());
        }
        let stages: Vec<&str> = m
            .prompts
            .iter()
            .map(|p| p.id.as_str())
            .chain(["curveball"])
            .collect();
        d.notes.retain(|k, _| stages.contains(&k.as_str()));
        // Time on a stage the mock no longer has, or not a real time, is dropped.
        let limit = d.limit_s;
        d.spent_s.retain(|k, v| {
            stages.contains(&k.as_str()) && v.is_finite() && (0.0..=limit).contains(v)
        });
        d.assessment
            .retain(|k, v| m.line(k).is_some() && ASSESSMENT_MARKS.contains(&v.as_str()));
        d.levels
            .retain(|k, v| stages.contains(&k.as_str()) && LEVELS.contains(&v.as_str()));
        if d.pushback
            .as_ref()
            .is_some_and(|p| p.curveball != d.curveball)
        {
            d.pushback = None;
        }
        let mut dropped = Vec::new();
        let known = |id: &str| m.figures.spec(id).is_some();
        d.figures.retain(|id, _| {
            let ok = known(id);
            if !ok {
                dropped.push(format!(
                    "the typed figure {id:?} is not one this mock asks for"
                ));
            }
            ok
        });
        let mut seen: Vec<String> = Vec::new();
        d.marks.retain(|r| {
            let why = if !known(&r.id) {
                Some(format!(
                    "the checked figure {:?} is not one this mock asks for",
                    r.id
                ))
            } else if seen.contains(&r.id) {
                Some(format!("the figure {:?} was checked twice", r.id))
            } else if !(r.value.is_finite() && r.value > 0.0 && r.expected.is_finite()) {
                Some(format!(
                    "the checked figure {:?} does not hold numbers",
                    r.id
                ))
            } else {
                None
            };
            seen.push(r.id.clone());
            if let Some(w) = &why {
                dropped.push(w.clone());
            }
            why.is_none()
        });
        Ok((d, dropped))
    }
}
