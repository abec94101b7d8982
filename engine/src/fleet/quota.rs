//! Per-tenant tokens-per-minute budgets, kept in a store modelled on Redis.
//!
//! The gateway costs a request as its prompt tokens plus its `max_tokens` and asks the store
//! whether the tenant's window still has room. The store is a single server (Redis runs
//! commands one at a time): each check waits for the commands ahead of it, takes a fixed
//! service time, and pays a network round trip. Over budget, the gateway answers 429 at once
//! with a Retry-After value instead of queueing the request past the TTFT target.

use crate::error::{check_range, ConfigError};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// How the store counts a tenant's usage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuotaWindow {
    /// One counter per calendar minute (`INCRBY` on a key named after the minute): cheap, but
    /// a tenant can spend two budgets within a second across a minute boundary.
    Fixed,
    /// A sliding log of the last minute's charges (a sorted set trimmed by time): exact.
    Sliding,
}

/// The quota store and the budgets it enforces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QuotaConfig {
    /// Whether the gateway checks budgets at all. Off: no store round trip, no 429s.
    pub enabled: bool,
    pub window: QuotaWindow,
    /// Window length in seconds (60 for tokens per minute).
    pub window_s: f64,
    /// Budget in tokens per window for every tenant without an override.
    pub tokens_per_window: u64,
    /// Budgets for particular tenants, as (tenant, tokens per window).
    pub overrides: Vec<(u32, u64)>,
    /// Network round trip from the gateway to the store, seconds.
    pub rtt_s: f64,
    /// Time the store spends on one check, seconds (it serves one command at a time).
    pub service_s: f64,
}

impl Default for QuotaConfig {
    fn default() -> Self {
        QuotaConfig {
            enabled: true,
            window: QuotaWindow::Sliding,
            window_s: 60.0,
            tokens_per_window: 10_000_000,
            overrides: Vec::new(),
            rtt_s: 0.0005,
            service_s: 0.00002,
        }
    }
}

impl QuotaConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_range("window_s", self.window_s, 1.0, 86_400.0)?;
        check_range("rtt_s", self.rtt_s, 0.0, 10.0)?;
        check_range("service_s", self.service_s, 0.0, 1.0)?;
        if self.tokens_per_window == 0 {
            return Err(ConfigError::new(
                "tokens_per_window",
                "must be greater than zero (switch the quota off instead)",
            ));
        }
        if let Some((t, _)) = self.overrides.iter().find(|(_, b)| *b == 0) {
            return Err(ConfigError::new(
                "overrides",
                format!("tenant {t} has a zero budget"),
            ));
        }
        Ok(())
    }

    /// The budget of one tenant.
    pub fn budget(&self, tenant: u32) -> u64 {
        self.overrides
            .iter()
            .find(|(t, _)| *t == tenant)
            .map(|(_, b)| *b)
            .unwrap_or(self.tokens_per_window)
    }
}

/// What the store answered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QuotaDecision {
    /// Within budget; the charge has been recorded.
    Allowed,
    /// Over budget: answer 429 with this Retry-After, in whole seconds.
    Rejected { retry_after_s: u32 },
}

/// Per-tenant counters the report shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TenantCounters {
    pub checks: u64,
    pub allowed: u64,
    pub rejected: u64,
    /// Tokens charged to allowed requests (prompt + max_tokens).
    pub tokens_charged: u64,
    /// Prompt tokens counted for billing on allowed requests.
    pub prompt_tokens_billed: u64,
}

/// The simulated store: windows per tenant, the single server's queue, and counters.
#[derive(Clone, Debug)]
pub struct QuotaStore {
    cfg: QuotaConfig,
    tenants: Vec<TenantWindow>,
    counters: Vec<TenantCounters>,
    /// Time at which the store's single server becomes free.
    free_at: f64,
}

#[derive(Clone, Debug, Default)]
struct TenantWindow {
    /// Fixed window: index of the current window and its usage.
    window_index: i64,
    used: u64,
    /// Sliding window: charges inside the last window, oldest first.
    log: VecDeque<(f64, u64)>,
}

impl QuotaStore {
    pub fn new(cfg: QuotaConfig, tenants: u32) -> Result<QuotaStore, ConfigError> {
        cfg.validate()?;
        let n = tenants.max(1) as usize;
        Ok(QuotaStore {
            cfg,
            tenants: vec![TenantWindow::default(); n],
            counters: vec![TenantCounters::default(); n],
            free_at: 0.0,
        })
    }

    pub fn config(&self) -> &QuotaConfig {
        &self.cfg
    }

    /// When a check sent at `t` is answered back at the gateway, and when the store runs it.
    /// Returns `(run_at, answered_at)`; reserves the store's server for the check.
    pub fn schedule(&mut self, t: f64) -> (f64, f64) {
        let arrive = t + self.cfg.rtt_s / 2.0;
        let start = arrive.max(self.free_at);
        let end = start + self.cfg.service_s;
        self.free_at = end;
        (start, end + self.cfg.rtt_s / 2.0)
    }

    /// Runs one check at store time `t` for `tenant`, charging `cost` tokens when allowed.
    /// Checks must be run in non-decreasing time order (the simulation guarantees it).
    pub fn check(&mut self, t: f64, tenant: u32, cost: u64, prompt_tokens: u64) -> QuotaDecision {
        let i = (tenant as usize).min(self.tenants.len() - 1);
        let budget = self.cfg.budget(tenant);
        let window = self.cfg.window_s;
        let c = &mut self.counters[i];
        c.checks += 1;
        let w = &mut self.tenants[i];
        let decision = match self.cfg.window {
            QuotaWindow::Fixed => {
                let index = libm::floor(t / window) as i64;
                if index != w.window_index {
                    w.window_index = index;
                    w.used = 0;
                }
                if w.used + cost <= budget {
                    w.used += cost;
                    QuotaDecision::Allowed
                } else {
                    let wait = (index + 1) as f64 * window - t;
                    QuotaDecision::Rejected {
                        retry_after_s: whole_seconds(wait),
                    }
                }
            }
            QuotaWindow::Sliding => {
                while let Some(&(t0, c0)) = w.log.front() {
                    if t0 <= t - window {
                        w.log.pop_front();
                        w.used -= c0;
                    } else {
                        break;
                    }
                }
                if w.used + cost <= budget {
                    w.used += cost;
                    w.log.push_back((t, cost));
                    QuotaDecision::Allowed
                } else if cost > budget {
                    // The request can never fit; tell the client to come back after a window.
                    QuotaDecision::Rejected {
                        retry_after_s: whole_seconds(window),
                    }
                } else {
                    // Wait until enough of the oldest charges leave the window.
                    let mut freed = 0;
                    let mut wait = window;
                    for &(t0, c0) in &w.log {
                        freed += c0;
                        if w.used - freed + cost <= budget {
                            wait = t0 + window - t;
                            break;
                        }
                    }
                    QuotaDecision::Rejected {
                        retry_after_s: whole_seconds(wait),
                    }
                }
            }
        };
        match decision {
            QuotaDecision::Allowed => {
                c.allowed += 1;
                c.tokens_charged += cost;
                c.prompt_tokens_billed += prompt_tokens;
            }
            QuotaDecision::Rejected { .. } => c.rejected += 1,
        }
        decision
    }

    /// Counters per tenant, indexed by tenant.
    pub fn counters(&self) -> &[TenantCounters] {
        &self.counters
    }
}

/// Retry-After is a whole number of seconds, rounded up, at least one.
fn whole_seconds(s: f64) -> u32 {
    libm::ceil(s).clamp(1.0, u32::MAX as f64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(window: QuotaWindow, budget: u64) -> QuotaStore {
        let cfg = QuotaConfig {
            window,
            tokens_per_window: budget,
            ..QuotaConfig::default()
        };
        QuotaStore::new(cfg, 2).unwrap()
    }

    /// Runs (time, tenant, cost) checks and returns each decision's Retry-After (0 = allowed).
    fn run(s: &mut QuotaStore, checks: &[(f64, u32, u64)]) -> Vec<u32> {
        checks
            .iter()
            .map(
                |&(t, tenant, cost)| match s.check(t, tenant, cost, cost / 2) {
                    QuotaDecision::Allowed => 0,
                    QuotaDecision::Rejected { retry_after_s } => retry_after_s,
                },
            )
            .collect()
    }

    #[test]
    fn fixed_window_resets_on_the_minute_and_retry_after_points_there() {
        let mut s = store(QuotaWindow::Fixed, 2_500);
        let got = run(
            &mut s,
            &[
                (1.0, 0, 1_250),
                (2.0, 0, 1_250),
                (10.5, 0, 1_250),
                (10.5, 1, 1_250),
                (60.0, 0, 1_250),
            ],
        );
        assert_eq!(got, vec![0, 0, 50, 0, 0]);
        assert_eq!(s.counters()[0].rejected, 1);
        assert_eq!(s.counters()[0].tokens_charged, 3_750);
        assert_eq!(s.counters()[1].allowed, 1);
    }

    #[test]
    fn sliding_window_frees_budget_as_old_charges_age_out() {
        let mut s = store(QuotaWindow::Sliding, 2_500);
        let got = run(
            &mut s,
            &[
                (1.0, 0, 1_250),
                (20.0, 0, 1_250),
                (30.0, 0, 1_250),
                (61.0, 0, 1_250),
                (62.0, 0, 3_000),
            ],
        );
        // At 30 s the first charge leaves at 61 s: retry after 31 s; at 61 s it has left.
        assert_eq!(got, vec![0, 0, 31, 0, 60]);
        assert_eq!(s.counters()[0].prompt_tokens_billed, 3 * 625);
    }

    #[test]
    fn the_store_is_a_single_server_with_a_round_trip() {
        let mut s = QuotaStore::new(
            QuotaConfig {
                rtt_s: 0.002,
                service_s: 0.001,
                ..QuotaConfig::default()
            },
            1,
        )
        .unwrap();
        let (run1, done1) = s.schedule(0.0);
        let (run2, done2) = s.schedule(0.0);
        assert_eq!((run1, done1), (0.001, 0.003));
        assert!((run2 - 0.002).abs() < 1e-12 && (done2 - 0.004).abs() < 1e-12);
    }

    #[test]
    fn bad_budgets_are_errors() {
        let bad = [
            QuotaConfig {
                tokens_per_window: 0,
                ..QuotaConfig::default()
            },
            QuotaConfig {
                overrides: vec![(3, 0)],
                ..QuotaConfig::default()
            },
            QuotaConfig {
                window_s: f64::NAN,
                ..QuotaConfig::default()
            },
        ];
        for cfg in bad {
            assert!(QuotaStore::new(cfg, 4).is_err());
        }
    }
}
