//! Fleet simulator speed: the seed fleet (50 req/s, 1,000 prompt and 250 output tokens,
//! streaming, 8 replicas of Llama 3.1 8B on H100) for one simulated hour: about 180,000
//! requests, 45 million output tokens and 3.4 million engine steps.
//!
//! Run with `cargo bench -p trainer-engine --bench fleet`. The target for the hour is under 0.8 s;
//! with speculative decoding on (an EAGLE-style head, 3 guesses at 0.6 acceptance, which also
//! stops the exact fast-forward over decode-only steps: every step visits every running
//! request, in `replica/spec_step.rs`'s one pass) within 1.5 times the plain hour; and as a
//! disaggregated fleet (3 prefill and 5 decode replicas, KV caches over InfiniBand) within
//! 1.5 times the plain hour too. With forty tenants each running its own LoRA adapter (8 a
//! step, routed by adapter), the hour is measured beside them.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::time::Duration;
use trainer_engine::fleet::{FleetConfig, FleetSim, PoolConfig, PoolRole, RoutingPolicy};
use trainer_engine::replica::lora::LoraConfig;
use trainer_engine::replica::spec::{SpecMethod, SpeculativeConfig};

/// The seed fleet with speculative decoding on every replica.
fn speculating() -> FleetConfig {
    let mut f = FleetConfig::seed();
    for p in &mut f.pools {
        p.replica.speculative = Some(SpeculativeConfig {
            method: SpecMethod::Eagle,
            num_speculative_tokens: 3,
            acceptance_rate: 0.6,
            disable_by_batch_size: None,
        });
    }
    f
}

/// The seed fleet serving forty tenants' LoRA adapters, eight a step, routed by adapter.
fn adapters() -> FleetConfig {
    let mut f = FleetConfig::seed();
    for src in &mut f.traffic {
        src.workload.tenants = 40;
    }
    for p in &mut f.pools {
        p.replica.lora = Some(LoraConfig {
            max_loras: 8,
            ..LoraConfig::default()
        });
    }
    f.router.policy = RoutingPolicy::adapter_affinity(1.5);
    f
}

/// The seed fleet's eight GPUs as three prefill and five decode replicas.
pub fn disaggregated() -> FleetConfig {
    let mut f = FleetConfig::seed();
    let pool = |name: &str, role: PoolRole, n: u32| {
        let mut p = PoolConfig::seed(n);
        p.name = name.into();
        p.role = role;
        p
    };
    f.pools = vec![
        pool("prefill", PoolRole::Prefill, 3),
        pool("decode", PoolRole::Decode, 5),
    ];
    f
}

fn fleet(c: &mut Criterion) {
    let mut g = c.benchmark_group("fleet");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("seed_hour", |b| {
        b.iter(|| {
            let mut sim = FleetSim::new(FleetConfig::seed()).expect("seed is valid");
            sim.run();
            black_box(sim.report())
        })
    });
    g.bench_function("seed_hour_speculative", |b| {
        b.iter(|| {
            let mut sim = FleetSim::new(speculating()).expect("valid");
            sim.run();
            black_box(sim.report())
        })
    });
    g.bench_function("seed_hour_disaggregated", |b| {
        b.iter(|| {
            let mut sim = FleetSim::new(disaggregated()).expect("valid");
            sim.run();
            black_box(sim.report())
        })
    });
    g.bench_function("seed_hour_adapters", |b| {
        b.iter(|| {
            let mut sim = FleetSim::new(adapters()).expect("valid");
            sim.run();
            black_box(sim.report())
        })
    });
    g.finish();
    let mut sim = FleetSim::new(FleetConfig::seed()).expect("seed is valid");
    sim.run();
    let r = sim.report();
    eprintln!(
        "seed hour: {} requests, {} output tokens, {} engine steps, {} events",
        r.outcomes.arrived,
        r.cost.output_tokens,
        r.pools.iter().map(|p| p.steps).sum::<u64>(),
        r.events
    );
}

criterion_group!(benches, fleet);
criterion_main!(benches);
