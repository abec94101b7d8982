//! The free queue: a ring of (block, generation) entries in LRU order, and the pool's side of
//! it (allocation from the front, evicting what a reused block cached; hits taking a block out
//! of the middle; whole block tables released tail first, to the back when cached, to the
//! front when not).

use super::prefix::evict;
use super::{BlockMeta, BlockPool, NO_CHILD, PRIVATE, UNCACHED};

/// A FIFO of (block, generation) entries in a ring buffer whose size is a power of two, so a
/// push or a pop is a masked index update (done in place by the pool's batch loops).
#[derive(Clone, Debug, Default)]
pub(super) struct FreeQueue {
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
    pub(super) fn entries(&self) -> impl Iterator<Item = &(u32, u32)> {
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

impl BlockPool {
    /// Pops `n` blocks from the front of the free queue into `out`, evicting any cached content
    /// they hold. Returns false, changing nothing, when fewer than `n` are free.
    #[inline]
    pub(crate) fn allocate(&mut self, n: u32, out: &mut Vec<u32>) -> bool {
        if n == 1 {
            // A decode's next block, most often: `pop_one`, without the set-up below.
            return self.pop_one().map(|b| out.push(b)).is_some();
        }
        self.allocate_many(n, out)
    }

    /// `allocate` of any number of blocks.
    fn allocate_many(&mut self, n: u32, out: &mut Vec<u32>) -> bool {
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
            let host = &mut self.host;
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
                    if let Some(h) = host.as_mut() {
                        h.put(m.hash);
                    }
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
    /// its cached content until it is reused, or to the front when it holds none
    /// (`release_table` of one block, without its set-up: a rejected guess's block, most often).
    #[inline]
    pub(crate) fn release(&mut self, b: u32) {
        let m = &mut self.meta[b as usize];
        if m.ref_cnt == 0 {
            return;
        }
        m.ref_cnt -= 1;
        if m.ref_cnt > 0 {
            return;
        }
        m.generation = m.generation.wrapping_add(1);
        if m.link == UNCACHED {
            self.front.push(b);
        } else {
            let g = m.generation;
            self.queue.reserve(1);
            let q = &mut self.queue;
            let mask = q.ring.len().wrapping_sub(1);
            q.ring[(q.head + q.len) & mask] = (b, g);
            q.len += 1;
            self.queued += 1;
        }
        self.returned += 1;
    }

    /// Releases a whole block table, last block first, as vLLM's `free_blocks` takes a request's
    /// blocks: the ones holding cached content are appended to the back in that order (so the
    /// tail is evicted first), the ones holding none are prepended to the front in that order
    /// (`prepend_n`: the tail ends up at the very front and is reused first).
    #[inline]
    pub(crate) fn release_table(&mut self, blocks: &[u32]) {
        if let &[b] = blocks {
            // A rejected guess's block, most often.
            return self.release(b);
        }
        self.release_many(blocks);
    }

    /// `release_table` of any number of blocks.
    fn release_many(&mut self, blocks: &[u32]) {
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
                if let Some(h) = self.host.as_mut() {
                    h.put(m.hash);
                }
                evict(&mut self.meta, &mut self.roots, &mut self.orphans, b);
            }
            b
        };
        self.taken += 1;
        Some(b)
    }
}
