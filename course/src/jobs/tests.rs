use super::*;
use trainer_engine::scenario::FleetScenario;

/// A clock that moves `step` milliseconds each time it is read, so slices end after a few
/// reads whatever the machine.
fn ticking(step: f64) -> impl FnMut() -> f64 {
    let mut t = 0.0;
    move || {
        t += step;
        t
    }
}

fn short(mut c: FleetConfig, horizon_s: f64) -> FleetConfig {
    c.truncate(horizon_s);
    c
}

fn direct(c: &FleetConfig) -> FleetReport {
    let mut sim = FleetSim::new(c.clone()).unwrap();
    sim.run();
    sim.report()
}

fn outcome(replies: &[Reply]) -> &Outcome {
    match replies.last() {
        Some(Reply::Done(o)) => o,
        other => panic!("the job did not finish: {other:?}"),
    }
}

/// A lab run flat out to its end, with live results every `live_ms` of (ticking) wall time.
fn lab_run(config: &FleetConfig, live_ms: f64) -> Vec<Reply> {
    let job = Job::Lab {
        config: Box::new(config.clone()),
        speed: None,
        live_ms,
    };
    run_to_end(job, &mut ticking(1.0), 5.0)
}

/// Encodes and decodes a message as the page and the worker do.
fn through_json<T: Serialize + serde::de::DeserializeOwned>(m: &T) -> T {
    serde_json::from_str(&serde_json::to_string(m).unwrap()).unwrap()
}

#[test]
fn a_fleets_job_gives_each_fleets_report_as_the_simulator_does_directly() {
    let configs: Vec<FleetConfig> = FleetScenario::builtin("fleet-ttft-gap")
        .unwrap()
        .arms
        .into_iter()
        .map(|(_, c)| short(c, 30.0))
        .collect();
    assert!(configs.len() > 1);
    let job = Job::Fleets {
        configs: configs.clone(),
        series: true,
    };
    let replies = run_to_end(job, &mut ticking(1.0), 5.0);
    // Many slices, each with its progress, and the runs counted as they finish.
    let progress: Vec<&Progress> = replies
        .iter()
        .filter_map(|r| match r {
            Reply::Progress(p) => Some(p),
            _ => None,
        })
        .collect();
    assert!(progress.len() > configs.len());
    assert!(progress.windows(2).all(|w| w[0].finished <= w[1].finished));
    assert!(progress.iter().any(|p| p.finished > 0));
    let Outcome::Reports(reports) = outcome(&replies) else {
        panic!("not reports")
    };
    let expected: Vec<FleetReport> = configs.iter().map(direct).collect();
    assert_eq!(reports, &expected);
    // Without the series, the same reports less their series.
    let job = Job::Fleets {
        configs: configs.clone(),
        series: false,
    };
    let Outcome::Reports(lean) = outcome(&run_to_end(job, &mut ticking(1.0), 5.0)).clone() else {
        panic!("not reports")
    };
    for (mut full, lean) in expected.into_iter().zip(lean) {
        assert!(!full.series.is_empty() && lean.series.is_empty());
        full.series.clear();
        assert_eq!(full, lean);
    }
}

#[test]
fn every_message_survives_json_exactly() {
    let seed = short(FleetConfig::seed(), 20.0);
    let jobs = [
        Job::Fleets {
            configs: vec![seed.clone()],
            series: true,
        },
        Job::Lab {
            config: Box::new(seed.clone()),
            speed: None,
            live_ms: 3.0,
        },
        Job::FleetStory { split: 0 },
        Job::ReplicaStory(ReplicaParams::shipped()),
        Job::Validation(0),
        Job::ReadScenario(trainer_engine::files::SCENARIOS_FLEET_SEED.into()),
        Job::ReadScenario("kind = [".into()),
    ];
    for job in jobs {
        let start = ToWorker::Start {
            id: 7,
            job: job.clone(),
        };
        assert_eq!(through_json(&start), start);
        let replies = run_to_end(job, &mut ticking(1.0), 5.0);
        outcome(&replies);
        for reply in replies {
            let m = FromWorker::Reply { id: 7, reply };
            assert_eq!(through_json(&m), m);
        }
    }
    for c in [
        Control::Cancel,
        Control::Pause,
        Control::Resume,
        Control::Speed(Some(100.0)),
        Control::Speed(None),
    ] {
        let m = ToWorker::Control { id: 1, control: c };
        assert_eq!(through_json(&m), m);
    }
}

/// The results a page shows from a lab run's replies, in order: each `Live` reply's and the
/// outcome's, whole (the series parts before them joined in).
fn shown(series: &mut LabSeries, replies: &[Reply]) -> Vec<RunResult> {
    let mut out = Vec::new();
    for r in replies {
        match r {
            Reply::Series(p) => assert!(series.extend(p.clone()), "parts follow on"),
            Reply::Live(l) => out.push(series.join((**l).clone()).expect("follows on")),
            Reply::Done(Outcome::Lab { result, .. }) => {
                out.push(series.join((**result).clone()).expect("follows on"))
            }
            _ => {}
        }
    }
    out
}

#[test]
fn a_lab_run_shows_live_results_and_ends_with_the_direct_report() {
    let config = short(FleetConfig::seed(), 60.0);
    let replies = lab_run(&config, 20.0);
    // Each reply carries only the series points the ones before did not; put back together,
    // each result shown is the run's whole series so far.
    let shown = shown(&mut LabSeries::default(), &replies);
    assert!(shown.len() > 3, "{} results shown", shown.len());
    assert!(shown
        .windows(2)
        .all(|w| w[0].report.end_s <= w[1].report.end_s
            && w[1].report.series.starts_with(&w[0].report.series)));
    // The outcome itself carries figures, no points: they went before it.
    let Outcome::Lab { result, .. } = outcome(&replies) else {
        panic!("not a lab outcome")
    };
    assert!(result.report.series.is_empty());
    assert_eq!(result.series_from, direct(&config).series.len());
    assert_eq!(shown.last().unwrap().report, direct(&config));
}

/// A reply carries at most `PART_POINTS` series points, and only a live result or the outcome
/// carries figures: a run whose points come faster (here a whole run before the first live
/// result) sends them in several parts the page reads a task each and draws once, which join
/// to the direct report.
#[test]
fn a_lab_run_sends_its_series_in_parts_the_page_reads_one_at_a_time() {
    let config = short(FleetConfig::seed(), 3.0 * PART_POINTS as f64);
    let replies = lab_run(&config, 1e12);
    let sizes: Vec<usize> = replies
        .iter()
        .filter_map(|r| match r {
            Reply::Series(p) => Some(p.points.0.len()),
            _ => None,
        })
        .collect();
    assert!(sizes.len() >= 3, "{sizes:?}");
    assert!(
        sizes.iter().all(|&n| n > 0 && n <= PART_POINTS),
        "{sizes:?}"
    );
    // Flat out with no live results: the parts, then the outcome.
    assert!(replies.iter().all(|r| !matches!(r, Reply::Live(_))));
    let shown = shown(&mut LabSeries::default(), &replies);
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].report, direct(&config));
}

#[test]
fn a_lab_series_refuses_a_part_that_does_not_follow_on_and_restarts_at_zero() {
    let config = short(FleetConfig::seed(), 20.0);
    let replies = lab_run(&config, 5.0);
    let parts: Vec<SeriesPart> = replies
        .iter()
        .filter_map(|r| match r {
            Reply::Series(p) => Some(p.clone()),
            _ => None,
        })
        .collect();
    assert!(parts.len() > 3 && parts[1].from > 0 && !parts[1].points.0.is_empty());
    let mut series = LabSeries::default();
    // A lost reply: the one after it does not follow on.
    assert!(series.extend(parts[0].clone()));
    assert!(!series.extend(parts[2].clone()));
    // A part from 0 starts again.
    for p in &parts {
        assert!(series.extend(p.clone()));
    }
    let Outcome::Lab { result, .. } = outcome(&replies) else {
        panic!("not a lab outcome")
    };
    let whole = series.join((**result).clone()).expect("follows on");
    assert_eq!(whole.report, direct(&config));
    // Figures that do not follow on from the points kept are refused too.
    let mut short_series = LabSeries::default();
    assert!(short_series.extend(parts[0].clone()));
    assert!(short_series.join((**result).clone()).is_none());
}

/// Series columns come back as the points they were made of, and columns of different
/// lengths are refused with a message.
#[test]
fn series_columns_survive_json_and_refuse_ragged_columns() {
    let points = direct(&short(FleetConfig::seed(), 30.0)).series;
    assert!(points.len() >= 30);
    let part = SeriesPart {
        from: 4,
        points: Columns(points.clone()),
    };
    let json = serde_json::to_string(&part).unwrap();
    assert_eq!(through_json(&part), part);
    // A third of the bytes of the points as objects, or less.
    let objects = serde_json::to_string(&points).unwrap();
    assert!(
        json.len() * 3 <= objects.len(),
        "{} against {}",
        json.len(),
        objects.len()
    );
    let ragged = json.replacen("\"running\":[", "\"running\":[1,", 1);
    let e = serde_json::from_str::<SeriesPart>(&ragged).unwrap_err();
    assert!(e.to_string().contains("different lengths"), "{e}");
}

#[test]
fn a_paced_run_keeps_to_its_clock_and_ends_where_a_flat_out_run_does() {
    let config = short(FleetConfig::seed(), 10.0);
    let mut running = Running::start(
        Job::Lab {
            config: Box::new(config.clone()),
            speed: Some(1.0),
            live_ms: 1e9,
        },
        0.0,
    )
    .unwrap();
    // At one simulated second per wall second, 2 s of wall time reach about 2 s of traffic.
    let mut wall = 0.0;
    let mut clock = || wall;
    let (_, next) = running.slice(&mut clock, 50.0);
    assert_eq!(next, Next::Later);
    wall = 2000.0;
    let mut clock = || wall;
    running.slice(&mut clock, 1e9);
    let Work::Lab { sim, .. } = &running.work else {
        panic!("not a lab run")
    };
    assert!(sim.now() >= 2.0 && sim.now() < 2.5, "at {}", sim.now());
    // Paused, it shows its results so far once, then does nothing however much time passes.
    running.control(Control::Pause);
    wall = 1e7;
    let mut clock = || wall;
    let (replies, next) = running.slice(&mut clock, 1e9);
    assert_eq!(next, Next::Later);
    assert!(
        matches!(replies.as_slice(), [Reply::Progress(_), .., Reply::Live(r)] if r.report.end_s <= 2.5)
    );
    assert_eq!(running.slice(&mut clock, 1e9), (Vec::new(), Next::Later));
    // Resumed flat out, it runs to the end and reports what a run in one go does.
    running.control(Control::Resume);
    running.control(Control::Speed(None));
    let mut clock = ticking(1.0);
    let done = loop {
        let (replies, next) = running.slice(&mut clock, 5.0);
        if next == Next::Finished {
            break replies;
        }
    };
    assert!(matches!(outcome(&done), Outcome::Lab { .. }));
    // The paused replies carried the series so far; the outcome's, the rest.
    let mut series = LabSeries::default();
    let paused = shown(&mut series, &replies);
    assert_eq!(paused.len(), 1);
    let whole = shown(&mut series, &done);
    assert_eq!(whole.last().unwrap().report, direct(&config));
}

#[test]
fn a_set_up_the_simulator_refuses_fails_with_its_reason() {
    let mut bad = FleetConfig::seed();
    bad.pools.clear();
    let job = Job::Fleets {
        configs: vec![FleetConfig::seed(), bad],
        series: false,
    };
    let replies = run_to_end(job, &mut ticking(1.0), 5.0);
    match replies.as_slice() {
        [Reply::Failed(m)] => assert!(m.starts_with("The simulator cannot run this"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_build_ups_and_the_validation_come_back_as_their_direct_runs() {
    let replies = run_to_end(Job::FleetStory { split: 0 }, &mut ticking(1.0), 5.0);
    assert_eq!(
        outcome(&replies),
        &Outcome::FleetStory(Box::new(FleetStory::run().unwrap()))
    );
    let params = ReplicaParams::shipped();
    let replies = run_to_end(Job::ReplicaStory(params), &mut ticking(1.0), 5.0);
    assert_eq!(
        outcome(&replies),
        &Outcome::ReplicaStory(Box::new(ReplicaStory::run(params).unwrap()))
    );
    let shipped = validation::shipped().unwrap();
    for (i, row) in shipped.row.iter().enumerate() {
        let replies = run_to_end(Job::Validation(i), &mut ticking(1.0), 5.0);
        let Outcome::Validation(got) = outcome(&replies) else {
            panic!("not the validation")
        };
        assert_eq!(
            got.as_ref().ok().map(|o| &**o),
            validation::run_row(row).ok().as_ref()
        );
    }
    let past = run_to_end(Job::Validation(shipped.row.len()), &mut ticking(1.0), 5.0);
    assert!(matches!(past.as_slice(), [Reply::Failed(_)]));
}
