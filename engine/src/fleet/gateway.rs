//! Clients and the gateway in front of the fleet.
//!
//! Clients live in regions, each a network round trip away; a request on a new connection
//! first pays the TCP and TLS handshakes. The gateway authenticates the caller (a cache hit
//! is cheap, a miss calls the identity provider), counts prompt tokens for billing, checks
//! the tenant's budget (see [`super::quota`]), and after routing takes a connection to the
//! chosen replica from a pool: a warm one costs nothing, a cold one pays a connect and
//! handshake inside the data centre.

use crate::error::{check_range, ConfigError};
use serde::{Deserialize, Serialize};

/// A client region.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Region {
    pub name: String,
    /// Relative share of the traffic that comes from this region.
    pub share: f64,
    /// Round trip between the region and the gateway, seconds.
    pub rtt_s: f64,
    /// Fraction of requests that open a new connection (the rest reuse a kept-alive one).
    pub new_connection_fraction: f64,
}

impl Default for Region {
    fn default() -> Self {
        Region {
            name: "local".into(),
            share: 1.0,
            rtt_s: 0.02,
            new_connection_fraction: 0.1,
        }
    }
}

/// The client population.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClientConfig {
    pub regions: Vec<Region>,
    /// Round trips a new connection spends on handshakes (TCP + TLS 1.3 = 2).
    pub handshake_rtts: f64,
    /// CPU time of the TLS key exchange and certificate check, seconds.
    pub tls_crypto_s: f64,
    /// Fraction of requests that stream their reply (the rest wait for the whole reply).
    pub streaming_fraction: f64,
    /// The `max_tokens` every request asks for; outputs longer than this are cut to it.
    /// The quota charges prompt tokens + `max_tokens`.
    pub max_tokens: u32,
    /// A client that has no first token this long after the gateway received its request
    /// gives up and disconnects, seconds; the gateway then cancels the request (see
    /// `gateway.abort_on_disconnect`). Real clients and SDKs give up after 60 to 600 seconds.
    pub timeout_s: f64,
    /// Share of clients that close the connection before their reply ends (a closed tab, a
    /// stop button, an agent that has read enough), 0 to 1.
    pub abandon_fraction: f64,
    /// How long such a client stays, seconds after the gateway received its request: drawn
    /// from an exponential distribution with this mean. A reply that ends first is read in
    /// full.
    pub abandon_after_s: f64,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            regions: vec![Region::default()],
            handshake_rtts: 2.0,
            tls_crypto_s: 0.001,
            streaming_fraction: 1.0,
            max_tokens: 1024,
            timeout_s: 120.0,
            abandon_fraction: 0.0,
            abandon_after_s: 10.0,
        }
    }
}

impl ClientConfig {
    pub const ABANDON_FRACTION_RANGE: std::ops::RangeInclusive<f64> = 0.0..=1.0;
    /// A tenth of a second to an hour.
    pub const ABANDON_AFTER_S_RANGE: std::ops::RangeInclusive<f64> = 0.1..=3_600.0;

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.regions.is_empty() {
            return Err(ConfigError::new("regions", "needs at least one region"));
        }
        if self.regions.len() > 64 {
            return Err(ConfigError::new("regions", "at most 64 regions"));
        }
        for (i, r) in self.regions.iter().enumerate() {
            let f = |e: ConfigError| e.within(&format!("regions[{i}]"));
            check_range("share", r.share, 0.0, 1e6).map_err(f)?;
            check_range("rtt_s", r.rtt_s, 0.0, 10.0).map_err(f)?;
            check_range(
                "new_connection_fraction",
                r.new_connection_fraction,
                0.0,
                1.0,
            )
            .map_err(f)?;
        }
        if self.regions.iter().map(|r| r.share).sum::<f64>() <= 0.0 {
            return Err(ConfigError::new(
                "regions",
                "the shares must not all be zero",
            ));
        }
        check_range("handshake_rtts", self.handshake_rtts, 0.0, 10.0)?;
        check_range("tls_crypto_s", self.tls_crypto_s, 0.0, 1.0)?;
        check_range("streaming_fraction", self.streaming_fraction, 0.0, 1.0)?;
        if self.max_tokens == 0 {
            return Err(ConfigError::new("max_tokens", "must be greater than zero"));
        }
        crate::error::check_positive("timeout_s", self.timeout_s, 86_400.0)?;
        crate::error::check_in(
            "abandon_fraction",
            self.abandon_fraction,
            &Self::ABANDON_FRACTION_RANGE,
        )?;
        crate::error::check_in(
            "abandon_after_s",
            self.abandon_after_s,
            &Self::ABANDON_AFTER_S_RANGE,
        )?;
        Ok(())
    }

    /// Picks a region for a uniform draw `u` in [0, 1).
    pub fn region_for(&self, u: f64) -> usize {
        let total: f64 = self.regions.iter().map(|r| r.share).sum();
        let mut acc = 0.0;
        for (i, r) in self.regions.iter().enumerate() {
            acc += r.share / total;
            if u < acc {
                return i;
            }
        }
        self.regions.len() - 1
    }

    /// Time a new connection from `region` spends on handshakes before the request leaves.
    pub fn connection_setup_s(&self, region: usize) -> f64 {
        self.handshake_rtts * self.regions[region].rtt_s + self.tls_crypto_s
    }
}

/// The gateway's own costs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GatewayConfig {
    /// Authentication with the key found in the gateway's cache, seconds.
    pub auth_s: f64,
    /// Fraction of requests whose key is not cached.
    pub auth_miss_fraction: f64,
    /// Authentication on a cache miss (a call to the identity provider), seconds.
    pub auth_miss_s: f64,
    /// Tokenising the prompt for billing and the quota, seconds per prompt token.
    pub tokenize_s_per_token: f64,
    pub pool: PoolConnections,
    /// Most requests the gateway holds before it hands them to an engine (authenticating,
    /// at the quota store, in the router's queue, connecting); a request arriving when the
    /// queue is full is answered 429 at once.
    pub max_queued: u32,
    /// Most requests the gateway lets any one replica hold (running or waiting, like a
    /// per-upstream circuit breaker): when every serving replica holds this many, the router
    /// answers 429 instead of queueing the request on an engine.
    pub max_outstanding_per_replica: u32,
    /// Whether the gateway tells the engine when a client disconnects, so that the engine
    /// aborts the request and frees its KV blocks at once (as vLLM's server does when the
    /// connection closes). Off, the engine goes on generating for nobody until the request
    /// ends: the blocks and the batch slots stay taken.
    pub abort_on_disconnect: bool,
    /// How many times the gateway sends a request again when the replica holding it fails
    /// before the client has had any of its reply (safe: nothing was written, so the client
    /// cannot tell). A stream already under way cannot be resumed on another replica.
    pub retries: u32,
}

/// The gateway's pool of connections to each replica.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PoolConnections {
    /// Idle connections kept per replica (0 = a new connection for every request).
    pub max_idle_per_replica: u32,
    /// An idle connection older than this is closed, seconds.
    pub idle_timeout_s: f64,
    /// Opening a connection to a replica (TCP + mTLS inside the data centre), seconds.
    pub connect_s: f64,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            auth_s: 0.0005,
            auth_miss_fraction: 0.01,
            auth_miss_s: 0.02,
            tokenize_s_per_token: 1e-6,
            pool: PoolConnections::default(),
            max_queued: 10_000,
            max_outstanding_per_replica: 512,
            abort_on_disconnect: true,
            retries: 1,
        }
    }
}

impl Default for PoolConnections {
    fn default() -> Self {
        PoolConnections {
            max_idle_per_replica: 256,
            idle_timeout_s: 60.0,
            connect_s: 0.005,
        }
    }
}

impl GatewayConfig {
    /// Retries of one request the gateway may be set to.
    pub const RETRIES_RANGE: std::ops::RangeInclusive<u32> = 0..=10;

    pub fn validate(&self) -> Result<(), ConfigError> {
        check_range("auth_s", self.auth_s, 0.0, 10.0)?;
        check_range("auth_miss_fraction", self.auth_miss_fraction, 0.0, 1.0)?;
        check_range("auth_miss_s", self.auth_miss_s, 0.0, 10.0)?;
        check_range("tokenize_s_per_token", self.tokenize_s_per_token, 0.0, 1e-3)?;
        check_range(
            "pool.idle_timeout_s",
            self.pool.idle_timeout_s,
            0.0,
            86_400.0,
        )?;
        check_range("pool.connect_s", self.pool.connect_s, 0.0, 10.0)?;
        check_count("max_queued", self.max_queued, 100_000)?;
        check_count(
            "max_outstanding_per_replica",
            self.max_outstanding_per_replica,
            100_000,
        )?;
        if !Self::RETRIES_RANGE.contains(&self.retries) {
            return Err(ConfigError::new(
                "retries",
                format!("at most {}", Self::RETRIES_RANGE.end()),
            ));
        }
        Ok(())
    }
}

/// Checks that a count is at least 1 and at most `max`.
fn check_count(field: &str, v: u32, max: u32) -> Result<(), ConfigError> {
    if v == 0 || v > max {
        return Err(ConfigError::new(
            field,
            format!("must be 1 to {max}, got {v}"),
        ));
    }
    Ok(())
}

/// Idle connections to one replica, most recently returned last.
#[derive(Clone, Debug, Default)]
pub struct ConnectionPool {
    idle: Vec<f64>,
    /// Connections opened (cold) and reused (warm).
    pub opened: u64,
    pub reused: u64,
}

impl ConnectionPool {
    /// Takes a connection at `t`; returns the setup time it costs (0 when warm).
    pub fn acquire(&mut self, t: f64, cfg: &PoolConnections) -> f64 {
        // The newest idle connection is the last; when it has timed out, all have.
        if let Some(&last) = self.idle.last() {
            if t - last > cfg.idle_timeout_s {
                self.idle.clear();
            }
        }
        if self.idle.pop().is_some() {
            self.reused += 1;
            0.0
        } else {
            self.opened += 1;
            cfg.connect_s
        }
    }

    /// Returns a connection at `t` (closes it when the pool is full).
    pub fn release(&mut self, t: f64, cfg: &PoolConnections) {
        if self.idle.len() < cfg.max_idle_per_replica as usize {
            self.idle.push(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_split_the_traffic_by_share() {
        let c = ClientConfig {
            regions: vec![
                Region {
                    name: "eu".into(),
                    share: 1.0,
                    ..Region::default()
                },
                Region {
                    name: "us".into(),
                    share: 3.0,
                    rtt_s: 0.1,
                    ..Region::default()
                },
            ],
            ..ClientConfig::default()
        };
        c.validate().unwrap();
        let picks: Vec<usize> = [0.0, 0.24, 0.26, 0.99].map(|u| c.region_for(u)).to_vec();
        assert_eq!(picks, vec![0, 0, 1, 1]);
        assert!((c.connection_setup_s(1) - 0.201).abs() < 1e-12);
    }

    #[test]
    fn warm_connections_are_free_and_cold_ones_pay_the_connect() {
        let cfg = PoolConnections {
            max_idle_per_replica: 1,
            idle_timeout_s: 10.0,
            connect_s: 0.05,
        };
        let mut p = ConnectionPool::default();
        // (time, acquire?) in order: two concurrent streams, then reuse, then a timeout.
        let script = [
            (0.0, true, 0.05),
            (0.0, true, 0.05),
            (1.0, false, 0.0),
            (1.0, false, 0.0),
            (2.0, true, 0.0),
            (3.0, false, 0.0),
            (20.0, true, 0.05),
        ];
        for (t, acquire, cost) in script {
            if acquire {
                assert_eq!(p.acquire(t, &cfg), cost, "at {t}");
            } else {
                p.release(t, &cfg);
            }
        }
        assert_eq!((p.opened, p.reused), (3, 1));
    }

    #[test]
    fn bad_clients_are_errors() {
        let bad = [
            ClientConfig {
                regions: vec![],
                ..ClientConfig::default()
            },
            ClientConfig {
                regions: vec![Region {
                    share: 0.0,
                    ..Region::default()
                }],
                ..ClientConfig::default()
            },
            ClientConfig {
                streaming_fraction: 1.5,
                ..ClientConfig::default()
            },
            ClientConfig {
                max_tokens: 0,
                ..ClientConfig::default()
            },
        ];
        for c in bad {
            assert!(c.validate().is_err(), "{c:?}");
        }
    }
}
