//! Prints every validation row's error for given efficiencies:
//! `cargo run --release -p trainer-course --example calibrate -- MFU MBU STEP_S CPU_S ALLREDUCE_S`.
use trainer_course::validation::{run_row_with, shipped};
use trainer_engine::cost::Efficiency;

fn main() {
    let a: Vec<f64> = std::env::args()
        .skip(1)
        .map(|s| s.parse().expect("a number"))
        .collect();
    let mut e = Efficiency::CALIBRATED;
    if a.len() == 5 {
        (
            e.mfu,
            e.mbu,
            e.step_overhead_s,
            e.cpu_overhead_s,
            e.allreduce_latency_s,
        ) = (a[0], a[1], a[2], a[3], a[4]);
    }
    let mut worst: f64 = 0.0;
    for row in shipped().expect("parses").row {
        let o = run_row_with(&row, e).expect("runs");
        worst = worst.max(o.error.abs());
        println!(
            "{:<34} {:>9.3} {:>9.3} {:+6.1} %",
            o.id,
            o.measured,
            o.simulated,
            o.error * 100.0
        );
    }
    println!("worst {:.1} %", worst * 100.0);
}
