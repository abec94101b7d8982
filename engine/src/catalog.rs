//! Catalog of models, GPUs and number formats.
//!
//! Model shapes come from each model's published `config.json` on its official Hugging Face
//! repository (meta-llama/Llama-3.1-8B, -70B, -405B; mistralai/Mistral-7B-v0.1;
//! Qwen/Qwen2.5-7B, Qwen2.5-72B; mistralai/Mixtral-8x7B-v0.1). The published parameter
//! counts are those repositories' safetensors totals; a test recomputes every one of them
//! from the shape, so a typo in either place fails the build.
//!
//! GPU figures are the vendors' datasheets, dense (no structured sparsity):
//! NVIDIA H100 SXM5 and H200 SXM datasheets, A100 80 GB SXM datasheet, HGX B200 datasheet
//! (180 GB per GPU as shipped in HGX/DGX B200), L40S datasheet, AMD Instinct MI300X datasheet.

use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

/// A number format for weights or KV cache entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    Bf16,
    Fp8,
}

impl Dtype {
    pub const ALL: [Dtype; 2] = [Dtype::Bf16, Dtype::Fp8];

    /// Bytes per element.
    pub fn bytes(self) -> f64 {
        match self {
            Dtype::Bf16 => 2.0,
            Dtype::Fp8 => 1.0,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dtype::Bf16 => "bf16",
            Dtype::Fp8 => "fp8",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Dtype::Bf16 => "BF16",
            Dtype::Fp8 => "FP8",
        }
    }

    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(name))
    }
}

/// How a model's linear layers are stored and run: the three ways vLLM serves them. The
/// weights' format sets the bytes a decode step streams; the activations' format sets which
/// tensor cores the matmuls use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum WeightFormat {
    /// BF16 weights, BF16 matmuls.
    Bf16,
    /// FP8 weights dequantised to BF16 inside the matmul (W8A16, vLLM's FP8 Marlin kernel):
    /// half the weight bytes, BF16 compute.
    Fp8WeightOnly,
    /// FP8 weights and FP8 activations (W8A8): half the weight bytes and FP8 tensor cores
    /// where the GPU has them (elsewhere vLLM runs such a checkpoint weight-only).
    Fp8,
}

impl WeightFormat {
    pub const ALL: [WeightFormat; 3] = [
        WeightFormat::Bf16,
        WeightFormat::Fp8WeightOnly,
        WeightFormat::Fp8,
    ];

    /// The id in URLs and forms (`fp8` is W8A8, as a scenario file's `weight_dtype = "fp8"`).
    pub fn name(self) -> &'static str {
        match self {
            WeightFormat::Bf16 => "bf16",
            WeightFormat::Fp8WeightOnly => "fp8-weight-only",
            WeightFormat::Fp8 => "fp8",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            WeightFormat::Bf16 => "BF16",
            WeightFormat::Fp8WeightOnly => "FP8 weights only (W8A16)",
            WeightFormat::Fp8 => "FP8 weights and activations (W8A8)",
        }
    }

    pub fn from_name(name: &str) -> Option<WeightFormat> {
        WeightFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The format the weights are stored in.
    pub fn weight_dtype(self) -> Dtype {
        match self {
            WeightFormat::Bf16 => Dtype::Bf16,
            _ => Dtype::Fp8,
        }
    }

    /// The format the matmuls' inputs are in (their tensor cores, where the GPU has them).
    pub fn activation_dtype(self) -> Dtype {
        match self {
            WeightFormat::Fp8 => Dtype::Fp8,
            _ => Dtype::Bf16,
        }
    }

    /// The format of weights `weights` with activations `activations` (`None`: the weights'
    /// own). `None` when the pair is not one vLLM runs (FP8 activations need FP8 weights).
    pub fn of(weights: Dtype, activations: Option<Dtype>) -> Option<WeightFormat> {
        match (weights, activations.unwrap_or(weights)) {
            (Dtype::Bf16, Dtype::Bf16) => Some(WeightFormat::Bf16),
            (Dtype::Fp8, Dtype::Bf16) => Some(WeightFormat::Fp8WeightOnly),
            (Dtype::Fp8, Dtype::Fp8) => Some(WeightFormat::Fp8),
            (Dtype::Bf16, Dtype::Fp8) => None,
        }
    }
}

/// The shape of a decoder-only transformer, as its `config.json` gives it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Stable short name used in URLs and scenario files, e.g. `llama-3.1-8b`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Total parameters (all experts for a mixture of experts).
    pub params: u64,
    /// Parameters that take part in one token's forward pass (equals `params` for dense models).
    pub active_params: u64,
    pub layers: u32,
    pub hidden: u32,
    pub heads: u32,
    pub kv_heads: u32,
    pub head_dim: u32,
    /// Extra shape needed only to recompute the parameter count.
    #[serde(default)]
    pub shape: Option<ShapeDetail>,
}

/// The rest of the shape: enough to recompute the parameter count exactly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShapeDetail {
    pub vocab: u64,
    pub intermediate: u64,
    /// Experts per layer and experts routed per token (1 and 1 for a dense model).
    pub experts: u64,
    pub experts_per_token: u64,
    /// Whether the q, k and v projections carry biases (Qwen2.5 does).
    pub qkv_bias: bool,
    /// Whether the output head shares the embedding matrix.
    pub tied_embeddings: bool,
}

impl ModelSpec {
    /// Bytes of K and V written for one token across all layers: 2 x layers x kv_heads x
    /// head_dim x bytes per element.
    pub fn kv_bytes_per_token(&self, kv_dtype: Dtype) -> f64 {
        2.0 * self.layers as f64 * self.kv_heads as f64 * self.head_dim as f64 * kv_dtype.bytes()
    }

    /// Width of the attention queries (heads x head_dim), which sets attention FLOPs.
    pub fn q_dim(&self) -> f64 {
        self.heads as f64 * self.head_dim as f64
    }

    /// Parameters of a LoRA adapter of `rank` on this model: for every layer and every
    /// projection it adapts, an `A` of rank x input width and a `B` of output width x rank.
    /// The projections are the ones vLLM adapts on Llama-style models (q, k, v and o in
    /// attention; gate, up and down in the MLP); the MLP's are counted only when the shape
    /// detail gives its width and the model is dense (an adapter on every expert of a mixture
    /// is another matter), so without it the adapter is attention's alone.
    pub fn lora_params(&self, rank: u32) -> f64 {
        let h = self.hidden as f64;
        let q = self.q_dim();
        let kv = self.kv_heads as f64 * self.head_dim as f64;
        // q: h -> q, k and v: h -> kv, o: q -> h; each projection's A and B together hold
        // rank x (input + output) parameters.
        let attention = (h + q) + 2.0 * (h + kv) + (q + h);
        let mlp = match &self.shape {
            Some(s) if s.experts <= 1 => 3.0 * (h + s.intermediate as f64),
            _ => 0.0,
        };
        rank as f64 * self.layers as f64 * (attention + mlp)
    }

    /// Recomputes (total, active) parameters from the shape, when the shape detail is known.
    /// The sums are taken in 128 bits (every input in range still overflows 64 bits for some
    /// shapes); a count that does not fit in 64 bits is `None`, as no model can have it.
    pub fn params_from_shape(&self) -> Option<(u64, u64)> {
        let s = self.shape.as_ref()?;
        let h = self.hidden as u128;
        let q = self.heads as u128 * self.head_dim as u128;
        let kv = self.kv_heads as u128 * self.head_dim as u128;
        let (experts, per_token) = (s.experts as u128, s.experts_per_token as u128);
        let (intermediate, vocab) = (s.intermediate as u128, s.vocab as u128);
        let bias = if s.qkv_bias { q + 2 * kv } else { 0 };
        let attn = h * q + 2 * h * kv + q * h + bias;
        let expert = 3 * h * intermediate;
        let router = if s.experts > 1 { h * experts } else { 0 };
        let norms = 2 * h;
        let per_layer_total = attn + experts * expert + router + norms;
        let per_layer_active = attn + per_token * expert + router + norms;
        let embed = vocab * h;
        let head = if s.tied_embeddings { 0 } else { vocab * h };
        let fixed = embed + head + h;
        let layers = self.layers as u128;
        let total = u64::try_from(layers * per_layer_total + fixed).ok()?;
        let active = u64::try_from(layers * per_layer_active + fixed).ok()?;
        Some((total, active))
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let positive = [
            ("params", self.params),
            ("active_params", self.active_params),
            ("layers", self.layers as u64),
            ("hidden", self.hidden as u64),
            ("heads", self.heads as u64),
            ("kv_heads", self.kv_heads as u64),
            ("head_dim", self.head_dim as u64),
        ];
        for (field, v) in positive {
            if v == 0 {
                return Err(ConfigError::new(field, "must be greater than zero"));
            }
        }
        if self.active_params > self.params {
            return Err(ConfigError::new(
                "active_params",
                "cannot exceed the total parameters",
            ));
        }
        if self.kv_heads > self.heads {
            return Err(ConfigError::new(
                "kv_heads",
                "cannot exceed the attention heads",
            ));
        }
        if self.params > 100_000_000_000_000 {
            return Err(ConfigError::new(
                "params",
                "is over 100 trillion: check the units",
            ));
        }
        if self.layers > 10_000 || self.head_dim > 65_536 || self.heads > 65_536 {
            return Err(ConfigError::new("layers", "shape is implausibly large"));
        }
        Ok(())
    }
}

/// An accelerator's published peak figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuSpec {
    pub id: String,
    pub name: String,
    /// Dense BF16 tensor throughput, FLOP/s.
    pub bf16_flops: f64,
    /// Dense FP8 tensor throughput, FLOP/s; `None` where the part has no FP8 tensor cores.
    pub fp8_flops: Option<f64>,
    /// HBM (or GDDR) bandwidth, bytes/s.
    pub mem_bw: f64,
    /// Memory capacity, bytes (decimal GB x 1e9): the datasheet figure the calculator uses.
    pub mem_bytes: f64,
    /// Total memory as the device reports it to the CUDA runtime (`torch.cuda.mem_get_info`),
    /// which is what vLLM sizes its KV pool from; bytes. Where no report was found, the
    /// datasheet figure.
    #[serde(default)]
    pub reported_mem_bytes: f64,
    /// Per-direction GPU-to-GPU bandwidth used by tensor-parallel all-reduce, bytes/s.
    pub link_bw: f64,
    /// Per-direction bandwidth between the GPU and host memory (its PCIe link), bytes/s: what
    /// a KV cache kept in host memory is reloaded over.
    #[serde(default)]
    pub host_bw: f64,
}

impl GpuSpec {
    /// Peak dense throughput for math in `dtype`; FP8 falls back to BF16 where unsupported.
    pub fn peak_flops(&self, dtype: Dtype) -> f64 {
        match dtype {
            Dtype::Bf16 => self.bf16_flops,
            Dtype::Fp8 => self.fp8_flops.unwrap_or(self.bf16_flops),
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        crate::error::check_positive("bf16_flops", self.bf16_flops, 1e18)?;
        if let Some(f) = self.fp8_flops {
            crate::error::check_positive("fp8_flops", f, 1e18)?;
        }
        crate::error::check_positive("mem_bw", self.mem_bw, 1e15)?;
        crate::error::check_positive("mem_bytes", self.mem_bytes, 1e14)?;
        crate::error::check_positive("link_bw", self.link_bw, 1e15)?;
        crate::error::check_range("host_bw", self.host_bw, 0.0, 1e15)?;
        Ok(())
    }
}

/// Whether a dense model's attention projections carry biases.
#[derive(Clone, Copy)]
enum Bias {
    None,
    /// Biases on the query, key and value projections (Qwen2).
    Qkv,
}

fn dense(vocab: u64, intermediate: u64, bias: Bias) -> Option<ShapeDetail> {
    Some(ShapeDetail {
        vocab,
        intermediate,
        experts: 1,
        experts_per_token: 1,
        qkv_bias: matches!(bias, Bias::Qkv),
        tied_embeddings: false,
    })
}

/// Every model preset, in the order the app lists them.
pub fn models() -> Vec<ModelSpec> {
    vec![
        ModelSpec {
            id: "llama-3.1-8b".into(),
            name: "Llama 3.1 8B".into(),
            params: 8_030_261_248,
            active_params: 8_030_261_248,
            layers: 32,
            hidden: 4096,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            shape: dense(128_256, 14_336, Bias::None),
        },
        ModelSpec {
            id: "llama-3.1-70b".into(),
            name: "Llama 3.1 70B".into(),
            params: 70_553_706_496,
            active_params: 70_553_706_496,
            layers: 80,
            hidden: 8192,
            heads: 64,
            kv_heads: 8,
            head_dim: 128,
            shape: dense(128_256, 28_672, Bias::None),
        },
        ModelSpec {
            id: "llama-3.1-405b".into(),
            name: "Llama 3.1 405B".into(),
            params: 405_853_388_800,
            active_params: 405_853_388_800,
            layers: 126,
            hidden: 16_384,
            heads: 128,
            kv_heads: 8,
            head_dim: 128,
            shape: dense(128_256, 53_248, Bias::None),
        },
        ModelSpec {
            id: "mistral-7b".into(),
            name: "Mistral 7B".into(),
            params: 7_241_732_096,
            active_params: 7_241_732_096,
            layers: 32,
            hidden: 4096,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            shape: dense(32_000, 14_336, Bias::None),
        },
        ModelSpec {
            id: "qwen2.5-7b".into(),
            name: "Qwen2.5 7B".into(),
            params: 7_615_616_512,
            active_params: 7_615_616_512,
            layers: 28,
            hidden: 3584,
            heads: 28,
            kv_heads: 4,
            head_dim: 128,
            shape: dense(152_064, 18_944, Bias::Qkv),
        },
        ModelSpec {
            id: "qwen2.5-72b".into(),
            name: "Qwen2.5 72B".into(),
            params: 72_706_203_648,
            active_params: 72_706_203_648,
            layers: 80,
            hidden: 8192,
            heads: 64,
            kv_heads: 8,
            head_dim: 128,
            shape: dense(152_064, 29_568, Bias::Qkv),
        },
        ModelSpec {
            id: "mixtral-8x7b".into(),
            name: "Mixtral 8x7B".into(),
            params: 46_702_792_704,
            active_params: 12_879_925_248,
            layers: 32,
            hidden: 4096,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            shape: Some(ShapeDetail {
                vocab: 32_000,
                intermediate: 14_336,
                experts: 8,
                experts_per_token: 2,
                qkv_bias: false,
                tied_embeddings: false,
            }),
        },
    ]
}

/// A GPU's datasheet, in the units datasheets use.
struct Datasheet {
    id: &'static str,
    name: &'static str,
    /// Dense BF16 tensor throughput, TFLOP/s.
    bf16_tflops: f64,
    /// Dense FP8 tensor throughput, TFLOP/s.
    fp8_tflops: Option<f64>,
    /// Memory bandwidth, TB/s.
    mem_tb_s: f64,
    /// Memory, decimal GB.
    mem_gb: f64,
    /// GPU-to-GPU bandwidth each way, GB/s.
    link_gb_s: f64,
    /// Total memory as the device reports it, MiB; the datasheet figure when `None`.
    reported_mib: Option<f64>,
    /// GPU-to-host bandwidth each way (the PCIe link), GB/s.
    host_gb_s: f64,
}

const MIB: f64 = 1024.0 * 1024.0;

impl Datasheet {
    fn spec(self) -> GpuSpec {
        GpuSpec {
            id: self.id.into(),
            name: self.name.into(),
            bf16_flops: self.bf16_tflops * 1e12,
            fp8_flops: self.fp8_tflops.map(|t| t * 1e12),
            mem_bw: self.mem_tb_s * 1e12,
            mem_bytes: self.mem_gb * 1e9,
            reported_mem_bytes: self.reported_mib.map_or(self.mem_gb * 1e9, |mib| mib * MIB),
            link_bw: self.link_gb_s * 1e9,
            host_bw: self.host_gb_s * 1e9,
        }
    }
}

/// Every GPU preset, in the order the app lists them. Host links are each part's PCIe
/// generation at x16, per direction: Gen5 (64 GB/s) on H100 SXM, H200, B200 and MI300X, Gen4
/// (32 GB/s) on A100 and L40S (their datasheets give both directions together: 128 and 64 GB/s).
pub fn gpus() -> Vec<GpuSpec> {
    vec![
        // NVLink 4: 900 GB/s bidirectional, 450 GB/s each way.
        // torch's `total_memory=81089MB` (torch 2.7) for "NVIDIA H100 80GB HBM3"; nvidia-smi
        // shows 81,559 MiB, of which the driver keeps some; a vLLM memory profile on such a
        // box reads total_gpu_memory 79.22 GiB (vLLM PR 10511).
        Datasheet {
            id: "h100-sxm",
            name: "H100 SXM 80 GB",
            bf16_tflops: 989.0,
            fp8_tflops: Some(1979.0),
            mem_tb_s: 3.35,
            mem_gb: 80.0,
            link_gb_s: 450.0,
            reported_mib: Some(81_089.0),
            host_gb_s: 64.0,
        }
        .spec(),
        // torch's `total_memory=143156MB` for "NVIDIA H200" (nvidia-smi: 143,771 MiB).
        Datasheet {
            id: "h200",
            name: "H200 141 GB",
            bf16_tflops: 989.0,
            fp8_tflops: Some(1979.0),
            mem_tb_s: 4.8,
            mem_gb: 141.0,
            link_gb_s: 450.0,
            reported_mib: Some(143_156.0),
            host_gb_s: 64.0,
        }
        .spec(),
        // NVLink 3: 600 GB/s bidirectional. No FP8 tensor cores. torch's out-of-memory message
        // on an A100 80 GB reads "a total capacity of 79.15 GiB" (nvidia-smi: 81,920 MiB).
        Datasheet {
            id: "a100-80gb",
            name: "A100 SXM 80 GB",
            bf16_tflops: 312.0,
            fp8_tflops: None,
            mem_tb_s: 2.039,
            mem_gb: 80.0,
            link_gb_s: 300.0,
            reported_mib: Some(79.15 * 1024.0),
            host_gb_s: 32.0,
        }
        .spec(),
        // NVLink 5: 1.8 TB/s bidirectional.
        Datasheet {
            id: "b200",
            name: "B200 180 GB",
            bf16_tflops: 2250.0,
            fp8_tflops: Some(4500.0),
            mem_tb_s: 8.0,
            mem_gb: 180.0,
            link_gb_s: 900.0,
            reported_mib: None,
            host_gb_s: 64.0,
        }
        .spec(),
        // PCIe Gen4 x16 only: 32 GB/s each way.
        Datasheet {
            id: "l40s",
            name: "L40S 48 GB",
            bf16_tflops: 362.05,
            fp8_tflops: Some(733.0),
            mem_tb_s: 0.864,
            mem_gb: 48.0,
            link_gb_s: 32.0,
            reported_mib: None,
            host_gb_s: 32.0,
        }
        .spec(),
        // Infinity Fabric: 896 GB/s aggregate peer bandwidth, 448 each way.
        Datasheet {
            id: "mi300x",
            name: "MI300X 192 GB",
            bf16_tflops: 1307.4,
            fp8_tflops: Some(2614.9),
            mem_tb_s: 5.3,
            mem_gb: 192.0,
            link_gb_s: 448.0,
            reported_mib: None,
            host_gb_s: 64.0,
        }
        .spec(),
    ]
}

pub fn model_by_id(id: &str) -> Option<ModelSpec> {
    models().into_iter().find(|m| m.id == id)
}

/// Small models that draft tokens for a larger one of the same family (speculative decoding),
/// not offered as models to serve. Llama 3.2 1B's shape is its published `config.json`
/// (meta-llama/Llama-3.2-1B): it shares Llama 3.1's tokenizer, so it can draft for the 8B and
/// the 70B. Its input embedding doubles as its output head.
pub fn draft_models() -> Vec<ModelSpec> {
    let mut shape = dense(128_256, 8_192, Bias::None);
    if let Some(s) = shape.as_mut() {
        s.tied_embeddings = true;
    }
    vec![ModelSpec {
        id: "llama-3.2-1b".into(),
        name: "Llama 3.2 1B".into(),
        params: 1_235_814_400,
        active_params: 1_235_814_400,
        layers: 16,
        hidden: 2048,
        heads: 32,
        kv_heads: 8,
        head_dim: 64,
        shape,
    }]
}

/// The draft model `id` (see [`draft_models`]), or an error on field `model` that lists them.
pub fn draft_or_error(id: &str) -> Result<ModelSpec, ConfigError> {
    draft_models()
        .into_iter()
        .find(|m| m.id == id)
        .ok_or_else(|| {
            let ids: Vec<String> = draft_models().into_iter().map(|m| m.id).collect();
            ConfigError::new(
                "model",
                format!(
                    "no draft model called {id:?} in the catalog (known: {})",
                    ids.join(", ")
                ),
            )
        })
}

pub fn gpu_by_id(id: &str) -> Option<GpuSpec> {
    gpus().into_iter().find(|g| g.id == id)
}

/// A link a replica's KV cache can cross to reach another replica (disaggregated prefill and
/// decode): its line rate per GPU and direction, and a fixed cost per transfer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkSpec {
    pub id: String,
    pub name: String,
    /// Bytes per second each way: per GPU when `per_gpu` (each GPU of a tensor-parallel
    /// replica sends its own share of the KV heads over its own link), else per replica.
    pub bandwidth: f64,
    pub per_gpu: bool,
    /// Seconds per transfer before the first byte moves: posting the reads and hearing they
    /// are done.
    pub latency_s: f64,
    /// Whether both ends must sit in one node (NVLink), or may be anywhere in the cluster.
    pub within_node: bool,
}

impl LinkSpec {
    pub fn validate(&self) -> Result<(), ConfigError> {
        crate::error::check_positive("bandwidth", self.bandwidth, 1e15)?;
        crate::error::check_range("latency_s", self.latency_s, 0.0, 10.0)?;
        Ok(())
    }
}

/// Every link preset for moving KV caches between replicas, fastest first.
///
/// Line rates are the datasheets': NVLink 4 on H100 SXM, 900 GB/s both ways together, so 450
/// each way (NVIDIA H100 datasheet); InfiniBand NDR at 400 Gb/s per port, one ConnectX-7 per
/// GPU as in a DGX H100 (NVIDIA DGX H100 user guide: eight single-port ConnectX-7 for the
/// compute fabric; AWS p5's EFA gives the same 3,200 Gb/s per eight GPUs); Ethernet at 100
/// and 25 Gb/s per replica, a node's shared network card without RDMA per GPU (DistServe's
/// cross-node testbed had 25 Gb/s). The per-transfer latencies are assumed orders of
/// magnitude (a few microseconds of wire and switch, tens for posting RDMA reads and the
/// completion notice, more through a kernel's TCP stack), not measurements: for any prompt
/// past a few dozen tokens the bytes over the line rate dominate. Real transfers of vLLM's
/// 16-token pages reach well under the line rate (many small reads): the fleet's
/// `disagg.link_share` scales it.
pub fn links() -> Vec<LinkSpec> {
    // (id, name, GB/s each way, microseconds per transfer, per GPU, within a node)
    let rows = [
        ("nvlink-4", "NVLink 4, same node", 450.0, 10.0, true, true),
        (
            "infiniband-ndr",
            "InfiniBand NDR, 400 Gb/s per GPU",
            50.0,
            30.0,
            true,
            false,
        ),
        (
            "ethernet-100g",
            "Ethernet, 100 Gb/s per replica",
            12.5,
            100.0,
            false,
            false,
        ),
        (
            "ethernet-25g",
            "Ethernet, 25 Gb/s per replica",
            3.125,
            100.0,
            false,
            false,
        ),
    ];
    rows.into_iter()
        .map(|(id, name, gb_s, us, per_gpu, within_node)| LinkSpec {
            id: id.into(),
            name: name.into(),
            bandwidth: gb_s * 1e9,
            per_gpu,
            latency_s: us * 1e-6,
            within_node,
        })
        .collect()
}

/// The link preset `id`, or an error on field `link` that lists the known ids.
pub fn link_or_error(id: &str) -> Result<LinkSpec, ConfigError> {
    let all = links();
    match all.iter().find(|l| l.id == id) {
        Some(l) => Ok(l.clone()),
        None => {
            let ids: Vec<&str> = all.iter().map(|l| l.id.as_str()).collect();
            Err(ConfigError::new(
                "link",
                format!(
                    "no link called {id:?} in the catalog (known: {})",
                    ids.join(", ")
                ),
            ))
        }
    }
}

/// The model preset `id`, or an error on field `model` that lists the known ids.
pub fn model_or_error(id: &str) -> Result<ModelSpec, ConfigError> {
    model_by_id(id).ok_or_else(|| {
        let ids: Vec<String> = models().into_iter().map(|m| m.id).collect();
        ConfigError::new(
            "model",
            format!(
                "no model called {id:?} in the catalog (known: {})",
                ids.join(", ")
            ),
        )
    })
}

/// The GPU preset `id`, or an error on field `gpu` that lists the known ids.
pub fn gpu_or_error(id: &str) -> Result<GpuSpec, ConfigError> {
    gpu_by_id(id).ok_or_else(|| {
        let ids: Vec<String> = gpus().into_iter().map(|g| g.id).collect();
        ConfigError::new(
            "gpu",
            format!(
                "no GPU called {id:?} in the catalog (known: {})",
                ids.join(", ")
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_valid_and_named_in_errors() {
        for l in links() {
            l.validate().expect("preset is valid");
            assert_eq!(link_or_error(&l.id).expect("found"), l);
        }
        let e = link_or_error("carrier-pigeon").expect_err("unknown");
        assert_eq!(e.field, "link");
        assert!(e.message.contains("infiniband-ndr"), "{}", e.message);
    }

    #[test]
    fn every_published_parameter_count_matches_its_shape() {
        for m in models().into_iter().chain(draft_models()) {
            let (total, active) = m.params_from_shape().expect("every preset has its shape");
            assert_eq!(total, m.params, "{} total", m.id);
            assert_eq!(active, m.active_params, "{} active", m.id);
            m.validate().unwrap();
        }
    }

    #[test]
    fn kv_bytes_per_token_come_from_the_shape() {
        let l8 = model_by_id("llama-3.1-8b").unwrap();
        assert_eq!(l8.kv_bytes_per_token(Dtype::Bf16), 131_072.0);
        assert_eq!(l8.kv_bytes_per_token(Dtype::Fp8), 65_536.0);
        let l70 = model_by_id("llama-3.1-70b").unwrap();
        assert_eq!(l70.kv_bytes_per_token(Dtype::Bf16), 320.0 * 1024.0);
    }

    #[test]
    fn ids_are_unique_and_gpus_valid() {
        let ms = models();
        for (i, a) in ms.iter().enumerate() {
            assert!(ms[i + 1..].iter().all(|b| b.id != a.id));
        }
        for g in gpus() {
            g.validate().unwrap();
        }
        assert_eq!(
            gpu_by_id("a100-80gb").unwrap().peak_flops(Dtype::Fp8),
            312e12
        );
    }
}
