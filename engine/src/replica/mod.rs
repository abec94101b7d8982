//! The replica simulator: a vLLM V1-style engine on one replica.
//!
//! [`Replica`] is the engine: a waiting queue, a running list, a paged KV cache and a
//! scheduler that composes one batch per step, with the step's duration from the one cost
//! model ([`CostModel::step_totals`]). It is driven by time: [`Replica::submit`] hands it a
//! request, [`Replica::advance_to`] runs every step that ends by a given time and reports what
//! happened as [`ReplicaEvent`]s. The fleet simulator drives many of these; [`sim::ReplicaSim`]
//! drives one from a workload and collects a [`sim::RunReport`].
//!
//! # The scheduler (vLLM V1)
//!
//! Each step mirrors `Scheduler.schedule()` in vLLM's `vllm/v1/core/sched/scheduler.py`:
//! 1. The token budget is `max_num_batched_tokens`. Running requests are visited first, in
//!    order. Each asks for the tokens it has not computed yet: one for a decode, the rest of
//!    the prompt for a partial prefill, capped by the budget left and by
//!    `long_prefill_token_threshold` when set (chunked prefill).
//! 2. Blocks are allocated for the new tokens (`KVCacheManager.allocate_slots` in
//!    `vllm/v1/core/kv_cache_manager.py`). When the pool is short, the most recently admitted
//!    running request (the end of the running list) is preempted by recompute: its blocks are
//!    freed, its computed tokens reset to zero, and it goes to the front of the waiting queue.
//!    This repeats until the allocation fits or the request itself was the one preempted.
//! 3. Only if nothing was preempted in this step, waiting requests are admitted first come,
//!    first served while budget and `max_num_seqs` allow, and only while the head of the
//!    queue's whole prompt (less its prefix hits) fits in the free blocks
//!    (`scheduler_reserve_full_isl`); just its first chunk is allocated. A prefix-cache hit
//!    skips the cached tokens; a prompt that is cached in full still computes its last token.
//!    With `chunked_prefill = false` (vLLM V0) whole prompts are admitted first, in a step of
//!    their own, and that step carries no decodes.
//! 4. Tokens are sampled at the end of the step. A request whose known tokens are all
//!    computed samples one token: the first one at the end of its last prefill chunk, then one
//!    per decode step. It finishes after `output_len` tokens and frees its blocks. A request
//!    preempted after producing tokens recomputes prompt and produced tokens, then continues
//!    (it does not produce those tokens again).
//!
//! The KV cache is [`kv`]: 16-token blocks by default, a free queue (blocks without a hash
//! reused first, cached ones in LRU order) and prefix caching by chained block hashes over the
//! prompt and the generated tokens, as in vLLM's `vllm/v1/core/block_pool.py`. Runs of
//! decode-only steps are fast-forwarded exactly ([`fast_forward`]).

mod events;
mod fast_forward;
pub mod kv;
pub mod metrics;
pub mod sim;

pub use events::{
    ReplicaEvent, ReplicaLoad, ReplicaMetrics, ReplicaSnapshot, SeqPhase, SeqSnapshot, StepTrace,
    TokenKind, TraceEntry,
};
pub use kv::KvAudit;
pub use sim::{
    OverloadReason, ReplicaSim, ReplicaSimConfig, RequestRecord, RunReport, SeriesPoint,
    SimSnapshot, Verdict, WorkLimits,
};

use crate::cost::{
    BatchItem, BatchTotals, CostModel, Deployment, Efficiency, MemoryConfig, StepCost,
};
use crate::error::ConfigError;
use crate::workload::Prompt;
use fast_forward::FastForward;
use kv::{for_each_block_hash, sequence_block_hashes, BlockPool};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The scheduler's knobs, named as in vLLM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SchedulerConfig {
    /// Token budget per step (vLLM's default for chunked prefill on large GPUs: 8192).
    pub max_num_batched_tokens: u32,
    /// Most sequences in one step (default 256).
    pub max_num_seqs: u32,
    /// Tokens per KV block (default 16).
    pub block_size: u32,
    /// Automatic prefix caching (on by default in vLLM V1).
    pub enable_prefix_caching: bool,
    /// 0 = off; else the largest prefill chunk one request may take in a step, applied to
    /// running and waiting requests alike, even to a request alone in the step.
    pub long_prefill_token_threshold: u32,
    /// Admit a waiting request only if its whole known sequence (prompt, and any tokens it
    /// produced before a preemption), less its prefix hits, fits in the free blocks now; only
    /// the first chunk is allocated (vLLM's `scheduler_reserve_full_isl`, on by default since
    /// spring 2026). Off: only the first chunk must fit, which lets chunked prefills over-admit
    /// and thrash.
    pub scheduler_reserve_full_isl: bool,
    /// Overlap the CPU's work for step n + 1 (scheduling, input preparation, detokenisation)
    /// with the GPU's work for step n (vLLM's `async_scheduling`, on by default since vLLM
    /// 0.14). Only its timing is modelled: every request's output length is known here, so the
    /// one step of slack vLLM keeps for a request that may stop early never arises.
    pub async_scheduling: bool,
    /// Chunked prefill, which vLLM V1 always does: a prompt may be split across steps, and a
    /// step carries prompt chunks beside the running requests' decodes. Off, the scheduler of
    /// vLLM before V1 without chunked prefill (the default there for models under 32K
    /// context): a step either prefills whole new prompts or decodes the running requests,
    /// never both, and prompts go first, so every prefill stalls every decode.
    pub chunked_prefill: bool,
}

/// Everything that defines one replica.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaConfig {
    pub deployment: Deployment,
    pub efficiency: Efficiency,
    pub memory: MemoryConfig,
    pub scheduler: SchedulerConfig,
    /// Forces the pool to this many blocks (tests, build-ups) instead of deriving it from memory.
    pub kv_blocks_override: Option<u32>,
    /// Steps kept in the per-step trace (the first ones, at most 100,000); 0 = none.
    pub trace_capacity: usize,
    /// Keep every token time per request (off for big runs).
    pub record_token_times: bool,
}

/// A request as the engine receives it.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineRequest {
    pub id: u64,
    pub prompt: Prompt,
    pub output_len: u32,
    pub tenant: u32,
}

/// One replica's engine.
#[derive(Clone, Debug)]
pub struct Replica {
    cfg: ReplicaConfig,
    /// `cfg.scheduler.block_size`, ready to divide by.
    bsz: kv::BlockSize,
    cost: CostModel,
    pool: BlockPool,
    seqs: Vec<Seq>,
    free_slots: Vec<u32>,
    running: Vec<u32>,
    waiting: VecDeque<u32>,
    /// Submitted for a time the engine has not reached, in arrival order.
    pending: VecDeque<(f64, u32)>,
    now: f64,
    state: State,
    /// The batch of the step in flight: (slot, new tokens, prefill?).
    batch: Vec<(u32, u32, bool)>,
    step_cost: StepCost,
    prefill_left: u64,
    metrics: ReplicaMetrics,
    /// Events produced by `submit`, handed out by the next `advance_to`.
    deferred: Vec<ReplicaEvent>,
    trace: Vec<StepTrace>,
    cur_trace: Option<StepTrace>,
    finished_token_times: Vec<(u64, Vec<f64>)>,
    scratch_blocks: Vec<u32>,
    /// The exact fast-forward's description of the running requests.
    ff: FastForward,
    /// `advance_to` stops once this many steps have run (a driver's work cap).
    step_limit: u64,
    /// Whether `metrics.itl` collects samples (a driver with its own ITL record turns it off).
    itl_samples: bool,
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Longest pool the simulator accepts, in blocks.
pub const MAX_KV_BLOCKS: u32 = 1 << 28;

impl Default for SchedulerConfig {
    /// What `vllm serve` picks on an H100 or H200 (see [`SchedulerConfig::for_gpu`]).
    fn default() -> Self {
        SchedulerConfig {
            max_num_batched_tokens: 8192,
            max_num_seqs: 1024,
            block_size: 16,
            enable_prefix_caching: true,
            long_prefill_token_threshold: 0,
            scheduler_reserve_full_isl: true,
            async_scheduling: true,
            chunked_prefill: true,
        }
    }
}

impl SchedulerConfig {
    /// The defaults `vllm serve` (the OpenAI API server) picks for a GPU, from
    /// `EngineArgs.get_batch_defaults` in vllm/engine/arg_utils.py: on a GPU with at least
    /// 70 GiB whose name does not contain "a100" (H100, H200, B200, MI300X), a token budget of
    /// 8,192 and 1,024 sequences; on an A100 and every smaller GPU, 2,048 and 256 (larger
    /// budgets slowed the A100 down, vLLM PR 17885).
    pub fn for_gpu(gpu: &crate::catalog::GpuSpec) -> SchedulerConfig {
        let large = gpu.reported_mem_bytes >= 70.0 * GIB && !gpu.id.contains("a100");
        let (max_num_batched_tokens, max_num_seqs) = if large { (8192, 1024) } else { (2048, 256) };
        SchedulerConfig {
            max_num_batched_tokens,
            max_num_seqs,
            ..SchedulerConfig::default()
        }
    }

    /// The token budget of one step.
    pub const MAX_NUM_BATCHED_TOKENS_RANGE: std::ops::RangeInclusive<u32> = 1..=1 << 20;
    /// The sequences one step may hold.
    pub const MAX_NUM_SEQS_RANGE: std::ops::RangeInclusive<u32> = 1..=65_536;

    pub fn validate(&self) -> Result<(), ConfigError> {
        let check = |field: &str, v: u32, min: u32, max: u32| {
            if v < min || v > max {
                Err(ConfigError::new(
                    field,
                    format!("must be {min} to {max}, got {v}"),
                ))
            } else {
                Ok(())
            }
        };
        let (budget, seqs) = (Self::MAX_NUM_BATCHED_TOKENS_RANGE, Self::MAX_NUM_SEQS_RANGE);
        check(
            "max_num_batched_tokens",
            self.max_num_batched_tokens,
            *budget.start(),
            *budget.end(),
        )?;
        check(
            "max_num_seqs",
            self.max_num_seqs,
            *seqs.start(),
            *seqs.end(),
        )?;
        check("block_size", self.block_size, 1, 1024)?;
        check(
            "long_prefill_token_threshold",
            self.long_prefill_token_threshold,
            0,
            1 << 20,
        )?;
        Ok(())
    }
}

impl ReplicaConfig {
    /// The seed problem's replica: Llama 3.1 8B in BF16 on one H100, as `vllm serve` runs it:
    /// the calibrated efficiencies, vLLM's memory split and its scheduler defaults for the GPU.
    pub fn seed() -> Self {
        let deployment = Deployment::seed();
        ReplicaConfig {
            scheduler: SchedulerConfig::for_gpu(&deployment.gpu),
            deployment,
            efficiency: Efficiency::CALIBRATED,
            memory: MemoryConfig::VLLM,
            kv_blocks_override: None,
            trace_capacity: 0,
            record_token_times: false,
        }
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.blocks_and_cost().map(|_| ())
    }

    /// The KV pool in blocks this configuration gives.
    pub fn kv_blocks(&self) -> Result<u32, ConfigError> {
        self.blocks_and_cost().map(|(b, _)| b)
    }

    fn blocks_and_cost(&self) -> Result<(u32, CostModel), ConfigError> {
        let cost = CostModel::new(self.deployment.clone(), self.efficiency)
            .map_err(|e| e.within("deployment"))?
            .with_async_scheduling(self.scheduler.async_scheduling);
        self.memory.validate().map_err(|e| e.within("memory"))?;
        self.scheduler
            .validate()
            .map_err(|e| e.within("scheduler"))?;
        if self.trace_capacity > 100_000 {
            return Err(ConfigError::new(
                "trace_capacity",
                format!("must be at most 100000, got {}", self.trace_capacity),
            ));
        }
        let bs = self.scheduler.block_size as f64;
        let blocks = match self.kv_blocks_override {
            Some(n) => {
                if n == 0 || n > MAX_KV_BLOCKS {
                    return Err(ConfigError::new(
                        "kv_blocks_override",
                        format!("must be 1 to {MAX_KV_BLOCKS}, got {n}"),
                    ));
                }
                n
            }
            None => {
                let b = (cost.kv_pool_tokens(&self.memory) / bs).floor();
                if b < 1.0 {
                    return Err(ConfigError::new(
                        "memory",
                        "the weights and the reserve leave no room for a KV cache: use more GPUs, a smaller model, or a higher gpu_memory_utilization",
                    ));
                }
                if b > MAX_KV_BLOCKS as f64 {
                    return Err(ConfigError::new(
                        "memory",
                        format!("a KV pool of {b} blocks is beyond the simulator's limit of {MAX_KV_BLOCKS}; raise block_size"),
                    ));
                }
                b as u32
            }
        };
        Ok((blocks, cost))
    }
}

/// A request inside the engine.
#[derive(Clone, Debug, Default)]
struct Seq {
    id: u64,
    tenant: u32,
    arrival: f64,
    prompt: Prompt,
    prompt_len: u32,
    output_len: u32,
    /// Tokens whose K and V are cached.
    computed: u32,
    /// Output tokens sampled.
    generated: u32,
    /// Sampled at least once since it was last (re)admitted: now one token per step.
    in_decode: bool,
    blocks: Vec<u32>,
    /// Chained hashes of the sequence's full blocks (computed once, when prefix caching is on;
    /// left empty for a fresh prompt, whose blocks no other request can hit).
    hashes: Vec<u64>,
    hashed: bool,
    /// Full blocks of the sequence, prompt and reply: `hashes.len()` once hashed (and what it
    /// would be for a fresh prompt).
    hash_blocks: u32,
    /// The prompt is fresh ([`Prompt::fresh`]): its blocks are cached out of the shared index.
    fresh: bool,
    /// A fresh prompt's blocks as it let them go when preempted, by block index (see
    /// `BlockPool::holder_of`): the hits its next admission may find.
    held: Vec<(u32, u32)>,
    /// Leading blocks registered in the prefix cache.
    num_cached: u32,
    preemptions: u32,
    admitted: bool,
    has_first_token: bool,
    last_token_time: f64,
    token_times: Vec<f64>,
    running: bool,
}

/// Which steps an advance to a time runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bound {
    /// Steps that end (or are due) at or before the time.
    Through,
    /// Steps that end (or are due) strictly before the time.
    Before,
}

/// How a waiting request's known tokens may be admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chunking {
    /// All at once or not at all (vLLM V0's separate prefill steps).
    Whole,
    /// Up to the step's budget and the long-prefill threshold (chunked prefill).
    Allowed,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// Nothing to do.
    Idle,
    /// A step is due at this time; its batch is composed when the engine reaches it, so every
    /// request submitted for that time or earlier joins it.
    StartAt(f64),
    InFlight {
        start: f64,
        end: f64,
    },
}

impl Seq {
    /// Tokens known (prompt + sampled) that are not yet in the KV cache.
    fn uncomputed(&self) -> u32 {
        self.prompt_len + self.generated - self.computed
    }
}

impl Replica {
    pub fn new(cfg: ReplicaConfig) -> Result<Replica, ConfigError> {
        let (blocks, cost) = cfg.blocks_and_cost()?;
        Ok(Replica {
            pool: BlockPool::new(blocks),
            cost,
            seqs: Vec::new(),
            free_slots: Vec::new(),
            running: Vec::new(),
            waiting: VecDeque::new(),
            pending: VecDeque::new(),
            now: 0.0,
            state: State::Idle,
            batch: Vec::new(),
            step_cost: StepCost::default(),
            prefill_left: 0,
            metrics: ReplicaMetrics::default(),
            deferred: Vec::new(),
            trace: Vec::new(),
            cur_trace: None,
            finished_token_times: Vec::new(),
            scratch_blocks: Vec::new(),
            ff: FastForward::default(),
            step_limit: u64::MAX,
            itl_samples: true,
            bsz: kv::BlockSize::new(cfg.scheduler.block_size),
            cfg,
        })
    }

    pub fn config(&self) -> &ReplicaConfig {
        &self.cfg
    }

    /// The engine receives `req` at time `t` (>= now; earlier times count as now). If the engine
    /// is idle, a step starts at `t`; otherwise the request waits for the next step boundary
    /// (continuous batching). A request the replica can never hold is rejected: see
    /// [`ReplicaEvent::Finished`].
    pub fn submit(&mut self, t: f64, req: EngineRequest) {
        let t = if t.is_finite() && t > self.now {
            t
        } else {
            self.now
        };
        self.metrics.submitted += 1;
        let prompt_len = req.prompt.len();
        let bs = self.cfg.scheduler.block_size as u64;
        // The last sampled token is never fed back, so it needs no KV slot: P prompt and O
        // output tokens occupy P + O - 1 slots at most (vLLM sizes `max_model_len` the same way).
        let need_blocks = (prompt_len as u64 + req.output_len as u64)
            .saturating_sub(1)
            .div_ceil(bs);
        if prompt_len == 0
            || req.output_len == 0
            || prompt_len as u64 + req.output_len as u64 > (u32::MAX / 2) as u64
            || need_blocks > self.pool.total() as u64
            // Without chunked prefill a prompt (and its recompute after a preemption) must fit
            // one step's budget; vLLM V0 then requires max_num_batched_tokens >= max_model_len.
            || (!self.cfg.scheduler.chunked_prefill
                && prompt_len as u64 + req.output_len as u64 - 1
                    > self.cfg.scheduler.max_num_batched_tokens as u64)
        {
            self.metrics.rejected += 1;
            self.deferred.push(ReplicaEvent::Finished {
                id: req.id,
                t,
                output_tokens: 0,
            });
            return;
        }
        let slot = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.seqs.push(Seq::default());
                (self.seqs.len() - 1) as u32
            }
        };
        let record = self.cfg.record_token_times;
        let s = &mut self.seqs[slot as usize];
        let mut blocks = std::mem::take(&mut s.blocks);
        let mut hashes = std::mem::take(&mut s.hashes);
        let mut held = std::mem::take(&mut s.held);
        let mut times = std::mem::take(&mut s.token_times);
        blocks.clear();
        hashes.clear();
        held.clear();
        times.clear();
        if record {
            times.reserve(req.output_len.min(1 << 16) as usize);
        }
        *s = Seq {
            id: req.id,
            tenant: req.tenant,
            arrival: t,
            prompt_len,
            output_len: req.output_len,
            fresh: req.prompt.fresh,
            prompt: req.prompt,
            blocks,
            hashes,
            held,
            token_times: times,
            ..Seq::default()
        };
        self.prefill_left += prompt_len as u64;
        // Keep `pending` in arrival order; equal times keep submission order.
        let pos = if self.pending.back().is_none_or(|b| b.0 <= t) {
            self.pending.len()
        } else {
            self.pending.partition_point(|p| p.0 <= t)
        };
        self.pending.insert(pos, (t, slot));
        match self.state {
            State::Idle => self.state = State::StartAt(t),
            State::StartAt(s) if t < s => self.state = State::StartAt(t),
            _ => {}
        }
    }

    pub fn now(&self) -> f64 {
        self.now
    }

    /// Hands over events produced outside a step (rejections at submission) without advancing.
    /// `advance_to` and `process_next` hand them over too.
    pub fn drain_events(&mut self, events: &mut Vec<ReplicaEvent>) {
        events.append(&mut self.deferred);
    }

    /// End time of the step in flight, or the start of the next step when one is due but its
    /// batch is not composed yet; None when idle with nothing queued.
    pub fn next_event_time(&self) -> Option<f64> {
        match self.state {
            State::Idle => None,
            State::StartAt(t) => Some(t),
            State::InFlight { end, .. } => Some(end),
        }
    }

    /// Runs every step that ends at or before `t`, appending events in time order; then now = t.
    /// A step due at or before `t` is composed (and its admissions reported) too, so requests
    /// submitted for time `t` after this call wait for the following step; submit every request
    /// of time `t` before advancing to `t` if they should share a step.
    ///
    /// Runs of decode-only steps are fast-forwarded exactly (see [`Replica::process_next`] for
    /// the one-step-at-a-time path; a test checks both give identical results).
    pub fn advance_to(&mut self, t: f64, events: &mut Vec<ReplicaEvent>) {
        self.advance(t, Bound::Through, events);
    }

    /// Like [`Replica::advance_to`], but only for steps that end strictly before `t` and steps
    /// due strictly before `t`: a request submitted at `t` afterwards joins a step starting at `t`.
    pub fn advance_before(&mut self, t: f64, events: &mut Vec<ReplicaEvent>) {
        self.advance(t, Bound::Before, events);
    }

    fn advance(&mut self, t: f64, bound: Bound, events: &mut Vec<ReplicaEvent>) {
        events.append(&mut self.deferred);
        if t.is_nan() {
            return;
        }
        while let Some(next) = self.next_event_time() {
            if next > t
                || (bound == Bound::Before && next == t)
                || self.metrics.steps >= self.step_limit
            {
                break;
            }
            if let State::StartAt(s) = self.state {
                if self.fast_forward(s, t, bound, events) {
                    continue;
                }
            }
            self.process_next(events);
        }
        if t > self.now && t.is_finite() {
            self.now = t;
        }
    }

    /// Makes `advance_to` and `advance_before` stop once `limit` steps have run in total, so a
    /// driver's work cap lands on the same step whether or not runs are fast-forwarded.
    /// `process_next` ignores it.
    pub fn set_step_limit(&mut self, limit: u64) {
        self.step_limit = limit;
    }

    /// Stops (or restarts) collecting exact ITL samples in [`ReplicaMetrics::itl`], for a
    /// driver that records ITL itself: the fleet keeps its own per-hop distributions, and a
    /// replica's millions of samples an hour would cost it time and memory for nothing.
    pub fn set_itl_samples(&mut self, on: bool) {
        self.itl_samples = on;
    }

    /// Processes the next thing due (compose a step, or end the step in flight), whatever its
    /// time; returns false when idle. This is one unit of "work" for a frame loop.
    pub fn process_next(&mut self, events: &mut Vec<ReplicaEvent>) -> bool {
        events.append(&mut self.deferred);
        match self.state {
            State::Idle => false,
            State::StartAt(s) => {
                self.compose(s, events);
                true
            }
            State::InFlight { start, end } => {
                self.finish_step(start, end, events);
                true
            }
        }
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
            .sum();
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

    fn batch_entries(&self) -> Vec<TraceEntry> {
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

    /// Composes the step starting at `start` (vLLM's `Scheduler.schedule()`).
    fn compose(&mut self, start: f64, events: &mut Vec<ReplicaEvent>) {
        self.settle();
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
        let mut preempted = false;

        // Without chunked prefill (vLLM V0), whole new prompts go first, in a step of their own.
        let separate = !sc.chunked_prefill;
        let prefill_only = separate
            && self.admit_waiting(&mut budget, Chunking::Whole, start, events, &mut totals) > 0;

        // Running requests first, in order.
        let mut i = 0;
        while !prefill_only && i < self.running.len() && budget > 0 {
            let slot = self.running[i];
            let s = &self.seqs[slot as usize];
            let mut new = s.uncomputed();
            if threshold > 0 && new > threshold {
                new = threshold;
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
            self.batch.push((slot, new, prefill));
            totals.add(BatchItem {
                new_tokens: new,
                context_len: target,
            });
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

    /// Ensures `slot` has blocks for `target` tokens, registering newly full blocks (prompt or
    /// generated tokens) in the prefix cache, as vLLM's `allocate_slots` caches up to
    /// `num_computed_tokens + num_new_tokens`. False, changing nothing, when the pool is short.
    fn allocate(&mut self, slot: u32, target: u32) -> bool {
        let bsz = self.bsz;
        let s = &mut self.seqs[slot as usize];
        let have = s.blocks.len() as u32;
        let need = bsz.holding(target).saturating_sub(have);
        if need > 0 && !self.pool.allocate(need, &mut s.blocks) {
            return false;
        }
        if self.cfg.scheduler.enable_prefix_caching {
            let full = bsz.full(target).min(s.hash_blocks);
            if full > s.num_cached {
                let run = s.num_cached as usize..full as usize;
                if s.fresh {
                    self.pool.cache_private(&s.blocks, &s.held, run);
                } else {
                    self.pool.cache_run(&s.blocks, &s.hashes, run);
                }
                s.num_cached = full;
            }
        }
        true
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
        while *budget > 0 && self.running.len() < max_seqs {
            let Some(&slot) = self.waiting.front() else {
                break;
            };
            let Some(new) = self.admit(slot, *budget, threshold, chunking) else {
                break;
            };
            self.waiting.pop_front();
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
        let mut new = total - cached;
        if chunking == Chunking::Whole && new > budget {
            return None;
        }
        if threshold > 0 && new > threshold {
            new = threshold;
        }
        new = new.min(budget);
        let target = cached + new;
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
        s.blocks.clear();
        s.blocks.extend_from_slice(&self.scratch_blocks);
        s.num_cached = hit;
        s.computed = cached;
        self.metrics.prefix_query_tokens += s.prompt_len as u64;
        self.metrics.prefix_hit_tokens += cached.min(s.prompt_len) as u64;
        self.prefill_left -= cached as u64;
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

    /// Ends the step in flight: computes its tokens, samples, finishes requests, and schedules
    /// the next step.
    fn finish_step(&mut self, start: f64, end: f64, events: &mut Vec<ReplicaEvent>) {
        if self.ff.take_fast_finish() {
            self.finish_fast_forwarded(start, end, events);
            return;
        }
        self.settle();
        self.ff.invalidate();
        self.now = end;
        let dur = end - start;
        let returned0 = self.pool.returned;
        let mut decode_tokens = 0u32;
        let mut prefill_tokens = 0u32;
        let mut first_tokens = 0u32;
        let mut same_itl = 0u64;
        let mut any_finished = false;
        let record = self.cfg.record_token_times;
        for k in 0..self.batch.len() {
            let (slot, new, prefill) = self.batch[k];
            let s = &mut self.seqs[slot as usize];
            s.computed += new;
            if prefill {
                prefill_tokens += new;
            }
            if s.computed < s.prompt_len + s.generated {
                continue;
            }
            // Every known token is computed: sample the next one.
            s.generated += 1;
            s.in_decode = true;
            if s.has_first_token {
                decode_tokens += 1;
                if s.last_token_time == start {
                    same_itl += 1;
                } else {
                    if self.itl_samples {
                        self.metrics.itl.push(end - s.last_token_time);
                    }
                }
            } else {
                s.has_first_token = true;
                first_tokens += 1;
                events.push(ReplicaEvent::FirstToken { id: s.id, t: end });
                if let Some(tr) = self.cur_trace.as_mut() {
                    tr.first_tokens.push(s.id);
                }
            }
            s.last_token_time = end;
            if record {
                s.token_times.push(end);
            }
            if s.generated >= s.output_len {
                any_finished = true;
                s.running = false;
                self.pool.release_table(&s.blocks);
                s.blocks.clear();
                self.metrics.finished += 1;
                self.metrics.finished_prompt_tokens += s.prompt_len as u64;
                events.push(ReplicaEvent::Finished {
                    id: s.id,
                    t: end,
                    output_tokens: s.generated,
                });
                if let Some(tr) = self.cur_trace.as_mut() {
                    tr.finished.push(s.id);
                }
                if record {
                    let times = std::mem::take(&mut s.token_times);
                    self.finished_token_times.push((s.id, times));
                }
                s.prompt = Prompt::default();
                self.free_slots.push(slot);
            }
        }
        if self.itl_samples {
            self.metrics.itl.push_n(dur, same_itl);
        }
        if any_finished {
            let seqs = &self.seqs;
            self.running.retain(|&s| seqs[s as usize].running);
        }
        self.metrics.steps += 1;
        self.metrics.busy_time_s += dur;
        self.metrics.prefill_tokens += prefill_tokens as u64;
        self.metrics.decode_tokens += (self.batch.len() as u64)
            .saturating_sub(self.batch.iter().filter(|b| b.2).count() as u64);
        self.metrics.output_tokens += (decode_tokens + first_tokens) as u64;
        let running = self.running.len() as u32;
        let waiting = (self.waiting.len() + self.pending.len()) as u32;
        let kv_blocks_used = self.pool.num_used();
        events.push(ReplicaEvent::StepEnd {
            t: end,
            duration: dur,
            decode_tokens,
            prefill_tokens,
            first_tokens,
            running,
            waiting,
            kv_blocks_used,
        });
        if let Some(mut tr) = self.cur_trace.take() {
            tr.blocks_freed += (self.pool.returned - returned0) as u32;
            tr.kv_blocks_used = kv_blocks_used;
            tr.running = running;
            tr.waiting = waiting;
            self.trace.push(tr);
        }
        self.batch.clear();
        self.state = if !self.running.is_empty() || !self.waiting.is_empty() {
            State::StartAt(end)
        } else if let Some(&(t, _)) = self.pending.front() {
            State::StartAt(t.max(end))
        } else {
            State::Idle
        };
    }

    /// Cancels request `id` at time `t` (a client gave up), as vLLM aborts a request whose
    /// client disconnected; the driver advances the engine to `t` first. Only a request that
    /// holds no blocks can be cancelled here: one submitted but not yet queued, or one waiting
    /// (never admitted, or preempted). It leaves without an event. Returns false, changing
    /// nothing, when the engine does not hold `id` or is running it (a running request keeps
    /// its place in the step in flight and finishes as usual).
    pub fn cancel(&mut self, id: u64, t: f64) -> bool {
        let seqs = &self.seqs;
        let slot = if let Some(i) = self.waiting.iter().position(|&s| seqs[s as usize].id == id) {
            self.waiting.remove(i)
        } else if let Some(i) = self
            .pending
            .iter()
            .position(|&(_, s)| seqs[s as usize].id == id)
        {
            self.pending.remove(i).map(|(_, s)| s)
        } else {
            None
        };
        let Some(slot) = slot else {
            return false;
        };
        let s = &mut self.seqs[slot as usize];
        // A queued request holds no blocks and counts all its known tokens as unprefilled.
        self.prefill_left -= s.uncomputed() as u64;
        s.prompt = Prompt::default();
        s.running = false;
        self.free_slots.push(slot);
        if let State::StartAt(_) = self.state {
            if self.running.is_empty() && self.waiting.is_empty() {
                self.state = match self.pending.front() {
                    Some(&(p, _)) => State::StartAt(p.max(t).max(self.now)),
                    None => State::Idle,
                };
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Arrival, LengthDist, RequestStream, WorkloadConfig};

    /// One way of driving a replica through a workload, checked against another.
    struct FineSyncCase {
        block_size: u32,
        kv_blocks: Option<u32>,
        caching: bool,
        rate: f64,
        /// Time between the driver's looks at the replica, as the fleet's routing syncs.
        sync_every_s: f64,
        /// Whether whole steps fit between looks (otherwise every step is composed in flight
        /// by the fast-forward and ended by the fast finish, and none is fast-forwarded).
        whole_steps_between_looks: bool,
    }

    /// Drives two identical replicas through the same arrivals, looking at both every
    /// `sync_every_s`: one with `advance_before` (fast-forward, in-flight composition, fast
    /// finishes), one with `process_next` alone. Everything a driver can see must agree at
    /// every look.
    fn check_fine_syncs(c: &FineSyncCase) {
        let mut cfg = ReplicaConfig::seed();
        cfg.scheduler.block_size = c.block_size;
        cfg.scheduler.enable_prefix_caching = c.caching;
        cfg.kv_blocks_override = c.kv_blocks;
        let mut fast = Replica::new(cfg.clone()).unwrap();
        let mut slow = Replica::new(cfg.clone()).unwrap();
        // As `fast`, without ITL samples (as the fleet drives it): nothing else may differ.
        let mut quiet = Replica::new(cfg).unwrap();
        quiet.set_itl_samples(false);
        let mut ev_quiet = Vec::new();
        let workload = WorkloadConfig {
            arrival: Arrival::Poisson { rate: c.rate },
            prompt_len: LengthDist::Uniform { min: 20, max: 900 },
            output_len: LengthDist::Uniform { min: 1, max: 300 },
            duration_s: 20.0,
            ..WorkloadConfig::seed_replica()
        };
        let mut arrivals = RequestStream::new(&workload).unwrap().peekable();
        let (mut ev_fast, mut ev_slow) = (Vec::new(), Vec::new());
        let mut t = 0.0;
        let mut looks = 0;
        while t < 40.0 {
            t += c.sync_every_s;
            while let Some(req) = arrivals.next_if(|r| r.arrival <= t) {
                for r in [&mut fast, &mut slow, &mut quiet] {
                    r.submit(
                        req.arrival,
                        EngineRequest {
                            id: req.id,
                            prompt: req.prompt.clone(),
                            output_len: req.output_len,
                            tenant: req.tenant,
                        },
                    );
                }
            }
            fast.advance_before(t, &mut ev_fast);
            quiet.advance_before(t, &mut ev_quiet);
            assert_eq!(ev_fast, ev_quiet, "events without ITL samples by t = {t}");
            slow.drain_events(&mut ev_slow);
            while slow.next_event_time().is_some_and(|n| n < t) {
                slow.process_next(&mut ev_slow);
            }
            slow.advance_before(t, &mut ev_slow);
            assert_eq!(ev_fast, ev_slow, "events by t = {t}");
            assert_eq!(fast.load(), slow.load(), "load at t = {t}");
            assert_eq!(fast.snapshot(), slow.snapshot(), "snapshot at t = {t}");
            assert_eq!(fast.metrics().steps, slow.metrics().steps);
            looks += 1;
        }
        assert_eq!(
            fast.metrics().fast_forward_steps > 0,
            c.whole_steps_between_looks,
            "whole steps fast-forwarded between looks"
        );
        assert!(looks > 100);
        let (mf, ms) = (fast.metrics(), slow.metrics());
        assert_eq!(mf.itl.clone().summary(), ms.itl.clone().summary());
        assert!(!mf.itl.is_empty() && quiet.metrics().itl.is_empty());
        assert_eq!(quiet.snapshot(), fast.snapshot());
        assert_eq!(
            (
                mf.busy_time_s,
                mf.decode_tokens,
                mf.preemptions,
                mf.prefix_hit_tokens
            ),
            (
                ms.busy_time_s,
                ms.decode_tokens,
                ms.preemptions,
                ms.prefix_hit_tokens
            )
        );
        assert!(fast.audit().consistent && slow.audit().consistent);
    }

    #[test]
    fn fine_grained_syncs_see_what_single_steps_see() {
        let cases = [
            // The seed replica looked at every 20 ms, as the seed fleet's routing does.
            FineSyncCase {
                block_size: 16,
                kv_blocks: None,
                caching: true,
                rate: 6.25,
                sync_every_s: 0.02,
                whole_steps_between_looks: true,
            },
            // Odd block size, looks shorter than a step, no prefix caching.
            FineSyncCase {
                block_size: 5,
                kv_blocks: None,
                caching: false,
                rate: 4.0,
                sync_every_s: 0.003,
                whole_steps_between_looks: false,
            },
            // A small pool: fast-forwards stop where blocks run out, and preemptions happen.
            FineSyncCase {
                block_size: 16,
                kv_blocks: Some(400),
                caching: true,
                rate: 8.0,
                sync_every_s: 0.011,
                whole_steps_between_looks: true,
            },
        ];
        for c in &cases {
            check_fine_syncs(c);
        }
    }
}
