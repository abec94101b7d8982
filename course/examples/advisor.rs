//! Runs the advisor's search of the seed problem natively and prints what it found: every
//! candidate with its floor and counts, every pruned combination with its reason, the runs
//! done and the cheapest configuration that held. `cargo run --release -p trainer-course
//! --example advisor`.

use std::time::Instant;
use trainer_course::advisor::{Search, Space};

fn main() {
    let start = Instant::now();
    let mut s = Search::new(Space::seed()).expect("the seed space is valid");
    s.run_here().expect("the runs are valid");
    let took = start.elapsed();
    for (i, c) in s.candidates.iter().enumerate() {
        println!(
            "{:?}: floor {} ({:.0} of {:.0} tok/s each), count {:?}, ${:.2}/h",
            c.settings,
            c.floor.replicas,
            c.floor.capacity_tok_s,
            c.floor.demand_tok_s,
            s.count(i),
            s.count(i).map_or(0.0, |n| c.dollars_per_hour(n)),
        );
    }
    for p in &s.pruned {
        println!("pruned {:?}: {:?}", p.settings, p.reason);
    }
    let runs = s.points.len();
    let sim_s: f64 = s.points.iter().map(|p| p.horizon_s).sum();
    println!("{runs} runs, {sim_s:.0} simulated seconds, in {took:?}");
    if let Some((i, n)) = s.best() {
        println!(
            "best: {:?} at {n} replicas, ${:.2}/h",
            s.candidates[i].settings,
            s.candidates[i].dollars_per_hour(n)
        );
        println!("lab: {}", s.setup(i, n).query());
    }
    let w = trainer_course::advisor::answer::words().expect("the advisor's words");
    for (key, line) in trainer_course::advisor::answer::answer(&s, &w.answer) {
        println!("{key}: {line}");
    }
}
