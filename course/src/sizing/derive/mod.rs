//! The four derivations. Every figure the cost model knows comes from [`CostModel`]; the
//! arithmetic here is only what sits around it (rates times lengths, demand over a ceiling,
//! Little's law, money, shares). This file holds what the questions share (the inputs with
//! their cost model, the decode chain, the load and the replica count, the verdict's
//! assembly); each question is worked in its own file.

mod batch;
mod chats;
mod fleet;
mod gpu_hours;
mod halve_cost;
mod host;
mod roofline;
mod speculation;
mod split;
pub use host::check_text as host_check_text;
pub use roofline::Roofline;
pub use speculation::check_text as speculation_check_text;
pub use split::link as split_link;

use super::{
    conclusions, fit, words, Derivation, Inputs, Limit, LimitReading, Pressure, Question, Said,
    Step, Verdict,
};
use serde::Deserialize;
use std::collections::BTreeMap;
use trainer_engine::cost::{BatchTotals, CostModel, Efficiency, MemoryConfig, StepCost};
use trainer_engine::error::ConfigError;
use trainer_engine::format::{self, duration, fixed, gb, int, money, num, percent, sig};

/// Works a question through for the given inputs: every step in order and the verdict.
///
/// Returns one error per bad input (field = input name) instead of panicking, including a
/// replica whose weights leave no room for the KV cache.
pub fn derive(q: Question, inputs: &Inputs) -> Result<Derivation, Vec<ConfigError>> {
    let errors = inputs.validate(q);
    if !errors.is_empty() {
        return Err(errors);
    }
    let ctx = Ctx::new(q, inputs).map_err(|e| vec![e])?;
    work(q, &ctx)
}

/// Question `q`'s steps and verdict from a context: the one dispatch [`derive`] and
/// [`derive_on_engine`] share.
fn work(q: Question, ctx: &Ctx) -> Result<Derivation, Vec<ConfigError>> {
    let mut d = match q {
        Question::Fleet => fleet::fleet(ctx),
        Question::Batch => batch::batch(ctx),
        _ => match followup_fn(q) {
            Some(f) => f(ctx),
            None => return Err(vec![ConfigError::new("question", SPECULATION_LOADING)]),
        },
    };
    // A step's sentence comes from `content/sizing-why.toml`, unless it names a figure of
    // this derivation (then the step composed it from the file's parts).
    for s in &mut d.steps {
        if s.why.is_empty() {
            s.why = words::why(q.id(), s.id).to_string();
        }
    }
    Ok(d)
}

/// Question `q` worked through on the simulator's engine: the same steps with the cost model
/// at its calibrated efficiencies ([`Efficiency::CALIBRATED`]: fitted to published
/// measurements, with the fixed costs of a step) and vLLM's memory split
/// ([`MemoryConfig::VLLM`]) in place of the learner's MFU, MBU and memory figures. Only the
/// steps' values are meant: their formulas still name the learner's figures. The lesson's
/// estimate boxes set these values beside the calculator's.
pub fn derive_on_engine(q: Question, inputs: &Inputs) -> Result<Derivation, Vec<ConfigError>> {
    let errors = inputs.validate(q);
    if !errors.is_empty() {
        return Err(errors);
    }
    let (cost, _, tp) = cost_and_memory(inputs).map_err(|e| vec![e])?;
    let cost =
        CostModel::new(cost.deployment().clone(), Efficiency::CALIBRATED).map_err(|e| vec![e])?;
    let memory = MemoryConfig::VLLM;
    if cost.kv_pool_tokens(&memory) < 1.0 {
        return Err(vec![ConfigError::new(
            "gpus_per_replica",
            "leaves no room for the KV cache on the simulator's engine",
        )]);
    }
    let ctx = Ctx {
        inputs,
        cost,
        memory,
        tp,
    };
    work(q, &ctx)
}

/// The roofline plot's figures for the roofline question's inputs, from the cost model the
/// question's steps use; one error per bad input, as [`derive`].
pub fn roofline_plot(inputs: &Inputs) -> Result<Roofline, Vec<ConfigError>> {
    let q = Question::Roofline;
    let errors = inputs.validate(q);
    if !errors.is_empty() {
        return Err(errors);
    }
    let ctx = Ctx::new(q, inputs).map_err(|e| vec![e])?;
    Ok(roofline::plot(&ctx))
}

/// What `derive` answers for a follow-up question (any but the fleet and the batch
/// question) on the page before its piece is there.
pub const SPECULATION_LOADING: &str = "is still loading";

/// A derivation as the program links it.
type DeriveFn = fn(&Ctx<'_>) -> Derivation;

/// The derivations of every question but the fleet and the batch question (the calculator's
/// and the lesson's own), by question. On the page (wasm32) this function, and so their code
/// (and the engine's proposer pricing under it), is a piece of the module of its own, so the
/// pages that load first do not carry it: the app fetches the piece when a question is needed
/// and calls [`enable_speculation`] from it; until then [`derive`] answers
/// [`SPECULATION_LOADING`]. Natively it is always there.
fn linked(q: Question) -> Option<DeriveFn> {
    Some(match q {
        Question::ChatsPerReplica => chats::chats_per_replica,
        Question::GpuHours => gpu_hours::gpu_hours,
        Question::Speculation => speculation::speculation,
        Question::HalveCost => halve_cost::halve_cost,
        Question::Roofline => roofline::roofline,
        Question::Split => split::split,
        Question::Host => host::host,
        Question::Fleet | Question::Batch => return None,
    })
}

#[cfg(target_arch = "wasm32")]
static FOLLOWUPS: std::sync::OnceLock<fn(Question) -> Option<DeriveFn>> =
    std::sync::OnceLock::new();

/// The derivation of follow-up question `q`, once linked.
fn followup_fn(q: Question) -> Option<DeriveFn> {
    #[cfg(target_arch = "wasm32")]
    {
        FOLLOWUPS.get().and_then(|f| f(q))
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        linked(q)
    }
}

/// Links the follow-up questions' derivations in (see [`linked`]): called from the pieces
/// that carry them.
pub fn enable_speculation() {
    #[cfg(target_arch = "wasm32")]
    let _ = FOLLOWUPS.set(linked);
}

/// Whether [`derive`] can work the follow-up questions through yet.
pub fn speculation_ready() -> bool {
    #[cfg(target_arch = "wasm32")]
    {
        FOLLOWUPS.get().is_some()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        true
    }
}

/// A follow-up question's own words file: why each step comes out as it does, by step id, and
/// the verdict's readings, by the case the code picks. Kept apart from `sizing-why.toml` and
/// `verdict.toml` because the question's code is a piece of the page's module of its own.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OwnWords {
    why: BTreeMap<String, String>,
    readings: BTreeMap<String, String>,
    /// The words of the question's simulator check, when it sweeps the load
    /// ([`crate::sizing::sweep`]).
    #[serde(default)]
    sweep: Option<crate::sizing::sweep::SweepText>,
    /// The words of the host-memory question's simulator check.
    #[serde(default)]
    check: Option<crate::sizing::HostCheckText>,
}

impl OwnWords {
    /// The reading `case` of `limit`, its `{name}`s filled.
    fn reading(
        &self,
        limit: Limit,
        pressure: Pressure,
        case: &str,
        values: &[(&str, String)],
    ) -> LimitReading {
        let mut reason = self.readings.get(case).cloned().unwrap_or_default();
        for (k, v) in values {
            reason = reason.replace(&format!("{{{k}}}"), v);
        }
        LimitReading {
            limit,
            pressure,
            reason,
        }
    }

    /// Gives each step the file's sentence for it (the shared steps' sentences, such as the
    /// average context's, come from `sizing-why.toml` in [`derive`]).
    fn fill_why(&self, steps: &mut [Step]) {
        for step in steps {
            if let Some(w) = self.why.get(step.id) {
                step.why = w.clone();
            }
        }
    }
}

/// A plain decode step of `batch` sequences at `context` tokens with its share of prompt
/// tokens when chunked prefill spreads `prompt`-token prompts over `output`-token replies.
fn plain_step(cost: &CostModel, batch: u32, context: u32, prompt: f64, output: f64) -> StepCost {
    let decode = BatchTotals::uniform(
        batch,
        trainer_engine::cost::BatchItem {
            new_tokens: 1,
            context_len: context,
        },
    );
    cost.step_totals(&decode.plus(&prompt_chunk(batch, prompt, output, 1.0)))
}

/// The prompt tokens one step carries beside `batch` decoding sequences when chunked prefill
/// spreads every prompt over the replies in flight: each reply brings its prompt once and
/// lasts `output / gained` steps, so a step holds `batch × prompt × gained / output` of them
/// (one chunk; each of its tokens attends on average to half a prompt).
fn prompt_chunk(batch: u32, prompt: f64, output: f64, gained: f64) -> BatchTotals {
    let tokens = (batch as f64 * prompt * gained / output).round();
    BatchTotals {
        seqs: u64::from(tokens > 0.0),
        new_tokens: tokens as u64,
        kv_tokens: prompt as u64,
        attended_positions: tokens * (prompt + 1.0) / 2.0,
        admitted: 0,
    }
}

/// One prompt of `tokens` at question `q`'s inputs: its prefill compute from the parameter
/// FLOPs and from attention, in seconds (the same terms the fleet question's
/// `ttft_compute` and `ttft_attention` steps show for the prompt length).
pub fn prompt_prefill(
    q: Question,
    inputs: &Inputs,
    tokens: u32,
) -> Result<(f64, f64), Vec<ConfigError>> {
    let errors = inputs.validate(q);
    if !errors.is_empty() {
        return Err(errors);
    }
    let ctx = Ctx::new(q, inputs).map_err(|e| vec![e])?;
    Ok((
        tokens as f64 * ctx.cost.prefill_time_per_token(),
        ctx.cost.prompt_attention_time(tokens),
    ))
}

/// Validated inputs with the cost model built from them.
struct Ctx<'a> {
    inputs: &'a Inputs,
    cost: CostModel,
    memory: MemoryConfig,
    tp: u32,
}

impl<'a> Ctx<'a> {
    fn new(q: Question, inputs: &'a Inputs) -> Result<Ctx<'a>, ConfigError> {
        let (cost, memory, tp) = cost_and_memory(inputs)?;
        // Every question needs the weights to fit with room for some KV cache (a replica
        // that cannot load its model serves nothing, so it has no GPU-hours either), and the
        // chats question a pool that holds one whole chat.
        if let Some(m) = fit::misfit_of(q, inputs, &cost, &memory) {
            return Err(m.error());
        }
        Ok(Ctx {
            inputs,
            cost,
            memory,
            tp,
        })
    }

    /// A validated numeric input.
    fn v(&self, name: &str) -> f64 {
        self.inputs.get(name).unwrap_or(0.0)
    }

    /// `"G × "` when the replica spans several GPUs, nothing otherwise.
    fn g(&self) -> &'static str {
        if self.tp > 1 {
            "G × "
        } else {
            ""
        }
    }

    /// `"4 × "` when the replica spans several GPUs, nothing otherwise.
    fn g_num(&self) -> String {
        if self.tp > 1 {
            format!("{} × ", self.tp)
        } else {
            String::new()
        }
    }

    fn weight_bytes_step(&self) -> Step {
        let w = self.cost.weight_bytes();
        Step::new("weight_bytes", "Weights in memory")
            .formula(
                "P × bytes per weight",
                format!(
                    "{} × {} B",
                    num(self.v("params")),
                    self.inputs.weight_dtype().bytes()
                ),
            )
            .value(w, "B", gb(w, 4))
    }

    fn kv_per_token_step(&self) -> Step {
        let kv = self.cost.kv_bytes_per_token();
        let kib = if kv % 1024.0 == 0.0 {
            format!(" ({} KiB)", int(kv / 1024.0))
        } else {
            String::new()
        };
        Step::new("kv_per_token", "K and V per token")
            .formula(
                "2 × layers × KV heads × head dim × bytes",
                format!(
                    "2 × {} × {} × {} × {} B",
                    num(self.v("layers")),
                    num(self.v("kv_heads")),
                    num(self.v("head_dim")),
                    self.inputs.kv_dtype().bytes()
                ),
            )
            .value(kv, "B", format!("{} B{kib}", int(kv)))
    }

    fn decode_bytes_step(&self, batch: u32, context: u32) -> Step {
        let bytes = self.cost.decode_bytes(batch, context);
        let w = self.cost.weight_bytes();
        Step::new("decode_bytes", "Bytes read per decode step")
            .formula(
                "W + B × C × kv",
                format!(
                    "{} + {} × {} × {} B = {} + {} GB",
                    gb(w, 4),
                    int(batch as f64),
                    int(context as f64),
                    int(self.cost.kv_bytes_per_token()),
                    fixed(w / 1e9, 2),
                    fixed((bytes - w) / 1e9, 2),
                ),
            )
            .value(bytes, "B", gb(bytes, 4))
    }

    fn decode_step_step(
        &self,
        id: &'static str,
        label: &'static str,
        sc: &StepCost,
        bytes: f64,
    ) -> Step {
        let mut substituted = format!(
            "max({} compute, {} / ({}{} TB/s × {}) = {})",
            duration(sc.compute_s, 2),
            gb(bytes, 4),
            self.g_num(),
            num(self.v("hbm_tb_s")),
            num(self.v("mbu")),
            duration(sc.memory_s, 2),
        );
        if sc.comm_s > 0.0 {
            substituted.push_str(&format!(" + {} all-reduce", duration(sc.comm_s, 2)));
        }
        let display = if sc.comm_s > 0.0 {
            format!(
                "{} (textbook {})",
                duration(sc.total_s, 2),
                duration(textbook_step_s(sc), 2)
            )
        } else {
            duration(sc.total_s, 2)
        };
        let mut why = words::part(
            if sc.memory_bound() {
                "decode_memory_bound"
            } else {
                "decode_compute_bound"
            },
            &[],
        );
        if sc.comm_s > 0.0 {
            why.push(' ');
            why.push_str(&words::part(
                "decode_all_reduce",
                &[
                    ("textbook", duration(textbook_step_s(sc), 2)),
                    ("all_reduce", duration(sc.comm_s, 2)),
                    ("gpus", self.tp.to_string()),
                ],
            ));
        }
        let formula = format!(
            "max(compute, bytes / ({}BW × MBU)){}",
            self.g(),
            if self.tp > 1 { " + all-reduce" } else { "" }
        );
        Step::new(id, label)
            .formula(formula, substituted)
            .value(sc.total_s, "s", display)
            .why(why)
    }

    /// The decode chain every question walks the same way: bytes read per step, the step's
    /// time, and the replica's throughput at that batch; returns the step cost, the throughput and the bytes per step.
    fn decode_steps(&self, s: &mut Vec<Step>, batch: u32, context: u32) -> (StepCost, f64, f64) {
        let bytes_step = self.decode_bytes_step(batch, context);
        let bytes = bytes_step.value;
        s.push(bytes_step);
        let sc = self.cost.decode_step(batch, context);
        s.push(self.decode_step_step("decode_step", "Decode step time", &sc, bytes));
        let thr_step = self.decode_throughput_step(batch, context, sc.total_s);
        let thr = thr_step.value;
        s.push(thr_step);
        (sc, thr, bytes)
    }

    fn decode_throughput_step(&self, batch: u32, context: u32, step_s: f64) -> Step {
        let thr = self.cost.decode_throughput(batch, context);
        Step::new("decode_throughput", "Replica decode throughput")
            .formula(
                "B / t_step",
                format!("{} / {}", int(batch as f64), duration(step_s, 2)),
            )
            .value(thr, "tok/s", format!("{} tok/s", count(thr)))
    }

    fn prefill_per_token_step(&self) -> Step {
        let t = self.cost.prefill_time_per_token();
        Step::new("prefill_per_token", "Prefill time per token")
            .formula(
                format!("2 × P / ({}F × MFU)", self.g()),
                format!(
                    "2 × {} / ({}{} TFLOP/s × {})",
                    num(self.v("active_params")),
                    self.g_num(),
                    num(self.v("peak_tflops")),
                    num(self.v("mfu")),
                ),
            )
            .value(t, "s", duration(t, 3))
    }
}

/// The cost model and memory budget validated inputs describe, and the GPUs per replica;
/// an error on the input that sets a figure the cost model refuses.
pub(super) fn cost_and_memory(
    inputs: &Inputs,
) -> Result<(CostModel, MemoryConfig, u32), ConfigError> {
    let deployment = inputs.deployment()?;
    let v = |name: &str| inputs.get(name).unwrap_or(0.0);
    let tp = deployment.tp;
    let eff = Efficiency::brief(v("mfu"), v("mbu"));
    let cost = CostModel::new(deployment, eff).map_err(|e| {
        let field = input_field(&e.field).to_string();
        ConfigError::new(field, e.message)
    })?;
    let memory = match (inputs.get("mem_util"), inputs.get("reserve_gb")) {
        (Some(u), Some(r)) => MemoryConfig {
            gpu_memory_utilization: u,
            reserve_bytes_per_gpu: r * 1e9,
            capacity: trainer_engine::cost::MemoryBasis::Datasheet,
        },
        _ => MemoryConfig::REFERENCE,
    };
    memory.validate().map_err(|e| {
        let field = input_field(&e.field).to_string();
        ConfigError::new(field, e.message)
    })?;
    Ok((cost, memory, tp))
}

/// What the inputs' number formats change and may cost in quality (one note per format that
/// is not BF16), at the calculator's own efficiencies and memory split; none while an input
/// is invalid.
pub fn precision_notes(inputs: &Inputs) -> Vec<crate::precision::Note> {
    cost_and_memory(inputs)
        .and_then(|(cost, memory, _)| {
            crate::precision::notes(cost.deployment(), cost.efficiency(), &memory)
        })
        .unwrap_or_default()
}

/// The token load of the fleet and batch questions and the prefill work it brings.
struct Load {
    /// Output tokens per second, tok/s.
    output_tps: f64,
    /// Prefill time per prompt token, s.
    t_prefill: f64,
    /// Replica-seconds of prefill per second of traffic.
    prefill_demand: f64,
}

/// A fleet sized from its load.
struct Sized {
    /// Replica-seconds of decode per second of traffic.
    decode_demand: f64,
    /// Whole replicas.
    replicas: f64,
    /// The fleet's cost per million output tokens, $.
    cost_per_million: f64,
}

impl Ctx<'_> {
    /// Pushes the steps that turn the arrival rate into tokens of each phase and prefill work:
    /// prompt and output tokens per second, prefill time per token, prefill demand.
    fn load_steps(&self, s: &mut Vec<Step>) -> Load {
        let rate = self.v("rate");
        let lp = self.v("prompt_tokens");
        let lo = self.v("output_tokens");
        let prompt_tps = rate * lp;
        s.push(
            Step::new("prompt_tps", "Prompt tokens per second")
                .formula("λ × prompt tokens", format!("{} × {}", num(rate), num(lp)))
                .value(prompt_tps, "tok/s", format!("{} tok/s", count(prompt_tps))),
        );
        let output_tps = rate * lo;
        s.push(
            Step::new("output_tps", "Output tokens per second")
                .formula("λ × output tokens", format!("{} × {}", num(rate), num(lo)))
                .value(output_tps, "tok/s", format!("{} tok/s", count(output_tps))),
        );
        let pf = self.prefill_per_token_step();
        let t_prefill = pf.value;
        s.push(pf);
        let prefill_demand = prompt_tps * t_prefill;
        s.push(
            Step::new("prefill_demand", "Prefill demand")
                .formula(
                    "prompt tok/s × t_prefill",
                    format!("{} × {}", count(prompt_tps), duration(t_prefill, 3)),
                )
                .value(
                    prefill_demand,
                    "replica-s/s",
                    format!("{} replica-s/s", sig(prefill_demand, 3)),
                ),
        );
        Load {
            output_tps,
            t_prefill,
            prefill_demand,
        }
    }

    /// Pushes the average context during decode; returns it and the whole number of tokens the
    /// cost model takes.
    fn avg_context_step(&self, s: &mut Vec<Step>) -> (f64, u32) {
        let lp = self.v("prompt_tokens");
        let lo = self.v("output_tokens");
        let avg_ctx = lp + lo / 2.0;
        s.push(
            Step::new("avg_context", "Average context during decode")
                .formula(
                    "prompt + output / 2",
                    format!("{} + {} / 2", num(lp), num(lo)),
                )
                .value(avg_ctx, "tokens", format!("{} tokens", int(avg_ctx))),
        );
        (avg_ctx, avg_ctx.round().clamp(1.0, u32::MAX as f64) as u32)
    }

    /// Pushes the steps from decode throughput to money: decode demand, replicas at the
    /// ceiling (`why_ceiling` says why the ceiling sits where it does), whole replicas, GPUs,
    /// cost per hour and per million output tokens.
    /// The decode chain at `batch` and `context` ([`Ctx::decode_steps`]), then the replicas
    /// the load needs at `ceiling` utilisation, their GPUs and cost: the step's cost, the bytes
    /// a step reads and the fleet.
    fn sized_fleet(
        &self,
        s: &mut Vec<Step>,
        load: &Load,
        batch: u32,
        ceiling: f64,
        context: u32,
    ) -> (StepCost, f64, Sized) {
        let (sc, thr, bytes) = self.decode_steps(s, batch, context);
        let sc = &sc;
        let (output_tps, prefill_demand) = (load.output_tps, load.prefill_demand);
        let price = self.v("price");
        let tp = self.tp as f64;
        let demand = decode_demand_step(output_tps, thr);
        let decode_demand = demand.value;
        s.push(demand);
        let replicas_exact = (prefill_demand + decode_demand) / ceiling;
        s.push(
            Step::new("replicas_exact", "Replicas at the ceiling")
                .formula(
                    "(prefill + decode demand) / ceiling",
                    format!(
                        "({} + {}) / {}",
                        sig(prefill_demand, 3),
                        sig(decode_demand, 3),
                        num(ceiling)
                    ),
                )
                .value(
                    replicas_exact,
                    "replicas",
                    format!("{} replicas", fixed(replicas_exact, 1)),
                ),
        );
        let replicas = whole_up(replicas_exact).max(1.0);
        // The same count with the textbook decode step (no all-reduce), shown when it differs.
        let textbook = if sc.comm_s > 0.0 {
            let thr_tb = batch as f64 / textbook_step_s(sc);
            let r = whole_up((prefill_demand + output_tps / thr_tb) / ceiling).max(1.0);
            (r != replicas).then_some(r)
        } else {
            None
        };
        s.push(
            Step::new("replicas", "Replicas")
                .formula(
                    "⌈replicas at the ceiling⌉",
                    format!("⌈{}⌉", fixed(replicas_exact, 2)),
                )
                .value(
                    replicas,
                    "replicas",
                    match textbook {
                        Some(r) => format!("{} (textbook {})", plural(replicas, "replica"), int(r)),
                        None => plural(replicas, "replica"),
                    },
                )
                .why(&match textbook {
                    Some(r) => words::part(
                        "replicas_textbook",
                        &[
                            ("replicas", plural(r, "replica")),
                            ("all_reduce", duration(sc.comm_s, 2)),
                        ],
                    ),
                    // The sentence of the file (`[steps] replicas`), filled in by `derive`.
                    None => String::new(),
                }),
        );
        let gpus = replicas * tp;
        s.push(
            Step::new("gpus", "GPUs")
                .formula(
                    "replicas × G",
                    format!("{} × {}", int(replicas), plural(tp, "GPU")),
                )
                .value(gpus, "GPUs", plural(gpus, "GPU")),
        );
        let hourly = cost_per_hour_step(gpus, price);
        let cost_per_hour = hourly.value;
        s.push(hourly);
        let cost_per_million = cost_per_hour / (output_tps * 3600.0 / 1e6);
        s.push(
            Step::new("cost_per_million", "Cost per million output tokens")
                .formula(
                    "cost per hour / (output tok/s × 3,600 / 10⁶)",
                    format!(
                        "{}/h / ({} × 3,600 / 1,000,000)",
                        money(cost_per_hour),
                        count(output_tps)
                    ),
                )
                .value(cost_per_million, "$", money(cost_per_million)),
        );
        let sized = Sized {
            decode_demand,
            replicas,
            cost_per_million,
        };
        (*sc, bytes, sized)
    }
}

/// The check that a decode step fits the per-token target (every question that has one).
fn tpot_check_step(sc: &StepCost, tpot: f64) -> Step {
    Step::new("tpot_check", "Decode step meets the TPOT target")
        .formula(
            "t_step ≤ TPOT",
            format!("{} ≤ {}", duration(sc.total_s, 2), duration(tpot, 3)),
        )
        .check(sc.total_s / tpot, sc.total_s <= tpot)
}

/// Decode demand: replica-seconds of decoding a second of traffic brings.
fn decode_demand_step(output_tps: f64, thr: f64) -> Step {
    let decode_demand = output_tps / thr;
    Step::new("decode_demand", "Decode demand")
        .formula(
            "output tok/s / decode throughput",
            format!("{} / {}", count(output_tps), count(thr)),
        )
        .value(
            decode_demand,
            "replica-s/s",
            format!("{} replica-s/s", sig(decode_demand, 3)),
        )
}

/// The hourly bill of `gpus` GPUs at `price` each.
fn cost_per_hour_step(gpus: f64, price: f64) -> Step {
    let cost_per_hour = gpus * price;
    Step::new("cost_per_hour", "Cost per hour")
        .formula(
            "GPUs × price",
            format!("{} × {}/h", int(gpus), money(price)),
        )
        .value(cost_per_hour, "$/h", format!("{}/h", money(cost_per_hour)))
}

/// The decode step as the textbook writes it: compute and memory overlap, nothing else
/// (no tensor-parallel all-reduce; the fixed overhead is kept, as both figures have it).
fn textbook_step_s(sc: &StepCost) -> f64 {
    sc.total_s - sc.comm_s
}

/// The KV pool step (the fleet and batch questions).
fn kv_pool_step(c: &Ctx, pool: f64) -> Step {
    Step::new("kv_pool", "KV pool per replica")
        .formula(
            format!("({0}M × u − {0}R − W) / kv", c.g()),
            format!(
                "({}{} GB × {} − {}{} GB − {}) / {} B",
                c.g_num(),
                num(c.v("gpu_mem_gb")),
                num(c.v("mem_util")),
                c.g_num(),
                num(c.v("reserve_gb")),
                gb(c.cost.weight_bytes(), 4),
                int(c.cost.kv_bytes_per_token())
            ),
        )
        .value(pool, "tokens", format!("{} tokens", int(pool)))
}

/// The largest batch, at most `max`, whose decode step at `context` fits within `target`
/// seconds; zero when even one sequence does not. The step time grows with the batch.
fn largest_batch_within(cost: &CostModel, max: u32, context: u32, target: f64) -> u32 {
    let (mut lo, mut hi) = (0u32, max);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if cost.decode_step(mid, context).total_s <= target {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// Pressure on a limit from the share of it in use (`ok`: the limit holds at all): binding
/// when it fails or is within a tenth of failing, weighing in from half.
fn share_pressure(ok: bool, share: f64) -> Pressure {
    if !ok || share >= conclusions::BINDING_SHARE {
        Pressure::Binding
    } else if share >= conclusions::SECONDARY_SHARE {
        Pressure::Secondary
    } else {
        Pressure::Slack
    }
}

/// Pressure on a resource from its share of the load against the other resource's.
fn load_pressure(mine: f64, other: f64, total: f64) -> Pressure {
    if mine > other {
        Pressure::Binding
    } else if mine >= 0.2 * total {
        Pressure::Secondary
    } else {
        Pressure::Slack
    }
}

/// `limit` read at `pressure`, for the reason `content/verdict.toml` gives under
/// `[section.case]` with `values` filled in.
fn read(
    section: &str,
    limit: Limit,
    pressure: Pressure,
    case: &str,
    values: &[(&str, String)],
) -> LimitReading {
    LimitReading {
        limit,
        pressure,
        reason: words::conclude(section, case, values),
    }
}

/// The compute limit's reading of a question whose decode step is `sc`, binding when `binds`.
fn compute_reading(section: &str, sc: &StepCost, binds: bool) -> LimitReading {
    read(
        section,
        Limit::Compute,
        Pressure::binding_if(binds),
        "compute",
        &[
            ("compute", duration(sc.compute_s, 2)),
            ("memory", duration(sc.memory_s, 2)),
        ],
    )
}

/// Assembles the derivation, writing the verdict's summary from its readings.
fn finish(q: Question, steps: Vec<Step>, readings: Vec<LimitReading>) -> Derivation {
    finish_with(q, steps, readings, Vec::new())
}

/// [`finish`], with the lesson's sentences on the derivation.
fn finish_with(
    q: Question,
    steps: Vec<Step>,
    mut readings: Vec<LimitReading>,
    said: Vec<Said>,
) -> Derivation {
    // By limit, stable, by hand: a handful of readings, and a `sort` here would bring its own
    // copy of the sort into the calculator's first load.
    for i in 1..readings.len() {
        let mut j = i;
        while j > 0 && readings[j - 1].limit > readings[j].limit {
            readings.swap(j - 1, j);
            j -= 1;
        }
    }
    let pick = |p: Pressure| -> Vec<&LimitReading> {
        readings.iter().filter(|r| r.pressure == p).collect()
    };
    // "{limits} bounds the answer." for one limit, "... bound ..." for several.
    let glue = |group: &[&LimitReading], one: &str, many: &str| {
        let limits = capitalise(&join(group.iter().map(|r| r.limit.label())));
        words::conclude(
            "summary",
            if group.len() > 1 { many } else { one },
            &[("limits", limits)],
        )
    };
    let binding = pick(Pressure::Binding);
    let secondary = pick(Pressure::Secondary);
    let slack = pick(Pressure::Slack);
    let headline = if binding.is_empty() {
        words::conclude("summary", "binds_none", &[])
    } else {
        glue(&binding, "binds_one", "binds_many")
    };
    let mut summary = headline.clone();
    let mut add = |group: &[&LimitReading], opener: Option<String>| {
        if group.is_empty() {
            return;
        }
        if let Some(o) = opener {
            summary.push(' ');
            summary.push_str(&o);
        }
        for r in group {
            summary.push(' ');
            summary.push_str(&r.reason);
        }
    };
    add(&binding, None);
    add(
        &secondary,
        Some(glue(&secondary, "weighs_one", "weighs_many")),
    );
    add(&slack, Some(glue(&slack, "slack_one", "slack_many")));
    Derivation {
        question: q,
        steps,
        verdict: Verdict {
            readings,
            headline,
            summary,
            said,
        },
    }
}

/// Rounds up to a whole number, treating a value within floating-point noise of a whole
/// number as that number (so 8.000000000001 replicas is 8, not 9).
fn whole_up(x: f64) -> f64 {
    let r = x.round();
    if (x - r).abs() <= 1e-9 * r.abs().max(1.0) {
        r
    } else {
        x.ceil()
    }
}

/// A token count or rate: whole from 100 up, three significant figures below.
fn count(v: f64) -> String {
    if v.abs() >= 100.0 {
        int(v)
    } else {
        sig(v, 3)
    }
}

/// `"1 replica"`, `"8 replicas"`.
fn plural(n: f64, word: &str) -> String {
    let s = if n == 1.0 { "" } else { "s" };
    format!("{} {word}{s}", format::fixed(n, 2))
}

/// `"a"`, `"a and b"`, `"a, b and c"` (the word for "and" from `content/verdict.toml`).
fn join<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let v: Vec<&str> = items.collect();
    match v.len() {
        0 => String::new(),
        1 => v[0].to_string(),
        n => format!(
            "{} {} {}",
            v[..n - 1].join(", "),
            words::verdict_word("summary", "and"),
            v[n - 1]
        ),
    }
}

/// `s` with its first letter in capitals. The words are English: ASCII case rules keep
/// Unicode's case tables out of the page's module.
fn capitalise(s: &str) -> String {
    let mut out = s.to_string();
    if let Some(first) = out.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    out
}

/// Maps a field path of the cost model's errors to the input that sets it.
fn input_field(field: &str) -> &str {
    match field {
        "model.params" => "params",
        "model.active_params" => "active_params",
        "model.layers" => "layers",
        "model.hidden" => "hidden",
        "model.heads" => "heads",
        "model.kv_heads" => "kv_heads",
        "model.head_dim" => "head_dim",
        "gpu.bf16_flops" | "gpu.fp8_flops" => "peak_tflops",
        "gpu.mem_bw" => "hbm_tb_s",
        "gpu.mem_bytes" => "gpu_mem_gb",
        "efficiency.mfu" => "mfu",
        "efficiency.mbu" => "mbu",
        "tp" => "gpus_per_replica",
        "gpu_memory_utilization" => "mem_util",
        "reserve_bytes_per_gpu" => "reserve_gb",
        other => other,
    }
}

/// A follow-up question's own words file (`toml`) against its derivation and its code: each
/// `why` names a step the derivation has, each reading a case the code picks, and every step has
/// a sentence.
#[cfg(test)]
fn own_words_are_all_used(q: Question, toml: &str, code: &str) {
    let w: OwnWords = toml::from_str(toml).expect("the words file parses");
    let d = derive(q, &Inputs::defaults(q)).expect("derives");
    for id in w.why.keys() {
        assert!(d.step(id).is_some(), "why.{id} names no step");
    }
    for s in &d.steps {
        assert!(!s.why.trim().is_empty(), "step {} has no sentence", s.id);
    }
    for case in w.readings.keys() {
        assert!(
            code.contains(&format!("\"{case}\"")),
            "readings.{case} is never picked"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_headline_is_the_summary_s_first_sentence() {
        for q in Question::ALL {
            let d = derive(q, &Inputs::defaults(q)).expect("the defaults derive");
            let v = &d.verdict;
            assert!(v.headline.ends_with("the answer."), "{}", v.headline);
            assert!(v.summary.starts_with(&v.headline), "{}", v.summary);
            let binding = v.binding();
            assert!(!binding.is_empty());
            for l in binding {
                assert!(
                    v.headline
                        .to_lowercase()
                        .contains(&l.label().to_lowercase()),
                    "{}",
                    v.headline
                );
            }
        }
    }
}
