//! Which figures give an estimate's answer away.
//!
//! A page that asks the learner to estimate a step (the lesson's estimate boxes) must not show
//! that step, nor any figure that reads it back, until the estimate is committed. The figures
//! that give step `s` away are `s` itself, the step it merely rounds (the replicas before
//! rounding give the count at a glance), and every later step computed from it. A test checks
//! the list against the derivation itself: every later step that moves when only the
//! estimated step's inputs move is on it.

use super::Question;

/// The steps of question `q` that give away the answer to an estimate of step `step`, the
/// step itself first. Empty for a step no page asks to estimate.
pub fn gives_away(q: Question, step: &str) -> &'static [&'static str] {
    match (q, step) {
        (Question::Fleet, "replicas") => &[
            "replicas",
            "replicas_exact",
            "gpus",
            "cost_per_hour",
            "cost_per_million",
            "streams_per_replica",
            "batch_check",
            "kv_in_use",
            "kv_share",
        ],
        (Question::Fleet, "open_streams") => &[
            "open_streams",
            "streams_per_replica",
            "batch_check",
            "kv_in_use",
            "kv_share",
        ],
        (Question::Fleet, "kv_in_use") => &["kv_in_use", "kv_share"],
        // The roofline's floor is read by nothing after it; the target's batch sets the
        // largest batch and the counts and checks at it.
        (Question::Roofline, "weight_floor") => &["weight_floor"],
        (Question::Roofline, "tpot_batch") => &[
            "tpot_batch",
            "largest_batch",
            "replicas_largest",
            "fills_check",
        ],
        _ => &[],
    }
}

/// The estimates of another question that step `step` of question `q` gives away: the
/// roofline question counts the seed fleet again (its replicas, its open streams), so a page
/// that asks for the fleet's estimate holds those figures back too.
pub fn echoes(q: Question, step: &str) -> &'static [(Question, &'static str)] {
    match (q, step) {
        (
            Question::Roofline,
            "replicas_assumed" | "replicas_largest" | "fills_check" | "replicas_traffic",
        ) => &[
            (Question::Fleet, "replicas"),
            (Question::Fleet, "open_streams"),
        ],
        (Question::Roofline, "open_streams") => &[(Question::Fleet, "open_streams")],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sizing::{derive, Inputs};

    /// Every step after `step` in the derivation that changes when `input` changes (with the
    /// steps up to `step` otherwise driven by it) must be listed as giving `step` away.
    fn check_downstream(step: &str, input: &str, values: &[f64]) {
        let q = Question::Fleet;
        let base = Inputs::defaults(q);
        let d0 = derive(q, &base).unwrap();
        let at = d0.steps.iter().position(|s| s.id == step).unwrap();
        let listed = gives_away(q, step);
        let mut moved_any = false;
        for &v in values {
            let mut inputs = base.clone();
            inputs.set(q, input, v).unwrap();
            let d = derive(q, &inputs).unwrap();
            assert_ne!(
                d.step(step).unwrap().value,
                d0.step(step).unwrap().value,
                "{input} = {v} must move {step}"
            );
            for s in &d.steps[at + 1..] {
                if s.value != d0.step(s.id).unwrap().value {
                    moved_any = true;
                    assert!(
                        listed.contains(&s.id),
                        "{} moves with {step} (through {input}) but is not hidden with it",
                        s.id
                    );
                }
            }
        }
        assert!(moved_any, "no later step moved with {step}");
    }

    #[test]
    fn every_later_step_computed_from_an_estimate_is_hidden_with_it() {
        // The ceiling moves the replica count and nothing before it.
        check_downstream("replicas", "ceiling", &[0.3, 0.5, 0.9]);
        // The per-token target moves the reply time, hence the open streams, and (before
        // them) only its own check.
        check_downstream("open_streams", "tpot_ms", &[10.0, 25.0, 60.0]);
        // The output length moves the average context, hence KV in use (and much else
        // before it); what follows KV in use must be hidden with it.
        check_downstream("kv_in_use", "output_tokens", &[100.0, 600.0]);
    }

    #[test]
    fn the_roofline_figures_that_repeat_the_fleets_answers_are_held_with_them() {
        // At any inputs, the roofline's counts and streams are the fleet question's own.
        let q = Question::Roofline;
        let d = derive(q, &Inputs::defaults(q)).unwrap();
        let f = derive(Question::Fleet, &Inputs::defaults(Question::Fleet)).unwrap();
        for id in ["replicas_assumed", "replicas_traffic"] {
            assert_eq!(d.step(id).unwrap().value, f.step("replicas").unwrap().value);
            assert!(echoes(q, id).contains(&(Question::Fleet, "replicas")));
        }
        assert_eq!(
            d.step("open_streams").unwrap().value,
            f.step("open_streams").unwrap().value
        );
        assert!(echoes(q, "open_streams").contains(&(Question::Fleet, "open_streams")));
        for (oq, os) in ["replicas_largest", "fills_check"]
            .iter()
            .flat_map(|s| echoes(q, s))
        {
            assert!(!gives_away(*oq, os).is_empty(), "{os} is an estimate");
        }
        assert!(echoes(q, "ridge_point").is_empty());
    }

    #[test]
    fn every_listed_step_exists_and_the_answer_comes_first() {
        let d = derive(Question::Fleet, &Inputs::defaults(Question::Fleet)).unwrap();
        for step in ["replicas", "open_streams", "kv_in_use"] {
            let list = gives_away(Question::Fleet, step);
            assert_eq!(list.first(), Some(&step));
            for s in list {
                assert!(d.step(s).is_some(), "{s} is no step of the fleet question");
            }
        }
        assert!(gives_away(Question::Fleet, "prompt_tps").is_empty());
    }
}
