//! Percentiles and summaries of simulated measurements.
//!
//! [`Samples`] keeps every measurement as a (value, weight) pair, so percentiles are exact
//! (nearest rank) rather than estimated from a sketch. A run of identical values, such as the
//! inter-token latency of every sequence in one engine step, is one pair: adding it is O(1).

use serde::{Deserialize, Serialize};

/// Exact percentiles over weighted samples (value, weight). Adding a run of identical values is O(1).
///
/// Measurements are stored in fixed-size chunks, so a list of millions never reallocates and
/// copies itself as it grows; the chunks are joined once, when a percentile is first needed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Samples {
    /// Full chunks, in push order.
    chunks: Vec<Vec<(f64, u64)>>,
    /// The chunk being filled (after `consolidate`, everything).
    items: Vec<(f64, u64)>,
    total: u64,
    sum: f64,
    sorted: bool,
}

/// Measurements per chunk.
const CHUNK: usize = 1 << 15;

/// The usual figures of a latency distribution. All zeros with `count` 0 when empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Samples {
    pub fn new() -> Self {
        Samples {
            chunks: Vec::new(),
            items: Vec::new(),
            total: 0,
            sum: 0.0,
            sorted: true,
        }
    }

    /// Adds one measurement. Non-finite values are ignored, so one bad figure cannot poison a
    /// summary.
    pub fn push(&mut self, v: f64) {
        self.push_n(v, 1);
    }

    /// Adds `weight` measurements of the same value in O(1).
    pub fn push_n(&mut self, v: f64, weight: u64) {
        if weight == 0 || !v.is_finite() {
            return;
        }
        if let Some(last) = self.items.last_mut() {
            if last.0 == v {
                last.1 += weight;
                self.total += weight;
                self.sum += v * weight as f64;
                return;
            }
            if self.sorted && v < last.0 {
                self.sorted = false;
            }
        }
        if self.items.len() == CHUNK {
            let full = std::mem::replace(&mut self.items, Vec::with_capacity(CHUNK));
            self.chunks.push(full);
        }
        self.items.push((v, weight));
        self.total += weight;
        self.sum += v * weight as f64;
    }

    /// Total weight: the number of measurements.
    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Mean of the measurements; zero when empty.
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum / self.total as f64
        }
    }

    /// Count, mean, p50/p90/p95/p99 and maximum. Sorts lazily; empty gives all zeros.
    ///
    /// A long unsorted list is not sorted: the percentiles are found by bucketing the
    /// measurements on their bits (see `selected_summary`) in a few linear passes, which is
    /// several times faster for the hundreds of thousands of per-step latencies of a long run.
    /// The figures are the same exact nearest-rank values.
    pub fn summary(&mut self) -> Summary {
        if self.total == 0 {
            return Summary::default();
        }
        if !self.sorted && self.stored() > SELECT_MIN {
            return self.selected_summary();
        }
        self.sort();
        Summary {
            count: self.total,
            mean: self.mean(),
            p50: self.quantile(0.50),
            p90: self.quantile(0.90),
            p95: self.quantile(0.95),
            p99: self.quantile(0.99),
            max: self.items.last().map_or(0.0, |x| x.0),
        }
    }

    /// The nearest-rank quantile: the smallest value with at least `ceil(q x n)` measurements at
    /// or below it. `q` is clamped to [0, 1]; empty gives zero.
    pub fn quantile(&mut self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        self.consolidate();
        self.sort();
        let rank = rank(q, self.total);
        let mut seen = 0u64;
        for &(v, w) in &self.items {
            seen += w;
            if seen >= rank {
                return v;
            }
        }
        self.items.last().map_or(0.0, |x| x.0)
    }

    /// Adds every measurement of `other`.
    pub fn merge(&mut self, other: &Samples) {
        for chunk in other.chunks.iter().chain(std::iter::once(&other.items)) {
            for &(v, w) in chunk {
                self.push_n(v, w);
            }
        }
    }

    /// The summary of a copy, leaving `self` untouched: a long unsorted list is summarised in
    /// place (nothing is copied); otherwise one copy of the measurements instead of a clone
    /// followed by joining its chunks.
    pub fn summary_of_copy(&self) -> Summary {
        if self.total == 0 {
            return Summary::default();
        }
        if !self.sorted && self.stored() > SELECT_MIN {
            return self.selected_summary();
        }
        let mut copy = Samples {
            chunks: Vec::new(),
            items: Vec::with_capacity(self.stored()),
            total: self.total,
            sum: self.sum,
            sorted: self.sorted,
        };
        for chunk in self.chunks.iter().chain(std::iter::once(&self.items)) {
            copy.items.extend_from_slice(chunk);
        }
        copy.summary()
    }

    /// Stored (value, weight) pairs, over all chunks.
    fn stored(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum::<usize>() + self.items.len()
    }

    /// The stored pairs as slices, in push order.
    fn parts(&self) -> Vec<&[(f64, u64)]> {
        self.chunks
            .iter()
            .chain(std::iter::once(&self.items))
            .map(Vec::as_slice)
            .collect()
    }

    /// The summary of a non-empty list without sorting or moving it: the four percentiles
    /// are exact nearest-rank values found by [`select_ranks`].
    fn selected_summary(&self) -> Summary {
        let total = self.total;
        let ranks = [0.50, 0.90, 0.95, 0.99].map(|p| rank(p, total));
        let mut q = [0.0f64; 4];
        let parts = self.parts();
        select_ranks(&parts, &ranks, &mut q);
        let max = parts
            .iter()
            .flat_map(|p| p.iter())
            .map(|x| x.0)
            .fold(f64::NEG_INFINITY, f64::max);
        Summary {
            count: total,
            mean: self.mean(),
            p50: q[0],
            p90: q[1],
            p95: q[2],
            p99: q[3],
            max,
        }
    }

    /// Joins the chunks into `items`.
    fn consolidate(&mut self) {
        if self.chunks.is_empty() {
            return;
        }
        let mut all = Vec::with_capacity(self.chunks.len() * CHUNK + self.items.len());
        for chunk in self.chunks.drain(..) {
            all.extend_from_slice(&chunk);
        }
        all.extend_from_slice(&self.items);
        self.items = all;
    }

    /// Sorts by value and merges equal neighbours. Values are finite, so the order is total.
    fn sort(&mut self) {
        self.consolidate();
        if self.sorted {
            return;
        }
        self.items.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut out: Vec<(f64, u64)> = Vec::with_capacity(self.items.len());
        for &(v, w) in &self.items {
            match out.last_mut() {
                Some(last) if last.0 == v => last.1 += w,
                _ => out.push((v, w)),
            }
        }
        self.items = out;
        self.sorted = true;
    }
}

/// Above this many items `summary` selects instead of sorting.
const SELECT_MIN: usize = 4096;

/// The 1-based nearest rank of quantile `q` among `total` measurements.
pub(crate) fn rank(q: f64, total: u64) -> u64 {
    let q = if q.is_nan() { 0.5 } else { q.clamp(0.0, 1.0) };
    ((q * total as f64).ceil() as u64).clamp(1, total)
}

/// Buckets per pass of [`select_ranks`].
const BUCKETS: usize = 4096;

/// An order-preserving key of a finite value: keys compare as the values do under `<`, with
/// both zeros on one key (as `==` sees them).
fn order_key(v: f64) -> u64 {
    let b = if v == 0.0 { 0 } else { v.to_bits() };
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// Writes into `out[k]` the value with nearest rank `ranks[k]` (1-based, counting weights, at
/// most the total weight) among `items`; `ranks` is non-decreasing. Exact: one pass finds
/// the key range, one builds a weighted histogram of the keys over [`BUCKETS`] equal-width
/// bucket ranges, and each wanted rank's bucket is gathered and sorted (or, when still
/// large, bucketed again over its own narrower range). Values that are equal under `==`
/// share a bucket, so the answer is the same value sorting would find.
fn select_ranks(parts: &[&[(f64, u64)]], ranks: &[u64], out: &mut [f64]) {
    let (mut lo, mut hi, mut n) = (u64::MAX, 0u64, 0usize);
    for part in parts {
        for &(v, _) in part.iter() {
            let k = order_key(v);
            lo = lo.min(k);
            hi = hi.max(k);
        }
        n += part.len();
    }
    if n == 0 || ranks.is_empty() {
        return;
    }
    if n <= BUCKETS || lo == hi {
        let mut all: Vec<(f64, u64)> = parts.concat();
        all.sort_unstable_by_key(|x| order_key(x.0));
        let mut seen = 0u64;
        let mut j = 0;
        for (slot, &r) in out.iter_mut().zip(ranks) {
            while j < all.len() {
                if seen + all[j].1 >= r {
                    break;
                }
                seen += all[j].1;
                j += 1;
            }
            *slot = all.get(j).or(all.last()).map_or(0.0, |x| x.0);
        }
        return;
    }
    let span = hi - lo;
    let mut shift = 0u32;
    while span >> shift >= BUCKETS as u64 {
        shift += 1;
    }
    let bucket = |v: f64| ((order_key(v) - lo) >> shift) as usize;
    let mut hist = vec![0u64; BUCKETS];
    for part in parts {
        for &(v, w) in part.iter() {
            hist[bucket(v)] += w;
        }
    }
    // Each rank's bucket and its ranks within that bucket (ranks sharing a bucket go together).
    let mut targets: Vec<(usize, usize, usize, u64)> = Vec::new();
    let mut k = 0;
    let mut below = 0u64;
    for (b, &w) in hist.iter().enumerate() {
        if k == ranks.len() {
            break;
        }
        if below + w >= ranks[k] {
            let first = k;
            while k < ranks.len() && ranks[k] <= below + w {
                k += 1;
            }
            targets.push((b, first, k, below));
        }
        below += w;
    }
    // One more pass gathers the members of every wanted bucket.
    let mut members: Vec<Vec<(f64, u64)>> = vec![Vec::new(); targets.len()];
    for part in parts {
        for &(v, w) in part.iter() {
            let b = bucket(v);
            if let Some(t) = targets.iter().position(|t| t.0 == b) {
                members[t].push((v, w));
            }
        }
    }
    for (&(_, first, end, below), m) in targets.iter().zip(&members) {
        let local: Vec<u64> = ranks[first..end].iter().map(|&r| r - below).collect();
        select_ranks(&[m.as_slice()], &local, &mut out[first..end]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks nearest-rank quantiles against a hand-computed table.
    fn check(values: &[(f64, u64)], expect: &[(f64, f64)]) {
        let mut s = Samples::new();
        for &(v, w) in values {
            s.push_n(v, w);
        }
        for &(q, want) in expect {
            assert_eq!(s.quantile(q), want, "q = {q} over {values:?}");
        }
    }

    #[test]
    fn nearest_rank_quantiles() {
        let hundred: Vec<(f64, u64)> = (1..=100).rev().map(|i| (i as f64, 1)).collect();
        check(
            &hundred,
            &[
                (0.5, 50.0),
                (0.9, 90.0),
                (0.99, 99.0),
                (1.0, 100.0),
                (0.0, 1.0),
            ],
        );
        check(
            &[(1.0, 9), (10.0, 1)],
            &[(0.9, 1.0), (0.91, 10.0), (0.5, 1.0)],
        );
        check(&[(3.0, 1)], &[(0.5, 3.0), (0.99, 3.0)]);
    }

    #[test]
    fn summary_of_empty_is_zero_and_weights_count() {
        let mut s = Samples::new();
        assert_eq!(s.summary(), Summary::default());
        s.push_n(2.0, 3);
        s.push(f64::NAN);
        s.push(4.0);
        let m = s.summary();
        assert_eq!((m.count, m.mean, m.max, m.p50), (4, 2.5, 4.0, 2.0));
    }

    #[test]
    fn selection_gives_the_same_summary_as_sorting() {
        let mut x = 0x1234_5678_u64;
        let mut big = Samples::new();
        for i in 0..50_000u64 {
            x = crate::workload::mix64(x);
            // Many repeated values and uneven weights, as step latencies have.
            big.push_n((x % 5_000) as f64 / 7.0, 1 + i % 5);
        }
        let mut sorted = big.clone();
        sorted.sort();
        let fast = big.summary();
        assert!(!big.sorted, "the long list is selected, not sorted");
        let slow = sorted.summary();
        assert_eq!(fast, slow);
        for q in [0.0, 0.001, 0.5, 0.77, 0.999, 1.0] {
            let mut got = [0.0];
            select_ranks(&big.parts(), &[rank(q, big.total)], &mut got);
            assert_eq!(got[0], sorted.quantile(q), "q = {q}");
        }
    }

    #[test]
    fn selection_handles_clusters_signs_and_ties() {
        // Values packed into one bucket of the first pass, negatives, zeros and one outlier.
        let mut x = 5u64;
        let mut values = Vec::new();
        for i in 0..30_000u64 {
            x = crate::workload::mix64(x);
            let v = match i % 4 {
                0 => 0.010 + (x % 1000) as f64 * 1e-12,
                1 => -((x % 300) as f64),
                2 => 0.0,
                _ => (x % 7) as f64,
            };
            values.push((v, 1 + x % 3));
        }
        values.push((1e300, 1));
        let mut s = Samples::new();
        for &(v, w) in &values {
            s.push_n(v, w);
        }
        let mut sorted = s.clone();
        sorted.sort();
        assert_eq!(s.summary_of_copy(), sorted.summary());
        assert_eq!(s.summary(), sorted.summary());
    }

    #[test]
    fn chunked_storage_gives_the_same_figures() {
        let mut x = 99u64;
        let mut long = Samples::new();
        let mut values = Vec::new();
        for _ in 0..(3 * CHUNK + 17) {
            x = crate::workload::mix64(x);
            let v = (x % 10_007) as f64;
            long.push(v);
            values.push(v);
        }
        assert_eq!(long.chunks.len(), 3);
        let copy = long.summary_of_copy();
        assert_eq!(long.chunks.len(), 3, "the copy leaves the original alone");
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let at = |q: f64| values[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        assert_eq!(copy.p50, at(0.5));
        assert_eq!(copy.p99, at(0.99));
        assert_eq!(copy.max, values[n - 1]);
        assert_eq!(long.summary(), copy);
        assert_eq!(long.quantile(0.9), at(0.9));
    }

    #[test]
    fn merge_equals_pushing_everything_into_one() {
        let mut a = Samples::new();
        let mut b = Samples::new();
        let mut all = Samples::new();
        for i in 0..50u32 {
            let v = ((i * 37) % 11) as f64;
            if i % 2 == 0 {
                a.push(v);
            } else {
                b.push(v);
            }
            all.push(v);
        }
        a.merge(&b);
        assert_eq!(a.summary(), all.summary());
    }
}
