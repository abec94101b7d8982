//! Many LoRA adapters on one replica: the adapter's size and costs by hand from the cost
//! model, vLLM's `max_loras` check at admission (a waiting request whose adapter would be one
//! too many is passed over and the next one tried), loads into GPU slots on a miss, the slots'
//! memory taken from the KV cache, and a property test that no step ever holds more adapters
//! than the limit while every request still finishes with all its tokens.

use proptest::prelude::*;
use trainer_engine::replica::lora::LoraConfig;
use trainer_engine::replica::spec::{SpecMethod, SpeculativeConfig};
use trainer_engine::replica::{EngineRequest, Replica, ReplicaConfig, ReplicaEvent};
use trainer_engine::workload::Prompt;

fn replica(lora: LoraConfig, blocks: Option<u32>) -> Replica {
    let mut cfg = ReplicaConfig::seed();
    cfg.lora = Some(lora);
    cfg.kv_blocks_override = blocks;
    cfg.trace_capacity = 10_000;
    Replica::new(cfg).expect("valid config")
}

/// Submits (arrival, tenant, prompt length, output length) requests as ids 0, 1, ... and runs
/// to the end.
fn run(r: &mut Replica, reqs: &[(f64, u32, u32, u32)]) -> Vec<ReplicaEvent> {
    let mut events = Vec::new();
    for (id, &(t, tenant, p, o)) in reqs.iter().enumerate() {
        if t > r.now() {
            r.advance_to(t, &mut events);
        }
        r.submit(
            t,
            EngineRequest {
                id: id as u64,
                prompt: Prompt::unique(id as u64 + 1, p),
                output_len: o,
                tenant,
            },
        );
    }
    r.advance_to(f64::INFINITY, &mut events);
    events
}

#[test]
fn an_adapters_size_and_costs_follow_from_the_models_shape() {
    let r = replica(LoraConfig::default(), None);
    let cost = r.cost_model();
    let m = &cost.deployment().model;
    // Llama 3.1 8B: hidden 4096, 8 KV heads of 128, MLP 14336; rank 16 on q, k, v, o, gate,
    // up and down in each of 32 layers.
    assert_eq!(
        (m.hidden, m.kv_heads * m.head_dim, m.layers),
        (4096, 1024, 32)
    );
    let per_layer = (4096 + 4096) + 2 * (4096 + 1024) + (4096 + 4096) + 3 * (4096 + 14336);
    let params = 16.0 * 32.0 * per_layer as f64;
    assert_eq!(params, 41_943_040.0);
    assert_eq!(m.lora_params(16), params);
    let bytes = params * 2.0;
    assert_eq!(cost.lora_adapter_bytes(16), bytes);
    let host = cost.deployment().gpu.host_bw;
    assert!(host > 0.0);
    assert_eq!(cost.lora_load_time(16, false, 2e9), bytes / host);
    assert_eq!(
        cost.lora_load_time(16, true, 2e9),
        bytes / host + bytes / 2e9
    );
    // A decode step of 64 tokens over 4 adapters reads 4 adapters' weights; a prefill of 8192
    // tokens on one adapter is its FLOPs' time.
    let memory = 4.0 * bytes / cost.sustained_bandwidth();
    assert_eq!(cost.lora_step_time(64, 4, 16), memory);
    let compute = 2.0 * params * 8192.0 / cost.sustained_flops();
    assert_eq!(cost.lora_step_time(8192, 1, 16), compute);
    assert_eq!(cost.lora_step_time(0, 4, 16), 0.0);
}

#[test]
fn the_adapters_slots_take_their_memory_from_the_kv_cache() {
    let plain = Replica::new(ReplicaConfig::seed()).expect("seed");
    let lora = LoraConfig {
        max_loras: 8,
        ..LoraConfig::default()
    };
    let with = replica(lora, None);
    let cost = with.cost_model();
    let memory = &ReplicaConfig::seed().memory;
    let want =
        (cost.kv_pool_tokens_less(memory, 8.0 * cost.lora_adapter_bytes(16)) / 16.0).floor() as u32;
    assert_eq!(with.kv_blocks_total(), want);
    // 8 slots of 84 MB each: 320 blocks of 16 tokens at 128 KiB a token.
    assert_eq!(plain.kv_blocks_total() - with.kv_blocks_total(), 320);
}

/// vLLM's scheduler, on a request whose adapter would exceed `max_loras`: "Scheduling would
/// exceed max_loras, skip" (the request goes back to the head of the queue and the next one
/// is tried). With one adapter a step, tenant 1's request waits while both of tenant 0's run.
#[test]
fn a_request_whose_adapter_is_one_too_many_is_passed_over_for_the_next() {
    let mut r = replica(LoraConfig::default(), None);
    run(
        &mut r,
        &[(0.0, 0, 100, 3), (0.0, 1, 100, 3), (0.0, 0, 100, 3)],
    );
    let steps = r.trace();
    let ids = |i: usize| steps[i].entries.iter().map(|e| e.id).collect::<Vec<_>>();
    assert_eq!(ids(0), vec![0, 2], "the first step skips request 1");
    let first_with_1 = steps
        .iter()
        .position(|s| s.entries.iter().any(|e| e.id == 1))
        .expect("request 1 runs");
    assert!(steps[..first_with_1]
        .iter()
        .all(|s| s.entries.iter().all(|e| e.id != 1)));
    assert!(
        steps[first_with_1..]
            .iter()
            .all(|s| s.entries.iter().all(|e| e.id == 1)),
        "tenant 1 runs only once tenant 0's requests are done"
    );
    let m = r.metrics();
    assert_eq!(m.lora_passed_over, 1);
    assert_eq!(m.finished, 3);
    // Adapter 0 and then adapter 1, each read from storage (the host cache holds one).
    assert_eq!((m.lora_loads, m.lora_storage_loads), (2, 2));
}

#[test]
fn a_miss_adds_the_adapters_load_to_its_step_and_a_hit_only_the_kernels() {
    let lora = LoraConfig::default();
    let mut r = replica(lora.clone(), None);
    run(&mut r, &[(0.0, 5, 1000, 3)]);
    let cost = r.cost_model().clone();
    let steps = r.trace();
    let load = cost.lora_load_time(16, true, lora.storage_gb_s * 1e9);
    let prefill = cost.lora_step_time(1000, 1, 16);
    assert_eq!(steps[0].cost.lora_s, load + prefill);
    let base = steps[0].cost.total_s - steps[0].cost.lora_s;
    assert!(base > 0.0);
    let decode = cost.lora_step_time(1, 1, 16);
    for s in &steps[1..] {
        assert_eq!(s.cost.lora_s, decode, "step {}", s.index);
    }
    let m = r.metrics();
    assert_eq!((m.lora_loads, m.lora_storage_loads), (1, 1));
    assert!((m.lora_load_s - load).abs() < 1e-15);
}

/// Decode-only stretches are fast-forwarded with adapters on too (a traced replica runs
/// every step the ordinary way): both give the same steps, tokens, times and adapter costs.
#[test]
fn fast_forwarded_decode_steps_cost_the_adapters_as_ordinary_steps_do() {
    let reqs: Vec<(f64, u32, u32, u32)> = (0..40)
        .map(|i| (i as f64 * 0.37, i % 7, 200 + 13 * i, 60 + (i * 17) % 90))
        .collect();
    let lora = LoraConfig {
        max_loras: 3,
        max_cpu_loras: 5,
        ..LoraConfig::default()
    };
    let drive = |trace: usize| {
        let mut cfg = ReplicaConfig::seed();
        cfg.lora = Some(lora.clone());
        cfg.trace_capacity = trace;
        let mut r = Replica::new(cfg).expect("valid");
        let events = run(&mut r, &reqs);
        let times: Vec<String> = events
            .iter()
            .filter(|e| !matches!(e, ReplicaEvent::StepEnd { .. }))
            .map(|e| format!("{e:?}"))
            .collect();
        (r.metrics().clone(), times)
    };
    let (fast, fast_events) = drive(0);
    let (slow, slow_events) = drive(100_000);
    assert!(fast.fast_forward_steps > 100, "{}", fast.fast_forward_steps);
    assert_eq!(slow.fast_forward_steps, 0);
    assert_eq!(fast_events, slow_events);
    assert_eq!(
        (
            fast.steps,
            fast.output_tokens,
            fast.finished,
            fast.lora_loads
        ),
        (
            slow.steps,
            slow.output_tokens,
            slow.finished,
            slow.lora_loads
        )
    );
    assert_eq!(fast.lora_kernel_s, slow.lora_kernel_s);
    assert_eq!(fast.lora_load_s, slow.lora_load_s);
    assert_eq!(fast.busy_time_s, slow.busy_time_s);
}

#[test]
fn adapters_and_speculative_decoding_together_are_refused_by_name() {
    let mut cfg = ReplicaConfig::seed();
    cfg.lora = Some(LoraConfig::default());
    cfg.speculative = Some(SpeculativeConfig {
        method: SpecMethod::Ngram,
        num_speculative_tokens: 3,
        acceptance_rate: 0.6,
        disable_by_batch_size: None,
    });
    let e = cfg.validate().expect_err("refused");
    assert_eq!(e.field, "lora");
    let mut cfg = ReplicaConfig::seed();
    cfg.lora = Some(LoraConfig {
        max_loras: 0,
        ..LoraConfig::default()
    });
    assert_eq!(cfg.validate().expect_err("refused").field, "lora.max_loras");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the requests, tenants, limits and pool: no step holds requests of more than
    /// `max_loras` adapters, every request finishes with all its output tokens, and the loads
    /// are at least the adapters used.
    #[test]
    fn no_step_holds_more_adapters_than_the_limit(
        max_loras in 1u32..4,
        cpu_extra in 0u32..3,
        blocks in 40u32..400,
        reqs in prop::collection::vec((0.0f64..0.5, 0u32..6, 1u32..300, 1u32..40), 1..40),
    ) {
        let mut reqs = reqs;
        reqs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let lora = LoraConfig {
            max_loras,
            max_cpu_loras: if cpu_extra == 0 { 0 } else { max_loras + cpu_extra },
            ..LoraConfig::default()
        };
        let mut r = replica(lora, Some(blocks));
        run(&mut r, &reqs);
        let tenant = |id: u64| reqs[id as usize].1;
        for s in r.trace() {
            let mut adapters: Vec<u32> = s.entries.iter().map(|e| tenant(e.id)).collect();
            adapters.sort_unstable();
            adapters.dedup();
            prop_assert!(adapters.len() as u32 <= max_loras, "step {}: {:?}", s.index, adapters);
        }
        let m = r.metrics();
        prop_assert_eq!(m.finished + m.rejected, reqs.len() as u64);
        let served: u64 = reqs.iter().map(|q| q.3 as u64).sum();
        if m.rejected == 0 {
            prop_assert_eq!(m.output_tokens, served);
        }
        let mut used: Vec<u32> = reqs.iter().map(|q| q.1).collect();
        used.sort_unstable();
        used.dedup();
        if m.rejected == 0 {
            prop_assert!(m.lora_loads >= used.len() as u64);
        }
        prop_assert!(m.lora_storage_loads <= m.lora_loads);
    }
}
