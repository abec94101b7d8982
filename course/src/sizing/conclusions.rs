//! The cases a conclusion is chosen from. Each sentence that draws a conclusion from the
//! figures (a verdict's reading, a sentence of the lesson) is picked here from the figures
//! themselves, so the reading and the lesson's sentence on the same figure always agree; the
//! words of every case are in `content/verdict.toml`.

use super::Pressure;

/// Share of a limit at or above which it binds: within a tenth of the limit, so that
/// tightening the limit by the tenth the sensitivity table moves every input by would break it.
pub const BINDING_SHARE: f64 = 0.9;
/// Share at or above which a limit weighs in without binding.
pub const SECONDARY_SHARE: f64 = 0.5;

/// How the fleet's streams sit in each replica's KV pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KvCase {
    /// Under half the pool, and a full batch fits.
    Room,
    /// Half the pool or more, under nine tenths, and a full batch fits.
    Real,
    /// Nine tenths of the pool or more, up to all of it.
    Full,
    /// More than the pool holds.
    Over,
    /// The streams fit under nine tenths, but a full batch at the average context would not.
    BatchOver,
}

impl KvCase {
    /// The case for streams using `share` of the pool, when a full batch needs `batch_kv`
    /// tokens of a pool of `pool`.
    pub fn of(share: f64, batch_kv: f64, pool: f64) -> KvCase {
        if share > 1.0 {
            KvCase::Over
        } else if share >= BINDING_SHARE {
            KvCase::Full
        } else if batch_kv > pool {
            KvCase::BatchOver
        } else if share >= SECONDARY_SHARE {
            KvCase::Real
        } else {
            KvCase::Room
        }
    }

    /// How hard KV capacity presses in this case.
    pub fn pressure(self) -> Pressure {
        match self {
            KvCase::Room => Pressure::Slack,
            KvCase::Real => Pressure::Secondary,
            KvCase::Full | KvCase::Over | KvCase::BatchOver => Pressure::Binding,
        }
    }

    /// The key of its sentences (in `[fleet]` and `[say]`).
    pub fn key(self) -> &'static str {
        match self {
            KvCase::Room => "kv_room",
            KvCase::Real => "kv_real",
            KvCase::Full => "kv_full",
            KvCase::Over => "kv_over",
            KvCase::BatchOver => "kv_batch_over",
        }
    }
}

/// How a decode step sits against the per-token target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Under half the target.
    Room,
    /// Half the target or more, under nine tenths.
    Near,
    /// Nine tenths of the target or more, up to the target: a tenth tighter would miss.
    Tight,
    /// Over the target.
    Missed,
}

impl Pace {
    /// The case for a step of `step` seconds against a target of `target` seconds.
    pub fn of(step: f64, target: f64) -> Pace {
        let r = step / target;
        if r > 1.0 {
            Pace::Missed
        } else if r >= BINDING_SHARE {
            Pace::Tight
        } else if r >= SECONDARY_SHARE {
            Pace::Near
        } else {
            Pace::Room
        }
    }

    /// How hard the target presses on the replica count through the step alone.
    pub fn pressure(self) -> Pressure {
        match self {
            Pace::Room => Pressure::Slack,
            Pace::Near => Pressure::Secondary,
            Pace::Tight | Pace::Missed => Pressure::Binding,
        }
    }

    /// The key of the fleet reading's sentence.
    pub fn reading_key(self) -> &'static str {
        match self {
            Pace::Room => "latency_room",
            Pace::Near => "latency_near",
            Pace::Tight => "latency_tight",
            Pace::Missed => "latency_missed",
        }
    }

    /// The key of the lesson's sentence on how fast replies run in a simulation.
    pub fn say_key(self) -> &'static str {
        match self {
            Pace::Room => "pace_faster",
            Pace::Near | Pace::Tight => "pace_close",
            Pace::Missed => "pace_over",
        }
    }
}

/// The stronger of two pressures.
pub fn stronger(a: Pressure, b: Pressure) -> Pressure {
    a.min(b)
}
