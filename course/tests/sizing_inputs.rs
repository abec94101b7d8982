//! The sizing inputs: query strings round-trip, and every bad value is an error on its own
//! field, never a panic.

use proptest::prelude::*;
use trainer_course::sizing::{derive, questions, InputKind, Inputs, Question};
use trainer_engine::catalog::{gpus, models, Dtype, WeightFormat};

/// Parses a query and returns the fields its errors name.
fn error_fields(query: &str) -> Vec<String> {
    let (_, _, errors) = Inputs::from_query(query);
    errors.into_iter().map(|e| e.field).collect()
}

#[test]
fn defaults_render_as_the_bare_question() {
    for q in questions() {
        let query = Inputs::defaults(q).to_query(q);
        assert_eq!(query, format!("question={}", q.id()));
        let (q2, inputs, errors) = Inputs::from_query(&query);
        assert_eq!((q2, errors.len()), (q, 0));
        assert_eq!(inputs, Inputs::defaults(q));
    }
}

#[test]
fn only_changed_inputs_are_written() {
    let (q, inputs, errors) =
        Inputs::from_query("?question=fleet&model=llama-3.1-8b&rate=60&colour=blue");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(q, Question::Fleet);
    assert_eq!(inputs.get("rate"), Some(60.0));
    assert_eq!(inputs.to_query(q), "question=fleet&rate=60");

    let (q, inputs, errors) =
        Inputs::from_query("question=chats-per-replica&gpu=h200&weight_dtype=fp8&params=70e9");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(inputs.get("peak_tflops"), Some(1979.0));
    assert_eq!(inputs.get("gpu_mem_gb"), Some(141.0));
    // Active parameters follow a custom count on a dense model.
    assert_eq!(inputs.get("active_params"), Some(70e9));
    assert_eq!(
        inputs.to_query(q),
        "question=chats-per-replica&gpu=h200&weight_dtype=fp8&params=70000000000"
    );
}

#[test]
fn choosing_a_preset_resets_its_figures() {
    let q = Question::Fleet;
    let mut inputs = Inputs::defaults(q);
    inputs.set(q, "params", 9e9).unwrap();
    assert_eq!(inputs.get("active_params"), Some(9e9));
    assert!(!inputs.is_default(q, "params") && inputs.is_default(q, "active_params"));
    inputs.set_choice(q, "model", "mixtral-8x7b").unwrap();
    assert_eq!(inputs.get("params"), Some(46_702_792_704.0));
    assert_eq!(inputs.get("active_params"), Some(12_879_925_248.0));
    inputs.set_text(q, "mfu", " 40% ").unwrap();
    assert_eq!(inputs.get("mfu"), Some(0.4));
    inputs.set_text(q, "kv_dtype", "fp8").unwrap();
    assert_eq!(inputs.kv_dtype(), Dtype::Fp8);
    assert!(inputs.set_choice(q, "gpu", "tpu-v5").is_err());
    assert_eq!(inputs.gpu(), "h100-sxm");
}

/// Each bad query, the one field its error must name, and a word of the message.
const BAD_QUERIES: &[(&str, &str, &str)] = &[
    ("rate=", "rate", "empty"),
    ("rate", "rate", "empty"),
    ("rate=abc", "rate", "not a number"),
    ("rate=NaN", "rate", "finite"),
    ("hbm_tb_s=inf", "hbm_tb_s", "finite"),
    ("rate=-5", "rate", "negative"),
    ("rate=0", "rate", "greater than zero"),
    ("ceiling=0", "ceiling", "greater than zero"),
    (
        "gpus_per_replica=0",
        "gpus_per_replica",
        "greater than zero",
    ),
    ("gpus_per_replica=65", "gpus_per_replica", "at most"),
    ("mfu=1.5", "mfu", "at most"),
    ("prompt_tokens=1e9", "prompt_tokens", "at most"),
    ("batch=32.5", "batch", "whole"),
    ("mem_util=0.01", "mem_util", "at least"),
    ("model=gpt-5", "model", "no preset"),
    ("gpu=tpu", "gpu", "no preset"),
    ("weight_dtype=int4", "weight_dtype", "no preset"),
    ("question=nope", "question", "not a known question"),
    ("question=batch&job_batch=2.5", "job_batch", "whole"),
    (
        "question=batch&completion_s=0",
        "completion_s",
        "greater than zero",
    ),
    (
        "question=gpu-hours&chat_tokens=0&context=0",
        "context",
        "greater than zero",
    ),
];

#[test]
fn each_bad_value_is_an_error_on_its_field() {
    for (query, field, word) in BAD_QUERIES {
        let (_, inputs, errors) = Inputs::from_query(query);
        assert_eq!(errors.len(), 1, "{query}: {errors:?}");
        assert_eq!(errors[0].field, *field, "{query}");
        assert!(errors[0].message.contains(word), "{query}: {}", errors[0]);
        // The bad value is not applied, so the rest still derives.
        let q = Question::from_id(inputs_question(query)).unwrap_or(Question::Fleet);
        assert!(derive(q, &inputs).is_ok(), "{query}");
    }
    assert_eq!(error_fields("rate=x&mfu=2&colour=red"), ["rate", "mfu"]);
}

/// The question a bad query names, or the default.
fn inputs_question(query: &str) -> &str {
    query
        .split('&')
        .find_map(|p| p.strip_prefix("question="))
        .unwrap_or("fleet")
}

/// Each set of inputs that parses but cannot be derived, and the field derive blames.
const UNDERIVABLE: &[(&str, &str)] = &[
    // The weights leave no KV room: the error is on the field that fixes it.
    ("model=llama-3.1-405b", "gpus_per_replica"),
    (
        "question=chats-per-replica&gpus_per_replica=1",
        "gpus_per_replica",
    ),
    ("gpu_mem_gb=4&reserve_gb=3.9", "gpu_mem_gb"),
    ("active_params=9000000000", "active_params"),
    ("kv_heads=64", "kv_heads"),
];

#[test]
fn underivable_inputs_name_the_field_to_change() {
    for (query, field) in UNDERIVABLE {
        let (q, inputs, errors) = Inputs::from_query(query);
        assert!(errors.is_empty(), "{query}: {errors:?}");
        let errs = derive(q, &inputs).unwrap_err();
        assert_eq!(errs[0].field, *field, "{query}: {errs:?}");
    }
    // A value set in code is stored as typed, and derive reports every bad one.
    let q = Question::Fleet;
    let mut inputs = Inputs::defaults(q);
    assert_eq!(inputs.set(q, "rate", -1.0).unwrap_err().field, "rate");
    assert_eq!(inputs.set(q, "mbu", f64::NAN).unwrap_err().field, "mbu");
    assert_eq!(
        inputs.set(q, "chat_tokens", 5.0).unwrap_err().field,
        "chat_tokens"
    );
    let fields: Vec<String> = derive(q, &inputs)
        .unwrap_err()
        .into_iter()
        .map(|e| e.field)
        .collect();
    assert_eq!(fields, ["rate", "mbu"]);
}

/// Arbitrary valid inputs for a question: its choices, then some numeric inputs set anywhere
/// in their ranges (whole where they must be).
fn arb_inputs() -> impl Strategy<Value = (Question, Inputs)> {
    (
        0..questions().len(),
        0..models().len(),
        0..gpus().len(),
        0..WeightFormat::ALL.len(),
        any::<bool>(),
        prop::collection::vec((0..40usize, 0.0..=1.0f64), 0..12),
    )
        .prop_map(|(qi, mi, gi, wd, kd, sets)| {
            let q = questions()[qi];
            let mut inputs = Inputs::defaults(q);
            let dtype = |fp8: bool| if fp8 { "fp8" } else { "bf16" };
            inputs.set_choice(q, "model", &models()[mi].id).unwrap();
            inputs.set_choice(q, "gpu", &gpus()[gi].id).unwrap();
            let weights = WeightFormat::ALL[wd].name();
            inputs.set_choice(q, "weight_dtype", weights).unwrap();
            inputs.set_choice(q, "kv_dtype", dtype(kd)).unwrap();
            let specs: Vec<_> = q
                .inputs()
                .into_iter()
                .filter(|s| s.kind != InputKind::Choice)
                .collect();
            for (i, u) in sets {
                let s = &specs[i % specs.len()];
                let mut v = s.min + u * (s.max - s.min);
                if s.kind == InputKind::Integer {
                    v = v.round();
                }
                inputs.set(q, s.name, v.clamp(s.min, s.max)).unwrap();
            }
            (q, inputs)
        })
}

// Rendering any valid inputs to a query string and parsing it back gives the same question
// and the same inputs, bit for bit, with no errors.
proptest! {
    #[test]
    fn query_round_trips((q, inputs) in arb_inputs()) {
        let query = inputs.to_query(q);
        let (q2, back, errors) = Inputs::from_query(&query);
        prop_assert!(errors.is_empty(), "{} -> {:?}", query, errors);
        prop_assert_eq!(q2, q);
        prop_assert_eq!(back, inputs);
    }
}

// Parsing never panics, whatever the text, and neither does deriving what it parsed; every
// error names the question, a choice or an input.
proptest! {
    #[test]
    fn parsing_any_text_never_panics(
        text in prop_oneof![
            any::<String>(),
            "[a-z_]{1,14}=[-+0-9.eEaNinf%,]{0,12}(&[a-z_]{1,14}=[-+0-9.eEaNinf%]{0,12}){0,6}",
            "(question=(fleet|gpu-hours|chats-per-replica|batch)&)?(rate|mfu|batch|params|model|gpu|kv_heads|gpus_per_replica|context|chat_tokens|job_batch|job_ceiling|completion_s)=[-0-9.e%a-z]{0,14}",
        ]
    ) {
        let (q, inputs, errors) = Inputs::from_query(&text);
        let names: Vec<&str> = q.inputs().iter().map(|s| s.name).collect();
        for e in &errors {
            prop_assert!(e.field == "question" || names.contains(&e.field.as_str()), "{}", e);
        }
        let _ = derive(q, &inputs);
    }
}

#[test]
fn preset_figures_are_exactly_the_inputs_a_preset_resets() {
    use trainer_course::sizing::is_preset_figure;
    for name in [
        "params",
        "layers",
        "kv_heads",
        "peak_tflops",
        "hbm_tb_s",
        "gpu_mem_gb",
    ] {
        assert!(is_preset_figure(name), "{name}");
    }
    for name in [
        "rate",
        "mfu",
        "batch",
        "price",
        "gpus_per_replica",
        "unknown",
    ] {
        assert!(!is_preset_figure(name), "{name}");
    }
}

/// The weight format is three choices, not a data type: weight-only FP8 halves the weights'
/// bytes but keeps the BF16 peak (so the prefill step is BF16's), W8A8 takes the FP8 peak on a
/// GPU that has one and BF16's on one that does not; an old link's `fp8` is still W8A8; and
/// each FP8 choice brings its note, none while everything is BF16.
#[test]
fn the_weight_format_sets_the_bytes_and_the_peak_apart() {
    use trainer_course::sizing::precision_notes;
    let q = Question::Fleet;
    let parse = |query: &str| {
        let (_, inputs, errors) = Inputs::from_query(query);
        assert!(errors.is_empty(), "{query}: {errors:?}");
        inputs
    };
    let step = |inputs: &Inputs, id: &str| {
        derive(q, inputs)
            .expect("derives")
            .step(id)
            .unwrap_or_else(|| panic!("step {id}"))
            .value
    };
    let bf16 = parse("question=fleet");
    let w8a16 = parse("question=fleet&weight_dtype=fp8-weight-only");
    let w8a8 = parse("question=fleet&weight_dtype=fp8");
    assert_eq!(w8a16.weight_format(), WeightFormat::Fp8WeightOnly);
    assert_eq!(w8a8.weight_format(), WeightFormat::Fp8);
    assert_eq!(
        w8a16.to_query(q),
        "question=fleet&weight_dtype=fp8-weight-only"
    );
    assert_eq!(
        step(&w8a16, "weight_bytes") * 2.0,
        step(&bf16, "weight_bytes")
    );
    assert_eq!(w8a16.get("peak_tflops"), bf16.get("peak_tflops"));
    assert_eq!(
        step(&w8a16, "prefill_per_token"),
        step(&bf16, "prefill_per_token")
    );
    assert!(w8a8.get("peak_tflops") > bf16.get("peak_tflops"));
    assert!(step(&w8a8, "prefill_per_token") < step(&bf16, "prefill_per_token"));
    // No FP8 tensor cores on an A100: W8A8 multiplies at the BF16 peak.
    let a100 = parse("question=fleet&gpu=a100-80gb&weight_dtype=fp8");
    let a100_bf16 = parse("question=fleet&gpu=a100-80gb");
    assert_eq!(a100.get("peak_tflops"), a100_bf16.get("peak_tflops"));
    // The notes: one per FP8 choice.
    assert!(precision_notes(&bf16).is_empty());
    let ids = |i: &Inputs| {
        precision_notes(i)
            .into_iter()
            .map(|n| n.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&w8a16), ["fp8-weight-only"]);
    assert_eq!(
        ids(&parse("question=fleet&weight_dtype=fp8&kv_dtype=fp8")),
        ["fp8", "kv-fp8"]
    );
    // A format that does not exist is an error on its field.
    assert_eq!(
        error_fields("question=fleet&weight_dtype=int4"),
        ["weight_dtype"]
    );
}
