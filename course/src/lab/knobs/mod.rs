//! The lab's knobs: every setting of a fleet run the parameter panel shows, as one table,
//! [`KNOBS`]. An entry is the whole knob: its key (its name in the URL and in the panel's
//! `data-testid`s), its label and unit, its section, what its field takes (a number
//! with its range, a choice with its options, or an on/off toggle), when it applies, the error
//! fields of the engine's validators that are its own, and a reader and a writer on
//! [`FleetConfig`]. **Adding a knob is one edit: one entry in [`KNOBS`]** (a knob that only
//! applies under another's choice names, in the same entry, the query that makes it apply,
//! for the table's test); the panel, the query string and the tests read the table, and
//! nothing matches on a knob.
//!
//! A number's range is the engine's: each bound is [`Bound::Engine`], read from the constant
//! the validator checks (`SchedulerConfig::MAX_NUM_BATCHED_TOKENS_RANGE`, ...), unless the lab
//! takes less ([`Bound::Lab`]: an arrival rate a browser tab can follow, zero as "off"). A test
//! walks the table against [`FleetConfig::validate`]: both bounds of every number validate,
//! and just beyond an engine bound does not, so the lab and the engine cannot disagree.
//!
//! A knob reads the configuration as the text its field shows and writes it back from the
//! text typed, so the panel, the URL and the tests go through the same two functions. Knobs
//! that act on the workload read the first traffic source and write every source (except the
//! rate, which is the first source's); knobs that act on a replica read and write the first
//! pool. [`KNOBS`] is in dependency order: a knob that only applies under another's choice
//! (burstiness under gamma arrivals) comes after it, so a query string applied in that order
//! sets the choice first.

use std::fmt;
use std::ops::RangeInclusive;
use trainer_engine::catalog::{draft_models, gpus, links, models, Dtype, WeightFormat};
use trainer_engine::cost::{Deployment, Efficiency, MemoryConfig};
use trainer_engine::fleet::{
    AutoscalerConfig, Buffering, ClientConfig, DisaggConfig, FleetConfig, GatewayConfig, HostedApi,
    OverflowAction, PoolConfig, PoolRole, ReplicaFault, RouterConfig, RoutingPolicy, ScaleSignal,
    SloConfig,
};
use trainer_engine::replica::lora::LoraConfig;
use trainer_engine::replica::spec::{SpecMethod, SpeculativeConfig};
use trainer_engine::replica::{ReplicaConfig, SchedulerConfig};
use trainer_engine::workload::{Arrival, LengthDist, SessionConfig, WorkloadConfig, MAX_LEN};

mod table;
mod write;

use write::{pairs, MISMATCH};

pub use table::KNOBS;

/// Where a knob sits in the panel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Workload,
    Replica,
    Fleet,
}

impl Section {
    pub const ALL: [Section; 3] = [Section::Workload, Section::Replica, Section::Fleet];

    pub fn id(self) -> &'static str {
        match self {
            Section::Workload => "workload",
            Section::Replica => "replica",
            Section::Fleet => "fleet",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Section::Workload => "Workload",
            Section::Replica => "Replica",
            Section::Fleet => "Fleet",
        }
    }
}

/// What a knob's field takes.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A number typed in the knob's unit, within `min..=max` (whole when `integer`).
    Number { integer: bool, min: f64, max: f64 },
    /// One of a list of options.
    Choice,
    /// On or off.
    Toggle,
}

/// Largest arrival rate the lab takes, requests per second (the simulator takes more, but a
/// browser tab cannot follow it).
pub const MAX_LAB_RATE: f64 = 100_000.0;
/// Longest traffic the lab takes, seconds.
pub const MAX_LAB_DURATION: f64 = 86_400.0;
/// Most replicas the lab's fleet takes (the simulator takes 4,096, but measured in the lab at
/// 4,096 a run held the page still for 1.4 s as it started, at 256 for 0.13 s).
pub const MAX_LAB_REPLICAS: u32 = 256;
/// Most replicas of a split fleet's decode pool (the first pool's count is the prefill's).
pub const MAX_LAB_DECODE_REPLICAS: f64 = MAX_LAB_REPLICAS as f64;

/// One bound of a number's range, in the knob's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// The engine's: its validator refuses anything beyond it.
    Engine(f64),
    /// The lab's own, inside what the engine takes (a browser's limit, zero meaning "off",
    /// the edge of the field's type).
    Lab(f64),
}

impl Bound {
    pub const fn value(self) -> f64 {
        match self {
            Bound::Engine(v) | Bound::Lab(v) => v,
        }
    }
}

/// A number's range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// Whole numbers only.
    pub integer: bool,
    pub min: Bound,
    pub max: Bound,
}

/// The engine's range of a whole number.
const fn whole(r: &RangeInclusive<u32>) -> Range {
    Range {
        integer: true,
        min: Bound::Engine(*r.start() as f64),
        max: Bound::Engine(*r.end() as f64),
    }
}

/// The engine's range of a real number, shown `scale` times larger (100 for a fraction in %).
const fn real(r: &RangeInclusive<f64>, scale: f64) -> Range {
    Range {
        integer: false,
        min: Bound::Engine(*r.start() * scale),
        max: Bound::Engine(*r.end() * scale),
    }
}

/// A replica count from `min` to the lab's most ([`MAX_LAB_REPLICAS`], inside the engine's).
const fn replica_count(min: Bound) -> Range {
    Range {
        integer: true,
        min,
        max: Bound::Lab(MAX_LAB_REPLICAS as f64),
    }
}

/// A range of the lab's own.
const fn lab(integer: bool, min: f64, max: f64) -> Range {
    Range {
        integer,
        min: Bound::Lab(min),
        max: Bound::Lab(max),
    }
}

/// A text, fixed or chosen by the configuration.
#[derive(Clone, Copy)]
pub enum Text {
    Fixed(&'static str),
    Of(fn(&FleetConfig) -> &'static str),
}

impl Text {
    pub fn of(self, cfg: &FleetConfig) -> &'static str {
        match self {
            Text::Fixed(t) => t,
            Text::Of(f) => f(cfg),
        }
    }
}

/// What a knob's field takes.
#[derive(Clone, Copy)]
pub enum Field {
    Number(Range),
    /// One of the options, as (value, label), for a configuration.
    Choice(fn(&FleetConfig) -> Vec<(String, String)>),
    Toggle,
}

/// How a knob writes the configuration: from a value already checked against its field (a
/// number in range, one of the options). A writer that may refuse gives a sentence for the
/// field and leaves the configuration unchanged.
#[derive(Clone, Copy)]
pub enum Write {
    Set(fn(&mut FleetConfig, f64)),
    TrySet(fn(&mut FleetConfig, f64) -> Result<(), String>),
    Pick(fn(&mut FleetConfig, &str) -> Result<(), String>),
    Switch(fn(&mut FleetConfig, bool)),
}

/// When a knob means something for a configuration. The panel shows the others disabled.
#[derive(Clone, Copy)]
pub enum When {
    Always,
    /// Only when this holds; the value is kept meanwhile.
    If(fn(&FleetConfig) -> bool),
    /// Only when this holds, and the value lives inside a choice (the burstiness of gamma
    /// arrivals, the p99 of a lognormal), so it cannot be set meanwhile; the text says why.
    Inside(fn(&FleetConfig) -> bool, Text),
}

/// One knob: an entry of [`KNOBS`].
#[derive(Clone, Copy)]
pub struct Spec {
    /// Its name in the URL, in `data-testid`s (`param-<key>`) and of its help.
    pub key: &'static str,
    pub section: Section,
    /// The field's label (the length fields name what they hold under the distribution).
    pub label: Text,
    /// The unit the field is typed in ("" for choices and plain counts).
    pub unit: Text,
    pub field: Field,
    /// The field's text for a configuration ("" when there is nothing to show).
    pub read: fn(&FleetConfig) -> String,
    pub write: Write,
    pub when: When,
    /// Parts of the engine's error field paths that are this knob's
    /// (`max_num_seqs` in `pools[0].replica.scheduler.max_num_seqs`); the longest match wins.
    pub errors: &'static [&'static str],
    /// A query that makes the knob apply, from the seed fleet, with the other knobs where the
    /// whole of its range is valid ("" when the seed is such a place). The table's test
    /// starts there.
    pub context: &'static str,
}

const fn spec(key: &'static str, section: Section, label: &'static str, field: Field) -> Spec {
    Spec {
        key,
        section,
        label: Text::Fixed(label),
        unit: Text::Fixed(""),
        field,
        read: |_| String::new(),
        write: Write::Pick(|_, _| Err(MISMATCH.into())),
        when: When::Always,
        errors: &[],
        context: "",
    }
}

/// A number knob, in `unit`, within `range`.
const fn number(
    key: &'static str,
    section: Section,
    label: &'static str,
    unit: &'static str,
    range: Range,
) -> Spec {
    spec(key, section, label, Field::Number(range)).unit(unit)
}

/// A choice knob.
const fn choice(
    key: &'static str,
    section: Section,
    label: &'static str,
    options: fn(&FleetConfig) -> Vec<(String, String)>,
) -> Spec {
    spec(key, section, label, Field::Choice(options))
}

/// An on/off knob.
const fn toggle(key: &'static str, section: Section, label: &'static str) -> Spec {
    spec(key, section, label, Field::Toggle)
}

impl Spec {
    const fn read(mut self, read: fn(&FleetConfig) -> String) -> Spec {
        self.read = read;
        self
    }
    const fn set(mut self, write: fn(&mut FleetConfig, f64)) -> Spec {
        self.write = Write::Set(write);
        self
    }
    const fn try_set(mut self, write: fn(&mut FleetConfig, f64) -> Result<(), String>) -> Spec {
        self.write = Write::TrySet(write);
        self
    }
    const fn pick(mut self, write: fn(&mut FleetConfig, &str) -> Result<(), String>) -> Spec {
        self.write = Write::Pick(write);
        self
    }
    const fn switch(mut self, write: fn(&mut FleetConfig, bool)) -> Spec {
        self.write = Write::Switch(write);
        self
    }
    const fn when(mut self, when: When) -> Spec {
        self.when = when;
        self
    }
    const fn errors(mut self, errors: &'static [&'static str]) -> Spec {
        self.errors = errors;
        self
    }
    const fn context(mut self, context: &'static str) -> Spec {
        self.context = context;
        self
    }
    const fn unit(mut self, unit: &'static str) -> Spec {
        self.unit = Text::Fixed(unit);
        self
    }
    const fn label_of(mut self, f: fn(&FleetConfig) -> &'static str) -> Spec {
        self.label = Text::Of(f);
        self
    }
    const fn unit_of(mut self, f: fn(&FleetConfig) -> &'static str) -> Spec {
        self.unit = Text::Of(f);
        self
    }
}

/// How many knobs there are.
pub const COUNT: usize = KNOBS.len();

/// One knob: its place in [`KNOBS`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Knob(u8);

impl fmt::Debug for Knob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl Knob {
    /// Every knob, in the order they are applied and shown.
    pub const ALL: [Knob; COUNT] = {
        let mut all = [Knob(0); COUNT];
        let mut i = 0;
        while i < all.len() {
            all[i] = Knob(i as u8);
            i += 1;
        }
        all
    };

    /// The knob's entry.
    pub fn spec(self) -> &'static Spec {
        &KNOBS[self.0 as usize]
    }

    /// The knob's name in the URL and in `data-testid`s.
    pub fn key(self) -> &'static str {
        self.spec().key
    }

    /// The knob with this key.
    pub fn from_key(key: &str) -> Option<Knob> {
        Knob::ALL.into_iter().find(|k| k.key() == key)
    }

    pub fn section(self) -> Section {
        self.spec().section
    }

    /// The field's label for this configuration.
    pub fn label(self, cfg: &FleetConfig) -> &'static str {
        self.spec().label.of(cfg)
    }

    /// The unit the field is typed in ("" for choices and plain counts).
    pub fn unit(self, cfg: &FleetConfig) -> &'static str {
        self.spec().unit.of(cfg)
    }

    /// What the field takes.
    pub fn kind(self) -> Kind {
        match self.spec().field {
            Field::Number(range) => Kind::Number {
                integer: range.integer,
                min: range.min.value(),
                max: range.max.value(),
            },
            Field::Choice(_) => Kind::Choice,
            Field::Toggle => Kind::Toggle,
        }
    }

    /// Whether the knob means something for this configuration (burstiness only under
    /// gamma arrivals, and so on). The panel shows the others disabled.
    pub fn applies(self, cfg: &FleetConfig) -> bool {
        match self.spec().when {
            When::Always => true,
            When::If(f) | When::Inside(f, _) => f(cfg),
        }
    }

    /// The options of a choice or toggle, as (value, label), for this configuration (an
    /// option that only a scenario file can set is listed while the file sets it).
    pub fn options(self, cfg: &FleetConfig) -> Vec<(String, String)> {
        match self.spec().field {
            Field::Number(_) => Vec::new(),
            Field::Choice(options) => options(cfg),
            Field::Toggle => pairs(&[("on", "on"), ("off", "off")]),
        }
    }

    /// The field's text for this configuration.
    pub fn get(self, cfg: &FleetConfig) -> String {
        (self.spec().read)(cfg)
    }

    /// Sets the knob from the text typed into its field. The error is a sentence for the
    /// field; the configuration is unchanged when it fails. Ranges that only the whole
    /// configuration can judge (a model too large for its GPUs) are left to
    /// [`FleetConfig::validate`].
    pub fn set(self, cfg: &mut FleetConfig, text: &str) -> Result<(), String> {
        let text = text.trim();
        // Writing back what the field shows changes nothing (a knob that another set as a
        // side effect reads back in a query without complaint).
        if text == self.get(cfg) {
            return Ok(());
        }
        let spec = self.spec();
        if let When::Inside(applies, why) = spec.when {
            if !applies(cfg) {
                let label = self.label(cfg);
                return Err(format!("{label} does not apply here: {}", why.of(cfg)));
            }
        }
        let written = if let Field::Number(r) = spec.field {
            let (min, max) = (r.min.value(), r.max.value());
            let v = parse_number(text, r.integer, min, max, self.unit(cfg))?;
            self.write_number(cfg, v)
        } else {
            let options = self.options(cfg);
            if !options.iter().any(|(v, _)| v == text) {
                let names: Vec<String> = options.into_iter().map(|(v, _)| v).collect();
                return Err(format!("must be one of {}, got {text:?}", names.join(", ")));
            }
            match spec.write {
                Write::Pick(write) => write(cfg, text),
                Write::Switch(write) => {
                    write(cfg, text == "on");
                    Ok(())
                }
                Write::Set(_) | Write::TrySet(_) => Err(MISMATCH.into()),
            }
        };
        written.map(|()| write::follow_first_pool(cfg))
    }

    /// Writes a number knob's value, unchecked against its range (the table's test writes
    /// just beyond it).
    fn write_number(self, cfg: &mut FleetConfig, v: f64) -> Result<(), String> {
        match self.spec().write {
            Write::Set(write) => {
                write(cfg, v);
                Ok(())
            }
            Write::TrySet(write) => write(cfg, v),
            Write::Pick(_) | Write::Switch(_) => Err(MISMATCH.into()),
        }
    }

    /// The knob whose field a validation error belongs to, from the error's field path
    /// (`traffic[0].workload.arrival.rate`, `pools[0].replica.scheduler.max_num_seqs`, ...):
    /// the knob with the longest part of the path in its [`Spec::errors`].
    pub fn for_error_field(field: &str) -> Option<Knob> {
        Knob::ALL
            .into_iter()
            .flat_map(|k| k.spec().errors.iter().map(move |p| (k, p.len(), *p)))
            .filter(|(_, _, p)| field.contains(p))
            .max_by_key(|(_, len, _)| *len)
            .map(|(k, _, _)| k)
    }
}

/// A number as a field shows it: the shortest text that reads back as the same value, after
/// rounding away the noise of a unit conversion (0.019 s × 1,000 is 19 ms, not
/// 19.000000000000004).
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let rounded: f64 = format!("{v:.12e}").parse().unwrap_or(v);
    format!("{rounded}")
}

/// Reads a number typed in a field: thousands separators and spaces are allowed.
fn parse_number(text: &str, integer: bool, min: f64, max: f64, unit: &str) -> Result<f64, String> {
    let clean: String = text
        .chars()
        .filter(|c| !matches!(c, ',' | '_' | ' ' | '\u{a0}'))
        .collect();
    if clean.is_empty() {
        return Err("needs a value".into());
    }
    let v: f64 = clean
        .parse()
        .map_err(|_| format!("must be a number, got {text:?}"))?;
    if !v.is_finite() {
        return Err(format!("must be a finite number, got {text:?}"));
    }
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    if v < min || v > max {
        return Err(format!(
            "must be between {}{unit} and {}{unit}, got {}",
            trainer_engine::format::num(min),
            trainer_engine::format::num(max),
            text
        ));
    }
    if integer && v.fract() != 0.0 {
        return Err(format!("must be a whole number, got {text}"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests;
