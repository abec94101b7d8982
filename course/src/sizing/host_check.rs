//! The host-memory question's simulator check: the question's chats (sessions of `turns`
//! turns, each turn resending the history, the user back `think_s` after reading the reply at
//! the per-token pace) on its replicas, routed to the replica that holds their history, with a
//! host tier of no size, of exactly the need the arithmetic found, of the answer (that need
//! with its headroom), and of twice the answer. What the runs show is the share of prompt
//! tokens found cached (on the GPU or in host memory) and the first token's time: the answer
//! holds when its tier finds nearly all that twice its size does.

use super::check::{fleet_at, SimCheckConfig};
use super::{Derivation, Inputs, Question};
use serde::{Deserialize, Serialize};
use trainer_engine::error::ConfigError;
use trainer_engine::fleet::{FleetConfig, FleetReport, FleetVerdict, RoutingPolicy};
use trainer_engine::workload::{Arrival, SessionConfig};

/// One host tier the check runs: its id (`none`, `exact`, `answer`, `double`, or `have` when
/// the GPUs alone hold the chats and the tier checked is the inputs' host memory per GPU)
/// and its size per GPU, bytes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HostArm {
    pub id: &'static str,
    pub bytes_per_gpu: f64,
}

/// How many times the answer the largest tier is: room to spare, to see what the answer misses.
pub const HOST_SPARE: f64 = 2.0;

/// The share of what twice the answer finds that the answer must find for it to hold.
pub const HOST_HOLDS_SHARE: f64 = 0.9;

/// Router load bound: a chat goes back to the replica holding its history unless that replica
/// is half again as busy as the least busy one (as in the long-chats scenario).
const LOAD_BOUND: f64 = 1.5;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The tiers the check runs for derivation `d`: none, the need per GPU without headroom, the
/// answer (with it) and twice the answer; or none and the inputs' own host memory when the
/// GPUs alone hold the chats.
pub fn host_arms(inputs: &Inputs, d: &Derivation) -> Vec<HostArm> {
    let value = |id: &str| d.step(id).map_or(0.0, |s| s.value);
    let (exact, sized) = (value("host_per_gpu"), value("host_sized"));
    let arm = |id, bytes_per_gpu| HostArm { id, bytes_per_gpu };
    if sized > 0.0 {
        vec![
            arm("none", 0.0),
            arm("exact", exact),
            arm("answer", sized),
            arm("double", sized * HOST_SPARE),
        ]
    } else {
        let have = inputs.get("host_gb").unwrap_or(0.0) * 1e9;
        vec![arm("none", 0.0), arm("have", have)]
    }
}

/// Simulated seconds the check runs for `inputs`: twice a chat's life (its turns, each a reply
/// read at the per-token pace and the time before the next), at least the check's usual
/// duration and at most an hour, within the check's request cap.
pub fn host_check_seconds(inputs: &Inputs, cfg: &SimCheckConfig) -> f64 {
    let v = |name: &str| inputs.get(name).unwrap_or(0.0);
    let gap = v("output_tokens") * v("tpot_ms") / 1e3 + v("think_s");
    let life = (2.0 * v("turns") * gap).clamp(cfg.duration_s, 3600.0);
    life.min(cfg.max_requests / v("rate"))
}

/// The fleets of the check, one per tier of [`host_arms`]: the inputs' replica on
/// `fleet_replicas` replicas, new chats arriving as a Poisson process at `rate / turns`, each
/// turn adding `prompt_tokens` and a reply of `output_tokens`, for long enough to see chats
/// come back (twice a chat's life, within the check's request cap).
pub fn host_check_fleets(
    inputs: &Inputs,
    d: &Derivation,
    cfg: &SimCheckConfig,
) -> Result<Vec<(HostArm, FleetConfig)>, ConfigError> {
    if let Some(e) = inputs.validate(Question::Host).into_iter().next() {
        return Err(e);
    }
    let v = |name: &str| inputs.get(name).unwrap_or(0.0);
    let (rate, turns, tpot) = (v("rate"), v("turns"), v("tpot_ms") / 1e3);
    let replicas = v("fleet_replicas") as u32;
    let tp = v("gpus_per_replica");
    let mut base = fleet_at(inputs, replicas, rate, tpot, 0.0, cfg)?;
    let duration = host_check_seconds(inputs, cfg);
    for t in &mut base.traffic {
        t.workload.arrival = Arrival::Poisson { rate: rate / turns };
        t.workload.sessions = Some(SessionConfig {
            turns: turns as u32,
            think_time_s: v("think_s"),
            system_prompt_len: 0,
            reply_time_per_token_s: tpot,
            history_limit: 0,
        });
        t.workload.duration_s = duration;
    }
    base.router.policy = RoutingPolicy::prefix_affinity(LOAD_BOUND);
    host_arms(inputs, d)
        .into_iter()
        .map(|arm| {
            let mut fleet = base.clone();
            for pool in &mut fleet.pools {
                pool.replica.scheduler.kv_offloading_size = arm.bytes_per_gpu * tp / GIB;
            }
            fleet.validate()?;
            Ok((arm, fleet))
        })
        .collect()
}

/// The check's words (`[check]` of `content/sizing-host.toml`): `{name}`s are figures the page
/// fills.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostCheckText {
    pub title: String,
    /// What the check runs (`{replicas}`, `{chats}`: new chats a second, `{seconds}`,
    /// `{spare}`: [`HOST_SPARE`]).
    pub intro: String,
    pub button: String,
    /// The table's caption and its column heads.
    pub caption: String,
    pub col_tier: String,
    pub col_size: String,
    pub col_gpu: String,
    pub col_host: String,
    pub col_p50: String,
    pub col_p95: String,
    /// Each tier's name, by [`HostArm::id`].
    pub arm_none: String,
    pub arm_exact: String,
    pub arm_answer: String,
    pub arm_double: String,
    pub arm_have: String,
    /// The answer found nearly all that twice it did (`{share}`), or it did not.
    pub holds: String,
    pub short: String,
    /// The need without headroom against the answer (`{exact}`, `{answer}`: shares cached).
    pub exact: String,
    /// The GPUs alone hold the chats: what the inputs' host memory adds (`{none}`, `{have}`).
    pub on_gpus: String,
    /// Some run stopped at its cap (`{tiers}`).
    pub capped: String,
    pub stale: String,
}

impl HostCheckText {
    /// The name of tier `id`, its `{spare}` filled.
    pub fn arm(&self, id: &str) -> String {
        let name = match id {
            "none" => &self.arm_none,
            "exact" => &self.arm_exact,
            "answer" => &self.arm_answer,
            "double" => &self.arm_double,
            _ => &self.arm_have,
        };
        name.replace("{spare}", &spare())
    }
}

/// [`HOST_SPARE`] as the check's words show it: `2×`.
pub fn spare() -> String {
    format!("{}×", trainer_engine::format::num(HOST_SPARE))
}

/// What one tier's run measured.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HostRun {
    pub arm: HostArm,
    pub verdict: FleetVerdict,
    /// Prompt tokens found in the GPUs' prefix caches, and copied back from host memory, as
    /// shares of the prompt tokens looked up.
    pub gpu_hit: f64,
    pub host_hit: f64,
    /// Server time to first token, median and p95, seconds.
    pub ttft_p50_s: f64,
    pub ttft_p95_s: f64,
    /// Requests that arrived and that completed.
    pub arrived: u64,
    pub completed: u64,
}

impl HostRun {
    pub fn from_report(arm: HostArm, report: &FleetReport) -> HostRun {
        let pool = report.pools.first();
        HostRun {
            arm,
            verdict: report.verdict,
            gpu_hit: pool.map_or(0.0, |p| p.prefix_hit_rate),
            host_hit: pool.map_or(0.0, |p| p.host_hit_rate),
            ttft_p50_s: report.clocks.server_ttft.p50,
            ttft_p95_s: report.clocks.server_ttft.p95,
            arrived: report.outcomes.arrived,
            completed: report.outcomes.completed,
        }
    }

    /// Prompt tokens found cached anywhere, as a share of those looked up.
    pub fn cached(&self) -> f64 {
        self.gpu_hit + self.host_hit
    }
}

/// What the runs say of the answer: the share the answer's tier finds of what twice its size
/// finds, and whether that is at least [`HOST_HOLDS_SHARE`]; `None` without both runs (the
/// GPUs alone held the chats).
pub fn host_answer_holds(runs: &[HostRun]) -> Option<(f64, bool)> {
    let find = |id: &str| runs.iter().find(|r| r.arm.id == id);
    let (answer, double) = (find("answer")?, find("double")?);
    let share = if double.cached() > 0.0 {
        answer.cached() / double.cached()
    } else {
        1.0
    };
    Some((share, share >= HOST_HOLDS_SHARE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sizing::derive;
    use trainer_engine::fleet::FleetSim;

    /// The seed's chats: the answer's host tier finds nearly all that twice its size does, the
    /// need without headroom finds less (a tier a little short lets go of exactly the histories
    /// about to come back), and none finds only what the GPUs keep.
    #[test]
    fn the_seeds_answer_holds_and_the_need_without_headroom_does_not() {
        let inputs = Inputs::defaults(Question::Host);
        let d = derive(Question::Host, &inputs).expect("derives");
        let fleets = host_check_fleets(&inputs, &d, &SimCheckConfig::DEFAULT).expect("fleets");
        assert_eq!(fleets.len(), 4);
        let runs: Vec<HostRun> = fleets
            .iter()
            .map(|(arm, f)| {
                let mut sim = FleetSim::new(f.clone()).expect("builds");
                sim.run();
                HostRun::from_report(*arm, &sim.report())
            })
            .collect();
        for r in &runs {
            eprintln!(
                "{:>7}: {:.1} GB/GPU gpu {:.3} host {:.3} ttft p50 {:.3} p95 {:.3} ({} of {})",
                r.arm.id,
                r.arm.bytes_per_gpu / 1e9,
                r.gpu_hit,
                r.host_hit,
                r.ttft_p50_s,
                r.ttft_p95_s,
                r.completed,
                r.arrived
            );
        }
        let (share, holds) = host_answer_holds(&runs).expect("both runs");
        assert!(holds, "the answer finds {share} of what twice it does");
        let by = |id: &str| runs.iter().find(|r| r.arm.id == id).expect("run");
        assert_eq!(by("none").host_hit, 0.0);
        assert!(by("exact").cached() < HOST_HOLDS_SHARE * by("double").cached());
        assert!(by("none").cached() < by("exact").cached());
        assert!(by("answer").ttft_p95_s < by("none").ttft_p95_s);
    }
}
