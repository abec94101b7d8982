//! Practice and intuition on top of the derivations: a drill that poses a random but plausible
//! variant of a question and grades an estimate, and the sensitivity of any step to each input.

use super::{derive, Derivation, InputKind, Inputs, Pressure, Question, Step};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;
use trainer_engine::catalog::{self, WeightFormat};
use trainer_engine::error::ConfigError;
use trainer_engine::format::round_sig;

/// One practice problem: a question with random but plausible inputs and a step to estimate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Drill {
    /// The question drilled.
    pub question: Question,
    /// The seed the inputs and target were drawn from; the same seed gives the same drill.
    pub seed: u64,
    /// The drawn inputs; every one stays editable in the app.
    pub inputs: Inputs,
    /// Id of the step the learner estimates.
    pub target: &'static str,
    /// Accepted relative error: an estimate within `answer × (1 ± band)` passes.
    pub band: f64,
    /// The full derivation, to reveal after the estimate.
    pub derivation: Derivation,
}

/// How an estimate compares with the drill's answer.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Grade {
    /// Whether the estimate lies within the band around the answer.
    pub within_band: bool,
    /// Estimate over answer (1 is exact; 0 when the estimate is not a finite number).
    pub ratio: f64,
    /// The band the estimate was graded against.
    pub band: f64,
}

impl Drill {
    /// Draws a drill for the question from the seed. The inputs are redrawn until the question
    /// derives and the replica is plausible (its KV pool holds the batch); after 64 failed
    /// draws the question's defaults are used, so this always returns a drill.
    pub fn new(q: Question, seed: u64) -> Drill {
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut found = None;
        for _ in 0..64 {
            let inputs = draw(q, &mut rng);
            if let Some(d) = plausible(q, &inputs, &mut rng) {
                found = Some(d);
                break;
            }
        }
        let (inputs, derivation) = found.unwrap_or_else(|| {
            let inputs = Inputs::defaults(q);
            let d = derive(q, &inputs).unwrap_or_else(|_| Derivation {
                question: q,
                steps: Vec::new(),
                verdict: super::Verdict {
                    readings: Vec::new(),
                    headline: String::new(),
                    summary: String::new(),
                    said: Vec::new(),
                },
            });
            (inputs, d)
        });
        let table = targets(q);
        let start = index(&mut rng, table.len());
        // The first target, from a random start, whose answer is a positive number.
        let (target, band) = (0..table.len())
            .map(|i| table[(start + i) % table.len()])
            .find(|(id, _)| {
                derivation
                    .step(id)
                    .is_some_and(|s| s.value.is_finite() && s.value > 0.0)
            })
            .unwrap_or(table[start]);
        Drill {
            question: q,
            seed,
            inputs,
            target,
            band,
            derivation,
        }
    }

    /// The step the learner estimates.
    pub fn target_step(&self) -> Option<&Step> {
        self.derivation.step(self.target)
    }

    /// The unrounded answer, in the target step's unit.
    pub fn answer(&self) -> f64 {
        self.target_step().map_or(0.0, |s| s.value)
    }

    /// The unit the learner types an estimate in, and the factor from the target step's own
    /// unit to it: seconds and bytes read badly for figures in microseconds or gigabytes.
    pub fn entry_unit(&self) -> EntryUnit {
        EntryUnit::for_step(self.target_step().map_or("", |s| s.unit), self.answer())
    }

    /// Grades an estimate as typed, in [`Drill::entry_unit`]: thousands separators (`,`, `_`)
    /// and a trailing `%` are allowed. `None` unless it is a positive number.
    pub fn grade_text(&self, text: &str) -> Option<Grade> {
        let text: String = text.chars().filter(|c| *c != ',' && *c != '_').collect();
        match text.trim().trim_end_matches('%').trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Some(self.grade(v / self.entry_unit().factor)),
            _ => None,
        }
    }

    /// Grades an estimate given in the target step's unit.
    pub fn grade(&self, estimate: f64) -> Grade {
        let answer = self.answer();
        let ratio = if !estimate.is_finite() {
            0.0
        } else if answer != 0.0 {
            estimate / answer
        } else if estimate == 0.0 {
            1.0
        } else {
            0.0
        };
        Grade {
            within_band: estimate.is_finite() && ratio > 0.0 && (ratio - 1.0).abs() <= self.band,
            ratio,
            band: self.band,
        }
    }
}

/// The unit an estimate is typed in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EntryUnit {
    /// The unit as the field shows it, e.g. `ms`.
    pub label: &'static str,
    /// What a value in the step's own unit is multiplied by to read in `label`.
    pub factor: f64,
}

impl EntryUnit {
    /// The entry unit for a step in `unit` whose answer is about `value`.
    pub fn for_step(unit: &str, value: f64) -> EntryUnit {
        let (label, factor) = match unit {
            "s" if value < 1e-3 => ("µs", 1e6),
            "s" if value < 1.0 => ("ms", 1e3),
            "s" => ("s", 1.0),
            "B" if value >= 1e9 => ("GB", 1e-9),
            "B" if value >= 1e6 => ("MB", 1e-6),
            "B" => ("bytes", 1.0),
            "" => ("%", 100.0),
            "tok/s" => ("tok/s", 1.0),
            "$" => ("$", 1.0),
            "$/h" => ("$/h", 1.0),
            "replica-s/s" => ("replica-s/s", 1.0),
            "tokens" => ("tokens", 1.0),
            "replicas" => ("replicas", 1.0),
            "streams" => ("streams", 1.0),
            "GPUs" => ("GPUs", 1.0),
            "chats" => ("chats", 1.0),
            "GPU-h" => ("GPU-h", 1.0),
            "jobs" => ("jobs", 1.0),
            _ => ("", 1.0),
        };
        EntryUnit { label, factor }
    }
}

/// How much one step moves when each numeric input rises by 10 %: for every input, the
/// percentage change of the step divided by the percentage change of the input (an
/// elasticity: 1 means proportional, -1 inversely proportional, 0 no effect).
///
/// Whole-number inputs rise to the next whole number at least; an input already at its
/// maximum falls by 10 % instead; inputs at zero, inputs whose change makes the question
/// underivable, and a target that is zero are left out. The list is sorted by the size of
/// the elasticity, largest first. A step that rounds (such as whole replicas) moves in jumps,
/// so its elasticity may be zero or large.
pub fn sensitivity(
    q: Question,
    inputs: &Inputs,
    target_step: &str,
) -> Result<Vec<(String, f64)>, Vec<ConfigError>> {
    let base = derive(q, inputs)?;
    let y0 = base
        .step(target_step)
        .ok_or_else(|| {
            vec![ConfigError::new(
                "target",
                format!("is not a step of {}", q.id()),
            )]
        })?
        .value;
    let mut out = Vec::new();
    if y0 == 0.0 || !y0.is_finite() {
        return Ok(out);
    }
    for spec in inputs.specs(q) {
        if spec.kind == InputKind::Choice {
            continue;
        }
        let Some(x0) = inputs.get(spec.name).filter(|&x| x > 0.0) else {
            continue;
        };
        let integer = spec.kind == InputKind::Integer;
        let up = if integer {
            (x0 * 1.1).round().max(x0 + 1.0)
        } else {
            x0 * 1.1
        };
        let down = if integer {
            (x0 * 0.9).round().min(x0 - 1.0)
        } else {
            x0 * 0.9
        };
        let x1 = if up <= spec.max {
            up
        } else if down >= spec.min {
            down
        } else {
            continue;
        };
        let mut bumped = inputs.clone();
        if bumped.set(q, spec.name, x1).is_err() {
            continue;
        }
        let Ok(d) = derive(q, &bumped) else { continue };
        let Some(y1) = d.step(target_step).map(|s| s.value) else {
            continue;
        };
        out.push((spec.name.to_string(), ((y1 - y0) / y0) / ((x1 - x0) / x0)));
    }
    out.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
    Ok(out)
}

/// The steps a drill may ask for, with the relative error accepted for each: tight for
/// one-multiplication steps, 25 % for steps that chain several figures.
fn targets(q: Question) -> &'static [(&'static str, f64)] {
    match q {
        Question::Fleet => &[
            ("prompt_tps", 0.1),
            ("output_tps", 0.1),
            ("prefill_per_token", 0.25),
            ("ttft_compute", 0.25),
            ("decode_bytes", 0.25),
            ("decode_step", 0.25),
            ("decode_throughput", 0.25),
            ("replicas", 0.25),
            ("cost_per_million", 0.25),
            ("open_streams", 0.1),
            ("kv_pool", 0.25),
        ],
        Question::Roofline => &[
            ("ridge_point", 0.1),
            ("prefill_intensity", 0.25),
            ("decode_intensity", 0.25),
            ("weight_floor", 0.1),
            ("decode_limit", 0.25),
            ("tpot_batch", 0.25),
            ("pool_batch", 0.25),
        ],
        Question::ChatsPerReplica => &[
            ("kv_per_token", 0.1),
            ("weight_bytes", 0.1),
            ("kv_pool", 0.25),
            ("chats", 0.25),
            ("full_decode_step", 0.25),
        ],
        Question::GpuHours => &[
            ("decode_step", 0.25),
            ("decode_throughput", 0.25),
            ("gpu_hours_per_million", 0.25),
            ("cost_per_million", 0.25),
        ],
        Question::Batch => &[
            ("prompt_tps", 0.1),
            ("output_tps", 0.1),
            ("prefill_demand", 0.25),
            ("batch_kv", 0.1),
            ("decode_step", 0.25),
            ("decode_throughput", 0.25),
            ("replicas", 0.25),
            ("cost_per_million", 0.25),
            ("completion_time", 0.25),
            ("streaming_replicas", 0.25),
        ],
        Question::Speculation => &[
            ("tokens_per_step", 0.1),
            ("decode_step", 0.25),
            ("verify_step", 0.25),
            ("speedup", 0.25),
            ("crossover_batch", 0.25),
            ("crossover_rate", 0.25),
        ],
        Question::Split => &[
            ("prompt_tps", 0.1),
            ("prefill_demand", 0.25),
            ("prefill_replicas", 0.25),
            ("decode_step", 0.25),
            ("decode_replicas", 0.25),
            ("kv_moved", 0.1),
            ("transfer_time", 0.25),
            ("first_token", 0.25),
        ],
        Question::Host => &[
            ("chat_rate", 0.1),
            ("history_tokens", 0.1),
            ("chat_bytes", 0.1),
            ("window_host_bytes", 0.25),
            ("kept_for", 0.25),
            ("open_chats", 0.25),
            ("open_bytes", 0.25),
            ("reload_time", 0.25),
        ],
        Question::HalveCost => &[
            ("cost_after", 0.1),
            ("replica_rate", 0.1),
            ("weight_bytes", 0.1),
            ("kv_per_token", 0.1),
            ("bf16_tpot", 0.25),
            ("budget_tpot", 0.25),
        ],
    }
}

/// A uniform index below `len` (at least one). It samples a `u32`, never a `usize`, whose
/// sampling differs between 32-bit WASM and 64-bit targets.
fn index(rng: &mut Pcg64, len: usize) -> usize {
    rng.gen_range(0..len.clamp(1, u32::MAX as usize) as u32) as usize
}

/// Picks one element of a non-empty list.
fn pick<T: Copy>(rng: &mut Pcg64, items: &[T]) -> T {
    items[index(rng, items.len())]
}

/// Draws random inputs for the question from round, realistic values.
fn draw(q: Question, rng: &mut Pcg64) -> Inputs {
    let mut inputs = Inputs::defaults(q);
    let models = catalog::models();
    let gpus = catalog::gpus();
    let model = models[index(rng, models.len())].id.clone();
    let gpu = gpus[index(rng, gpus.len())].id.clone();
    let fp8 = |rng: &mut Pcg64| if rng.gen_bool(0.25) { "fp8" } else { "bf16" };
    let (wd, kd) = (fp8(rng), fp8(rng));
    for (name, id) in [
        ("model", model.as_str()),
        ("gpu", gpu.as_str()),
        ("weight_dtype", wd),
        ("kv_dtype", kd),
    ] {
        // The ids come from the catalog, so setting them cannot fail.
        let _ = inputs.set_choice(q, name, id);
    }
    let mut set = |name: &str, v: f64| {
        let _ = inputs.set(q, name, v);
    };
    let price = pick(rng, &[1.5, 2.0, 2.5, 3.0, 4.0]);
    set("mfu", pick(rng, &[0.4, 0.5, 0.6]));
    set("mbu", pick(rng, &[0.6, 0.7, 0.75, 0.8]));
    match q {
        Question::Fleet | Question::Batch | Question::Roofline | Question::Split => {
            // Log-uniform from 2 to 500 requests a second, to two significant figures.
            let u: f64 = rng.gen_range(0.0..1.0);
            let ln = libm::log(2.0) + u * (libm::log(500.0) - libm::log(2.0));
            set("rate", round_sig(libm::exp(ln), 2));
            set(
                "prompt_tokens",
                pick(rng, &[200.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0]),
            );
            set("output_tokens", pick(rng, &[100.0, 250.0, 500.0, 1000.0]));
            set("tpot_ms", pick(rng, &[15.0, 20.0, 30.0, 50.0]));
            set("batch", pick(rng, &[16.0, 32.0, 64.0, 128.0]));
            set("ceiling", pick(rng, &[0.6, 0.65, 0.7, 0.8]));
            set("mem_util", pick(rng, &[0.9, 0.92, 0.95]));
            set("reserve_gb", pick(rng, &[2.0, 3.0, 4.0]));
            set("price", price);
            if q == Question::Split {
                set("link_gbps", pick(rng, &[25.0, 100.0, 200.0, 400.0]));
            }
            if q == Question::Batch {
                set("job_batch", pick(rng, &[64.0, 128.0, 256.0, 512.0]));
                set("job_ceiling", pick(rng, &[0.8, 0.85, 0.9, 0.95]));
                set("completion_s", pick(rng, &[30.0, 60.0, 300.0, 3600.0]));
            }
        }
        Question::ChatsPerReplica => {
            set(
                "chat_tokens",
                pick(rng, &[2048.0, 4096.0, 8192.0, 16384.0, 32768.0]),
            );
            set("tpot_ms", pick(rng, &[20.0, 30.0, 50.0]));
            set("mem_util", pick(rng, &[0.9, 0.92, 0.95]));
            set("reserve_gb", pick(rng, &[2.0, 3.0, 4.0]));
        }
        Question::GpuHours => {
            set("batch", pick(rng, &[8.0, 16.0, 32.0, 64.0, 128.0, 256.0]));
            set(
                "context",
                pick(rng, &[512.0, 1125.0, 2048.0, 4096.0, 8192.0]),
            );
            set("price", price);
        }
        Question::Speculation => {
            set(
                "prompt_tokens",
                pick(rng, &[200.0, 500.0, 1000.0, 2000.0, 4000.0]),
            );
            set("output_tokens", pick(rng, &[100.0, 250.0, 500.0, 1000.0]));
            set("spec_k", pick(rng, &[2.0, 3.0, 4.0, 5.0]));
            set("acceptance", pick(rng, &[0.5, 0.6, 0.7, 0.8]));
            set("batch", pick(rng, &[1.0, 4.0, 8.0, 16.0, 32.0]));
            set("mem_util", pick(rng, &[0.9, 0.92, 0.95]));
            set("reserve_gb", pick(rng, &[2.0, 3.0, 4.0]));
        }
        Question::Host => {
            set("rate", pick(rng, &[5.0, 10.0, 20.0, 50.0, 100.0, 200.0]));
            set("prompt_tokens", pick(rng, &[200.0, 500.0, 1000.0, 2000.0]));
            set("output_tokens", pick(rng, &[100.0, 250.0, 500.0]));
            set("turns", pick(rng, &[2.0, 3.0, 5.0, 8.0, 12.0]));
            set("think_s", pick(rng, &[20.0, 60.0, 120.0, 300.0, 600.0]));
            set("warm_hours", pick(rng, &[1.0, 4.0, 8.0, 24.0]));
            set("tpot_ms", pick(rng, &[15.0, 20.0, 30.0, 50.0]));
            set("fleet_replicas", pick(rng, &[2.0, 4.0, 8.0, 16.0, 32.0]));
            set("host_gb", pick(rng, &[64.0, 128.0, 192.0, 256.0, 512.0]));
            set("mem_util", pick(rng, &[0.9, 0.92, 0.95]));
            set("reserve_gb", pick(rng, &[2.0, 3.0, 4.0]));
        }
        Question::HalveCost => {
            // Any of the three weight formats is the proposal under test.
            let wf = pick(rng, &WeightFormat::ALL);
            let _ = inputs.set_choice(q, "weight_dtype", wf.name());
            let mut set = |name: &str, v: f64| {
                let _ = inputs.set(q, name, v);
            };
            set("rate", pick(rng, &[10.0, 20.0, 50.0, 100.0, 200.0]));
            set(
                "prompt_tokens",
                pick(rng, &[200.0, 500.0, 1000.0, 2000.0, 4000.0]),
            );
            set("output_tokens", pick(rng, &[100.0, 250.0, 500.0, 1000.0]));
            set("tpot_ms", pick(rng, &[15.0, 20.0, 30.0, 50.0]));
            let before = pick(rng, &[4.0, 6.0, 8.0, 12.0, 16.0, 24.0]);
            set("replicas_before", before);
            set("replicas", before / 2.0);
            set("mem_util", pick(rng, &[0.9, 0.92, 0.95]));
            set("reserve_gb", pick(rng, &[2.0, 3.0, 4.0]));
            set("price", price);
        }
    }
    inputs
}

/// Tries the smallest GPU count per replica (1, 2, 4, 8, drawn upwards from a random start
/// for the 70B question so it is not always four) that derives and holds the batch in KV.
fn plausible(q: Question, drawn: &Inputs, rng: &mut Pcg64) -> Option<(Inputs, Derivation)> {
    let counts = [1.0, 2.0, 4.0, 8.0];
    let first = if q == Question::ChatsPerReplica {
        index(rng, counts.len())
    } else {
        0
    };
    for &tp in &counts[first..] {
        let mut inputs = drawn.clone();
        if inputs.set(q, "gpus_per_replica", tp).is_err() {
            continue;
        }
        let Ok(d) = derive(q, &inputs) else { continue };
        let value = |id: &str| d.step(id).map_or(0.0, |s| s.value);
        let ok = match q {
            Question::Fleet => {
                value("kv_pool") >= inputs.get("batch").unwrap_or(0.0) * value("avg_context")
            }
            // The decode batch fits a decode replica's pool.
            Question::Split => value("kv_share") <= 1.0,
            Question::ChatsPerReplica => value("chats") >= 1.0,
            // A drill asks for the largest batch's limits: both must hold a batch.
            Question::Roofline => value("tpot_batch") >= 1.0 && value("pool_batch") >= 1.0,
            Question::Batch => d.step("kv_check").and_then(|s| s.check) == Some(true),
            Question::GpuHours => {
                d.verdict.pressure(super::Limit::KvCapacity) != Some(Pressure::Binding)
            }
            // A drill asks for the crossover, so it needs one within what the pool holds.
            Question::Speculation => value("crossover_batch") < value("pool_batch"),
            // Both formats keep up with the traffic inside the pool (a drill asks for both
            // per-token times).
            // Any replica that holds some cache: every figure is asked of a fitting model.
            Question::Host => value("kv_pool") >= 1.0,
            Question::HalveCost => {
                d.step("bf16_batch").is_some()
                    && value("chosen_batch") * value("avg_context") < value("kv_pool")
            }
        };
        if ok {
            return Some((inputs, d));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_units_scale_seconds_and_bytes_to_readable_figures() {
        for (unit, value, label, factor) in [
            ("s", 32e-6, "µs", 1e6),
            ("s", 0.02, "ms", 1e3),
            ("s", 5.0, "s", 1.0),
            ("B", 16e9, "GB", 1e-9),
            ("B", 327_680.0, "bytes", 1.0),
            ("B", 2e6, "MB", 1e-6),
            ("", 0.6, "%", 100.0),
            ("replicas", 8.0, "replicas", 1.0),
            ("furlongs", 1.0, "", 1.0),
        ] {
            assert_eq!(
                EntryUnit::for_step(unit, value),
                EntryUnit { label, factor },
                "{unit} {value}"
            );
        }
    }

    #[test]
    fn typed_estimates_are_read_in_the_entry_unit() {
        let d = Drill::new(Question::Fleet, 7);
        let unit = d.entry_unit();
        let exact = format!("{}", d.answer() * unit.factor);
        assert!(
            d.grade_text(&exact).is_some_and(|g| g.within_band),
            "{exact} {unit:?}"
        );
        for bad in ["", "abc", "-3", "0", "inf"] {
            assert_eq!(d.grade_text(bad), None, "{bad:?}");
        }
        assert_eq!(d.grade_text("1,000"), Some(d.grade(1000.0 / unit.factor)));
    }
}
