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
//! blocks costs memory only for the blocks a run actually touches. The free queue is an array
//! of (block, generation) entries rather than a linked list: taking a block out of the middle
//! (a prefix hit) bumps its generation, which turns its entry stale, and stale entries are
//! skipped when they reach the front. The order is the linked list's, without chasing
//! pointers through cold memory on every allocation. vLLM's initial free queue
//! holds every block in id order, so handing out never-used blocks first, in id order, before
//! any freed block is the same order.

use crate::workload::{mix64, Prompt};

/// The block pool of one replica.
#[derive(Clone, Debug)]
pub(crate) struct BlockPool {
    total: u32,
    /// Blocks `fresh_next..total` have never been allocated.
    fresh_next: u32,
    meta: Vec<BlockMeta>,
    /// Free blocks in LRU order, as (block, generation); an entry whose generation no longer
    /// matches its block's is stale.
    queue: FreeQueue,
    /// Live entries in `queue` (blocks freed at least once, reference count zero).
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
    /// Bumped whenever the block enters or leaves the free queue.
    generation: u32,
    hash: Option<u64>,
}

/// An open-addressing map from block hash to block id, for keys that are already well-mixed
/// 64-bit hashes. Each slot is 8 bytes: the hash's high 32 bits as a tag (which also picks the
/// home slot) and the block id. A tag match is confirmed against the block's own full hash
/// (kept in the pool's block metadata), so tag collisions cost a probe, never a wrong answer.
/// Linear probing, backward-shift deletion. It is only ever looked up by key; nothing
/// iterates it in a way that affects results.
#[derive(Clone, Debug)]
pub(crate) struct HashIndex {
    /// `tag << 32 | (block + 1)`; 0 marks an empty slot.
    slots: Vec<u64>,
    len: usize,
}

/// A FIFO of (block, generation) entries in a ring buffer whose size is a power of two, so a
/// push or a pop is a masked index update (done in place by the pool's batch loops).
#[derive(Clone, Debug, Default)]
struct FreeQueue {
    ring: Vec<(u32, u32)>,
    head: usize,
    len: usize,
}

impl FreeQueue {
    /// Makes room for `n` more entries.
    #[inline]
    fn reserve(&mut self, n: usize) {
        while self.len + n > self.ring.len() {
            self.grow();
        }
    }

    /// The entries from front to back.
    fn entries(&self) -> impl Iterator<Item = &(u32, u32)> {
        let mask = self.ring.len().wrapping_sub(1);
        (0..self.len).map(move |i| &self.ring[(self.head + i) & mask])
    }

    /// Doubles the ring, keeping the order (front at index 0).
    #[cold]
    fn grow(&mut self) {
        let size = (self.ring.len() * 2).max(1024);
        let mut ring = Vec::with_capacity(size);
        ring.extend(self.entries().copied());
        ring.resize(size, (0, 0));
        self.ring = ring;
        self.head = 0;
    }
}

impl HashIndex {
    fn new() -> HashIndex {
        HashIndex {
            slots: vec![0; 1024],
            len: 0,
        }
    }

    fn tag(h: u64) -> u64 {
        h >> 32
    }

    fn pack(h: u64, b: u32) -> u64 {
        Self::tag(h) << 32 | (b as u64 + 1)
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The block stored under `h` for which `confirm` holds.
    fn get(&self, h: u64, confirm: impl Fn(u32) -> bool) -> Option<u32> {
        let tag = Self::tag(h);
        let mask = self.mask();
        let mut i = tag as usize & mask;
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if s >> 32 == tag {
                let b = (s as u32).wrapping_sub(1);
                if confirm(b) {
                    return Some(b);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Stores `b` under `h` unless a block `confirm` accepts is already stored under it, in one
    /// probe sequence; returns whether it stored.
    #[cfg(test)]
    fn insert_unless_present(&mut self, h: u64, b: u32, confirm: impl Fn(u32) -> bool) -> bool {
        self.reserve(1);
        let stored = Self::insert_in(&mut self.slots, h, b, confirm);
        self.len += stored as usize;
        stored
    }

    /// Grows until `n` more entries keep the table at most a quarter full: short probe runs
    /// keep the branches of insert and remove predictable, which measured about a fifth
    /// faster on the seed hour than half full.
    fn reserve(&mut self, n: usize) {
        while (self.len + n) * 4 > self.slots.len() {
            self.grow();
        }
    }

    /// `insert_unless_present` on the slots alone (the caller counts and has made room).
    #[inline]
    fn insert_in(slots: &mut [u64], h: u64, b: u32, confirm: impl Fn(u32) -> bool) -> bool {
        let tag = Self::tag(h);
        let mask = slots.len() - 1;
        let mut i = tag as usize & mask;
        loop {
            let s = slots[i];
            if s == 0 {
                break;
            }
            if s >> 32 == tag && confirm((s as u32).wrapping_sub(1)) {
                return false;
            }
            i = (i + 1) & mask;
        }
        slots[i] = Self::pack(h, b);
        true
    }

    /// Removes the entry for (`h`, `b`), if present.
    #[cfg(test)]
    fn remove(&mut self, h: u64, b: u32) {
        self.len -= Self::remove_in(&mut self.slots, h, b) as usize;
    }

    /// Removes the entry for (`h`, `b`) from the slots alone; returns whether it was there.
    #[inline]
    fn remove_in(slots: &mut [u64], h: u64, b: u32) -> bool {
        let v = Self::pack(h, b);
        let mask = slots.len() - 1;
        let mut i = Self::tag(h) as usize & mask;
        loop {
            let s = slots[i];
            if s == 0 {
                return false;
            }
            if s == v {
                break;
            }
            i = (i + 1) & mask;
        }
        // Backward-shift deletion: pull later members of the probe run into the hole.
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let s = slots[j];
            if s == 0 {
                break;
            }
            // The entry may fill the hole unless its home lies cyclically in (i, j]; as
            // distances back from j, without branches on the wrap-around.
            let home = (s >> 32) as usize & mask;
            let movable = (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(i) & mask);
            if movable {
                slots[i] = s;
                i = j;
            }
        }
        slots[i] = 0;
        true
    }

    fn grow(&mut self) {
        let bigger = vec![0; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        let mask = self.mask();
        for s in old {
            if s != 0 {
                let mut i = (s >> 32) as usize & mask;
                while self.slots[i] != 0 {
                    i = (i + 1) & mask;
                }
                self.slots[i] = s;
            }
        }
    }
}

impl BlockPool {
    pub(crate) fn new(total: u32) -> BlockPool {
        BlockPool {
            total,
            fresh_next: 0,
            meta: Vec::new(),
            queue: FreeQueue::default(),
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
        let meta = &self.meta;
        self.cached.get(hash, |b| {
            meta.get(b as usize).is_some_and(|m| m.hash == Some(hash))
        })
    }

    /// Pops `n` blocks from the front of the free queue into `out`, evicting any cached content
    /// they hold. Returns false, changing nothing, when fewer than `n` are free.
    pub(crate) fn allocate(&mut self, n: u32, out: &mut Vec<u32>) -> bool {
        if n > self.num_free() {
            return false;
        }
        out.reserve(n as usize);
        // Never-used blocks come first, in id order (they are the front of vLLM's queue).
        let fresh = (self.total - self.fresh_next).min(n);
        if fresh > 0 {
            let first = self.fresh_next;
            self.fresh_next += fresh;
            self.meta.resize(
                self.fresh_next as usize,
                BlockMeta {
                    ref_cnt: 1,
                    generation: 0,
                    hash: None,
                },
            );
            out.extend(first..first + fresh);
        }
        let queued = n - fresh;
        if queued > 0 {
            // Locals instead of fields inside the loop: the compiler cannot tell the vectors'
            // contents from the pool's own counters, and would store them on every block.
            let q = &mut self.queue;
            let (mut head, mut len) = (q.head, q.len);
            let ring = &q.ring[..];
            let mask = ring.len().wrapping_sub(1);
            let meta = &mut self.meta[..];
            let slots = &mut self.cached.slots[..];
            let mut evicted = 0usize;
            out.extend((0..queued).map(|_| {
                // The front live entry (stale ones are skipped); `num_free` guarantees one.
                let mut b = 0;
                while len > 0 {
                    let (e, g) = ring[head];
                    head = (head + 1) & mask;
                    len -= 1;
                    if meta[e as usize].generation == g {
                        b = e;
                        break;
                    }
                }
                let m = &mut meta[b as usize];
                m.generation = m.generation.wrapping_add(1);
                m.ref_cnt = 1;
                if let Some(h) = m.hash.take() {
                    // Evict: the index holds exactly this (hash, block) pair.
                    evicted += HashIndex::remove_in(slots, h, b) as usize;
                }
                b
            }));
            q.head = head;
            q.len = len;
            self.cached.len -= evicted;
            self.queued -= queued;
        }
        self.taken += n as u64;
        true
    }

    /// Takes a reference to a cached block found by a prefix hit, removing it from the free queue
    /// if nobody held it.
    pub(crate) fn touch(&mut self, b: u32) {
        let m = &mut self.meta[b as usize];
        if m.ref_cnt == 0 {
            // Its queue entry turns stale.
            m.generation = m.generation.wrapping_add(1);
            self.queued -= 1;
            self.taken += 1;
        }
        m.ref_cnt += 1;
    }

    /// Drops one reference; a block nobody holds goes to the back of the free queue, keeping its
    /// cached content until it is reused.
    #[cfg(test)]
    pub(crate) fn release(&mut self, b: u32) {
        self.release_table(&[b]);
    }

    /// Releases a whole block table, last block first (as vLLM frees a request's blocks, so
    /// its tail is evicted first).
    pub(crate) fn release_table(&mut self, blocks: &[u32]) {
        self.queue.reserve(blocks.len());
        let q = &mut self.queue;
        let (head, mut len) = (q.head, q.len);
        let mask = q.ring.len().wrapping_sub(1);
        let ring = &mut q.ring[..];
        let meta = &mut self.meta[..];
        let mut pushed = 0u32;
        for &b in blocks.iter().rev() {
            let m = &mut meta[b as usize];
            if m.ref_cnt == 0 {
                continue;
            }
            m.ref_cnt -= 1;
            if m.ref_cnt == 0 {
                m.generation = m.generation.wrapping_add(1);
                ring[(head + len) & mask] = (b, m.generation);
                len += 1;
                pushed += 1;
            }
        }
        q.len = len;
        self.queued += pushed;
        self.returned += pushed as u64;
    }

    /// Registers block `b` as holding the content with this chained hash, unless some block
    /// already does (then `b` stays uncached, as a duplicate would never be looked up).
    #[cfg(test)]
    pub(crate) fn cache(&mut self, b: u32, hash: u64) {
        self.cache_run(&[b], &[hash]);
    }

    /// Registers `blocks[i]` under `hashes[i]` for every `i`, in order, as `cache` does one by one.
    pub(crate) fn cache_run(&mut self, blocks: &[u32], hashes: &[u64]) {
        self.cached.reserve(blocks.len());
        let meta = &mut self.meta[..];
        let slots = &mut self.cached.slots[..];
        let mut stored_n = 0usize;
        for (&b, &hash) in blocks.iter().zip(hashes) {
            if meta[b as usize].hash.is_some() {
                continue;
            }
            let seen = &*meta;
            let stored = HashIndex::insert_in(slots, hash, b, |other| {
                seen.get(other as usize)
                    .is_some_and(|m| m.hash == Some(hash))
            });
            if stored {
                meta[b as usize].hash = Some(hash);
                stored_n += 1;
            }
        }
        self.cached.len += stored_n;
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
        let mut ok = used_meta == self.fresh_next;
        let mut walked = 0u32;
        for &(b, g) in self.queue.entries() {
            let m = &self.meta[b as usize];
            if m.generation == g {
                ok &= m.ref_cnt == 0;
                walked += 1;
            }
        }
        ok &= walked == self.queued;
        ok &= a.free == self.num_free();
        let mut live = 0usize;
        for (i, m) in self.meta.iter().enumerate() {
            if let Some(h) = m.hash {
                live += 1;
                ok &= self.lookup(h) == Some(i as u32);
            }
        }
        ok &= live == self.cached.len;
        a.consistent = ok;
        a
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
    for_each_block_hash(prompt, block_size, |h| {
        out.push(h);
        true
    });
}

/// Calls `f` with the chained hash of each full block of `prompt` in order, until `f` returns
/// false (so a prefix lookup stops at its first miss instead of hashing a whole long prompt).
pub(crate) fn for_each_block_hash(
    prompt: &Prompt,
    block_size: u32,
    mut f: impl FnMut(u64) -> bool,
) {
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
                if !f(h) {
                    return;
                }
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
        let mut model: BTreeMap<u64, u32> = BTreeMap::new();
        let mut x = 7u64;
        for i in 0..20_000u32 {
            x = mix64(x);
            // Few distinct tags (high bits), so tag collisions and long probe runs are common.
            let key = (x % 40) << 32 | (x % 3000);
            let confirm = |m: &BTreeMap<u64, u32>, b: u32| m.get(&key) == Some(&b);
            match model.get(&key).copied() {
                Some(b) if x % 3 == 0 => {
                    idx.remove(key, b);
                    model.remove(&key);
                }
                Some(b) => assert_eq!(idx.get(key, |c| confirm(&model, c)), Some(b)),
                None => {
                    assert_eq!(idx.get(key, |c| confirm(&model, c)), None);
                    assert!(idx.insert_unless_present(key, i, |c| confirm(&model, c)));
                    assert!(!idx.insert_unless_present(key, i + 1, |c| c == i));
                    model.insert(key, i);
                }
            }
            if i % 997 == 0 {
                for (&k, &v) in &model {
                    assert_eq!(idx.get(k, |c| model.get(&k) == Some(&c)), Some(v));
                }
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
