//! What a driver reads of a replica without changing it: its load (and whether it is quiet
//! until a time), the prefix hits a prompt would find, counters, the step trace, the snapshot
//! of its queues and block tables, and the recount of its KV pool.

use super::kv::{for_each_block_hash, KvAudit};
use super::{
    Replica, ReplicaLoad, ReplicaMetrics, ReplicaSnapshot, SeqPhase, SeqSnapshot, State, StepTrace,
    TokenKind, TraceEntry,
};
use crate::cost::CostModel;
use crate::workload::Prompt;

impl Replica {
    /// Output tokens request `id` has sampled so far (`None` when the engine does not hold
    /// it).
    pub fn output_tokens(&self, id: u64) -> Option<u32> {
        let seqs = &self.seqs;
        if let Some(&s) = self.running.iter().find(|&&s| seqs[s as usize].id == id) {
            return Some(seqs[s as usize].generated + self.ff.lag());
        }
        self.waiting
            .iter()
            .chain(self.pending.iter().map(|(_, s)| s))
            .find(|&&s| seqs[s as usize].id == id)
            .map(|&s| seqs[s as usize].generated)
    }

    /// Whether `adapter` sits in one of this replica's GPU slots now; `None` when the replica
    /// serves no adapters.
    pub fn adapter_resident(&self, adapter: u32) -> Option<bool> {
        self.adapters.as_ref().map(|a| a.resident(adapter))
    }

    /// Adapters in the replica's GPU slots now, and its slots (0 and 0 without adapters).
    pub fn adapter_slots(&self) -> (u32, u32) {
        self.adapters
            .as_ref()
            .map_or((0, 0), |a| (a.resident_count(), a.cfg.max_loras))
    }

    pub fn load(&self) -> ReplicaLoad {
        let running = self.running.len() as u32;
        let waiting = (self.waiting.len() + self.pending.len()) as u32;
        ReplicaLoad {
            running,
            waiting,
            outstanding: running + waiting,
            queued_prompt_tokens: self.prefill_left,
            kv_blocks_used: self.pool.num_used(),
            kv_blocks_total: self.pool.total(),
            busy: matches!(self.state, State::InFlight { .. }),
        }
    }

    /// True when [`Replica::advance_before`] to `t` would report nothing but
    /// [`ReplicaEvent::StepEnd`]s and leave the running and waiting requests as they are, so
    /// a driver that only reads [`ReplicaLoad::outstanding`] may put the advance off (the
    /// steps then run, exactly as they would have, at the next advance). It answers true only
    /// when nothing is due before `t`, or when the step in flight is a fast-forwarded decode
    /// step nobody finishes in, nothing is queued, and the decode steps that can start before
    /// `t` can neither finish anybody nor run out of blocks. False means "not sure".
    ///
    /// [`ReplicaEvent::StepEnd`]: super::ReplicaEvent::StepEnd
    pub fn quiet_before(&self, t: f64) -> bool {
        if !self.deferred.is_empty() || t.is_nan() {
            return false;
        }
        let (start, end) = match self.state {
            State::Idle => return true,
            State::StartAt(s) => return s >= t,
            State::InFlight { start, end } => (start, end),
        };
        if end >= t {
            return true;
        }
        let sc = &self.cfg.scheduler;
        let n = self.running.len() as u64;
        let steady = self.ff.fast_step_in_flight()
            && self.waiting.is_empty()
            && self.pending.is_empty()
            && !self.cfg.record_token_times
            && self.trace.len() >= self.cfg.trace_capacity
            && n > 0
            && n <= sc.max_num_batched_tokens as u64
            && self.ff.min_left() >= 2
            && t.is_finite();
        if !steady {
            return false;
        }
        // After the step in flight, `min_left - 2` decode steps finish nobody and the next
        // one finishes somebody. Decode steps only get longer as the context grows, so that
        // one ends no earlier than `end` plus that many steps as long as the one in flight
        // (less a margin far above the rounding of the time sums).
        let d0 = end - start;
        if d0.is_nan() || d0 <= 0.0 {
            return false;
        }
        let to_finish = (self.ff.min_left() - 1) as u64;
        if t > end + to_finish as f64 * d0 * (1.0 - 1e-6) {
            return false;
        }
        // Steps that may be composed before `t` (each takes its blocks when composed).
        let starts = (((t - end) / d0) as u64).saturating_add(2).min(to_finish);
        let blocks = n * (starts / sc.block_size as u64 + 1);
        blocks <= self.pool.num_free() as u64
            && self.metrics.steps.saturating_add(starts + 2) < self.step_limit
    }

    /// Leading prompt tokens already in this replica's prefix cache (0 when caching is off).
    pub fn cached_prefix_tokens(&self, prompt: &Prompt) -> u32 {
        if !self.cfg.scheduler.enable_prefix_caching {
            return 0;
        }
        let mut hits = 0u32;
        let mut prev = None;
        for_each_block_hash(prompt, self.cfg.scheduler.block_size, |h| {
            prev = self.pool.find(hits as usize, prev, h);
            hits += prev.is_some() as u32;
            prev.is_some()
        });
        hits * self.cfg.scheduler.block_size
    }

    /// The host-memory tier, when the replica has one: (blocks it holds now, blocks written
    /// to it, blocks dropped from it for room).
    pub fn host_tier(&self) -> Option<(u32, u64, u64)> {
        self.pool
            .host
            .as_ref()
            .map(|h| (h.len(), h.stored, h.dropped))
    }

    pub fn kv_blocks_total(&self) -> u32 {
        self.pool.total()
    }

    pub fn cost_model(&self) -> &CostModel {
        &self.cost
    }

    /// Counters: preemptions, prefix hits/queries, steps, tokens, exact ITL samples.
    pub fn metrics(&self) -> &ReplicaMetrics {
        &self.metrics
    }

    /// The per-step trace (the first `trace_capacity` steps).
    pub fn trace(&self) -> &[StepTrace] {
        &self.trace
    }

    /// Hands over the token times of requests finished since the last call (only with
    /// `record_token_times`), as (id, times).
    pub fn drain_token_times(&mut self) -> Vec<(u64, Vec<f64>)> {
        std::mem::take(&mut self.finished_token_times)
    }

    /// A full recount of the KV pool against the block tables. O(pool); for tests.
    pub fn audit(&self) -> KvAudit {
        let mut a = self.pool.audit();
        let table_refs: u64 = self
            .running
            .iter()
            .map(|&s| self.seqs[s as usize].blocks.len() as u64)
            .sum::<u64>()
            + self.held_kv_blocks() as u64;
        let idle_tables = self
            .waiting
            .iter()
            .chain(self.pending.iter().map(|p| &p.1))
            .all(|&s| self.seqs[s as usize].blocks.is_empty());
        a.consistent &= table_refs == a.references && idle_tables;
        a
    }

    /// Free blocks that still hold prefix-cache content a hit could reuse, in block order.
    /// O(pool); for visualisations (the build-up's block grid), never the hot path.
    pub fn free_cached_blocks(&self) -> Vec<u32> {
        self.pool.free_cached().collect()
    }

    /// The queues, every block table and the step in flight.
    pub fn snapshot(&self) -> ReplicaSnapshot {
        let bs = self.cfg.scheduler.block_size;
        let caching = self.cfg.scheduler.enable_prefix_caching;
        let in_flight = matches!(self.state, State::InFlight { .. });
        let view = |slot: u32| {
            let s = &self.seqs[slot as usize];
            let phase = if !s.running {
                SeqPhase::Waiting
            } else if s.in_decode {
                SeqPhase::Decode
            } else {
                SeqPhase::Prefill
            };
            let lag = if s.running { self.ff.lag() } else { 0 };
            // Blocks are registered when a step is composed, so count the step in flight too
            // (the fast-forward leaves the counts behind; this is what `compose` would say).
            let scheduled = if in_flight && s.running {
                self.batch.iter().find(|b| b.0 == slot).map_or(0, |b| b.1)
            } else {
                0
            };
            let cached_blocks = if caching && s.running {
                s.num_cached
                    .max(((s.computed + lag + scheduled) / bs).min(s.hash_blocks))
            } else {
                s.num_cached
            };
            SeqSnapshot {
                id: s.id,
                tenant: s.tenant,
                arrival: s.arrival,
                phase,
                prompt_len: s.prompt_len,
                output_len: s.output_len,
                computed_tokens: s.computed + lag,
                output_tokens: s.generated + lag,
                blocks: s.blocks.clone(),
                cached_blocks,
                preemptions: s.preemptions,
            }
        };
        let (step, batch) = match self.state {
            State::InFlight { start, end } => (Some((start, end)), self.batch_entries()),
            _ => (None, Vec::new()),
        };
        ReplicaSnapshot {
            now: self.now,
            step,
            batch,
            running: self.running.iter().map(|&s| view(s)).collect(),
            waiting: self
                .waiting
                .iter()
                .chain(self.pending.iter().map(|p| &p.1))
                .map(|&s| view(s))
                .collect(),
            block_size: self.cfg.scheduler.block_size,
            kv_blocks_total: self.pool.total(),
            kv_blocks_used: self.pool.num_used(),
            kv_bytes_per_block: self.cost.kv_bytes_per_token()
                * self.cfg.scheduler.block_size as f64,
        }
    }

    pub(super) fn batch_entries(&self) -> Vec<TraceEntry> {
        self.batch
            .iter()
            .map(|&(slot, new, prefill)| {
                let s = &self.seqs[slot as usize];
                TraceEntry {
                    id: s.id,
                    new_tokens: new,
                    context_len: s.computed + self.ff.lag() + new,
                    kind: if prefill {
                        TokenKind::Prefill
                    } else {
                        TokenKind::Decode
                    },
                    blocks: s.blocks.len() as u32,
                }
            })
            .collect()
    }
}
