//! Bookkeeping for the four clocks: per-request records and fleet-wide distributions.
//!
//! Per-step quantities (the ITL of every token in an engine step) arrive millions of times an
//! hour, so the fleet collects every distribution in a [`Histogram`] with buckets 1/1024 of
//! a power of two wide (about 0.05 % relative error) and hands the buckets to
//! [`crate::stats::Samples`] as weighted samples only when a report is asked for. Memory
//! stays a few hundred kilobytes however long the run.

use crate::stats::{Samples, Summary};
use serde::{Deserialize, Serialize};

/// Sub-buckets per power of two.
const SUB_BITS: u32 = 10;
const SUB: u64 = 1 << SUB_BITS;
/// Largest value a histogram holds: 2^62 ns, about 146 years. Larger values (which no run
/// can reach: its clock stops at its work caps long before) are counted as `clamped` and
/// held at this value. Buckets are only allocated up to the largest value seen, so the wide
/// range costs nothing until it is used.
pub const MAX_NS: u64 = 1 << 62;

/// A log-linear histogram of durations in seconds, with 0.05 % relative resolution.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    /// Sum of the values in whole nanoseconds: exact, so the mean does not depend on the
    /// order in which values arrived.
    sum_ns: u128,
    /// Measurements larger than [`MAX_NS`], held at it.
    clamped: u64,
}

impl Histogram {
    pub fn new() -> Histogram {
        Histogram::default()
    }

    /// Adds `weight` measurements of `v` seconds. Negative or non-finite values are ignored.
    #[inline]
    pub fn push_n(&mut self, v: f64, weight: u64) {
        // One pair of comparisons turns away negatives, NaN and infinities (and keeps -0.0).
        if weight == 0 || !(0.0..f64::INFINITY).contains(&v) {
            return;
        }
        let ns = to_ns(v);
        if ns == MAX_NS {
            self.clamped += weight;
        }
        match self.counts.get_mut(index_ns(ns)) {
            Some(c) => *c += weight,
            None => self.grow_and_count(index_ns(ns), weight),
        }
        self.total += weight;
        self.sum_ns += ns as u128 * weight as u128;
    }

    /// The rare first value in a bucket past the end: out of line, so the common path above
    /// stays small enough to inline into the simulator's loops.
    #[cold]
    #[inline(never)]
    fn grow_and_count(&mut self, i: usize, weight: u64) {
        self.counts.resize(i + 1, 0);
        self.counts[i] += weight;
    }

    pub fn push(&mut self, v: f64) {
        self.push_n(v, 1);
    }

    /// Measurements at or past the top of the range ([`MAX_NS`]), held there: when not zero,
    /// the top percentiles and the maximum are lower bounds.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// Total weight.
    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The mean of what was pushed (exact to the nanosecond).
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.total as f64 * 1e-9
        }
    }

    /// The buckets as weighted samples (each at its bucket's midpoint), in increasing order.
    pub fn to_samples(&self) -> Samples {
        let mut s = Samples::new();
        for (i, &c) in self.counts.iter().enumerate() {
            if c > 0 {
                s.push_n(value(i), c);
            }
        }
        s
    }

    /// Count, mean (to the nanosecond) and percentiles (to the bucket resolution).
    pub fn summary(&self) -> Summary {
        let mut s = self.to_samples().summary();
        s.mean = self.mean();
        s
    }

    /// The nearest-rank quantile, to the bucket resolution.
    pub fn quantile(&self, q: f64) -> f64 {
        self.to_samples().quantile(q)
    }

    /// The nearest-rank quantiles at `qs` (in increasing order), in one pass over the
    /// buckets: the same values as [`Histogram::quantile`] at each.
    pub fn quantiles(&self, qs: &[f64]) -> Vec<f64> {
        if self.total == 0 {
            return vec![0.0; qs.len()];
        }
        let mut out = Vec::with_capacity(qs.len());
        let mut seen = 0u64;
        let mut buckets = self.counts.iter().enumerate().filter(|(_, &c)| c > 0);
        let mut current = 0.0;
        for &q in qs {
            let rank = crate::stats::rank(q, self.total);
            while seen < rank {
                match buckets.next() {
                    Some((i, &c)) => {
                        seen += c;
                        current = value(i);
                    }
                    None => break,
                }
            }
            out.push(current);
        }
        out
    }

    /// Fraction of the measurements at or below `v` (to the bucket resolution).
    pub fn fraction_at_or_below(&self, v: f64) -> f64 {
        if self.total == 0 || !v.is_finite() {
            return 0.0;
        }
        if v < 0.0 {
            return 0.0;
        }
        let last = index(v);
        let n: u64 = self.counts.iter().take(last + 1).sum();
        n as f64 / self.total as f64
    }

    pub fn merge(&mut self, other: &Histogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.sum_ns += other.sum_ns;
        self.clamped += other.clamped;
    }
}

/// Whole nanoseconds in `v` seconds (non-negative, capped at [`MAX_NS`]).
pub fn to_ns(v: f64) -> u64 {
    // Rounding half away from zero, without a call to a software `round`: the truncation and
    // the fraction it leaves are exact (above 2^52 every f64 is a whole number), so this is
    // `libm::round`'s result (rounding and clamping to an integer bound commute). NaN gives 0
    // either way. Through i64, which converts in one instruction each way (x is at most 2^62).
    let x = (v * 1e9).clamp(0.0, MAX_NS as f64);
    let whole = x as i64;
    (whole + (x - whole as f64 >= 0.5) as i64) as u64
}

fn index(v: f64) -> usize {
    index_ns(to_ns(v))
}

fn index_ns(ns: u64) -> usize {
    if ns < SUB {
        return ns as usize;
    }
    let e = 63 - ns.leading_zeros();
    let shift = e - SUB_BITS;
    let top = ns >> shift;
    (shift as u64 * SUB + top) as usize
}

fn value(i: usize) -> f64 {
    let i = i as u64;
    if i < SUB {
        return i as f64 * 1e-9;
    }
    let shift = (i / SUB - 1) as u32;
    let top = i - shift as u64 * SUB;
    // The middle of the bucket [top << shift, (top + 1) << shift).
    let lo = (top << shift) as f64;
    let width = (1u64 << shift) as f64;
    (lo + (width - 1.0) / 2.0) * 1e-9
}

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    /// The tenant's token budget was spent (429 with Retry-After).
    Quota,
    /// The fleet was saturated and the overflow action sheds (429).
    Shed,
    /// No replica was ready to take it (503).
    NoReplica,
    /// The gateway's queue was full, or every replica held as many requests as the gateway
    /// lets it (429).
    GatewayFull,
}

/// Where a spilled request went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpillTarget {
    Pool(usize),
    Hosted,
}

/// How a request ended. Every request that arrives ends as exactly one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Completed,
    Rejected {
        reason: RejectReason,
        retry_after_s: u32,
    },
    Spilled(SpillTarget),
    /// The client gave up waiting for a first token (see `clients.timeout_s`).
    TimedOut,
    /// The client closed the connection before its reply ended (see
    /// `clients.abandon_fraction`), with or without a first token.
    Abandoned,
    /// The replica serving it failed after the client had part of its reply (the stream
    /// ended with an error event), or the gateway's retries ran out.
    Failed,
    InFlight,
}

/// Everything the fleet measured about one request. Times are seconds of simulated time;
/// hops not reached are zero.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// Arrival order, from 0.
    pub seq: u64,
    pub tenant: u32,
    pub region: u32,
    pub streaming: bool,
    pub prompt_tokens: u32,
    pub output_tokens: u32,
    pub outcome: Outcome,
    /// Global index of the replica that served it (`None`: no replica).
    pub replica: Option<usize>,
    /// Client sends.
    pub sent: f64,
    /// Gateway receives.
    pub gateway_in: f64,
    /// Engine receives (after routing and the connection).
    pub engine_in: f64,
    /// The engine samples the first token.
    pub first_token: f64,
    /// The gateway writes the first byte of the reply.
    pub first_byte_written: f64,
    /// The gateway writes the last byte (the stream closes).
    pub last_byte_written: f64,
    /// The first byte reaches the client.
    pub first_byte_at_client: f64,
    /// The last byte reaches the client.
    pub last_byte_at_client: f64,
    pub hops: Hops,
    /// Prompt tokens the serving replica already had cached when the request was routed.
    pub cached_prefix_tokens: u32,
    /// Its way through a disaggregated fleet's pools (`None` on one replica).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<SplitPath>,
}

/// A request's way through a disaggregated fleet: its prefill replica, the move of its KV
/// cache, and its decode replica. Times are seconds of simulated time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SplitPath {
    /// Global indices of its prefill and decode replicas.
    pub prefill_replica: usize,
    pub decode_replica: usize,
    /// The prefill replica first schedules it, and finishes its prompt.
    pub prefill_admitted: f64,
    pub prefill_done: f64,
    /// Both ends' links are free and the move starts; the KV cache is on the decode replica.
    pub transfer_start: f64,
    pub kv_arrived: f64,
    /// The decode replica first schedules it.
    pub decode_admitted: f64,
    /// Bytes of KV cache moved.
    pub kv_bytes: f64,
}

/// The time one request spent in each hop between the gateway and the engine, and back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Hops {
    pub auth: f64,
    pub tokenize: f64,
    pub quota: f64,
    /// Waiting for and being served by the router (its fixed delay included).
    pub router: f64,
    /// Taking a connection to the replica (zero when warm).
    pub connect: f64,
    /// Engine to gateway for the first token.
    pub relay: f64,
}

impl Hops {
    pub fn total(&self) -> f64 {
        self.auth + self.tokenize + self.quota + self.router + self.connect + self.relay
    }
}

impl RequestRecord {
    /// Engine TTFT: engine receives to first token sampled.
    pub fn engine_ttft(&self) -> f64 {
        self.first_token - self.engine_in
    }

    /// Server TTFT: gateway receives to first byte written.
    pub fn server_ttft(&self) -> f64 {
        self.first_byte_written - self.gateway_in
    }

    /// User TTFT: client sends to first byte at the client.
    pub fn user_ttft(&self) -> f64 {
        self.first_byte_at_client - self.sent
    }

    /// End to end as the user sees it.
    pub fn e2e(&self) -> f64 {
        self.last_byte_at_client - self.sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_keep_values_within_a_twentieth_of_a_percent() {
        for v in [0.0, 3e-7, 1e-6, 0.0083, 0.02, 1.04, 123.4, 900.0] {
            let got = value(index(v));
            assert!((got - v).abs() <= v * 5e-4 + 1e-9, "{v} came back as {got}");
        }
        let mut idx: Vec<usize> = (1..2_000).map(|k| index(k as f64 * 1.37e-4)).collect();
        let sorted = idx.clone();
        idx.sort();
        assert_eq!(idx, sorted, "the index grows with the value");
    }

    #[test]
    fn quantiles_in_one_pass_equal_quantiles_one_by_one() {
        let mut h = Histogram::new();
        for k in 0..5_000u64 {
            h.push_n((k % 97) as f64 * 1.3e-3 + (k % 7) as f64 * 1e-6, 1 + k % 5);
        }
        let qs = crate::fleet::CDF_QUANTILES;
        let all = h.quantiles(&qs);
        for (q, v) in qs.iter().zip(all) {
            assert_eq!(v, h.quantile(*q), "q = {q}");
        }
        assert_eq!(Histogram::new().quantiles(&[0.5, 1.0]), vec![0.0, 0.0]);
    }

    #[test]
    fn summaries_come_from_weighted_buckets() {
        let mut h = Histogram::new();
        h.push_n(0.010, 90);
        h.push_n(0.200, 10);
        h.push(f64::NAN);
        h.push(-1.0);
        let s = h.summary();
        assert_eq!(s.count, 100);
        assert!((s.mean - 0.029).abs() < 1e-12);
        assert!((s.p50 - 0.010).abs() < 1e-5 && (s.p99 - 0.200).abs() < 1e-4);
        assert!((h.fraction_at_or_below(0.05) - 0.9).abs() < 1e-12);
        let mut m = Histogram::new();
        m.merge(&h);
        m.merge(&h);
        assert_eq!(m.len(), 200);
        assert_eq!(Histogram::new().summary(), Summary::default());
    }
}
