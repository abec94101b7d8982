//! The simulator against published measurements (content/validation/measurements.toml): every
//! row not excluded (with its reason), replayed with the default calibrated efficiencies, lands
//! within 15 % of its figure; the rows cover 8B and 70B, H100, H200 and A100, one and four
//! GPUs per replica, latency and throughput.

use std::collections::BTreeSet;
use trainer_course::validation::{run_row, shipped, BAND};

#[test]
fn every_published_measurement_is_within_its_band() {
    let m = shipped().expect("the measurements file parses");
    let mut lines = Vec::new();
    let mut outcomes = Vec::new();
    for row in &m.row {
        let o = run_row(row).unwrap_or_else(|e| panic!("{}: {e}", row.id));
        lines.push(format!(
            "{:<34} {:<20} measured {:>9.3} simulated {:>9.3} ({:+.1} %){}",
            o.id,
            o.metric,
            o.measured,
            o.simulated,
            o.error * 100.0,
            if o.excluded.is_some() {
                " excluded"
            } else {
                ""
            }
        ));
        assert!(o.metrics.completed > 0, "{}", o.id);
        outcomes.push((row, o));
    }
    let report = lines.join("\n");
    println!("{report}");
    let held: Vec<_> = outcomes
        .iter()
        .filter(|(_, o)| o.excluded.is_none())
        .collect();
    assert!(held.len() >= 8, "at least eight rows held to the band");
    for (_, o) in &held {
        assert!(
            o.error.abs() <= BAND,
            "{} is out of its band:\n{report}",
            o.id
        );
    }
    let covered = |f: &dyn Fn(&trainer_course::validation::Row) -> String| -> BTreeSet<String> {
        held.iter().map(|(r, _)| f(r)).collect()
    };
    for want in ["llama-3.1-8b", "llama-3.1-70b"] {
        assert!(covered(&|r| r.model.clone()).contains(want), "{want}");
    }
    for want in ["h100-sxm", "h200", "a100-80gb"] {
        assert!(covered(&|r| r.gpu.clone()).contains(want), "{want}");
    }
    for want in ["1", "4"] {
        assert!(covered(&|r| r.tp.to_string()).contains(want), "tp {want}");
    }
    for want in ["latency", "throughput"] {
        assert!(covered(&|r| r.kind.clone()).contains(want), "{want}");
    }
}

#[test]
fn an_excluded_row_says_why_and_a_broken_file_is_an_error() {
    let m = shipped().unwrap();
    assert!(m
        .row
        .iter()
        .filter_map(|r| r.excluded.as_deref())
        .all(|why| why.len() > 40));
    assert!(trainer_course::validation::parse("[[row]]\nid = 1").is_err());
    let about = trainer_course::validation::about().expect("the page's words parse");
    assert!(!about.models.is_empty() && !about.leaves_out.is_empty());
    let keys: Vec<&str> = about.metric.iter().map(|m| m.key.as_str()).collect();
    assert_eq!(keys, ["ttft", "tpot", "itl", "e2el", "goodput"]);
    // No percentage is typed into the words (the content check refuses any typed figure);
    // the ones the page states are filled from the code, and nothing is left unfilled.
    assert!(!trainer_course::validation::ABOUT.contains('%'));
    assert!(about
        .models
        .iter()
        .chain(&about.leaves_out)
        .chain([&about.band])
        .all(|s| !s.contains('{') && !s.contains('}')));
    assert!(about.band.contains(&trainer_engine::format::percent(
        trainer_course::validation::BAND
    )));
}
