//! The interview's plan: a share of the clock for each stage, scaled to the clock the
//! learner sets, and where the time actually went.

use super::*;

/// One stage's share of the clock and the time spent on it, seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct StagePace {
    /// The stage's id: a prompt's, or `curveball`.
    pub id: String,
    pub budget_s: f64,
    pub spent_s: f64,
}

impl StagePace {
    /// Whether the stage has run past its share.
    pub fn over(&self) -> bool {
        self.spent_s > self.budget_s
    }
}

/// The id the curveball's stage is kept under (notes, time).
pub const CURVEBALL_STAGE: &str = "curveball";

impl Mock {
    /// The stages' ids in the interview's order: every prompt, then the curveball.
    pub fn stage_ids(&self) -> Vec<&str> {
        self.prompts
            .iter()
            .map(|p| p.id.as_str())
            .chain([CURVEBALL_STAGE])
            .collect()
    }

    /// Each stage's minutes in the file's plan, in the interview's order.
    fn planned_minutes(&self) -> Vec<f64> {
        self.prompts
            .iter()
            .map(|p| p.minutes as f64)
            .chain([self.curveball_minutes as f64])
            .collect()
    }

    /// The plan for a clock of `limit_s` seconds: each stage's share of the file's plan (which
    /// adds up to its default length) scaled to that clock, with `spent` (seconds by stage id)
    /// beside it.
    pub fn pace(&self, limit_s: f64, spent: &BTreeMap<String, f64>) -> Vec<StagePace> {
        let total: f64 = self.planned_minutes().iter().sum();
        let scale = if total > 0.0 { limit_s / total } else { 0.0 };
        self.stage_ids()
            .into_iter()
            .zip(self.planned_minutes())
            .map(|(id, m)| StagePace {
                id: id.to_string(),
                budget_s: m * scale,
                spent_s: spent.get(id).copied().unwrap_or(0.0),
            })
            .collect()
    }

    /// Checks the plan: every stage has a share, and the shares add up to the clock's default.
    pub(super) fn check_plan(&self) -> Result<(), ConfigError> {
        let minutes = self.planned_minutes();
        if let Some(i) = minutes.iter().position(|m| *m < 1.0) {
            let id = self.stage_ids()[i].to_string();
            return Err(ConfigError::new(
                format!("mock {id}"),
                "a stage's minutes in the plan must be at least 1",
            ));
        }
        let total: f64 = minutes.iter().sum();
        if total != self.minutes as f64 {
            return Err(ConfigError::new(
                "mock minutes",
                format!(
                    "the stages' minutes add up to {total}, not the clock's {}",
                    self.minutes
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_scales_to_the_clock_and_adds_up_to_it() {
        let m = mock().unwrap();
        let limit = m.minutes as f64 * 60.0;
        let p = m.pace(limit, &BTreeMap::new());
        assert_eq!(p.len(), m.prompts.len() + 1);
        assert_eq!(p.last().unwrap().id, CURVEBALL_STAGE);
        let sum: f64 = p.iter().map(|s| s.budget_s).sum();
        assert!((sum - limit).abs() < 1e-9, "{sum}");
        // Half the clock: every share halves.
        let half = m.pace(limit / 2.0, &BTreeMap::new());
        for (a, b) in p.iter().zip(&half) {
            assert!((a.budget_s / 2.0 - b.budget_s).abs() < 1e-9);
        }
        // Time spent past a share is over it; at the share exactly, not yet.
        let sizing = p.iter().find(|s| s.id == "sizing").unwrap().budget_s;
        let spent = BTreeMap::from([("sizing".to_string(), sizing)]);
        let at = m.pace(limit, &spent);
        assert!(!at.iter().any(StagePace::over));
        let spent = BTreeMap::from([("sizing".to_string(), sizing + 1.0)]);
        let over: Vec<String> = m
            .pace(limit, &spent)
            .into_iter()
            .filter(StagePace::over)
            .map(|s| s.id)
            .collect();
        assert_eq!(over, ["sizing"]);
    }

    #[test]
    fn every_stage_calibrates_each_level_and_an_empty_one_is_refused() {
        let m = mock().unwrap();
        for p in &m.prompts {
            assert!(
                p.levels.each().iter().all(|(_, t)| t.len() > 20),
                "{}",
                p.id
            );
        }
        let text = BUILTIN.replacen(
            "levels.mid = \"Proposes more GPUs for both symptoms.\"",
            "levels.mid = \" \"",
            1,
        );
        let e = parse(&text).unwrap_err();
        assert!(e.message.contains("mid level"), "{e:?}");
    }

    #[test]
    fn a_plan_that_does_not_add_up_is_refused() {
        let text = BUILTIN.replacen("minutes = 45", "minutes = 50", 1);
        let e = parse(&text).unwrap_err();
        assert!(e.message.contains("add up to"), "{e:?}");
    }
}
