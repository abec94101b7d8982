//! The build-ups: each script in `content/buildups/` has six steps, one per chapter the
//! simulator cuts, and every placeholder of the text that applies is a figure the chapter
//! provides; and the narrated figures are the run's own (D's chunks and TTFT, the preempted
//! request, the followed request's clocks), checked against runs made here without the
//! build-up code.

use trainer_content::buildup::{Script, StepScript, Told};
use trainer_content::words::{fill, placeholders};
use trainer_course::buildup::fleet::{clocks_at, Clock, ClockState, FleetStory, MomentKind};
use trainer_course::buildup::replica::{Cell, ReplicaParams, ReplicaStory, D};
use trainer_course::buildup::{figure_texts, Chapter, Variant};
use trainer_engine::fleet::{FleetSim, Outcome, OverflowAction};
use trainer_engine::replica::{ReplicaSim, TokenKind};
use trainer_engine::scenario::ReplicaScenario;
use trainer_engine::workload::LengthDist;

fn script(id: &str) -> Script {
    let path = format!(
        "{}/../content/buildups/{id}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("the script is readable");
    toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every step of `script` matches its chapter, and the text that applies names only figures
/// the chapter has and leaves no placeholder unfilled.
fn check_words(name: &str, script: &Script, chapters: &[Chapter]) {
    assert_eq!(script.steps.len(), 6, "{name}: six steps");
    assert_eq!(chapters.len(), 6, "{name}: six chapters");
    for (s, c) in script.steps.iter().zip(chapters) {
        assert_eq!(s.id, c.id, "{name}: steps in the simulator's order");
        assert!(!s.title.trim().is_empty() && !s.text.trim().is_empty());
        if c.variant == Variant::Absent {
            assert!(
                s.absent.is_some(),
                "{name}/{}: no text for a run without it",
                s.id
            );
        }
        if c.variant == Variant::Split {
            assert!(
                s.split.is_some(),
                "{name}/{}: no text for a split fleet",
                s.id
            );
        }
        // The text that applies, before its counted phrases are chosen.
        let applies = match c.variant {
            Variant::Absent => s.absent.as_ref().unwrap_or(&s.text),
            Variant::Split => s.split.as_ref().unwrap_or(&s.text),
            Variant::Happened => &s.text,
        };
        for k in &s.counted {
            let used = applies.contains(&format!("{{{}}}", k.name));
            assert!(
                c.figure(&k.count).is_some() || !used || c.variant == Variant::Absent,
                "{name}/{}: counted phrase {} counts {}, not a figure of the chapter",
                s.id,
                k.name,
                k.count
            );
        }
        let text = &narration(s, c);
        for p in placeholders(text) {
            assert!(
                c.figure(&p).is_some(),
                "{name}/{}: {{{p}}} is not a figure of the chapter ({:?})",
                s.id,
                c.figures
                    .iter()
                    .map(|f| f.name.as_ref())
                    .collect::<Vec<_>>()
            );
        }
        let filled = fill(text, &figure_texts(&c.figures));
        assert!(!filled.contains('{'), "{name}/{}: {filled}", s.id);
        assert!(c.first <= c.last);
    }
    check_no_odd_counts(name, script, chapters);
}

/// The narration the page shows for chapter `c`, counted phrases chosen, before its figures
/// are filled.
fn narration(s: &StepScript, c: &Chapter) -> String {
    let told = match c.variant {
        Variant::Happened => Told::Happened,
        Variant::Absent => Told::Absent,
        Variant::Split => Told::Split,
    };
    s.narration(told, |n| c.figure(n).map(|f| f.value))
}

/// Every narration of a run, filled as the page fills it; fails on a figure of 0 stated as a
/// count ("0 tokens") or of 1 with a plural ("1 chunks").
fn check_no_odd_counts(name: &str, script: &Script, chapters: &[Chapter]) -> Vec<String> {
    let mut out = Vec::new();
    for (s, c) in script.steps.iter().zip(chapters) {
        let filled = fill(&narration(s, c), &figure_texts(&c.figures));
        let words: Vec<&str> = filled.split_whitespace().collect();
        for w in words.windows(2) {
            let n = w[0].trim_start_matches('(');
            let plural = w[1].trim_end_matches([',', '.', ';', ')']).ends_with('s');
            let odd = n == "0" || (n == "1" && plural);
            assert!(!odd, "{name}/{}: “{} {}” in “{filled}”", s.id, w[0], w[1]);
        }
        out.push(filled);
    }
    out
}

fn value(c: &Chapter, name: &str) -> f64 {
    c.figure(name)
        .unwrap_or_else(|| panic!("{} has no {name}", c.id))
        .value
}

#[test]
fn replica_scripts_fit_every_kind_of_run() {
    let s = script("replica");
    let shipped = ReplicaParams::shipped();
    let runs = [
        ("shipped", shipped),
        (
            "no preemption",
            ReplicaParams {
                pool_blocks: 4_096,
                ..shipped
            },
        ),
        (
            "prefix caching",
            ReplicaParams {
                prefix_caching: true,
                ..shipped
            },
        ),
        (
            "short prompt",
            ReplicaParams {
                d_prompt: 300,
                budget: 128,
                ..shipped
            },
        ),
    ];
    let mut variants = Vec::new();
    for (name, p) in runs {
        let story = ReplicaStory::run(p).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        check_words(name, &s, &story.chapters);
        for c in &story.chapters {
            assert!(c.last < story.frames.len(), "{name}/{}", c.id);
        }
        variants.push(story.chapters[4].variant);
    }
    assert!(variants.contains(&Variant::Happened) && variants.contains(&Variant::Absent));
}

#[test]
fn replica_figures_are_the_traces() {
    let story = ReplicaStory::run(ReplicaParams::shipped()).unwrap();
    // The same run, made directly from the shipped scenario.
    let scenario = ReplicaScenario::builtin("replica-follow-one-chat").unwrap();
    let mut cfg = scenario.config;
    cfg.replica.trace_capacity = 100_000;
    let report = ReplicaSim::new(cfg).unwrap().run();
    let d = &report.requests[D];
    let first = d.first_token.unwrap();
    let chunks: Vec<u32> = report
        .trace
        .iter()
        .filter(|t| t.end <= first)
        .flat_map(|t| t.entries.iter())
        .filter(|e| e.id == D as u64 && e.kind == TokenKind::Prefill)
        .map(|e| e.new_tokens)
        .collect();
    let told: Vec<u32> = story.d_chunks.iter().map(|c| c.1).collect();
    assert_eq!(told, chunks, "D's chunks");
    assert!(chunks.len() > 1, "D's prompt takes several chunks");
    assert_eq!(chunks.iter().sum::<u32>(), d.prompt_len);
    let ch = &story.chapters;
    assert_eq!(value(&ch[1], "chunks"), chunks.len() as f64);
    assert_eq!(value(&ch[3], "d_ttft"), first - d.arrival, "D's TTFT");
    assert_eq!(value(&ch[0], "d_wait"), d.admitted.unwrap() - d.arrival);
    // TTFT is the wait plus the chunk steps.
    let sum = value(&ch[3], "d_wait") + value(&ch[3], "prefill_time");
    assert!((sum - value(&ch[3], "d_ttft")).abs() < 1e-12);
    // The preempted request and when.
    let step = report
        .trace
        .iter()
        .find(|t| !t.preempted.is_empty())
        .unwrap();
    assert_eq!(ch[4].variant, Variant::Happened);
    assert_eq!(value(&ch[4], "victim"), step.preempted[0] as f64);
    assert_eq!(ch[4].figure("victim").unwrap().text, "D");
    assert_eq!(value(&ch[4], "preempt_at"), step.start);
    assert_eq!(value(&ch[5], "preemptions"), report.preemptions as f64);
    // The blocks it lost are the ones it held in the frame before, and they are free after.
    let (before, at) = (&story.frames[ch[4].first], &story.frames[ch[4].last]);
    let victim = step.preempted[0] as usize;
    let held: Vec<usize> = (0..before.cells.len())
        .filter(|&b| before.cells[b] == Cell::Owned(victim))
        .collect();
    assert_eq!(held.len() as f64, value(&ch[4], "victim_blocks"));
    assert!(held.iter().all(|&b| at.cells[b] != Cell::Owned(victim)));
    // The clocks shown at a frame follow the record.
    let k = ch[3].first;
    let clock = story.d_clock(k);
    assert_eq!(clock.ttft, Some(first - d.arrival));
    assert_eq!(clock.chunks_done, clock.chunks);
    assert_eq!(story.d_clock(ch[1].first).ttft, None);
}

#[test]
fn a_pool_that_never_fills_says_no_preemption_happened() {
    let p = ReplicaParams {
        pool_blocks: 4_096,
        ..ReplicaParams::shipped()
    };
    let story = ReplicaStory::run(p).unwrap();
    assert_eq!(story.preemptions, 0);
    assert_eq!(story.chapters[4].variant, Variant::Absent);
    assert_eq!(story.chapters[5].variant, Variant::Absent);
    let peak = story.frames.iter().map(|f| f.kv_used).max().unwrap();
    assert_eq!(value(&story.chapters[4], "peak_used"), peak as f64);
}

#[test]
fn bad_changes_are_refused_with_the_field_named() {
    let shipped = ReplicaParams::shipped();
    let cases = [
        (
            ReplicaParams {
                d_prompt: 9,
                ..shipped
            },
            "prompt",
        ),
        (
            ReplicaParams {
                budget: 0,
                ..shipped
            },
            "budget",
        ),
        (
            ReplicaParams {
                pool_blocks: 10_000,
                ..shipped
            },
            "pool",
        ),
        // Fits the range, not the pool.
        (
            ReplicaParams {
                d_prompt: 8_000,
                pool_blocks: 64,
                ..shipped
            },
            "prompt",
        ),
    ];
    for (p, field) in cases {
        let e = ReplicaStory::run(p).unwrap_err();
        assert_eq!(e.field, field, "{p:?}: {}", e.message);
        assert!(!e.message.is_empty());
    }
    // The shipped values are the scenario's.
    let s = ReplicaScenario::builtin("replica-follow-one-chat").unwrap();
    match &s.config.workload.prompt_len {
        LengthDist::Sequence { values } => assert_eq!(values[D], shipped.d_prompt),
        other => panic!("{other:?}"),
    }
}

#[test]
fn fleet_figures_are_the_followed_requests_clocks() {
    let story = FleetStory::run().unwrap();
    check_words("fleet", &script("fleet"), &story.chapters);
    assert!(story
        .chapters
        .iter()
        .all(|c| c.variant == Variant::Happened));
    // The same fleet run without the build-up's tracing: the same request, the same clocks.
    let mut sim = FleetSim::new(FleetStory::config().unwrap()).unwrap();
    sim.run();
    let r = sim
        .records()
        .iter()
        .find(|r| r.seq == story.followed.seq)
        .unwrap();
    assert_eq!(r, &story.followed, "tracing changes nothing");
    let ch = &story.chapters;
    assert_eq!(value(&ch[3], "engine_ttft"), r.engine_ttft());
    assert_eq!(value(&ch[3], "server_ttft"), r.server_ttft());
    assert_eq!(value(&ch[3], "user_ttft"), r.user_ttft());
    assert!(r.engine_ttft() < r.server_ttft() && r.server_ttft() < r.user_ttft());
    assert_eq!(value(&ch[1], "chosen"), r.replica.unwrap() as f64);
    // The router chose the replica with the fewest queued tokens it saw.
    let rt = story.route.as_ref().unwrap();
    let least = rt
        .candidates
        .iter()
        .map(|c| c.load.queued_prompt_tokens)
        .min()
        .unwrap();
    assert_eq!(value(&ch[1], "chosen_queued"), least as f64);
    // Clocks start and stop at the record's times.
    let at = |t: f64, c: Clock| clocks_at(r, t).into_iter().find(|x| x.0 == c).unwrap().1;
    assert_eq!(
        at(r.engine_in - 1e-9, Clock::EngineTtft),
        ClockState::NotStarted
    );
    assert!(matches!(
        at(r.engine_in, Clock::EngineTtft),
        ClockState::Running { .. }
    ));
    assert_eq!(
        at(r.first_token, Clock::EngineTtft),
        ClockState::Stopped {
            value: r.engine_ttft()
        }
    );
    // The 429, the scale-up, the overflow.
    let refused = story.refused.as_ref().unwrap();
    assert!(
        matches!(refused.outcome, Outcome::Rejected { retry_after_s, .. } if retry_after_s > 0)
    );
    assert_ne!(refused.tenant, story.followed.tenant);
    let e = story.scale_up.unwrap();
    assert_eq!(value(&ch[4], "scale_to"), e.to as f64);
    assert_eq!(
        value(&ch[4], "ready_at") - value(&ch[4], "scale_at"),
        value(&ch[4], "lead_time")
    );
    let (spilled, _) = story.spilled.as_ref().unwrap();
    assert!(matches!(spilled.outcome, Outcome::Spilled(_)));
}

/// Split into prefill and decode pools, the engine step follows the request from its prefill
/// replica over the link to its decode replica, in time order, and its parts add up to the
/// engine clock's reading.
#[test]
fn a_split_fleet_follows_the_prompt_its_kv_cache_and_the_first_decode() {
    let cfg = FleetStory::config_split(2).unwrap();
    assert!(cfg.disaggregated());
    let mut sim = FleetStory::sim_of(cfg).unwrap();
    sim.run();
    let story = FleetStory::from_sim(&sim).unwrap();
    check_words("split fleet", &script("fleet"), &story.chapters);
    let engine = &story.chapters[2];
    assert_eq!(engine.id, "engine");
    assert_eq!(engine.variant, Variant::Split);
    let kinds: Vec<MomentKind> = story.moments[engine.first..=engine.last]
        .iter()
        .map(|m| m.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            MomentKind::AtEngine,
            MomentKind::PrefillDone,
            MomentKind::TransferStart,
            MomentKind::KvArrived,
            MomentKind::FirstToken
        ]
    );
    let times: Vec<f64> = story.moments[engine.first..=engine.last]
        .iter()
        .map(|m| m.t)
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let r = &story.followed;
    let p = r.split.expect("the followed request took the split path");
    assert_ne!(p.prefill_replica, p.decode_replica);
    let parts: f64 = [
        "prefill_queue",
        "prefill_time",
        "link_wait",
        "transfer",
        "decode_queue",
        "first_decode",
    ]
    .iter()
    .map(|n| value(engine, n))
    .sum();
    assert!(
        (parts - r.engine_ttft()).abs() < 1e-9,
        "{parts} against {}",
        r.engine_ttft()
    );
    assert!(value(engine, "transfer") > 0.0 && value(engine, "kv_bytes") > 0.0);
    let text = narration(script("fleet").step("engine").unwrap(), engine);
    assert!(
        text.contains("{transfer}") && text.contains("{decode_replica}"),
        "the split narration: {text}"
    );
    // Beyond its range, the split is refused by name.
    assert_eq!(FleetStory::config_split(9).unwrap_err().field, "split");
}

#[test]
fn a_quiet_fleet_says_what_did_not_happen() {
    let mut cfg = FleetStory::config().unwrap();
    cfg.quota.overrides.clear();
    cfg.overflow.action = OverflowAction::Queue;
    cfg.autoscaler.enabled = false;
    cfg.truncate(20.0);
    let mut sim = FleetStory::sim_of(cfg).unwrap();
    sim.run();
    let story = FleetStory::from_sim(&sim).unwrap();
    check_words("quiet fleet", &script("fleet"), &story.chapters);
    let absent: Vec<&str> = story
        .chapters
        .iter()
        .filter(|c| c.variant == Variant::Absent)
        .map(|c| c.id.as_ref())
        .collect();
    assert_eq!(absent, ["gateway", "autoscaler", "overflow"]);
}

/// The kinds of moment that are the followed request's own.
fn own(k: MomentKind) -> bool {
    !matches!(
        k,
        MomentKind::Refused
            | MomentKind::ScaleDecision
            | MomentKind::ReplicaReady
            | MomentKind::Spilled
            | MomentKind::Nothing
    )
}

/// Regression: the build-up opened on another tenant's 429 ("Moment 4 of 4"), because a step
/// opens on its last moment and the 429 was appended after the followed request's quota
/// answer. The steps about the followed request begin and end on its own moments, in time
/// order, whether or not the run has a 429.
#[test]
fn the_fleet_build_up_opens_on_the_followed_request() {
    let mut quiet = FleetStory::config().unwrap();
    quiet.quota.overrides.clear();
    quiet.truncate(20.0);
    let mut sim = FleetStory::sim_of(quiet).unwrap();
    sim.run();
    for (name, story) in [
        ("shipped", FleetStory::run().unwrap()),
        ("quiet", FleetStory::from_sim(&sim).unwrap()),
    ] {
        let kinds = |c: &Chapter| -> Vec<MomentKind> {
            story.moments[c.first..=c.last]
                .iter()
                .map(|m| m.kind)
                .collect()
        };
        let gateway = &story.chapters[0];
        let k = kinds(gateway);
        assert_eq!(k.first(), Some(&MomentKind::Sent), "{name}: {k:?}");
        assert_eq!(k.last(), Some(&MomentKind::QuotaChecked), "{name}: {k:?}");
        assert_eq!(
            k.contains(&MomentKind::Refused),
            gateway.variant == Variant::Happened,
            "{name}: the 429 is in the step exactly when the run has one: {k:?}"
        );
        for c in &story.chapters[..4] {
            let first = &story.moments[c.first];
            let last = &story.moments[c.last];
            assert!(
                own(first.kind) && own(last.kind),
                "{name}/{}: {:?}",
                c.id,
                kinds(c)
            );
            // The followed request's own moments run forward in time.
            let times: Vec<f64> = story.moments[c.first..=c.last]
                .iter()
                .filter(|m| own(m.kind))
                .map(|m| m.t)
                .collect();
            assert!(
                times.windows(2).all(|w| w[0] <= w[1]),
                "{name}/{}: {times:?}",
                c.id
            );
        }
        // Its clocks: at its quota answer the server and user clocks run, the engine's not.
        let opening = &story.moments[gateway.last];
        let state = |c: Clock| opening.clocks.iter().find(|x| x.0 == c).unwrap().1;
        assert!(matches!(
            state(Clock::ServerTtft),
            ClockState::Running { .. }
        ));
        assert!(matches!(state(Clock::UserTtft), ClockState::Running { .. }));
        assert_eq!(state(Clock::EngineTtft), ClockState::NotStarted);
    }
}

/// Each build-up names the engine it runs, so the page can say it: the replica's file runs
/// the validated engine, and so do the fleet's pools (the engine that teaches).
#[test]
fn each_build_up_runs_one_named_engine() {
    use trainer_course::buildup::fleet::FleetStory;
    use trainer_course::buildup::replica::ReplicaStory;
    use trainer_engine::engine::Engine;
    assert_eq!(ReplicaStory::engine(), Some(Engine::Validated));
    assert_eq!(FleetStory::engine(), Some(Engine::Validated));
}

/// A count that is zero reads as the sentence written for zero, never as "0 ...": the shipped
/// replica run has prefix caching off, so the recompute step finds nothing in the prefix
/// cache; a fleet without overflow spills nothing; and where the count is not zero the other
/// sentence is chosen.
#[test]
fn a_count_of_zero_chooses_the_sentence_written_for_zero() {
    let s = script("replica");
    let phrase = |step: &str, count: &str| {
        s.step(step)
            .unwrap()
            .counted
            .iter()
            .find(|k| k.count == count)
            .unwrap_or_else(|| panic!("{step} counts {count}"))
            .clone()
    };
    let cached = phrase("recompute", "cached_tokens");
    let zero = cached.zero.clone().expect("a sentence for zero");
    let story = ReplicaStory::run(ReplicaParams::shipped()).unwrap();
    assert_eq!(story.chapters[5].variant, Variant::Happened);
    assert_eq!(value(&story.chapters[5], "cached_tokens"), 0.0);
    let texts = check_no_odd_counts("shipped", &s, &story.chapters);
    assert!(texts[5].contains(&zero), "{}", texts[5]);
    assert!(!texts[5].contains("tokens were found"), "{}", texts[5]);
    // One chunk: a short prompt under a big budget.
    let one = ReplicaStory::run(ReplicaParams {
        d_prompt: 300,
        budget: 2048,
        ..ReplicaParams::shipped()
    })
    .unwrap();
    assert_eq!(value(&one.chapters[1], "chunks"), 1.0);
    let texts = check_no_odd_counts("one chunk", &s, &one.chapters);
    let single = phrase("chunks", "chunks").one.unwrap();
    let single = fill(&single, &figure_texts(&one.chapters[1].figures));
    assert!(texts[1].contains(&single), "{}", texts[1]);

    let f = script("fleet");
    let mut cfg = FleetStory::config().unwrap();
    cfg.overflow.action = OverflowAction::Queue;
    cfg.truncate(20.0);
    let mut sim = FleetStory::sim_of(cfg).unwrap();
    sim.run();
    let quiet = FleetStory::from_sim(&sim).unwrap();
    let ov = &quiet.chapters[5];
    assert_eq!(ov.variant, Variant::Absent);
    assert_eq!(value(ov, "spilled_total"), 0.0);
    let texts = check_no_odd_counts("no overflow", &f, &quiet.chapters);
    let none = phrase_of(&f, "overflow", "spilled_total", true);
    assert!(texts[5].contains(&none), "{}", texts[5]);
    // The shipped fleet spills: the other sentence, with its figure.
    let shipped = FleetStory::run().unwrap();
    let texts = check_no_odd_counts("shipped fleet", &f, &shipped.chapters);
    assert!(value(&shipped.chapters[5], "spilled_total") > 1.0);
    assert!(texts[5].contains("requests went that way"), "{}", texts[5]);
}

/// The zero sentence (`zero`) or the many sentence of the counted phrase of `step` on `count`
/// used by the text that applies.
fn phrase_of(s: &Script, step: &str, count: &str, zero: bool) -> String {
    let st = s.step(step).unwrap();
    let k = st
        .counted
        .iter()
        .filter(|k| k.count == count)
        .find(|k| k.zero.is_some() == zero)
        .unwrap_or_else(|| panic!("{step}: no phrase on {count}"));
    if zero {
        k.zero.clone().unwrap()
    } else {
        k.many.clone()
    }
}
