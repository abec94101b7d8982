//! The scheduler: one step's batch (vLLM's `Scheduler.schedule()`). The token budget, running
//! requests first with chunked prefill, block allocation with recompute preemption of the
//! newest request when the pool is short, then admission of waiting requests (prefix hits,
//! `scheduler_reserve_full_isl`), and the step's duration from the cost model.

use super::kv::{sequence_block_hashes, BlockPool, BlockSize};
use super::{Chunking, Replica, ReplicaEvent, Seq, State, StepTrace};
use crate::cost::{BatchItem, BatchTotals, StepCost};

impl Replica {
    /// Composes the step starting at `start` (vLLM's `Scheduler.schedule()`).
    pub(super) fn compose(&mut self, start: f64, events: &mut Vec<ReplicaEvent>) {
        self.settle();
        self.reload_pending = 0.0;
        self.ff.reset();
        self.now = start;
        while let Some(&(t, slot)) = self.pending.front() {
            if t > start {
                break;
            }
            self.pending.pop_front();
            self.waiting.push_back(slot);
        }
        let tracing = self.trace.len() < self.cfg.trace_capacity;
        if tracing {
            self.cur_trace = Some(StepTrace {
                index: self.metrics.steps,
                start,
                end: start,
                entries: Vec::new(),
                budget: self.cfg.scheduler.max_num_batched_tokens,
                budget_used: 0,
                blocks_allocated: 0,
                blocks_freed: 0,
                admitted: Vec::new(),
                preempted: Vec::new(),
                first_tokens: Vec::new(),
                finished: Vec::new(),
                kv_blocks_used: 0,
                running: 0,
                waiting: 0,
                cost: StepCost::default(),
            });
        } else if self.cfg.trace_capacity > 0 {
            self.metrics.trace_dropped += 1;
        }
        let (taken0, returned0) = (self.pool.taken, self.pool.returned);
        let sc = &self.cfg.scheduler;
        let threshold = sc.long_prefill_token_threshold;
        let mut budget = sc.max_num_batched_tokens;
        let mut totals = BatchTotals::default();
        self.batch.clear();
        if let Some(a) = self.adapters.as_mut() {
            a.begin();
        }
        let mut preempted = false;

        // Without chunked prefill (vLLM V0), whole new prompts go first, in a step of their own.
        let separate = !sc.chunked_prefill;
        let prefill_only = separate
            && self.admit_waiting(&mut budget, Chunking::Whole, start, events, &mut totals) > 0;

        // Speculative decoding guesses in this step unless as many requests run as turn it off.
        let guesses = match &self.proposer {
            Some(p) if (self.running.len() as u32) < p.off_at => p.k,
            _ => 0,
        };
        // Running requests first, in order.
        let mut i = 0;
        while !prefill_only && i < self.running.len() && budget > 0 {
            let slot = self.running[i];
            let s = &self.seqs[slot as usize];
            let mut new = s.uncomputed();
            if threshold > 0 && new > threshold {
                new = threshold;
            }
            // Speculative decoding: a decoding request also verifies its guesses, each counted
            // against the budget (as vLLM counts `spec_token_ids`), none past its last token.
            if guesses > 0 && s.in_decode && new == 1 {
                new += guesses.min(s.output_len - s.generated - 1);
            }
            new = new.min(budget);
            let target = s.computed + new;
            let mut fits = true;
            while !self.allocate(slot, target) {
                let Some(victim) = self.running.pop() else {
                    fits = false;
                    break;
                };
                self.preempt(victim, start, events);
                preempted = true;
                if victim == slot {
                    fits = false;
                    break;
                }
            }
            if !fits {
                break;
            }
            let s = &mut self.seqs[slot as usize];
            let prefill = !s.in_decode;
            if prefill {
                self.prefill_left -= new as u64;
            }
            let tenant = s.tenant;
            self.batch.push((slot, new, prefill));
            totals.add(BatchItem {
                new_tokens: new,
                context_len: target,
            });
            if let Some(a) = self.adapters.as_mut() {
                // Running requests were admitted within the limit, so they always fit it.
                debug_assert!(a.may_join(tenant));
                a.join(tenant);
            }
            budget -= new;
            i += 1;
        }

        // Then waiting requests, first come first served, unless this step preempted.
        if !preempted && !separate {
            self.admit_waiting(&mut budget, Chunking::Allowed, start, events, &mut totals);
        }

        if self.batch.is_empty() {
            // Unreachable for valid state (the first running or waiting request always fits
            // once everything newer is preempted); kept so a broken invariant stalls instead of
            // spinning.
            self.state = if self.pending.is_empty() {
                State::Idle
            } else {
                State::StartAt(self.pending[0].0.max(start))
            };
            self.cur_trace = None;
            return;
        }
        self.step_cost = self.cost.step_totals(&totals);
        if let Some(a) = self.adapters.as_mut() {
            // The step's adapters go into GPU slots before it runs, then run beside the model.
            let loads = a.load();
            let rank = a.cfg.max_lora_rank;
            let copy = self.cost.lora_load_time(rank, false, 0.0);
            let read = self
                .cost
                .lora_load_time(rank, true, a.cfg.storage_gb_s * 1e9)
                - copy;
            let load_s = loads.gpu as f64 * copy + loads.storage as f64 * read;
            let kernel_s =
                self.cost
                    .lora_step_time(totals.new_tokens, a.scheduled.len() as u32, rank);
            self.metrics.lora_loads += loads.gpu as u64;
            self.metrics.lora_storage_loads += loads.storage as u64;
            self.metrics.lora_load_s += load_s;
            self.metrics.lora_kernel_s += kernel_s;
            self.step_cost.lora_s = load_s + kernel_s;
            self.step_cost.total_s += load_s + kernel_s;
        }
        if self.reload_pending > 0.0 {
            self.step_cost.reload_s = self.reload_pending;
            self.step_cost.total_s += self.reload_pending;
        }
        if let Some(p) = self.proposer.as_ref().filter(|_| guesses > 0) {
            // The proposer guesses for every decoding request and, a draft model, sees the
            // step's prompt tokens too.
            let (mut decodes, mut prefills) = (BatchTotals::default(), BatchTotals::default());
            for &(slot, new, prefill) in &self.batch {
                let s = &self.seqs[slot as usize];
                if prefill {
                    prefills.add(BatchItem {
                        new_tokens: new,
                        context_len: s.computed + new,
                    });
                } else {
                    decodes.add(BatchItem {
                        new_tokens: 1,
                        context_len: s.computed + 1,
                    });
                }
            }
            let draft = p.time(&decodes, &prefills);
            self.step_cost.draft_s = draft;
            self.step_cost.total_s += draft;
        }
        let mut dur = self.step_cost.total_s;
        if !(dur.is_finite() && dur > 0.0) {
            dur = 1e-9;
        }
        let end = start + dur;
        if let Some(tr) = self.cur_trace.as_mut() {
            tr.end = end;
            tr.budget_used = tr.budget - budget;
            tr.cost = self.step_cost;
            tr.blocks_allocated = (self.pool.taken - taken0) as u32;
            tr.blocks_freed = (self.pool.returned - returned0) as u32;
        }
        if tracing {
            let entries = self.batch_entries();
            if let Some(tr) = self.cur_trace.as_mut() {
                tr.entries = entries;
            }
        }
        self.state = State::InFlight { start, end };
    }

    /// Ensures `slot` has blocks for `target` tokens ([`grow_seq`]). False, changing nothing,
    /// when the pool is short.
    fn allocate(&mut self, slot: u32, target: u32) -> bool {
        let caching = self.cfg.scheduler.enable_prefix_caching;
        grow_seq(
            &mut self.pool,
            &mut self.seqs[slot as usize],
            self.bsz,
            caching,
            target,
        )
    }

    /// Admits waiting requests first come, first served, while the budget and `max_num_seqs`
    /// allow and the head of the queue fits; returns how many were admitted.
    fn admit_waiting(
        &mut self,
        budget: &mut u32,
        chunking: Chunking,
        start: f64,
        events: &mut Vec<ReplicaEvent>,
        totals: &mut BatchTotals,
    ) -> u32 {
        let sc = &self.cfg.scheduler;
        let (max_seqs, threshold) = (sc.max_num_seqs as usize, sc.long_prefill_token_threshold);
        let mut admitted = 0;
        // Requests passed over for their adapter stay where they are, ahead of the rest.
        let mut i = 0;
        while *budget > 0 && self.running.len() < max_seqs && i < self.waiting.len() {
            let slot = self.waiting[i];
            let tenant = self.seqs[slot as usize].tenant;
            if let Some(a) = self.adapters.as_ref() {
                // vLLM's scheduler skips a request whose adapter would exceed max_loras and
                // tries the next one.
                if !a.may_join(tenant) {
                    let s = &mut self.seqs[slot as usize];
                    if !s.passed_over {
                        s.passed_over = true;
                        self.metrics.lora_passed_over += 1;
                    }
                    i += 1;
                    continue;
                }
            }
            let Some(new) = self.admit(slot, *budget, threshold, chunking) else {
                break;
            };
            self.waiting.remove(i);
            if let Some(a) = self.adapters.as_mut() {
                a.join(tenant);
            }
            self.start_running(slot, new, start, events, totals);
            *budget -= new;
            admitted += 1;
        }
        admitted
    }

    /// Moves an admitted request into the running list and the batch with `new` tokens.
    fn start_running(
        &mut self,
        slot: u32,
        new: u32,
        start: f64,
        events: &mut Vec<ReplicaEvent>,
        totals: &mut BatchTotals,
    ) {
        self.running.push(slot);
        let s = &mut self.seqs[slot as usize];
        s.running = true;
        let target = s.computed + new;
        if !s.admitted {
            s.admitted = true;
            events.push(ReplicaEvent::Admitted { id: s.id, t: start });
            if let Some(tr) = self.cur_trace.as_mut() {
                tr.admitted.push(s.id);
            }
        }
        self.prefill_left -= new as u64;
        self.batch.push((slot, new, true));
        totals.add(BatchItem {
            new_tokens: new,
            context_len: target,
        });
        totals.admitted += 1;
    }

    /// Tries to admit the waiting request in `slot` with up to `budget` tokens (all of its
    /// tokens at once with [`Chunking::Whole`]); returns its new tokens, or None (changing
    /// nothing) when its blocks, or with `Chunking::Whole` its tokens, do not fit.
    fn admit(&mut self, slot: u32, budget: u32, threshold: u32, chunking: Chunking) -> Option<u32> {
        let bs = self.cfg.scheduler.block_size;
        let caching = self.cfg.scheduler.enable_prefix_caching;
        let s = &mut self.seqs[slot as usize];
        if caching && !s.hashed {
            if s.fresh {
                // As many as `sequence_block_hashes` would give: the full blocks of the prompt
                // and the reply but its last token.
                s.hash_blocks = (s.prompt_len + s.output_len - 1) / bs;
            } else {
                sequence_block_hashes(&s.prompt, s.output_len - 1, bs, &mut s.hashes);
                s.hash_blocks = s.hashes.len() as u32;
            }
            s.hashed = true;
        }
        let total = s.prompt_len + s.generated;
        self.scratch_blocks.clear();
        let mut free_hits = 0u32;
        if caching && s.fresh {
            // Only its own blocks, left when it was preempted, can hold its content: the
            // leading ones still holding it are the hit, as a lookup by hash would find.
            let max_hit = ((total - 1) / bs) as usize;
            for &e in s.held.iter().take(max_hit) {
                if !self.pool.holds(e) {
                    break;
                }
                free_hits += self.pool.is_free(e.0) as u32;
                self.scratch_blocks.push(e.0);
            }
        } else if caching {
            // vLLM caps a hit at num_tokens - 1: the last token is always computed.
            let max_hit = ((total - 1) / bs) as usize;
            let mut prev = None;
            for (i, &h) in s.hashes.iter().take(max_hit).enumerate() {
                prev = self.pool.find(i, prev, h);
                match prev {
                    Some(b) => {
                        free_hits += self.pool.is_free(b) as u32;
                        self.scratch_blocks.push(b);
                    }
                    None => break,
                }
            }
        }
        let hit = self.scratch_blocks.len() as u32;
        let cached = hit * bs;
        // KV that came with the request (a disaggregated prefill's, moved from its prefill
        // replica) is computed on its first admission; after a preemption it is gone and is
        // recomputed here. The last token is always computed, as for a prefix hit.
        let arrived = if s.preemptions == 0 {
            s.external.min(total - 1)
        } else {
            0
        };
        // Past the GPU's hits, the host tier may hold the next blocks: copy them back when
        // that is quicker than computing them (the cost model's word, per request). KV that
        // came with the request covers as much, so then the tier is not asked.
        let mut host_blocks = 0u32;
        if let (Some(h), true) = (
            self.pool.host.as_ref(),
            caching && !s.fresh && arrived <= cached,
        ) {
            let max_hit = ((total - 1) / bs) as usize;
            host_blocks = s.hashes[..max_hit.min(s.hashes.len())]
                .iter()
                .skip(hit as usize)
                .take_while(|&&x| h.holds(x))
                .count() as u32;
        }
        let host_tokens = host_blocks * bs;
        let (reload, recompute) = if host_blocks > 0 {
            (
                self.cost.kv_reload_time(host_tokens),
                self.cost.prefill_compute_time(cached, host_tokens),
            )
        } else {
            (0.0, 0.0)
        };
        let reloads = host_blocks > 0 && reload < recompute;
        let cached_or_loaded = cached + if reloads { host_tokens } else { 0 };
        let known = cached_or_loaded.max(arrived);
        let mut new = total - known;
        if chunking == Chunking::Whole && new > budget {
            return None;
        }
        if threshold > 0 && new > threshold {
            new = threshold;
        }
        new = new.min(budget);
        let target = known + new;
        let need = target.div_ceil(bs) - hit;
        // vLLM's `allocate_slots(full_sequence_must_fit=True)`: every known token, not just
        // this chunk, must fit now (a free block taken by a hit counts against the free ones).
        let gate = if self.cfg.scheduler.scheduler_reserve_full_isl {
            total.div_ceil(bs) - hit
        } else {
            need
        };
        if gate as u64 + free_hits as u64 > self.pool.num_free() as u64 {
            return None;
        }
        for &b in &self.scratch_blocks {
            self.pool.touch(b);
        }
        if host_blocks > 0 {
            if reloads {
                self.metrics.host_hit_tokens += host_tokens as u64;
                self.metrics.reload_s += reload;
                self.metrics.reload_saved_s += recompute - reload;
                self.reload_pending += reload;
                if let Some(h) = self.pool.host.as_mut() {
                    let from = hit as usize;
                    for &x in &s.hashes[from..from + host_blocks as usize] {
                        h.put(x);
                    }
                }
            } else {
                self.metrics.host_recomputed_tokens += host_tokens as u64;
            }
        }
        s.blocks.clear();
        s.blocks.extend_from_slice(&self.scratch_blocks);
        s.num_cached = hit;
        s.computed = known;
        self.metrics.prefix_query_tokens += s.prompt_len as u64;
        self.metrics.prefix_hit_tokens += cached.min(s.prompt_len) as u64;
        self.metrics.transferred_tokens += known.saturating_sub(cached_or_loaded) as u64;
        self.prefill_left -= known as u64;
        let ok = self.allocate(slot, target);
        debug_assert!(ok, "checked above");
        Some(new)
    }

    /// Preempts by recompute: frees the blocks, resets progress, puts it at the head of waiting.
    fn preempt(&mut self, slot: u32, t: f64, events: &mut Vec<ReplicaEvent>) {
        let s = &mut self.seqs[slot as usize];
        self.pool.release_table(&s.blocks);
        if s.fresh && self.cfg.scheduler.enable_prefix_caching {
            // Remember which block holds each of its blocks' content now: the one just let
            // go, else one left from an earlier preemption that still holds it.
            let n = s.blocks.len().max(s.held.len());
            for k in 0..n {
                let now = s.blocks.get(k).and_then(|&b| self.pool.holder_of(b));
                let before = s.held.get(k).copied().filter(|&e| self.pool.holds(e));
                let e = now.or(before).unwrap_or((u32::MAX, 0));
                match s.held.get_mut(k) {
                    Some(h) => *h = e,
                    None => s.held.push(e),
                }
            }
        }
        s.blocks.clear();
        s.num_cached = 0;
        // The tokens to recompute return to the prefill queue.
        self.prefill_left += if s.in_decode {
            (s.prompt_len + s.generated) as u64
        } else {
            s.computed as u64
        };
        s.computed = 0;
        s.in_decode = false;
        s.running = false;
        s.preemptions += 1;
        self.metrics.preemptions += 1;
        events.push(ReplicaEvent::Preempted { id: s.id, t });
        if let Some(tr) = self.cur_trace.as_mut() {
            tr.preempted.push(s.id);
        }
        self.waiting.push_front(slot);
    }
}

/// Ensures the request `s` has blocks for `target` tokens, registering newly full blocks
/// (prompt or generated tokens) in the prefix cache when `caching`, as vLLM's `allocate_slots`
/// caches up to `num_computed_tokens + num_new_tokens`. False, changing nothing, when the pool
/// is short. The scheduler and the speculating decode step both allocate through this.
#[inline(always)]
pub(super) fn grow_seq(
    pool: &mut BlockPool,
    s: &mut Seq,
    bsz: BlockSize,
    caching: bool,
    target: u32,
) -> bool {
    let have = s.blocks.len() as u32;
    let need = bsz.holding(target).saturating_sub(have);
    if need > 0 && !pool.allocate(need, &mut s.blocks) {
        return false;
    }
    if caching {
        // Only known tokens are cached: a speculative guess may yet be rejected.
        let full = bsz
            .full(target.min(s.prompt_len + s.generated))
            .min(s.hash_blocks);
        if full > s.num_cached {
            let run = s.num_cached as usize..full as usize;
            if s.fresh {
                pool.cache_private(&s.blocks, &s.held, run);
            } else {
                pool.cache_run(&s.blocks, &s.hashes, run);
            }
            s.num_cached = full;
        }
    }
    true
}
