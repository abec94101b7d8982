//! Percentiles and summaries of simulated measurements.
//!
//! [`Samples`] keeps every measurement as a (value, weight) pair, so percentiles are exact
//! (nearest rank) rather than estimated from a sketch. A run of identical values, such as the
//! inter-token latency of every sequence in one engine step, is one pair: adding it is O(1).

use serde::Serialize;

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
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
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
    /// A long unsorted list is not sorted: each percentile is found by a weighted quickselect
    /// in O(n), which is several times faster for the hundreds of thousands of per-step
    /// latencies of a long run. The figures are the same exact nearest-rank values.
    pub fn summary(&mut self) -> Summary {
        if self.total == 0 {
            return Summary::default();
        }
        self.consolidate();
        if !self.sorted && self.items.len() > SELECT_MIN {
            let max = self
                .items
                .iter()
                .map(|x| x.0)
                .fold(f64::NEG_INFINITY, f64::max);
            let total = self.total;
            let mean = self.mean();
            // Increasing ranks: each selection leaves everything at or below its answer in
            // front, so the next one searches only the rest.
            let mut q = [0.0f64; 4];
            let (mut base, mut below, mut last) = (0usize, 0u64, 0.0);
            for (slot, p) in q.iter_mut().zip([0.50, 0.90, 0.95, 0.99]) {
                let r = rank(p, total);
                if r > below {
                    let (v, end, w) = select_weighted(&mut self.items[base..], r - below);
                    base += end;
                    below += w;
                    last = v;
                }
                *slot = last;
            }
            return Summary {
                count: total,
                mean,
                p50: q[0],
                p90: q[1],
                p95: q[2],
                p99: q[3],
                max,
            };
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

    /// The summary of a copy, leaving `self` untouched: one copy of the measurements instead of
    /// a clone followed by joining its chunks.
    pub fn summary_of_copy(&self) -> Summary {
        let mut copy = Samples {
            chunks: Vec::new(),
            items: Vec::with_capacity(self.chunks.len() * CHUNK + self.items.len()),
            total: self.total,
            sum: self.sum,
            sorted: self.sorted,
        };
        for chunk in self.chunks.iter().chain(std::iter::once(&self.items)) {
            copy.items.extend_from_slice(chunk);
        }
        copy.summary()
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
fn rank(q: f64, total: u64) -> u64 {
    let q = if q.is_nan() { 0.5 } else { q.clamp(0.0, 1.0) };
    ((q * total as f64).ceil() as u64).clamp(1, total)
}

/// The value with nearest rank `rank` (1-based, counting weights) among `items`, by a
/// three-way quickselect with a median-of-three pivot drawn from deterministic pseudo-random
/// positions. Reorders `items` so that the first `end` items are all at or below the answer
/// and weigh `w >= rank` together; returns (answer, end, w). A range that stops shrinking
/// quickly is sorted instead, so the worst case stays O(n log n).
fn select_weighted(items: &mut [(f64, u64)], mut rank: u64) -> (f64, usize, u64) {
    let (mut lo, mut hi) = (0usize, items.len());
    // Weight of items[..lo].
    let mut left = 0u64;
    let mut rounds = 0u32;
    while hi > lo {
        rounds += 1;
        if hi - lo <= 32 || rounds > 64 {
            let part = &mut items[lo..hi];
            part.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
            let mut seen = 0u64;
            for (j, &(v, w)) in part.iter().enumerate() {
                seen += w;
                if seen >= rank {
                    return (v, lo + j + 1, left + seen);
                }
            }
            let v = part.last().map_or(0.0, |x| x.0);
            return (v, hi, left + seen);
        }
        // Partitions leave the data in patterns that make fixed positions poor pivots.
        let n = (hi - lo) as u64;
        let r = crate::workload::mix64(rounds as u64 ^ n);
        let at = |k: u32| lo + ((r >> (k * 21)) % n) as usize;
        let (a, b, c) = (items[at(0)].0, items[at(1)].0, items[at(2)].0);
        let pivot = if (a <= b) == (b <= c) {
            b
        } else if (b <= a) == (a <= c) {
            a
        } else {
            c
        };
        // Dutch national flag: [lo, lt) < pivot, [lt, i) == pivot, (gt, hi) > pivot.
        let (mut lt, mut i, mut gt) = (lo, lo, hi);
        let (mut w_lt, mut w_eq) = (0u64, 0u64);
        while i < gt {
            let v = items[i].0;
            if v < pivot {
                w_lt += items[i].1;
                items.swap(lt, i);
                lt += 1;
                i += 1;
            } else if v > pivot {
                gt -= 1;
                items.swap(i, gt);
            } else {
                w_eq += items[i].1;
                i += 1;
            }
        }
        if rank <= w_lt {
            hi = lt;
        } else if rank <= w_lt + w_eq {
            return (pivot, gt, left + w_lt + w_eq);
        } else {
            rank -= w_lt + w_eq;
            left += w_lt + w_eq;
            lo = gt;
        }
    }
    (0.0, lo, left)
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
            let mut b = big.clone();
            let (v, end, w) = select_weighted(&mut b.items, rank(q, b.total));
            assert_eq!(v, sorted.quantile(q));
            assert!(b.items[..end].iter().all(|x| x.0 <= v));
            assert_eq!(w, b.items[..end].iter().map(|x| x.1).sum::<u64>());
            assert!(w >= rank(q, b.total));
        }
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
