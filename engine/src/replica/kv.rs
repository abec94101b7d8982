//! The paged KV cache: a pool of fixed-size blocks, a free queue in LRU order, and the prefix
//! cache's hash-to-block map.
//!
//! This mirrors vLLM V1's `vllm/v1/core/block_pool.py` (`BlockPool`, `FreeKVCacheBlockQueue`)
//! and `vllm/v1/core/kv_cache_utils.py` (`hash_block_tokens`):
//! - every block has a reference count; a block with count zero sits in the free queue;
//! - allocation pops from the front of the free queue. A freed block that holds cached
//!   content goes to the back, so the least recently freed cached block is evicted first; a
//!   freed block without a hash (a partial tail, or any block with prefix caching off) goes to
//!   the front, since reusing it first costs no cache hit (`BlockPool.free_blocks`);
//! - a request's blocks are freed tail first (`SingleTypeKVCacheManager.free` reverses the
//!   block table), so of one prompt's cached blocks the deepest is evicted first;
//! - a full block (of prompt or generated tokens) is registered under a hash chained over every
//!   token before it,
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
//!
//! ## Where a cached hash is found
//!
//! vLLM keeps one dictionary from every cached block's hash to the block. Its lookups walk a
//! prompt's chain from the first block and stop at the first miss, so a cached hash only
//! matters when the hash before it in its chain is cached too. This pool uses that to avoid a
//! random memory access into one large table for every prompt block registered or evicted
//! (the seed fleet's replicas do about eleven million of each an hour, and the table misses
//! the processor's cache on most of them). A cached block is one of:
//! - a *root*: the first block of a prompt, in the small `roots` index;
//! - a *child*: registered while the block holding the hash before it (its *parent*) was
//!   cached and had no child yet; it hangs off that parent (`parent` and `next` links);
//! - an *orphan*: any other cached block (its chain's previous hash had no holder, or that
//!   holder already had another child, or its parent was evicted first), in `orphans`.
//!
//! The block holding hash `h_i` (`i > 0`) is then the child of the holder of `h_(i-1)` if that
//! child holds `h_i`, else the orphan under `h_i`, else nobody; the first hash is looked up
//! among the roots. A block that is evicted hands its child over to the orphans. Registering
//! and evicting the blocks of one prompt touches the roots index once, and blocks of the same
//! prompt otherwise, which are close in memory and recently used. Every answer is the one a
//! single dictionary would give, taking equal hashes for equal content as vLLM does (`audit`
//! checks the links; a test runs both side by side).
//!
//! ## Prompts nobody else can hit
//!
//! A request whose prompt is fresh (`Prompt::fresh`: content drawn for it alone, submitted
//! once, as every request of a workload without chat sessions is) can only ever hit its own
//! blocks, when it is readmitted after a preemption. Its full blocks are then *private*: cached
//! as far as the free queue is concerned (they go to the back when freed and are evicted in the
//! same order), but in no index and never hashed. The request remembers its blocks as it lets
//! them go (block and generation, `holder_of`); a block still holds its content exactly while
//! its generation is unchanged, since it changes when the block leaves the free queue. Its
//! readmission hits the leading blocks still holding theirs, which is what a lookup by hash
//! would find. A test (`fresh_prompts_behave_as_hashed_ones`) runs random cases both ways and
//! compares everything after every action; the seed fleet hour spends about 14 % fewer
//! instructions.

use crate::workload::{mix64, reply_content, Prompt, Segment};

/// A block size, kept with its shift when it is a power of two (vLLM's are), so the paths
/// that run for every request of every step divide by shifting.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockSize {
    n: u32,
    /// log2(n) when n is a power of two, else `u32::MAX`.
    shift: u32,
}

impl BlockSize {
    pub(crate) fn new(n: u32) -> BlockSize {
        let n = n.max(1);
        let shift = if n.is_power_of_two() {
            n.trailing_zeros()
        } else {
            u32::MAX
        };
        BlockSize { n, shift }
    }

    /// Tokens per block.
    #[inline]
    pub(crate) fn n(self) -> u32 {
        self.n
    }

    /// Full blocks in `tokens` (tokens / n).
    #[inline]
    pub(crate) fn full(self, tokens: u32) -> u32 {
        if self.shift != u32::MAX {
            tokens >> self.shift
        } else {
            tokens / self.n
        }
    }

    /// Blocks that hold `tokens` (tokens / n, rounded up).
    #[inline]
    pub(crate) fn holding(self, tokens: u32) -> u32 {
        if self.shift != u32::MAX {
            ((tokens as u64 + self.n as u64 - 1) >> self.shift) as u32
        } else {
            tokens.div_ceil(self.n)
        }
    }

    /// Tokens past the last full block (tokens mod n).
    #[inline]
    pub(crate) fn rem(self, tokens: u32) -> u32 {
        if self.shift != u32::MAX {
            tokens & (self.n - 1)
        } else {
            tokens % self.n
        }
    }
}

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
    /// Freed blocks without cached content, the front of vLLM's free queue: the last pushed
    /// is the first reused. A block here is never stale (nothing caches a free block).
    front: Vec<u32>,
    /// Prefix cache: the roots (first blocks of prompts) by hash.
    roots: HashIndex,
    /// Prefix cache: the orphans (cached blocks neither roots nor children) by hash.
    orphans: HashIndex,
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
    /// The chained hash of the content it holds; meaningful only when `link != UNCACHED`.
    hash: u64,
    /// How it is cached: [`UNCACHED`], [`ROOT`], [`ORPHAN`], or its parent's block id.
    link: u32,
    /// Its child, if the block named here still names this one as its parent; else stale.
    next: u32,
}

/// `BlockMeta::link` of a block holding no cached content.
const UNCACHED: u32 = u32::MAX;
/// `BlockMeta::link` of a cached first block of a prompt (in `roots`).
const ROOT: u32 = u32::MAX - 1;
/// `BlockMeta::link` of a cached block in `orphans`.
const ORPHAN: u32 = u32::MAX - 2;
/// `BlockMeta::link` of a cached block of a fresh prompt ([`Prompt::fresh`]): in no index, since
/// only its own request could ever look it up (see [`BlockPool::cache_private`]).
const PRIVATE: u32 = u32::MAX - 3;
/// `BlockMeta::next` of a block that never had a child since it was last cached.
const NO_CHILD: u32 = u32::MAX;

impl BlockMeta {
    fn cached(&self) -> Option<u64> {
        (self.link != UNCACHED).then_some(self.hash)
    }
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
    /// keep the branches of insert and remove predictable (the indexes hold only roots and
    /// orphans, a small share of the cached blocks, so the room costs little memory).
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

    /// Stores `b` under `h` (the caller knows no entry for `h` should stop it).
    fn insert(&mut self, h: u64, b: u32) {
        self.reserve(1);
        Self::insert_in(&mut self.slots, h, b, |_| false);
        self.len += 1;
    }

    /// Removes the entry for (`h`, `b`), if present.
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
            front: Vec::new(),
            roots: HashIndex::new(),
            orphans: HashIndex::new(),
            taken: 0,
            returned: 0,
        }
    }

    pub(crate) fn total(&self) -> u32 {
        self.total
    }

    /// Blocks that can be allocated now (never used, or free with or without cached content).
    pub(crate) fn num_free(&self) -> u32 {
        (self.total - self.fresh_next) + self.queued + self.front.len() as u32
    }

    pub(crate) fn num_used(&self) -> u32 {
        self.total - self.num_free()
    }

    /// Free blocks that still hold cached content, in block order. O(pool); for pictures.
    pub(crate) fn free_cached(&self) -> impl Iterator<Item = u32> + '_ {
        self.meta
            .iter()
            .enumerate()
            .filter(|(_, m)| m.ref_cnt == 0 && m.cached().is_some())
            .map(|(b, _)| b as u32)
    }

    /// Whether block `b` is free (reference count zero) and would be taken out of the queue by a hit.
    pub(crate) fn is_free(&self, b: u32) -> bool {
        self.meta.get(b as usize).is_some_and(|m| m.ref_cnt == 0)
    }

    /// The block caching `hash`, the `i`-th hash of a chain, given the block caching the hash
    /// before it (`prev`; ignored for `i == 0`). A lookup walks a chain with this, each hit
    /// the `prev` of the next hash.
    pub(crate) fn find(&self, i: usize, prev: Option<u32>, hash: u64) -> Option<u32> {
        let meta = &self.meta[..];
        let holds = |b: u32, link: u32| {
            let m = &meta[b as usize];
            m.hash == hash && m.link == link
        };
        if i == 0 {
            return self.roots.get(hash, |b| holds(b, ROOT));
        }
        if let Some(p) = prev {
            let c = meta[p as usize].next;
            if c != NO_CHILD && holds(c, p) {
                return Some(c);
            }
        }
        self.orphan(hash)
    }

    /// The orphan caching `hash`, if any (no memory touched while there are no orphans).
    fn orphan(&self, hash: u64) -> Option<u32> {
        if self.orphans.len == 0 {
            return None;
        }
        let meta = &self.meta[..];
        self.orphans.get(hash, |b| {
            let m = &meta[b as usize];
            m.hash == hash && m.link == ORPHAN
        })
    }

    /// The block caching `hashes[j]` of a prompt whose block table is `blocks`.
    fn holder(&self, blocks: &[u32], hashes: &[u64], j: usize) -> Option<u32> {
        // A block of the prompt's own table caching its own hash is the holder (a hash has
        // one holder at most); walk forward from the last such block.
        let own = |k: usize| self.meta[blocks[k] as usize].cached() == Some(hashes[k]);
        let start = (0..=j).rev().find(|&k| own(k));
        let (mut prev, from) = match start {
            Some(k) => (Some(blocks[k]), k + 1),
            None => (None, 0),
        };
        for (k, &h) in hashes.iter().enumerate().take(j + 1).skip(from) {
            prev = self.find(k, prev, h);
        }
        prev
    }

    /// Pops `n` blocks from the front of the free queue into `out`, evicting any cached content
    /// they hold. Returns false, changing nothing, when fewer than `n` are free.
    pub(crate) fn allocate(&mut self, n: u32, out: &mut Vec<u32>) -> bool {
        if n > self.num_free() {
            return false;
        }
        out.reserve(n as usize);
        // Freed blocks without a hash were put at the very front; never-used blocks come next,
        // in id order (the front of vLLM's initial queue), then freed cached blocks, oldest first.
        let from_front = (self.front.len() as u32).min(n);
        for _ in 0..from_front {
            if let Some(b) = self.front.pop() {
                let m = &mut self.meta[b as usize];
                m.generation = m.generation.wrapping_add(1);
                m.ref_cnt = 1;
                out.push(b);
            }
        }
        let total_n = n;
        let n = n - from_front;
        let fresh = (self.total - self.fresh_next).min(n);
        if fresh > 0 {
            let first = self.fresh_next;
            self.fresh_next += fresh;
            self.meta.resize(
                self.fresh_next as usize,
                BlockMeta {
                    ref_cnt: 1,
                    generation: 0,
                    hash: 0,
                    link: UNCACHED,
                    next: NO_CHILD,
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
            let (roots, orphans) = (&mut self.roots, &mut self.orphans);
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
                if m.link == PRIVATE {
                    // In no index and never a parent: forgetting it is all eviction does.
                    m.link = UNCACHED;
                } else if m.link != UNCACHED {
                    evict(meta, roots, orphans, b);
                }
                b
            }));
            q.head = head;
            q.len = len;
            self.queued -= queued;
        }
        self.taken += total_n as u64;
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

    /// Drops one reference; a block nobody holds goes to the free queue: to the back, keeping
    /// its cached content until it is reused, or to the front when it holds none.
    #[cfg(test)]
    pub(crate) fn release(&mut self, b: u32) {
        self.release_table(&[b]);
    }

    /// Releases a whole block table, last block first, as vLLM's `free_blocks` takes a request's
    /// blocks: the ones holding cached content are appended to the back in that order (so the
    /// tail is evicted first), the ones holding none are prepended to the front in that order
    /// (`prepend_n`: the tail ends up at the very front and is reused first).
    pub(crate) fn release_table(&mut self, blocks: &[u32]) {
        self.queue.reserve(blocks.len());
        let q = &mut self.queue;
        let (head, mut len) = (q.head, q.len);
        let mask = q.ring.len().wrapping_sub(1);
        let ring = &mut q.ring[..];
        let meta = &mut self.meta[..];
        let front = &mut self.front;
        let front0 = front.len();
        let mut pushed = 0u32;
        for &b in blocks.iter().rev() {
            let m = &mut meta[b as usize];
            if m.ref_cnt == 0 {
                continue;
            }
            m.ref_cnt -= 1;
            if m.ref_cnt == 0 {
                m.generation = m.generation.wrapping_add(1);
                if m.link == UNCACHED {
                    front.push(b);
                } else {
                    ring[(head + len) & mask] = (b, m.generation);
                    len += 1;
                    pushed += 1;
                }
            }
        }
        // The stack pops from its end: reversing the new entries puts the tail on top.
        front[front0..].reverse();
        let prepended = (front.len() - front0) as u32;
        q.len = len;
        self.queued += pushed;
        self.returned += (pushed + prepended) as u64;
    }

    /// Registers `blocks[k]` as holding the content of chained hash `hashes[k]`, for `k` in
    /// `run`, in order, unless some block already holds it (then `blocks[k]` stays uncached: a
    /// duplicate would never be looked up). `blocks` and `hashes` are a prompt's whole block
    /// table and chain.
    pub(crate) fn cache_run(
        &mut self,
        blocks: &[u32],
        hashes: &[u64],
        run: std::ops::Range<usize>,
    ) {
        if run.is_empty() {
            return;
        }
        let mut prev = match run.start {
            0 => None,
            k => self.holder(blocks, hashes, k - 1),
        };
        // Whether `prev` was registered by this loop just before: then it has no child yet,
        // so only an orphan could hold the next hash (the common case: a prompt's blocks
        // registered one after another, and no orphans at all).
        let mut prev_fresh = false;
        let (mut k, end) = (run.start, run.end);
        while k < end {
            let (i, b, h) = (k, blocks[k], hashes[k]);
            k += 1;
            if self.meta[b as usize].link != UNCACHED {
                // Already cached (a prefix hit): it holds `h`.
                prev = Some(b);
                prev_fresh = false;
                continue;
            }
            let held = if prev_fresh {
                self.orphan(h)
            } else {
                self.find(i, prev, h)
            };
            if let Some(holder) = held {
                prev = Some(holder);
                prev_fresh = false;
                continue;
            }
            let link = if i == 0 {
                self.roots.insert(h, b);
                ROOT
            } else {
                match prev.filter(|&p| prev_fresh || !self.has_child(p)) {
                    Some(p) => {
                        self.meta[p as usize].next = b;
                        p
                    }
                    None => {
                        self.orphans.insert(h, b);
                        ORPHAN
                    }
                }
            };
            let m = &mut self.meta[b as usize];
            m.hash = h;
            m.link = link;
            m.next = NO_CHILD;
            prev = Some(b);
            prev_fresh = true;
            if self.orphans.len == 0 {
                // The common case, a prompt's fresh blocks one after another with no orphan
                // that could hold their hashes: each becomes the child of the one before.
                let mut p = b;
                while k < end {
                    let (c, h) = (blocks[k], hashes[k]);
                    let m = &mut self.meta[c as usize];
                    if m.link != UNCACHED {
                        break;
                    }
                    m.hash = h;
                    m.link = p;
                    m.next = NO_CHILD;
                    self.meta[p as usize].next = c;
                    p = c;
                    k += 1;
                }
                prev = Some(p);
            }
        }
    }

    /// `cache_run` for the one block `blocks[k]`, with a fast path for what a decode does
    /// every block-size steps: the table's own previous block holds the previous hash. Same
    /// answers as `cache_run(blocks, hashes, k..k + 1)`.
    #[inline]
    pub(crate) fn cache_one(&mut self, blocks: &[u32], hashes: &[u64], k: usize) {
        let b = blocks[k];
        if self.meta[b as usize].link != UNCACHED {
            return;
        }
        let p = match k.checked_sub(1) {
            Some(j) if self.meta[blocks[j] as usize].cached() == Some(hashes[j]) => blocks[j],
            _ => return self.cache_run(blocks, hashes, k..k + 1),
        };
        let h = hashes[k];
        // Whoever holds `h` now: `p`'s child, else an orphan; then `b` stays uncached.
        let c = self.meta[p as usize].next;
        let has_child = c != NO_CHILD && self.meta[c as usize].link == p;
        if (has_child && self.meta[c as usize].hash == h) || self.orphan(h).is_some() {
            return;
        }
        let link = if has_child {
            self.orphans.insert(h, b);
            ORPHAN
        } else {
            self.meta[p as usize].next = b;
            p
        };
        let m = &mut self.meta[b as usize];
        m.hash = h;
        m.link = link;
        m.next = NO_CHILD;
    }

    /// Marks `blocks[k]`, for `k` in `run`, as holding block `k` of a fresh prompt's sequence,
    /// unless it already does (a hit) or a block left from an earlier admission still does
    /// (`held[k]`, see [`BlockPool::holder_of`]): then it stays uncached, as [`cache_run`]
    /// leaves a duplicate. The same answers as `cache_run` with the sequence's hashes, given
    /// that no other request's chain can contain them.
    ///
    /// [`cache_run`]: BlockPool::cache_run
    pub(crate) fn cache_private(
        &mut self,
        blocks: &[u32],
        held: &[(u32, u32)],
        run: std::ops::Range<usize>,
    ) {
        // An uncached block's `next` is already `NO_CHILD` (eviction and `cache_run` leave it
        // so), and a private block's `hash` is never read: the link says it all.
        if held.is_empty() {
            // Never preempted, the common case: no other block can hold its content.
            let meta = &mut self.meta[..];
            for &b in &blocks[run] {
                let m = &mut meta[b as usize];
                if m.link == UNCACHED {
                    m.link = PRIVATE;
                }
            }
            return;
        }
        for k in run {
            let b = blocks[k];
            if self.meta[b as usize].link != UNCACHED || held.get(k).is_some_and(|&e| self.holds(e))
            {
                continue;
            }
            self.meta[b as usize].link = PRIVATE;
        }
    }

    /// What a fresh prompt's request remembers of block `b` of its table when it lets the
    /// block go (after releasing it): the block and its generation, which changes the moment
    /// the block leaves the free queue (reused, and so evicted). None when `b` holds nothing.
    pub(crate) fn holder_of(&self, b: u32) -> Option<(u32, u32)> {
        let m = &self.meta[b as usize];
        (m.link == PRIVATE).then_some((b, m.generation))
    }

    /// Whether a block remembered by [`BlockPool::holder_of`] still holds what it held.
    #[inline]
    pub(crate) fn holds(&self, (b, g): (u32, u32)) -> bool {
        self.meta
            .get(b as usize)
            .is_some_and(|m| m.generation == g && m.link == PRIVATE)
    }

    /// Takes the block at the front of the free queue (`allocate` of one block, without its
    /// set-up), evicting any cached content it holds; None when nothing is free.
    #[inline]
    pub(crate) fn pop_one(&mut self) -> Option<u32> {
        let b = if let Some(b) = self.front.pop() {
            // Freed without cached content: nothing to evict.
            let m = &mut self.meta[b as usize];
            m.generation = m.generation.wrapping_add(1);
            m.ref_cnt = 1;
            b
        } else if self.fresh_next < self.total {
            let b = self.fresh_next;
            self.fresh_next += 1;
            self.meta.push(BlockMeta {
                ref_cnt: 1,
                generation: 0,
                hash: 0,
                link: UNCACHED,
                next: NO_CHILD,
            });
            b
        } else {
            let q = &mut self.queue;
            let mask = q.ring.len().wrapping_sub(1);
            let b = loop {
                if q.len == 0 {
                    return None;
                }
                let (e, g) = q.ring[q.head];
                q.head = (q.head + 1) & mask;
                q.len -= 1;
                if self.meta[e as usize].generation == g {
                    break e;
                }
            };
            self.queued -= 1;
            let m = &mut self.meta[b as usize];
            m.generation = m.generation.wrapping_add(1);
            m.ref_cnt = 1;
            if m.link == PRIVATE {
                m.link = UNCACHED;
            } else if m.link != UNCACHED {
                evict(&mut self.meta, &mut self.roots, &mut self.orphans, b);
            }
            b
        };
        self.taken += 1;
        Some(b)
    }

    /// Whether cached block `p` has a cached child.
    fn has_child(&self, p: u32) -> bool {
        let c = self.meta[p as usize].next;
        c != NO_CHILD && self.meta[c as usize].link == p
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
            } else if m.link != UNCACHED {
                a.free_cached += 1;
            }
        }
        a.free = self.total - a.allocated;
        let mut ok = used_meta == self.fresh_next;
        let mut walked = 0u32;
        for &(b, g) in self.queue.entries() {
            let m = &self.meta[b as usize];
            if m.generation == g {
                ok &= m.ref_cnt == 0 && m.link != UNCACHED;
                walked += 1;
            }
        }
        ok &= walked == self.queued;
        // The front holds free blocks without cached content, each once.
        let front: std::collections::HashSet<u32> = self.front.iter().copied().collect();
        ok &= front.len() == self.front.len();
        ok &= self.front.iter().all(|&b| {
            let m = &self.meta[b as usize];
            m.ref_cnt == 0 && m.link == UNCACHED
        });
        ok &= a.free == self.num_free();
        // Every cached block is found where its kind says, through its parent for a child,
        // and no hash is cached twice.
        let (mut roots, mut orphans) = (0usize, 0usize);
        let mut seen = std::collections::HashSet::new();
        for (i, m) in self.meta.iter().enumerate() {
            let Some(h) = m.cached() else { continue };
            ok &= m.link == PRIVATE || seen.insert(h);
            let b = i as u32;
            ok &= match m.link {
                ROOT => {
                    roots += 1;
                    self.find(0, None, h) == Some(b)
                }
                ORPHAN => {
                    orphans += 1;
                    self.orphans.get(h, |c| c == b) == Some(b)
                }
                // In no index, never a parent; its hash field is unused.
                PRIVATE => m.next == NO_CHILD,
                p => {
                    let parent = self.meta.get(p as usize);
                    parent.is_some_and(|pm| pm.link != UNCACHED && pm.next == b)
                        && self.find(1, Some(p), h) == Some(b)
                }
            };
        }
        ok &= roots == self.roots.len && orphans == self.orphans.len;
        a.consistent = ok;
        a
    }
}

/// Drops the cached content of block `b` (being reused): out of its index if it is a root or
/// an orphan, and its child, if any, becomes an orphan (its parent no longer holds the hash
/// before its own).
#[inline]
fn evict(meta: &mut [BlockMeta], roots: &mut HashIndex, orphans: &mut HashIndex, b: u32) {
    let m = meta[b as usize];
    match m.link {
        ROOT => roots.remove(m.hash, b),
        ORPHAN => orphans.remove(m.hash, b),
        _ => {}
    }
    let c = m.next;
    if c != NO_CHILD && meta[c as usize].link == b {
        meta[c as usize].link = ORPHAN;
        orphans.insert(meta[c as usize].hash, c);
    }
    let m = &mut meta[b as usize];
    m.link = UNCACHED;
    m.next = NO_CHILD;
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
#[cfg(test)]
pub(crate) fn prompt_block_hashes(prompt: &Prompt, block_size: u32, out: &mut Vec<u64>) {
    for_each_block_hash(prompt, block_size, |h| {
        out.push(h);
        true
    });
}

/// Calls `f` with the chained hash of each full block of `prompt` in order, until `f` returns
/// false (so a prefix lookup stops at its first miss instead of hashing a whole long prompt).
pub(crate) fn for_each_block_hash(prompt: &Prompt, block_size: u32, f: impl FnMut(u64) -> bool) {
    for_each_segment_block_hash(prompt.segments.iter(), block_size, f)
}

/// Appends the chained hash of every full block of a request's whole token sequence: its
/// prompt, then the first `reply_len` tokens of its reply (content [`reply_content`]). Blocks
/// filled by generated tokens are hashed and cached like prompt blocks, as in vLLM
/// (`Request.append_output_token_ids` hashes each newly full block), so the next turn of a
/// chat, whose prompt resends this reply, hits them too.
pub(crate) fn sequence_block_hashes(
    prompt: &Prompt,
    reply_len: u32,
    block_size: u32,
    out: &mut Vec<u64>,
) {
    let reply = Segment {
        content: reply_content(prompt),
        len: reply_len,
    };
    let segments = prompt.segments.iter().chain(std::iter::once(&reply));
    for_each_segment_block_hash(segments, block_size, |h| {
        out.push(h);
        true
    });
}

fn for_each_segment_block_hash<'a>(
    segments: impl Iterator<Item = &'a Segment>,
    block_size: u32,
    mut f: impl FnMut(u64) -> bool,
) {
    let bs = block_size.max(1);
    let mut h = HASH_SEED;
    let mut filled = 0u32;
    for seg in segments {
        let mut offset = 0u32;
        while offset < seg.len {
            // Whole blocks inside the segment, the common case, without the piece arithmetic.
            while filled == 0 && seg.len - offset >= bs {
                let piece = seg.content ^ ((offset as u64) << 32 | bs as u64).rotate_left(17);
                h = mix64(h.rotate_left(23) ^ piece);
                offset += bs;
                if !f(h) {
                    return;
                }
            }
            if offset == seg.len {
                break;
            }
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
    use proptest::prelude::*;

    fn hashes(segments: &[(u64, u32)]) -> Vec<u64> {
        let p = Prompt {
            segments: segments
                .iter()
                .map(|&(content, len)| Segment { content, len })
                .collect(),
            fresh: false,
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
    fn block_size_shifts_where_it_can_and_divides_where_it_must() {
        for n in [1u32, 2, 5, 16, 17, 64, 1024] {
            let b = BlockSize::new(n);
            for t in [0u32, 1, 15, 16, 17, 1000, u32::MAX - 1, u32::MAX] {
                assert_eq!(b.full(t), t / n, "{t} / {n}");
                assert_eq!(b.holding(t), t.div_ceil(n), "{t} / {n} rounded up");
                assert_eq!(b.rem(t), t % n, "{t} % {n}");
            }
        }
    }

    #[test]
    fn free_queue_is_lru_and_hits_leave_it() {
        let mut pool = BlockPool::new(4);
        let mut got = Vec::new();
        assert!(pool.allocate(3, &mut got));
        assert_eq!(got, vec![0, 1, 2]);
        // A prompt of two full blocks (chain 100, 101) in blocks 0 and 1.
        pool.cache_run(&got, &[100, 101], 0..2);
        // Freed in reverse order, as vLLM does: the tail block is evicted first.
        for &b in got.iter().rev() {
            pool.release(b);
        }
        assert_eq!(pool.num_free(), 4);
        assert_eq!(pool.find(0, None, 100), Some(0));
        assert_eq!(pool.find(1, Some(0), 101), Some(1));
        pool.touch(0);
        let mut more = Vec::new();
        assert!(!pool.allocate(4, &mut more));
        assert!(more.is_empty());
        assert!(pool.allocate(3, &mut more));
        // Block 2 held no hash, so it went to the front; then the never-used block 3, then
        // the cached block 1 (block 0 was taken by the hit).
        assert_eq!(more, vec![2, 3, 1]);
        assert_eq!(pool.find(1, Some(0), 101), None);
        assert_eq!(pool.find(0, None, 100), Some(0));
        let a = pool.audit();
        assert!(a.consistent);
        assert_eq!((a.allocated, a.free, a.references), (4, 0, 4));
    }

    /// Mirrors vLLM's tests/v1/core/test_prefix_caching.py on the free order since PR 33710
    /// (`BlockPool.free_blocks` in vllm/v1/core/block_pool.py): a freed block without a hash is
    /// prepended (reused before anything, even never-used blocks), a cached one appended.
    #[test]
    fn freed_blocks_without_a_hash_are_reused_first() {
        let mut pool = BlockPool::new(6);
        let mut got = Vec::new();
        assert!(pool.allocate(3, &mut got));
        // Blocks 0 and 1 are full and cached; block 2 is a partial tail.
        pool.cache_run(&got, &[100, 101], 0..2);
        pool.release_table(&got);
        // The tail (no hash) first, then the never-used blocks 3..5, then the cached blocks in
        // the order they were freed: 1 (the deeper one) before 0.
        let mut more = Vec::new();
        assert!(pool.allocate(6, &mut more));
        assert_eq!(more, vec![2, 3, 4, 5, 1, 0]);
        assert!(pool.audit().consistent);
        // Uncached blocks freed together come back in the table's order, tail first.
        pool.release_table(&[3, 4, 5]);
        let mut again = Vec::new();
        assert!(pool.allocate(3, &mut again));
        assert_eq!(again, vec![5, 4, 3]);
        assert!(pool.audit().consistent);
    }

    /// vLLM's block pool as plainly as it can be written: one dictionary from every cached hash
    /// to its block and a free list in LRU order. The pool above must answer exactly as it does.
    struct FlatPool {
        ref_cnt: Vec<u32>,
        hash: Vec<Option<u64>>,
        free: std::collections::VecDeque<u32>,
        map: std::collections::HashMap<u64, u32>,
    }

    impl FlatPool {
        fn new(total: u32) -> FlatPool {
            FlatPool {
                ref_cnt: vec![0; total as usize],
                hash: vec![None; total as usize],
                free: (0..total).collect(),
                map: Default::default(),
            }
        }
        fn allocate(&mut self, n: u32) -> Option<Vec<u32>> {
            if n as usize > self.free.len() {
                return None;
            }
            let got: Vec<u32> = self.free.drain(..n as usize).collect();
            for &b in &got {
                if let Some(h) = self.hash[b as usize].take() {
                    self.map.remove(&h);
                }
                self.ref_cnt[b as usize] = 1;
            }
            Some(got)
        }
        fn hits(&self, chain: &[u64]) -> Vec<u32> {
            chain
                .iter()
                .map_while(|h| self.map.get(h).copied())
                .collect()
        }
        fn touch(&mut self, b: u32) {
            if self.ref_cnt[b as usize] == 0 {
                self.free.retain(|&f| f != b);
            }
            self.ref_cnt[b as usize] += 1;
        }
        /// `BlockPool.free_blocks` of vLLM (PR 33710 and later): the table in reverse, blocks
        /// without a hash `prepend_n`-ed to the front, blocks with one appended to the back.
        fn release_table(&mut self, blocks: &[u32]) {
            let (mut without, mut with) = (Vec::new(), Vec::new());
            for &b in blocks.iter().rev() {
                let r = &mut self.ref_cnt[b as usize];
                if *r == 0 {
                    continue;
                }
                *r -= 1;
                if *r == 0 {
                    if self.hash[b as usize].is_some() {
                        with.push(b);
                    } else {
                        without.push(b);
                    }
                }
            }
            for &b in without.iter().rev() {
                self.free.push_front(b);
            }
            self.free.extend(with);
        }
        fn cache_run(&mut self, blocks: &[u32], chain: &[u64], run: std::ops::Range<usize>) {
            for k in run {
                let b = blocks[k];
                if self.hash[b as usize].is_some() || self.map.contains_key(&chain[k]) {
                    continue;
                }
                self.map.insert(chain[k], b);
                self.hash[b as usize] = Some(chain[k]);
            }
        }
    }

    fn hits(pool: &BlockPool, chain: &[u64]) -> Vec<u32> {
        let mut prev = None;
        let mut out = Vec::new();
        for (i, &h) in chain.iter().enumerate() {
            prev = pool.find(i, prev, h);
            match prev {
                Some(b) => out.push(b),
                None => break,
            }
        }
        out
    }

    /// A request in the side-by-side run: its chain, block table and how much is registered.
    struct Req {
        chain: Vec<u64>,
        blocks: Vec<u32>,
        registered: usize,
    }

    #[derive(Clone, Debug)]
    enum Op {
        /// Admit prompt `p` (hits taken, the rest allocated, `extra` decode blocks more).
        Start { p: usize, extra: u32 },
        /// Register up to `n` more full blocks of request `r` (chunked prefill).
        Register { r: usize, n: usize },
        /// Finish (or preempt) request `r`: its whole table is released, tail first.
        Release { r: usize },
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Prompts drawn from a few short token alphabets share prefixes heavily, branch, and are
        /// evicted from a small pool in every order; the linked prefix cache must hit, miss and
        /// allocate exactly as one flat dictionary does, and pass its own audit, after every step.
        #[test]
        fn linked_prefix_cache_answers_as_one_dictionary(
            total in 4u32..48,
            prompts in proptest::collection::vec(proptest::collection::vec(0u64..3, 1..9), 1..10),
            ops in proptest::collection::vec(
                proptest::prop_oneof![
                    (0usize..10, 0u32..3).prop_map(|(p, extra)| Op::Start { p, extra }),
                    (0usize..8, 1usize..4).prop_map(|(r, n)| Op::Register { r, n }),
                    (0usize..8).prop_map(|r| Op::Release { r }),
                ],
                1..80,
            ),
        ) {
            let chains: Vec<Vec<u64>> = prompts
                .iter()
                .map(|syms| {
                    let mut h = HASH_SEED;
                    syms.iter().map(|&s| { h = mix64(h.rotate_left(23) ^ s); h }).collect()
                })
                .collect();
            let mut pool = BlockPool::new(total);
            let mut flat = FlatPool::new(total);
            let mut reqs: Vec<Req> = Vec::new();
            for op in ops {
                match op {
                    Op::Start { p, extra } => {
                        let chain = chains[p % chains.len()].clone();
                        let got = hits(&pool, &chain);
                        prop_assert_eq!(&got, &flat.hits(&chain));
                        let need = chain.len() as u32 - got.len() as u32 + extra;
                        let free_hits = got.iter().filter(|&&b| pool.is_free(b)).count() as u32;
                        if need + free_hits > pool.num_free() {
                            continue;
                        }
                        for &b in &got {
                            pool.touch(b);
                            flat.touch(b);
                        }
                        let mut blocks = got.clone();
                        if extra % 2 == 1 {
                            // One block at a time, as the fast-forward takes them.
                            for _ in 0..need {
                                let b = pool.pop_one();
                                prop_assert!(b.is_some());
                                blocks.extend(b);
                            }
                        } else {
                            prop_assert!(pool.allocate(need, &mut blocks));
                        }
                        let more = flat.allocate(need).expect("the flat pool has as many free");
                        prop_assert_eq!(&blocks[got.len()..], &more[..]);
                        reqs.push(Req { chain, blocks, registered: got.len() });
                    }
                    Op::Register { r, n } => {
                        let live = reqs.len().max(1);
                        let Some(q) = reqs.get_mut(r % live) else { continue };
                        let run = q.registered..(q.registered + n).min(q.chain.len());
                        if n % 2 == 1 {
                            // Block by block, as the fast-forward registers what decodes fill.
                            for k in run.clone() {
                                pool.cache_one(&q.blocks, &q.chain, k);
                            }
                        } else {
                            pool.cache_run(&q.blocks, &q.chain, run.clone());
                        }
                        flat.cache_run(&q.blocks, &q.chain, run.clone());
                        q.registered = run.end;
                    }
                    Op::Release { r } => {
                        if reqs.is_empty() {
                            continue;
                        }
                        let q = reqs.remove(r % reqs.len());
                        pool.release_table(&q.blocks);
                        flat.release_table(&q.blocks);
                    }
                }
                prop_assert_eq!(pool.num_free() as usize, flat.free.len());
                prop_assert!(pool.audit().consistent);
                for chain in &chains {
                    prop_assert_eq!(hits(&pool, chain), flat.hits(chain));
                }
            }
        }
    }
}
