//! The speculating decode step without the general paths' branches.
//!
//! With speculative decoding on, every step's tokens depend on each request's draws, so the
//! exact fast-forward over decode-only steps ([`super::fast_forward`]) stands aside. Most of a
//! speculating replica's steps are still of one kind: every running request decodes, verifies
//! its guesses and nothing else happens (nobody waits, nothing arrives, the budget and the
//! pool cover every guess). [`Replica::compose_speculating`] composes such a step and
//! [`Replica::finish_speculating`] ends it and, when the next step is of the same kind and
//! starts at once, composes that one in the same pass over the running requests. Each does
//! exactly what [`Replica::compose`] and [`Replica::finish_step`] do with such a batch: the
//! same blocks from the pool in the same order (every release of a step's end before any
//! allocation of the next step, allocations through the same [`grow_seq`] in running order),
//! the same prefix-cache registrations, the same sums in the same order for the cost model, the
//! same draws, rollbacks, finishes, metrics and events. A test drives replicas both ways and
//! compares everything a driver can see.

use super::kv::{BlockPool, BlockSize};
use super::scheduler::grow_seq;
use super::spec;
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
    /// A request at `computed` tokens verifying `new` (its sampled token and its guesses).
    #[inline]
    fn add(&mut self, computed: u32, new: u32) {
        let target = computed as u64 + new as u64;
        self.seqs += 1;
        self.new_tokens += new as u64;
        self.verify_kv += target;
        // `attended_positions` of `new` tokens ending at `target`: new (2 target - new + 1) / 2.
        self.verify_pos += (new as u64 * (2 * target - new as u64 + 1)) / 2;
        self.guess_kv += computed as u64 + 1;
    }
}

/// What [`Replica::finish_speculating`] counts as it goes.
#[derive(Default)]
struct SpecTally {
    same_itl: u64,
    decode_batch: u64,
    proposed: u64,
    extra_tokens: u32,
    guessed: u32,
    any_finished: bool,
    /// The next step, composed on the way: its batch's sums, the blocks it needs, and the
    /// requests that must grow (new blocks or prefix-cache registrations), with their targets.
    next: SpecSums,
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
    /// token, gives back the rejected guesses' blocks, and finishes at its last token. With
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
        let (below, k) = self
            .proposer
            .as_ref()
            .map_or((0, 0), |p| (p.accept_below(), p.k));
        let (bsz, record) = (self.bsz, self.cfg.record_token_times);
        let caching = self.cfg.scheduler.enable_prefix_caching;
        let mut t = SpecTally::default();
        let itl_samples = self.itl_samples;
        let mut next_batch = std::mem::take(&mut self.next_batch);
        let mut grow = std::mem::take(&mut self.grow);
        next_batch.clear();
        grow.clear();
        let mut i = 0;
        let run = Run {
            start,
            end,
            below,
            k,
            bsz,
            record,
            caching,
            chain,
            itl_samples,
        };
        // Request by request in batch order; a request that finishes leaves through `retire`
        // (which needs the whole replica) before the next one is taken.
        while let Some((j, slot)) = end_requests(
            &self.batch[i..],
            &mut self.seqs,
            &mut self.pool,
            &mut self.metrics.itl,
            &mut next_batch,
            &mut grow,
            &run,
            &mut t,
        ) {
            t.any_finished = true;
            self.retire(slot, end, events);
            i += j + 1;
        }
        self.metrics.spec_fast_steps += 1;
        self.metrics.spec_proposed += t.proposed;
        self.metrics.spec_accepted += t.extra_tokens as u64;
        let decode_tokens = self.batch.len() as u32;
        self.close_step(
            end,
            dur,
            Tally {
                same_itl: t.same_itl,
                any_finished: t.any_finished,
                decode_batch: t.decode_batch,
                prefill_tokens: 0,
                decode_tokens,
                first_tokens: 0,
                extra_tokens: t.extra_tokens,
                guessed: t.guessed,
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
            let (seqs, pool) = (&mut self.seqs[..], &mut self.pool);
            for &(slot, target) in &grow {
                let ok = grow_seq(pool, &mut seqs[slot as usize], bsz, caching, target);
                debug_assert!(ok, "checked against the free blocks");
            }
            std::mem::swap(&mut self.batch, &mut next_batch);
            self.launch_speculating(end, &t.next);
        }
        self.next_batch = next_batch;
        self.grow = grow;
    }
}

/// What stays fixed while a speculating step's requests are ended.
struct Run {
    start: f64,
    end: f64,
    below: u64,
    k: u32,
    bsz: BlockSize,
    record: bool,
    caching: bool,
    chain: bool,
    itl_samples: bool,
}

/// Ends the requests of `batch` in order (see [`Replica::finish_speculating`]) until one
/// finishes: returns its index in `batch` and its slot, for the caller to retire, or None when
/// all are done. The counts go to `t`, kept in locals while the loop runs.
#[allow(clippy::too_many_arguments)]
#[inline]
fn end_requests(
    batch: &[(u32, u32, bool)],
    seqs: &mut [Seq],
    pool: &mut BlockPool,
    itl: &mut Samples,
    next_batch: &mut Vec<(u32, u32, bool)>,
    grow: &mut Vec<(u32, u32)>,
    r: &Run,
    t: &mut SpecTally,
) -> Option<(usize, u32)> {
    let (mut same_itl, mut decode_batch, mut proposed) = (0u64, 0u64, 0u64);
    let (mut extra_tokens, mut guessed, mut need_all) = (0u32, 0u32, 0u64);
    let mut next = SpecSums::default();
    let mut done = None;
    for (j, &(slot, new, _)) in batch.iter().enumerate() {
        let s = &mut seqs[slot as usize];
        decode_batch += new as u64;
        let mut kept = 0;
        if new > 1 {
            let guesses = new - 1;
            kept = spec::accepted(r.below, s.id, s.generated, guesses);
            s.computed += 1 + kept;
            let keep = r.bsz.holding(s.computed) as usize;
            if s.blocks.len() > keep {
                pool.release_table(&s.blocks[keep..]);
                s.blocks.truncate(keep);
            }
            proposed += guesses as u64;
            guessed += 1;
        } else {
            s.computed += new;
        }
        debug_assert!(
            s.computed >= s.prompt_len + s.generated,
            "every known token is computed"
        );
        s.generated += 1 + kept;
        extra_tokens += kept;
        if s.last_token_time == r.start {
            same_itl += 1;
        } else if r.itl_samples {
            itl.push(r.end - s.last_token_time);
        }
        s.last_token_time = r.end;
        if r.record {
            for _ in 0..=kept {
                s.token_times.push(r.end);
            }
        }
        if s.generated >= s.output_len {
            done = Some((j, slot));
            break;
        }
        if r.chain {
            // The next step's share, as `compose` will ask for it. Its blocks and cache
            // registrations wait until every release of this step is done.
            let new = Replica::spec_new(r.k, s.output_len, s.generated);
            let target = s.computed + new;
            next_batch.push((slot, new, false));
            next.add(s.computed, new);
            let need = r.bsz.holding(target).saturating_sub(s.blocks.len() as u32);
            let cache = r.caching
                && r.bsz
                    .full(target.min(s.prompt_len + s.generated))
                    .min(s.hash_blocks)
                    > s.num_cached;
            if need > 0 || cache {
                grow.push((slot, target));
                need_all += need as u64;
            }
        }
    }
    t.same_itl += same_itl;
    t.decode_batch += decode_batch;
    t.proposed += proposed;
    t.extra_tokens += extra_tokens;
    t.guessed += guessed;
    t.need += need_all;
    t.next.seqs += next.seqs;
    t.next.new_tokens += next.new_tokens;
    t.next.verify_kv += next.verify_kv;
    t.next.verify_pos += next.verify_pos;
    t.next.guess_kv += next.guess_kv;
    done
}
