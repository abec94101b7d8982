//! The roofline question: intensity against the ridge, the weight-read floor, the batch limits
//! and why the streaming fleet needs the count the seed question found, worked from the
//! brief's figures by hand, held to the cost model's own step times and to the fleet question.

use proptest::prelude::*;
use trainer_course::sizing::{
    derive, roofline_plot, Derivation, Inputs, Limit, Pressure, Question,
};
use trainer_engine::cost::CostModel;

const Q: Question = Question::Roofline;

/// The seed's figures as the brief gives them, in SI units.
const PARAMS: f64 = 8_030_261_248.0;
const PEAK_FLOPS: f64 = 989e12;
const HBM: f64 = 3.35e12;
const MFU: f64 = 0.5;
const MBU: f64 = 0.75;
const KV_PER_TOKEN: f64 = 2.0 * 32.0 * 8.0 * 128.0 * 2.0;
/// Attention's FLOPs per attended position: 4 × layers × heads × head dim.
const ATTN: f64 = 4.0 * 32.0 * 32.0 * 128.0;

fn derive_with(pairs: &[(&str, f64)]) -> Derivation {
    let mut inputs = Inputs::defaults(Q);
    for &(name, v) in pairs {
        inputs.set(Q, name, v).unwrap();
    }
    derive(Q, &inputs).expect("the inputs derive")
}

fn value(d: &Derivation, id: &str) -> f64 {
    d.step(id).unwrap_or_else(|| panic!("no step {id}")).value
}

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        "{what}: {a} is not {b}"
    );
}

/// The brief's decode step at batch `b` and context `c` (memory-bound, no overheads).
fn brief_step(b: f64, c: f64) -> f64 {
    let bytes = 2.0 * PARAMS + b * c * KV_PER_TOKEN;
    let compute = b * (2.0 * PARAMS + ATTN * c) / (PEAK_FLOPS * MFU);
    (bytes / (HBM * MBU)).max(compute)
}

#[test]
fn the_defaults_reproduce_the_hand_derivation() {
    let d = derive(Q, &Inputs::defaults(Q)).unwrap();
    let w = 2.0 * PARAMS;
    let ctx = 1_125.0;
    close(value(&d, "ridge_peak"), PEAK_FLOPS / HBM, "ridge at peaks");
    let ridge = PEAK_FLOPS * MFU / (HBM * MBU);
    close(value(&d, "ridge_point"), ridge, "ridge");
    // One prompt of 1,000 tokens in one step: its FLOPs over the weights and its cache.
    let prefill =
        (1_000.0 * 2.0 * PARAMS + ATTN * 1_000.0 * 1_001.0 / 2.0) / (w + 1_000.0 * KV_PER_TOKEN);
    close(value(&d, "prefill_intensity"), prefill, "prefill intensity");
    assert_eq!(d.step("prefill_bound").unwrap().check, Some(true));
    let decode = 32.0 * (2.0 * PARAMS + ATTN * ctx) / (w + 32.0 * ctx * KV_PER_TOKEN);
    close(value(&d, "decode_intensity"), decode, "decode intensity");
    assert!((25.0..26.0).contains(&decode), "{decode}");
    assert_eq!(d.step("decode_bound").unwrap().check, Some(true));
    close(value(&d, "weight_floor"), w / (HBM * MBU), "weight floor");
    // 6.39 ms: the brief's 8.3 ms step less its cache reads.
    assert_eq!(d.step("weight_floor").unwrap().display, "6.39 ms");
    let limit = (2.0 * PARAMS + ATTN * ctx) / (ctx * KV_PER_TOKEN);
    close(value(&d, "decode_limit"), limit, "level-off");
    assert!(
        limit < ridge,
        "the seed's decode levels off under the ridge"
    );
    // So at the seed's context decode never crosses; with the cache free it does, near the
    // ridge in sequences (one byte of weight per FLOP in BF16).
    assert_eq!(value(&d, "compute_bound_batch"), 0.0);
    assert_eq!(d.step("compute_bound_batch").unwrap().display, "never");
    let free = value(&d, "weights_only_batch");
    assert!((ridge..ridge + 2.0).contains(&free), "{free}");
    // The largest batch within 20 ms: the step at it fits, one more does not.
    let b = value(&d, "tpot_batch");
    assert_eq!(b, 231.0);
    assert!(brief_step(b, ctx) <= 0.020 && brief_step(b + 1.0, ctx) > 0.020);
    assert_eq!(value(&d, "pool_batch"), (416_103.0f64 / ctx).floor());
    assert_eq!(value(&d, "largest_batch"), 231.0);
    // The seed question's count at batch 32; five at the largest batch; but the traffic gives
    // five replicas only fifty streams each, so the batch never forms, and the count where it
    // does is eight again, at a batch of 32.
    assert_eq!(value(&d, "replicas_assumed"), 8.0);
    assert_eq!(value(&d, "replicas_largest"), 5.0);
    assert_eq!(value(&d, "open_streams"), 250.0);
    assert_eq!(d.step("fills_check").unwrap().check, Some(false));
    let fills = d.said("fills").unwrap();
    assert_eq!(fills.key, "fills_no");
    assert!(fills.text.contains("about 50 streams") && fills.text.contains("231"));
    assert_eq!(value(&d, "replicas_traffic"), 8.0);
    assert!(d
        .step("replicas_traffic")
        .unwrap()
        .display
        .contains("a batch of 32 each"));
    // The verdict: HBM and the target bind, compute (prefill) weighs in, the pool has room.
    let v = &d.verdict;
    assert_eq!(v.pressure(Limit::HbmBandwidth), Some(Pressure::Binding));
    assert_eq!(v.pressure(Limit::LatencyTarget), Some(Pressure::Binding));
    assert_eq!(v.pressure(Limit::Compute), Some(Pressure::Secondary));
    assert_eq!(v.pressure(Limit::KvCapacity), Some(Pressure::Slack));
    assert!(v.summary.contains("never") || v.summary.contains("231"));
}

#[test]
fn the_assumed_count_is_the_fleet_questions_own() {
    for pairs in [
        vec![],
        vec![("rate", 120.0), ("batch", 64.0)],
        vec![("prompt_tokens", 4_000.0), ("ceiling", 0.8)],
        vec![
            ("output_tokens", 1_000.0),
            ("tpot_ms", 40.0),
            ("batch", 16.0),
        ],
    ] {
        let d = derive_with(&pairs);
        let mut fleet = Inputs::defaults(Question::Fleet);
        for &(name, v) in &pairs {
            fleet.set(Question::Fleet, name, v).unwrap();
        }
        let f = derive(Question::Fleet, &fleet).unwrap();
        assert_eq!(
            value(&d, "replicas_assumed"),
            value(&f, "replicas"),
            "{pairs:?}"
        );
        assert_eq!(value(&d, "open_streams"), value(&f, "open_streams"));
    }
}

#[test]
fn a_short_context_lets_decode_cross_the_ridge_inside_the_pool() {
    // Ten tokens in, ten out: the cache is small beside the weights, so a big batch reaches
    // the ridge, and the step at the crossing is compute-bound by the cost model's own times.
    let d = derive_with(&[("prompt_tokens", 10.0), ("output_tokens", 10.0)]);
    let crossing = value(&d, "compute_bound_batch");
    assert!(crossing > 0.0, "a crossing");
    assert!(value(&d, "decode_limit") > value(&d, "ridge_point"));
    let cost = CostModel::new(
        trainer_engine::cost::Deployment::seed(),
        trainer_engine::cost::Efficiency::brief(MFU, MBU),
    )
    .unwrap();
    let at = cost.decode_step(crossing as u32, 15);
    let before = cost.decode_step(crossing as u32 - 1, 15);
    assert!(at.compute_s >= at.memory_s && before.compute_s < before.memory_s);
    assert!(d
        .step("compute_bound_batch")
        .unwrap()
        .why
        .contains("inside"));
}

#[test]
fn the_plot_draws_the_steps_figures() {
    let inputs = Inputs::defaults(Q);
    let d = derive(Q, &inputs).unwrap();
    let p = roofline_plot(&inputs).unwrap();
    close(p.ridge, value(&d, "ridge_point"), "ridge");
    close(
        p.roof_flops / p.bandwidth,
        p.ridge,
        "roofs meet at the ridge",
    );
    close(p.assumed.1, value(&d, "decode_intensity"), "assumed point");
    close(p.prefill.0, value(&d, "prefill_intensity"), "prefill point");
    assert_eq!(p.largest.0 as f64, value(&d, "largest_batch"));
    close(p.decode_limit, value(&d, "decode_limit"), "level-off");
    // Every point sits on or under the roof, and decode's intensity rises with the batch
    // towards its level-off.
    let roof = |i: f64| (p.bandwidth * i).min(p.roof_flops);
    for &(_, i, f) in p.decode.iter().chain([&p.assumed, &p.largest]) {
        assert!(f <= roof(i) * (1.0 + 1e-9), "{i} {f}");
    }
    assert!(p.prefill.1 <= roof(p.prefill.0) * (1.0 + 1e-9));
    for w in p.decode.windows(2) {
        assert!(w[0].0 < w[1].0 && w[0].1 < w[1].1 && w[1].1 < p.decode_limit);
    }
    assert_eq!(p.decode.last().unwrap().0 as f64, value(&d, "pool_batch"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// For any load and target: the target's batch is the largest whose step fits; the
    /// crossing exists only when the level-off is past the ridge; the traffic's count is never
    /// below the count at the largest batch.
    #[test]
    fn the_limits_agree_with_the_cost_model(
        rate in 1.0f64..400.0,
        prompt in 10u32..16_000,
        output in 10u32..2_000,
        tpot in 8.0f64..80.0,
        batch in 1u32..256,
    ) {
        let mut inputs = Inputs::defaults(Q);
        for (name, v) in [
            ("rate", rate),
            ("prompt_tokens", prompt as f64),
            ("output_tokens", output as f64),
            ("tpot_ms", tpot),
            ("batch", batch as f64),
        ] {
            inputs.set(Q, name, v).unwrap();
        }
        let Ok(d) = derive(Q, &inputs) else { return Ok(()) };
        let ctx = value(&d, "avg_context").round();
        let tb = value(&d, "tpot_batch");
        if tb >= 1.0 {
            prop_assert!(brief_step(tb, ctx) <= tpot / 1e3 * (1.0 + 1e-9));
        }
        prop_assert!(brief_step(tb + 1.0, ctx) > tpot / 1e3 || tb >= 16_384.0);
        let crossing = value(&d, "compute_bound_batch");
        if value(&d, "decode_limit") < value(&d, "ridge_point") {
            prop_assert_eq!(crossing, 0.0);
        }
        if crossing > 0.0 {
            prop_assert!(crossing <= value(&d, "pool_batch"));
        }
        prop_assert_eq!(
            d.step("decode_bound").unwrap().check,
            Some(value(&d, "decode_intensity") < value(&d, "ridge_point"))
        );
        // The sentence on the largest batch says what its check found.
        let fills = d.said("fills").unwrap();
        prop_assert_eq!(
            fills.key == "fills_yes",
            d.step("fills_check").unwrap().check == Some(true) && value(&d, "largest_batch") > 0.0
        );
        prop_assert_eq!(fills.key == "fills_none", value(&d, "largest_batch") == 0.0);
        // The count the traffic sets, against the assumed batch's, as the sentence says.
        let (t, a) = (value(&d, "replicas_traffic"), value(&d, "replicas_assumed"));
        let expected = if t == 0.0 {
            "traffic_none"
        } else if t < a {
            "traffic_fewer"
        } else if t > a {
            "traffic_more"
        } else {
            "traffic_same"
        };
        prop_assert_eq!(d.said("traffic").unwrap().key, expected);
        // Compute has room only when neither prefill nor decode reaches the ridge.
        let prefill_above = d.step("prefill_bound").unwrap().check == Some(true);
        let decode_below = d.step("decode_bound").unwrap().check == Some(true);
        prop_assert_eq!(
            d.verdict.pressure(Limit::Compute) == Some(Pressure::Slack),
            decode_below && !prefill_above
        );
        let traffic = value(&d, "replicas_traffic");
        if traffic > 0.0 && value(&d, "largest_batch") >= 1.0 {
            prop_assert!(traffic >= value(&d, "replicas_largest"));
        }
    }
}

#[test]
fn the_simulators_engine_works_the_same_steps_at_its_own_efficiencies() {
    use trainer_course::sizing::derive_on_engine;
    use trainer_engine::cost::{Deployment, Efficiency, MemoryConfig};
    let inputs = Inputs::defaults(Q);
    let d = derive(Q, &inputs).unwrap();
    let e = derive_on_engine(Q, &inputs).unwrap();
    assert_eq!(
        d.steps.iter().map(|s| s.id).collect::<Vec<_>>(),
        e.steps.iter().map(|s| s.id).collect::<Vec<_>>()
    );
    let cost = CostModel::new(Deployment::seed(), Efficiency::CALIBRATED).unwrap();
    // The floor is the engine's own step of one sequence: its weight read and its fixed costs.
    close(
        value(&e, "weight_floor"),
        cost.decode_step(1, 0).total_s,
        "engine floor",
    );
    assert!(cost.decode_step(1, 0).overhead_s > 0.0);
    // The target's batch is the largest whose step the engine runs within it.
    let b = value(&e, "tpot_batch") as u32;
    assert!(cost.decode_step(b, 1_125).total_s <= 0.020);
    assert!(cost.decode_step(b + 1, 1_125).total_s > 0.020);
    assert_eq!(
        value(&e, "pool_batch"),
        (cost.kv_pool_tokens(&MemoryConfig::VLLM) / 1_125.0).floor()
    );
}

/// Regression: sentences that held only at the seed. A target no step meets, a short prompt
/// below the ridge, a larger model whose target allows less than the assumed batch, and a rate
/// no fleet carries each get a sentence that is true of their figures.
#[test]
fn the_conclusions_hold_away_from_the_seed() {
    let d = derive_with(&[("tpot_ms", 0.1)]);
    assert_eq!(value(&d, "largest_batch"), 0.0);
    assert_eq!(
        value(&d, "replicas_traffic"),
        0.0,
        "no batch meets the target"
    );
    assert_eq!(d.said("fills").unwrap().key, "fills_none");
    assert!(
        d.verdict.summary.contains("No decode step meets"),
        "{}",
        d.verdict.summary
    );
    let d = derive_with(&[("prompt_tokens", 10.0), ("output_tokens", 10.0)]);
    assert_eq!(d.verdict.pressure(Limit::Compute), Some(Pressure::Slack));
    assert!(!d.verdict.summary.contains("Prefill is compute-bound"));
    let mut inputs = Inputs::defaults(Q);
    inputs.set_choice(Q, "model", "llama-3.1-70b").unwrap();
    inputs.set(Q, "gpus_per_replica", 4.0).unwrap();
    inputs.set(Q, "prompt_tokens", 8_000.0).unwrap();
    let d = derive(Q, &inputs).unwrap();
    assert!(value(&d, "largest_batch") < 32.0);
    assert!(value(&d, "replicas_largest") > value(&d, "replicas_assumed"));
    assert!(d.step("replicas_largest").unwrap().why.contains("rises"));
    assert_eq!(d.said("traffic").unwrap().key, "traffic_more");
    let d = derive_with(&[("rate", 1e6)]);
    assert_eq!(d.said("traffic").unwrap().key, "traffic_none");
    assert!(!d.verdict.summary.contains("gives each replica 0"));
}
