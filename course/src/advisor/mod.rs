//! The serving advisor: for a traffic and latency targets, which configuration costs least?
//!
//! A [`Space`] is the question: a lab set-up that carries the traffic and everything not
//! searched (its query string, so a scenario or any knob the lab has can be the base), the
//! targets (server TTFT and time per output token at a percentile), the price of each GPU, and
//! the [`Axis`]es to search. **An axis is one entry**: a lab knob and the values to try
//! (`tp`: 1, 2, 4; `max_seqs`: 128, 256, ...), applied with the knob's own writer, so a choice
//! the lab gains (speculation, a prefill/decode split) is searched by naming its knob, not by a
//! new loop. Every combination of the axes' values is a [`Candidate`] replica; the replica
//! count is searched for each.
//!
//! The search ([`Search`]) goes in three stages:
//! 1. **Arithmetic first** ([`prune`]): the engine's cost model, the calculator's own, rules a
//!    candidate out without simulating it when nothing could hold the targets on it (the knob
//!    refuses the value, no price for its GPU, the KV pool cannot hold one prompt, a decode step
//!    of one sequence is slower than the per-token target, one prompt's prefill alone is slower
//!    than the TTFT target), and sets the fewest replicas worth simulating (the traffic's
//!    output tokens against what the replica's largest batch decodes at best). Each
//!    reason is kept, with its figures.
//! 2. **Short runs** find each candidate's smallest replica count that holds the targets:
//!    from the arithmetic's floor, doubling until a count holds, then halving the gap.
//! 3. **Longer runs** confirm the cheapest candidates at their counts, adding a replica while
//!    a longer run misses, a few at a time until no candidate left unconfirmed could be
//!    cheaper than the cheapest confirmed.
//!
//! The search asks for runs and is told their reports ([`Search::pending`],
//! [`Search::record`]), so any driver can run them: [`Search::run_here`] runs them in turn,
//! the page's simulation workers in parallel. Every figure is the engine's.

pub mod answer;
pub mod form;
mod search;

pub use form::Form;
pub use search::{exhaustive, FrontierPoint, RunSpec, Search, Stage};

use crate::lab::{Knob, Setup};
use serde::{Deserialize, Serialize};
use trainer_engine::cost::{BatchItem, BatchTotals, CostModel};
use trainer_engine::fleet::{FleetConfig, FleetReport, FleetVerdict};
use trainer_engine::stats::Summary;
use trainer_engine::workload::{Arrival, LengthDist};

/// A percentile the targets are read at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Percentile {
    P50,
    P90,
    P95,
    P99,
}

impl Percentile {
    /// This percentile of a summary.
    pub fn of(self, s: &Summary) -> f64 {
        match self {
            Percentile::P50 => s.p50,
            Percentile::P90 => s.p90,
            Percentile::P95 => s.p95,
            Percentile::P99 => s.p99,
        }
    }

    /// `p50`, `p90`, `p95` or `p99`.
    pub fn name(self) -> &'static str {
        match self {
            Percentile::P50 => "p50",
            Percentile::P90 => "p90",
            Percentile::P95 => "p95",
            Percentile::P99 => "p99",
        }
    }
}

/// The latency a configuration must hold.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Targets {
    /// Server TTFT (the gateway receives to first byte written), seconds.
    pub ttft_s: f64,
    /// Time per output token, seconds.
    pub tpot_s: f64,
    /// The percentile both are read at.
    pub percentile: Percentile,
}

/// One choice to search: a lab knob and the values to try, as the knob's field takes them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    /// The knob's key (`tp`, `weights`, `max_seqs`, ...).
    pub knob: String,
    pub values: Vec<String>,
}

/// The question the search answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Space {
    /// A lab query string: the traffic and every setting not searched (`preset=fleet-seed`).
    pub base: String,
    pub targets: Targets,
    /// The axes, applied in the lab's knob order whatever order they are listed in.
    pub axes: Vec<Axis>,
    /// Dollars per GPU-hour by GPU id; a GPU without a price is not searched.
    pub prices: Vec<(String, f64)>,
    /// The most replicas a candidate may use.
    pub max_replicas: u32,
    /// Simulated seconds of the runs that find each candidate's count.
    pub short_s: f64,
    /// Simulated seconds of the runs that confirm the cheapest.
    pub confirm_s: f64,
    /// How many candidates a round of longer runs confirms.
    pub confirm: usize,
}

/// The most replicas a candidate may use on the page.
pub const MAX_REPLICAS: u32 = 32;
/// Simulated seconds of a short run, and of a confirming one.
pub const SHORT_S: f64 = 60.0;
pub const CONFIRM_S: f64 = 300.0;
/// How many candidates a round of longer runs confirms.
pub const CONFIRM: usize = 3;

impl Space {
    /// The seed problem as the advisor page opens on it ([`form::Form`]'s defaults): the
    /// seed fleet's traffic on H100s at the brief's price, its SLO at p99, over tensor
    /// parallelism, number formats, the batch limit and the token budget.
    pub fn seed() -> Space {
        form::Form::default().space()
    }
}

/// Why a candidate was not simulated, with the figures that decided it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Reason {
    /// A knob refused its value in this combination (FP8 matmuls on a GPU without FP8 tensor
    /// cores, more GPUs than the model has heads to split, ...).
    Invalid { knob: String, message: String },
    /// The space gives no price for the candidate's GPU.
    NoPrice { gpu: String },
    /// The KV pool (tokens) cannot hold the shortest prompt: no request can start.
    NoRoom {
        pool_tokens: f64,
        prompt_tokens: u32,
    },
    /// A decode step of one sequence at the shortest context is slower than the per-token
    /// target, so no stream's tokens can come faster than it.
    StepTooSlow { step_s: f64, target_s: f64 },
    /// The shortest prompt's prefill in one step, alone on the replica, is slower than the
    /// TTFT target.
    PrefillTooSlow { prefill_s: f64, target_s: f64 },
}

/// The fewest replicas the arithmetic lets a candidate be simulated with: at fewer, even the
/// replicas' largest decode batches, each step as short as the cost model allows, could not
/// keep up with the output tokens the traffic asks for (nine tenths of it, so a short run's
/// luck cannot make a pruned count hold).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Floor {
    pub replicas: u32,
    /// Output tokens per second one replica decodes at best (0 when not bounded).
    pub capacity_tok_s: f64,
    /// Output tokens per second after the first token that the traffic asks for (0 when the
    /// traffic has no steady rate to bound it by).
    pub demand_tok_s: f64,
}

/// The share of the demand the floor must cover.
const FLOOR_SHARE: f64 = 0.9;

/// `(knob key, value)` for every axis, in the lab's knob order.
pub type Settings = Vec<(String, String)>;

/// A combination's settings and its set-up at one replica, or why a knob refused it.
pub type Combination = (Settings, Result<Setup, Reason>);

/// One combination of the axes' values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// `(knob key, value)` for every axis, in the lab's knob order.
    pub settings: Vec<(String, String)>,
    /// GPUs per replica (its tensor parallelism).
    pub gpus_per_replica: u32,
    /// Dollars per GPU-hour of its GPU.
    pub gpu_hour_price: f64,
    pub floor: Floor,
}

impl Candidate {
    /// Dollars an hour at `replicas`.
    pub fn dollars_per_hour(&self, replicas: u32) -> f64 {
        replicas as f64 * self.gpus_per_replica as f64 * self.gpu_hour_price
    }
}

/// A combination ruled out before any run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pruned {
    pub settings: Vec<(String, String)>,
    pub reason: Reason,
}

/// One run of a candidate at a replica count: the figures the targets and the plots read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub candidate: usize,
    pub replicas: u32,
    /// Simulated seconds asked for.
    pub horizon_s: f64,
    /// The run held both targets, served every request (none refused, none timed out) and
    /// was not stopped at a work cap.
    pub holds: bool,
    /// Server TTFT and time per output token at the targets' percentile, seconds.
    pub ttft_s: f64,
    pub tpot_s: f64,
    /// Output tokens per second per GPU (served tokens over the run).
    pub tokens_per_gpu_s: f64,
    /// Output tokens per second one user sees while streaming (one over the mean TPOT).
    pub tokens_per_user_s: f64,
    pub dollars_per_hour: f64,
    /// The run's cost per million output tokens served.
    pub dollars_per_million: f64,
    /// Mean streams open at the gateway over the run.
    pub open_streams: f64,
    pub arrived: u64,
    pub refused: u64,
    pub timed_out: u64,
    pub overloaded: bool,
}

impl Point {
    /// The figures of `report`, a run of `candidate` at `replicas` for `horizon_s`, against
    /// `targets`.
    pub fn read(
        index: usize,
        candidate: &Candidate,
        replicas: u32,
        horizon_s: f64,
        targets: &Targets,
        report: &FleetReport,
    ) -> Point {
        let c = &report.clocks;
        let ttft_s = targets.percentile.of(&c.server_ttft);
        let tpot_s = targets.percentile.of(&c.tpot);
        let refused = report.outcomes.rejected();
        let timed_out = report.outcomes.timed_out;
        let overloaded = !matches!(report.verdict, FleetVerdict::Completed);
        let gpus = (replicas * candidate.gpus_per_replica) as f64;
        let span = report.horizon_s.max(f64::MIN_POSITIVE);
        let holds = !overloaded
            && refused == 0
            && timed_out == 0
            && report.outcomes.completed > 0
            && ttft_s <= targets.ttft_s
            && tpot_s <= targets.tpot_s;
        Point {
            candidate: index,
            replicas,
            horizon_s,
            holds,
            ttft_s,
            tpot_s,
            tokens_per_gpu_s: report.cost.output_tokens as f64 / span / gpus,
            tokens_per_user_s: if c.tpot.mean > 0.0 {
                1.0 / c.tpot.mean
            } else {
                0.0
            },
            dollars_per_hour: candidate.dollars_per_hour(replicas),
            dollars_per_million: report.cost.dollars_per_million_output_tokens,
            open_streams: report.streams.open_mean,
            arrived: report.outcomes.arrived,
            refused,
            timed_out,
            overloaded,
        }
    }
}

/// The base set-up of a space: its query read by the lab, with the targets as its SLO, and
/// no autoscaler or quota (the search sizes a fixed fleet for its capacity, not its policy).
pub fn base(space: &Space) -> Result<Setup, String> {
    let mut setup = Setup::from_query(&space.base);
    if let Some((field, m)) = setup.errors.iter().next() {
        return Err(format!("{field}: {m}"));
    }
    let t = &space.targets;
    for (key, value) in [
        ("autoscaler", "off".to_string()),
        ("quota", "0".to_string()),
        ("slo_ttft", crate::lab::knobs::num(t.ttft_s * 1e3)),
        ("slo_tpot", crate::lab::knobs::num(t.tpot_s * 1e3)),
    ] {
        let knob = Knob::from_key(key).ok_or_else(|| format!("{key}: no such knob"))?;
        setup.set(knob, &value).map_err(|m| format!("{key}: {m}"))?;
    }
    Ok(setup)
}

/// Every combination of the axes' values on `base`, with its settings and its set-up at one
/// replica, or the reason a knob refused one of its values.
pub fn combinations(space: &Space, base: &Setup) -> Result<Vec<Combination>, String> {
    let mut axes: Vec<(Knob, &Axis)> = Vec::new();
    for a in &space.axes {
        let knob = Knob::from_key(&a.knob).ok_or_else(|| format!("{}: no such knob", a.knob))?;
        if a.values.is_empty() {
            return Err(format!("{}: no values to try", a.knob));
        }
        if knob.key() == "replicas" {
            return Err("replicas: the search sets the count itself".into());
        }
        if axes.iter().any(|(k, _)| *k == knob) {
            return Err(format!("{}: named twice", a.knob));
        }
        axes.push((knob, a));
    }
    axes.sort_by_key(|(k, _)| *k);
    let total = axes
        .iter()
        .try_fold(1usize, |n, (_, a)| n.checked_mul(a.values.len()))
        .filter(|&n| n <= MAX_COMBINATIONS)
        .ok_or_else(|| format!("axes: more than {MAX_COMBINATIONS} combinations"))?;
    let mut out = Vec::with_capacity(total);
    for mut n in 0..total {
        let mut setup = base.clone();
        let mut settings = Vec::with_capacity(axes.len());
        for (knob, axis) in &axes {
            let value = &axis.values[n % axis.values.len()];
            n /= axis.values.len();
            settings.push((*knob, value.clone()));
        }
        let refused = apply(&mut setup, &settings);
        let settings = settings
            .into_iter()
            .map(|(k, v)| (k.key().to_string(), v))
            .collect();
        out.push((settings, refused.map_or(Ok(setup), Err)));
    }
    Ok(out)
}

/// Sets each knob to its value in the lab's order; a value refused on the way is tried again
/// once the others are set, while that helps (a 70B model does not fit one GPU until the
/// tensor parallelism that comes after it in the order is set). The first value still
/// refused is the reason.
fn apply(setup: &mut Setup, settings: &[(Knob, String)]) -> Option<Reason> {
    let mut left: Vec<&(Knob, String)> = settings.iter().collect();
    loop {
        let mut refused = Vec::new();
        let mut first = None;
        for &(knob, ref value) in &left {
            if let Err(m) = setup.set(*knob, value) {
                first.get_or_insert(Reason::Invalid {
                    knob: knob.key().into(),
                    message: m,
                });
                refused.push(*knob);
            }
        }
        if refused.is_empty() {
            return None;
        }
        if refused.len() == left.len() {
            return first;
        }
        left.retain(|(k, _)| refused.contains(k));
    }
}

/// The most combinations a space may have.
pub const MAX_COMBINATIONS: usize = 4096;

/// Every combination of the axes' values on `base`: a candidate with its arithmetic floor, or
/// the reason it is pruned.
pub fn enumerate(space: &Space, base: &Setup) -> Result<Enumerated, String> {
    let mut out = Enumerated::default();
    let price_knob = Knob::from_key("price").ok_or("price: no such knob")?;
    for (settings, setup) in combinations(space, base)? {
        let verdict = setup.and_then(|s| prune(space, &s.config).map(|found| (s, found)));
        // The candidate's runs (and its link to the lab) cost its GPU at the space's price.
        let verdict = verdict.and_then(|(mut s, found)| {
            s.set(price_knob, &crate::lab::knobs::num(found.1))
                .map_err(|message| Reason::Invalid {
                    knob: "price".into(),
                    message,
                })?;
            Ok((s, found))
        });
        match verdict {
            Err(reason) => out.pruned.push(Pruned { settings, reason }),
            Ok((setup, (gpus_per_replica, gpu_hour_price, floor))) => {
                let floor = Floor {
                    replicas: floor.replicas.min(space.max_replicas),
                    ..floor
                };
                out.candidates.push(Candidate {
                    settings,
                    gpus_per_replica,
                    gpu_hour_price,
                    floor,
                });
                out.setups.push(setup);
            }
        }
    }
    Ok(out)
}

/// What [`enumerate`] finds.
#[derive(Clone, Debug, Default)]
pub struct Enumerated {
    pub candidates: Vec<Candidate>,
    /// The set-up of each candidate, in the same order.
    pub setups: Vec<Setup>,
    pub pruned: Vec<Pruned>,
}

/// The shortest length a distribution can draw (1 where it has no bound below).
fn shortest(d: &LengthDist) -> u32 {
    match d {
        LengthDist::Constant { value } => *value,
        LengthDist::Uniform { min, .. } => *min,
        LengthDist::LogNormal { .. } => 1,
        LengthDist::Empirical { values } | LengthDist::Sequence { values } => {
            values.iter().copied().min().unwrap_or(1)
        }
    }
    .max(1)
}

/// The arithmetic on one candidate's configuration (its first pool): the GPUs per replica, the
/// GPU's price and the floor on the replica count, or why no count could hold the targets.
///
/// Each rule is a lower bound on what any run shows, so it never rules out a configuration a
/// run would show holding: a step is never cheaper than the cost model's decode of one
/// sequence at the shortest context, a prompt's chunks never add up to less than its prefill
/// in one step (the matmuls' efficiency grows with a step's tokens), and a replica never
/// decodes more tokens a second than its largest batch at the shortest context. Rules that
/// reuse of cached prefixes or speculation would undercut are not applied when the traffic
/// has chats or the replica speculates.
pub fn prune(space: &Space, cfg: &FleetConfig) -> Result<(u32, f64, Floor), Reason> {
    let Some(pool) = cfg.pools.first() else {
        return Err(Reason::Invalid {
            knob: "replicas".into(),
            message: "the set-up has no pool".into(),
        });
    };
    let r = &pool.replica;
    let gpu = r.deployment.gpu.id.clone();
    let Some(price) = space
        .prices
        .iter()
        .find(|(id, _)| *id == gpu)
        .map(|(_, p)| *p)
    else {
        return Err(Reason::NoPrice { gpu });
    };
    let invalid = |m: String| Reason::Invalid {
        knob: "gpu".into(),
        message: m,
    };
    let blocks = r.kv_blocks().map_err(|e| invalid(e.to_string()))?;
    let cost = CostModel::new(r.deployment.clone(), r.efficiency)
        .map_err(|e| invalid(e.to_string()))?
        .with_async_scheduling(r.scheduler.async_scheduling);
    let pool_tokens = blocks as f64 * r.scheduler.block_size as f64;
    let traffic: Vec<_> = cfg.traffic.iter().map(|t| &t.workload).collect();
    let prompt = traffic
        .iter()
        .map(|w| shortest(&w.prompt_len))
        .min()
        .unwrap_or(1);
    let chats = traffic.iter().any(|w| w.sessions.is_some());
    // A reply of one token has no time per output token to bound.
    let replies = traffic
        .iter()
        .map(|w| shortest(&w.output_len))
        .min()
        .unwrap_or(1);
    if pool_tokens < prompt as f64 {
        return Err(Reason::NoRoom {
            pool_tokens,
            prompt_tokens: prompt,
        });
    }
    let speculates = r.speculative.is_some();
    let context = prompt.saturating_add(1);
    let one = cost.decode_step(1, context).total_s;
    if !speculates && replies >= 2 && one > space.targets.tpot_s {
        return Err(Reason::StepTooSlow {
            step_s: one,
            target_s: space.targets.tpot_s,
        });
    }
    if !chats {
        let prefill = cost
            .step_totals(&BatchTotals::uniform(
                1,
                BatchItem {
                    new_tokens: prompt,
                    context_len: prompt,
                },
            ))
            .total_s;
        if prefill > space.targets.ttft_s {
            return Err(Reason::PrefillTooSlow {
                prefill_s: prefill,
                target_s: space.targets.ttft_s,
            });
        }
    }
    let mut floor = Floor {
        replicas: 1,
        capacity_tok_s: 0.0,
        demand_tok_s: 0.0,
    };
    let steady = cfg.traffic.len() == 1
        && !chats
        && !speculates
        && matches!(
            traffic[0].arrival,
            Arrival::Poisson { .. } | Arrival::Gamma { .. } | Arrival::Constant { .. }
        );
    if steady {
        let w = traffic[0];
        let batch = (r.scheduler.max_num_seqs as f64)
            .min((pool_tokens / context as f64).floor())
            .max(1.0) as u32;
        let capacity = cost.decode_throughput(batch, context);
        let demand = w.arrival.mean_rate() * (w.output_len.mean() - 1.0).max(0.0);
        if capacity > 0.0 {
            let need = (FLOOR_SHARE * demand / capacity).ceil();
            floor = Floor {
                replicas: need.clamp(1.0, u32::MAX as f64) as u32,
                capacity_tok_s: capacity,
                demand_tok_s: demand,
            };
        }
    }
    Ok((r.deployment.tp, price, floor))
}

/// For two objectives to make small: the index of a point that beats point `i` on both (no
/// worse on either, better on one), if any. The plots grey such points and name the winner.
pub fn dominated_by(points: &[(f64, f64)], i: usize) -> Option<usize> {
    let (x, y) = points[i];
    points
        .iter()
        .enumerate()
        .filter(|&(j, &(a, b))| j != i && a <= x && b <= y && (a < x || b < y))
        .min_by(|(_, p), (_, q)| p.0.total_cmp(&q.0).then(p.1.total_cmp(&q.1)))
        .map(|(j, _)| j)
}

#[cfg(test)]
mod tests;
