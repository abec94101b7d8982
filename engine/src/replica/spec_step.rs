//! The speculating decode step without the general paths' branches.
//!
//! With speculative decoding on, every step's tokens depend on each request's draws, so the
//! exact fast-forward over decode-only steps ([`super::fast_forward`]) stands aside. Most of a
//! speculating replica's steps are still of one kind: every running request decodes, verifies
//! its guesses and nothing else happens (nobody waits, nothing arrives, the budget and the
//! pool cover every guess). [`Replica::compose_speculating`] composes such a step and
//! [`Replica::finish_speculating`] ends it and, when the next step is of the same kind and
//! starts at once, composes that one in the same pass over the running requests, writing it
//! over the batch it ends (the requests that must grow for it marked, and grown once every
//! finished request has given its blocks back). Each does
//! exactly what [`Replica::compose`] and [`Replica::finish_step`] do with such a batch: the
//! same blocks from the pool in the same order (every release of a step's end before any
//! allocation of the next step, allocations through the same [`grow_seq`] in running order),
//! the same prefix-cache registrations, the same sums in the same order for the cost model, the
//! same draws, rollbacks, finishes, metrics and events. A test drives replicas both ways and
//! compares everything a driver can see.

use super::kv::BlockSize;
use super::scheduler::grow_seq;
use super::spec::Draws;
use super::step_end::Tally;
use super::{Replica, ReplicaEvent, Seq, State};
use crate::cost::BatchTotals;
use crate::stats::Samples;

/// A speculating batch's sums for the cost model, as `BatchTotals::add` would make them one
/// request at a time: every request's attended positions are a whole number and every partial
/// sum is far below 2^53, so summing integers and converting once gives the same floating-point
/// sums.
#[derive(Default)]
struct SpecSums {
    seqs: u64,
    new_tokens: u64,
    verify_kv: u64,
    verify_pos: u64,
    guess_kv: u64,
}

impl SpecSums {
    /// `attended_positions` of `new` tokens ending at `target`: new (2 target - new + 1) / 2.
    #[inline]
    fn positions(target: u64, new: u64) -> u64 {
        (new * (2 * target - new + 1)) / 2
    }

    /// A request at `computed` tokens verifying `new` (its sampled token and its guesses).
    #[inline]
    fn add(&mut self, computed: u32, new: u32) {
        let target = computed as u64 + new as u64;
        self.seqs += 1;
        self.new_tokens += new as u64;
        self.verify_kv += target;
        self.verify_pos += Self::positions(target, new as u64);
        self.guess_kv += computed as u64 + 1;
    }
}

/// What [`Replica::finish_speculating`] counts as it goes.
#[derive(Default)]
struct SpecTally {
    /// Requests whose previous token did not come at the step's start.
    late: u32,
    /// Requests at their last token, with nothing to guess.
    unguessed: u32,
    extra_tokens: u32,
    /// The next step, composed on the way: its batch's sums and the blocks it needs.
    next: NextSums,
    need: u64,
}

impl Replica {
    /// Tokens a decoding request verifies in a speculating step: its sampled token and its
    /// guesses, none past its last token.
    #[inline]
    fn spec_new(k: u32, output_len: u32, generated: u32) -> u32 {
        1 + k.min(output_len - generated - 1)
    }

    /// Whether the running requests may speculate together in one step starting at `start`
    /// (checked before anything changes): nobody waits or arrives by then, no trace is being
    /// kept, and the budget covers everyone's guesses.
    fn may_speculate(&self, start: f64) -> Option<u32> {
        let p = self.proposer.as_ref()?;
        let n = self.running.len();
        let sc = &self.cfg.scheduler;
        (n > 0
            && (n as u32) < p.off_at
            && self.waiting.is_empty()
            && !self.pending.front().is_some_and(|&(t, _)| t <= start)
            && self.trace.len() >= self.cfg.trace_capacity
            && n as u64 * (p.k as u64 + 1) <= sc.max_num_batched_tokens as u64
            && self.metrics.steps < self.step_limit)
            .then_some(p.k)
    }

    /// Composes the step starting at `start` when it is a speculating decode step of every
    /// running request (see the module's description); false, changing nothing, otherwise
    /// (and [`Replica::compose`] composes it).
    pub(super) fn compose_speculating(&mut self, start: f64) -> bool {
        let Some(k) = self.may_speculate(start) else {
            return false;
        };
        // Each request may reach ceil((k + 1) / block size) new blocks: when the free pool
        // covers that for everyone, nobody is preempted.
        let most_blocks = (k + 1).div_ceil(self.cfg.scheduler.block_size) as u64;
        let n = self.running.len() as u64;
        let seqs = &self.seqs;
        if (self.pool.num_free() as u64) < n * most_blocks
            || !self.running.iter().all(|&s| seqs[s as usize].in_decode)
        {
            return false;
        }
        self.settle();
        let (bsz, caching) = (self.bsz, self.cfg.scheduler.enable_prefix_caching);
        let mut sums = SpecSums::default();
        // Locals, so the loop keeps them in registers across the pool's calls.
        let (seqs, pool, batch) = (&mut self.seqs[..], &mut self.pool, &mut self.batch);
        batch.clear();
        for &slot in &self.running {
            let s = &mut seqs[slot as usize];
            debug_assert_eq!(
                s.uncomputed(),
                1,
                "a decoding request has one token to compute"
            );
            let new = Self::spec_new(k, s.output_len, s.generated);
            let ok = grow_seq(pool, s, bsz, caching, s.computed + new);
            debug_assert!(ok, "checked against the free blocks");
            batch.push((slot, new, false));
            sums.add(s.computed, new);
        }
        self.launch_speculating(start, &sums);
        true
    }

    /// Puts the composed speculating step starting at `start` in flight: its cost from the one
    /// cost model (the target verifying, the proposer guessing), as `compose` prices it.
    fn launch_speculating(&mut self, start: f64, sums: &SpecSums) {
        self.ff.reset();
        self.spec_tokens = sums.new_tokens;
        self.now = start;
        if self.cfg.trace_capacity > 0 {
            self.metrics.trace_dropped += 1;
        }
        let verify = BatchTotals {
            seqs: sums.seqs,
            new_tokens: sums.new_tokens,
            kv_tokens: sums.verify_kv,
            attended_positions: sums.verify_pos as f64,
            admitted: 0,
        };
        // Each guess pass is one token per request at its context, attending to all of it.
        let guess = BatchTotals {
            seqs: sums.seqs,
            new_tokens: sums.seqs,
            kv_tokens: sums.guess_kv,
            attended_positions: sums.guess_kv as f64,
            admitted: 0,
        };
        self.step_cost = self.cost.step_totals(&verify);
        let draft = self
            .proposer
            .as_ref()
            .map_or(0.0, |p| p.time(&guess, &BatchTotals::default()));
        self.step_cost.draft_s = draft;
        self.step_cost.total_s += draft;
        let mut dur = self.step_cost.total_s;
        if !(dur.is_finite() && dur > 0.0) {
            dur = 1e-9;
        }
        self.state = State::InFlight {
            start,
            end: start + dur,
        };
        self.spec_step = true;
    }

    /// Ends a step [`Replica::compose_speculating`] composed, as [`Replica::finish_step`]
    /// ends it: each request keeps its guesses up to the first wrong one and the target's own
    /// token (the rejected ones are rolled back from the computed tokens; their blocks stay, as
    /// in vLLM), and finishes at its last token. With
    /// `chain`, the next step (due at once) is composed in the same pass when it is a
    /// speculating decode step too, as `compose` would compose it; otherwise it is left due.
    pub(super) fn finish_speculating(
        &mut self,
        start: f64,
        end: f64,
        chain: bool,
        events: &mut Vec<ReplicaEvent>,
    ) {
        self.now = end;
        let dur = end - start;
        let returned0 = self.pool.returned;
        let (bsz, record) = (self.bsz, self.cfg.record_token_times);
        let caching = self.cfg.scheduler.enable_prefix_caching;
        let mut t = SpecTally::default();
        // The batch is ended in place: with `chain`, each request that goes on writes its share
        // of the next step over the entries already read.
        let mut batch = std::mem::take(&mut self.batch);
        let ended = batch.len() as u32;
        let mut finished = std::mem::take(&mut self.spec_finished);
        finished.clear();
        let never = Draws::default();
        let (draws, k) = self
            .proposer
            .as_ref()
            .map_or((&never, 0), |p| (p.draws(), p.k));
        let run = Run {
            start,
            end,
            draws,
            k,
            bsz,
            caching,
            itl_samples: self.itl_samples,
            record,
            chain,
        };
        let kept = end_any(
            &mut batch,
            &mut self.seqs,
            &mut self.metrics.itl,
            &mut finished,
            &run,
            &mut t,
        );
        batch.truncate(kept);
        // The finished requests leave in batch order. The loop above touched neither the pool
        // nor the events, so this is what leaving as each was reached would do.
        for &slot in &finished {
            self.retire(slot, end, events);
        }
        let decode_batch = self.spec_tokens;
        self.metrics.spec_fast_steps += 1;
        self.metrics.spec_proposed += decode_batch - ended as u64;
        self.metrics.spec_accepted += t.extra_tokens as u64;
        self.close_step(
            end,
            dur,
            Tally {
                same_itl: (ended - t.late) as u64,
                any_finished: !finished.is_empty(),
                decode_batch,
                prefill_tokens: 0,
                decode_tokens: ended,
                first_tokens: 0,
                extra_tokens: t.extra_tokens,
                guessed: ended - t.unguessed,
                returned0,
            },
            events,
        );
        // The next step is composed here when it is due now and is a speculating decode
        // step the free blocks cover; otherwise `compose` takes it from its start.
        if chain
            && self.state == State::StartAt(end)
            && self.may_speculate(end).is_some()
            && t.need <= self.pool.num_free() as u64
        {
            // The marked requests grow, in running order, now that every release is done.
            let (seqs, pool) = (&mut self.seqs[..], &mut self.pool);
            for entry in batch.iter_mut().filter(|e| e.2) {
                let s = &mut seqs[entry.0 as usize];
                let ok = grow_seq(pool, s, bsz, caching, s.computed + entry.1);
                debug_assert!(ok, "checked against the free blocks");
                entry.2 = false;
            }
            let sums = t.next.sums(kept as u64);
            self.batch = batch;
            self.launch_speculating(end, &sums);
        } else {
            batch.clear();
            self.batch = batch;
        }
        self.spec_finished = finished;
    }
}

/// What stays fixed while a speculating step's requests are ended.
struct Run<'a> {
    start: f64,
    end: f64,
    draws: &'a Draws,
    k: u32,
    bsz: BlockSize,
    caching: bool,
    itl_samples: bool,
    record: bool,
    chain: bool,
}

/// The next step's sums as [`end_requests`] gathers them: [`SpecSums`] less what follows from
/// the count of requests.
#[derive(Default)]
struct NextSums {
    new_tokens: u64,
    computed: u64,
    verify_pos: u64,
}

impl NextSums {
    /// The sums of `seqs` requests, as [`SpecSums::add`] makes them one at a time.
    fn sums(&self, seqs: u64) -> SpecSums {
        SpecSums {
            seqs,
            new_tokens: self.new_tokens,
            verify_kv: self.computed + self.new_tokens,
            verify_pos: self.verify_pos,
            guess_kv: self.computed + seqs,
        }
    }
}

/// [`end_requests`] for the run's settings: one copy of the loop for each, without their tests
/// in it.
#[inline(always)]
fn end_any(
    batch: &mut [(u32, u32, bool)],
    seqs: &mut [Seq],
    itl: &mut Samples,
    finished: &mut Vec<u32>,
    r: &Run,
    t: &mut SpecTally,
) -> usize {
    match (r.record, r.chain) {
        (false, true) => end_requests::<false, true>(batch, seqs, itl, finished, r, t),
        (false, false) => end_requests::<false, false>(batch, seqs, itl, finished, r, t),
        (true, true) => end_requests::<true, true>(batch, seqs, itl, finished, r, t),
        (true, false) => end_requests::<true, false>(batch, seqs, itl, finished, r, t),
    }
}

/// Ends the requests of `batch` in order (see [`Replica::finish_speculating`]); the ones that
/// finish go to `finished`, for the caller to retire. With `CHAIN`, every request that goes on
/// writes its share of the next step over the entries already read, marked when it must grow
/// (new blocks or prefix-cache registrations) for it, and the count of those is returned (zero
/// without); with `RECORD`, every token's time is kept. The counts go to `t`, kept in locals
/// while the loop runs (only the rare cases are counted: the rest follow from the number of
/// requests).
#[inline]
fn end_requests<const RECORD: bool, const CHAIN: bool>(
    batch: &mut [(u32, u32, bool)],
    seqs: &mut [Seq],
    itl: &mut Samples,
    finished: &mut Vec<u32>,
    r: &Run,
    t: &mut SpecTally,
) -> usize {
    let (mut late, mut unguessed, mut extra_tokens) = (0u32, 0u32, 0u32);
    let mut need_all = 0u64;
    let mut next = NextSums::default();
    let mut write = 0;
    for j in 0..batch.len() {
        let (slot, new, _) = batch[j];
        let s = &mut seqs[slot as usize];
        let guesses = new - 1;
        let kept = if guesses > 0 {
            r.draws.accepted(s.id, s.generated, guesses)
        } else {
            unguessed += 1;
            0
        };
        s.computed += 1 + kept;
        debug_assert!(
            s.computed >= s.prompt_len + s.generated,
            "every known token is computed"
        );
        s.generated += 1 + kept;
        extra_tokens += kept;
        if s.last_token_time != r.start {
            late += 1;
            if r.itl_samples {
                itl.push(r.end - s.last_token_time);
            }
        }
        s.last_token_time = r.end;
        if RECORD {
            for _ in 0..=kept {
                s.token_times.push(r.end);
            }
        }
        if s.generated >= s.output_len {
            finished.push(slot);
            continue;
        }
        if CHAIN {
            // The next step's share, as `compose` will ask for it. Its blocks and cache
            // registrations wait until every release of this step is done.
            let new = Replica::spec_new(r.k, s.output_len, s.generated);
            let target = s.computed + new;
            next.new_tokens += new as u64;
            next.computed += s.computed as u64;
            next.verify_pos += SpecSums::positions(target as u64, new as u64);
            // Whether it needs blocks or registers a block in the prefix cache (its known
            // tokens filling the block after its last cached one, while it has hashes left):
            // what `grow_seq` will do. Both are worked out in full, without short-circuits, so
            // that nothing here branches on the request (such a branch is mispredicted every
            // few requests).
            let n = r.bsz.n() as u64;
            let need = r.bsz.holding(target).saturating_sub(s.blocks.len() as u32);
            need_all += need as u64;
            let short = need > 0;
            let known = s.prompt_len + s.generated;
            debug_assert!(
                target >= known,
                "a decoding request's target covers its tokens"
            );
            let cache = r.caching
                & (s.num_cached < s.hash_blocks)
                & (known as u64 >= (s.num_cached as u64 + 1) * n);
            batch[write] = (slot, new, short | cache);
            write += 1;
        }
    }
    t.late += late;
    t.unguessed += unguessed;
    t.extra_tokens += extra_tokens;
    t.need += need_all;
    t.next.new_tokens += next.new_tokens;
    t.next.computed += next.computed;
    t.next.verify_pos += next.verify_pos;
    write
}
