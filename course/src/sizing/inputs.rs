//! Typed inputs of the sizing questions, their valid ranges, and the URL query string.
//!
//! Numeric inputs live in a map from a stable name to a value in the unit its [`InputSpec`]
//! names (fractions for percentages: `mfu=0.5` is 50 %). The model, the GPU and the two number
//! formats are choices; choosing a model or GPU preset resets the shape or hardware figures it
//! provides, which stay editable as custom overrides. A value's default therefore depends on the
//! current choices: the query string writes only values that differ from it.

use super::{query, Question};
use serde::Serialize;
use std::collections::BTreeMap;
use trainer_engine::catalog::{self, Dtype, GpuSpec, ModelSpec, WeightFormat};
use trainer_engine::cost::Deployment;
use trainer_engine::error::ConfigError;
use trainer_engine::format;

/// How an input is entered and shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// Any number in range.
    Number,
    /// A whole number in range.
    Integer,
    /// A fraction in range, shown to people as a percentage.
    Percent,
    /// One of [`InputSpec::options`].
    Choice,
}

/// Which panel of the form an input belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputGroup {
    Workload,
    Model,
    Hardware,
    Engine,
    Memory,
    Money,
}

/// One option of a choice input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChoiceOption {
    /// The value written to the query string, e.g. `llama-3.1-8b`.
    pub id: String,
    /// What the form shows, e.g. `Llama 3.1 8B`.
    pub label: String,
}

/// Everything the app needs to draw one input and everything the parser needs to check it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InputSpec {
    /// Stable URL-safe name, used as the query key and as [`ConfigError::field`].
    pub name: &'static str,
    /// What the form shows beside the field.
    pub label: &'static str,
    /// Unit of the stored value (`""` for a pure count or a choice).
    pub unit: &'static str,
    /// Smallest valid value (inclusive).
    pub min: f64,
    /// Largest valid value (inclusive).
    pub max: f64,
    /// A sensible increment for a spinner or slider.
    pub step: f64,
    /// The default under the question's default choices (0 for a choice input).
    pub default: f64,
    /// How the value is entered and shown.
    pub kind: InputKind,
    /// Which panel of the form holds the input.
    pub group: InputGroup,
    /// The options of a choice input (empty otherwise).
    pub options: Vec<ChoiceOption>,
    /// The default option's id for a choice input (empty otherwise).
    pub default_choice: String,
}

impl InputKind {
    /// The text a field shows for a value: a percentage in percent, any other number as it is
    /// (to 12 significant figures, so binary noise does not show).
    pub fn field_text(self, value: f64) -> String {
        let shown = if self == InputKind::Percent {
            value * 100.0
        } else {
            value
        };
        format!("{}", format::round_sig(shown, 12))
    }

    /// The text typed into a field as [`Inputs::set_text`] reads it: a percentage field is
    /// typed in percent, so a bare number gets its `%`.
    pub fn typed(self, text: &str) -> String {
        let t = text.trim();
        if self == InputKind::Percent && !t.ends_with('%') && !t.is_empty() {
            format!("{t}%")
        } else {
            text.to_string()
        }
    }
}

impl InputSpec {
    /// The unit a field shows beside its text (`%` for a percentage, `""` for none).
    pub fn field_unit(&self) -> &'static str {
        if self.kind == InputKind::Percent {
            "%"
        } else {
            self.unit
        }
    }

    /// The valid range as a field's hint, in the unit the field is typed in.
    pub fn range_text(&self) -> String {
        match self.kind {
            InputKind::Percent => format!("{} to {} %", self.min * 100.0, self.max * 100.0),
            _ => format!("{} to {}", format::num(self.min), format::num(self.max)),
        }
    }
}

/// The values of one question's inputs: four choices and a map of numeric values.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Inputs {
    model: String,
    gpu: String,
    weights: WeightFormat,
    kv_dtype: Dtype,
    values: BTreeMap<String, f64>,
}

impl Inputs {
    /// The question's default inputs: its presets and every figure at its default.
    pub fn defaults(q: Question) -> Inputs {
        let (model, gpu, weights, kv_dtype) = default_choices(q);
        let mut inputs = Inputs {
            model: model.to_string(),
            gpu: gpu.to_string(),
            weights,
            kv_dtype,
            values: BTreeMap::new(),
        };
        for (name, _) in question_inputs(q) {
            if let Some(v) = inputs.default_value(q, name) {
                inputs.values.insert(name.to_string(), v);
            }
        }
        inputs
    }

    /// The specs of the question's inputs, choices first, with defaults under the current
    /// choices (so a custom model's form shows that model's preset figures as defaults).
    pub fn specs(&self, q: Question) -> Vec<InputSpec> {
        let mut out = choice_specs(q);
        for (name, _) in question_inputs(q) {
            let Some(d) = find_def(name) else { continue };
            out.push(InputSpec {
                name: d.name,
                label: label(q, d),
                unit: d.unit,
                min: d.min,
                max: d.max,
                step: d.step,
                default: self.default_value(q, name).unwrap_or(0.0),
                kind: d.kind,
                group: d.group,
                options: Vec::new(),
                default_choice: String::new(),
            });
        }
        out
    }

    /// The id of the chosen model preset.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The id of the chosen GPU preset.
    pub fn gpu(&self) -> &str {
        &self.gpu
    }

    /// The number format of the weights.
    pub fn weight_dtype(&self) -> Dtype {
        self.weights.weight_dtype()
    }

    /// How the linear layers are stored and run (the `weight_dtype` choice).
    pub fn weight_format(&self) -> WeightFormat {
        self.weights
    }

    /// The number format of the KV cache.
    pub fn kv_dtype(&self) -> Dtype {
        self.kv_dtype
    }

    /// The value of a numeric input, if the inputs hold it.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.values.get(name).copied()
    }

    /// Whether a numeric input is at its default under the current choices (a form can mark
    /// the others as custom).
    pub fn is_default(&self, q: Question, name: &str) -> bool {
        self.get(name).is_some() && self.get(name) == self.default_value(q, name)
    }

    /// Every numeric input's name and value, in name order.
    pub fn values(&self) -> impl Iterator<Item = (&str, f64)> {
        self.values.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// Sets a numeric input. The value is stored even when it is out of range (so the form
    /// keeps what was typed) and the returned error says what is wrong with it; an unknown
    /// name is refused. Setting `params` on a dense model moves `active_params` along with it
    /// while the latter still follows its default.
    pub fn set(&mut self, q: Question, name: &str, value: f64) -> Result<(), ConfigError> {
        let Some(def) = find_def(name).filter(|_| self.values.contains_key(name)) else {
            return Err(ConfigError::new(name, "is not an input of this question"));
        };
        let follows =
            name == "params" && self.get("active_params") == self.default_value(q, "active_params");
        self.values.insert(name.to_string(), value);
        if follows {
            if let Some(v) = self.default_value(q, "active_params") {
                self.values.insert("active_params".to_string(), v);
            }
        }
        check_value(def, value).map(|_| ())
    }

    /// Parses text typed into a field (a number; a percentage input also takes `50%`) and sets
    /// it. Text that is not a number is refused and leaves the input unchanged.
    pub fn set_text(&mut self, q: Question, name: &str, text: &str) -> Result<(), ConfigError> {
        if CHOICES.contains(&name) {
            return self.set_choice(q, name, text);
        }
        let Some(def) = find_def(name).filter(|_| self.values.contains_key(name)) else {
            return Err(ConfigError::new(name, "is not an input of this question"));
        };
        let v = parse_number(def, text)?;
        self.set(q, name, v)
    }

    /// Sets a choice (`model`, `gpu`, `weight_dtype`, `kv_dtype`) by option id. A new model
    /// or GPU preset resets the figures it provides; a new weight format resets the peak
    /// TFLOP/s. An unknown option is refused and changes nothing.
    pub fn set_choice(&mut self, q: Question, name: &str, id: &str) -> Result<(), ConfigError> {
        let id = id.trim();
        let reset: &[&str] = match name {
            "model" => {
                let m = catalog::model_by_id(id).ok_or_else(|| unknown_option(name, id))?;
                self.model = m.id;
                &MODEL_FIELDS
            }
            "gpu" => {
                let g = catalog::gpu_by_id(id).ok_or_else(|| unknown_option(name, id))?;
                self.gpu = g.id;
                &GPU_PRESET
            }
            "weight_dtype" => {
                self.weights =
                    WeightFormat::from_name(id).ok_or_else(|| unknown_option(name, id))?;
                &["peak_tflops"]
            }
            "kv_dtype" => {
                self.kv_dtype = Dtype::from_name(id).ok_or_else(|| unknown_option(name, id))?;
                &[]
            }
            _ => return Err(ConfigError::new(name, "is not a choice of this question")),
        };
        for &field in reset {
            if self.values.contains_key(field) {
                if let Some(v) = self.default_value(q, field) {
                    self.values.insert(field.to_string(), v);
                }
            }
        }
        Ok(())
    }

    /// The default of a numeric input under the current choices: the preset's figure for a
    /// model or GPU figure (active parameters follow `params` on a dense model), the question's
    /// default otherwise.
    pub fn default_value(&self, q: Question, name: &str) -> Option<f64> {
        if let Some(fixed) = question_inputs(q)
            .into_iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, d)| d)
        {
            return Some(fixed);
        }
        if MODEL_FIELDS.contains(&name) {
            let m = catalog::model_by_id(&self.model)?;
            return Some(match name {
                "params" => m.params as f64,
                "active_params" if m.active_params == m.params => {
                    self.get("params").unwrap_or(m.params as f64)
                }
                "active_params" => m.active_params as f64,
                "layers" => m.layers as f64,
                "hidden" => m.hidden as f64,
                "heads" => m.heads as f64,
                "kv_heads" => m.kv_heads as f64,
                _ => m.head_dim as f64,
            });
        }
        if GPU_PRESET.contains(&name) {
            let g = catalog::gpu_by_id(&self.gpu)?;
            return Some(match name {
                "peak_tflops" => g.peak_flops(self.matmul_dtype(&g)) / 1e12,
                "hbm_tb_s" => g.mem_bw / 1e12,
                "pcie_gb_s" => g.host_bw / 1e9,
                _ => g.mem_bytes / 1e9,
            });
        }
        None
    }

    /// Reads a query string such as `question=fleet&model=llama-3.1-70b&rate=60`. Unknown keys
    /// are ignored; a bad value leaves that input at its default and adds an error for it; the
    /// question defaults to [`Question::Fleet`]. A leading `?`, `+` for space and `%XX` escapes
    /// are understood. Never panics.
    pub fn from_query(query: &str) -> (Question, Inputs, Vec<ConfigError>) {
        let mut errors = Vec::new();
        let pairs = query::pairs(query);
        let q = match pairs.get("question") {
            None => Question::Fleet,
            Some(id) => Question::from_id(id.trim()).unwrap_or_else(|| {
                errors.push(ConfigError::new(
                    "question",
                    format!("is not a known question: \"{}\"", clip(id)),
                ));
                Question::Fleet
            }),
        };
        let (inputs, more) = Inputs::from_pairs(q, &pairs);
        errors.extend(more);
        (q, inputs, errors)
    }

    /// The inputs of question `q` from decoded query pairs (the `question` key is not read):
    /// unknown keys are ignored, a bad value leaves its input at its default with an error.
    pub(super) fn from_pairs(
        q: Question,
        pairs: &BTreeMap<String, String>,
    ) -> (Inputs, Vec<ConfigError>) {
        let mut errors = Vec::new();
        let mut inputs = Inputs::defaults(q);
        for name in CHOICES {
            if let Some(id) = pairs.get(name) {
                if let Err(e) = inputs.set_choice(q, name, id) {
                    errors.push(e);
                }
            }
        }
        let mut given = Vec::new();
        for (name, _) in question_inputs(q) {
            let (Some(text), Some(def)) = (pairs.get(name), find_def(name)) else {
                continue;
            };
            match parse_number(def, text).and_then(|v| check_value(def, v)) {
                Ok(v) => {
                    inputs.values.insert(name.to_string(), v);
                    given.push(name);
                }
                Err(e) => errors.push(e),
            }
        }
        // Inputs the query does not give take their defaults under the final values, so that
        // active parameters follow a custom parameter count on a dense model.
        for (name, _) in question_inputs(q) {
            if !given.contains(&name) {
                if let Some(v) = inputs.default_value(q, name) {
                    inputs.values.insert(name.to_string(), v);
                }
            }
        }
        (inputs, errors)
    }

    /// Writes the inputs as a query string: the question, then every choice and figure that
    /// differs from its default, in form order. Values are written so that they parse back
    /// bit for bit.
    pub fn to_query(&self, q: Question) -> String {
        let mut pairs = vec![("question", q.id().to_string())];
        pairs.extend(self.changed(q));
        query::write(&pairs)
    }

    /// Every choice and figure that differs from its default, in form order, with its value
    /// as the query string writes it.
    pub(super) fn changed(&self, q: Question) -> Vec<(&'static str, String)> {
        self.changed_keeping(q, &BTreeMap::new())
    }

    /// As [`Inputs::changed`], but a field named in `bad` is written as that text (what the
    /// learner typed that is not a value), in its place in form order.
    pub(super) fn changed_keeping(
        &self,
        q: Question,
        bad: &BTreeMap<String, String>,
    ) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let (model, gpu, wd, kd) = default_choices(q);
        let choices = [
            ("model", self.model.as_str(), model),
            ("gpu", self.gpu.as_str(), gpu),
            ("weight_dtype", self.weights.name(), wd.name()),
            ("kv_dtype", self.kv_dtype.name(), kd.name()),
        ];
        for (name, value, default) in choices {
            if let Some(text) = bad.get(name) {
                out.push((name, text.clone()));
            } else if value != default {
                out.push((name, value.to_string()));
            }
        }
        for (name, _) in question_inputs(q) {
            if let Some(text) = bad.get(name) {
                out.push((name, text.clone()));
                continue;
            }
            let Some(v) = self.get(name) else { continue };
            if Some(v) != self.default_value(q, name) {
                out.push((name, format!("{v}")));
            }
        }
        out
    }

    /// Checks every input of the question, returning one error per bad field.
    pub fn validate(&self, q: Question) -> Vec<ConfigError> {
        let mut errors = Vec::new();
        for (name, _) in question_inputs(q) {
            let Some(def) = find_def(name) else { continue };
            match self.get(name) {
                None => errors.push(ConfigError::new(name, "is missing")),
                Some(v) => {
                    if let Err(e) = check_value(def, v) {
                        errors.push(e);
                    }
                }
            }
        }
        if errors.is_empty() {
            let (p, a) = (self.get("params"), self.get("active_params"));
            if let (Some(p), Some(a)) = (p, a) {
                if a > p {
                    errors.push(ConfigError::new(
                        "active_params",
                        "cannot exceed the total parameters",
                    ));
                }
            }
            let (h, kv) = (self.get("heads"), self.get("kv_heads"));
            if let (Some(h), Some(kv)) = (h, kv) {
                if kv > h {
                    errors.push(ConfigError::new(
                        "kv_heads",
                        "cannot exceed the attention heads",
                    ));
                }
            }
        }
        errors
    }

    /// The model as the inputs describe it: the preset with any custom figures applied.
    /// Call after [`Inputs::validate`] has passed.
    /// The model and GPU these inputs describe, or an error on the field whose preset is unknown.
    /// The deployment these inputs describe: the (possibly customised) model and GPU on
    /// `gpus_per_replica` GPUs in the chosen number formats.
    pub(super) fn deployment(&self) -> Result<Deployment, ConfigError> {
        let (model, gpu) = self.hardware()?;
        let tp = self.get("gpus_per_replica").unwrap_or(0.0) as u32;
        Ok(Deployment {
            model,
            gpu,
            tp,
            weight_dtype: self.weight_dtype(),
            kv_dtype: self.kv_dtype(),
            activation_dtype: None,
        }
        .with_weight_format(self.weights))
    }

    pub(super) fn hardware(&self) -> Result<(ModelSpec, GpuSpec), ConfigError> {
        let model = self
            .model_spec()
            .ok_or_else(|| ConfigError::new("model", "has no preset with that id"))?;
        let gpu = self
            .gpu_spec()
            .ok_or_else(|| ConfigError::new("gpu", "has no preset with that id"))?;
        Ok((model, gpu))
    }

    pub(super) fn model_spec(&self) -> Option<ModelSpec> {
        let mut m = catalog::model_by_id(&self.model)?;
        let int = |name: &str| self.get(name).map(|v| v as u64);
        m.params = int("params")?;
        m.active_params = int("active_params")?;
        m.layers = int("layers")? as u32;
        m.hidden = int("hidden")? as u32;
        m.heads = int("heads")? as u32;
        m.kv_heads = int("kv_heads")? as u32;
        m.head_dim = int("head_dim")? as u32;
        if m.params_from_shape() != Some((m.params, m.active_params)) {
            // The published shape detail no longer describes a customised model.
            m.shape = None;
        }
        Some(m)
    }

    /// The format the matmuls run in on GPU `g`: FP8 for FP8 weights and activations on a GPU
    /// with FP8 tensor cores, BF16 otherwise (weight-only FP8 multiplies in BF16).
    fn matmul_dtype(&self, g: &GpuSpec) -> Dtype {
        match (self.weights.activation_dtype(), g.fp8_flops) {
            (Dtype::Fp8, Some(_)) => Dtype::Fp8,
            _ => Dtype::Bf16,
        }
    }

    /// The GPU as the inputs describe it. The peak figure is the one the matmuls run at, as
    /// the cost model reads it.
    pub(super) fn gpu_spec(&self) -> Option<GpuSpec> {
        let mut g = catalog::gpu_by_id(&self.gpu)?;
        let peak = self.get("peak_tflops")? * 1e12;
        match self.matmul_dtype(&g) {
            Dtype::Bf16 => g.bf16_flops = peak,
            Dtype::Fp8 => g.fp8_flops = Some(peak),
        }
        g.mem_bw = self.get("hbm_tb_s")? * 1e12;
        // The device reports a little more (or less) than its label; a learner's capacity keeps
        // the preset's ratio, so the simulator sizes its pool from what such a device reports.
        let ratio = g.reported_mem_bytes / g.mem_bytes;
        g.mem_bytes = self.get("gpu_mem_gb")? * 1e9;
        g.reported_mem_bytes = g.mem_bytes * ratio;
        // Only the host-memory question asks for the host link; the others keep the preset's.
        if let Some(pcie) = self.get("pcie_gb_s") {
            g.host_bw = pcie * 1e9;
        }
        Some(g)
    }
}

/// The names of the choice inputs, in the order the query string writes them.
const CHOICES: [&str; 4] = ["model", "gpu", "weight_dtype", "kv_dtype"];

/// A numeric input's definition; its default comes from the question or from a preset.
struct Def {
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    min: f64,
    max: f64,
    step: f64,
    kind: InputKind,
    group: InputGroup,
}

/// Model figures that follow the model preset.
const MODEL_FIELDS: [&str; 7] = [
    "params",
    "active_params",
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
];

/// GPU figures that follow the GPU preset (the peak also follows the weight format).
const GPU_FIELDS: [&str; 3] = ["peak_tflops", "hbm_tb_s", "gpu_mem_gb"];

/// Every figure a GPU preset supplies: the ones every question has, and the host link the
/// host-memory question adds.
const GPU_PRESET: [&str; 4] = ["peak_tflops", "hbm_tb_s", "gpu_mem_gb", "pcie_gb_s"];

/// Whether input `name` is a figure a model or GPU preset supplies (the page folds these
/// under their chooser).
pub fn is_preset_figure(name: &str) -> bool {
    MODEL_FIELDS.contains(&name) || GPU_PRESET.contains(&name)
}

const fn def(
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    range: (f64, f64, f64),
    kind: InputKind,
    group: InputGroup,
) -> Def {
    Def {
        name,
        label,
        unit,
        min: range.0,
        max: range.1,
        step: range.2,
        kind,
        group,
    }
}

use InputGroup as G;
use InputKind as K;

/// Every numeric input any question uses: name, label, unit, (min, max, step), kind, group.
/// Ranges stay inside what the cost model accepts.
#[rustfmt::skip]
const DEFS: &[Def] = &[
    def("rate", "Arrival rate", "req/s", (0.001, 1e6, 1.0), K::Number, G::Workload),
    def("prompt_tokens", "Prompt length", "tokens", (1.0, 2e6, 100.0), K::Integer, G::Workload),
    def("output_tokens", "Output length", "tokens", (1.0, 1e6, 10.0), K::Integer, G::Workload),
    def("chat_tokens", "Tokens per chat", "tokens", (1.0, 1e7, 256.0), K::Integer, G::Workload),
    def("context", "Context during decode", "tokens", (1.0, 1e7, 1.0), K::Integer, G::Workload),
    def("tpot_ms", "Time per output token (target)", "ms", (0.1, 1e4, 1.0), K::Number, G::Workload),
    def("completion_s", "Completion time per job (target)", "s", (0.001, 1e7, 1.0), K::Number, G::Workload),
    def("params", "Parameters", "", (1e6, 1e14, 1e8), K::Integer, G::Model),
    def("active_params", "Active parameters per token", "", (1e6, 1e14, 1e8), K::Integer, G::Model),
    def("layers", "Layers", "", (1.0, 10_000.0, 1.0), K::Integer, G::Model),
    def("hidden", "Hidden size", "", (1.0, 1_048_576.0, 128.0), K::Integer, G::Model),
    def("heads", "Attention heads", "", (1.0, 65_536.0, 1.0), K::Integer, G::Model),
    def("kv_heads", "KV heads", "", (1.0, 65_536.0, 1.0), K::Integer, G::Model),
    def("head_dim", "Head dimension", "", (1.0, 65_536.0, 1.0), K::Integer, G::Model),
    def("gpus_per_replica", "GPUs per replica", "GPUs", (1.0, 64.0, 1.0), K::Integer, G::Hardware),
    def("peak_tflops", "Peak dense TFLOP/s per GPU", "TFLOP/s", (0.1, 1e6, 1.0), K::Number, G::Hardware),
    def("hbm_tb_s", "Memory bandwidth per GPU", "TB/s", (0.01, 1000.0, 0.05), K::Number, G::Hardware),
    def("gpu_mem_gb", "Memory per GPU", "GB", (1.0, 1e5, 1.0), K::Number, G::Hardware),
    def("mfu", "Prefill MFU", "", (0.01, 1.0, 0.05), K::Percent, G::Engine),
    def("mbu", "Decode MBU", "", (0.01, 1.0, 0.05), K::Percent, G::Engine),
    def("batch", "Decode batch", "sequences", (1.0, 16_384.0, 1.0), K::Integer, G::Engine),
    def("ceiling", "Utilisation ceiling", "", (0.05, 1.0, 0.05), K::Percent, G::Engine),
    def("job_batch", "Decode batch for batch jobs", "sequences", (1.0, 16_384.0, 1.0), K::Integer, G::Engine),
    def("job_ceiling", "Utilisation ceiling for batch jobs", "", (0.05, 1.0, 0.05), K::Percent, G::Engine),
    def("mem_util", "GPU memory utilisation", "", (0.05, 1.0, 0.01), K::Percent, G::Memory),
    def("reserve_gb", "Reserve per GPU (activations, overhead)", "GB", (0.0, 1000.0, 0.5), K::Number, G::Memory),
    def("price", "Price per GPU-hour", "$/GPU-h", (0.0, 1000.0, 0.1), K::Number, G::Money),
    def("replicas_before", "Replicas before the cut", "replicas", (1.0, 4096.0, 1.0), K::Integer, G::Money),
    def("replicas", "Replicas after the cut", "replicas", (1.0, 4096.0, 1.0), K::Integer, G::Money),
    def("spec_k", "Guesses per step", "tokens", (1.0, 16.0, 1.0), K::Integer, G::Engine),
    def("acceptance", "Acceptance rate per guess", "", (0.0, 1.0, 0.05), K::Percent, G::Engine),
    def("link_gbps", "Link from prefill to decode, per GPU (InfiniBand NDR's rate at most)", "Gb/s", (4.0, 400.0, 25.0), K::Number, G::Hardware),
    def("turns", "Turns per chat", "turns", (1.0, 200.0, 1.0), K::Integer, G::Workload),
    def("think_s", "Time before the user's next turn", "s", (0.0, 86_400.0, 10.0), K::Number, G::Workload),
    def("warm_hours", "Keep a finished chat warm for", "h", (0.01, 720.0, 1.0), K::Number, G::Workload),
    def("pcie_gb_s", "Host link per GPU (PCIe), each way", "GB/s", (0.1, 10_000.0, 1.0), K::Number, G::Hardware),
    def("fleet_replicas", "Replicas serving the chats", "replicas", (1.0, 4096.0, 1.0), K::Integer, G::Hardware),
    def("host_gb", "Host memory for the KV cache, per GPU", "GB", (1.0, 100_000.0, 16.0), K::Number, G::Memory),
    def("host_ceiling", "Host tier filled to at most", "", (0.05, 1.0, 0.05), K::Percent, G::Memory),
];

/// The question's default choices: (model, GPU, weight format, KV format).
fn default_choices(q: Question) -> (&'static str, &'static str, WeightFormat, Dtype) {
    let bf16 = WeightFormat::Bf16;
    match q {
        Question::Fleet
        | Question::GpuHours
        | Question::Batch
        | Question::Speculation
        | Question::Roofline
        | Question::Split
        | Question::Host => ("llama-3.1-8b", "h100-sxm", bf16, Dtype::Bf16),
        Question::ChatsPerReplica => ("llama-3.1-70b", "h100-sxm", bf16, Dtype::Bf16),
        // The proposal under test: FP8 weights and activations, the cache left in BF16.
        Question::HalveCost => ("llama-3.1-8b", "h100-sxm", WeightFormat::Fp8, Dtype::Bf16),
    }
}

/// The question's numeric inputs in form order, with the default of each one that does not
/// come from a preset (`None` for preset-driven figures).
fn question_inputs(q: Question) -> Vec<(&'static str, Option<f64>)> {
    let mut v: Vec<(&'static str, Option<f64>)> = match q {
        Question::Fleet => vec![
            ("rate", Some(50.0)),
            ("prompt_tokens", Some(1000.0)),
            ("output_tokens", Some(250.0)),
            ("tpot_ms", Some(20.0)),
        ],
        Question::ChatsPerReplica => vec![("chat_tokens", Some(4096.0)), ("tpot_ms", Some(20.0))],
        Question::GpuHours => vec![("batch", Some(32.0)), ("context", Some(1125.0))],
        // The fleet's workload and target under the same names, so that a fleet query carries
        // over and the streaming figures beside the batch answer are the fleet's own.
        Question::Batch => vec![
            ("rate", Some(50.0)),
            ("prompt_tokens", Some(1000.0)),
            ("output_tokens", Some(250.0)),
            ("completion_s", Some(60.0)),
            ("tpot_ms", Some(20.0)),
        ],
        Question::Speculation => vec![
            ("prompt_tokens", Some(1000.0)),
            ("output_tokens", Some(250.0)),
        ],
        Question::HalveCost | Question::Roofline | Question::Split => vec![
            ("rate", Some(50.0)),
            ("prompt_tokens", Some(1000.0)),
            ("output_tokens", Some(250.0)),
            ("tpot_ms", Some(20.0)),
        ],
        // The seed's turns, each adding its prompt and reply to the chat's history; the user
        // reads the reply at the per-token pace, then takes a while before the next turn.
        Question::Host => vec![
            ("rate", Some(50.0)),
            ("prompt_tokens", Some(1000.0)),
            ("output_tokens", Some(250.0)),
            ("turns", Some(5.0)),
            ("think_s", Some(45.0)),
            ("warm_hours", Some(24.0)),
            ("tpot_ms", Some(20.0)),
        ],
    };
    v.extend(MODEL_FIELDS.iter().map(|&n| (n, None)));
    let tp = if q == Question::ChatsPerReplica {
        4.0
    } else {
        1.0
    };
    v.push(("gpus_per_replica", Some(tp)));
    v.extend(GPU_FIELDS.iter().map(|&n| (n, None)));
    if q == Question::Host {
        v.push(("pcie_gb_s", None));
    }
    v.push(("mfu", Some(0.5)));
    v.push(("mbu", Some(0.75)));
    match q {
        Question::Fleet => v.extend([
            ("batch", Some(32.0)),
            ("ceiling", Some(0.65)),
            ("mem_util", Some(0.92)),
            ("reserve_gb", Some(3.0)),
            ("price", Some(2.5)),
        ]),
        Question::ChatsPerReplica => {
            v.extend([("mem_util", Some(0.92)), ("reserve_gb", Some(3.0))])
        }
        Question::GpuHours => v.push(("price", Some(2.5))),
        Question::Batch => v.extend([
            ("job_batch", Some(256.0)),
            ("job_ceiling", Some(0.9)),
            ("batch", Some(32.0)),
            ("ceiling", Some(0.65)),
            ("mem_util", Some(0.92)),
            ("reserve_gb", Some(3.0)),
            ("price", Some(2.5)),
        ]),
        Question::Speculation => v.extend([
            ("spec_k", Some(3.0)),
            ("acceptance", Some(0.6)),
            ("batch", Some(8.0)),
            ("mem_util", Some(0.92)),
            ("reserve_gb", Some(3.0)),
        ]),
        Question::Roofline => v.extend([
            ("batch", Some(32.0)),
            ("ceiling", Some(0.65)),
            ("mem_util", Some(0.92)),
            ("reserve_gb", Some(3.0)),
        ]),
        Question::HalveCost => v.extend([
            ("mem_util", Some(0.92)),
            ("reserve_gb", Some(3.0)),
            ("price", Some(2.5)),
            ("replicas_before", Some(8.0)),
            ("replicas", Some(4.0)),
        ]),
        // InfiniBand NDR: one 400 Gb/s adapter per GPU, as in a DGX H100.
        Question::Split => v.extend([
            ("batch", Some(32.0)),
            ("ceiling", Some(0.65)),
            ("mem_util", Some(0.92)),
            ("reserve_gb", Some(3.0)),
            ("price", Some(2.5)),
            ("link_gbps", Some(400.0)),
        ]),
        // The seed fleet's replicas; a DGX H100 has 2 TB of system memory for its eight GPUs,
        // and 192 GB of it per GPU for the KV cache leaves the rest to everything else. The
        // tier's ceiling leaves room for replicas whose chats run above the average.
        Question::Host => v.extend([
            ("fleet_replicas", Some(8.0)),
            ("mem_util", Some(0.92)),
            ("reserve_gb", Some(3.0)),
            ("host_gb", Some(192.0)),
            ("host_ceiling", Some(0.75)),
        ]),
    }
    v
}

/// The label an input shows in question `q`: the batch question also holds the streaming
/// fleet's batch, ceiling and latency target, and names them as such beside its own.
fn label(q: Question, d: &Def) -> &'static str {
    match (q, d.name) {
        (Question::Batch, "batch") => "Decode batch when streaming",
        (Question::Batch, "ceiling") => "Utilisation ceiling when streaming",
        (Question::Batch, "tpot_ms") => "Time per output token when streaming (target)",
        (Question::Host, "prompt_tokens") => "New prompt tokens per turn",
        (Question::Host, "output_tokens") => "Reply length",
        (Question::Host, "tpot_ms") => "Time per output token (the pace a reply is read at)",
        _ => d.label,
    }
}

fn find_def(name: &str) -> Option<&'static Def> {
    DEFS.iter().find(|d| d.name == name)
}

/// The choice inputs with their options and the question's defaults.
fn choice_specs(q: Question) -> Vec<InputSpec> {
    let (model, gpu, wd, kd) = default_choices(q);
    let dtypes = || {
        Dtype::ALL
            .iter()
            .map(|d| ChoiceOption {
                id: d.name().to_string(),
                label: d.label().to_string(),
            })
            .collect::<Vec<_>>()
    };
    let choice = |name, label, group, options, default: &str| InputSpec {
        name,
        label,
        unit: "",
        min: 0.0,
        max: 0.0,
        step: 0.0,
        default: 0.0,
        kind: InputKind::Choice,
        group,
        options,
        default_choice: default.to_string(),
    };
    let models = catalog::models()
        .into_iter()
        .map(|m| ChoiceOption {
            id: m.id,
            label: m.name,
        })
        .collect();
    let gpus = catalog::gpus()
        .into_iter()
        .map(|g| ChoiceOption {
            id: g.id,
            label: g.name,
        })
        .collect();
    vec![
        choice("model", "Model", G::Model, models, model),
        choice("gpu", "GPU", G::Hardware, gpus, gpu),
        choice(
            "weight_dtype",
            "Weight format",
            G::Model,
            WeightFormat::ALL
                .iter()
                .map(|f| ChoiceOption {
                    id: f.name().to_string(),
                    label: f.label().to_string(),
                })
                .collect(),
            wd.name(),
        ),
        choice(
            "kv_dtype",
            "KV cache format",
            G::Memory,
            dtypes(),
            kd.name(),
        ),
    ]
}

/// Parses the text of a numeric field; a percentage input also accepts a trailing `%`.
fn parse_number(def: &Def, text: &str) -> Result<f64, ConfigError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ConfigError::new(def.name, "is empty: enter a number"));
    }
    let (t, scale) = match t.strip_suffix('%') {
        Some(p) if def.kind == InputKind::Percent => (p.trim(), 100.0),
        _ => (t, 1.0),
    };
    let cleaned: String = t.chars().filter(|&c| c != ',' && c != '_').collect();
    match cleaned.parse::<f64>() {
        Ok(v) => Ok(v / scale),
        Err(_) => Err(ConfigError::new(
            def.name,
            format!("is not a number: \"{}\"", clip(text)),
        )),
    }
}

/// Checks a value against its definition's range and kind.
fn check_value(def: &Def, v: f64) -> Result<f64, ConfigError> {
    let unit = if def.unit.is_empty() || def.kind == InputKind::Percent {
        String::new()
    } else {
        format!(" {}", def.unit)
    };
    let show = |x: f64| match def.kind {
        InputKind::Percent => format::percent(x),
        _ => format!("{}{unit}", format::num(x)),
    };
    if !v.is_finite() {
        return Err(ConfigError::new(def.name, "must be a finite number"));
    }
    if v < 0.0 {
        return Err(ConfigError::new(def.name, "cannot be negative"));
    }
    if v == 0.0 && def.min > 0.0 {
        return Err(ConfigError::new(def.name, "must be greater than zero"));
    }
    if v < def.min {
        return Err(ConfigError::new(
            def.name,
            format!("must be at least {}", show(def.min)),
        ));
    }
    if v > def.max {
        return Err(ConfigError::new(
            def.name,
            format!("must be at most {}", show(def.max)),
        ));
    }
    if def.kind == InputKind::Integer && v.fract() != 0.0 {
        return Err(ConfigError::new(def.name, "must be a whole number"));
    }
    Ok(v)
}

fn unknown_option(name: &str, id: &str) -> ConfigError {
    ConfigError::new(name, format!("has no preset \"{}\"", clip(id)))
}

/// Shortens text echoed in a message so a hostile query cannot make the message huge.
fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> InputSpec {
        Question::Fleet
            .inputs()
            .into_iter()
            .find(|s| s.name == name)
            .expect("a fleet input")
    }

    #[test]
    fn fields_show_percentages_in_percent_and_read_them_back() {
        let mfu = spec("mfu");
        assert_eq!(
            (mfu.field_unit(), mfu.kind.field_text(0.5)),
            ("%", "50".into())
        );
        assert_eq!(mfu.kind.field_text(0.07), "7");
        assert_eq!(mfu.kind.typed(" 42 "), "42%");
        assert_eq!(mfu.kind.typed("42%"), "42%");
        assert_eq!(mfu.kind.typed(""), "");
        let mut i = Inputs::defaults(Question::Fleet);
        assert_eq!(
            i.set_text(Question::Fleet, "mfu", &mfu.kind.typed("42")),
            Ok(())
        );
        assert_eq!(i.get("mfu"), Some(0.42));

        let rate = spec("rate");
        assert_eq!(rate.kind.typed("60"), "60");
        assert_eq!(rate.kind.field_text(50.0), "50");
        assert_eq!(rate.field_unit(), rate.unit);
        assert!(mfu.range_text().ends_with(" %"), "{}", mfu.range_text());
        assert!(rate.range_text().contains(" to "), "{}", rate.range_text());
    }
}
