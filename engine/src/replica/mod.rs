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
//!
//! This file holds the configuration, the engine's state and its driving API (submit, advance,
//! cancel); `scheduler.rs` composes a step's batch, `step_end.rs` ends it (sampling, finishes,
//! metrics), and `reporting.rs` answers what a driver reads (load, snapshot, audit).

mod events;
mod fast_forward;
pub mod kv;
pub mod lora;
pub mod metrics;
mod reporting;
mod scheduler;
pub mod sim;
pub mod spec;
mod spec_step;
mod step_end;

pub use events::{
    ReplicaEvent, ReplicaLoad, ReplicaMetrics, ReplicaSnapshot, SeqPhase, SeqSnapshot, StepTrace,
    TokenKind, TraceEntry,
};
pub use kv::KvAudit;
pub use sim::{
    OverloadReason, ReplicaSim, ReplicaSimConfig, RequestRecord, RunReport, SeriesPoint,
    SimSnapshot, Verdict, WorkLimits,
};

use crate::cost::{BatchTotals, CostModel, Deployment, Efficiency, MemoryConfig, StepCost};
use crate::error::ConfigError;
use crate::workload::Prompt;
use fast_forward::FastForward;
use kv::BlockPool;
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
    /// GiB of host memory for the KV cache (vLLM's `--kv-offloading-size`; 0, the default:
    /// none). Cached blocks the GPU evicts are kept there, least recently used dropped first,
    /// and a prefix found there is copied back over PCIe when that is quicker than computing
    /// it again. vLLM loads them asynchronously, the request waiting; here the copy is added
    /// to the step that takes the request in, so the requests beside it wait too.
    pub kv_offloading_size: f64,
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
    /// Speculative decoding (off when absent).
    #[serde(default)]
    pub speculative: Option<spec::SpeculativeConfig>,
    /// LoRA adapters, one per tenant (off when absent): see [`lora`].
    #[serde(default)]
    pub lora: Option<lora::LoraConfig>,
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
    /// Speculative decoding's proposer, when it is on.
    proposer: Option<spec::Proposer>,
    /// The step in flight was composed by `compose_speculating`, which ends it.
    spec_step: bool,
    /// The tokens that step verifies (its requests' own and their guesses).
    spec_tokens: u64,
    /// Scratch for `finish_speculating`: the slots of the requests that finished.
    spec_finished: Vec<u32>,
    /// Seconds of copies from host memory the step being composed carries.
    reload_pending: f64,
    /// Block tables of finished requests whose KV cache another replica is still to pull
    /// (see [`Replica::submit_holding_kv`]), by request id.
    held_kv: Vec<(u64, Vec<u32>)>,
    /// The adapters in GPU slots and host memory, when the replica serves LoRA adapters.
    adapters: Option<lora::Adapters>,
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
            kv_offloading_size: 0.0,
        }
    }
}

impl SchedulerConfig {
    /// GiB of host memory a replica's KV cache may use.
    pub const KV_OFFLOADING_SIZE_RANGE: std::ops::RangeInclusive<f64> = 0.0..=16_384.0;

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
        crate::error::check_in(
            "kv_offloading_size",
            self.kv_offloading_size,
            &Self::KV_OFFLOADING_SIZE_RANGE,
        )?;
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
            speculative: None,
            lora: None,
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

    /// The proposer speculative decoding runs, if it is on.
    fn proposer(&self) -> Result<Option<spec::Proposer>, ConfigError> {
        self.speculative
            .as_ref()
            .map(|s| {
                spec::Proposer::new(s, &self.deployment, &self.efficiency)
                    .map_err(|e| e.within("speculative"))
            })
            .transpose()
    }

    fn blocks_and_cost(&self) -> Result<(u32, CostModel), ConfigError> {
        let cost = CostModel::new(self.deployment.clone(), self.efficiency)
            .map_err(|e| e.within("deployment"))?
            .with_async_scheduling(self.scheduler.async_scheduling);
        self.memory.validate().map_err(|e| e.within("memory"))?;
        let proposer = self.proposer()?;
        self.scheduler
            .validate()
            .map_err(|e| e.within("scheduler"))?;
        if let Some(l) = &self.lora {
            l.validate().map_err(|e| e.within("lora"))?;
            if self.speculative.is_some() {
                return Err(ConfigError::new(
                    "lora",
                    "adapters and speculative decoding together are not simulated: turn one off",
                ));
            }
        }
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
                // A proposer's weights and cache share the memory with the target's.
                // So do the adapters' GPU slots, each sized for an adapter of the largest rank.
                let tokens = match (proposer, &self.lora) {
                    (Some(p), _) => spec::pool_tokens(&cost, &self.memory, &p),
                    (None, Some(l)) => cost.kv_pool_tokens_less(
                        &self.memory,
                        l.max_loras as f64 * cost.lora_adapter_bytes(l.max_lora_rank),
                    ),
                    (None, None) => cost.kv_pool_tokens(&self.memory),
                };
                let b = (tokens / bs).floor();
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
    /// Leading prompt tokens whose KV arrives with the request, computed elsewhere (see
    /// [`Replica::submit_with_kv`]).
    external: u32,
    /// Its blocks outlive it until [`Replica::release_kv`] (see
    /// [`Replica::submit_holding_kv`]).
    hold_kv: bool,
    admitted: bool,
    /// Passed over at admission once because its adapter was one too many for the step.
    passed_over: bool,
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
        let proposer = cfg.proposer()?;
        let mut pool = BlockPool::new(blocks);
        let host_gib = cfg.scheduler.kv_offloading_size;
        if host_gib > 0.0 {
            let block_bytes = cost.kv_bytes_per_token() * cfg.scheduler.block_size as f64;
            let host_blocks = (host_gib * GIB / block_bytes)
                .floor()
                .min(MAX_KV_BLOCKS as f64);
            pool.host = Some(kv::HostTier::new(host_blocks as u32));
        }
        Ok(Replica {
            adapters: cfg.lora.clone().map(lora::Adapters::new),
            proposer,
            reload_pending: 0.0,
            held_kv: Vec::new(),
            pool,
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
            spec_step: false,
            spec_tokens: 0,
            spec_finished: Vec::new(),
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
        self.submit_with_kv(t, req, 0);
    }

    /// Like [`Replica::submit`], for a disaggregated prefill: when the request finishes, its
    /// blocks stay allocated (its KV cache is still to be pulled by its decode replica) until
    /// [`Replica::release_kv`], as vLLM's prefill instance delays freeing them until the pull
    /// is done.
    pub fn submit_holding_kv(&mut self, t: f64, req: EngineRequest) {
        self.enqueue(t, req, 0, true);
    }

    /// Frees the blocks a finished request held for its KV cache's transfer (see
    /// [`Replica::submit_holding_kv`]) at time `t` (the driver advances the engine to `t`
    /// first). A step waiting for blocks can then start. False when it holds none for `id`.
    pub fn release_kv(&mut self, id: u64, t: f64) -> bool {
        let Some(i) = self.held_kv.iter().position(|h| h.0 == id) else {
            return false;
        };
        let (_, blocks) = self.held_kv.swap_remove(i);
        self.pool.release_table(&blocks);
        if self.state == State::Idle && !self.waiting.is_empty() {
            self.state = State::StartAt(t.max(self.now));
        }
        true
    }

    /// Blocks held for transfers not yet done.
    pub fn held_kv_blocks(&self) -> u32 {
        self.held_kv.iter().map(|h| h.1.len() as u32).sum()
    }

    /// Like [`Replica::submit`], for a request whose first `kv_tokens` prompt tokens were
    /// computed on another replica (a disaggregated prefill) and arrive with it: on its
    /// admission they take blocks but no compute, so its first step computes only what is
    /// left (vLLM's decode instance with a KV connector recomputes at least the last prompt
    /// token, which samples the reply's first token). After a preemption they are recomputed.
    pub fn submit_with_kv(&mut self, t: f64, req: EngineRequest, kv_tokens: u32) {
        self.enqueue(t, req, kv_tokens, false);
    }

    /// Every submission: `kv_tokens` leading tokens computed elsewhere, and whether its
    /// blocks outlive it (`hold_kv`).
    fn enqueue(&mut self, t: f64, req: EngineRequest, kv_tokens: u32, hold_kv: bool) {
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
            external: kv_tokens,
            hold_kv,
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
            let state = self.state;
            match state {
                State::StartAt(s)
                    if self.fast_forward(s, t, bound, events) || self.compose_speculating(s) =>
                {
                    continue;
                }
                // A speculating step ends, and the next one, due at once, may be composed
                // with it.
                State::InFlight { start, end } if self.spec_step => {
                    self.spec_step = false;
                    self.finish_speculating(start, end, true, events);
                    continue;
                }
                _ => {}
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

    /// Cancels request `id` at time `t` (its client disconnected), as vLLM aborts a request
    /// whose client went away; the driver advances the engine to `t` first. A request
    /// submitted but not yet queued, or waiting (never admitted, or preempted), leaves its
    /// queue. A running request leaves the running list and gives its blocks back at once:
    /// the next step neither schedules it nor finds its blocks taken. When it is in the step
    /// in flight, that step's work for it is done and lost (the step's time is already
    /// spent) and nothing more is reported for it. A cancelled request leaves without an
    /// event. Returns false, changing nothing, when the engine does not hold `id`.
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
            return self.cancel_running(id, t);
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
        self.metrics.cancelled += 1;
        self.idle_if_empty(t);
        true
    }

    /// [`Replica::cancel`] of a running request.
    fn cancel_running(&mut self, id: u64, t: f64) -> bool {
        let seqs = &self.seqs;
        let Some(i) = self
            .running
            .iter()
            .position(|&s| seqs[s as usize].id == id && seqs[s as usize].running)
        else {
            return false;
        };
        // The fast-forward's lag is written out and its description dropped: the running
        // list changes one request at a time from here (a fast step in flight then ends the
        // ordinary way, over the batch it composed).
        self.settle();
        self.ff.reset();
        let slot = self.running.remove(i);
        let in_flight = matches!(self.state, State::InFlight { .. });
        let mut scheduled = 0u32;
        if in_flight {
            if let Some(k) = self.batch.iter().position(|b| b.0 == slot) {
                let (_, new, prefill) = self.batch.remove(k);
                if prefill {
                    scheduled = new;
                }
                if self.spec_step {
                    self.spec_tokens -= new as u64;
                }
            }
        }
        let s = &mut self.seqs[slot as usize];
        if !s.in_decode {
            // Its prompt tokens not yet scheduled leave the prefill queue.
            self.prefill_left -= (s.uncomputed() - scheduled) as u64;
        }
        self.metrics.cancelled += 1;
        self.metrics.cancelled_running += 1;
        self.metrics.cancelled_output_tokens += s.generated as u64;
        self.metrics.cancelled_blocks += s.blocks.len() as u64;
        self.drop_seq(slot);
        self.idle_if_empty(t);
        true
    }

    /// Lets the request in `slot` go without a word: its blocks back to the pool, its slot
    /// free.
    fn drop_seq(&mut self, slot: u32) {
        let s = &mut self.seqs[slot as usize];
        self.pool.release_table(&s.blocks);
        s.blocks.clear();
        s.running = false;
        s.token_times.clear();
        s.prompt = Prompt::default();
        self.free_slots.push(slot);
    }

    /// The replica fails at `t` (its GPU or its process dies): every request it holds is lost
    /// with it, and their ids are returned (running first, then waiting, then submitted and
    /// not yet queued). The step in flight never ends; the replica is left empty and idle,
    /// its counters as they were, and reports nothing more for those requests.
    pub fn fail(&mut self, t: f64) -> Vec<u64> {
        self.settle();
        self.ff.reset();
        self.spec_step = false;
        self.batch.clear();
        self.deferred.clear();
        self.cur_trace = None;
        let mut ids = Vec::new();
        for (_, blocks) in std::mem::take(&mut self.held_kv) {
            self.pool.release_table(&blocks);
        }
        let running = std::mem::take(&mut self.running);
        let waiting: Vec<u32> = self.waiting.drain(..).collect();
        let pending: Vec<u32> = self.pending.drain(..).map(|(_, s)| s).collect();
        for slot in running.into_iter().chain(waiting).chain(pending) {
            ids.push(self.seqs[slot as usize].id);
            self.drop_seq(slot);
        }
        self.prefill_left = 0;
        self.now = self.now.max(t);
        self.state = State::Idle;
        ids
    }

    /// Between steps with nothing left to run or admit, the next step waits for the next
    /// submission.
    fn idle_if_empty(&mut self, t: f64) {
        if let State::StartAt(_) = self.state {
            if self.running.is_empty() && self.waiting.is_empty() {
                self.state = match self.pending.front() {
                    Some(&(p, _)) => State::StartAt(p.max(t).max(self.now)),
                    None => State::Idle,
                };
            }
        }
    }
}

#[cfg(test)]
mod tests;
