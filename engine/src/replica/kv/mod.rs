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
//!
//! ## Where things live
//!
//! This file holds the pool's state, block sizes and the recount (`audit`); `free_queue.rs`
//! hands blocks out and takes them back (the free queue), `prefix.rs` registers and finds
//! cached content (roots, children, orphans, private blocks, eviction), `index.rs` is the hash
//! index the roots and orphans live in, and `hash.rs` computes the chained block hashes.

mod free_queue;
mod hash;
mod host;
mod index;
mod prefix;

use free_queue::FreeQueue;
pub(crate) use hash::{for_each_block_hash, sequence_block_hashes};
pub(crate) use host::HostTier;
use index::HashIndex;

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
    /// Where evicted cached content goes, when the replica has a host-memory tier.
    pub(crate) host: Option<HostTier>,
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

/// `BlockMeta::link` of a cached block of a fresh prompt
/// ([`Prompt::fresh`](crate::workload::Prompt::fresh)): in no index, since only its own request
/// could ever look it up (see [`BlockPool::cache_private`]).
const PRIVATE: u32 = u32::MAX - 3;

/// `BlockMeta::next` of a block that never had a child since it was last cached.
const NO_CHILD: u32 = u32::MAX;

impl BlockMeta {
    fn cached(&self) -> Option<u64> {
        (self.link != UNCACHED).then_some(self.hash)
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
            host: None,
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

#[cfg(test)]
mod tests;
