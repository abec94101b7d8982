//! A moment's ranking is a claim about the world, so it must hold beyond one run. Every
//! option of every fleet and search moment runs under both engines, at the scenario's load and a quarter
//! below and above it, over three seeds: the option the file calls strong must be graded
//! strong (best among those holding the target, ties shared) in every case at the scenario's
//! load, and at the other loads too unless the moment says its ranking depends on the load,
//! in which case the runs must show it change (a stale claim fails as well). At the
//! scenario's own load, seed and engine, every computed grade is the file's.
//!
//! Where a moment's reasons claim more than its ranking (the budget-cut, the speculation and
//! the cheapest-fleet moments), the claims are checked on the same runs.
//!
//! About 550 fleet runs: they are spread over the machine's cores.

use trainer_course::moments::{moments, Grade, Moment, OptionOutcome, Variant};
use trainer_engine::engine::Engine;

#[test]
fn every_moments_strong_option_wins_beyond_one_run() {
    let all: Vec<Moment> = moments()
        .expect("the moments parse")
        .into_iter()
        .filter(|m| m.scenario.is_some() || m.search.is_some())
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
    let mut checked = 0;
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
        // What a moment's reasons claim beyond its ranking, on the same runs.
        let runs: Vec<(Variant, &[OptionOutcome])> = results
            .iter()
            .filter(|r| r.0 == mi)
            .map(|r| (r.1, r.3.as_slice()))
            .collect();
        match m.id.as_str() {
            "halve-cost" => {
                the_bf16_budget_fleet_has_the_least_margin_at_and_above_its_load(m, &runs)
            }
            "spec-latency" => the_speculation_moments_reasons_hold(m, &runs),
            "cheapest-fleet" => the_cheapest_fleet_moments_reasons_hold(m, &runs),
            "disaggregate" => the_disaggregation_moments_reasons_hold(m, &runs),
            "long-chats" => the_long_chats_moments_reasons_hold(m, &runs),
            "adapters" => the_adapters_moments_reasons_hold(m, &runs),
            _ => {}
        }
        checked += usize::from(matches!(
            m.id.as_str(),
            "halve-cost"
                | "spec-latency"
                | "cheapest-fleet"
                | "disaggregate"
                | "long-chats"
                | "adapters"
        ));
    }
    assert_eq!(checked, 6, "every moment with reasons to check ran");
}

/// Prints every fleet moment's figures at its own load, seed and engine (for authors).
#[test]
#[ignore]
fn print_the_default_runs() {
    for m in moments()
        .unwrap()
        .into_iter()
        .filter(|m| m.scenario.is_some() || m.search.is_some())
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

/// The budget-cut moment says the BF16 fleet holds with the least margin of the options on the
/// budget's H100s, and that a busier hour eats that margin first: at the scenario's load and at
/// a quarter more, on either engine and every seed, its p99 time per output token is the
/// highest of those options; its KV pool was never short, as the FP8 cache's reason says; and the budget's H200s
/// miss the target, as theirs says.
fn the_bf16_budget_fleet_has_the_least_margin_at_and_above_its_load(
    m: &Moment,
    runs: &[(Variant, &[OptionOutcome])],
) {
    let bf16 = m.options.iter().position(|o| o.id == "bf16").expect("bf16");
    let key = m.figure_index("tpot_p99").expect("the key figure");
    let preempted = m.figure_index("preemptions").expect("preemptions");
    let mut seen = 0;
    let h200 = m.options.iter().position(|o| o.id == "h200").expect("h200");
    for (v, o) in runs.iter().filter(|(v, _)| v.load >= 1.0) {
        let tpot: Vec<f64> = o.iter().map(|x| x.figures[key].unwrap()).collect();
        // Of the options on the budget's H100s, BF16 has the least margin.
        let worst = tpot
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != h200)
            .map(|(_, t)| *t)
            .fold(f64::MIN, f64::max);
        assert_eq!(tpot[bf16], worst, "{v:?}: {tpot:?}");
        // The H200s' reason: the budget's fewer, bigger GPUs miss the target.
        assert!(!m.holds_slo(&o[h200]), "{v:?}: {tpot:?}");
        // The FP8 cache's reason: the BF16 pool was never short (no preemption).
        assert_eq!(o[bf16].figures[preempted], Some(0.0), "{v:?}");
        seen += 1;
    }
    assert_eq!(seen, 2 * 2 * 3, "both engines, two loads, three seeds");
}

/// The speculation moment's reasons, on either engine and every seed: at the quiet hour every
/// proposer beats the bigger fleet without one (more GPUs do not shorten a quiet step); the
/// draft model with a cutoff is the draft model at night and the fleet without guesses at the
/// peak (its cutoff stays tripped: a slower p50 than the draft's); the EAGLE head has the
/// lowest p99 at the peak; and a quarter more traffic makes the always-on draft miss the
/// target while the EAGLE head holds it.
/// The disaggregation moment says that replicas which only decode keep replies flowing
/// (whatever the load or the ratio: the split's p99 gap between tokens is under half a mixed
/// fleet's), that only a split fleet pays for moving KV caches, and that the smaller prefill
/// pool is the busier one and queues more.
fn the_disaggregation_moments_reasons_hold(m: &Moment, runs: &[(Variant, &[OptionOutcome])]) {
    let opt = |id: &str| m.options.iter().position(|o| o.id == id).expect(id);
    let fig = |id: &str| m.figure_index(id).expect(id);
    let mixed = [opt("mixed"), opt("bigger-budget")];
    let (even, lean) = (opt("split-4-4"), opt("split-2-6"));
    let (itl, transfer, queue, busy) = (
        fig("itl_p99"),
        fig("transfer_mean"),
        fig("queue_p95"),
        fig("first_pool_busy"),
    );
    for (v, o) in runs {
        let at = |i: usize, f: usize| o[i].figures[f].expect("a figure");
        for split in [even, lean] {
            assert!(at(split, transfer) > 0.0, "{v:?}");
            for mix in mixed {
                assert!(
                    at(split, itl) < 0.5 * at(mix, itl),
                    "{v:?}: {split} against {mix}"
                );
                assert_eq!(at(mix, transfer), 0.0, "{v:?}");
            }
        }
        assert!(at(lean, busy) > at(even, busy), "{v:?}");
        assert!(at(lean, queue) > at(even, queue), "{v:?}");
    }
    assert_eq!(
        runs.len(),
        2 * 3 * 3,
        "both engines, three loads, three seeds"
    );
}

/// The long-chats moment says the GPU has let most of a returning chat's history go in every
/// arm (under half its prompt tokens are found there), that more or bigger GPUs cost more,
/// that only the host tier copies tokens back, on the GPUs of the first arm, and that only the
/// shorter context leaves conversation out of its prompts.
fn the_long_chats_moments_reasons_hold(m: &Moment, runs: &[(Variant, &[OptionOutcome])]) {
    let opt = |id: &str| m.options.iter().position(|o| o.id == id).expect(id);
    let fig = |id: &str| m.figure_index(id).expect(id);
    let (none, h200, more, host, short) = (
        opt("recompute"),
        opt("h200"),
        opt("more-replicas"),
        opt("host-tier"),
        opt("short-context"),
    );
    let (gpu_hit, host_hit, dollars) = (fig("gpu_hit"), fig("host_hit"), fig("gpu_dollars"));
    let dropped = fig("dropped");
    for (v, o) in runs {
        let at = |i: usize, f: usize| o[i].figures[f].expect("a figure");
        for i in [none, h200, more, host, short] {
            assert!(
                at(i, gpu_hit) < 0.5,
                "{v:?}: option {i} keeps most on the GPU"
            );
        }
        // Only the shorter context leaves anything out, and it copies nothing back.
        assert!(at(short, dropped) > 0.0, "{v:?}");
        assert_eq!(at(short, host_hit), 0.0, "{v:?}");
        for i in [none, h200, more, host] {
            assert_eq!(at(i, dropped), 0.0, "{v:?}");
        }
        for i in [none, h200, more] {
            assert_eq!(at(i, host_hit), 0.0, "{v:?}");
            assert!(at(host, host_hit) > at(i, gpu_hit), "{v:?}");
        }
        assert!(at(h200, dollars) > at(none, dollars) && at(more, dollars) > at(none, dollars));
        assert!((at(host, dollars) - at(none, dollars)).abs() < 0.01 * at(none, dollars));
    }
    assert_eq!(
        runs.len(),
        2 * 3 * 3,
        "both engines, three loads, three seeds"
    );
}

/// The adapters moment says that a replica per tenant never loads an adapter, runs smaller
/// batches and a quicker token than shared replicas; that spreading every adapter everywhere
/// passes requests over and loads adapters far more often than routing by adapter does.
fn the_adapters_moments_reasons_hold(m: &Moment, runs: &[(Variant, &[OptionOutcome])]) {
    let opt = |id: &str| m.options.iter().position(|o| o.id == id).expect(id);
    let fig = |id: &str| m.figure_index(id).expect(id);
    let (own, everywhere, affinity) = (opt("per-tenant"), opt("everywhere"), opt("affinity"));
    let (loads, passed, batch, tpot) = (
        fig("loads"),
        fig("passed_over"),
        fig("batch"),
        fig("tpot_p50"),
    );
    for (v, o) in runs {
        let at = |i: usize, f: usize| o[i].figures[f].expect("a figure");
        assert_eq!(at(own, loads), 0.0, "{v:?}");
        assert!(at(own, batch) < at(affinity, batch), "{v:?}");
        assert!(at(own, tpot) < at(affinity, tpot), "{v:?}");
        assert!(
            at(affinity, loads) * 10.0 < at(everywhere, loads),
            "{v:?}: routing by adapter loads {} against {}",
            at(affinity, loads),
            at(everywhere, loads)
        );
        assert!(at(affinity, passed) < at(everywhere, passed), "{v:?}");
    }
    assert_eq!(
        runs.len(),
        2 * 3 * 3,
        "both engines, three loads, three seeds"
    );
}

fn the_speculation_moments_reasons_hold(m: &Moment, runs: &[(Variant, &[OptionOutcome])]) {
    let opt = |id: &str| m.options.iter().position(|o| o.id == id).expect(id);
    let fig = |id: &str| m.figure_index(id).expect(id);
    let (more, draft, cutoff, eagle) = (
        opt("more-replicas"),
        opt("draft"),
        opt("draft-cutoff"),
        opt("eagle"),
    );
    let (quiet, p50, p99) = (
        fig("quiet_tpot"),
        fig("peak_tpot_p50"),
        fig("peak_tpot_p99"),
    );
    let limit = m.slo.as_ref().expect("a target").max;
    let mut seen = 0;
    for (v, o) in runs {
        let at = |i: usize, f: usize| o[i].figures[f].expect("a figure");
        if v.load == 1.0 {
            for i in 0..o.len() {
                if i != more {
                    assert!(at(i, quiet) < at(more, quiet), "{v:?}: option {i} at night");
                }
                if i != eagle {
                    assert!(at(eagle, p99) < at(i, p99), "{v:?}: option {i} at the peak");
                }
            }
            assert_eq!(at(cutoff, quiet), at(draft, quiet), "{v:?}");
            assert!(at(cutoff, p50) > at(draft, p50), "{v:?}");
            seen += 1;
        } else if v.load == Variant::OTHER_LOADS[1] {
            assert!(at(draft, p99) > limit, "{v:?}: {}", at(draft, p99));
            assert!(at(eagle, p99) <= limit, "{v:?}: {}", at(eagle, p99));
            seen += 1;
        }
    }
    assert_eq!(seen, 2 * 2 * 3, "both engines, two loads, three seeds");
}

/// The cheapest-fleet moment says the options capped at the sizing's batch cap it at the batch
/// the calculator assumes; that BF16 at that cap runs the largest bill of the options; and
/// that FP8 at the cap carries fewer streams per replica than FP8 with the high limit. On every
/// engine, load and seed.
fn the_cheapest_fleet_moments_reasons_hold(m: &Moment, runs: &[(Variant, &[OptionOutcome])]) {
    use trainer_course::sizing::{Inputs, Question};
    let assumed = Inputs::defaults(Question::Fleet)
        .get("batch")
        .expect("the calculator assumes a batch");
    for id in ["bf16-32", "fp8-32"] {
        let o = m.options.iter().find(|o| o.id == id).expect(id);
        let settings = o.settings.as_deref().unwrap_or_default();
        assert!(
            settings.contains(&format!("max_seqs={assumed}")),
            "{id} is capped at the calculator's batch of {assumed}: {settings}"
        );
    }
    let at = |id: &str| m.options.iter().position(|o| o.id == id).expect(id);
    let (bill, streams) = (
        m.figure_index("dollars_per_hour").unwrap(),
        m.figure_index("streams").unwrap(),
    );
    for (v, o) in runs {
        let worst = o.iter().filter_map(|x| x.figures[bill]).fold(0.0, f64::max);
        assert_eq!(
            o[at("bf16-32")].figures[bill],
            Some(worst),
            "BF16 at the sizing's batch has the largest bill at {v:?}: {o:?}"
        );
        let (capped, open) = (
            o[at("fp8-32")].figures[streams].unwrap(),
            o[at("fp8-256")].figures[streams].unwrap(),
        );
        assert!(
            capped < open,
            "FP8 at the cap carries fewer streams ({capped}) than with the high limit ({open}) at {v:?}"
        );
    }
}
