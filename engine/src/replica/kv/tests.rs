//! The KV cache's unit tests: block hashes, the hash index against a map, block sizes, the
//! free queue's order, and the linked prefix cache against a flat dictionary (property tests).

use super::hash::{prompt_block_hashes, HASH_SEED};
use super::*;
use crate::workload::{mix64, Prompt, Segment};
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
