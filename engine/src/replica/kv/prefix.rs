//! The prefix cache on the pool: finding the block that caches a hash (a root, the child of
//! the block before it, or an orphan), registering a request's newly full blocks, the private
//! blocks of fresh prompts, and eviction when a cached block is reused.

use super::index::HashIndex;
use super::{BlockMeta, BlockPool, NO_CHILD, ORPHAN, PRIVATE, ROOT, UNCACHED};

impl BlockPool {
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

    /// Whether cached block `p` has a cached child.
    fn has_child(&self, p: u32) -> bool {
        let c = self.meta[p as usize].next;
        c != NO_CHILD && self.meta[c as usize].link == p
    }
}

/// Drops the cached content of block `b` (being reused): out of its index if it is a root or
/// an orphan, and its child, if any, becomes an orphan (its parent no longer holds the hash
/// before its own).
#[inline]
pub(super) fn evict(
    meta: &mut [BlockMeta],
    roots: &mut HashIndex,
    orphans: &mut HashIndex,
    b: u32,
) {
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
