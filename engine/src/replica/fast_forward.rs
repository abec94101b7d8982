//! The exact fast-forward over runs of decode-only steps.
//!
//! While every running request decodes one token per step and nothing else changes, a step's
//! batch totals are the previous step's plus one token per request, so the engine can run
//! such steps in O(1) each instead of visiting every request. [`FastForward`] is the state
//! that makes this possible: the running requests grouped by their context modulo the block
//! size (which requests need a new block in a given step), a few running sums, and the
//! tokens the requests have gained that are not yet written into them (the *lag*).
//! [`Replica::fast_forward`] runs such steps, [`Replica::finish_fast_forwarded`] ends one the
//! fast-forward composed, and [`Replica::settle`] writes the lag out before anything looks at
//! the requests one by one.

use super::kv::BlockSize;
use super::{BatchTotals, Bound, Replica, ReplicaEvent, Seq, State, StepCost};

/// The fast-forward's description of the running requests.
#[derive(Clone, Debug, Default)]
pub(super) struct FastForward {
    /// Requests per residue of context modulo the block size, running indices sorted by
    /// residue, and each residue's first index.
    counts: Vec<u32>,
    order: Vec<u32>,
    offsets: Vec<u32>,
    /// The scratch above, and the sums below, describe the running requests as they are now:
    /// since they were built, only fast-forwarded steps (and fast finishes) have run.
    valid: bool,
    /// Tokens every running request gained since the residues in `counts` were taken,
    /// modulo the block size.
    shift: u32,
    /// Sum of the running requests' computed tokens.
    kv: u64,
    /// Fewest output tokens any running request still has to produce.
    min_left: u32,
    /// The step in flight was composed by the fast-forward and nobody finishes in it, so
    /// `finish_step` can end it in O(1) per request.
    fast_finish: bool,
    /// Tokens every running request has computed and sampled beyond what its `Seq` says, and
    /// the time of its last token then: fast-forwarded steps and fast finishes add to these
    /// instead of touching every request; `settle` writes them out before anything else
    /// looks at or changes the requests one by one.
    lag: u32,
    lag_time: f64,
}

impl FastForward {
    /// Tokens every running request holds beyond what its `Seq` says (see `lag`).
    #[inline]
    pub(super) fn lag(&self) -> u32 {
        self.lag
    }

    /// Fewest output tokens any running request still has to produce (meaningful only while
    /// the description is valid).
    #[inline]
    pub(super) fn min_left(&self) -> u32 {
        self.min_left
    }

    /// The step in flight is a fast-forwarded decode step nobody finishes in, and the
    /// description still holds.
    #[inline]
    pub(super) fn fast_step_in_flight(&self) -> bool {
        self.fast_finish && self.valid
    }

    /// Like [`FastForward::fast_step_in_flight`], and clears the fast finish either way.
    #[inline]
    pub(super) fn take_fast_finish(&mut self) -> bool {
        std::mem::take(&mut self.fast_finish) && self.valid
    }

    /// Forgets the description (the running requests are about to change one by one).
    #[inline]
    pub(super) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// Forgets the description and any fast finish (a step is composed the ordinary way).
    #[inline]
    pub(super) fn reset(&mut self) {
        self.valid = false;
        self.fast_finish = false;
    }

    /// Where the requests in residue class `r` lie in `order` (which holds their indices into
    /// the running list, in running order). A range rather than a slice: the classes are small
    /// and a slice's extra bounds checks cost more than indexing `order` directly.
    #[inline]
    fn class(&self, r: usize) -> std::ops::Range<usize> {
        let lo = self.offsets[r] as usize;
        lo..lo + self.counts[r] as usize
    }

    /// Describes the running requests afresh, if every one of them decodes, sampled its last
    /// token at `start` and holds exactly the blocks its context needs; false otherwise
    /// (leaving the description invalid).
    fn rebuild(&mut self, running: &[u32], seqs: &[Seq], bsz: BlockSize, start: f64) -> bool {
        self.valid = false;
        self.counts.clear();
        self.counts.resize(bsz.n() as usize, 0);
        let mut kv0 = 0u64;
        let mut min_left = u32::MAX;
        for &slot in running {
            let s = &seqs[slot as usize];
            if !s.in_decode
                || s.last_token_time != start
                || s.blocks.len() as u32 != bsz.holding(s.computed)
            {
                return false;
            }
            kv0 += s.computed as u64;
            min_left = min_left.min(s.output_len - s.generated);
            self.counts[bsz.rem(s.computed) as usize] += 1;
        }
        // A counting sort by residue keeps running order within each residue; every
        // request gains the same tokens per step, so the classes stay valid as they rotate.
        self.offsets.clear();
        let mut acc = 0u32;
        for &c in &self.counts {
            acc += c;
            self.offsets.push(acc);
        }
        self.order.clear();
        self.order.resize(running.len(), 0);
        for (i, &slot) in running.iter().enumerate().rev() {
            let r = bsz.rem(seqs[slot as usize].computed) as usize;
            self.offsets[r] -= 1;
            self.order[self.offsets[r] as usize] = i as u32;
        }
        self.valid = true;
        self.shift = 0;
        self.kv = kv0;
        self.min_left = min_left;
        true
    }

    /// Accounts for `k` more decode steps of `n` requests, the last one ending at `t`.
    #[inline]
    fn stepped(&mut self, k: u32, n: u64, bs: u32, t: f64) {
        self.shift = (self.shift + k % bs) % bs;
        self.kv += n * k as u64;
        self.min_left -= k;
        if k > 0 {
            self.lag += k;
            self.lag_time = t;
        }
    }

    /// Writes the lag into the running requests.
    fn settle(&mut self, running: &[u32], seqs: &mut [Seq]) {
        if self.lag == 0 {
            return;
        }
        let (lag, t) = (self.lag, self.lag_time);
        for &slot in running {
            let s = &mut seqs[slot as usize];
            s.computed += lag;
            s.generated += lag;
            s.last_token_time = t;
        }
        self.lag = 0;
    }
}

/// The residue class (context modulo the block size `bs`, before a run whose requests had
/// gained `shift` tokens) of the requests whose context reaches a new block in step `kk` of
/// the run: a request at context c needs a new block in step kk when c + kk - 1 is a multiple
/// of the block size.
#[inline]
fn needs_block(kk: u32, shift: u32, bs: u32) -> usize {
    ((bs + 1 - (kk % bs + shift) % bs) % bs) as usize
}

/// The residue class one step later than `r` (`needs_block` of the next step): classes rotate
/// down by one each step, so a run walks them without a division per step. The class whose
/// context after step kk is a whole number of blocks is `next_class(needs_block(kk))`.
#[inline]
fn next_class(r: usize, bs: u32) -> usize {
    if r == 0 {
        bs as usize - 1
    } else {
        r - 1
    }
}

impl Replica {
    /// Runs consecutive decode-only steps from `start` in O(1) each, when nothing but token
    /// counts and block tables would change: every running request is decoding and was
    /// scheduled in the previous step, nobody waits, nobody finishes, the pool covers every new
    /// block, and each step ends by `horizon` (strictly before it with [`Bound::Before`]) and starts
    /// before the next submitted arrival. It produces exactly the events, metrics and block
    /// tables the step-by-step path would: the batch totals of such a step are the previous
    /// ones plus one token per request (all sums are exact integers), the step cost comes from
    /// the same [`CostModel::step_totals`](crate::cost::CostModel::step_totals), and blocks are
    /// handed out in the same order (step by step, in running order). The step after the last
    /// one run this way is composed here too when it would be composed as a decode-only batch
    /// anyway (it crosses the horizon, or somebody finishes in it) and is left in flight for
    /// `finish_step`, exactly as `compose` would leave it. Returns false, changing nothing,
    /// when no step qualifies.
    pub(super) fn fast_forward(
        &mut self,
        start: f64,
        horizon: f64,
        bound: Bound,
        events: &mut Vec<ReplicaEvent>,
    ) -> bool {
        let sc = &self.cfg.scheduler;
        let n = self.running.len();
        // Speculative decoding makes every step's tokens depend on each request's draws.
        if n == 0
            || self.proposer.is_some()
            || !self.waiting.is_empty()
            || self.cfg.record_token_times
            || self.trace.len() < self.cfg.trace_capacity
            || n as u64 > sc.max_num_batched_tokens as u64
        {
            return false;
        }
        let next_arrival = self.pending.front().map_or(f64::INFINITY, |p| p.0);
        if start >= next_arrival {
            return false;
        }
        let bs = sc.block_size;
        // The cached description holds only if the first request is where it should be.
        let first = &self.seqs[self.running[0] as usize];
        let first_last = if self.ff.lag > 0 {
            self.ff.lag_time
        } else {
            first.last_token_time
        };
        if !(self.ff.valid && first.in_decode && first_last == start) {
            self.settle();
            if !self.ff.rebuild(&self.running, &self.seqs, self.bsz, start) {
                return false;
            }
        }
        let (kv0, min_left, shift) = (self.ff.kv, self.ff.min_left, self.ff.shift);
        // Steps that may still start under the driver's work cap; of those, the step in which
        // somebody finishes is composed but not run here (its end goes the ordinary way).
        let max_start = self.step_limit.saturating_sub(self.metrics.steps);
        let max_full = (min_left.saturating_sub(1) as u64)
            .min(max_start)
            .min(u32::MAX as u64) as u32;
        let free = self.pool.num_free();
        let used0 = self.pool.num_used();
        let waiting = self.pending.len() as u32;
        let nseq = n as u32;
        // Adapters: every running request's adapter sits in a GPU slot since the last step
        // composed the ordinary way, so a decode-only step loads none and its kernels cost the
        // same each step (the slots' recency order among them is unchanged by skipping it).
        let lora = self.adapters.as_ref().map(|a| {
            let mut used: Vec<u32> = self
                .running
                .iter()
                .map(|&s| self.seqs[s as usize].tenant)
                .collect();
            used.sort_unstable();
            used.dedup();
            self.cost
                .lora_step_time(n as u64, used.len() as u32, a.cfg.max_lora_rank)
        });
        let (mut t, mut k, mut new_blocks) = (start, 0u32, 0u32);
        // The step after the last full one, when it is composed and left in flight.
        let mut in_flight: Option<(StepCost, f64)> = None;
        let first_class = needs_block(1, shift, bs);
        let mut class = first_class;
        while t < next_arrival && (k as u64) < max_start {
            let kk = k + 1;
            let need = self.ff.counts[class];
            if new_blocks + need > free {
                break;
            }
            let kv = kv0 + n as u64 * kk as u64;
            let totals = BatchTotals {
                seqs: n as u64,
                new_tokens: n as u64,
                kv_tokens: kv,
                attended_positions: kv as f64,
                admitted: 0,
            };
            let mut cost = self.cost.step_totals(&totals);
            if let Some(l) = lora {
                cost.lora_s = l;
                cost.total_s += l;
            }
            let mut d = cost.total_s;
            if !(d.is_finite() && d > 0.0) {
                d = 1e-9;
            }
            let end = t + d;
            if kk > max_full || end > horizon || (bound == Bound::Before && end == horizon) {
                // This step is due (it starts at the end of one that was), its batch is every
                // running request decoding one token, and its blocks fit: compose it as
                // `compose` would, and leave it in flight.
                new_blocks += need;
                in_flight = Some((cost, end));
                if let Some(l) = lora {
                    self.metrics.lora_kernel_s += l;
                }
                break;
            }
            let dur = end - t;
            new_blocks += need;
            k = kk;
            class = next_class(class, bs);
            self.metrics.steps += 1;
            self.metrics.busy_time_s += dur;
            if let Some(l) = lora {
                self.metrics.lora_kernel_s += l;
            }
            self.metrics.decode_tokens += n as u64;
            self.metrics.output_tokens += n as u64;
            if self.itl_samples {
                self.metrics.itl.push_n(dur, n as u64);
            }
            events.push(ReplicaEvent::StepEnd {
                t: end,
                duration: dur,
                decode_tokens: nseq,
                prefill_tokens: 0,
                first_tokens: 0,
                running: nseq,
                waiting,
                kv_blocks_used: used0 + new_blocks,
            });
            t = end;
        }
        if k == 0 && in_flight.is_none() {
            return false;
        }
        if self.cfg.trace_capacity > 0 {
            self.metrics.trace_dropped += k as u64 + in_flight.is_some() as u64;
        }
        self.metrics.fast_forward_steps += k as u64;
        let alloc_steps = k + in_flight.is_some() as u32;
        let caching = self.cfg.scheduler.enable_prefix_caching;
        if new_blocks > 0 && !caching {
            // Hand out the blocks in the step-by-step order: by step, then in running order.
            // One pop of all of them from the free queue gives the same blocks in the same
            // order (nothing is freed or cached in between).
            let mut got = std::mem::take(&mut self.scratch_blocks);
            got.clear();
            let ok = self.pool.allocate(new_blocks, &mut got);
            debug_assert!(ok, "checked against the free count");
            let mut next = got.iter();
            let mut class = first_class;
            for _ in 1..=alloc_steps {
                for j in self.ff.class(class) {
                    let slot = self.running[self.ff.order[j] as usize];
                    if let Some(&b) = next.next() {
                        self.seqs[slot as usize].blocks.push(b);
                    }
                }
                class = next_class(class, bs);
            }
            self.scratch_blocks = got;
        } else if caching {
            // Step by step, as `compose` would: each step's new blocks, then the blocks its
            // decode fills (prompt or generated tokens), registered in the prefix cache.
            let mut class = first_class;
            for _ in 1..=alloc_steps {
                for j in self.ff.class(class) {
                    let slot = self.running[self.ff.order[j] as usize];
                    let b = self.pool.pop_one();
                    debug_assert!(b.is_some(), "checked against the free count");
                    if let Some(b) = b {
                        self.seqs[slot as usize].blocks.push(b);
                    }
                }
                class = next_class(class, bs);
                // The requests whose context after this step is a whole number of blocks: every
                // block in their table is full, the last one just filled.
                for j in self.ff.class(class) {
                    let slot = self.running[self.ff.order[j] as usize];
                    let s = &mut self.seqs[slot as usize];
                    let full = s.blocks.len();
                    if full > 0 && full <= s.hash_blocks as usize {
                        if s.fresh {
                            self.pool.cache_private(&s.blocks, &s.held, full - 1..full);
                        } else {
                            self.pool.cache_one(&s.blocks, &s.hashes, full - 1);
                        }
                        s.num_cached = s.num_cached.max(full as u32);
                    }
                }
            }
        }
        self.ff.stepped(k, n as u64, bs, t);
        self.now = t;
        self.state = State::StartAt(t);
        if let Some((cost, end)) = in_flight {
            self.batch.clear();
            self.batch
                .extend(self.running.iter().map(|&slot| (slot, 1, false)));
            self.step_cost = cost;
            self.state = State::InFlight { start: t, end };
            self.ff.fast_finish = k < max_full;
        }
        true
    }

    /// Writes the running requests' lag (see [`FastForward`]) into them (the fast-forward
    /// keeps their cached-block counts up to date itself).
    pub(super) fn settle(&mut self) {
        self.ff.settle(&self.running, &mut self.seqs);
    }

    /// Ends a decode-only step composed by `fast_forward` in which nobody finishes: exactly
    /// what `finish_step` does with such a batch (every request samples one token one step
    /// after its last), without its per-request branches.
    pub(super) fn finish_fast_forwarded(
        &mut self,
        start: f64,
        end: f64,
        events: &mut Vec<ReplicaEvent>,
    ) {
        self.now = end;
        let dur = end - start;
        let n = self.running.len() as u32;
        if self.itl_samples {
            self.metrics.itl.push_n(dur, n as u64);
        }
        self.metrics.steps += 1;
        self.metrics.busy_time_s += dur;
        self.metrics.decode_tokens += n as u64;
        self.metrics.output_tokens += n as u64;
        let waiting = (self.waiting.len() + self.pending.len()) as u32;
        events.push(ReplicaEvent::StepEnd {
            t: end,
            duration: dur,
            decode_tokens: n,
            prefill_tokens: 0,
            first_tokens: 0,
            running: n,
            waiting,
            kv_blocks_used: self.pool.num_used(),
        });
        self.batch.clear();
        self.ff
            .stepped(1, n as u64, self.cfg.scheduler.block_size, end);
        self.state = State::StartAt(end);
    }
}
