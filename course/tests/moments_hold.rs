//! A moment's ranking is a claim about the world, so it must hold beyond one run. Every
//! option of every fleet moment runs under both engines, at the scenario's load and a quarter
//! below and above it, over three seeds: the option the file calls strong must be graded
//! strong (best among those holding the target, ties shared) in every case at the scenario's
//! load, and at the other loads too unless the moment says its ranking depends on the load,
//! in which case the runs must show it change (a stale claim fails as well). At the
//! scenario's own load, seed and engine, every computed grade is the file's.
//!
//! About 400 fleet runs: they are spread over the machine's cores.

use trainer_course::moments::{moments, Grade, Moment, OptionOutcome, Variant};
use trainer_engine::engine::Engine;

#[test]
fn every_moments_strong_option_wins_beyond_one_run() {
    let all: Vec<Moment> = moments()
        .expect("the moments parse")
        .into_iter()
        .filter(|m| m.scenario.is_some())
        .collect();
    let mut cases = Vec::new();
    for (mi, _) in all.iter().enumerate() {
        for engine in Engine::ALL {
            for load in [1.0, Variant::OTHER_LOADS[0], Variant::OTHER_LOADS[1]] {
                for seed in 0..3 {
                    cases.push((mi, Variant { engine, load, seed }));
                }
            }
        }
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let results: Vec<(usize, Variant, Vec<Grade>, Vec<OptionOutcome>)> = std::thread::scope(|s| {
        let chunks: Vec<_> = cases
            .chunks(cases.len().div_ceil(threads))
            .map(|chunk| {
                let all = &all;
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|&(mi, v)| {
                            let o = all[mi].run_options(v).expect("every option runs");
                            (mi, v, all[mi].grades(&o), o)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks
            .into_iter()
            .flat_map(|h| h.join().expect("a run panicked"))
            .collect()
    });
    for (mi, m) in all.iter().enumerate() {
        let strong = m
            .options
            .iter()
            .position(|o| o.grade == Grade::Strong)
            .expect("one strong option");
        let mut flipped = false;
        for (_, v, grades, o) in results.iter().filter(|r| r.0 == mi) {
            let holds = grades[strong] == Grade::Strong;
            let figures: Vec<_> = m
                .options
                .iter()
                .zip(o)
                .map(|(opt, o)| (opt.id.as_str(), &o.figures))
                .collect();
            if v.load == 1.0 || !m.load_dependent {
                assert!(
                    holds,
                    "{}: {} is not the best at {v:?}: {figures:?}",
                    m.id, m.options[strong].id
                );
            }
            flipped |= !holds;
            if *v == Variant::default() {
                let want: Vec<Grade> = m.options.iter().map(|o| o.grade).collect();
                assert_eq!(
                    grades, &want,
                    "{}: the file's grades at {v:?}: {figures:?}",
                    m.id
                );
            }
        }
        if m.load_dependent {
            assert!(
                flipped,
                "{}: says its ranking depends on the load, yet the strong option wins at every load",
                m.id
            );
        }
    }
}

/// Prints every fleet moment's figures at its own load, seed and engine (for authors).
#[test]
#[ignore]
fn print_the_default_runs() {
    for m in moments()
        .unwrap()
        .into_iter()
        .filter(|m| m.scenario.is_some())
    {
        let o = m
            .run_options(Variant::default())
            .expect("every option runs");
        println!("{} {:?}", m.id, m.grades(&o));
        for (opt, o) in m.options.iter().zip(&o) {
            println!("  {:24} {:?}", opt.id, o.figures);
        }
    }
}

/// The budget-cut moment says the BF16 fleet holds with the least margin of any option, and
/// that a busier hour eats that margin first: at the scenario's load and at a quarter more, on
/// either engine and every seed, its p99 time per output token is the highest of the options;
/// and its KV pool was never short, as the FP8 cache's reason says.
#[test]
fn the_bf16_budget_fleet_has_the_least_margin_at_and_above_its_load() {
    let m = moments()
        .expect("the moments parse")
        .into_iter()
        .find(|m| m.id == "halve-cost")
        .expect("the budget-cut moment");
    let bf16 = m.options.iter().position(|o| o.id == "bf16").expect("bf16");
    let key = m.figure_index("tpot_p99").expect("the key figure");
    let preempted = m.figure_index("preemptions").expect("preemptions");
    for engine in Engine::ALL {
        for load in [1.0, Variant::OTHER_LOADS[1]] {
            for seed in 0..3 {
                let v = Variant { engine, load, seed };
                let o = m.run_options(v).expect("every option runs");
                let tpot: Vec<f64> = o.iter().map(|x| x.figures[key].unwrap()).collect();
                let worst = tpot.iter().cloned().fold(f64::MIN, f64::max);
                assert_eq!(tpot[bf16], worst, "{v:?}: {tpot:?}");
                // The FP8 cache's reason: the BF16 pool was never short (no preemption).
                assert_eq!(o[bf16].figures[preempted], Some(0.0), "{v:?}");
            }
        }
    }
}
