use super::*;
use crate::lab::Setup;

/// The seed set-up with the knob's context applied: the knob applies there.
fn at(k: Knob) -> FleetConfig {
    let s = Setup::from_query(k.spec().context);
    assert!(s.errors.is_empty(), "{k:?}'s context: {:?}", s.errors);
    assert!(k.applies(&s.config), "{k:?} does not apply in its context");
    s.config
}

/// Sets the knob from `text` on `cfg`, checks the fleet is valid and reads `text` back.
fn write_read(k: Knob, cfg: &FleetConfig, text: &str, validate: bool) {
    let mut c = cfg.clone();
    k.set(&mut c, text)
        .unwrap_or_else(|e| panic!("{k:?} = {text}: {e}"));
    if validate {
        c.validate()
            .unwrap_or_else(|e| panic!("{k:?} = {text} is refused by the engine: {e}"));
    }
    assert_eq!(k.get(&c), text, "{k:?} reads back what was written");
}

/// Walks the table against the engine's validators: both ends of every number's range
/// validate, and just beyond an end that is the engine's, the lab or the engine refuses
/// (so the lab takes neither more nor, unless it says so with [`Bound::Lab`], less).
#[test]
fn every_number_knob_takes_the_engines_range() {
    let mut checked = 0;
    for k in Knob::ALL {
        let Field::Number(range) = k.spec().field else {
            continue;
        };
        let cfg = at(k);
        for (bound, below) in [(range.min, true), (range.max, false)] {
            write_read(k, &cfg, &num(bound.value()), true);
            let Bound::Engine(v) = bound else {
                continue;
            };
            let step = if range.integer {
                1.0
            } else {
                (v.abs() * 1e-6).max(1e-9)
            };
            let beyond = if below { v - step } else { v + step };
            let mut c = cfg.clone();
            let refused = k.write_number(&mut c, beyond).is_err() || c.validate().is_err();
            assert!(
                refused,
                "{k:?}: {beyond} is beyond the lab's bound {v} but the engine takes it"
            );
            checked += 1;
        }
    }
    assert!(checked >= 25, "only {checked} engine bounds checked");
}

/// Every knob reads back what it wrote: each option of a choice or toggle, and the middle
/// of a number's range.
#[test]
fn every_knob_reads_back_what_it_writes() {
    for k in Knob::ALL {
        let cfg = at(k);
        match k.kind() {
            Kind::Number { integer, min, max } => {
                let mid = if integer {
                    ((min + max) / 2.0).round()
                } else {
                    min + (max - min) / 3.0
                };
                write_read(k, &cfg, &num(mid), false);
            }
            Kind::Choice | Kind::Toggle => {
                let options = k.options(&cfg);
                assert!(options.len() >= 2, "{k:?} has {options:?}");
                for (v, _) in options {
                    write_read(k, &cfg, &v, false);
                }
            }
        }
    }
}

#[test]
fn the_table_has_one_entry_a_key_and_one_owner_a_error_field() {
    for (i, k) in Knob::ALL.into_iter().enumerate() {
        assert_eq!(Knob::from_key(k.key()), Some(k));
        assert_eq!(k.key(), KNOBS[i].key);
        for p in k.spec().errors {
            assert_eq!(Knob::for_error_field(p), Some(k), "{p}");
        }
    }
    let key = |f: &str| Knob::for_error_field(f).map(|k| k.key());
    for (field, want) in [
        ("traffic[0].workload.arrival.rate", "rate"),
        ("traffic[0].workload.arrival.cv", "cv"),
        ("pools[0].replica.deployment.tp", "tp"),
        ("pools[0].replica.deployment.model", "model"),
        ("pools[0].min_replicas", "min_replicas"),
        ("pools[0].replicas", "replicas"),
        ("slo.tpot_s", "slo_tpot"),
    ] {
        assert_eq!(key(field), Some(want), "{field}");
    }
    assert_eq!(key("gateway.regions"), None);
    // Choices and toggles refuse what they do not list.
    let mut cfg = FleetConfig::seed();
    let listed: Vec<Knob> = Knob::ALL
        .into_iter()
        .filter(|k| !matches!(k.kind(), Kind::Number { .. }))
        .collect();
    for k in listed {
        assert!(k.set(&mut cfg, "bogus").is_err(), "{k:?}");
    }
}
