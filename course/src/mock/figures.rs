//! The sizing stage's figures: what the candidate types (replicas, GPUs, cost, open streams,
//! KV per token), each a step of the fleet question at the mock's load, and its grading
//! against the tolerance the file gives it.

use super::*;

/// The figures the candidate types at one prompt, each checked against a step of the fleet
/// question's derivation.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figures {
    /// The id of the prompt at which they are asked.
    pub prompt: String,
    /// The mock's load as the fleet calculator's query string ("": the seed's defaults).
    #[serde(default)]
    pub inputs: String,
    pub words: FigureWords,
    #[serde(rename = "figure")]
    pub list: Vec<FigureSpec>,
}

/// The sentences around the figures (`{name}`s are filled by the grading).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureWords {
    pub heading: String,
    pub intro: String,
    /// The button that checks them.
    pub check: String,
    /// The interviewer's heading over the derived figures.
    pub expected: String,
    pub right: String,
    pub missed: String,
    /// `{typed}`, `{expected}`, `{tolerance}`.
    pub graded: String,
    pub derivation: String,
    pub open_step: String,
    /// The tolerance of zero.
    pub exact: String,
    /// `{amount}`: the tolerance.
    pub within: String,
    pub empty: String,
    /// `{text}`: what was typed.
    pub not_a_number: String,
    /// `{label}`: the figure's label.
    pub not_positive: String,
    /// `{right}`, `{graded}`.
    pub summary: String,
    /// `{right}`, `{graded}`, `{missed}`: the labels of the missed figures.
    pub summary_missed: String,
    /// `{reasons}`: why figures of a saved interview were dropped.
    pub set_aside: String,
}

/// One figure: a step of the fleet question and how close an answer must come.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    /// The step's id in the fleet question's derivation.
    pub id: String,
    pub label: String,
    /// The unit it is typed in, where it differs from the step's (`KB` for bytes).
    #[serde(default)]
    pub unit: Option<String>,
    /// Tolerance in the typed unit (zero: exactly).
    #[serde(default)]
    pub absolute: Option<f64>,
    /// Tolerance as a fraction of the derived value.
    #[serde(default)]
    pub relative: Option<f64>,
}

/// How close a typed figure must come to the derived one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// Within this much, in the typed unit.
    Absolute(f64),
    /// Within this fraction of the derived value, either side.
    Relative(f64),
}

impl Tolerance {
    /// Whether `typed` is within the tolerance of `expected` (edges included; a rounding
    /// error of a part in a billion is forgiven).
    pub fn holds(self, typed: f64, expected: f64) -> bool {
        if !typed.is_finite() || !expected.is_finite() {
            return false;
        }
        let allowed = match self {
            Tolerance::Absolute(a) => a,
            Tolerance::Relative(r) => r * expected.abs(),
        };
        (typed - expected).abs() <= allowed + 1e-9 * expected.abs().max(1.0)
    }
}

/// A figure as the derivation gives it at the mock's load.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpectedFigure {
    pub id: String,
    pub label: String,
    /// The unit it is typed in, and the factor from the step's unit to it.
    pub unit: EntryUnit,
    /// The derived value, in `unit`.
    pub value: f64,
    pub tolerance: Tolerance,
    /// The tolerance as the page states it, e.g. `within 15 %`.
    pub tolerance_text: String,
    /// The derivation's step (formula, substituted numbers, value).
    pub step: Step,
    /// The calculator at the mock's load with the steps up to this one revealed.
    pub link: String,
}

impl ExpectedFigure {
    /// A value in the typed unit, for people: `$20/h`, `8 replicas`, `131.1 KB`.
    pub fn show(&self, v: f64) -> String {
        show_in(self.unit.label, v)
    }
}

pub(super) fn show_in(unit: &str, v: f64) -> String {
    match unit {
        "$" => money(v),
        "$/h" => format!("{}/h", money(v)),
        "" => sig(v, 4),
        u => format!("{} {u}", sig(v, 4)),
    }
}

/// Why a typed figure was not graded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryError {
    Empty,
    NotANumber,
    NotPositive,
}

/// Reads a typed figure: spaces, thousands separators (`,`, `_`) and a leading `$` are
/// allowed. It must be a finite number above zero.
pub fn read_entry(text: &str) -> Result<f64, EntryError> {
    let t: String = text
        .chars()
        .filter(|c| !c.is_whitespace() && *c != ',' && *c != '_')
        .collect();
    if t.is_empty() {
        return Err(EntryError::Empty);
    }
    let t = t.strip_prefix('$').unwrap_or(&t);
    match t.parse::<f64>() {
        Ok(v) if !v.is_finite() => Err(EntryError::NotANumber),
        Ok(v) if v <= 0.0 => Err(EntryError::NotPositive),
        Ok(v) => Ok(v),
        Err(_) => Err(EntryError::NotANumber),
    }
}

/// The unit a figure is typed in: the step's entry unit, or the file's `unit` where bytes are
/// typed in a larger unit. None for a unit the step cannot be typed in.
pub(super) fn figure_unit(spec: &FigureSpec, step: &Step) -> Option<EntryUnit> {
    let own = EntryUnit::for_step(step.unit, step.value);
    let Some(u) = spec.unit.as_deref() else {
        return Some(own);
    };
    let (label, factor) = match (step.unit, u) {
        ("B", "bytes") => ("bytes", 1.0),
        ("B", "KB") => ("KB", 1e-3),
        ("B", "MB") => ("MB", 1e-6),
        ("B", "GB") => ("GB", 1e-9),
        (_, u) if u == own.label => return Some(own),
        _ => return None,
    };
    Some(EntryUnit { label, factor })
}

impl FigureSpec {
    /// Its tolerance (None unless exactly one of `absolute` and `relative` is given, finite,
    /// not negative, and a relative one below one).
    pub fn tolerance(&self) -> Option<Tolerance> {
        match (self.absolute, self.relative) {
            (Some(a), None) if a.is_finite() && a >= 0.0 => Some(Tolerance::Absolute(a)),
            (None, Some(r)) if r.is_finite() && (0.0..1.0).contains(&r) => {
                Some(Tolerance::Relative(r))
            }
            _ => None,
        }
    }
}

impl Figures {
    /// The mock's load for the fleet question.
    pub fn load(&self) -> Result<Inputs, ConfigError> {
        let page = PageQuery::parse(Question::Fleet, &self.inputs);
        match page.errors.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(page.inputs),
        }
    }

    pub fn spec(&self, id: &str) -> Option<&FigureSpec> {
        self.list.iter().find(|f| f.id == id)
    }

    fn say(&self, template: &str, fill: &[(&str, String)]) -> String {
        let mut s = template.to_string();
        for (name, value) in fill {
            s = s.replace(&format!("{{{name}}}"), value);
        }
        s
    }

    /// A tolerance as the page states it: `exactly`, `within 1 replica`, `within 15 %`.
    pub fn tolerance_text(&self, t: Tolerance, unit: &str) -> String {
        let amount = match t {
            Tolerance::Absolute(0.0) => return self.words.exact.clone(),
            Tolerance::Absolute(a) => match unit {
                "$" | "$/h" | "" => show_in(unit, a),
                u if a == 1.0 && u.len() > 1 && u.ends_with('s') => {
                    format!("{} {}", num(a), &u[..u.len() - 1])
                }
                u => format!("{} {u}", num(a)),
            },
            Tolerance::Relative(r) => percent(r),
        };
        self.say(&self.words.within, &[("amount", amount)])
    }

    /// The sentence for figures a saved interview came back without (None when none was).
    pub fn set_aside(&self, reasons: &[String]) -> Option<String> {
        (!reasons.is_empty())
            .then(|| self.say(&self.words.set_aside, &[("reasons", reasons.join("; "))]))
    }

    /// The sentence for a typed entry that is not graded.
    pub fn refusal(&self, e: EntryError, label: &str, text: &str) -> String {
        match e {
            EntryError::Empty => self.words.empty.clone(),
            EntryError::NotANumber => self.say(
                &self.words.not_a_number,
                &[("text", text.trim().to_string())],
            ),
            EntryError::NotPositive => {
                self.say(&self.words.not_positive, &[("label", label.into())])
            }
        }
    }

    /// The sentence under a graded figure.
    pub fn graded(&self, r: &FigureRecord) -> String {
        self.say(
            &self.words.graded,
            &[
                ("typed", show_in(&r.unit, r.value)),
                ("expected", show_in(&r.unit, r.expected)),
                ("tolerance", r.tolerance.clone()),
            ],
        )
    }

    /// One sentence for the marks given (None when none was checked).
    pub fn summary(&self, marks: &[FigureRecord]) -> Option<String> {
        if marks.is_empty() {
            return None;
        }
        let right = marks.iter().filter(|r| r.right).count();
        let missed: Vec<String> = marks
            .iter()
            .filter(|r| !r.right)
            .map(|r| self.spec(&r.id).map_or(r.id.clone(), |s| s.label.clone()))
            .collect();
        let mut fill = vec![
            ("right", int(right as f64)),
            ("graded", int(marks.len() as f64)),
        ];
        Some(if missed.is_empty() {
            self.say(&self.words.summary, &fill)
        } else {
            fill.push(("missed", missed.join(", ")));
            self.say(&self.words.summary_missed, &fill)
        })
    }
}

/// Every figure as the fleet question derives it at `inputs` (the mock's load, from
/// [`Figures::load`]), in the file's order, with its tolerance and the calculator link.
pub fn expected_figures(m: &Mock, inputs: &Inputs) -> Result<Vec<ExpectedFigure>, ConfigError> {
    let d = derive(Question::Fleet, inputs).map_err(|mut e| e.remove(0))?;
    let total = d.steps.len();
    m.figures
        .list
        .iter()
        .map(|spec| {
            let field = |msg: &str| ConfigError::new(format!("mock figure {}", spec.id), msg);
            let i = d
                .steps
                .iter()
                .position(|s| s.id == spec.id)
                .ok_or_else(|| field("is not a step of the fleet question"))?;
            let step = d.steps[i].clone();
            let unit = figure_unit(spec, &step)
                .ok_or_else(|| field("cannot be typed in the unit given"))?;
            let tolerance = spec
                .tolerance()
                .ok_or_else(|| field("needs one tolerance, absolute or relative below one"))?;
            let query = page_query(Question::Fleet, inputs, Reveal::up_to(i + 1, total), total);
            Ok(ExpectedFigure {
                id: spec.id.clone(),
                label: spec.label.clone(),
                unit,
                value: step.value * unit.factor,
                tolerance,
                tolerance_text: m.figures.tolerance_text(tolerance, unit.label),
                link: format!("/size/fleet?{query}#step-{}", spec.id),
                step,
            })
        })
        .collect()
}

/// Grades what was typed for one figure: a record of the mark, or the sentence saying why the
/// entry is not a figure (empty, not a number, not above zero).
pub fn grade_figure(m: &Mock, e: &ExpectedFigure, text: &str) -> Result<FigureRecord, String> {
    let v = read_entry(text).map_err(|err| m.figures.refusal(err, &e.label, text))?;
    Ok(FigureRecord {
        id: e.id.clone(),
        typed: text.trim().to_string(),
        value: v,
        expected: e.value,
        unit: e.unit.label.to_string(),
        tolerance: e.tolerance_text.clone(),
        right: e.tolerance.holds(v, e.value),
    })
}
