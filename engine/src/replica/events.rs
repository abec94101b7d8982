//! What a replica reports: its events, its load, its counters, its per-step trace and its
//! snapshot. Re-exported from [`crate::replica`].

use crate::cost::StepCost;
use crate::stats::Samples;
use serde::{Deserialize, Serialize};

/// Something that happened in the engine, in time order.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ReplicaEvent {
    /// First scheduled (start of its first step).
    Admitted { id: u64, t: f64 },
    /// End of its last prefill chunk.
    FirstToken { id: u64, t: f64 },
    /// All output tokens produced and blocks freed. A request the replica can never hold (its
    /// prompt plus output exceed the whole KV pool, or it asks for no tokens) is rejected at
    /// submission: it "finishes" then with `output_tokens: 0`.
    Finished { id: u64, t: f64, output_tokens: u32 },
    /// Preempted by recompute (start of the step that needed its blocks).
    Preempted { id: u64, t: f64 },
    /// One engine step ended. ITL samples for this step = `duration` weighted by `decode_tokens`
    /// (tokens emitted by sequences that already had their first token).
    StepEnd {
        t: f64,
        duration: f64,
        decode_tokens: u32,
        prefill_tokens: u32,
        first_tokens: u32,
        running: u32,
        waiting: u32,
        kv_blocks_used: u32,
    },
}

/// What a router or an autoscaler can read from a replica at any moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplicaLoad {
    pub running: u32,
    /// Waiting for admission (including requests submitted for a future time).
    pub waiting: u32,
    /// Running + waiting.
    pub outstanding: u32,
    /// Prompt tokens not yet prefilled (waiting + partial), including tokens to recompute
    /// after a preemption.
    pub queued_prompt_tokens: u64,
    pub kv_blocks_used: u32,
    pub kv_blocks_total: u32,
    /// A step is in flight.
    pub busy: bool,
}

/// Counters over the replica's life.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplicaMetrics {
    pub steps: u64,
    /// Seconds with a step in flight.
    pub busy_time_s: f64,
    pub submitted: u64,
    pub finished: u64,
    /// Requests refused at submission (see [`ReplicaEvent::Finished`]).
    pub rejected: u64,
    pub preemptions: u64,
    /// Prompt tokens looked up in the prefix cache at admission.
    pub prefix_query_tokens: u64,
    /// Of those, tokens found cached (skipped).
    pub prefix_hit_tokens: u64,
    /// Prompt tokens whose KV arrived computed from another replica (a disaggregated
    /// prefill's), beyond the prefix hits.
    pub transferred_tokens: u64,
    /// Host-memory tier: tokens found there past the GPU's prefix hits and copied back, and
    /// those found there but computed again because that was quicker; the seconds the copies
    /// took and the compute they saved (net of the copies).
    pub host_hit_tokens: u64,
    pub host_recomputed_tokens: u64,
    pub reload_s: f64,
    pub reload_saved_s: f64,
    /// LoRA adapters: copies into a GPU slot, and of those, adapters read from storage first;
    /// the seconds the loads added to steps and the seconds of the adapters' kernels; requests
    /// passed over at least once because their adapter would have been one too many for a step.
    pub lora_loads: u64,
    pub lora_storage_loads: u64,
    pub lora_load_s: f64,
    pub lora_kernel_s: f64,
    pub lora_passed_over: u64,
    /// Tokens run through the model as prefill, recomputation included.
    pub prefill_tokens: u64,
    /// Tokens run through the model as decodes.
    pub decode_tokens: u64,
    /// Output tokens sampled.
    pub output_tokens: u64,
    /// Prompt tokens of finished requests.
    pub finished_prompt_tokens: u64,
    /// Exact inter-token latencies: time from a request's previous token to its next one
    /// (empty when the driver turned them off with
    /// [`Replica::set_itl_samples`](super::Replica::set_itl_samples)).
    pub itl: Samples,
    /// Steps not kept in the trace because it was full.
    pub trace_dropped: u64,
    /// Steps run by the exact fast-forward over decode-only runs (included in `steps`).
    pub fast_forward_steps: u64,
    /// Speculating decode steps composed and ended by the one-pass path (included in `steps`).
    pub spec_fast_steps: u64,
    /// Speculative decoding: guesses verified, and of those, accepted.
    pub spec_proposed: u64,
    pub spec_accepted: u64,
    /// Verifications: one for each decoding request in each step that checked its guesses.
    pub spec_verifies: u64,
    /// Requests cancelled (their client left), whatever their phase, and of those the ones
    /// cancelled while running: their blocks went back to the pool at once.
    pub cancelled: u64,
    pub cancelled_running: u64,
    /// Output tokens the cancelled running requests had sampled: work nobody read in full.
    pub cancelled_output_tokens: u64,
    /// Blocks the cancelled running requests held when they were freed.
    pub cancelled_blocks: u64,
}

/// Whether a request's tokens in a step are prompt (or recomputation) or a decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenKind {
    Prefill,
    Decode,
}

/// One request's share of a step.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceEntry {
    pub id: u64,
    pub new_tokens: u32,
    /// Tokens in its KV cache after the step.
    pub context_len: u32,
    pub kind: TokenKind,
    /// Blocks in its block table after the allocation for this step.
    pub blocks: u32,
}

/// One engine step, for visualisations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepTrace {
    pub index: u64,
    pub start: f64,
    pub end: f64,
    /// The batch, in scheduling order (running first, then newly admitted).
    pub entries: Vec<TraceEntry>,
    pub budget: u32,
    pub budget_used: u32,
    /// Blocks taken from the free pool in this step (allocations and prefix hits on free blocks).
    pub blocks_allocated: u32,
    /// Blocks returned to the free pool in this step (preemptions and finishes).
    pub blocks_freed: u32,
    pub admitted: Vec<u64>,
    pub preempted: Vec<u64>,
    pub first_tokens: Vec<u64>,
    pub finished: Vec<u64>,
    pub kv_blocks_used: u32,
    pub running: u32,
    pub waiting: u32,
    pub cost: StepCost,
}

/// Where a request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeqPhase {
    /// In the waiting queue (never admitted, or preempted and re-queued).
    Waiting,
    /// Running, prompt (or recomputation) not fully computed.
    Prefill,
    /// Running, producing one token per step.
    Decode,
}

/// One request inside the replica, with its block table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeqSnapshot {
    pub id: u64,
    pub tenant: u32,
    pub arrival: f64,
    pub phase: SeqPhase,
    pub prompt_len: u32,
    pub output_len: u32,
    /// Tokens whose K and V are in the cache.
    pub computed_tokens: u32,
    pub output_tokens: u32,
    /// The block table: physical block ids, in order.
    pub blocks: Vec<u32>,
    /// Leading blocks registered in the prefix cache.
    pub cached_blocks: u32,
    pub preemptions: u32,
}

/// The whole replica at one moment: the queues, every block table, the step in flight.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaSnapshot {
    pub now: f64,
    /// (start, end) of the step in flight.
    pub step: Option<(f64, f64)>,
    /// The batch of the step in flight.
    pub batch: Vec<TraceEntry>,
    pub running: Vec<SeqSnapshot>,
    pub waiting: Vec<SeqSnapshot>,
    pub block_size: u32,
    pub kv_blocks_total: u32,
    pub kv_blocks_used: u32,
    pub kv_bytes_per_block: f64,
}
