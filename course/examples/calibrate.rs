//! Fits the calibrated efficiencies to the validation rows marked `fitted`, and prints every
//! row's error (fitted and held out) with the efficiencies it ends on:
//!
//! `cargo run --release -p trainer-course --example calibrate` (prints the rows at
//! `Efficiency::CALIBRATED`), `... -- fit [FIRST_STEP]` (searches from there).
//!
//! The search is a pattern search on each parameter in turn (multiply or divide by a step,
//! keep what lowers the objective, halve the step when nothing does); the objective is the sum
//! over fitted rows of the squared log of simulated over measured. Held-out rows never enter it.
use trainer_course::validation::{run_row_with, shipped, Outcome, Role, Row};
use trainer_engine::cost::Efficiency;

type Param = (&'static str, fn(&mut Efficiency) -> &mut f64, f64, f64);

const PARAMS: &[Param] = &[
    ("mfu", |e| &mut e.mfu, 0.05, 1.0),
    ("mfu_fp8", |e| &mut e.mfu_fp8, 0.05, 1.0),
    ("gemm_half_tokens", |e| &mut e.gemm_half_tokens, 1.0, 4096.0),
    ("mbu", |e| &mut e.mbu, 0.3, 0.95),
    ("mbu_kv", |e| &mut e.mbu_kv, 0.1, 0.95),
    ("step_overhead_s", |e| &mut e.step_overhead_s, 1e-5, 0.01),
    ("layer_overhead_s", |e| &mut e.layer_overhead_s, 1e-7, 1e-3),
    ("seq_overhead_s", |e| &mut e.seq_overhead_s, 1e-7, 1e-3),
    ("cpu_overhead_s", |e| &mut e.cpu_overhead_s, 1e-5, 0.02),
    (
        "cpu_seq_overhead_s",
        |e| &mut e.cpu_seq_overhead_s,
        1e-7,
        1e-3,
    ),
    ("cpu_admit_s", |e| &mut e.cpu_admit_s, 1e-5, 0.02),
    (
        "allreduce_latency_s",
        |e| &mut e.allreduce_latency_s,
        1e-6,
        1e-3,
    ),
];

fn run_all(rows: &[Row], e: Efficiency) -> Vec<Outcome> {
    let half = rows.len().div_ceil(2);
    std::thread::scope(|s| {
        let parts: Vec<_> = rows
            .chunks(half.max(1))
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|r| run_row_with(r, e).expect("runs"))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|p| p.join().expect("no panic"))
            .collect()
    })
}

fn objective(rows: &[Row], e: Efficiency) -> f64 {
    run_all(rows, e)
        .iter()
        .map(|o| (o.simulated / o.measured).ln().powi(2))
        .sum()
}

fn print(rows: &[Row], e: Efficiency) {
    let mut worst = [0.0f64; 2];
    let mut within = [(0, 0); 2];
    for o in run_all(rows, e) {
        let k = (o.role == Role::HeldOut) as usize;
        if o.excluded.is_none() {
            worst[k] = worst[k].max(o.error.abs());
            within[k].0 += o.within_band as usize;
            within[k].1 += 1;
        }
        println!(
            "{:<44} {:<9} batch {:>6.1} {:>10.3} {:>10.3} {:+6.1} %{}",
            o.id,
            if k == 0 { "fitted" } else { "held out" },
            o.batch,
            o.measured,
            o.simulated,
            o.error * 100.0,
            if o.excluded.is_some() {
                " (excluded)"
            } else {
                ""
            }
        );
    }
    for (k, name) in ["fitted", "held out"].iter().enumerate() {
        println!(
            "{name}: {} of {} within the band, worst {:.1} %",
            within[k].0,
            within[k].1,
            worst[k] * 100.0
        );
    }
    println!("{e:#?}");
}

fn main() {
    let all = shipped().expect("parses").row;
    let mut e = Efficiency::CALIBRATED;
    if std::env::args().nth(1).as_deref() == Some("fit") {
        let fitted: Vec<Row> = all
            .iter()
            .filter(|r| r.role == Role::Fitted && r.excluded.is_none())
            .cloned()
            .collect();
        let mut best = objective(&fitted, e);
        // The first step, a factor (`fit 1.2` to refine from where the constants are).
        let mut step: f64 = std::env::args()
            .nth(2)
            .and_then(|s| s.parse().ok())
            .unwrap_or(1.5);
        while step > 1.01 {
            let mut improved = false;
            for (name, field, lo, hi) in PARAMS {
                for factor in [step, 1.0 / step] {
                    let mut t = e;
                    let v = *field(&mut t);
                    *field(&mut t) = (if v > 0.0 { v * factor } else { *lo }).clamp(*lo, *hi);
                    let f = objective(&fitted, t);
                    if f < best {
                        best = f;
                        e = t;
                        improved = true;
                        eprintln!("{name} -> {:.4e}: {best:.5}", *field(&mut e));
                        break;
                    }
                }
            }
            if !improved {
                step = step.sqrt();
                eprintln!("step {step:.4}");
            }
        }
    }
    print(&all, e);
}
