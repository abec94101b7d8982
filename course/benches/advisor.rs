//! The serving advisor's search of the seed problem (the advisor page's defaults: the seed
//! fleet's traffic on H100s, 36 combinations of tensor parallelism, number formats, batch limit
//! and token budget, short runs of 60 s and the three cheapest confirmed over 300 s), run on one
//! core. The page runs the same rounds side by side in its workers.
//!
//! Run with `cargo bench -p trainer-course --bench advisor`. The target is the whole
//! search in under 10 s of wall time on a 4-core laptop, in the browser.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::time::Duration;
use trainer_course::advisor::{Search, Space};

fn advisor(c: &mut Criterion) {
    let mut g = c.benchmark_group("advisor");
    g.sample_size(10).measurement_time(Duration::from_secs(30));
    g.bench_function("seed_search", |b| {
        b.iter(|| {
            let mut s = Search::new(Space::seed()).expect("the seed space is valid");
            s.run_here().expect("the runs are valid");
            black_box(s.best())
        })
    });
    g.finish();
}

criterion_group!(benches, advisor);
criterion_main!(benches);
