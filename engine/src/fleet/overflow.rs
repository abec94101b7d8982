//! What catches overflow when the serving pools are saturated.
//!
//! The router calls the fleet saturated when even the least loaded serving replica is past
//! the trigger (queued prompt tokens or waiting requests). The overflow action then spills
//! the request to another pool, sends it to a hosted API (with its own latency, speed and
//! per-token price), or sheds it with 429.

use crate::error::{check_range, ConfigError};
use serde::{Deserialize, Serialize};

/// A hosted model API used as a spill target.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostedApi {
    /// Round trip and queueing at the provider before any work, seconds.
    pub latency_s: f64,
    /// The provider's prefill speed, prompt tokens per second per request.
    pub prefill_tokens_per_s: f64,
    /// The provider's decode speed, output tokens per second per request.
    pub output_tokens_per_s: f64,
    /// Price in dollars per million input tokens.
    pub price_per_m_input: f64,
    /// Price in dollars per million output tokens.
    pub price_per_m_output: f64,
}

impl Default for HostedApi {
    fn default() -> Self {
        HostedApi {
            latency_s: 0.3,
            prefill_tokens_per_s: 20_000.0,
            output_tokens_per_s: 80.0,
            price_per_m_input: 0.20,
            price_per_m_output: 0.60,
        }
    }
}

impl HostedApi {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_range("latency_s", self.latency_s, 0.0, 60.0)?;
        crate::error::check_positive("prefill_tokens_per_s", self.prefill_tokens_per_s, 1e9)?;
        crate::error::check_positive("output_tokens_per_s", self.output_tokens_per_s, 1e9)?;
        check_range("price_per_m_input", self.price_per_m_input, 0.0, 1e4)?;
        check_range("price_per_m_output", self.price_per_m_output, 0.0, 1e4)?;
        Ok(())
    }

    /// (time to first token, time from first to last token) for one request, seconds.
    pub fn timing(&self, prompt_tokens: u32, output_tokens: u32) -> (f64, f64) {
        let ttft = self.latency_s + prompt_tokens as f64 / self.prefill_tokens_per_s;
        let rest = output_tokens.saturating_sub(1) as f64 / self.output_tokens_per_s;
        (ttft, rest)
    }

    /// Dollars charged for one request.
    pub fn price(&self, prompt_tokens: u32, output_tokens: u32) -> f64 {
        (prompt_tokens as f64 * self.price_per_m_input
            + output_tokens as f64 * self.price_per_m_output)
            / 1e6
    }
}

/// What happens to a request that arrives while the fleet is saturated.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OverflowAction {
    /// Route it anyway: it queues on the busiest fleet.
    Queue,
    /// Send it to another pool (by index), routed there by fewest queued prompt tokens.
    SpillToPool { pool: usize },
    /// Send it to a hosted API.
    Hosted(HostedApi),
    /// Answer 429 at once.
    Shed { retry_after_s: u32 },
}

/// When the fleet counts as saturated, and what to do then.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OverflowConfig {
    pub action: OverflowAction,
    /// Saturated when every serving replica has at least this many prompt tokens queued
    /// (0 = not used).
    pub queued_tokens_trigger: u64,
    /// Saturated when every serving replica has at least this many requests waiting
    /// (0 = not used).
    pub waiting_trigger: u32,
}

impl Default for OverflowConfig {
    fn default() -> Self {
        OverflowConfig {
            action: OverflowAction::Queue,
            queued_tokens_trigger: 0,
            waiting_trigger: 0,
        }
    }
}

impl OverflowConfig {
    pub fn validate(&self, pools: usize) -> Result<(), ConfigError> {
        match self.action {
            OverflowAction::SpillToPool { pool } if pool >= pools => Err(ConfigError::new(
                "action.pool",
                format!("there is no pool {pool} (the fleet has {pools})"),
            )),
            OverflowAction::Hosted(h) => h.validate().map_err(|e| e.within("action")),
            _ => Ok(()),
        }
    }

    /// Whether a replica with this load is past the trigger.
    pub fn replica_saturated(&self, queued_prompt_tokens: u64, waiting: u32) -> bool {
        (self.queued_tokens_trigger > 0 && queued_prompt_tokens >= self.queued_tokens_trigger)
            || (self.waiting_trigger > 0 && waiting >= self.waiting_trigger)
    }

    /// Whether overflow can ever trigger.
    pub fn active(&self) -> bool {
        !matches!(self.action, OverflowAction::Queue)
            && (self.queued_tokens_trigger > 0 || self.waiting_trigger > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosted_timing_and_price_follow_its_speeds() {
        let h = HostedApi {
            latency_s: 0.2,
            prefill_tokens_per_s: 10_000.0,
            output_tokens_per_s: 50.0,
            price_per_m_input: 1.0,
            price_per_m_output: 4.0,
        };
        let (ttft, rest) = h.timing(1_000, 251);
        assert!((ttft - 0.3).abs() < 1e-12 && (rest - 5.0).abs() < 1e-12);
        assert!((h.price(1_000_000, 250_000) - 2.0).abs() < 1e-12);
    }

    #[test]
    fn triggers_and_targets_are_checked() {
        let o = OverflowConfig {
            action: OverflowAction::Shed { retry_after_s: 1 },
            queued_tokens_trigger: 8_000,
            waiting_trigger: 0,
        };
        assert!(o.active());
        assert!(o.replica_saturated(8_000, 0) && !o.replica_saturated(7_999, 50));
        let spill = OverflowConfig {
            action: OverflowAction::SpillToPool { pool: 2 },
            ..o
        };
        assert!(spill.validate(2).is_err() && spill.validate(3).is_ok());
        assert!(!OverflowConfig::default().active());
    }
}
