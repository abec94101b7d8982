//! Fleet simulator speed: the seed fleet (50 req/s, 1,000 prompt and 250 output tokens,
//! streaming, 8 replicas of Llama 3.1 8B on H100) for one simulated hour: about 180,000
//! requests, 45 million output tokens and 3.4 million engine steps.
//!
//! Run with `cargo bench -p trainer-engine --bench fleet`. The target for the hour is under 0.8 s.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::time::Duration;
use trainer_engine::fleet::{FleetConfig, FleetSim};

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
