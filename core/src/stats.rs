//! Percentiles and summaries of simulated measurements.
//!
//! [`Samples`] keeps every measurement as a (value, weight) pair, so percentiles are exact
//! (nearest rank) rather than estimated from a sketch. A run of identical values, such as the
//! inter-token latency of every sequence in one engine step, is one pair: adding it is O(1).

use serde::Serialize;

/// Exact percentiles over weighted samples (value, weight). Adding a run of identical values is O(1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Samples {
    items: Vec<(f64, u64)>,
    total: u64,
    sum: f64,
    sorted: bool,
}

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
    pub fn summary(&mut self) -> Summary {
        if self.total == 0 {
            return Summary::default();
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
        self.sort();
        let q = if q.is_nan() { 0.5 } else { q.clamp(0.0, 1.0) };
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
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
        for &(v, w) in &other.items {
            self.push_n(v, w);
        }
    }

    /// Sorts by value and merges equal neighbours. Values are finite, so the order is total.
    fn sort(&mut self) {
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
