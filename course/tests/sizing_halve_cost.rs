//! The halve-the-cost question: the same traffic on half the replicas, the learner's number
//! formats against BF16. Each replica settles where Little's law puts it, and what each format
//! changes shows exactly where the cost model says it should.

use trainer_course::sizing::{derive, Derivation, Inputs, Question};

const Q: Question = Question::HalveCost;

fn with(choices: &[(&str, &str)], pairs: &[(&str, f64)]) -> Derivation {
    let mut inputs = Inputs::defaults(Q);
    for &(name, id) in choices {
        inputs.set_choice(Q, name, id).expect("a known option");
    }
    for &(name, v) in pairs {
        inputs.set(Q, name, v).expect("in range");
    }
    derive(Q, &inputs).expect("derives")
}

fn value(d: &Derivation, id: &str) -> f64 {
    d.step(id).unwrap_or_else(|| panic!("step {id}")).value
}

fn check(d: &Derivation, id: &str) -> bool {
    d.step(id)
        .and_then(|s| s.check)
        .unwrap_or_else(|| panic!("check {id}"))
}

/// Little's law holds at the settled batch: it keeps up, and one stream fewer would not
/// (B - 1 < tokens a second × t_step(B) <= B, since a smaller batch is never a longer step).
fn settles(d: &Derivation, batch: &str, tpot: &str) {
    let (b, t, need) = (value(d, batch), value(d, tpot), value(d, "replica_rate"));
    assert!(b >= need * t - 1e-9 && b - 1.0 < need * t, "{b} {t} {need}");
}

#[test]
fn the_reference_figures() {
    let d = with(&[], &[]);
    // Half the replicas for the same tokens: half the dollars per million.
    assert_eq!(value(&d, "cost_after") * 2.0, value(&d, "cost_before"));
    // 50 requests a second of 250 tokens over 4 replicas.
    assert_eq!(value(&d, "replica_rate"), 3125.0);
    assert_eq!(value(&d, "prompt_share"), 4.0);
    settles(&d, "bf16_batch", "bf16_tpot");
    settles(&d, "chosen_batch", "budget_tpot");
    // At the seed BF16 already holds 20 ms in the arithmetic, and FP8 weights and activations
    // (the default proposal) halve the weights' read: a shorter step at a smaller batch.
    assert!(check(&d, "bf16_check") && check(&d, "budget_check"));
    assert!(value(&d, "budget_tpot") < 0.6 * value(&d, "bf16_tpot"));
    assert!(value(&d, "chosen_batch") < value(&d, "bf16_batch"));
    assert_eq!(value(&d, "weight_bytes"), 8_030_261_248.0);
}

#[test]
fn bf16_chosen_is_the_baseline_itself() {
    let d = with(&[("weight_dtype", "bf16")], &[]);
    assert_eq!(value(&d, "budget_tpot"), value(&d, "bf16_tpot"));
    assert_eq!(value(&d, "chosen_batch"), value(&d, "bf16_batch"));
}

#[test]
fn fp8_activations_pay_only_where_the_step_waits_on_arithmetic() {
    // The seed's step waits on memory: FP8 matmuls change nothing a learner would see.
    let w8a16 = with(&[("weight_dtype", "fp8-weight-only")], &[]);
    let w8a8 = with(&[("weight_dtype", "fp8")], &[]);
    assert_eq!(value(&w8a16, "budget_tpot"), value(&w8a8, "budget_tpot"));
    // Long prompts put thousands of prompt tokens in every step: the step is arithmetic, and
    // BF16 matmuls (weight-only FP8 multiplies in BF16) cannot keep up at any batch, while FP8
    // tensor cores do, inside the target.
    let long = [
        ("prompt_tokens", 4000.0),
        ("output_tokens", 100.0),
        ("rate", 40.0),
    ];
    let w8a16 = with(&[("weight_dtype", "fp8-weight-only")], &long);
    let w8a8 = with(&[("weight_dtype", "fp8")], &long);
    assert!(!check(&w8a16, "budget_check"));
    assert!(w8a16
        .verdict
        .summary
        .contains("A larger pool would not help"));
    assert!(check(&w8a8, "budget_check"));
    settles(&w8a8, "chosen_batch", "budget_tpot");
}

#[test]
fn an_fp8_cache_doubles_the_pool_and_trims_the_read() {
    let bf16 = with(&[("weight_dtype", "bf16"), ("kv_dtype", "bf16")], &[]);
    let fp8 = with(&[("weight_dtype", "bf16"), ("kv_dtype", "fp8")], &[]);
    assert_eq!(
        value(&fp8, "kv_per_token") * 2.0,
        value(&bf16, "kv_per_token")
    );
    let (a, b) = (value(&bf16, "kv_pool"), value(&fp8, "kv_pool"));
    assert!((b - 2.0 * a).abs() <= 2.0, "{a} {b}");
    // A small saving at the seed's short contexts, where the weights are most of the read.
    assert!(value(&fp8, "budget_tpot") < value(&bf16, "budget_tpot"));
    assert!(value(&fp8, "budget_tpot") > 0.8 * value(&bf16, "budget_tpot"));
}

#[test]
fn a_tighter_target_is_where_the_formats_part() {
    // At 6 ms BF16 misses on four replicas and FP8 weights and activations hold.
    let d = with(&[], &[("tpot_ms", 6.0)]);
    assert!(!check(&d, "bf16_check"));
    assert!(check(&d, "budget_check"));
    assert!(
        d.verdict.summary.contains("inside the 6 ms target"),
        "{}",
        d.verdict.summary
    );
}

#[test]
fn one_replica_falls_behind_in_any_format_and_says_why() {
    for w in ["bf16", "fp8"] {
        let d = with(
            &[("weight_dtype", w), ("kv_dtype", "fp8")],
            &[("replicas", 1.0)],
        );
        assert!(!check(&d, "budget_check"));
        let shown = &d.step("budget_tpot").unwrap().display;
        assert!(shown.contains("falling behind"), "{shown}");
        // The step's arithmetic, not the pool, is what stops it.
        assert!(
            d.verdict.summary.contains("A larger pool would not help"),
            "{}",
            d.verdict.summary
        );
    }
}

/// The simulator check, natively: the budget in the learner's formats on the engine the
/// simulator validates (its calibrated per-step costs, Poisson arrivals, chunked prefill). The
/// arithmetic's step is a floor the simulator's p99 sits above; the order of the formats and
/// the verdict against the target carry over.
#[test]
fn the_simulator_check_runs_the_budget_in_the_learners_formats() {
    use trainer_course::sizing::{check_fleets_for, check_replicas, SimCheck, SimCheckConfig};
    use trainer_engine::fleet::FleetSim;
    let cfg = SimCheckConfig {
        duration_s: 60.0,
        ..SimCheckConfig::DEFAULT
    };
    let run = |weights: &str| {
        let mut inputs = Inputs::defaults(Q);
        inputs.set_choice(Q, "weight_dtype", weights).unwrap();
        let d = derive(Q, &inputs).unwrap();
        let replicas = check_replicas(Q, &inputs, &d);
        assert_eq!(replicas, 4);
        let fleets = check_fleets_for(Q, &inputs, replicas, &cfg).expect("configs");
        assert_eq!(
            fleets
                .iter()
                .map(|f| f.pools[0].replicas)
                .collect::<Vec<_>>(),
            vec![4, 3]
        );
        let mut sim = FleetSim::new(fleets[0].clone()).expect("sim");
        sim.run();
        (d, SimCheck::from_report(&fleets[0], &sim.report()))
    };
    let (bf16_d, bf16) = run("bf16");
    let (fp8_d, fp8) = run("fp8");
    assert!(fp8.passes(), "{fp8:?}");
    assert!(fp8.tpot_p99_s < bf16.tpot_p99_s, "{fp8:?} {bf16:?}");
    for (d, k) in [(&bf16_d, &bf16), (&fp8_d, &fp8)] {
        assert!(k.tpot_p99_s > value(d, "budget_tpot"), "{k:?}");
    }
}
