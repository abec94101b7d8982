//! The speculation question ("when does speculative decoding stop paying?"): its figures come
//! from the engine's own pricing of a speculating batch, its crossover is exactly where the
//! speedup reaches one, and it moves the way the physics says.

use trainer_course::sizing::{derive, Derivation, Inputs, Question};

const Q: Question = Question::Speculation;

fn with(pairs: &[(&str, f64)]) -> Derivation {
    let mut inputs = Inputs::defaults(Q);
    for &(name, v) in pairs {
        inputs.set(Q, name, v).expect("in range");
    }
    derive(Q, &inputs).expect("derives")
}

fn value(d: &Derivation, id: &str) -> f64 {
    d.step(id).unwrap_or_else(|| panic!("step {id}")).value
}

#[test]
fn the_reference_figures() {
    let d = with(&[]);
    // Three guesses right 60 % of the time: 1 + 0.6 + 0.36 + 0.216 tokens a step.
    assert!((value(&d, "tokens_per_step") - 2.176).abs() < 1e-12);
    // A reply of 250 tokens after a 1,000-token prompt brings 4 prompt tokens to every step.
    assert_eq!(value(&d, "prompt_share"), 4.0);
    // At a batch of 8 the plain step is a read of the weights, and guessing pays.
    assert!(value(&d, "speedup") > 1.5, "{}", value(&d, "speedup"));
    assert_eq!(
        d.step("spec_step").unwrap().value,
        value(&d, "verify_step") + value(&d, "proposer_time")
    );
    // The crossover lies inside the pool, at a rate Little's law gives from its step.
    let b = value(&d, "crossover_batch");
    assert!(b > 8.0 && b < value(&d, "pool_batch"), "{b}");
    let rate = value(&d, "crossover_rate");
    assert!((rate - b / (250.0 * value(&d, "crossover_tpot"))).abs() < 1e-9 * rate);
}

#[test]
fn the_crossover_is_where_the_speedup_reaches_one() {
    let b = value(&with(&[]), "crossover_batch");
    let at = with(&[("batch", b)]);
    let before = with(&[("batch", b - 1.0)]);
    assert!(value(&at, "speedup") <= 1.0, "{}", value(&at, "speedup"));
    assert!(
        value(&before, "speedup") > 1.0,
        "{}",
        value(&before, "speedup")
    );
}

#[test]
fn the_gain_falls_once_the_step_turns_compute_bound() {
    // While a step waits on memory the guesses ride along and the gain holds; past the
    // crossover the verifying step's arithmetic takes over and guessing costs time.
    let b = value(&with(&[]), "crossover_batch");
    let speedup = |batch: f64| value(&with(&[("batch", batch)]), "speedup");
    let quiet = [1.0, 4.0, 8.0].map(speedup);
    let busy = [b, 2.0 * b, 4.0 * b].map(speedup);
    assert!(quiet.iter().all(|&s| s > 1.5), "{quiet:?}");
    assert!(busy.iter().all(|&s| s <= 1.0), "{busy:?}");
}

#[test]
fn better_guesses_pay_to_a_bigger_batch_and_longer_prompts_stop_them_sooner() {
    let crossover = |pairs: &[(&str, f64)]| value(&with(pairs), "crossover_batch");
    let by_acceptance: Vec<f64> = [0.4, 0.5, 0.6, 0.7, 0.8]
        .iter()
        .map(|&a| crossover(&[("acceptance", a)]))
        .collect();
    assert!(
        by_acceptance.windows(2).all(|w| w[1] >= w[0]),
        "{by_acceptance:?}"
    );
    assert!(by_acceptance[4] > by_acceptance[0], "{by_acceptance:?}");
    // More prompt per reply puts more arithmetic in every step beside the guesses.
    let short = crossover(&[("prompt_tokens", 250.0)]);
    let long = crossover(&[("prompt_tokens", 4000.0)]);
    assert!(long < short, "{long} against {short}");
}

#[test]
fn a_crossover_beyond_the_pool_says_so() {
    // Long replies after short prompts: every step is mostly cache reads, so the pool fills
    // before guessing stops paying, and the answer is a lower bound read at the pool's limit.
    let d = with(&[
        ("acceptance", 0.8),
        ("prompt_tokens", 100.0),
        ("output_tokens", 8000.0),
    ]);
    assert_eq!(value(&d, "crossover_batch"), value(&d, "pool_batch"));
    assert!(d
        .step("crossover_rate")
        .unwrap()
        .display
        .starts_with("above "));
    assert!(d.verdict.summary.contains("KV"), "{}", d.verdict.summary);
}

/// The simulator check: the question's replica (the seed's inputs) swept from a tenth of the
/// crossover rate the arithmetic found to twice it, guessing and not. Every run gains the tokens
/// a step the acceptance rate promises; guessing pays well at the quiet end; the busiest level
/// outruns the replica and is marked so; and the reading sets the arithmetic's crossover, and
/// its plain per-token time, beside the runs', saying why they differ when they do.
#[test]
fn the_simulator_check_sweeps_the_replica_around_the_arithmetic_crossover() {
    use trainer_course::sizing::sweep::{self, Derived};
    use trainer_course::sizing::{spec_check_fleet, speculation_check_text, SimCheckConfig};
    use trainer_engine::fleet::FleetSim;
    use trainer_engine::format::{duration, sig};
    let inputs = Inputs::defaults(Q);
    let d = derive(Q, &inputs).expect("derives");
    let derived = Derived {
        rate: value(&d, "crossover_rate"),
        tpot_s: value(&d, "crossover_tpot"),
    };
    let base = spec_check_fleet(&inputs, &d, &SimCheckConfig::DEFAULT).expect("a fleet");
    assert_eq!(base.pools.len(), 1);
    assert_eq!(base.pools[0].replicas, 1);
    assert!((base.offered_rate() - derived.rate).abs() < 1e-9 * derived.rate);
    let runs = sweep::fleets(&base);
    assert_eq!(runs.len(), 2 * sweep::LOADS.len());
    let reports: Vec<_> = runs
        .into_iter()
        .map(|f| {
            let mut sim = FleetSim::new(f).expect("sim");
            sim.run();
            sim.report()
        })
        .collect();
    let pts = sweep::points(&base, &reports);
    assert_eq!(
        pts,
        sweep::run(&base).expect("the sweep runs"),
        "the same runs"
    );
    for p in &pts {
        assert!((p.tokens_per_step / 2.176 - 1.0).abs() < 0.05, "{p:?}");
    }
    assert!(pts[0].speedup > 1.5, "{:?}", pts[0]);
    assert!(
        !pts[0].overloaded && pts[pts.len() - 1].overloaded,
        "{pts:?}"
    );
    // A level is overloaded exactly when a run of it turned requests away or lost them.
    for (p, pair) in pts.iter().zip(reports.chunks_exact(2)) {
        let lost = pair
            .iter()
            .any(|r| r.outcomes.rejected() + r.outcomes.timed_out > 0);
        assert_eq!(p.overloaded, lost, "{p:?}");
    }
    let text = speculation_check_text().expect("the check's words");
    let read = sweep::reading(&text, &pts, Some(derived));
    assert!(read.contains(&sig(derived.rate, 3)), "{read}");
    assert!(read.contains(&duration(derived.tpot_s, 3)), "{read}");
    let far = sweep::crossover(&pts)
        .is_none_or(|m| (m - derived.rate).abs() > sweep::CLOSE * derived.rate);
    assert_eq!(read.contains(&text.derived_gap), far, "{read}");
    assert!(!read.contains('{'), "{read}");
}

/// The check refuses inputs the question refuses.
#[test]
fn the_simulator_check_refuses_bad_inputs() {
    use trainer_course::sizing::{spec_check_fleet, SimCheckConfig};
    let d = derive(Q, &Inputs::defaults(Q)).expect("derives");
    let mut bad = Inputs::defaults(Q);
    let _ = bad.set(Q, "acceptance", 7.0);
    let e = spec_check_fleet(&bad, &d, &SimCheckConfig::DEFAULT).expect_err("refused");
    assert_eq!(e.field, "acceptance");
}
