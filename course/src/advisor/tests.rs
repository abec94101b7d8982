use super::*;
use proptest::prelude::*;

fn axis(knob: &str, values: &[&str]) -> Axis {
    Axis {
        knob: knob.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}

/// A small space: the seed's model on an H100 at a low rate, short runs.
fn small(rate: f64, prompt: u32, output: u32, ttft_ms: f64, tpot_ms: f64) -> Space {
    Space {
        base: format!(
            "preset=fleet-seed&rate={rate}&prompt_a={prompt}&output_a={output}&duration=20"
        ),
        targets: Targets {
            ttft_s: ttft_ms / 1e3,
            tpot_s: tpot_ms / 1e3,
            percentile: Percentile::P99,
        },
        axes: vec![
            axis("tp", &["1", "2"]),
            axis("weights", &["bf16", "fp8"]),
            axis("max_seqs", &["4", "64"]),
        ],
        prices: vec![("h100-sxm".into(), 2.5)],
        max_replicas: 4,
        short_s: 20.0,
        confirm_s: 40.0,
        confirm: 2,
    }
}

fn short_counts(s: &Search) -> Vec<(Settings, Option<u32>)> {
    let mut out: Vec<_> = s
        .pruned
        .iter()
        .map(|p| (p.settings.clone(), None))
        .chain(s.candidates.iter().enumerate().map(|(i, c)| {
            let short = match s.stages[i] {
                Stage::Done { short, .. } => short,
                other => panic!("candidate {i} not done: {other:?}"),
            };
            (c.settings.clone(), short)
        }))
        .collect();
    out.sort();
    out
}

#[test]
fn the_search_finds_what_running_every_count_finds() {
    for space in [
        small(6.0, 500, 60, 500.0, 20.0),
        small(12.0, 2000, 100, 400.0, 12.0),
        small(3.0, 300, 200, 200.0, 7.0),
    ] {
        let mut s = Search::new(space.clone()).expect("valid space");
        s.run_here().expect("runs");
        let mut all = exhaustive(&space).expect("runs");
        all.sort();
        assert_eq!(short_counts(&s), all, "{space:?}");
        // Each candidate's count holds and one fewer (unless it is the floor) misses.
        assert!(s
            .candidates
            .iter()
            .enumerate()
            .any(|(i, _)| s.count(i).is_some()));
    }
}

#[test]
fn the_seed_search_prunes_with_reasons_and_confirms_the_cheapest() {
    let mut s = Search::new(Space::seed()).expect("the seed space");
    assert_eq!(s.candidates.len() + s.pruned.len(), 2 * 3 * 3 * 2);
    s.run_here().expect("runs");
    let (best, n) = s.best().expect("a configuration holds the seed's targets");
    let c = &s.candidates[best];
    // The best held a longer run at its count.
    assert!(s
        .points
        .iter()
        .any(|p| p.candidate == best && p.replicas == n && p.horizon_s == 300.0 && p.holds));
    // No candidate that held the short runs is cheaper than the best by the short count
    // while it also confirmed.
    for (i, cand) in s.candidates.iter().enumerate() {
        if let Stage::Done {
            confirmed: Some(m), ..
        } = s.stages[i]
        {
            assert!(cand.dollars_per_hour(m) >= c.dollars_per_hour(n));
        }
    }
    // Every candidate whose short runs' count would cost less than the answer had a longer
    // run: nothing left unconfirmed could be cheaper.
    for (i, cand) in s.candidates.iter().enumerate() {
        if let Stage::Done { short: Some(m), .. } = s.stages[i] {
            if cand.dollars_per_hour(m) < c.dollars_per_hour(n) {
                assert!(
                    s.points
                        .iter()
                        .any(|p| p.candidate == i && p.horizon_s == 300.0),
                    "{:?} at {m} was never confirmed",
                    cand.settings
                );
            }
        }
    }
    // The floor is below every count found.
    for (i, cand) in s.candidates.iter().enumerate() {
        if let Some(m) = s.count(i) {
            assert!(cand.floor.replicas <= m, "{:?}", cand.settings);
        }
    }
    // The answer is on the cost frontier: nothing is cheaper per token and faster to the
    // first token; every beaten point names a point that beats it.
    let f = s.frontier();
    let mine = f
        .iter()
        .position(|p| p.candidate == best)
        .expect("the best is plotted");
    assert_eq!(f[mine].replicas, n);
    for p in &f {
        if let Some(j) = p.cost_beaten_by {
            assert!(f[j].point.ttft_s <= p.point.ttft_s);
            assert!(f[j].point.dollars_per_million <= p.point.dollars_per_million);
        }
    }
    assert!(f.iter().any(|p| p.cost_beaten_by.is_some()));
    assert!(f.iter().any(|p| p.cost_beaten_by.is_none()));
    // The lab link of the answer carries its settings and count.
    let q = s.setup(best, n).query();
    assert!(q.starts_with("preset=fleet-seed"), "{q}");
    assert!(q.contains(&format!("replicas={n}")), "{q}");
}

#[test]
fn arithmetic_reasons_carry_their_figures() {
    // 20,000-token prompts cannot be prefilled in 50 ms; a 2 ms per-token target is under
    // one sequence's decode step.
    let mut space = small(1.0, 20000, 50, 50.0, 2.0);
    space.axes = vec![axis("tp", &["1"])];
    let s = Search::new(space.clone()).unwrap();
    assert_eq!(s.candidates.len(), 0);
    match &s.pruned[0].reason {
        Reason::StepTooSlow { step_s, target_s } => {
            assert!(step_s > target_s && *target_s == 0.002)
        }
        other => panic!("{other:?}"),
    }
    space.targets.tpot_s = 1.0;
    let s = Search::new(space).unwrap();
    match &s.pruned[0].reason {
        Reason::PrefillTooSlow {
            prefill_s,
            target_s,
        } => assert!(prefill_s > target_s),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_gpu_without_a_price_and_a_refused_value_are_pruned_by_name() {
    let mut space = small(1.0, 500, 50, 500.0, 20.0);
    space.axes = vec![axis("gpu", &["h100-sxm", "a100-80gb"]), axis("tp", &["3"])];
    let s = Search::new(space.clone()).unwrap();
    assert!(s
        .pruned
        .iter()
        .all(|p| matches!(&p.reason, Reason::Invalid { knob, .. } if knob == "tp")));
    space.axes = vec![axis("gpu", &["h100-sxm", "a100-80gb"])];
    let s = Search::new(space).unwrap();
    assert_eq!(s.candidates.len(), 1);
    assert_eq!(
        s.pruned[0].reason,
        Reason::NoPrice {
            gpu: "a100-80gb".into()
        }
    );
}

#[test]
fn bad_spaces_are_refused_with_a_message() {
    let good = small(1.0, 500, 50, 500.0, 20.0);
    let mut bad = good.clone();
    bad.axes.push(axis("warp", &["9"]));
    assert!(Search::new(bad).unwrap_err().contains("warp"));
    let mut bad = good.clone();
    bad.axes.push(axis("replicas", &["9"]));
    assert!(Search::new(bad).unwrap_err().contains("replicas"));
    let mut bad = good.clone();
    bad.axes.push(axis("tp", &["1"]));
    assert!(Search::new(bad).unwrap_err().contains("twice"));
    let mut bad = good.clone();
    bad.axes.push(axis("budget", &[]));
    assert!(Search::new(bad).unwrap_err().contains("budget"));
    let mut bad = good.clone();
    bad.max_replicas = 0;
    assert!(Search::new(bad).is_err());
    let mut bad = good.clone();
    bad.targets.tpot_s = f64::NAN;
    assert!(Search::new(bad).is_err());
    let mut bad = good;
    bad.base = "preset=nope".into();
    assert!(Search::new(bad).unwrap_err().contains("preset"));
}

#[test]
fn domination_names_a_point_better_on_both() {
    let pts = [(1.0, 5.0), (2.0, 2.0), (3.0, 3.0), (1.0, 5.0)];
    assert_eq!(dominated_by(&pts, 0), None);
    assert_eq!(dominated_by(&pts, 1), None);
    assert_eq!(dominated_by(&pts, 2), Some(1));
    assert_eq!(dominated_by(&pts, 3), None, "a tie is not beaten");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Pruning never removes a configuration that a run holds at some count, and the floor
    /// is never above the smallest count that holds.
    #[test]
    fn pruning_keeps_every_configuration_that_holds(
        rate in 1.0f64..40.0,
        prompt in 50u32..6000,
        output in 2u32..300,
        ttft_ms in 20.0f64..800.0,
        tpot_ms in 3.0f64..40.0,
    ) {
        let mut space = small(rate, prompt, output, ttft_ms, tpot_ms);
        space.short_s = 10.0;
        space.max_replicas = 3;
        space.axes = vec![axis("tp", &["1", "2"]), axis("max_seqs", &["8", "256"])];
        let s = Search::new(space.clone()).unwrap();
        let all = exhaustive(&space).unwrap();
        for p in &s.pruned {
            let found = all.iter().find(|(set, _)| *set == p.settings).map(|(_, n)| *n);
            prop_assert_eq!(found, Some(None), "{:?} pruned for {:?}", p.settings, p.reason);
        }
        for c in &s.candidates {
            let found = all.iter().find(|(set, _)| *set == c.settings).and_then(|(_, n)| *n);
            if let Some(n) = found {
                prop_assert!(c.floor.replicas <= n, "{:?}: floor {:?}, holds at {}", c.settings, c.floor, n);
            }
        }
    }
}

#[test]
fn the_seed_answer_is_said_from_its_runs() {
    let mut s = Search::new(Space::seed()).expect("the seed space");
    s.run_here().expect("runs");
    let w = answer::words().expect("advisor.toml reads");
    let said = answer::answer(&s, &w.answer);
    let keys: Vec<&str> = said.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys, ["best", "binds", "cheaper", "estimate"], "{said:?}");
    for (key, sentence) in &said {
        assert!(
            !sentence.contains('—') && !sentence.contains('{'),
            "{key}: {sentence}"
        );
    }
    let (best, n) = s.best().unwrap();
    let c = &s.candidates[best];
    let best_line = &said[0].1;
    assert!(
        best_line.contains(&trainer_engine::format::money(c.dollars_per_hour(n))),
        "{best_line}"
    );
    // The calculator's estimate for the seed is its fleet question's answer.
    let e = answer::estimate(&s).expect("the calculator sizes the seed");
    let d = crate::sizing::derive(
        crate::sizing::Question::Fleet,
        &crate::sizing::Inputs::defaults(crate::sizing::Question::Fleet),
    )
    .unwrap();
    assert_eq!(e.replicas, d.step("replicas").unwrap().value);
    // A guess is set beside what the runs found, and the sentence follows its side.
    let found = n * c.gpus_per_replica;
    let say = |g| answer::guessed(&s, &w.answer, g).unwrap();
    assert!(say(found).contains("as many as"), "{}", say(found));
    assert!(say(found + 5).contains("5 more than"), "{}", say(found + 5));
    assert!(
        say(found - 1).contains("1 fewer than"),
        "{}",
        say(found - 1)
    );
    assert!(say(found).contains(&format!("said {}", trainer_engine::format::int(e.gpus))));
    assert!(say(1).starts_with("You guessed 1 GPU:"), "{}", say(1));
    // Every pruned reason reads without a gap.
    for p in &s.pruned {
        let r = answer::reason(&w.reasons, p);
        assert!(!r.contains('—') && !r.is_empty(), "{r}");
    }
}

#[test]
fn nothing_holding_is_said_plainly() {
    // A 1 ms TTFT target: every candidate is pruned by its prefill.
    let mut space = small(1.0, 500, 50, 1.0, 20.0);
    space.axes = vec![axis("tp", &["1", "3"])];
    let mut s = Search::new(space).unwrap();
    s.run_here().unwrap();
    assert!(s.best().is_none());
    let w = answer::words().unwrap();
    let said = answer::answer(&s, &w.answer);
    assert_eq!(said.len(), 1);
    assert_eq!(said[0].0, "none");
    assert!(!said[0].1.contains('—'), "{}", said[0].1);
    let reasons: Vec<String> = s
        .pruned
        .iter()
        .map(|p| answer::reason(&w.reasons, p))
        .collect();
    assert!(
        reasons.iter().any(|r| r.contains("refused 3")),
        "{reasons:?}"
    );
    assert!(reasons.iter().any(|r| r.contains("prefill")), "{reasons:?}");
}

#[test]
fn the_form_round_trips_and_names_bad_values() {
    let f = Form::default();
    assert_eq!(f.query(), "");
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    assert_eq!(f.space(), Space::seed());
    let q =
        "rate=20&prompt=2000&ttft=300&pct=p90&tp=1%2C4&max_seqs=512&gpus=h100-sxm%3A3%2Ch200%3A4.5";
    let f = Form::from_query(q);
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    assert_eq!(Form::from_query(&f.query()), f);
    let space = f.space();
    assert_eq!(space.targets.percentile, Percentile::P90);
    assert_eq!(space.targets.ttft_s, 0.3);
    assert_eq!(space.axes[0].knob, "gpu");
    assert_eq!(space.axes[0].values, ["h100-sxm", "h200"]);
    assert!(space.base.contains("rate=20") && space.base.contains("prompt_a=2000"));
    let bad = Form::from_query("rate=-3&ttft=abc&pct=p42&tp=3&gpus=h100-sxm&budget=&colour=red");
    for key in ["rate", "ttft", "pct", "tp", "gpus", "budget", "colour"] {
        assert!(bad.errors.contains_key(key), "{key}: {:?}", bad.errors);
    }
    // Each bad field keeps its default.
    assert_eq!(bad.space(), Space::seed());
}

#[test]
fn a_gpus_price_is_what_its_runs_and_its_lab_link_cost() {
    let run = |price: f64| {
        let mut space = small(6.0, 500, 60, 500.0, 20.0);
        space.axes = vec![axis("tp", &["1"])];
        space.prices = vec![("h100-sxm".into(), price)];
        let mut s = Search::new(space).unwrap();
        s.run_here().unwrap();
        let (i, n) = s.best().expect("holds");
        (s.run_at(i, n).unwrap().clone(), s.setup(i, n).query())
    };
    let (cheap, _) = run(2.5);
    let (dear, link) = run(5.0);
    assert_eq!(dear.replicas, cheap.replicas);
    assert_eq!(dear.dollars_per_hour, 2.0 * cheap.dollars_per_hour);
    let ratio = dear.dollars_per_million / cheap.dollars_per_million;
    assert!((ratio - 2.0).abs() < 1e-9, "{ratio}");
    assert!(link.contains("price=5"), "{link}");
}

#[test]
fn the_estimates_sentence_follows_its_figures() {
    use answer::{estimate_case, Estimate, EstimateCase};
    let e = Estimate {
        replicas: 8.0,
        gpus: 8.0,
        dollars_per_hour: 20.0,
        batch: 32.0,
    };
    assert_eq!(estimate_case(&e, 7.5, 45.0), EstimateCase::MoreBatched);
    // 8,000-token prompts: the runs held 12 streams a replica, fewer than the assumed 32, so
    // the batch is not why the estimate asks for more.
    assert_eq!(estimate_case(&e, 7.5, 12.0), EstimateCase::More);
    assert_eq!(estimate_case(&e, 25.0, 12.0), EstimateCase::Fewer);
    assert_eq!(estimate_case(&e, 20.0, 40.0), EstimateCase::Same);
}

/// The model is the learner's: a model that does not fit one GPU is searched on the tensor
/// parallelism that holds it (the lab's order sets the model first; the refused value is
/// tried again once the split is set), and the combinations it does not fit are ruled out
/// with the knob's reason, not the whole search. A model the catalog lacks is named.
#[test]
fn a_larger_model_is_searched_on_the_split_that_holds_it() {
    let f =
        Form::from_query("model=llama-3.1-70b&tpot=40&tp=1,4&weights=bf16&max_seqs=64&budget=2048");
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    assert_eq!(Form::from_query(&f.query()), f);
    let s = Search::new(f.space()).unwrap();
    assert_eq!(s.candidates.len(), 1, "{:?}", s.pruned);
    assert!(s.candidates[0]
        .settings
        .contains(&("tp".into(), "4".into())));
    assert_eq!(s.candidates[0].gpus_per_replica, 4);
    let cfg = &s.setup(0, 1).config;
    assert_eq!(cfg.pools[0].replica.deployment.model.id, "llama-3.1-70b");
    assert_eq!(s.pruned.len(), 1);
    assert!(
        matches!(&s.pruned[0].reason, Reason::Invalid { knob, .. } if knob == "model"),
        "{:?}",
        s.pruned[0]
    );
    let bad = Form::from_query("model=gpt-9");
    assert!(
        bad.errors["model"].contains("llama-3.1-8b"),
        "{:?}",
        bad.errors
    );
    assert_eq!(bad.space(), Space::seed());
}

/// The calculator's estimate beside the answer is for the model searched, on the split of
/// the first candidate: a 70B search is not compared with the 8B's arithmetic.
#[test]
fn the_estimate_is_for_the_model_searched() {
    let space = |q: &str| Form::from_query(q).space();
    let seed = answer::estimate(&Search::new(Space::seed()).unwrap()).unwrap();
    let big = Search::new(space("model=llama-3.1-70b&tpot=40&tp=4")).unwrap();
    let e = answer::estimate(&big).unwrap();
    assert_eq!(e.gpus, e.replicas * 4.0, "{e:?}");
    assert!(e.replicas > seed.replicas, "{e:?} against {seed:?}");
}

/// The page's URL carries the guess and whether the search ran beside the form, and reads
/// them back; a bad `run` is named, and neither is a field of the form.
#[test]
fn the_page_query_keeps_the_guess_and_the_run() {
    let f = Form::from_query("rate=20&tp=1");
    let page = form::PageState {
        guess: "4".into(),
        run: true,
    };
    let q = f.page_query(&page);
    assert_eq!(q, "rate=20&tp=1&guess=4&run=1");
    assert_eq!(Form::from_page_query(&q), (f.clone(), page));
    assert_eq!(Form::default().page_query(&form::PageState::default()), "");
    let (bad, p) = Form::from_page_query("run=yes&guess=two");
    assert!(bad.errors["run"].contains("yes"), "{:?}", bad.errors);
    assert!(!p.run);
    // The guess is kept as typed: the page names it when the search starts.
    assert_eq!(p.guess, "two");
    assert!(!bad.errors.contains_key("guess"));
}

/// Speculation is one more entry of the form's choices, not a new loop: off alone leaves the
/// search as it was; ticking a proposer searches it beside off, and on a small space the
/// search still returns exactly what running every count returns.
#[test]
fn speculation_is_searched_by_naming_its_knob() {
    assert!(!Space::seed().axes.iter().any(|a| a.knob == "spec"));
    let f = Form::from_query("spec=off,eagle&tp=1&weights=fp8&max_seqs=64&budget=2048");
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    let spec = f
        .space()
        .axes
        .into_iter()
        .find(|a| a.knob == "spec")
        .unwrap();
    assert_eq!(spec.values, ["off", "eagle"]);
    let mut space = small(6.0, 500, 60, 500.0, 20.0);
    space.axes = vec![axis("spec", &["off", "ngram", "eagle"])];
    let mut s = Search::new(space.clone()).unwrap();
    assert_eq!(s.candidates.len(), 3, "{:?}", s.pruned);
    s.run_here().unwrap();
    let mut all = exhaustive(&space).unwrap();
    all.sort();
    assert_eq!(short_counts(&s), all);
}

/// The traffic may come from any shipped fleet scenario: its rate, lengths, targets, model
/// and GPU become the form's defaults (the choices ticked stay), the link names it, and the
/// search runs on it. An unknown one is named.
#[test]
fn a_scenario_gives_the_traffic() {
    let f = Form::from_query("scenario=fleet-rag-70b&tp=4,8&rate=3");
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    assert_eq!(f.scenario, "fleet-rag-70b");
    assert_eq!(f.model, "llama-3.1-70b");
    assert_eq!(f.traffic["rate"], "3");
    assert_eq!(Form::from_query(&f.query()), f);
    assert!(
        f.query().starts_with("scenario=fleet-rag-70b"),
        "{}",
        f.query()
    );
    let space = f.space();
    assert!(
        space.base.starts_with("preset=fleet-rag-70b"),
        "{}",
        space.base
    );
    // The scenario's own model is no axis.
    assert!(!space.axes.iter().any(|a| a.knob == "model"));
    let s = Search::new(space).unwrap();
    let cfg = &s.setup(0, 1).config;
    assert_eq!(cfg.pools[0].replica.deployment.model.id, "llama-3.1-70b");
    assert_eq!(cfg.traffic[0].workload.arrival.mean_rate(), 3.0);
    // The seed's form is unchanged by naming its own scenario.
    assert_eq!(
        Form::from_query("scenario=fleet-seed").space(),
        Space::seed()
    );
    let bad = Form::from_query("scenario=fleet-nope");
    assert!(
        bad.errors["scenario"].contains("fleet-seed"),
        "{:?}",
        bad.errors
    );
}
