//! The autoscaler: watches one signal on a pool and changes its replica count.
//!
//! Every `interval_s` it reads the signal, compares it with the target, and asks for
//! `ceil(ready x signal / target)` replicas (the Kubernetes horizontal autoscaler's rule),
//! within the pool's bounds, ignoring changes inside a tolerance band. New replicas take
//! `scale_up_delay_s` to become ready (weights loading: minutes); after any change the
//! autoscaler waits `cooldown_s` before the next. GPU utilisation, read as the fraction of
//! time a replica is busy with a step, sits near 100 % under any decode batch, so it cannot
//! tell a comfortable fleet from a drowning one; queued prompt tokens, KV usage and TTFT
//! against the SLO can.

use crate::error::{check_in, check_range, ConfigError};
use serde::{Deserialize, Serialize};

/// What the autoscaler watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScaleSignal {
    /// Fraction of the interval the pool's ready replicas spent running steps (0-1).
    GpuUtilisation,
    /// Prompt tokens waiting to be prefilled, per ready replica.
    QueuedTokens,
    /// Fraction of the KV pool in use, averaged over ready replicas (0-1).
    KvUsage,
    /// Server TTFT at `ttft_quantile` over the interval, seconds (the target is the SLO).
    Ttft,
}

/// The autoscaler's settings.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AutoscalerConfig {
    pub enabled: bool,
    /// Index of the pool it scales.
    pub pool: usize,
    pub signal: ScaleSignal,
    /// The value of the signal the autoscaler steers towards.
    pub target: f64,
    /// Seconds between evaluations.
    pub interval_s: f64,
    /// Seconds from asking for a replica to it taking traffic (node, image, weights).
    pub scale_up_delay_s: f64,
    /// Seconds after a change during which no other change is made.
    pub cooldown_s: f64,
    /// Seconds after any change before the pool may shrink (a stabilisation window, like the
    /// Kubernetes autoscaler's five minutes): a queue that has just drained says little.
    pub scale_down_cooldown_s: f64,
    /// Most replicas removed by one scale-down.
    pub max_scale_down_step: u32,
    /// Relative band around the target inside which nothing changes (0.1 = 10 %).
    pub tolerance: f64,
    /// Quantile of server TTFT used by the TTFT signal.
    pub ttft_quantile: f64,
    /// A floor on a schedule: from `at_s` on, the pool keeps at least `replicas`, asked for
    /// at once whatever the signal says (pre-scaling for a peak that comes every evening,
    /// early enough that the new replicas have loaded when it lands).
    pub scheduled_floor: Option<ScheduledFloor>,
}

/// See [`AutoscalerConfig::scheduled_floor`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduledFloor {
    /// Seconds from the start of the run.
    pub at_s: f64,
    pub replicas: u32,
}

impl Default for AutoscalerConfig {
    fn default() -> Self {
        AutoscalerConfig {
            enabled: false,
            pool: 0,
            signal: ScaleSignal::QueuedTokens,
            target: 2_000.0,
            interval_s: 15.0,
            scale_up_delay_s: 180.0,
            cooldown_s: 60.0,
            scale_down_cooldown_s: 300.0,
            max_scale_down_step: 1,
            tolerance: 0.1,
            ttft_quantile: 0.95,
            scheduled_floor: None,
        }
    }
}

impl AutoscalerConfig {
    /// How long a new replica takes to be ready, seconds.
    pub const SCALE_UP_DELAY_S_RANGE: std::ops::RangeInclusive<f64> = 0.0..=86_400.0;

    pub fn validate(&self) -> Result<(), ConfigError> {
        check_positive_f("target", self.target)?;
        check_range("interval_s", self.interval_s, 0.1, 3_600.0)?;
        check_in(
            "scale_up_delay_s",
            self.scale_up_delay_s,
            &Self::SCALE_UP_DELAY_S_RANGE,
        )?;
        check_range("cooldown_s", self.cooldown_s, 0.0, 86_400.0)?;
        check_range(
            "scale_down_cooldown_s",
            self.scale_down_cooldown_s,
            0.0,
            86_400.0,
        )?;
        if self.max_scale_down_step == 0 {
            return Err(ConfigError::new(
                "max_scale_down_step",
                "must be at least 1",
            ));
        }
        check_range("tolerance", self.tolerance, 0.0, 1.0)?;
        check_range("ttft_quantile", self.ttft_quantile, 0.0, 1.0)?;
        if let Some(f) = self.scheduled_floor {
            check_range("scheduled_floor.at_s", f.at_s, 0.0, 86_400.0 * 7.0)?;
            check_range("scheduled_floor.replicas", f.replicas as f64, 0.0, 10_000.0)?;
        }
        if matches!(
            self.signal,
            ScaleSignal::GpuUtilisation | ScaleSignal::KvUsage
        ) && self.target > 1.0
        {
            return Err(ConfigError::new(
                "target",
                "a utilisation or KV usage target is a fraction between 0 and 1",
            ));
        }
        Ok(())
    }

    /// The least the pool may hold at `t`: the pool's own minimum, raised by the scheduled
    /// floor once its time has come (never above the pool's maximum).
    pub fn floor_at(&self, t: f64, min: u32, max: u32) -> u32 {
        match self.scheduled_floor {
            Some(f) if t >= f.at_s => min.max(f.replicas.min(max)),
            _ => min,
        }
    }

    /// The replica count the autoscaler asks for, or `None` to leave the pool alone.
    /// `ready` replicas produced `value`; `current` counts ready and starting replicas.
    pub fn desired(&self, ready: u32, current: u32, value: f64, min: u32, max: u32) -> Option<u32> {
        if !value.is_finite() || ready == 0 {
            return None;
        }
        let ratio = value / self.target;
        if (ratio - 1.0).abs() <= self.tolerance {
            return None;
        }
        let want = libm::ceil(ready as f64 * ratio).clamp(min as f64, max as f64) as u32;
        (want != current).then_some(want)
    }
}

fn check_positive_f(field: &str, v: f64) -> Result<(), ConfigError> {
    crate::error::check_positive(field, v, 1e12).map(|_| ())
}

/// One evaluation of the autoscaler.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SignalPoint {
    pub t: f64,
    /// The pool it scales (a fleet may have one autoscaler per pool).
    #[serde(default)]
    pub pool: usize,
    /// The signal's value (NaN when it had nothing to read, e.g. no TTFT in the interval).
    pub value: f64,
    /// Ready replicas in the pool.
    pub ready: u32,
    /// Ready and starting replicas in the pool.
    pub provisioned: u32,
}

/// One change the autoscaler made.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScaleEvent {
    pub t: f64,
    /// The pool it scaled.
    #[serde(default)]
    pub pool: usize,
    /// The signal's value when it decided.
    pub signal: f64,
    pub from: u32,
    pub to: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn desired_follows_the_ratio_within_bounds_and_tolerance() {
        let a = AutoscalerConfig {
            signal: ScaleSignal::QueuedTokens,
            target: 1_000.0,
            ..AutoscalerConfig::default()
        };
        // (ready, current, value, min, max) -> desired
        let cases = [
            ((4, 4, 2_000.0, 1, 16), Some(8)),
            ((4, 4, 1_050.0, 1, 16), None),
            ((4, 6, 2_000.0, 1, 6), None),
            ((4, 4, 100.0, 2, 16), Some(2)),
            ((4, 4, f64::NAN, 1, 16), None),
            ((0, 2, 5_000.0, 1, 16), None),
        ];
        for ((ready, current, v, min, max), want) in cases {
            assert_eq!(a.desired(ready, current, v, min, max), want, "{v}");
        }
    }

    #[test]
    fn utilisation_targets_must_be_fractions() {
        let a = AutoscalerConfig {
            signal: ScaleSignal::GpuUtilisation,
            target: 65.0,
            ..AutoscalerConfig::default()
        };
        assert_eq!(a.validate().unwrap_err().field, "target");
    }
}
