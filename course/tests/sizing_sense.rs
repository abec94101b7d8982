//! Every figure of every question is sensible on valid inputs: random inputs within each
//! input's range (choices from its options) give no negative count, no NaN or infinite value,
//! and no sentence that contradicts its figure; inputs that do not fit are refused with the
//! way out, and every message reads as a sentence after its field's label.

use proptest::prelude::*;
use trainer_course::sizing::{
    derive, misfit, Derivation, InputKind, Inputs, Limit, Pressure, Question, Step, FIX_FIELD,
};

/// How many inputs the longest question has, choices included.
const MOST_INPUTS: usize = 40;

/// Random valid inputs for a question: each input kept at its default or set anywhere in its
/// range (spread evenly over the orders of magnitude of a wide range, whole where it must be),
/// each choice from its options; then the two cross-field rules held (active parameters at
/// most the total, KV heads at most the heads).
fn arb_inputs() -> impl Strategy<Value = (Question, Inputs)> {
    (
        0..Question::ALL.len(),
        prop::collection::vec(
            (prop::bool::weighted(0.45), 0.0..=1.0f64),
            MOST_INPUTS..=MOST_INPUTS,
        ),
    )
        .prop_map(|(qi, draws)| {
            let q = Question::ALL[qi];
            let mut inputs = Inputs::defaults(q);
            let specs = q.inputs();
            assert!(specs.len() <= MOST_INPUTS);
            // Choices first: a preset resets the figures it provides.
            for (s, &(set, u)) in specs.iter().zip(&draws) {
                if s.kind == InputKind::Choice && set {
                    let i = ((u * s.options.len() as f64) as usize).min(s.options.len() - 1);
                    inputs.set_choice(q, s.name, &s.options[i].id).unwrap();
                }
            }
            for (s, &(set, u)) in specs.iter().zip(&draws) {
                if s.kind == InputKind::Choice || !set {
                    continue;
                }
                let mut v = if s.min > 0.0 && s.max / s.min >= 1000.0 {
                    s.min * (s.max / s.min).powf(u)
                } else {
                    s.min + u * (s.max - s.min)
                };
                if s.kind == InputKind::Integer {
                    v = v.round();
                }
                inputs.set(q, s.name, v.clamp(s.min, s.max)).unwrap();
            }
            for (small, big) in [("active_params", "params"), ("kv_heads", "heads")] {
                let (a, b) = (inputs.get(small).unwrap(), inputs.get(big).unwrap());
                if a > b {
                    inputs.set(q, small, b).unwrap();
                }
            }
            assert!(inputs.validate(q).is_empty(), "{:?}", inputs.validate(q));
            (q, inputs)
        })
}

/// Whether a message completes a sentence whose subject is its field's label ("Rate is
/// empty", "GPUs per replica is too few: …").
fn reads_after_label(message: &str) -> bool {
    ["is ", "must ", "cannot ", "has ", "leaves "]
        .iter()
        .any(|v| message.starts_with(v))
}

/// Whether a text shows a negative number ("-1 GPUs", "−12 %").
fn shows_a_negative(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    chars.windows(2).enumerate().any(|(i, w)| {
        matches!(w[0], '-' | '−')
            && w[1].is_ascii_digit()
            // A minus between two figures is a subtraction ("8 − 3"), not a sign.
            && (i == 0 || !chars[i - 1].is_alphanumeric())
            && !(i >= 2 && chars[i - 1] == ' ' && chars[i - 2].is_ascii_digit())
    })
}

/// The percentages a sentence names, as fractions.
fn percentages(text: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let words: Vec<&str> = text.split_whitespace().collect();
    for w in words.windows(2) {
        if w[1].starts_with('%') {
            if let Ok(v) = w[0].replace(',', "").parse::<f64>() {
                out.push(v / 100.0);
            }
        }
    }
    out
}

fn step<'a>(d: &'a Derivation, id: &str) -> Option<&'a Step> {
    d.step(id)
}

/// Every way a derivation could contradict itself; `Err` names the first found.
fn sensible(q: Question, inputs: &Inputs, d: &Derivation) -> Result<(), String> {
    for s in &d.steps {
        let at = |what: &str| format!("{} / {}: {what} ({:?})", q.id(), s.id, s.display);
        if !s.value.is_finite() {
            return Err(at("value is not finite"));
        }
        if s.value < 0.0 {
            return Err(at("negative value"));
        }
        for text in [&s.display, &s.substituted, &s.why] {
            let lower = text.to_lowercase();
            if lower.contains("nan") || lower.contains("inf") || text.contains('∞') {
                return Err(at(&format!("NaN or infinity in {text:?}")));
            }
            if text.contains('{') {
                return Err(at(&format!("a placeholder left in {text:?}")));
            }
        }
        if shows_a_negative(&s.display) || shows_a_negative(&s.why) {
            return Err(at("a negative figure in the words"));
        }
        if s.label.is_empty() || s.why.is_empty() {
            return Err(at("no label or no sentence"));
        }
        if let Some(ok) = s.check {
            let says_pass = s.display.starts_with("passes");
            if says_pass != ok {
                return Err(at("the check's words disagree with its result"));
            }
            if (ok && s.value > 1.0 + 1e-9) || (!ok && s.value < 1.0 - 1e-9) {
                return Err(at(
                    "the check's result disagrees with its share of the limit",
                ));
            }
        }
    }
    let value = |id: &str| step(d, id).map(|s| s.value);
    for id in [
        "replicas",
        "gpus",
        "chats",
        "jobs_in_flight",
        "streaming_replicas",
    ] {
        if let Some(v) = value(id) {
            if v.fract() != 0.0 {
                return Err(format!("{} / {id}: {v} is not whole", q.id()));
            }
        }
    }
    if let Some(r) = value("replicas") {
        if r < 1.0 {
            return Err(format!("{}: {r} replicas", q.id()));
        }
        let tp = inputs.get(FIX_FIELD).unwrap();
        if value("gpus") != Some(r * tp) {
            return Err(format!("{}: GPUs are not replicas × G", q.id()));
        }
    }
    if let Some(s) = step(d, "gpus_saved") {
        // The label and the words follow the sign: a saving, or more GPUs batching needs.
        let more = value("replicas") > value("streaming_replicas");
        let says_more = s.label.contains("more") || s.label.contains("More");
        if more != says_more || more != s.display.contains("more") {
            return Err(format!(
                "batch / gpus_saved: {:?} {:?} when batching needs {} replicas against {}",
                s.label,
                s.display,
                value("replicas").unwrap(),
                value("streaming_replicas").unwrap()
            ));
        }
    }
    if let (Some(c), Some(w)) = (value("chats"), value("chats_within_tpot")) {
        if c < 1.0 || w > c {
            return Err(format!("chats: {c} fit, {w} within the target"));
        }
    }

    // The verdict: something binds, a limit with slack names no share over 100 %, and a
    // failed check binds the limit it checks (streams over the assumed batch bind the
    // latency target only when the bigger batch misses it: sizing_conclusions.rs).
    let v = &d.verdict;
    if v.binding().is_empty() {
        return Err(format!("{}: nothing binds: {}", q.id(), v.summary));
    }
    for r in &v.readings {
        if r.pressure == Pressure::Slack && percentages(&r.reason).iter().any(|&p| p > 1.0) {
            return Err(format!(
                "{}: {:?} has slack but says {:?}",
                q.id(),
                r.limit,
                r.reason
            ));
        }
        if shows_a_negative(&r.reason) || r.reason.to_lowercase().contains("nan") {
            return Err(format!("{}: {:?} says {:?}", q.id(), r.limit, r.reason));
        }
    }
    for (check, limit) in [
        ("tpot_check", Limit::LatencyTarget),
        ("completion_check", Limit::LatencyTarget),
        ("kv_check", Limit::KvCapacity),
    ] {
        if step(d, check).and_then(|s| s.check) == Some(false)
            && v.pressure(limit).is_some_and(|p| p != Pressure::Binding)
        {
            return Err(format!(
                "{}: {check} fails but {:?} does not bind: {}",
                q.id(),
                limit,
                v.summary
            ));
        }
    }
    if let Some(share) = value("kv_share") {
        if share > 1.0 && v.pressure(Limit::KvCapacity) != Some(Pressure::Binding) {
            return Err(format!("{}: KV share {share} but KV does not bind", q.id()));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn every_figure_is_sensible_on_valid_inputs((q, inputs) in arb_inputs()) {
        match derive(q, &inputs) {
            Ok(d) => {
                let verdict = sensible(q, &inputs, &d);
                prop_assert!(verdict.is_ok(), "{}\n{}", verdict.unwrap_err(), inputs.to_query(q));
            }
            Err(errors) => {
                // Valid inputs that do not derive are a replica that cannot hold the work:
                // refused with the way out, on the field that gives it.
                let m = misfit(q, &inputs);
                prop_assert!(m.is_some(), "{:?}\n{}", errors, inputs.to_query(q));
                let m = m.unwrap();
                prop_assert_eq!(&errors, &vec![m.error()]);
                prop_assert!(reads_after_label(&errors[0].message), "{}", errors[0].message);
                if let Some(tp) = m.fix {
                    let mut fixed = inputs.clone();
                    fixed.set(q, FIX_FIELD, tp as f64).unwrap();
                    prop_assert!(misfit(q, &fixed).is_none());
                    if let Ok(d) = derive(q, &fixed) {
                        let verdict = sensible(q, &fixed, &d);
                        prop_assert!(verdict.is_ok(), "{}", verdict.unwrap_err());
                    } else {
                        prop_assert!(false, "the fix {tp} does not derive: {}", inputs.to_query(q));
                    }
                }
            }
        }
    }

    // Whatever text a query holds, each message completes a sentence after its field's
    // label (the page shows "Tokens per chat is longer than …", never "Tokens per chat a
    // chat of …").
    #[test]
    fn messages_read_after_their_label(
        text in "(question=(fleet|gpu-hours|chats-per-replica|batch)&)?((rate|mfu|batch|params|model|gpu|kv_heads|heads|gpus_per_replica|context|chat_tokens|job_batch|completion_s|gpu_mem_gb|reserve_gb|weight_dtype)=[-0-9.e%a-z]{0,9}&){1,5}"
    ) {
        let (q, inputs, errors) = Inputs::from_query(&text);
        for e in errors.iter().filter(|e| e.field != "question") {
            prop_assert!(reads_after_label(&e.message), "{}: {}", e.field, e.message);
        }
        if let Err(errors) = derive(q, &inputs) {
            for e in &errors {
                prop_assert!(reads_after_label(&e.message), "{}: {}", e.field, e.message);
            }
        }
    }
}

// `/size/batch?job_batch=16` showed "-1 GPUs (-12 % of the streaming fleet)" saved.
#[test]
fn a_small_job_batch_says_batching_needs_more_gpus() {
    let (q, inputs, errors) = Inputs::from_query("question=batch&job_batch=16");
    assert!(errors.is_empty());
    let d = derive(q, &inputs).unwrap();
    let s = d.step("gpus_saved").unwrap();
    let (mine, streaming) = (
        d.step("replicas").unwrap().value,
        d.step("streaming_replicas").unwrap().value,
    );
    assert!(mine > streaming, "{mine} against {streaming}");
    assert_eq!(s.value, mine - streaming);
    assert!(s.label.to_lowercase().contains("more"), "{}", s.label);
    assert!(s.display.contains("more"), "{}", s.display);
    assert!(!shows_a_negative(&s.display), "{}", s.display);
    assert!(sensible(q, &inputs, &d).is_ok());
}

#[test]
fn the_sense_checks_can_fail() {
    assert!(shows_a_negative("-1 GPUs (-12 % of the streaming fleet)"));
    assert!(shows_a_negative("saved −3 GPUs"));
    assert!(!shows_a_negative("(8 − 3) × 1 GPU"));
    assert!(!shows_a_negative("llama-3.1-8b"));
    assert_eq!(
        percentages("uses 150 % of the pool, 1,200 % here"),
        [1.5, 12.0]
    );
    let q = Question::Fleet;
    let inputs = Inputs::defaults(q);
    let mut d = derive(q, &inputs).unwrap();
    assert_eq!(sensible(q, &inputs, &d), Ok(()));
    d.steps[0].value = -1.0;
    assert!(sensible(q, &inputs, &d).is_err());
    let mut d = derive(q, &inputs).unwrap();
    for r in &mut d.verdict.readings {
        if r.limit == Limit::KvCapacity {
            r.reason = "The streams use 140 % of the pool.".into();
        }
    }
    assert!(sensible(q, &inputs, &d).is_err());
    assert!(reads_after_label("is empty: enter a number"));
    assert!(!reads_after_label("a chat of 5,000 tokens is longer"));
}
