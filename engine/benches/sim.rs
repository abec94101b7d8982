//! Simulator speed: one replica for one simulated hour at the seed's per-replica load
//! (6.25 req/s, 1,000 prompt tokens, 250 output tokens; about 430,000 engine steps), and
//! engine events per second on a shorter run.
//!
//! Run with `cargo bench -p trainer-engine --bench sim`. The target for the hour is under 100 ms.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;
use trainer_engine::replica::{ReplicaSim, ReplicaSimConfig};

/// The seed replica and load for `duration_s` simulated seconds.
fn seed(duration_s: f64) -> ReplicaSimConfig {
    let mut cfg = ReplicaSimConfig::seed();
    cfg.workload.duration_s = duration_s;
    cfg
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("replica");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    g.bench_function("seed_hour", |b| {
        b.iter(|| {
            let mut sim = ReplicaSim::new(seed(3600.0)).expect("seed is valid");
            black_box(sim.run())
        })
    });
    // Events = arrivals + step starts + step ends.
    let probe = ReplicaSim::new(seed(300.0)).expect("seed is valid").run();
    g.throughput(Throughput::Elements(probe.arrived + 2 * probe.steps));
    g.bench_function("events_seed_5min", |b| {
        b.iter(|| {
            let mut sim = ReplicaSim::new(seed(300.0)).expect("seed is valid");
            black_box(sim.run())
        })
    });
    g.finish();
    eprintln!(
        "seed 5 min: {} steps, {} requests",
        probe.steps, probe.arrived
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
