//! The batch question: the seed load as non-streaming batch work, worked from the brief's
//! arithmetic by hand and set beside the streaming fleet the same inputs size.

use trainer_course::sizing::{derive, Derivation, Inputs, Limit, Pressure, Question};
use trainer_engine::cost::{CostModel, MemoryConfig};

const Q: Question = Question::Batch;

/// The seed's figures as the brief gives them, in SI units.
const PARAMS: f64 = 8_030_261_248.0;
const PEAK_FLOPS: f64 = 989e12;
const HBM: f64 = 3.35e12;
const MFU: f64 = 0.5;
const MBU: f64 = 0.75;
const KV_PER_TOKEN: f64 = 2.0 * 32.0 * 8.0 * 128.0 * 2.0;

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

/// Asserts `a` equals `b` to within a relative 1e-12 (the order of floating-point operations
/// differs between the test and the derivation).
fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-12 * b.abs().max(1.0),
        "{what}: {a} is not {b}"
    );
}

#[test]
fn the_defaults_reproduce_the_hand_derivation_in_order() {
    let d = derive(Q, &Inputs::defaults(Q)).unwrap();
    let ids: Vec<&str> = d.steps.iter().map(|s| s.id).collect();
    assert_eq!(
        ids,
        [
            "prompt_tps",
            "output_tps",
            "prefill_per_token",
            "prefill_demand",
            "avg_context",
            "weight_bytes",
            "kv_per_token",
            "kv_pool",
            "batch_kv",
            "kv_check",
            "decode_bytes",
            "decode_step",
            "decode_throughput",
            "decode_demand",
            "replicas_exact",
            "replicas",
            "gpus",
            "cost_per_hour",
            "cost_per_million",
            "service_time",
            "jobs_in_flight",
            "completion_time",
            "completion_check",
            "streaming_replicas",
            "gpus_saved",
            "streaming_cost_per_million",
            "gateway_streams",
        ]
    );
    assert_eq!(d.answer().unwrap().id, "replicas");

    // 50 req/s of 1,000 prompt and 250 output tokens, by hand.
    let t_pf = 2.0 * PARAMS / (PEAK_FLOPS * MFU);
    let prefill_demand = 50.0 * 1000.0 * t_pf;
    close(
        value(&d, "prefill_demand"),
        prefill_demand,
        "prefill demand",
    );
    // A full batch of 256 at the average context of 1,000 + 250 / 2 = 1,125 tokens reads the
    // weights once and every job's K and V: 16.06 + 37.75 = 53.81 GB a step, at 3.35 TB/s x
    // 0.75 that is 21.4 ms, memory-bound (its arithmetic is about 8.6 ms).
    let bytes = 2.0 * PARAMS + 256.0 * 1125.0 * KV_PER_TOKEN;
    let step = bytes / (HBM * MBU);
    close(value(&d, "decode_bytes"), bytes, "decode bytes");
    close(value(&d, "decode_step"), step, "decode step");
    assert!((step - 21.42e-3).abs() < 0.005e-3, "{step}");
    let thr = 256.0 / step;
    close(value(&d, "decode_throughput"), thr, "decode throughput");
    let decode_demand = 50.0 * 250.0 / thr;
    close(value(&d, "decode_demand"), decode_demand, "decode demand");
    // (1.62 + 1.05) / 0.9 = 2.97, so 3 replicas against the streaming fleet's 8.
    let exact = (prefill_demand + decode_demand) / 0.9;
    close(
        value(&d, "replicas_exact"),
        exact,
        "replicas at the ceiling",
    );
    assert!((exact - 2.966).abs() < 0.001, "{exact}");
    assert_eq!(value(&d, "replicas"), 3.0);
    assert_eq!(value(&d, "gpus"), 3.0);
    close(value(&d, "cost_per_hour"), 3.0 * 2.5, "cost per hour");
    // $7.50 an hour over 12,500 x 3,600 = 45 million tokens an hour.
    close(
        value(&d, "cost_per_million"),
        7.5 / 45.0,
        "cost per million",
    );
    // One job alone: 1,000 x 32.5 us + 250 x 21.4 ms = 5.39 s. With three full batches of 256
    // the fleet holds 768 jobs, which Little's law turns into 768 / 50 = 15.36 s each.
    close(
        value(&d, "service_time"),
        1000.0 * t_pf + 250.0 * step,
        "service time",
    );
    assert_eq!(value(&d, "batch_kv"), 288_000.0);
    assert_eq!(value(&d, "jobs_in_flight"), 768.0);
    close(value(&d, "completion_time"), 15.36, "completion time");
    close(
        value(&d, "completion_check"),
        15.36 / 60.0,
        "completion share",
    );
    assert_eq!(value(&d, "streaming_replicas"), 8.0);
    assert_eq!(value(&d, "gpus_saved"), 5.0);
    close(
        value(&d, "streaming_cost_per_million"),
        20.0 / 45.0,
        "streaming cost per million",
    );
    assert_eq!(value(&d, "gateway_streams"), 0.0);
    for id in ["kv_check", "completion_check"] {
        assert_eq!(d.step(id).unwrap().check, Some(true), "{id}");
    }

    let display = |id: &str| d.step(id).unwrap().display.clone();
    assert_eq!(display("replicas"), "3 replicas");
    assert_eq!(display("cost_per_million"), "$0.17");
    assert_eq!(display("completion_time"), "15.4 s");
    assert_eq!(display("kv_check"), "passes (69 % of the limit)");
    assert_eq!(display("gateway_streams"), "0 streams (streaming: 250)");
    assert_eq!(
        d.step("decode_bytes").unwrap().substituted,
        "16.06 GB + 256 × 1,125 × 131,072 B = 16.06 + 37.75 GB"
    );
}

#[test]
fn the_figures_the_cost_model_knows_are_its_own() {
    let c = CostModel::seed();
    let d = derive(Q, &Inputs::defaults(Q)).unwrap();
    assert_eq!(value(&d, "prefill_per_token"), c.prefill_time_per_token());
    assert_eq!(value(&d, "decode_step"), c.decode_step(256, 1125).total_s);
    assert_eq!(
        value(&d, "decode_throughput"),
        c.decode_throughput(256, 1125)
    );
    assert_eq!(value(&d, "decode_bytes"), c.decode_bytes(256, 1125));
    assert_eq!(
        value(&d, "kv_pool"),
        c.kv_pool_tokens(&MemoryConfig::REFERENCE)
    );
    assert!(c.decode_step(256, 1125).memory_bound());
}

#[test]
fn at_the_larger_batch_prefill_compute_binds_and_the_completion_target_has_slack() {
    let d = derive(Q, &Inputs::defaults(Q)).unwrap();
    let v = &d.verdict;
    assert_eq!(v.binding(), [Limit::Compute]);
    assert_eq!(v.pressure(Limit::HbmBandwidth), Some(Pressure::Secondary));
    assert_eq!(v.pressure(Limit::KvCapacity), Some(Pressure::Secondary));
    assert_eq!(v.slack(), [Limit::LatencyTarget]);
    assert!(v.summary.starts_with("Compute bounds the answer."));
    assert!(v.summary.contains("69 %"), "{}", v.summary);

    // At the streaming batch of 32 the same traffic leans on HBM bandwidth again.
    let small = derive_with(&[("job_batch", 32.0)]);
    assert_eq!(small.verdict.binding(), [Limit::HbmBandwidth]);
}

#[test]
fn the_streaming_figures_are_the_fleet_question_s_own_at_the_same_inputs() {
    // A fleet page's query carries over: the shared inputs keep their names and meanings.
    let fleet_query = "rate=80&prompt_tokens=2000&batch=64&ceiling=0.7&tpot_ms=30&price=3";
    let (_, fleet_inputs, errors) = Inputs::from_query(&format!("question=fleet&{fleet_query}"));
    assert!(errors.is_empty(), "{errors:?}");
    let (q, batch_inputs, errors) = Inputs::from_query(&format!("question=batch&{fleet_query}"));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(q, Q);
    let fleet = derive(Question::Fleet, &fleet_inputs).unwrap();
    let batch = derive(Q, &batch_inputs).unwrap();
    for (mine, theirs) in [
        ("streaming_replicas", "replicas"),
        ("streaming_cost_per_million", "cost_per_million"),
        ("prefill_demand", "prefill_demand"),
        ("output_tps", "output_tps"),
    ] {
        assert_eq!(value(&batch, mine), value(&fleet, theirs), "{mine}");
    }
    let saved = value(&fleet, "replicas") - value(&batch, "replicas");
    assert_eq!(value(&batch, "gpus_saved"), saved);
    assert!(saved > 0.0, "{saved}");
}

#[test]
fn batch_work_needs_no_more_replicas_than_streaming_and_larger_batches_need_fewer() {
    let d = derive(Q, &Inputs::defaults(Q)).unwrap();
    assert!(value(&d, "replicas") < value(&d, "streaming_replicas"));
    for rate in [1.0, 5.0, 50.0, 200.0, 1000.0] {
        let d = derive_with(&[("rate", rate)]);
        assert!(
            value(&d, "replicas") <= value(&d, "streaming_replicas"),
            "rate {rate}"
        );
    }
    // Every batch the pool holds (369 jobs of 1,125 tokens): a bigger one never needs more
    // replicas, and it keeps more jobs waiting at once.
    let mut last = f64::INFINITY;
    for b in [32.0, 64.0, 128.0, 256.0, 369.0] {
        let d = derive_with(&[("job_batch", b)]);
        let r = value(&d, "replicas_exact");
        assert!(r < last, "batch {b}: {r} replicas after {last}");
        last = r;
    }
}

#[test]
fn a_batch_too_large_for_the_pool_fails_the_kv_check() {
    // The pool holds 416,103 tokens: 369 jobs of 1,125 tokens fit (415,125), 370 do not.
    let fits = derive_with(&[("job_batch", 369.0)]);
    assert_eq!(fits.step("kv_check").unwrap().check, Some(true));
    let over = derive_with(&[("job_batch", 370.0)]);
    let kv = over.step("kv_check").unwrap();
    assert_eq!(kv.check, Some(false));
    assert!(kv.value > 1.0 && kv.display.starts_with("fails"), "{kv:?}");
    assert_eq!(
        over.verdict.pressure(Limit::KvCapacity),
        Some(Pressure::Binding)
    );
    // A longer prompt at the default batch outgrows the pool too.
    let long = derive_with(&[("prompt_tokens", 2000.0)]);
    assert_eq!(long.step("kv_check").unwrap().check, Some(false));
}

#[test]
fn a_tight_completion_target_fails_and_binds() {
    let d = derive_with(&[("completion_s", 10.0)]);
    let c = d.step("completion_check").unwrap();
    assert_eq!(c.check, Some(false));
    close(c.value, 1.536, "completion share");
    assert!(d.verdict.binding().contains(&Limit::LatencyTarget));
    assert!(d.verdict.summary.contains("the batch must shrink"));
    // Filling batches of 256 from a trickle of jobs takes long: at 1 req/s one replica holds
    // 256 jobs, 256 s each.
    let slow = derive_with(&[("rate", 1.0)]);
    assert_eq!(value(&slow, "replicas"), 1.0);
    close(
        value(&slow, "completion_time"),
        256.0,
        "completion at 1 req/s",
    );
    assert_eq!(slow.step("completion_check").unwrap().check, Some(false));
}

#[test]
fn the_streaming_inputs_move_only_the_streaming_figures() {
    let base = derive(Q, &Inputs::defaults(Q)).unwrap();
    let d = derive_with(&[("batch", 64.0), ("ceiling", 0.8), ("tpot_ms", 40.0)]);
    for id in [
        "replicas",
        "cost_per_million",
        "completion_time",
        "decode_step",
    ] {
        assert_eq!(value(&d, id), value(&base, id), "{id}");
    }
    assert!(value(&d, "streaming_replicas") < value(&base, "streaming_replicas"));
}

#[test]
fn the_batch_question_round_trips_its_query() {
    let query = "question=batch&rate=60&completion_s=30&job_batch=128&job_ceiling=0.85&batch=64";
    let (q, inputs, errors) = Inputs::from_query(query);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(q, Q);
    assert_eq!(inputs.get("job_batch"), Some(128.0));
    assert_eq!(inputs.get("job_ceiling"), Some(0.85));
    assert_eq!(inputs.to_query(q), query);
    let (_, _, errors) = Inputs::from_query("question=batch&job_ceiling=0&completion_s=-1");
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["completion_s", "job_ceiling"]);
    // Beside its own batch and ceiling, the question names the streaming fleet's as such.
    let label = |name: &str| {
        Q.inputs()
            .into_iter()
            .find(|s| s.name == name)
            .map(|s| s.label)
            .unwrap()
    };
    assert!(label("batch").contains("streaming"));
    assert!(label("job_batch").contains("batch jobs"));
    assert!(!label("batch").eq(label("job_batch")));
}
