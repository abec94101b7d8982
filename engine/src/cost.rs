//! The one cost model: how long a replica's engine step takes, given what the step holds.
//!
//! Every figure the product shows — the calculator's steps, the build-ups' frames, the
//! simulator's clocks — goes through [`CostModel::step`] or the helpers below, which are
//! special cases of it. There is no second formula anywhere.
//!
//! A step runs `new_tokens` through the model for `seqs` sequences. Its time is
//!
//! ```text
//! matmuls = 2 x active_params x new_tokens / (tp x peak x MFU(new_tokens))
//!           MFU(n) = mfu x n / (n + gemm_half_tokens)     (FP8 matmuls: mfu_fp8 of the FP8 peak,
//!           when the activations are FP8 and the GPU has FP8 tensor cores; FP8 weights with
//!           BF16 activations stream half the bytes and multiply in BF16)
//! attention = 4 x layers x q_dim x attended positions / (tp x BF16 peak x mfu)
//! compute = matmuls + attention
//! memory  = weight bytes / (tp x HBM bandwidth x mbu)
//!         + KV bytes per token x KV tokens touched / (tp x HBM bandwidth x mbu_kv)
//! comm    = 2 all-reduces per layer when tp > 1 (ring: 2 (tp-1)/tp x activations / link bandwidth,
//!           plus a fixed latency each)
//! fixed   = step_overhead + layers x layer_overhead + seqs x seq_overhead
//! gpu     = max(compute, memory) + comm + fixed
//! cpu     = cpu_overhead + seqs x cpu_seq_overhead; with async scheduling only what exceeds
//!           the GPU's time shows; plus cpu_admit for each request taken in, always
//! step    = gpu + cpu shown
//! ```
//!
//! "KV tokens touched" counts, for each sequence, its whole context after the step: the
//! tokens already cached are read and the new ones written, so a decode at context `L` moves
//! `L` tokens' worth of K and V. "Attended positions" sums, over every new token, the
//! number of positions it attends to (its own position, causal).
//!
//! Two sets of efficiencies feed the one formula. The reference ones (50 % MFU at any size, 75 %
//! of bandwidth for weights and KV alike, no fixed costs) are the ones the content brief sizes
//! the fleet with; they reproduce its figures exactly (see the tests). The calibrated ones are
//! fitted to published runs of vLLM (`content/validation/measurements.toml`): small matmuls
//! that leave the tensor cores idle, FP8 matmuls at their sustained rate, the weights and the KV
//! cache each at its own share of bandwidth, costs per step, per layer and per sequence, and the
//! CPU's work per step, per sequence and per request taken in.

use crate::catalog::{Dtype, GpuSpec, LinkSpec, ModelSpec, WeightFormat};
use crate::error::{check_in, check_positive, check_range, ConfigError};
use serde::{Deserialize, Serialize};
use std::ops::RangeInclusive;

/// What runs on one replica: a model on `tp` GPUs of one kind, in given number formats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Deployment {
    pub model: ModelSpec,
    pub gpu: GpuSpec,
    /// GPUs per replica (tensor parallelism).
    pub tp: u32,
    pub weight_dtype: Dtype,
    pub kv_dtype: Dtype,
    /// The matmuls' input format; `None` (the default): the weights' own, so FP8 weights run
    /// FP8 matmuls (W8A8) where the GPU has FP8 tensor cores. `Some(Bf16)` with FP8 weights is
    /// weight-only FP8 (W8A16). See [`WeightFormat`].
    #[serde(default)]
    pub activation_dtype: Option<Dtype>,
}

impl Deployment {
    /// Llama 3.1 8B in BF16 on one H100 SXM: the seed problem's replica.
    pub fn seed() -> Deployment {
        Deployment {
            model: crate::catalog::model_by_id("llama-3.1-8b").expect("preset exists"),
            gpu: crate::catalog::gpu_by_id("h100-sxm").expect("preset exists"),
            tp: 1,
            weight_dtype: Dtype::Bf16,
            kv_dtype: Dtype::Bf16,
            activation_dtype: None,
        }
    }

    /// The catalog's model `model` and GPU `gpu` (by id; an unknown id is an error on field
    /// `model` or `gpu` that lists the known ones) on `tp` GPUs in the given number formats.
    /// Not validated here: [`CostModel::new`] validates what it is given.
    pub fn from_ids(
        model: &str,
        gpu: &str,
        tp: u32,
        weight_dtype: Dtype,
        kv_dtype: Dtype,
    ) -> Result<Deployment, ConfigError> {
        Ok(Deployment {
            model: crate::catalog::model_or_error(model)?,
            gpu: crate::catalog::gpu_or_error(gpu)?,
            tp,
            weight_dtype,
            kv_dtype,
            activation_dtype: None,
        })
    }

    /// How the linear layers are stored and run (an invalid pair reads as its weights'
    /// format; [`Deployment::validate`] refuses it).
    pub fn weight_format(&self) -> WeightFormat {
        WeightFormat::of(self.weight_dtype, self.activation_dtype).unwrap_or(WeightFormat::Bf16)
    }

    /// The same deployment with its linear layers in format `f`.
    pub fn with_weight_format(mut self, f: WeightFormat) -> Deployment {
        self.weight_dtype = f.weight_dtype();
        self.activation_dtype = match f {
            WeightFormat::Fp8WeightOnly => Some(Dtype::Bf16),
            _ => None,
        };
        self
    }

    /// Whether the matmuls run on FP8 tensor cores: FP8 weights and activations on a GPU
    /// that has them.
    pub fn fp8_matmuls(&self) -> bool {
        self.weight_format() == WeightFormat::Fp8 && self.gpu.fp8_flops.is_some()
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        self.model.validate().map_err(|e| e.within("model"))?;
        self.gpu.validate().map_err(|e| e.within("gpu"))?;
        if self.tp == 0 || self.tp > 64 {
            return Err(ConfigError::new(
                "tp",
                format!("GPUs per replica must be 1 to 64, got {}", self.tp),
            ));
        }
        if WeightFormat::of(self.weight_dtype, self.activation_dtype).is_none() {
            return Err(ConfigError::new(
                "activation_dtype",
                "FP8 activations need FP8 weights (W8A8): BF16 weights run BF16 matmuls",
            ));
        }
        Ok(())
    }
}

/// How well the engine uses the hardware.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Efficiency {
    /// Model FLOPs utilisation that large BF16 matmuls reach, and attention's (0-1].
    pub mfu: f64,
    /// The same for FP8 matmuls, as a share of the FP8 peak (0-1]: what the hardware sustains,
    /// not its datasheet's doubling.
    pub mfu_fp8: f64,
    /// Tokens in a step at which the matmuls reach half their MFU: a small matmul leaves most
    /// of the tensor cores idle. Zero: full MFU at any size.
    pub gemm_half_tokens: f64,
    /// Share of HBM bandwidth reached streaming the weights (0-1].
    pub mbu: f64,
    /// Share of HBM bandwidth reached reading and writing the KV cache in attention, block by
    /// block (0-1].
    pub mbu_kv: f64,
    /// Fixed GPU-side time added to every step: kernel launch gaps, sampling, the small
    /// kernels around the matmuls. Seconds.
    pub step_overhead_s: f64,
    /// GPU-side time per layer per step that CUDA graphs do not remove (attention's
    /// launches and metadata). Seconds.
    pub layer_overhead_s: f64,
    /// GPU-side time per sequence in a step (sampling, logits and the per-sequence work around
    /// attention). Seconds.
    pub seq_overhead_s: f64,
    /// CPU time per step (scheduling, preparing inputs, detokenising): added to the step when
    /// scheduling is synchronous, hidden under the GPU's work with async scheduling (then only
    /// what exceeds the GPU time shows). Seconds.
    pub cpu_overhead_s: f64,
    /// CPU time per sequence in a step, hidden the same way. Seconds.
    pub cpu_seq_overhead_s: f64,
    /// CPU time for each request a step takes in from the waiting queue (its sequence set up
    /// and its inputs prepared on the engine's own thread), which async scheduling does not
    /// hide. Seconds.
    pub cpu_admit_s: f64,
    /// Latency of one all-reduce under tensor parallelism. Seconds.
    pub allreduce_latency_s: f64,
    /// Fraction of the link bandwidth an all-reduce reaches (0-1].
    pub link_efficiency: f64,
}

impl Default for Efficiency {
    /// The simulator's default: [`Efficiency::CALIBRATED`].
    fn default() -> Self {
        Efficiency::CALIBRATED
    }
}

impl Efficiency {
    /// The content brief's assumptions: 50 % MFU, 75 % MBU, no per-step overhead. The
    /// calculator's arithmetic uses these.
    pub const REFERENCE: Efficiency = Efficiency {
        mfu: 0.5,
        mfu_fp8: 0.5,
        gemm_half_tokens: 0.0,
        mbu: 0.75,
        mbu_kv: 0.75,
        step_overhead_s: 0.0,
        layer_overhead_s: 0.0,
        seq_overhead_s: 0.0,
        cpu_overhead_s: 0.0,
        cpu_seq_overhead_s: 0.0,
        cpu_admit_s: 0.0,
        allreduce_latency_s: 5e-6,
        link_efficiency: 0.8,
    };

    /// The simulator's defaults, fitted to the rows of `content/validation/measurements.toml`
    /// marked `fitted` (`cargo run --release -p trainer-course --example calibrate -- fit`),
    /// and held to the rows marked `held_out`, which no parameter was tuned on (the test
    /// `validation` fails when any row leaves its band). Each is a physical quantity:
    ///
    /// - large BF16 matmuls at 74 % of peak, FP8 ones at 51 % of the FP8 peak (about 1.4 times
    ///   BF16's rate, not the datasheet's 2), and half that share at 124 tokens in a step;
    /// - the weights and the KV cache read at 95 % of HBM bandwidth;
    /// - 2.08 ms of fixed GPU time per step plus 21.7 us per layer (launches and the small
    ///   kernels CUDA graphs leave), 0.27 us per sequence;
    /// - the CPU: 3.86 ms to take in each request on the engine's thread, which async
    ///   scheduling does not hide (fitted on vLLM 0.6's rows, where a burst of requests delays
    ///   every running stream; vLLM V1 tokenises in a separate process, so it is likely high
    ///   for today's engine), and a per-step and per-sequence cost the rows cannot tell apart
    ///   from zero;
    /// - 34 us per all-reduce (two per layer under tensor parallelism).
    pub const CALIBRATED: Efficiency = Efficiency {
        mfu: 0.74,
        mfu_fp8: 0.51,
        gemm_half_tokens: 124.0,
        mbu: 0.95,
        mbu_kv: 0.95,
        step_overhead_s: 2.08e-3,
        layer_overhead_s: 21.7e-6,
        seq_overhead_s: 0.27e-6,
        cpu_overhead_s: 10e-6,
        cpu_seq_overhead_s: 0.12e-6,
        cpu_admit_s: 3.86e-3,
        allreduce_latency_s: 34e-6,
        link_efficiency: 0.8,
    };

    /// The brief's arithmetic at other figures: one MFU for every matmul and attention, one
    /// MBU for all memory traffic, no fixed costs ([`Efficiency::REFERENCE`] otherwise). The
    /// calculator's estimate at the learner's inputs.
    pub fn brief(mfu: f64, mbu: f64) -> Efficiency {
        Efficiency {
            mfu,
            mfu_fp8: mfu,
            mbu,
            mbu_kv: mbu,
            ..Efficiency::REFERENCE
        }
    }

    /// MFU, a fraction.
    pub const MFU_RANGE: RangeInclusive<f64> = 1e-3..=1.0;
    /// MBU, a fraction.
    pub const MBU_RANGE: RangeInclusive<f64> = 1e-3..=1.0;
    /// Fixed GPU time per step, seconds.
    pub const STEP_OVERHEAD_S_RANGE: RangeInclusive<f64> = 0.0..=1.0;
    /// CPU time per step, seconds.
    pub const CPU_OVERHEAD_S_RANGE: RangeInclusive<f64> = 0.0..=1.0;
    /// Tokens at which matmuls reach half their MFU.
    pub const GEMM_HALF_TOKENS_RANGE: RangeInclusive<f64> = 0.0..=65_536.0;
    /// Per-layer and per-sequence times, seconds.
    pub const SMALL_OVERHEAD_S_RANGE: RangeInclusive<f64> = 0.0..=0.01;

    pub fn validate(&self) -> Result<(), ConfigError> {
        check_in("mfu", self.mfu, &Self::MFU_RANGE)?;
        check_in("mfu_fp8", self.mfu_fp8, &Self::MFU_RANGE)?;
        check_in(
            "gemm_half_tokens",
            self.gemm_half_tokens,
            &Self::GEMM_HALF_TOKENS_RANGE,
        )?;
        check_in("mbu", self.mbu, &Self::MBU_RANGE)?;
        check_in("mbu_kv", self.mbu_kv, &Self::MBU_RANGE)?;
        for (field, v) in [
            ("layer_overhead_s", self.layer_overhead_s),
            ("seq_overhead_s", self.seq_overhead_s),
            ("cpu_seq_overhead_s", self.cpu_seq_overhead_s),
            ("cpu_admit_s", self.cpu_admit_s),
        ] {
            check_in(field, v, &Self::SMALL_OVERHEAD_S_RANGE)?;
        }
        check_in(
            "step_overhead_s",
            self.step_overhead_s,
            &Self::STEP_OVERHEAD_S_RANGE,
        )?;
        check_in(
            "cpu_overhead_s",
            self.cpu_overhead_s,
            &Self::CPU_OVERHEAD_S_RANGE,
        )?;
        check_range("allreduce_latency_s", self.allreduce_latency_s, 0.0, 0.01)?;
        check_range("link_efficiency", self.link_efficiency, 1e-3, 1.0)?;
        Ok(())
    }
}

/// One sequence's share of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BatchItem {
    /// Tokens this sequence runs through the model in this step (1 for a decode).
    pub new_tokens: u32,
    /// Tokens in this sequence's KV cache after the step, the new ones included.
    pub context_len: u32,
}

/// Running sums over a batch, enough to cost it in O(1). The simulator keeps these
/// incrementally instead of walking the batch every step.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct BatchTotals {
    pub seqs: u64,
    pub new_tokens: u64,
    /// Sum of `context_len` over the batch.
    pub kv_tokens: u64,
    /// Sum over every new token of the positions it attends to.
    pub attended_positions: f64,
    /// Requests the step takes in from the waiting queue (new ones, or ones resumed after
    /// preemption); the scheduler counts them, [`BatchTotals::add`] does not.
    pub admitted: u64,
}

impl BatchTotals {
    pub fn add(&mut self, item: BatchItem) {
        self.seqs += 1;
        self.new_tokens += item.new_tokens as u64;
        self.kv_tokens += item.context_len as u64;
        self.attended_positions += attended_positions(item);
    }

    /// `batch` sequences alike, each `item`.
    pub fn uniform(batch: u32, item: BatchItem) -> BatchTotals {
        BatchTotals {
            seqs: batch as u64,
            new_tokens: batch as u64 * item.new_tokens as u64,
            kv_tokens: batch as u64 * item.context_len as u64,
            attended_positions: batch as f64 * attended_positions(item),
            admitted: 0,
        }
    }

    /// Both batches in one step.
    pub fn plus(&self, other: &BatchTotals) -> BatchTotals {
        BatchTotals {
            seqs: self.seqs + other.seqs,
            new_tokens: self.new_tokens + other.new_tokens,
            kv_tokens: self.kv_tokens + other.kv_tokens,
            attended_positions: self.attended_positions + other.attended_positions,
            admitted: self.admitted + other.admitted,
        }
    }

    pub fn of(items: &[BatchItem]) -> BatchTotals {
        let mut t = BatchTotals::default();
        for &i in items {
            t.add(i);
        }
        t
    }
}

/// Positions attended by a chunk of `n` new tokens ending at position `L`: L + (L-1) + ... + (L-n+1).
pub fn attended_positions(item: BatchItem) -> f64 {
    let n = item.new_tokens.min(item.context_len) as f64;
    let l = item.context_len as f64;
    n * (2.0 * l - n + 1.0) / 2.0
}

/// The time of one step and what it is made of. Seconds.
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct StepCost {
    pub compute_s: f64,
    pub memory_s: f64,
    pub comm_s: f64,
    /// Fixed GPU-side time.
    pub overhead_s: f64,
    /// CPU time on the critical path: all of it with synchronous scheduling, only the part
    /// that exceeds the GPU's time with async scheduling.
    pub cpu_s: f64,
    /// GPU time of speculative decoding's proposer (zero without it).
    #[serde(default)]
    pub draft_s: f64,
    /// Copying KV caches back from host memory for the requests the step takes in (zero
    /// without a host tier).
    #[serde(default)]
    pub reload_s: f64,
    /// Seconds of LoRA adapters: their kernels and any loads into GPU slots (part of `total_s`).
    #[serde(default)]
    pub lora_s: f64,
    pub total_s: f64,
}

impl StepCost {
    /// Whether the step is limited by memory bandwidth rather than by compute.
    pub fn memory_bound(&self) -> bool {
        self.memory_s >= self.compute_s
    }
}

/// A validated deployment and efficiency, with the constants every step needs precomputed.
#[derive(Clone, Debug, PartialEq)]
pub struct CostModel {
    deployment: Deployment,
    eff: Efficiency,
    dense_flops_per_token: f64,
    attn_flops_per_position: f64,
    /// Sustained FLOP/s of large matmuls (FP8 ones where the weights and activations are FP8
    /// and the GPU has FP8 tensor cores).
    flops_per_s: f64,
    /// Sustained FLOP/s of attention (BF16).
    attn_flops_per_s: f64,
    weight_bytes: f64,
    kv_bytes_per_token: f64,
    /// Sustained bytes/s streaming the weights.
    bytes_per_s: f64,
    /// Sustained bytes/s reading and writing the KV cache.
    kv_bytes_per_s: f64,
    /// Fixed GPU time per step: the step's own and every layer's.
    fixed_s: f64,
    allreduce_bytes_per_token: f64,
    async_scheduling: bool,
}

impl CostModel {
    pub fn new(deployment: Deployment, eff: Efficiency) -> Result<CostModel, ConfigError> {
        deployment.validate()?;
        eff.validate().map_err(|e| e.within("efficiency"))?;
        let m = &deployment.model;
        let tp = deployment.tp as f64;
        // FP8 weights and activations run FP8 matmuls where the GPU has them, at their own
        // sustained share of the FP8 peak; everything else (weight-only FP8 included, whose
        // weights are dequantised inside a BF16 matmul) multiplies in BF16.
        let gpu = &deployment.gpu;
        let gemm_rate = match (deployment.fp8_matmuls(), gpu.fp8_flops) {
            (true, Some(fp8)) => fp8 * eff.mfu_fp8,
            _ => gpu.bf16_flops * eff.mfu,
        };
        Ok(CostModel {
            dense_flops_per_token: 2.0 * m.active_params as f64,
            attn_flops_per_position: 4.0 * m.layers as f64 * m.q_dim(),
            flops_per_s: tp * gemm_rate,
            attn_flops_per_s: tp * gpu.bf16_flops * eff.mfu,
            weight_bytes: m.params as f64 * deployment.weight_dtype.bytes(),
            kv_bytes_per_token: m.kv_bytes_per_token(deployment.kv_dtype),
            bytes_per_s: tp * gpu.mem_bw * eff.mbu,
            kv_bytes_per_s: tp * gpu.mem_bw * eff.mbu_kv,
            fixed_s: eff.step_overhead_s + m.layers as f64 * eff.layer_overhead_s,
            allreduce_bytes_per_token: m.hidden as f64 * Dtype::Bf16.bytes(),
            async_scheduling: false,
            deployment,
            eff,
        })
    }

    /// The same model with the CPU's per-step work overlapped (`true`) or serial (`false`, the
    /// default of [`CostModel::new`]).
    pub fn with_async_scheduling(mut self, on: bool) -> CostModel {
        self.async_scheduling = on;
        self
    }

    /// The seed replica at the reference efficiencies.
    pub fn seed() -> CostModel {
        CostModel::new(Deployment::seed(), Efficiency::REFERENCE).expect("seed is valid")
    }

    pub fn deployment(&self) -> &Deployment {
        &self.deployment
    }

    pub fn efficiency(&self) -> &Efficiency {
        &self.eff
    }

    /// Bytes of weights across the replica.
    pub fn weight_bytes(&self) -> f64 {
        self.weight_bytes
    }

    pub fn kv_bytes_per_token(&self) -> f64 {
        self.kv_bytes_per_token
    }

    /// Dense FLOPs to run one token: 2 x active parameters.
    pub fn dense_flops_per_token(&self) -> f64 {
        self.dense_flops_per_token
    }

    /// Sustained FLOP/s of the replica's large matmuls: tp x peak x MFU.
    pub fn sustained_flops(&self) -> f64 {
        self.flops_per_s
    }

    /// Sustained bytes/s of the replica streaming its weights: tp x bandwidth x MBU.
    pub fn sustained_bandwidth(&self) -> f64 {
        self.bytes_per_s
    }

    /// Compute time per prompt token in a large step, without attention: 2 x params /
    /// (peak x MFU). The back-of-the-envelope figure (32.5 us for the seed).
    pub fn prefill_time_per_token(&self) -> f64 {
        self.dense_flops_per_token / self.flops_per_s
    }

    /// The matmuls' time for a step of `tokens` tokens: their FLOPs at the MFU a matmul of
    /// that many rows reaches, `mfu x n / (n + gemm_half_tokens)`.
    pub fn matmul_time(&self, tokens: f64) -> f64 {
        if tokens <= 0.0 {
            return 0.0;
        }
        let shortfall = (tokens + self.eff.gemm_half_tokens) / tokens;
        self.dense_flops_per_token * tokens * shortfall / self.flops_per_s
    }

    /// Attention's compute time for one whole prompt of `tokens` prefilled at once: every
    /// token attends to itself and to every token before it, so the work grows with the
    /// square of the prompt (the parameter FLOPs, [`CostModel::prefill_time_per_token`], grow
    /// with its length). The same term [`CostModel::step_totals`] adds to a prefill step.
    pub fn prompt_attention_time(&self, tokens: u32) -> f64 {
        let positions = attended_positions(BatchItem {
            new_tokens: tokens,
            context_len: tokens,
        });
        self.attn_flops_per_position * positions / self.attn_flops_per_s
    }

    /// Costs a step from its running sums.
    pub fn step_totals(&self, t: &BatchTotals) -> StepCost {
        if t.seqs == 0 || t.new_tokens == 0 {
            return StepCost::default();
        }
        let compute_s = self.matmul_time(t.new_tokens as f64)
            + self.attn_flops_per_position * t.attended_positions / self.attn_flops_per_s;
        let memory_s = self.weight_bytes / self.bytes_per_s
            + self.kv_bytes_per_token * t.kv_tokens as f64 / self.kv_bytes_per_s;
        let tp = self.deployment.tp as f64;
        let comm_s = if self.deployment.tp > 1 {
            let layers = self.deployment.model.layers as f64;
            let bytes = self.allreduce_bytes_per_token * t.new_tokens as f64;
            let per = self.eff.allreduce_latency_s
                + 2.0 * (tp - 1.0) / tp * bytes
                    / (self.deployment.gpu.link_bw * self.eff.link_efficiency);
            2.0 * layers * per
        } else {
            0.0
        };
        let seqs = t.seqs as f64;
        let overhead_s = self.fixed_s + seqs * self.eff.seq_overhead_s;
        let gpu_s = compute_s.max(memory_s) + comm_s + overhead_s;
        let cpu_work = self.eff.cpu_overhead_s + seqs * self.eff.cpu_seq_overhead_s;
        let cpu_s = if self.async_scheduling {
            (cpu_work - gpu_s).max(0.0)
        } else {
            cpu_work
        } + t.admitted as f64 * self.eff.cpu_admit_s;
        StepCost {
            compute_s,
            memory_s,
            comm_s,
            overhead_s,
            cpu_s,
            draft_s: 0.0,
            reload_s: 0.0,
            lora_s: 0.0,
            total_s: gpu_s + cpu_s,
        }
    }

    /// Costs a step from its items.
    pub fn step(&self, items: &[BatchItem]) -> StepCost {
        self.step_totals(&BatchTotals::of(items))
    }

    /// Bytes a step moves through HBM: the weights once, plus K and V for every token of
    /// context the batch touches. The memory term of [`CostModel::step_totals`] is the
    /// weights over the bandwidth their streaming reaches plus the KV bytes over attention's.
    pub fn step_bytes(&self, t: &BatchTotals) -> f64 {
        self.weight_bytes + self.kv_bytes_per_token * t.kv_tokens as f64
    }

    /// FLOPs a step does: 2 x active parameters for each new token and attention's work for
    /// each position attended (the work itself, not its time: the MFU's shortfall on a small
    /// matmul is left out).
    pub fn step_flops(&self, t: &BatchTotals) -> f64 {
        self.dense_flops_per_token * t.new_tokens as f64
            + self.attn_flops_per_position * t.attended_positions
    }

    /// A step's arithmetic intensity: the FLOPs it does per byte it moves through HBM
    /// ([`CostModel::step_flops`] over [`CostModel::step_bytes`]).
    pub fn step_intensity(&self, t: &BatchTotals) -> f64 {
        self.step_flops(t) / self.step_bytes(t)
    }

    /// The roofline's ridge point at the sustained rates: the FLOPs per byte at which a step's
    /// compute takes as long as its memory traffic (sustained FLOP/s over sustained bytes/s).
    /// Below it a step is memory-bound, above it compute-bound.
    pub fn ridge_point(&self) -> f64 {
        self.flops_per_s / self.bytes_per_s
    }

    /// The decode totals of `batch` sequences at context `context` (what
    /// [`CostModel::decode_step`] costs), for the intensity of such a step.
    pub fn decode_totals(batch: u32, context: u32) -> BatchTotals {
        decode_totals(batch, context)
    }

    /// The smallest decode batch, at most `max`, at context `context` whose step's compute
    /// time reaches its memory time: where decode turns compute-bound. `None` when no batch
    /// up to `max` does (a long context's K and V grow with the batch as fast as its FLOPs).
    /// Compute and memory time both grow in a straight line with the batch, so their
    /// difference changes sign at most once.
    pub fn compute_bound_batch(&self, context: u32, max: u32) -> Option<u32> {
        let bound = |b: u32| {
            let sc = self.decode_step(b, context);
            sc.compute_s >= sc.memory_s
        };
        if max == 0 || !bound(max) {
            return None;
        }
        let (mut lo, mut hi) = (1u32, max);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if bound(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Some(lo)
    }

    /// A decode step of `batch` sequences, each at context `context` after the step.
    pub fn decode_step(&self, batch: u32, context: u32) -> StepCost {
        self.step_totals(&decode_totals(batch, context))
    }

    /// Bytes one decode step moves (20.78 GB for the seed at batch 32 and context 1,125).
    pub fn decode_bytes(&self, batch: u32, context: u32) -> f64 {
        self.step_bytes(&decode_totals(batch, context))
    }

    /// Output tokens per second of a steady decode batch.
    pub fn decode_throughput(&self, batch: u32, context: u32) -> f64 {
        let s = self.decode_step(batch, context).total_s;
        if s > 0.0 {
            batch as f64 / s
        } else {
            0.0
        }
    }

    /// Bytes of KV cache `tokens` tokens hold across the replica (what a disaggregated
    /// prefill hands to its decode replica).
    pub fn kv_transfer_bytes(&self, tokens: u32) -> f64 {
        tokens as f64 * self.kv_bytes_per_token
    }

    /// Seconds to move the KV cache of `tokens` tokens from this replica to another over
    /// `link` at `share` of its line rate: the link's fixed cost plus the bytes over the
    /// bandwidth, which a link per GPU multiplies by the GPUs of the replica (`tp`; each
    /// sends its own KV heads).
    pub fn kv_transfer_time(&self, tokens: u32, link: &LinkSpec, share: f64) -> f64 {
        let lanes = if link.per_gpu {
            self.deployment.tp as f64
        } else {
            1.0
        };
        let rate = link.bandwidth * lanes * share;
        if tokens == 0 || rate.is_nan() || rate <= 0.0 {
            return link.latency_s;
        }
        link.latency_s + self.kv_transfer_bytes(tokens) / rate
    }

    /// Seconds to copy the KV cache of `tokens` tokens from host memory back into the GPUs
    /// over their PCIe links (each GPU of the replica loads its own KV heads); infinite when
    /// the GPU has no host link in the catalog.
    pub fn kv_reload_time(&self, tokens: u32) -> f64 {
        let rate = self.deployment.gpu.host_bw * self.deployment.tp as f64;
        if rate > 0.0 {
            self.kv_transfer_bytes(tokens) / rate
        } else {
            f64::INFINITY
        }
    }

    /// Seconds of compute to prefill `tokens` tokens after `context` tokens already cached:
    /// the compute side of a step that holds only them (what reloading them would save).
    pub fn prefill_compute_time(&self, context: u32, tokens: u32) -> f64 {
        if tokens == 0 {
            return 0.0;
        }
        self.step_totals(&BatchTotals::of(&[BatchItem {
            new_tokens: tokens,
            context_len: context + tokens,
        }]))
        .compute_s
    }

    /// Bytes of one LoRA adapter of `rank` (its weights in BF16, vLLM's adapter type for a
    /// BF16 model and for an FP8 one alike).
    pub fn lora_adapter_bytes(&self, rank: u32) -> f64 {
        self.deployment.model.lora_params(rank) * Dtype::Bf16.bytes()
    }

    /// Seconds a step spends in its adapters' kernels: for each of its `tokens` new tokens,
    /// 2 FLOPs per adapter parameter (its `A` then its `B`), and the weights of each of its
    /// `adapters` distinct adapters read once, whichever takes longer (the kernels run beside
    /// the base model's, memory-bound when few tokens share an adapter). The kernels' own
    /// launch costs are not counted, so this is the least an adapter can add.
    pub fn lora_step_time(&self, tokens: u64, adapters: u32, rank: u32) -> f64 {
        if tokens == 0 || adapters == 0 {
            return 0.0;
        }
        let params = self.deployment.model.lora_params(rank);
        let compute = 2.0 * params * tokens as f64 / self.attn_flops_per_s;
        let memory = adapters as f64 * params * Dtype::Bf16.bytes() / self.bytes_per_s;
        compute.max(memory)
    }

    /// Seconds to put an adapter of `rank` into a GPU slot: its bytes over the replica's PCIe
    /// links (each GPU takes its share), plus, when it is not in host memory either, its bytes
    /// read from storage at `storage_bytes_per_s`.
    pub fn lora_load_time(&self, rank: u32, from_storage: bool, storage_bytes_per_s: f64) -> f64 {
        let bytes = self.lora_adapter_bytes(rank);
        let rate = self.deployment.gpu.host_bw * self.deployment.tp as f64;
        let copy = if rate > 0.0 { bytes / rate } else { 0.0 };
        let read = if from_storage && storage_bytes_per_s > 0.0 {
            bytes / storage_bytes_per_s
        } else {
            0.0
        };
        copy + read
    }

    /// The KV pool of one replica, in tokens: (GPU memory x tp x utilisation - reserve x tp -
    /// weights) / KV bytes per token. Zero when the weights do not fit.
    pub fn kv_pool_tokens(&self, memory: &MemoryConfig) -> f64 {
        (self.kv_pool_bytes(memory) / self.kv_bytes_per_token)
            .floor()
            .max(0.0)
    }

    /// [`CostModel::kv_pool_tokens`] with `bytes` more of the memory taken first (adapters'
    /// GPU slots).
    pub fn kv_pool_tokens_less(&self, memory: &MemoryConfig, bytes: f64) -> f64 {
        ((self.kv_pool_bytes(memory) - bytes) / self.kv_bytes_per_token)
            .floor()
            .max(0.0)
    }

    /// Bytes left for the KV cache on the replica (may be negative when the weights do not fit).
    pub fn kv_pool_bytes(&self, memory: &MemoryConfig) -> f64 {
        let tp = self.deployment.tp as f64;
        let capacity = match memory.capacity {
            MemoryBasis::Datasheet => self.deployment.gpu.mem_bytes,
            MemoryBasis::Reported => self.deployment.gpu.reported_mem_bytes,
        };
        capacity * tp * memory.gpu_memory_utilization
            - memory.reserve_bytes_per_gpu * tp
            - self.weight_bytes
    }
}

/// The running sums of a decode step: `batch` sequences, one new token each, at `context`.
fn decode_totals(batch: u32, context: u32) -> BatchTotals {
    BatchTotals::uniform(
        batch,
        BatchItem {
            new_tokens: 1,
            context_len: context,
        },
    )
}

/// How a replica's memory is split (vLLM's `gpu_memory_utilization`, and what activations,
/// CUDA graphs and the allocator hold back).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryConfig {
    /// Fraction of each GPU's memory the engine may use (vLLM's default is 0.9; the brief uses 0.92).
    pub gpu_memory_utilization: f64,
    /// Bytes per GPU kept for activations and overhead.
    pub reserve_bytes_per_gpu: f64,
    /// Which capacity the utilisation applies to.
    pub capacity: MemoryBasis,
}

/// Which figure for a GPU's memory a KV pool is sized from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryBasis {
    /// The datasheet's round figure (80 GB for an H100): the calculator's arithmetic.
    Datasheet,
    /// What the device reports to the CUDA runtime (about 79.2 GiB, 85.0e9 bytes, for an
    /// H100), which is what vLLM multiplies by `gpu_memory_utilization`.
    Reported,
}

impl Default for MemoryConfig {
    /// The simulator's default: what `vllm serve` does ([`MemoryConfig::VLLM`]).
    fn default() -> Self {
        MemoryConfig::VLLM
    }
}

impl MemoryConfig {
    /// The brief's split: 92 % of the datasheet's memory, 3 GB per GPU for activations and
    /// overhead. The calculator sizes with it.
    pub const REFERENCE: MemoryConfig = MemoryConfig {
        gpu_memory_utilization: 0.92,
        reserve_bytes_per_gpu: 3e9,
        capacity: MemoryBasis::Datasheet,
    };

    /// `vllm serve`'s split: 90 % (its default `gpu_memory_utilization`) of the memory the
    /// device reports, less what its start-up profile finds outside the KV cache besides the
    /// weights (activations of a full token budget, the sampler, CUDA graphs, the CUDA context):
    /// vLLM's profile of Llama 3 8B on an H100 reports 71.29 GiB usable, 14.96 GiB of weights
    /// and 53.29 GiB for the KV cache, which leaves 3.04 GiB (vLLM PR 10511).
    pub const VLLM: MemoryConfig = MemoryConfig {
        gpu_memory_utilization: 0.9,
        reserve_bytes_per_gpu: 3.04 * 1024.0 * 1024.0 * 1024.0,
        capacity: MemoryBasis::Reported,
    };

    /// The share of the GPU's memory the engine may use.
    pub const GPU_MEMORY_UTILIZATION_RANGE: RangeInclusive<f64> = 0.05..=1.0;

    pub fn validate(&self) -> Result<(), ConfigError> {
        check_in(
            "gpu_memory_utilization",
            self.gpu_memory_utilization,
            &Self::GPU_MEMORY_UTILIZATION_RANGE,
        )?;
        check_range(
            "reserve_bytes_per_gpu",
            self.reserve_bytes_per_gpu,
            0.0,
            1e13,
        )?;
        Ok(())
    }
}

/// Checks a positive rate-like figure; re-exported for callers that validate their own inputs.
pub fn positive(field: &str, v: f64, max: f64) -> Result<f64, ConfigError> {
    check_positive(field, v, max)
}

#[cfg(test)]
mod attention_tests {
    use super::*;

    #[test]
    fn the_roofline_reads_the_step_the_cost_model_times() {
        let c = CostModel::new(Deployment::seed(), Efficiency::REFERENCE).unwrap();
        // 989 TFLOP/s x 0.5 over 3.35 TB/s x 0.75.
        assert!((c.ridge_point() - 989e12 * 0.5 / (3.35e12 * 0.75)).abs() < 1e-9);
        // At the brief's efficiencies (one rate for matmuls and attention, one for weights
        // and cache, no fixed costs), a step is compute-bound exactly when its intensity
        // reaches the ridge.
        for batch in [1u32, 8, 32, 197, 256, 1024, 4096] {
            for context in [1u32, 128, 1_125, 8_192] {
                let t = CostModel::decode_totals(batch, context);
                let sc = c.step_totals(&t);
                assert_eq!(
                    c.step_intensity(&t) >= c.ridge_point(),
                    sc.compute_s >= sc.memory_s,
                    "batch {batch}, context {context}"
                );
            }
        }
        // A decode step's FLOPs: 2 x P per sequence plus 4 x layers x q_dim per position.
        let t = CostModel::decode_totals(32, 1_125);
        let per_seq = 2.0 * 8_030_261_248.0 + 4.0 * 32.0 * 4_096.0 * 1_125.0;
        assert!((c.step_flops(&t) - 32.0 * per_seq).abs() < 1.0);
        // With next to no context, decode turns compute-bound near the ridge (one byte of
        // BF16 weight per FLOP of the pair a weight takes part in); at the seed's context the
        // cache grows as fast as the FLOPs and it never does.
        let b = c.compute_bound_batch(1, 100_000).unwrap();
        assert!((195..=200).contains(&b), "{b}");
        assert!(c.decode_step(b - 1, 1).compute_s < c.decode_step(b - 1, 1).memory_s);
        assert!(c.decode_step(b, 1).compute_s >= c.decode_step(b, 1).memory_s);
        assert_eq!(c.compute_bound_batch(1_125, 100_000), None);
        assert_eq!(c.compute_bound_batch(1, 0), None);
    }

    #[test]
    fn a_kv_transfer_takes_its_bytes_over_the_line_rate_plus_the_fixed_cost() {
        // The seed: 32 layers x 8 KV heads x 128 dims x 2 (K and V) x 2 bytes = 131,072 bytes
        // a token, so a 1,000-token prompt is 131.072 MB.
        let c = CostModel::new(Deployment::seed(), Efficiency::REFERENCE).unwrap();
        assert_eq!(c.kv_transfer_bytes(1_000), 131_072_000.0);
        let ib = crate::catalog::link_or_error("infiniband-ndr").unwrap();
        let t = c.kv_transfer_time(1_000, &ib, 1.0);
        assert!((t - (30e-6 + 131_072_000.0 / 50e9)).abs() < 1e-15, "{t}");
        // Half the line rate, twice the bytes' time.
        let half = c.kv_transfer_time(1_000, &ib, 0.5);
        assert!((half - (30e-6 + 2.0 * 131_072_000.0 / 50e9)).abs() < 1e-15);
        // A link per GPU carries a tensor-parallel replica's shards side by side; a link per
        // replica does not.
        let mut d = Deployment::seed();
        d.tp = 4;
        let c4 = CostModel::new(d, Efficiency::REFERENCE).unwrap();
        let per_gpu = c4.kv_transfer_time(1_000, &ib, 1.0) - ib.latency_s;
        assert!((per_gpu - 131_072_000.0 / (4.0 * 50e9)).abs() < 1e-15);
        let eth = crate::catalog::link_or_error("ethernet-100g").unwrap();
        let shared = c4.kv_transfer_time(1_000, &eth, 1.0) - eth.latency_s;
        assert!((shared - 131_072_000.0 / 12.5e9).abs() < 1e-15);
        assert_eq!(c.kv_transfer_time(0, &ib, 1.0), ib.latency_s);
    }

    #[test]
    fn a_prompts_attention_is_the_prefill_step_less_its_parameter_flops() {
        let c = CostModel::new(Deployment::seed(), Efficiency::REFERENCE).unwrap();
        for n in [1u32, 1_000, 32_000] {
            let step = c.step(&[BatchItem {
                new_tokens: n,
                context_len: n,
            }]);
            let params = n as f64 * c.prefill_time_per_token();
            let attn = c.prompt_attention_time(n);
            assert!((step.compute_s - params - attn).abs() < 1e-12 * step.compute_s.max(1.0));
        }
        // The square: twice the prompt, about four times the attention.
        let r = c.prompt_attention_time(32_000) / c.prompt_attention_time(16_000);
        assert!((r - 4.0).abs() < 0.01, "{r}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs()
    }

    /// The seed replica with its linear layers in `f` and its KV cache in `kv`, on `gpu`.
    fn formats(gpu: &str, f: WeightFormat, kv: Dtype) -> CostModel {
        let d = Deployment {
            gpu: crate::catalog::gpu_by_id(gpu).unwrap(),
            kv_dtype: kv,
            ..Deployment::seed()
        };
        CostModel::new(d.with_weight_format(f), Efficiency::CALIBRATED).unwrap()
    }

    #[test]
    fn fp8_weights_only_halve_the_weight_bytes_and_keep_bf16_matmuls() {
        let bf16 = formats("h100-sxm", WeightFormat::Bf16, Dtype::Bf16);
        let w8a16 = formats("h100-sxm", WeightFormat::Fp8WeightOnly, Dtype::Bf16);
        let w8a8 = formats("h100-sxm", WeightFormat::Fp8, Dtype::Bf16);
        assert_eq!(w8a16.weight_bytes() * 2.0, bf16.weight_bytes());
        assert_eq!(w8a8.weight_bytes(), w8a16.weight_bytes());
        // The matmuls: BF16's rate for weight-only, the FP8 tensor cores' for W8A8.
        assert_eq!(w8a16.sustained_flops(), bf16.sustained_flops());
        let h100 = crate::catalog::gpu_by_id("h100-sxm").unwrap();
        let fp8_rate = h100.fp8_flops.unwrap() * Efficiency::CALIBRATED.mfu_fp8;
        assert_eq!(w8a8.sustained_flops(), fp8_rate);
        assert!(w8a8.sustained_flops() > bf16.sustained_flops());
        // A small decode step: both FP8 formats read the same bytes, and either is faster
        // than BF16 (whose step is bound by reading its weights).
        let (small_bf16, small_w8a16, small_w8a8) = (
            bf16.decode_step(8, 1125),
            w8a16.decode_step(8, 1125),
            w8a8.decode_step(8, 1125),
        );
        assert!(small_bf16.memory_bound());
        assert_eq!(small_w8a16.memory_s, small_w8a8.memory_s);
        assert!(small_w8a16.total_s < small_bf16.total_s);
        assert!(small_w8a8.total_s <= small_w8a16.total_s);
        // A long prefill is compute-bound: weight-only FP8 gains nothing there, W8A8 does.
        let prefill = |c: &CostModel| {
            c.step(&[BatchItem {
                new_tokens: 8192,
                context_len: 8192,
            }])
        };
        let (p_bf16, p_w8a16, p_w8a8) = (prefill(&bf16), prefill(&w8a16), prefill(&w8a8));
        assert!(!p_bf16.memory_bound() && !p_w8a16.memory_bound());
        assert_eq!(p_w8a16.compute_s, p_bf16.compute_s);
        assert_eq!(p_w8a16.total_s, p_bf16.total_s);
        assert!(p_w8a8.total_s < p_bf16.total_s);
    }

    #[test]
    fn w8a8_on_a_gpu_without_fp8_tensor_cores_runs_weight_only() {
        let w8a8 = formats("a100-80gb", WeightFormat::Fp8, Dtype::Bf16);
        let w8a16 = formats("a100-80gb", WeightFormat::Fp8WeightOnly, Dtype::Bf16);
        assert!(!w8a8.deployment().fp8_matmuls());
        assert_eq!(w8a8.sustained_flops(), w8a16.sustained_flops());
        for (batch, context) in [(1, 100), (64, 2000), (256, 4000)] {
            assert_eq!(
                w8a8.decode_step(batch, context),
                w8a16.decode_step(batch, context)
            );
        }
    }

    #[test]
    fn an_fp8_kv_cache_halves_each_tokens_bytes_and_doubles_the_pool() {
        let bf16 = formats("h100-sxm", WeightFormat::Bf16, Dtype::Bf16);
        let kv8 = formats("h100-sxm", WeightFormat::Bf16, Dtype::Fp8);
        assert_eq!(kv8.kv_bytes_per_token() * 2.0, bf16.kv_bytes_per_token());
        let mem = MemoryConfig::VLLM;
        // The same bytes for the pool (the weights did not change), each token in half.
        assert_eq!(kv8.kv_pool_bytes(&mem), bf16.kv_pool_bytes(&mem));
        let pool = kv8.kv_pool_bytes(&mem);
        assert_eq!(
            kv8.kv_pool_tokens(&mem),
            (pool / kv8.kv_bytes_per_token()).floor()
        );
        assert!(kv8.kv_pool_tokens(&mem) >= 2.0 * bf16.kv_pool_tokens(&mem));
        // The weights and the matmuls are untouched; a decode step reads less cache.
        assert_eq!(kv8.weight_bytes(), bf16.weight_bytes());
        assert_eq!(kv8.sustained_flops(), bf16.sustained_flops());
        let (a, b) = (kv8.decode_step(64, 4000), bf16.decode_step(64, 4000));
        assert!(a.memory_s < b.memory_s);
        assert_eq!(a.compute_s, b.compute_s);
    }

    #[test]
    fn fp8_activations_need_fp8_weights() {
        let d = Deployment {
            activation_dtype: Some(Dtype::Fp8),
            ..Deployment::seed()
        };
        let e = CostModel::new(d, Efficiency::CALIBRATED).unwrap_err();
        assert_eq!(e.field, "activation_dtype");
        // Every format round-trips through the deployment's two fields.
        for f in WeightFormat::ALL {
            let d = Deployment::seed().with_weight_format(f);
            assert_eq!(d.weight_format(), f);
            assert!(d.validate().is_ok());
            assert_eq!(WeightFormat::from_name(f.name()), Some(f));
        }
        // A file's `weight_dtype = "fp8"` without activations is W8A8, as it always was.
        let d = Deployment {
            weight_dtype: Dtype::Fp8,
            ..Deployment::seed()
        };
        assert_eq!(d.weight_format(), WeightFormat::Fp8);
    }

    #[test]
    fn reference_prefill_time_per_token_is_32_5_us() {
        let c = CostModel::seed();
        assert_eq!(c.weight_bytes(), 16_060_522_496.0);
        assert_eq!(format!("{:.1}", c.prefill_time_per_token() * 1e6), "32.5");
    }

    #[test]
    fn reference_decode_step_is_8_3_ms_and_3869_tokens_per_second() {
        let c = CostModel::seed();
        let s = c.decode_step(32, 1125);
        assert!(s.memory_bound());
        // 16.06 GB of weights + 32 x 1,125 x 131,072 B = 20.78 GB over 3.35 TB/s x 0.75.
        assert!(close(s.memory_s, 20_779_114_496.0 / 2.5125e12, 1e-12));
        assert_eq!(format!("{:.1}", s.total_s * 1e3), "8.3");
        assert_eq!(c.decode_throughput(32, 1125).round(), 3869.0);
        assert_eq!(c.decode_bytes(32, 1125), 20_779_114_496.0);
        assert_eq!(
            c.decode_bytes(32, 1125) / c.sustained_bandwidth(),
            s.memory_s
        );
    }

    #[test]
    fn step_from_items_equals_step_from_totals() {
        let c = CostModel::seed();
        let items = [
            BatchItem {
                new_tokens: 1,
                context_len: 900,
            },
            BatchItem {
                new_tokens: 512,
                context_len: 1024,
            },
            BatchItem {
                new_tokens: 1,
                context_len: 17,
            },
        ];
        let mut t = BatchTotals::default();
        items.iter().for_each(|&i| t.add(i));
        assert_eq!(c.step(&items), c.step_totals(&t));
        assert_eq!(
            t.attended_positions,
            900.0 + (513..=1024).sum::<u32>() as f64 + 17.0
        );
    }

    #[test]
    fn empty_step_costs_nothing_and_tp_adds_communication() {
        let c = CostModel::seed();
        assert_eq!(c.step(&[]).total_s, 0.0);
        let mut d = Deployment::seed();
        d.model = crate::catalog::model_by_id("llama-3.1-70b").unwrap();
        d.tp = 4;
        let c70 = CostModel::new(d, Efficiency::REFERENCE).unwrap();
        let s = c70.decode_step(32, 4096);
        assert!(s.comm_s > 0.0 && s.total_s > s.memory_s);
    }

    #[test]
    fn reference_kv_pool_is_416_103_tokens() {
        let c = CostModel::seed();
        assert_eq!(c.kv_pool_tokens(&MemoryConfig::REFERENCE), 416_103.0);
    }

    #[test]
    fn bad_inputs_are_errors_not_panics() {
        let mut e = Efficiency::REFERENCE;
        e.mfu = f64::NAN;
        assert_eq!(
            CostModel::new(Deployment::seed(), e).unwrap_err().field,
            "efficiency.mfu"
        );
        let mut d = Deployment::seed();
        d.tp = 0;
        assert_eq!(
            CostModel::new(d, Efficiency::REFERENCE).unwrap_err().field,
            "tp"
        );
    }
}
