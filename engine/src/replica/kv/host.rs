//! The host-memory tier of the prefix cache (vLLM's CPU KV offloading, `--kv-offloading-size`):
//! a cached block the GPU pool evicts keeps its content in host memory, up to the tier's
//! capacity, least recently used dropped first. A later prompt whose prefix misses on the GPU
//! may find the next blocks here and have them copied back over PCIe instead of computed
//! again (the scheduler compares the two with the cost model, per request).
//!
//! Only content is kept here, by its chained hash: equal hashes mean equal prefixes (as on
//! the GPU), so a hash is all a lookup needs. Prompts nobody else can hit (private blocks,
//! see the pool) never come here: only their own request could use them, after a preemption,
//! and it then computes again what the GPU has evicted (vLLM would copy it back; here that
//! case, a preempted request of a workload without shared content, recomputes).

use std::collections::{HashMap, VecDeque};

/// The host tier of one replica.
#[derive(Clone, Debug)]
pub(crate) struct HostTier {
    /// Blocks it holds at most.
    capacity: u32,
    /// A counter of uses, for LRU order.
    clock: u64,
    /// Each block's hash and the clock of its last use.
    held: HashMap<u64, u64>,
    /// (hash, clock) of every use, oldest first; an entry whose clock is not its block's in
    /// `held` is stale.
    order: VecDeque<(u64, u64)>,
    /// Blocks written to it, and dropped from it for room.
    pub(crate) stored: u64,
    pub(crate) dropped: u64,
}

impl HostTier {
    pub(crate) fn new(capacity: u32) -> HostTier {
        HostTier {
            capacity,
            clock: 0,
            held: HashMap::new(),
            order: VecDeque::new(),
            stored: 0,
            dropped: 0,
        }
    }

    /// Keeps the block with content `hash` (or marks it used, when it is already here),
    /// dropping the least recently used ones past the capacity.
    pub(crate) fn put(&mut self, hash: u64) {
        if self.capacity == 0 {
            return;
        }
        self.clock += 1;
        if self.held.insert(hash, self.clock).is_none() {
            self.stored += 1;
        }
        self.order.push_back((hash, self.clock));
        while self.held.len() > self.capacity as usize {
            let Some((h, c)) = self.order.pop_front() else {
                break;
            };
            if self.held.get(&h) == Some(&c) {
                self.held.remove(&h);
                self.dropped += 1;
            }
        }
        // Stale entries are skipped when they reach the front; keep them from piling up.
        if self.order.len() > 2 * self.held.len() + 64 {
            let held = &self.held;
            self.order.retain(|(h, c)| held.get(h) == Some(c));
        }
    }

    /// Whether it holds the content `hash`.
    pub(crate) fn holds(&self, hash: u64) -> bool {
        self.held.contains_key(&hash)
    }

    /// Blocks it holds.
    pub(crate) fn len(&self) -> u32 {
        self.held.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_block_goes_first() {
        let mut h = HostTier::new(3);
        for x in [1, 2, 3] {
            h.put(x);
        }
        h.put(1); // used again: 2 is now the oldest
        h.put(4);
        assert!(h.holds(1) && h.holds(3) && h.holds(4) && !h.holds(2));
        assert_eq!((h.len(), h.stored, h.dropped), (3, 4, 1));
        for x in 0..1_000 {
            h.put(100 + x % 5);
        }
        assert_eq!(h.len(), 3);
        assert!(h.order.len() <= 2 * 3 + 64 + 1);
        let mut none = HostTier::new(0);
        none.put(7);
        assert!(!none.holds(7));
    }
}
