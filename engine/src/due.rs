//! [`Due`]: an item due at a time, ordered so that a `BinaryHeap` (a max-heap) pops the
//! earliest first. Ties on time go to the item scheduled first (the lower sequence number), so
//! the order never depends on the heap's internals: part of "same seed, same run".

use std::cmp::Ordering;

/// `item`, due at time `t`; `seq` is its place in scheduling order, to break ties.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Due<T> {
    pub t: f64,
    pub seq: u64,
    pub item: T,
}

impl<T> PartialEq for Due<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<T> Eq for Due<T> {}

impl<T> PartialOrd for Due<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Due<T> {
    /// Reversed, so that the max-heap pops the earliest (time, sequence) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .t
            .total_cmp(&self.t)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

#[cfg(test)]
mod tests {
    use super::Due;
    use std::collections::BinaryHeap;

    #[test]
    fn the_heap_pops_earliest_first_and_ties_in_scheduling_order() {
        let mut h = BinaryHeap::new();
        for (seq, (t, name)) in [(2.0, "c"), (1.0, "a"), (2.0, "d"), (1.0, "b"), (0.5, "z")]
            .into_iter()
            .enumerate()
        {
            h.push(Due {
                t,
                seq: seq as u64,
                item: name,
            });
        }
        let order: Vec<&str> = std::iter::from_fn(|| h.pop().map(|d| d.item)).collect();
        assert_eq!(order, ["z", "a", "b", "c", "d"]);
    }
}
