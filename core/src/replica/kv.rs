//! The paged KV cache: a pool of fixed-size blocks, a free queue in LRU order, and the prefix
//! cache's hash-to-block map.
//!
//! This mirrors vLLM V1's `vllm/v1/core/block_pool.py` (`BlockPool`, `FreeKVCacheBlockQueue`)
//! and `vllm/v1/core/kv_cache_utils.py` (`hash_block_tokens`):
//! - every block has a reference count; a block with count zero sits in the free queue;
//! - allocation pops from the front of the free queue; freeing appends to the back, so the
//!   least recently freed block is reused (and its cached content evicted) first;
//! - a full block of a prompt is registered under a hash chained over every token before it,
//!   so equal hashes mean equal prefixes; a hit on a free cached block takes it out of the
//!   middle of the queue (`touch`).
//!
//! Blocks never used yet are kept as a counter rather than a list, so a pool of millions of
//! blocks costs memory only for the blocks a run actually touches. vLLM's initial free queue
//! holds every block in id order, so handing out never-used blocks first, in id order, before
//! any freed block is the same order.

use crate::workload::{mix64, Prompt};

/// No block: the end of the free queue.
const NIL: u32 = u32::MAX;

/// The block pool of one replica.
#[derive(Clone, Debug)]
pub(crate) struct BlockPool {
    total: u32,
    /// Blocks `fresh_next..total` have never been allocated.
    fresh_next: u32,
    meta: Vec<BlockMeta>,
    head: u32,
    tail: u32,
    /// Blocks in the linked free queue (freed at least once, reference count zero).
    queued: u32,
    /// Prefix cache: chained block hash to the block holding that content.
    cached: HashIndex,
    /// Blocks taken out of the free pool so far (allocations and hits on free cached blocks).
    pub(crate) taken: u64,
    /// Blocks returned to the free pool so far (last reference dropped).
    pub(crate) returned: u64,
}

/// What a full recount of the pool found; see [`BlockPool::audit`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KvAudit {
    pub total: u32,
    /// Blocks with a reference count above zero.
    pub allocated: u32,
    /// Blocks with a reference count of zero (never used, or in the free queue).
    pub free: u32,
    /// Free blocks that still hold cached content a prefix hit could reuse.
    pub free_cached: u32,
    /// Sum of all reference counts.
    pub references: u64,
    /// Whether the free queue, the free counters and the hash map agree with each other.
    pub consistent: bool,
}

#[derive(Clone, Copy, Debug)]
struct BlockMeta {
    ref_cnt: u32,
    prev: u32,
    next: u32,
    hash: Option<u64>,
}

/// An open-addressing map from block hash to block id, for keys that are already well-mixed
/// 64-bit hashes: linear probing, one cache line per probe, backward-shift deletion. It is
/// only ever looked up by key; nothing iterates it in a way that affects results.
#[derive(Clone, Debug)]
pub(crate) struct HashIndex {
    /// (key, block); key 0 marks an empty slot.
    slots: Vec<(u64, u32)>,
    len: usize,
}

/// Stands in for a hash that happens to be zero (the empty-slot marker).
const ZERO_KEY: u64 = 0x9e37_79b9_7f4a_7c15;

impl HashIndex {
    fn new() -> HashIndex {
        HashIndex {
            slots: vec![(0, 0); 1024],
            len: 0,
        }
    }

    fn key(h: u64) -> u64 {
        if h == 0 {
            ZERO_KEY
        } else {
            h
        }
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    fn get(&self, h: u64) -> Option<u32> {
        let k = Self::key(h);
        let mask = self.mask();
        let mut i = k as usize & mask;
        loop {
            let (key, v) = self.slots[i];
            if key == k {
                return Some(v);
            }
            if key == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Inserts unless the key is present; returns whether it inserted.
    fn insert_if_vacant(&mut self, h: u64, v: u32) -> bool {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let k = Self::key(h);
        let mask = self.mask();
        let mut i = k as usize & mask;
        loop {
            let key = self.slots[i].0;
            if key == k {
                return false;
            }
            if key == 0 {
                self.slots[i] = (k, v);
                self.len += 1;
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    fn remove(&mut self, h: u64) -> Option<u32> {
        let k = Self::key(h);
        let mask = self.mask();
        let mut i = k as usize & mask;
        loop {
            let key = self.slots[i].0;
            if key == k {
                break;
            }
            if key == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
        let v = self.slots[i].1;
        // Backward-shift deletion: pull later members of the probe run into the hole.
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let key = self.slots[j].0;
            if key == 0 {
                break;
            }
            let home = key as usize & mask;
            let movable = if i <= j {
                home <= i || home > j
            } else {
                home <= i && home > j
            };
            if movable {
                self.slots[i] = self.slots[j];
                i = j;
            }
        }
        self.slots[i] = (0, 0);
        self.len -= 1;
        Some(v)
    }

    fn grow(&mut self) {
        let bigger = vec![(0, 0); self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        self.len = 0;
        for (k, v) in old {
            if k != 0 {
                self.insert_if_vacant(k, v);
            }
        }
    }

    fn entries(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.slots.iter().copied().filter(|e| e.0 != 0)
    }
}

impl BlockPool {
    pub(crate) fn new(total: u32) -> BlockPool {
        BlockPool {
            total,
            fresh_next: 0,
            meta: Vec::new(),
            head: NIL,
            tail: NIL,
            queued: 0,
            cached: HashIndex::new(),
            taken: 0,
            returned: 0,
        }
    }

    pub(crate) fn total(&self) -> u32 {
        self.total
    }

    /// Blocks that can be allocated now (never used, or free with or without cached content).
    pub(crate) fn num_free(&self) -> u32 {
        (self.total - self.fresh_next) + self.queued
    }

    pub(crate) fn num_used(&self) -> u32 {
        self.total - self.num_free()
    }

    /// Whether block `b` is free (reference count zero) and would be taken out of the queue by a hit.
    pub(crate) fn is_free(&self, b: u32) -> bool {
        self.meta.get(b as usize).is_some_and(|m| m.ref_cnt == 0)
    }

    /// The block cached under `hash`, if any.
    pub(crate) fn lookup(&self, hash: u64) -> Option<u32> {
        self.cached.get(hash)
    }

    /// Pops `n` blocks from the front of the free queue into `out`, evicting any cached content
    /// they hold. Returns false, changing nothing, when fewer than `n` are free.
    pub(crate) fn allocate(&mut self, n: u32, out: &mut Vec<u32>) -> bool {
        if n > self.num_free() {
            return false;
        }
        for _ in 0..n {
            let b = if self.fresh_next < self.total {
                let b = self.fresh_next;
                self.fresh_next += 1;
                self.meta.push(BlockMeta {
                    ref_cnt: 0,
                    prev: NIL,
                    next: NIL,
                    hash: None,
                });
                b
            } else {
                let b = self.head;
                self.unlink(b);
                if let Some(h) = self.meta[b as usize].hash.take() {
                    // Evict: the map points at this block (a block is only registered when
                    // its hash was vacant), so one removal does it.
                    if let Some(other) = self.cached.remove(h) {
                        if other != b {
                            self.cached.insert_if_vacant(h, other);
                        }
                    }
                }
                b
            };
            self.meta[b as usize].ref_cnt = 1;
            out.push(b);
        }
        self.taken += n as u64;
        true
    }

    /// Takes a reference to a cached block found by a prefix hit, removing it from the free queue
    /// if nobody held it.
    pub(crate) fn touch(&mut self, b: u32) {
        if self.meta[b as usize].ref_cnt == 0 {
            self.unlink(b);
            self.taken += 1;
        }
        self.meta[b as usize].ref_cnt += 1;
    }

    /// Drops one reference; a block nobody holds goes to the back of the free queue, keeping its
    /// cached content until it is reused.
    pub(crate) fn release(&mut self, b: u32) {
        let m = &mut self.meta[b as usize];
        if m.ref_cnt == 0 {
            return;
        }
        m.ref_cnt -= 1;
        if m.ref_cnt == 0 {
            self.push_back(b);
            self.returned += 1;
        }
    }

    /// Registers block `b` as holding the content with this chained hash, unless some block
    /// already does (then `b` stays uncached, as a duplicate would never be looked up).
    pub(crate) fn cache(&mut self, b: u32, hash: u64) {
        if self.meta[b as usize].hash.is_some() {
            return;
        }
        if self.cached.insert_if_vacant(hash, b) {
            self.meta[b as usize].hash = Some(hash);
        }
    }

    /// Recounts everything from scratch. O(pool); for tests and debugging.
    pub(crate) fn audit(&self) -> KvAudit {
        let mut a = KvAudit {
            total: self.total,
            ..KvAudit::default()
        };
        let used_meta = self.meta.len() as u32;
        for m in &self.meta {
            if m.ref_cnt > 0 {
                a.allocated += 1;
                a.references += m.ref_cnt as u64;
            } else if m.hash.is_some() {
                a.free_cached += 1;
            }
        }
        a.free = self.total - a.allocated;
        let mut walked = 0u32;
        let mut b = self.head;
        let mut ok = used_meta == self.fresh_next;
        while b != NIL && walked <= used_meta {
            ok &= self.meta[b as usize].ref_cnt == 0;
            walked += 1;
            b = self.meta[b as usize].next;
        }
        ok &= walked == self.queued;
        ok &= a.free == self.num_free();
        ok &= self.cached.entries().all(|(h, b)| {
            self.meta
                .get(b as usize)
                .is_some_and(|m| m.hash.map(HashIndex::key) == Some(h))
        });
        ok &= self.cached.len == self.meta.iter().filter(|m| m.hash.is_some()).count();
        a.consistent = ok;
        a
    }

    fn unlink(&mut self, b: u32) {
        let BlockMeta { prev, next, .. } = self.meta[b as usize];
        if prev == NIL {
            self.head = next;
        } else {
            self.meta[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.meta[next as usize].prev = prev;
        }
        let m = &mut self.meta[b as usize];
        m.prev = NIL;
        m.next = NIL;
        self.queued -= 1;
    }

    fn push_back(&mut self, b: u32) {
        let tail = self.tail;
        {
            let m = &mut self.meta[b as usize];
            m.prev = tail;
            m.next = NIL;
        }
        if tail == NIL {
            self.head = b;
        } else {
            self.meta[tail as usize].next = b;
        }
        self.tail = b;
        self.queued += 1;
    }
}

/// Seed of the hash chain (the "parent hash" of block 0).
const HASH_SEED: u64 = 0x6b76_5f63_6163_6865;

/// Appends the chained hash of every full block of `prompt` to `out`.
///
/// The hash of block `i` mixes the hash of block `i - 1` with the pieces of segments covering
/// tokens `[i b, (i + 1) b)`: each piece as (content, offset within its segment, length). Token
/// `j` of a segment is "token `j` of that content", so equal token runs give equal pieces.
/// Like vLLM's `hash_block_tokens`, the chain makes a block's hash depend on its whole prefix.
/// The walk is O(blocks + segments), never per token.
pub(crate) fn prompt_block_hashes(prompt: &Prompt, block_size: u32, out: &mut Vec<u64>) {
    let bs = block_size.max(1);
    let mut h = HASH_SEED;
    let mut filled = 0u32;
    for seg in &prompt.segments {
        let mut offset = 0u32;
        while offset < seg.len {
            let take = (seg.len - offset).min(bs - filled);
            // One mixing step per piece: the piece's content, offset and length enter together.
            let piece = seg.content ^ ((offset as u64) << 32 | take as u64).rotate_left(17);
            h = mix64(h.rotate_left(23) ^ piece);
            filled += take;
            offset += take;
            if filled == bs {
                out.push(h);
                filled = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Segment;

    fn hashes(segments: &[(u64, u32)]) -> Vec<u64> {
        let p = Prompt {
            segments: segments
                .iter()
                .map(|&(content, len)| Segment { content, len })
                .collect(),
        };
        let mut out = Vec::new();
        prompt_block_hashes(&p, 16, &mut out);
        out
    }

    #[test]
    fn block_hashes_follow_the_token_prefix() {
        // Only full blocks are hashed.
        assert_eq!(hashes(&[(1, 47)]).len(), 2);
        // The same tokens split differently across blocks give the same hashes...
        assert_eq!(
            hashes(&[(1, 40), (2, 24)]),
            hashes(&[(1, 40), (2, 30)])[..4]
        );
        // ...a shared leading segment shares the leading blocks, then the chain diverges.
        let a = hashes(&[(1, 40), (2, 24)]);
        let b = hashes(&[(1, 40), (3, 24)]);
        assert_eq!(a[..2], b[..2]);
        assert_ne!(a[2], b[2]);
        assert_ne!(a[3], b[3]);
        // Repeating content at a different offset is different tokens.
        assert_ne!(hashes(&[(1, 8), (1, 8)]), hashes(&[(1, 16)]));
    }

    #[test]
    fn hash_index_agrees_with_a_btree_map() {
        use std::collections::BTreeMap;
        let mut idx = HashIndex::new();
        let mut model = BTreeMap::new();
        let mut x = 7u64;
        for i in 0..20_000u32 {
            x = mix64(x);
            // Few distinct keys, so inserts, repeats and removals all happen often; the low
            // bits collide on purpose to make long probe runs.
            let key = (x % 3000) << 40 | (x % 5);
            if x % 3 == 0 {
                assert_eq!(idx.remove(key), model.remove(&key), "step {i}");
            } else {
                let fresh = !model.contains_key(&key);
                assert_eq!(idx.insert_if_vacant(key, i), fresh, "step {i}");
                model.entry(key).or_insert(i);
            }
            if i % 997 == 0 {
                assert!(model.iter().all(|(&k, &v)| idx.get(k) == Some(v)));
                assert_eq!(idx.len, model.len());
            }
        }
    }

    #[test]
    fn free_queue_is_lru_and_hits_leave_it() {
        let mut pool = BlockPool::new(4);
        let mut got = Vec::new();
        assert!(pool.allocate(3, &mut got));
        assert_eq!(got, vec![0, 1, 2]);
        pool.cache(0, 100);
        pool.cache(1, 101);
        // Freed in reverse order, as vLLM does: the tail block is evicted first.
        for &b in got.iter().rev() {
            pool.release(b);
        }
        assert_eq!(pool.num_free(), 4);
        assert_eq!(pool.lookup(101), Some(1));
        pool.touch(0);
        let mut more = Vec::new();
        assert!(!pool.allocate(4, &mut more));
        assert!(more.is_empty());
        assert!(pool.allocate(3, &mut more));
        // The never-used block first, then the LRU order of the freed ones: 2, 1.
        assert_eq!(more, vec![3, 2, 1]);
        assert_eq!(pool.lookup(101), None);
        assert_eq!(pool.lookup(100), Some(0));
        let a = pool.audit();
        assert!(a.consistent);
        assert_eq!((a.allocated, a.free, a.references), (4, 0, 4));
    }
}
