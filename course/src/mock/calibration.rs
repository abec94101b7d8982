//! Level calibration in the self-assessment: at each stage the candidate picks the level (mid,
//! senior, staff) whose observable evidence (`Prompt::levels`) matches what they said, and the
//! report reads the picks: the level most stages read at, and the lowest stage, where to work
//! next. The sentence is chosen from the counts (`[calibration]` of `content/mock.toml`).

use super::Mock;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The levels, lowest first.
pub const LEVELS: [&str; 3] = ["mid", "senior", "staff"];

/// The calibration's words.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationWords {
    pub heading: String,
    pub intro: String,
    pub report_title: String,
    pub col_level: String,
    /// A stage left without a level.
    pub unmarked: String,
    /// Every calibrated stage at one `{level}`.
    pub reading_one: String,
    /// `{count}` of `{total}` at `{level}`, more than half; `{lowest}` the lowest stage.
    pub reading_most: String,
    /// No level in more than half; `{lowest}` the lowest stage.
    pub reading_mixed: String,
}

impl Mock {
    /// The stages that take a level, in order: every prompt, then the curveball.
    pub fn calibrated_stages(&self) -> Vec<(String, String)> {
        self.prompts
            .iter()
            .map(|p| (p.id.clone(), p.stage.clone()))
            .chain([("curveball".to_string(), "The curveball".to_string())])
            .collect()
    }

    /// The report's sentence on the levels picked (stage id to level); `None` when none was.
    /// Unknown stages and levels are ignored.
    pub fn calibration_reading(&self, picked: &BTreeMap<String, String>) -> Option<String> {
        let stages = self.calibrated_stages();
        let marks: Vec<(&str, usize)> = stages
            .iter()
            .filter_map(|(id, name)| {
                let level = picked.get(id)?;
                LEVELS
                    .iter()
                    .position(|l| l == level)
                    .map(|i| (name.as_str(), i))
            })
            .collect();
        if marks.is_empty() {
            return None;
        }
        let w = &self.calibration;
        let total = marks.len();
        let count = |i: usize| marks.iter().filter(|(_, l)| *l == i).count();
        let (top, n) = (0..LEVELS.len())
            .map(|i| (i, count(i)))
            .max_by_key(|&(i, n)| (n, std::cmp::Reverse(i)))
            .unwrap_or((0, 0));
        // The lowest stage (the first in order among the lowest level).
        let low = marks.iter().map(|(_, l)| *l).min().unwrap_or(0);
        let lowest = marks
            .iter()
            .find(|(_, l)| *l == low)
            .map_or("", |(name, _)| *name);
        let level = level_word(top);
        let text = if n == total {
            w.reading_one.replace("{level}", level)
        } else if 2 * n > total {
            w.reading_most
                .replace("{level}", level)
                .replace("{count}", &n.to_string())
                .replace("{total}", &total.to_string())
                .replace("{lowest}", lowest)
        } else {
            w.reading_mixed.replace("{lowest}", lowest)
        };
        Some(text)
    }
}

/// A level as a sentence names it.
pub fn level_word(i: usize) -> &'static str {
    match i {
        0 => "mid",
        1 => "senior",
        _ => "staff",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picks(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_reading_is_chosen_from_the_levels_picked() {
        let m = crate::mock::mock().unwrap();
        assert_eq!(m.calibration_reading(&BTreeMap::new()), None);
        let one = m
            .calibration_reading(&picks(&[("opening", "senior"), ("sizing", "senior")]))
            .unwrap();
        assert!(
            one.contains("Every stage") && one.contains("senior"),
            "{one}"
        );
        let most = m
            .calibration_reading(&picks(&[
                ("opening", "senior"),
                ("clarify", "senior"),
                ("sizing", "mid"),
                ("path", "senior"),
            ]))
            .unwrap();
        assert!(most.contains("3 of 4") && most.contains("Sizing"), "{most}");
        let mixed = m
            .calibration_reading(&picks(&[
                ("opening", "staff"),
                ("clarify", "mid"),
                ("curveball", "senior"),
            ]))
            .unwrap();
        assert!(
            mixed.contains("different levels") && mixed.contains("Clarifying"),
            "{mixed}"
        );
        // Unknown stages and levels are ignored.
        assert_eq!(
            m.calibration_reading(&picks(&[("nope", "senior"), ("opening", "guru")])),
            None
        );
        assert_eq!(m.calibrated_stages().len(), m.prompts.len() + 1);
    }
}
