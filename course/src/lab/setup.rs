//! The lab's set-up: where the fleet comes from (a preset and arm, or an imported scenario
//! file), the knobs changed from it, and the query string that carries both.
//!
//! The query string is `preset=<id>&arm=<name>` (or `file=<the scenario's text>`), then every
//! knob whose value differs from the source's, in [`Knob::ALL`] order, and `pin=<query>` for
//! a run pinned to compare against. Reading it back gives the same configuration bit for bit
//! (a test edits knobs at random and reloads). Nothing in a query string panics: a bad value
//! is reported on its field, keeps its text, and leaves the knob at the source's value.

use super::knobs::Knob;
use super::{preset, preset_of, Preset, DEFAULT_PRESET};
use crate::sizing::{query_pairs, write_query};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use trainer_engine::fleet::FleetConfig;
use trainer_engine::scenario::Scenario;

/// Where the lab's fleet comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A shipped scenario by id, at one of its arms.
    Preset { id: String, arm: String },
    /// An imported scenario file (TOML or JSON), at one of its arms.
    File { text: String, arm: String },
}

/// The lab's inputs: the source, the configuration the knobs made of it, and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct Setup {
    pub source: Source,
    /// The source's scenario (its title, words and arms).
    pub preset: Preset,
    /// The fleet of the source's arm, before any knob.
    pub base: FleetConfig,
    /// The fleet the run uses: always valid.
    pub config: FleetConfig,
    /// Messages by field: a knob's key, `preset`, `arm`, `file`, `pin`, or `query` for keys
    /// the lab does not know.
    pub errors: BTreeMap<String, String>,
    /// The text a query gave for a field with an error, so the field shows what was written.
    pub bad_text: BTreeMap<String, String>,
    /// The query string of a run pinned for comparison.
    pub pin: Option<String>,
    /// A TOML file this build cannot read itself (the page has no TOML parser), not read yet:
    /// the page sends it to the simulators' worker, [`remember_read`]s the answer and reads the
    /// query again. Meanwhile the set-up is the default preset's, with a message on `file`.
    pub unread: Option<String>,
}

thread_local! {
    /// TOML files read elsewhere, oldest first, each with what was made of it: the JSON form,
    /// or why the file is not TOML.
    static READ: RefCell<VecDeque<(String, Result<String, String>)>> = const { RefCell::new(VecDeque::new()) };
}

/// What was made of the file `text`, if it was read elsewhere.
fn was_read(text: &str) -> Option<Result<String, String>> {
    READ.with(|r| {
        r.borrow()
            .iter()
            .find(|(t, _)| t == text)
            .map(|(_, read)| read.clone())
    })
}

/// Most files kept by [`remember_read`]; the oldest go first.
const READ_KEPT: usize = 16;

/// Keeps what the simulators' worker made of a TOML file's `text`: its JSON form
/// ([`Scenario::toml_to_json`]) or the parser's message. A set-up then reads the file as that.
pub fn remember_read(text: String, read: Result<String, String>) {
    READ.with(|r| {
        let mut r = r.borrow_mut();
        r.retain(|(t, _)| *t != text);
        if r.len() >= READ_KEPT {
            r.pop_front();
        }
        r.push_back((text, read));
    });
}

/// Whether a file's text is JSON (a scenario object), not TOML.
fn is_json(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// Whether this build must have the file's text read elsewhere (by the simulators' worker)
/// before it can use it: a TOML file, in a build without the TOML parser, not read yet.
pub fn needs_reading(text: &str) -> bool {
    !is_json(text) && !cfg!(feature = "parse") && was_read(text).is_none()
}

/// A scenario file's text, TOML or JSON, as this build can read it.
fn read_file(text: &str) -> Result<Scenario, trainer_engine::ConfigError> {
    use trainer_engine::ConfigError;
    if is_json(text) {
        return Scenario::from_json(text);
    }
    match was_read(text) {
        Some(Ok(json)) => Scenario::from_json(&json),
        Some(Err(m)) => Err(ConfigError::new("", m)),
        None => {
            #[cfg(feature = "parse")]
            {
                Scenario::from_toml(text)
            }
            #[cfg(not(feature = "parse"))]
            {
                Err(ConfigError::new("", READING))
            }
        }
    }
}

/// The file's message while the worker reads it.
pub const READING: &str = "reading the file…";

impl Default for Setup {
    fn default() -> Self {
        Setup::from_query("")
    }
}

impl Setup {
    /// The set-up a query string describes (see the module's documentation). Never panics.
    pub fn from_query(query: &str) -> Setup {
        let pairs = query_pairs(query);
        let mut errors = BTreeMap::new();
        let mut bad_text = BTreeMap::new();
        let arm = pairs.get("arm").cloned().unwrap_or_default();
        // `scenario` is another name for `preset` (the lesson's links say it).
        let preset = pairs.get("preset").or(pairs.get("scenario"));
        let source = match (pairs.get("file"), preset) {
            (Some(text), _) => Source::File {
                text: text.clone(),
                arm,
            },
            (None, Some(id)) => Source::Preset {
                id: id.clone(),
                arm,
            },
            (None, None) => Source::Preset {
                id: DEFAULT_PRESET.into(),
                arm,
            },
        };
        let unread = match &source {
            Source::File { text, .. } if needs_reading(text) => Some(text.clone()),
            _ => None,
        };
        let mut setup = match Setup::from_source(source.clone()) {
            Ok(s) => s,
            Err((field, message)) => {
                errors.insert(field.to_string(), message);
                if let Some(t) = pairs.get(field) {
                    bad_text.insert(field.to_string(), t.clone());
                }
                Setup::from_source(Source::Preset {
                    id: DEFAULT_PRESET.into(),
                    arm: String::new(),
                })
                .expect("the default preset is valid (tested)")
            }
        };
        // All the knobs at once first: two knobs may only make sense together (a lognormal's
        // mean and p99). Only when that fails are they applied one at a time, so each bad
        // value gets its own message.
        let given: Vec<(Knob, &String)> = Knob::ALL
            .into_iter()
            .filter_map(|k| pairs.get(k.key()).map(|t| (k, t)))
            .collect();
        let mut all = setup.config.clone();
        let together =
            given.iter().all(|(k, t)| k.set(&mut all, t).is_ok()) && all.validate().is_ok();
        if together {
            setup.config = all;
        } else {
            for (knob, text) in given {
                if let Err(m) = setup.set(knob, text) {
                    errors.insert(knob.key().into(), m);
                    bad_text.insert(knob.key().into(), text.clone());
                }
            }
        }
        for key in pairs.keys() {
            let known = ["preset", "scenario", "arm", "compare", "file", "pin"]
                .contains(&key.as_str())
                || Knob::from_key(key).is_some();
            if !known {
                errors.insert(
                    "query".into(),
                    format!("the link has a setting the lab does not know: {key:?} (ignored)"),
                );
            }
        }
        if let Some(pin) = pairs.get("pin") {
            let pinned = Setup::from_query(pin);
            if pinned.errors.is_empty() {
                setup.pin = Some(pin.clone());
            } else {
                errors.insert(
                    "pin".into(),
                    "the pinned run in the link has bad settings, so it was dropped".into(),
                );
            }
        }
        // `compare=<arm>`: pin that arm of the same source, to compare this one against.
        if let (Some(other), None) = (pairs.get("compare"), &setup.pin) {
            let source = match &setup.source {
                Source::Preset { id, .. } => Source::Preset {
                    id: id.clone(),
                    arm: other.clone(),
                },
                Source::File { text, .. } => Source::File {
                    text: text.clone(),
                    arm: other.clone(),
                },
            };
            match Setup::from_source(source) {
                Ok(mut s) => {
                    // The same knobs changed on both arms (a shorter run, say).
                    for (k, v) in setup.changed() {
                        let _ = s.set(k, &v);
                    }
                    setup.pin = Some(s.run_query());
                }
                Err((_, m)) => {
                    errors.insert("pin".into(), format!("the run to compare with: {m}"));
                }
            }
        }
        setup.errors.extend(errors);
        setup.bad_text.extend(bad_text);
        setup.unread = unread;
        setup
    }

    /// The set-up of a source with no knob changed; the error is (field, message).
    pub fn from_source(source: Source) -> Result<Setup, (&'static str, String)> {
        let (preset, arm) = match &source {
            Source::Preset { id, arm } => {
                let p = preset(id).map_err(|e| ("preset", e.message))?;
                (p, arm.clone())
            }
            Source::File { text, arm } => {
                let s = read_file(text).map_err(|e| {
                    let m = if e.field.is_empty() {
                        e.message
                    } else {
                        e.to_string()
                    };
                    ("file", trainer_engine::scenario::one_line(&m))
                })?;
                (preset_of("file".into(), s), arm.clone())
            }
        };
        let base = if arm.is_empty() {
            preset.arms[0].1.clone()
        } else {
            preset
                .arms
                .iter()
                .find(|(n, _)| *n == arm)
                .map(|(_, c)| c.clone())
                .ok_or_else(|| {
                    let names: Vec<&str> = preset.arms.iter().map(|(n, _)| n.as_str()).collect();
                    (
                        "arm",
                        format!(
                            "there is no arm {arm:?}; this scenario has {}",
                            names.join(", ")
                        ),
                    )
                })?
        };
        let arm = if arm.is_empty() {
            preset.arms[0].0.clone()
        } else {
            arm
        };
        let source = match source {
            Source::Preset { id, .. } => Source::Preset { id, arm },
            Source::File { text, .. } => Source::File { text, arm },
        };
        Ok(Setup {
            source,
            preset,
            config: base.clone(),
            base,
            errors: BTreeMap::new(),
            bad_text: BTreeMap::new(),
            pin: None,
            unread: None,
        })
    }

    /// The arm in use.
    pub fn arm(&self) -> &str {
        match &self.source {
            Source::Preset { arm, .. } | Source::File { arm, .. } => arm,
        }
    }

    /// Sets a knob from typed text. The whole configuration must stay valid: otherwise the
    /// message names what is wrong and the configuration is unchanged. Clears the knob's own
    /// message when it succeeds.
    pub fn set(&mut self, knob: Knob, text: &str) -> Result<(), String> {
        let mut next = self.config.clone();
        let result = knob.set(&mut next, text).and_then(|()| {
            next.validate().map_err(|e| {
                let own = Knob::for_error_field(&e.field).is_none_or(|k| k == knob);
                if own {
                    e.message
                } else {
                    format!("{} ({})", e.message, e.field)
                }
            })
        });
        match result {
            Ok(()) => {
                // Keep the configuration in its canonical form: the source with the changed
                // knobs applied in order, which is what the query string reproduces. (A
                // setting no knob shows, such as the signal of an autoscaler switched off,
                // goes back to the source's.)
                let canonical = self.replay(&next);
                self.config = if canonical.validate().is_ok() {
                    canonical
                } else {
                    next
                };
                self.errors.remove(knob.key());
                self.bad_text.remove(knob.key());
                Ok(())
            }
            Err(m) => {
                self.errors.insert(knob.key().into(), m.clone());
                self.bad_text.insert(knob.key().into(), text.to_string());
                Err(m)
            }
        }
    }

    /// The source's fleet with the knobs that differ between it and `cfg` applied in order.
    fn replay(&self, cfg: &FleetConfig) -> FleetConfig {
        let mut out = self.base.clone();
        for k in Knob::ALL {
            let v = k.get(cfg);
            if v != k.get(&self.base) {
                let _ = k.set(&mut out, &v);
            }
        }
        out
    }

    /// The knobs whose value differs from the source's, with their text.
    pub fn changed(&self) -> Vec<(Knob, String)> {
        Knob::ALL
            .into_iter()
            .filter_map(|k| {
                let v = k.get(&self.config);
                (v != k.get(&self.base)).then_some((k, v))
            })
            .collect()
    }

    /// The query string of this set-up, without the pinned run.
    pub fn run_query(&self) -> String {
        let mut pairs: Vec<(&str, String)> = Vec::new();
        match &self.source {
            Source::Preset { id, arm } => {
                pairs.push(("preset", id.clone()));
                if *arm != self.preset.arms[0].0 {
                    pairs.push(("arm", arm.clone()));
                }
            }
            Source::File { text, arm } => {
                pairs.push(("file", text.clone()));
                if *arm != self.preset.arms[0].0 {
                    pairs.push(("arm", arm.clone()));
                }
            }
        }
        for (k, v) in self.changed() {
            pairs.push((k.key(), v));
        }
        write_query(&pairs)
    }

    /// The whole query string: the set-up and the pinned run, if any.
    pub fn query(&self) -> String {
        let mut q = self.run_query();
        if let Some(pin) = &self.pin {
            q.push('&');
            q.push_str(&write_query(&[("pin", pin.clone())]));
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::knobs::Kind;

    fn knob(key: &str) -> Knob {
        Knob::from_key(key).unwrap()
    }

    #[test]
    fn the_empty_query_is_the_seed_fleet() {
        let s = Setup::from_query("");
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(
            s.config,
            trainer_engine::scenario::FleetScenario::builtin("fleet-seed")
                .unwrap()
                .arms[0]
                .1
        );
        assert_eq!(s.query(), "preset=fleet-seed");
    }

    #[test]
    fn the_fixed_costs_per_step_are_the_validated_engines_and_the_knobs_change_them() {
        // The shipped presets run the validated engine, fixed costs per step included; the
        // two knobs change them (an engine of the learner's own), and travel in the link.
        let c = trainer_engine::cost::Efficiency::CALIBRATED;
        let plain = Setup::from_query("preset=fleet-seed").config;
        let e = plain.pools[0].replica.efficiency;
        assert_eq!(e.step_overhead_s, c.step_overhead_s);
        assert_eq!(e.cpu_overhead_s, c.cpu_overhead_s);
        let s = Setup::from_query("preset=fleet-seed&step_overhead=0&cpu_overhead=0");
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let none = s.config.pools[0].replica.efficiency;
        assert_eq!((none.step_overhead_s, none.cpu_overhead_s), (0.0, 0.0));
        assert_eq!(Setup::from_query(&s.query()).config, s.config);
        // A step of the validated engine takes longer by the fixed GPU time.
        let cost =
            |e| trainer_engine::cost::CostModel::new(plain.pools[0].replica.deployment.clone(), e);
        let t = |m: trainer_engine::cost::CostModel| m.decode_step(32, 1_125).total_s;
        assert!(t(cost(e).unwrap()) >= t(cost(none).unwrap()) + c.step_overhead_s * 0.999);
        let bad = Setup::from_query("preset=fleet-seed&cpu_overhead=-1");
        assert!(bad.errors.contains_key("cpu_overhead"), "{:?}", bad.errors);
    }

    #[test]
    fn bad_values_get_a_message_on_their_field_and_keep_their_text() {
        let s = Setup::from_query(
            "preset=fleet-seed&rate=fast&replicas=-3&policy=telepathy&mem_util=150&bogus=1",
        );
        for k in ["rate", "replicas", "policy", "mem_util", "query"] {
            assert!(s.errors.contains_key(k), "{k}: {:?}", s.errors);
        }
        assert_eq!(s.bad_text["rate"], "fast");
        // The knobs with bad values stay at the preset's.
        assert_eq!(s.config, s.base);
        let s = Setup::from_query("preset=nope&arm=x");
        assert!(s.errors.contains_key("preset"));
        let s = Setup::from_query("preset=fleet-buffering&arm=nope");
        assert!(
            s.errors["arm"].contains("proxy-buffering"),
            "{:?}",
            s.errors
        );
        let s = Setup::from_query("file=not%20toml%20%5B");
        assert!(s.errors.contains_key("file"));
    }

    #[test]
    fn a_value_the_whole_fleet_rejects_is_refused_and_named() {
        let mut s = Setup::default();
        let before = s.config.clone();
        // Llama 3.1 405B does not fit on one H100.
        let e = s.set(knob("model"), "llama-3.1-405b").unwrap_err();
        assert!(!e.is_empty());
        assert_eq!(s.config, before);
        assert!(s.errors.contains_key("model"));
        s.set(knob("model"), "llama-3.1-8b").unwrap();
        assert!(!s.errors.contains_key("model"));
    }

    /// Invariant: writing the set-up as a query and reading it back gives the same
    /// configuration, bit for bit, whatever knobs were changed (a shared link reruns the
    /// same simulation).
    #[test]
    fn a_query_reads_back_as_the_same_configuration() {
        let texts = |k: Knob, cfg: &FleetConfig| -> Vec<String> {
            match k.kind() {
                Kind::Choice | Kind::Toggle => k.options(cfg).into_iter().map(|(v, _)| v).collect(),
                Kind::Number { min, max, integer } => {
                    let mid = if integer {
                        ((min + max) / 7.0).round()
                    } else {
                        min + (max - min) / 7.3
                    };
                    vec![
                        crate::lab::knobs::num(min.max(1.0).min(max)),
                        crate::lab::knobs::num(mid),
                    ]
                }
            }
        };
        let mut rng = 12345u64;
        let mut next = |n: usize| {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (rng >> 33) as usize % n.max(1)
        };
        for preset in crate::lab::presets().unwrap() {
            let mut s = Setup::from_query(&format!("preset={}", preset.id));
            for _ in 0..60 {
                let k = Knob::ALL[next(Knob::ALL.len())];
                let options = texts(k, &s.config);
                let t = options[next(options.len())].clone();
                let _ = s.set(k, &t);
                let back = Setup::from_query(&s.query());
                assert_eq!(back.config, s.config, "{} after {k:?}={t}", preset.id);
                assert!(back.errors.is_empty(), "{:?}", back.errors);
            }
        }
    }

    #[test]
    fn a_split_fleet_is_a_knob_and_every_engine_knob_sets_both_pools() {
        use trainer_engine::fleet::PoolRole;
        let s = Setup::from_query("replicas=3&decode_replicas=5&budget=4096&link=ethernet-100g");
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let roles: Vec<(PoolRole, u32)> = s
            .config
            .pools
            .iter()
            .map(|p| (p.role, p.replicas))
            .collect();
        assert_eq!(roles, [(PoolRole::Prefill, 3), (PoolRole::Decode, 5)]);
        assert_eq!(s.config.pools[0].replica, s.config.pools[1].replica);
        assert_eq!(
            s.config.pools[1].replica.scheduler.max_num_batched_tokens,
            4096
        );
        assert_eq!(s.config.disagg.link, "ethernet-100g");
        assert_eq!(
            knob("replicas").label(&s.config),
            "Prefill replicas at the start"
        );
        // The link's knobs mean nothing until the fleet is split.
        let plain = Setup::from_query("link_share=50");
        assert!(
            plain.errors.contains_key("link_share") || !knob("link_share").applies(&plain.config)
        );
        // A preset's split arm: a knob of the first pool reaches the decode pool too.
        let arm =
            Setup::from_query("preset=fleet-disaggregate&arm=split-4-4&budget=2048&mem_util=85");
        assert!(arm.errors.is_empty(), "{:?}", arm.errors);
        assert_eq!(arm.config.pools[1].replica, arm.config.pools[0].replica);
        assert_eq!(knob("decode_replicas").get(&arm.config), "4");
        // Back to one pool that does both.
        let mut back = Setup::from_query("preset=fleet-disaggregate&arm=split-4-4");
        back.set(knob("decode_replicas"), "0").unwrap();
        assert!(!back.config.disaggregated());
        assert_eq!(back.config.pools.len(), 1);
        assert_eq!(Setup::from_query(&back.query()).config, back.config);
    }

    #[test]
    fn a_pinned_run_travels_in_the_query() {
        let mut s = Setup::default();
        s.set(knob("replicas"), "6").unwrap();
        s.pin = Some(Setup::default().run_query());
        let back = Setup::from_query(&s.query());
        assert_eq!(back.pin.as_deref(), Some("preset=fleet-seed"));
        assert_eq!(back.config.pools[0].replicas, 6);
        let bad = Setup::from_query("pin=rate%3Dx");
        assert!(bad.errors.contains_key("pin") && bad.pin.is_none());
    }

    #[test]
    fn a_link_naming_a_scenario_and_an_arm_to_compare_pins_that_arm() {
        let s =
            Setup::from_query("scenario=fleet-ttft-gap&arm=slow-router-cold-pool&compare=fixed");
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(s.arm(), "slow-router-cold-pool");
        assert_eq!(s.pin.as_deref(), Some("preset=fleet-ttft-gap&arm=fixed"));
        let pinned = Setup::from_query(s.pin.as_deref().unwrap());
        assert_ne!(pinned.config, s.config);
        let short = Setup::from_query("scenario=fleet-ttft-gap&compare=fixed&duration=30");
        assert_eq!(
            short.pin.as_deref(),
            Some("preset=fleet-ttft-gap&arm=fixed&duration=30")
        );
        let bad = Setup::from_query("scenario=fleet-ttft-gap&compare=nope");
        assert!(bad.errors["pin"].contains("fixed"), "{:?}", bad.errors);
    }

    #[test]
    fn an_imported_file_runs_and_travels_in_the_query() {
        let text = "kind = \"fleet\"\n[[pools]]\nreplicas = 3\n";
        let s = Setup::from_query(&write_query(&[("file", text.to_string())]));
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(s.config.pools[0].replicas, 3);
        let json = r#"{"kind": "replica", "workload": {"duration_s": 30.0}}"#;
        let s = Setup::from_query(&write_query(&[("file", json.to_string())]));
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        assert_eq!(s.config.pools.len(), 1);
        assert_eq!(Setup::from_query(&s.query()).config, s.config);
    }

    /// The page has no TOML parser: the worker reads a learner's file (`toml_to_json`) and the
    /// set-up then reads what it made, as this build would read the file itself.
    #[test]
    fn a_file_read_by_the_worker_gives_the_same_set_up() {
        let text = "kind = \"fleet\"\n[[pools]]\nreplicas = 4\n# read elsewhere\n";
        let query = write_query(&[("file", text.to_string())]);
        let here = Setup::from_query(&query);
        assert_eq!(here.unread, None, "this build reads TOML itself");
        assert!(!needs_reading(text));
        let json = crate::jobs::run_to_end(
            crate::jobs::Job::ReadScenario(text.into()),
            &mut || 0.0,
            5.0,
        );
        let [crate::jobs::Reply::Done(crate::jobs::Outcome::ScenarioJson(Ok(json)))] =
            json.as_slice()
        else {
            panic!("the worker did not read it: {json:?}");
        };
        remember_read(text.into(), Ok(json.clone()));
        let there = Setup::from_query(&query);
        assert_eq!(there.config, here.config);
        assert_eq!(
            there.query(),
            query,
            "the link keeps the learner's own text"
        );
        // A file the worker could not read: its message, on the file.
        let bad = "kind = \"fleet\"\n[[pools]\n";
        let replies =
            crate::jobs::run_to_end(crate::jobs::Job::ReadScenario(bad.into()), &mut || 0.0, 5.0);
        let [crate::jobs::Reply::Done(crate::jobs::Outcome::ScenarioJson(Err(m)))] =
            replies.as_slice()
        else {
            panic!("a bad file was read: {replies:?}");
        };
        assert!(m.contains("line 2"), "{m}");
        remember_read(bad.into(), Err(m.clone()));
        let s = Setup::from_query(&write_query(&[("file", bad.to_string())]));
        assert!(s.errors["file"].contains("line 2"), "{:?}", s.errors);
        assert_eq!(s.unread, None);
    }
}
