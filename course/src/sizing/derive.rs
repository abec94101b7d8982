//! The four derivations. Every figure the cost model knows comes from [`CostModel`]; the
//! arithmetic here is only what sits around it (rates times lengths, demand over a ceiling,
//! Little's law, money, shares).

use super::{
    conclusions, fit, words, Derivation, Inputs, Limit, LimitReading, Pressure, Question, Said,
    Step, Verdict,
};
use trainer_engine::cost::{CostModel, Efficiency, MemoryConfig, StepCost};
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
    let mut d = match q {
        Question::Fleet => fleet(&ctx),
        Question::ChatsPerReplica => chats_per_replica(&ctx),
        Question::GpuHours => gpu_hours(&ctx),
        Question::Batch => batch(&ctx),
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
        Step {
            id: "weight_bytes",
            label: "Weights in memory",
            formula: "P × bytes per weight".into(),
            substituted: format!(
                "{} × {} B",
                num(self.v("params")),
                self.inputs.weight_dtype().bytes()
            ),
            value: w,
            unit: "B",
            display: gb(w, 4),
            why: "".into(),
            check: None,
        }
    }

    fn kv_per_token_step(&self) -> Step {
        let kv = self.cost.kv_bytes_per_token();
        let kib = if kv % 1024.0 == 0.0 {
            format!(" ({} KiB)", int(kv / 1024.0))
        } else {
            String::new()
        };
        Step {
            id: "kv_per_token",
            label: "K and V per token",
            formula: "2 × layers × KV heads × head dim × bytes".into(),
            substituted: format!(
                "2 × {} × {} × {} × {} B",
                num(self.v("layers")),
                num(self.v("kv_heads")),
                num(self.v("head_dim")),
                self.inputs.kv_dtype().bytes()
            ),
            value: kv,
            unit: "B",
            display: format!("{} B{kib}", int(kv)),
            why: "".into(),
            check: None,
        }
    }

    fn decode_bytes_step(&self, batch: u32, context: u32) -> Step {
        let bytes = self.cost.decode_bytes(batch, context);
        let w = self.cost.weight_bytes();
        Step {
            id: "decode_bytes",
            label: "Bytes read per decode step",
            formula: "W + B × C × kv".into(),
            substituted: format!(
                "{} + {} × {} × {} B = {} + {} GB",
                gb(w, 4),
                int(batch as f64),
                int(context as f64),
                int(self.cost.kv_bytes_per_token()),
                fixed(w / 1e9, 2),
                fixed((bytes - w) / 1e9, 2),
            ),
            value: bytes,
            unit: "B",
            display: gb(bytes, 4),
            why: "".into(),
            check: None,
        }
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
        Step {
            id,
            label,
            formula: format!(
                "max(compute, bytes / ({}BW × MBU)){}",
                self.g(),
                if self.tp > 1 { " + all-reduce" } else { "" }
            ),
            substituted,
            value: sc.total_s,
            unit: "s",
            display: if sc.comm_s > 0.0 {
                format!(
                    "{} (textbook {})",
                    duration(sc.total_s, 2),
                    duration(textbook_step_s(sc), 2)
                )
            } else {
                duration(sc.total_s, 2)
            },
            why: {
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
                why
            },
            check: None,
        }
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
        Step {
            id: "decode_throughput",
            label: "Replica decode throughput",
            formula: "B / t_step".into(),
            substituted: format!("{} / {}", int(batch as f64), duration(step_s, 2)),
            value: thr,
            unit: "tok/s",
            display: format!("{} tok/s", count(thr)),
            why: "".into(),
            check: None,
        }
    }

    fn prefill_per_token_step(&self) -> Step {
        let t = self.cost.prefill_time_per_token();
        Step {
            id: "prefill_per_token",
            label: "Prefill time per token",
            formula: format!("2 × P / ({}F × MFU)", self.g()),
            substituted: format!(
                "2 × {} / ({}{} TFLOP/s × {})",
                num(self.v("active_params")),
                self.g_num(),
                num(self.v("peak_tflops")),
                num(self.v("mfu")),
            ),
            value: t,
            unit: "s",
            display: duration(t, 3),
            why: "".into(),
            check: None,
        }
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
    let eff = Efficiency {
        mfu: v("mfu"),
        mbu: v("mbu"),
        ..Efficiency::REFERENCE
    };
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

/// The token load of the fleet and batch questions and the prefill work it brings.
struct Load {
    /// Output tokens per second, tok/s.
    output_tps: f64,
    /// Prefill time per prompt token, s.
    t_prefill: f64,
    /// Replica-seconds of prefill per second of traffic.
    prefill_demand: f64,
}

/// The decode a fleet is sized for: its batch, the step and throughput at that batch, and the
/// utilisation ceiling.
struct Sizing<'a> {
    batch: u32,
    ceiling: f64,
    step: &'a StepCost,
    throughput: f64,
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
        s.push(fig(
            "prompt_tps",
            "Prompt tokens per second",
            "λ × prompt tokens",
            format!("{} × {}", num(rate), num(lp)),
            prompt_tps,
            "tok/s",
            format!("{} tok/s", count(prompt_tps)),
            "",
        ));
        let output_tps = rate * lo;
        s.push(fig(
            "output_tps",
            "Output tokens per second",
            "λ × output tokens",
            format!("{} × {}", num(rate), num(lo)),
            output_tps,
            "tok/s",
            format!("{} tok/s", count(output_tps)),
            "",
        ));
        let pf = self.prefill_per_token_step();
        let t_prefill = pf.value;
        s.push(pf);
        let prefill_demand = prompt_tps * t_prefill;
        s.push(fig(
            "prefill_demand",
            "Prefill demand",
            "prompt tok/s × t_prefill",
            format!("{} × {}", count(prompt_tps), duration(t_prefill, 3)),
            prefill_demand,
            "replica-s/s",
            format!("{} replica-s/s", sig(prefill_demand, 3)),
            "",
        ));
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
        s.push(fig(
            "avg_context",
            "Average context during decode",
            "prompt + output / 2",
            format!("{} + {} / 2", num(lp), num(lo)),
            avg_ctx,
            "tokens",
            format!("{} tokens", int(avg_ctx)),
            "",
        ));
        (avg_ctx, avg_ctx.round().clamp(1.0, u32::MAX as f64) as u32)
    }

    /// Pushes the steps from decode throughput to money: decode demand, replicas at the
    /// ceiling (`why_ceiling` says why the ceiling sits where it does), whole replicas, GPUs,
    /// cost per hour and per million output tokens.
    fn replica_steps(
        &self,
        s: &mut Vec<Step>,
        load: &Load,
        at: Sizing,
        why_ceiling: &str,
    ) -> Sized {
        let (output_tps, prefill_demand) = (load.output_tps, load.prefill_demand);
        let (ceiling, thr, sc) = (at.ceiling, at.throughput, at.step);
        let price = self.v("price");
        let tp = self.tp as f64;
        let decode_demand = output_tps / thr;
        s.push(fig(
            "decode_demand",
            "Decode demand",
            "output tok/s / decode throughput",
            format!("{} / {}", count(output_tps), count(thr)),
            decode_demand,
            "replica-s/s",
            format!("{} replica-s/s", sig(decode_demand, 3)),
            "",
        ));
        let replicas_exact = (prefill_demand + decode_demand) / ceiling;
        s.push(fig(
            "replicas_exact",
            "Replicas at the ceiling",
            "(prefill + decode demand) / ceiling",
            format!(
                "({} + {}) / {}",
                sig(prefill_demand, 3),
                sig(decode_demand, 3),
                num(ceiling)
            ),
            replicas_exact,
            "replicas",
            format!("{} replicas", fixed(replicas_exact, 1)),
            why_ceiling,
        ));
        let replicas = whole_up(replicas_exact).max(1.0);
        // The same count with the textbook decode step (no all-reduce), shown when it differs.
        let textbook = if sc.comm_s > 0.0 {
            let thr_tb = at.batch as f64 / textbook_step_s(sc);
            let r = whole_up((prefill_demand + output_tps / thr_tb) / ceiling).max(1.0);
            (r != replicas).then_some(r)
        } else {
            None
        };
        s.push(fig(
            "replicas",
            "Replicas",
            "⌈replicas at the ceiling⌉",
            format!("⌈{}⌉", fixed(replicas_exact, 2)),
            replicas,
            "replicas",
            match textbook {
                Some(r) => format!("{} (textbook {})", plural(replicas, "replica"), int(r)),
                None => plural(replicas, "replica"),
            },
            &match textbook {
                Some(r) => words::part(
                    "replicas_textbook",
                    &[
                        ("replicas", plural(r, "replica")),
                        ("all_reduce", duration(sc.comm_s, 2)),
                    ],
                ),
                // The sentence of the file (`[steps] replicas`), filled in by `derive`.
                None => String::new(),
            },
        ));
        let gpus = replicas * tp;
        s.push(fig(
            "gpus",
            "GPUs",
            "replicas × G",
            format!("{} × {}", int(replicas), plural(tp, "GPU")),
            gpus,
            "GPUs",
            plural(gpus, "GPU"),
            "",
        ));
        let cost_per_hour = gpus * price;
        s.push(fig(
            "cost_per_hour",
            "Cost per hour",
            "GPUs × price",
            format!("{} × {}/h", int(gpus), money(price)),
            cost_per_hour,
            "$/h",
            format!("{}/h", money(cost_per_hour)),
            "",
        ));
        let cost_per_million = cost_per_hour / (output_tps * 3600.0 / 1e6);
        s.push(fig(
            "cost_per_million",
            "Cost per million output tokens",
            "cost per hour / (output tok/s × 3,600 / 10⁶)",
            format!(
                "{}/h / ({} × 3,600 / 1,000,000)",
                money(cost_per_hour),
                count(output_tps)
            ),
            cost_per_million,
            "$",
            money(cost_per_million),
            "",
        ));
        Sized {
            decode_demand,
            replicas,
            cost_per_million,
        }
    }
}

/// The seed problem: size the fleet, then check it against streams, latency and KV.
fn fleet(c: &Ctx) -> Derivation {
    let rate = c.v("rate");
    let lp = c.v("prompt_tokens");
    let lo = c.v("output_tokens");
    let tpot = c.v("tpot_ms") / 1e3;
    let batch = c.v("batch") as u32;
    let ceiling = c.v("ceiling");
    let mut s = Vec::new();

    let load = c.load_steps(&mut s);
    let (t_pf, prefill_demand) = (load.t_prefill, load.prefill_demand);
    let ttft = lp * t_pf;
    s.push(fig(
        "ttft_compute",
        "TTFT compute",
        "prompt tokens × t_prefill",
        format!("{} × {}", num(lp), duration(t_pf, 3)),
        ttft,
        "s",
        duration(ttft, 2),
        "",
    ));
    // Attention's share of that prefill, which the parameter FLOPs leave out and which grows
    // with the square of the prompt, then the two together.
    let attn = c
        .cost
        .prompt_attention_time(lp.round().clamp(1.0, u32::MAX as f64) as u32);
    s.push(fig(
        "ttft_attention",
        "Attention in one prompt's prefill",
        &format!(
            "4 × layers × heads × d_head × L(L + 1)/2 / ({}F × MFU)",
            c.g()
        ),
        format!(
            "4 × {} × {} × {} × {} × {} / 2 / ({}{} TFLOP/s × {})",
            num(c.v("layers")),
            num(c.v("heads")),
            num(c.v("head_dim")),
            num(lp),
            num(lp + 1.0),
            c.g_num(),
            num(c.v("peak_tflops")),
            num(c.v("mfu")),
        ),
        attn,
        "s",
        format!("{} (+{})", duration(attn, 2), percent(attn / ttft)),
        "",
    ));
    s.push(fig(
        "ttft_with_attention",
        "TTFT compute, attention included",
        "TTFT compute + attention",
        format!("{} + {}", duration(ttft, 2), duration(attn, 2)),
        ttft + attn,
        "s",
        duration(ttft + attn, 2),
        "",
    ));
    let (avg_ctx, ctx) = c.avg_context_step(&mut s);
    s.push(c.weight_bytes_step());
    s.push(c.kv_per_token_step());
    let (sc, thr, bytes) = c.decode_steps(&mut s, batch, ctx);
    let sized = c.replica_steps(
        &mut s,
        &load,
        Sizing {
            batch,
            ceiling,
            step: &sc,
            throughput: thr,
        },
        "",
    );
    let (decode_demand, replicas) = (sized.decode_demand, sized.replicas);
    let reply_s = lo * tpot;
    s.push(fig(
        "time_per_reply",
        "Time per reply",
        "output tokens × TPOT",
        format!("{} × {}", num(lo), duration(tpot, 3)),
        reply_s,
        "s",
        duration(reply_s, 2),
        "",
    ));
    let tpot_ok = sc.total_s <= tpot;
    s.push(check(
        "tpot_check",
        "Decode step meets the TPOT target",
        "t_step ≤ TPOT",
        format!("{} ≤ {}", duration(sc.total_s, 2), duration(tpot, 3)),
        sc.total_s / tpot,
        tpot_ok,
        "",
    ));
    let open = rate * reply_s;
    s.push(fig(
        "open_streams",
        "Open streams (Little's law)",
        "λ × time per reply",
        format!("{} × {}", num(rate), duration(reply_s, 2)),
        open,
        "streams",
        format!("{} streams", sig(open, 3)),
        "",
    ));
    let spr = open / replicas;
    // One rounding for both this step and the KV step that uses it (half away from zero).
    let held = spr.round();
    let about = if spr.fract() != 0.0 {
        format!(" (about {})", int(held))
    } else {
        String::new()
    };
    s.push(fig(
        "streams_per_replica",
        "Streams per replica",
        "open streams / replicas",
        format!("{} / {}", sig(open, 3), int(replicas)),
        spr,
        "streams",
        format!("{} streams{about}", fixed(spr, 2)),
        "",
    ));
    let batch_ok = spr <= batch as f64;
    s.push(check(
        "batch_check",
        "Streams fit the assumed batch",
        "streams per replica ≤ B",
        format!("{} ≤ {}", fixed(spr, 2), int(batch as f64)),
        spr / batch as f64,
        batch_ok,
        "",
    ));
    let pool = c.cost.kv_pool_tokens(&c.memory);
    s.push(kv_pool_step(c, pool));
    let in_use = held * avg_ctx;
    s.push(fig(
        "kv_in_use",
        "KV in use per replica",
        "streams per replica × average context",
        format!("{} × {}", int(held), int(avg_ctx)),
        in_use,
        "tokens",
        format!("{} tokens", int(in_use)),
        "",
    ));
    let share = in_use / pool;
    s.push(fig(
        "kv_share",
        "Share of the KV pool in use",
        "KV in use / KV pool",
        format!("{} / {}", int(in_use), int(pool)),
        share,
        "",
        percent(share),
        "",
    ));

    // The verdict: which resource the load leans on, and whether latency or KV presses.
    let total = prefill_demand + decode_demand;
    let (compute_load, memory_load) = if sc.memory_bound() {
        (prefill_demand, decode_demand)
    } else {
        (total, 0.0)
    };
    let say =
        |section: &str, key: &str, values: &[(&str, String)]| words::conclude(section, key, values);
    let load_values = |load: f64| {
        vec![
            ("share", percent(load / total)),
            ("load", sig(load, 3)),
            ("total", sig(total, 3)),
        ]
    };
    let mut readings = vec![
        LimitReading {
            limit: Limit::Compute,
            pressure: load_pressure(compute_load, memory_load, total),
            reason: say(
                "fleet",
                if sc.memory_bound() {
                    "compute_prefill"
                } else {
                    "compute_all"
                },
                &load_values(compute_load),
            ),
        },
        LimitReading {
            limit: Limit::HbmBandwidth,
            pressure: load_pressure(memory_load, compute_load, total),
            reason: if sc.memory_bound() {
                say(
                    "fleet",
                    "hbm_memory_bound",
                    &[
                        ("share", percent(memory_load / total)),
                        ("bytes", gb(bytes, 4)),
                        ("batch", int(batch as f64)),
                    ],
                )
            } else {
                say("fleet", "hbm_compute_bound", &[])
            },
        },
    ];
    // The latency target presses through the step (missed, or within a tenth of it, so that
    // a tighter target would fail at this batch) and through the streams it keeps open (more
    // than the batch, at a batch whose step misses the target). It never enters the replica
    // count itself, so nothing else makes it bind.
    let pace = conclusions::Pace::of(sc.total_s, tpot);
    let step_values = vec![
        ("step", duration(sc.total_s, 2)),
        ("tpot", duration(tpot, 3)),
        ("ratio", percent(sc.total_s / tpot)),
        ("batch", int(batch as f64)),
    ];
    let mut stream_values = vec![
        ("reply", duration(reply_s, 2)),
        ("streams", fixed(spr, 2)),
        ("batch", int(batch as f64)),
    ];
    let (streams_key, streams_pressure) = if batch_ok {
        ("streams_fit", Pressure::Slack)
    } else {
        let step_held = c
            .cost
            .decode_step(held.min(u32::MAX as f64) as u32, ctx)
            .total_s;
        stream_values.push(("held", int(held)));
        stream_values.push(("step_held", duration(step_held, 2)));
        if step_held <= tpot {
            ("streams_over_fit", Pressure::Slack)
        } else {
            ("streams_over_miss", Pressure::Binding)
        }
    };
    readings.push(LimitReading {
        limit: Limit::LatencyTarget,
        pressure: conclusions::stronger(pace.pressure(), streams_pressure),
        reason: format!(
            "{} {}",
            say("fleet", pace.reading_key(), &step_values),
            say("fleet", streams_key, &stream_values)
        ),
    });
    let batch_kv = batch as f64 * avg_ctx;
    let kv = conclusions::KvCase::of(share, batch_kv, pool);
    let kv_values = vec![
        ("share", percent(share)),
        ("in_use", int(in_use)),
        ("pool", int(pool)),
        ("batch", int(batch as f64)),
        ("batch_kv", int(batch_kv)),
    ];
    readings.push(LimitReading {
        limit: Limit::KvCapacity,
        pressure: kv.pressure(),
        reason: say("fleet", kv.key(), &kv_values),
    });
    let said = vec![
        Said {
            id: "decode",
            step: "decode_step",
            key: if sc.memory_bound() {
                "decode_memory"
            } else {
                "decode_compute"
            },
            text: String::new(),
        },
        Said {
            id: "streams",
            step: "streams_per_replica",
            key: if batch_ok {
                "streams_fit"
            } else {
                "streams_over"
            },
            text: String::new(),
        },
        Said {
            id: "kv",
            step: "kv_share",
            key: kv.key(),
            text: String::new(),
        },
        Said {
            id: "pace",
            step: "decode_step",
            key: pace.say_key(),
            text: String::new(),
        },
    ]
    .into_iter()
    .map(|mut x| {
        let values = match x.id {
            "pace" => &step_values,
            "kv" => &kv_values,
            _ => &stream_values,
        };
        x.text = say("say", x.key, values);
        x
    })
    .collect();
    finish_with(Question::Fleet, s, readings, said)
}

/// How many chats of a given length the KV pool of one replica holds, and how many of them
/// it can decode within the latency target.
fn chats_per_replica(c: &Ctx) -> Derivation {
    let len = c.v("chat_tokens");
    let len_u = len as u32;
    let tpot = c.v("tpot_ms") / 1e3;
    let mut s = vec![c.kv_per_token_step(), c.weight_bytes_step()];
    let pool_bytes = c.cost.kv_pool_bytes(&c.memory);
    s.push(fig(
        "kv_pool_bytes",
        "Memory left for the KV cache",
        &format!("{0}M × u − {0}R − W", c.g()),
        format!(
            "{}{} GB × {} − {}{} GB − {}",
            c.g_num(),
            num(c.v("gpu_mem_gb")),
            num(c.v("mem_util")),
            c.g_num(),
            num(c.v("reserve_gb")),
            gb(c.cost.weight_bytes(), 4)
        ),
        pool_bytes,
        "B",
        gb(pool_bytes, 4),
        "",
    ));
    let pool = c.cost.kv_pool_tokens(&c.memory);
    s.push(fig(
        "kv_pool",
        "KV pool",
        "memory for KV / kv",
        format!(
            "{} / {} B",
            gb(pool_bytes, 4),
            int(c.cost.kv_bytes_per_token())
        ),
        pool,
        "tokens",
        format!("{} tokens", int(pool)),
        "",
    ));
    let chats = (pool / len).floor().min(u32::MAX as f64);
    s.push(fig(
        "chats",
        "Chats that fit",
        "⌊KV pool / chat length⌋",
        format!("⌊{} / {}⌋", int(pool), num(len)),
        chats,
        "chats",
        plural(chats, "chat"),
        "",
    ));
    let full = c.cost.decode_step(chats as u32, len_u);
    let full_bytes = c.cost.decode_bytes(chats as u32, len_u);
    s.push(c.decode_step_step(
        "full_decode_step",
        "Decode step with every chat at full length",
        &full,
        full_bytes,
    ));
    let full_ok = full.total_s <= tpot;
    s.push(check(
        "tpot_check",
        "Full house meets the TPOT target",
        "t_step ≤ TPOT",
        format!("{} ≤ {}", duration(full.total_s, 2), duration(tpot, 3)),
        full.total_s / tpot,
        full_ok,
        "",
    ));
    let within = largest_batch_within(&c.cost, chats as u32, len_u, tpot);
    s.push(fig(
        "chats_within_tpot",
        "Chats that decode within the target",
        "largest B with t_step(B, chat length) ≤ TPOT",
        format!(
            "largest B ≤ {} with t_step(B, {}) ≤ {}",
            int(chats),
            num(len),
            duration(tpot, 3)
        ),
        within as f64,
        "chats",
        plural(within as f64, "chat"),
        "",
    ));

    let latency_binds = (within as f64) < chats;
    let readings = vec![
        LimitReading {
            limit: Limit::Compute,
            pressure: if latency_binds && !full.memory_bound() {
                Pressure::Binding
            } else {
                Pressure::Slack
            },
            reason: words::conclude(
                "chats",
                "compute",
                &[
                    ("compute", duration(full.compute_s, 2)),
                    ("memory", duration(full.memory_s, 2)),
                ],
            ),
        },
        LimitReading {
            limit: Limit::HbmBandwidth,
            pressure: if latency_binds && full.memory_bound() {
                Pressure::Binding
            } else {
                Pressure::Slack
            },
            reason: words::conclude("chats", "hbm", &[("bytes", gb(full_bytes, 4))]),
        },
        LimitReading {
            limit: Limit::KvCapacity,
            pressure: Pressure::Binding,
            reason: words::conclude(
                "chats",
                "kv",
                &[
                    ("pool", int(pool)),
                    ("chats", plural(chats, "chat")),
                    ("length", num(len)),
                ],
            ),
        },
        LimitReading {
            limit: Limit::LatencyTarget,
            pressure: if latency_binds {
                Pressure::Binding
            } else {
                Pressure::Slack
            },
            reason: words::conclude(
                "chats",
                if !latency_binds {
                    "latency_within"
                } else if within == 0 {
                    "latency_none"
                } else {
                    "latency_over"
                },
                &[
                    ("step", duration(full.total_s, 2)),
                    ("tpot", duration(tpot, 3)),
                    ("within", plural(within as f64, "chat")),
                ],
            ),
        },
    ];
    finish(Question::ChatsPerReplica, s, readings)
}

/// GPU-hours and cost of a million output tokens, from the decode step time and batch.
fn gpu_hours(c: &Ctx) -> Derivation {
    let batch = c.v("batch") as u32;
    let ctx = c.v("context") as u32;
    let price = c.v("price");
    let tp = c.tp as f64;
    let mut s = vec![c.weight_bytes_step(), c.kv_per_token_step()];
    let (sc, thr, bytes) = c.decode_steps(&mut s, batch, ctx);
    let replica_s = 1e6 / thr;
    s.push(fig(
        "replica_seconds_per_million",
        "Replica time per million tokens",
        "10⁶ / decode throughput",
        format!("1,000,000 / {}", count(thr)),
        replica_s,
        "s",
        duration(replica_s, 3),
        "",
    ));
    let gpu_h = replica_s * tp / 3600.0;
    s.push(fig(
        "gpu_hours_per_million",
        "GPU-hours per million output tokens",
        "replica time × G / 3,600",
        format!("{} × {} / 3,600", duration(replica_s, 3), plural(tp, "GPU")),
        gpu_h,
        "GPU-h",
        format!("{} GPU-h", sig(gpu_h, 3)),
        "",
    ));
    let per_million = gpu_h * price;
    s.push(fig(
        "cost_per_million",
        "Cost per million output tokens",
        "GPU-hours × price",
        format!("{} × {}", sig(gpu_h, 3), money(price)),
        per_million,
        "$",
        money(per_million),
        "",
    ));

    let pool = c.cost.kv_pool_tokens(&c.memory);
    let kv = batch as f64 * ctx as f64;
    let kv_share = if pool > 0.0 { kv / pool } else { f64::INFINITY };
    let readings = vec![
        LimitReading {
            limit: Limit::Compute,
            pressure: if sc.memory_bound() {
                Pressure::Slack
            } else {
                Pressure::Binding
            },
            reason: words::conclude(
                "gpu_hours",
                "compute",
                &[
                    ("compute", duration(sc.compute_s, 2)),
                    ("memory", duration(sc.memory_s, 2)),
                ],
            ),
        },
        LimitReading {
            limit: Limit::HbmBandwidth,
            pressure: if sc.memory_bound() {
                Pressure::Binding
            } else {
                Pressure::Slack
            },
            reason: words::conclude(
                "gpu_hours",
                "hbm",
                &[
                    ("bytes", gb(bytes, 4)),
                    ("memory", duration(sc.memory_s, 2)),
                ],
            ),
        },
        LimitReading {
            limit: Limit::KvCapacity,
            pressure: share_pressure(kv_share <= 1.0, kv_share),
            reason: words::conclude(
                "gpu_hours",
                if kv_share <= 1.0 {
                    "kv_fits"
                } else {
                    "kv_over"
                },
                &[
                    ("tokens", int(kv)),
                    ("share", percent(kv_share)),
                    ("util", percent(c.memory.gpu_memory_utilization)),
                    ("reserve", gb(c.memory.reserve_bytes_per_gpu, 3)),
                ],
            ),
        },
    ];
    finish(Question::GpuHours, s, readings)
}

/// The seed load as non-streaming batch work: size the fleet for full decode batches at a
/// higher ceiling, check the batch against the KV pool and the completion time against its
/// target, and set the answer beside the streaming fleet the same inputs size.
fn batch(c: &Ctx) -> Derivation {
    let rate = c.v("rate");
    let lp = c.v("prompt_tokens");
    let lo = c.v("output_tokens");
    let target = c.v("completion_s");
    let batch = c.v("job_batch") as u32;
    let ceiling = c.v("job_ceiling");
    let tp = c.tp as f64;
    let mut s = Vec::new();

    let load = c.load_steps(&mut s);
    let (t_pf, prefill_demand) = (load.t_prefill, load.prefill_demand);
    let (avg_ctx, ctx) = c.avg_context_step(&mut s);
    s.push(c.weight_bytes_step());
    s.push(c.kv_per_token_step());
    let pool = c.cost.kv_pool_tokens(&c.memory);
    s.push(kv_pool_step(c, pool));
    let batch_kv = batch as f64 * avg_ctx;
    s.push(fig(
        "batch_kv",
        "KV for a full batch",
        "B_job × average context",
        format!("{} × {}", int(batch as f64), int(avg_ctx)),
        batch_kv,
        "tokens",
        format!("{} tokens", int(batch_kv)),
        "",
    ));
    let kv_ok = batch_kv <= pool;
    s.push(check(
        "kv_check",
        "A full batch fits the KV pool",
        "B_job × context ≤ KV pool",
        format!("{} ≤ {}", int(batch_kv), int(pool)),
        batch_kv / pool,
        kv_ok,
        "",
    ));
    let (sc, thr, bytes) = c.decode_steps(&mut s, batch, ctx);
    let sized = c.replica_steps(
        &mut s,
        &load,
        Sizing {
            batch,
            ceiling,
            step: &sc,
            throughput: thr,
        },
        "",
    );
    let (decode_demand, replicas) = (sized.decode_demand, sized.replicas);
    let service = lp * t_pf + lo * sc.total_s;
    s.push(fig(
        "service_time",
        "One job back to back",
        "prompt tokens × t_prefill + output tokens × t_step",
        format!(
            "{} × {} + {} × {}",
            num(lp),
            duration(t_pf, 3),
            num(lo),
            duration(sc.total_s, 3)
        ),
        service,
        "s",
        duration(service, 3),
        "",
    ));
    let in_flight = replicas * batch as f64;
    s.push(fig(
        "jobs_in_flight",
        "Jobs in flight with every batch full",
        "replicas × B_job",
        format!("{} × {}", int(replicas), int(batch as f64)),
        in_flight,
        "jobs",
        format!("{} jobs", int(in_flight)),
        "",
    ));
    let completion = in_flight / rate;
    s.push(fig(
        "completion_time",
        "Completion time per job (Little's law)",
        "jobs in flight / λ",
        format!("{} / {} req/s", int(in_flight), num(rate)),
        completion,
        "s",
        duration(completion, 3),
        "",
    ));
    let completion_ok = completion <= target;
    s.push(check(
        "completion_check",
        "Completion time meets the target",
        "completion time ≤ target",
        format!("{} ≤ {}", duration(completion, 3), duration(target, 3)),
        completion / target,
        completion_ok,
        "",
    ));

    // The streaming answer for the same inputs, worked by the fleet question's own code.
    let streaming = fleet(c);
    let sv = |id: &str| streaming.step(id).map_or(f64::NAN, |st| st.value);
    let ss = |id: &str| {
        streaming
            .step(id)
            .map_or_else(String::new, |st| st.substituted.clone())
    };
    let stream_replicas = sv("replicas");
    s.push(fig(
        "streaming_replicas",
        "Replicas when streaming",
        "⌈(prefill + decode demand at B) / ceiling⌉",
        format!(
            "⌈{} = {}⌉ at B = {}",
            ss("replicas_exact"),
            fixed(sv("replicas_exact"), 2),
            num(c.v("batch"))
        ),
        stream_replicas,
        "replicas",
        plural(stream_replicas, "replica"),
        "",
    ));
    // Batching usually saves GPUs; with a job batch or ceiling below the streaming one it
    // needs more, and the step says so rather than showing a negative saving.
    let saved = (stream_replicas - replicas) * tp;
    let more = saved < 0.0;
    let (first, second) = if more {
        (replicas, stream_replicas)
    } else {
        (stream_replicas, replicas)
    };
    let gpus_diff = saved.abs();
    s.push(fig(
        "gpus_saved",
        words::label(if more {
            "gpus_more_label"
        } else {
            "gpus_saved_label"
        }),
        if more {
            "(replicas − streaming replicas) × G"
        } else {
            "(streaming replicas − replicas) × G"
        },
        format!("({} − {}) × {}", int(first), int(second), plural(tp, "GPU")),
        gpus_diff,
        "GPUs",
        words::part(
            if more {
                "gpus_more"
            } else if gpus_diff == 0.0 {
                "gpus_none"
            } else {
                "gpus_saved"
            },
            &[
                ("gpus", plural(gpus_diff, "GPU")),
                ("share", percent(gpus_diff / (stream_replicas * tp))),
            ],
        ),
        &if more {
            words::part("gpus_more_why", &[])
        } else {
            String::new()
        },
    ));
    let stream_per_million = sv("cost_per_million");
    s.push(fig(
        "streaming_cost_per_million",
        "Cost per million output tokens when streaming",
        "streaming cost per hour / (output tok/s × 3,600 / 10⁶)",
        ss("cost_per_million"),
        stream_per_million,
        "$",
        format!(
            "{} ({} here)",
            money(stream_per_million),
            money(sized.cost_per_million)
        ),
        &if more {
            words::part("streaming_cost_less_why", &[])
        } else if gpus_diff == 0.0 {
            words::part("streaming_cost_same_why", &[])
        } else {
            // The sentence of the file (`[steps] streaming_cost_per_million`).
            String::new()
        },
    ));
    s.push(fig(
        "gateway_streams",
        "Open streams at the gateway",
        "none: a job's result returns whole",
        format!(
            "0 (streaming: {} = {})",
            ss("open_streams"),
            sig(sv("open_streams"), 3)
        ),
        0.0,
        "streams",
        format!("0 streams (streaming: {})", sig(sv("open_streams"), 3)),
        "",
    ));

    // The verdict: which resource the work at the larger batch leans on, and how the KV pool
    // and the completion target press.
    let total = prefill_demand + decode_demand;
    let (compute_load, memory_load) = if sc.memory_bound() {
        (prefill_demand, decode_demand)
    } else {
        (total, 0.0)
    };
    let kv_share = batch_kv / pool;
    let done_share = completion / target;
    let readings = vec![
        LimitReading {
            limit: Limit::Compute,
            pressure: load_pressure(compute_load, memory_load, total),
            reason: words::conclude(
                "batch",
                if sc.memory_bound() {
                    "compute_prefill"
                } else {
                    "compute_all"
                },
                &[
                    ("share", percent(compute_load / total)),
                    ("load", sig(compute_load, 3)),
                    ("total", sig(total, 3)),
                ],
            ),
        },
        LimitReading {
            limit: Limit::HbmBandwidth,
            pressure: load_pressure(memory_load, compute_load, total),
            reason: words::conclude(
                "batch",
                if sc.memory_bound() {
                    "hbm_memory_bound"
                } else {
                    "hbm_compute_bound"
                },
                &[
                    ("share", percent(memory_load / total)),
                    ("bytes", gb(bytes, 4)),
                    ("batch", int(batch as f64)),
                ],
            ),
        },
        LimitReading {
            limit: Limit::KvCapacity,
            pressure: share_pressure(kv_ok, kv_share),
            reason: {
                let jobs = (pool / avg_ctx).floor();
                words::conclude(
                    "batch",
                    if kv_ok {
                        "kv_fits"
                    } else if jobs < 1.0 {
                        "kv_none"
                    } else {
                        "kv_over"
                    },
                    &[
                        ("tokens", int(batch_kv)),
                        ("share", percent(kv_share)),
                        ("jobs", plural(jobs, "job")),
                    ],
                )
            },
        },
        LimitReading {
            limit: Limit::LatencyTarget,
            pressure: share_pressure(completion_ok, done_share),
            reason: words::conclude(
                "batch",
                if completion_ok {
                    "latency_met"
                } else {
                    "latency_missed"
                },
                &[
                    ("completion", duration(completion, 3)),
                    ("target", duration(target, 3)),
                ],
            ),
        },
    ];
    finish(Question::Batch, s, readings)
}

/// The decode step as the textbook writes it: compute and memory overlap, nothing else
/// (no tensor-parallel all-reduce; the fixed overhead is kept, as both figures have it).
fn textbook_step_s(sc: &StepCost) -> f64 {
    sc.total_s - sc.comm_s
}

/// The KV pool step of the fleet question.
fn kv_pool_step(c: &Ctx, pool: f64) -> Step {
    fig(
        "kv_pool",
        "KV pool per replica",
        &format!("({0}M × u − {0}R − W) / kv", c.g()),
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
        pool,
        "tokens",
        format!("{} tokens", int(pool)),
        "",
    )
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
    readings.sort_by_key(|r| r.limit);
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

/// An ordinary figure step.
#[allow(clippy::too_many_arguments)]
fn fig(
    id: &'static str,
    label: &'static str,
    formula: &str,
    substituted: String,
    value: f64,
    unit: &'static str,
    display: String,
    why: &str,
) -> Step {
    Step {
        id,
        label,
        formula: formula.to_string(),
        substituted,
        value,
        unit,
        display,
        why: why.to_string(),
        check: None,
    }
}

/// A check step: its value is the ratio of the checked figure to its limit.
fn check(
    id: &'static str,
    label: &'static str,
    formula: &str,
    substituted: String,
    ratio: f64,
    ok: bool,
    why: &str,
) -> Step {
    let display = format!(
        "{} ({} of the limit)",
        if ok { "passes" } else { "fails" },
        percent(ratio)
    );
    Step {
        id,
        label,
        formula: formula.to_string(),
        substituted,
        value: ratio,
        unit: "",
        display,
        why: why.to_string(),
        check: Some(ok),
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

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
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
