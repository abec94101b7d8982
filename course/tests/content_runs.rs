//! The runs the content names say what the content says of them: each probe of the lesson
//! reproduces its failure, and each interview moment runs every option, shows each figure it
//! names and calls strong the option its run ranks first.

use trainer_course::probes::probes;
use trainer_engine::fleet::FleetSim;

/// Each probe's broken arm is clearly worse than its fixed arm on the figure it is about (at
/// least one and a half times), and every figure it shows is a number in both reports.
#[test]
fn every_probe_reproduces_its_failure() {
    for p in probes().expect("probes.toml parses") {
        let key = p
            .key_index()
            .unwrap_or_else(|| panic!("{}: key names a figure", p.id));
        let [broken, fixed] = p.fleets().expect("the arms exist");
        let run = |f| {
            let mut sim = FleetSim::new(f).expect("valid fleet");
            sim.run();
            p.read(&sim.report())
        };
        let (b, f) = (run(broken), run(fixed));
        for (fig, (x, y)) in p.figures.iter().zip(b.iter().zip(&f)) {
            assert!(
                x.is_some() && y.is_some(),
                "{}: {} at {}",
                p.id,
                fig.label,
                fig.path
            );
        }
        let (x, y) = (b[key].unwrap(), f[key].unwrap());
        assert!(x > 1.5 * y, "{}: broken {x} vs fixed {y}", p.id);
    }
}

/// Every moment runs each of its options (same seed, same arrivals), every figure it shows is
/// a number for some option and its key figure for all, and the option it calls strong is the
/// one that wins: best on the key figure among the options that hold its SLO, and the only
/// one ranked first.
#[test]
fn every_moment_runs_each_option_and_its_strong_option_wins() {
    use trainer_course::moments::{moments, Grade, Variant};
    for m in moments().expect("the moments parse") {
        let outcomes = m
            .run_options(Variant::default())
            .expect("every option runs");
        let key = m.figure_index(&m.key).unwrap();
        for (fig_i, fig) in m.figures.iter().enumerate() {
            assert!(
                outcomes.iter().any(|o| o.figures[fig_i].is_some()),
                "{}: {} ({}) is never a number",
                m.id,
                fig.label,
                fig.path
            );
        }
        for (o, opt) in outcomes.iter().zip(&m.options) {
            assert!(
                o.figures[key].is_some(),
                "{}: {} has no key figure",
                m.id,
                opt.id
            );
        }
        // The grades the file gives are the ones its runs earn (the runs graded as the page
        // grades them), at the moment's own load, seed and engine.
        let want: Vec<Grade> = m.options.iter().map(|o| o.grade).collect();
        assert_eq!(m.grades(&outcomes), want, "{}: {:?}", m.id, outcomes);
        let rank = m.ranking(&outcomes);
        let winner = &m.options[rank[0]];
        assert_eq!(
            winner.grade,
            Grade::Strong,
            "{}: {} wins, not the strong option ({:?})",
            m.id,
            winner.id,
            outcomes
        );
        assert!(
            m.holds_slo(&outcomes[rank[0]]),
            "{}: the strong option misses the SLO",
            m.id
        );
        let second = &outcomes[rank[1]];
        assert_ne!(
            second.figures[key], outcomes[rank[0]].figures[key],
            "{}: a tie on the key figure",
            m.id
        );
        if m.estimate.is_some() {
            let v = m.estimate_answer().unwrap().unwrap();
            assert!(v.is_finite() && v > 0.0, "{}: estimate {v}", m.id);
        }
    }
}
