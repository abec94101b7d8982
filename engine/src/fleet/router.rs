//! The router: picks a replica for each request from live engine state.
//!
//! Counting requests is not enough: one 32K-token prompt costs as much prefill as thirty
//! ordinary ones, so the token-aware policies look at queued prompt tokens, KV usage and
//! cached prefixes. The router is itself a single server: each decision takes a service
//! time, and requests wait their turn in front of it (plus an optional fixed delay, which
//! stands for a sidecar, a hop through a service mesh or a slow control plane).

use crate::error::{check_in, check_range, ConfigError};
use crate::replica::ReplicaLoad;
use rand::Rng;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ops::RangeInclusive;

/// How the router picks a replica.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RoutingPolicy {
    /// Each replica in turn, blind to load.
    RoundRobin,
    /// A uniformly random replica.
    Random,
    /// Fewest requests in the replica (running + waiting).
    LeastOutstanding,
    /// Two replicas drawn at random, the one with fewer requests in it (the "power of two
    /// choices" that least-request balancers such as Envoy's use): nearly as even as asking
    /// every replica, without sending every new request to the one that just emptied.
    PowerOfTwo,
    /// Fewest prompt tokens still to prefill: the policy that sees a 32K prompt as 32K.
    LeastQueuedTokens,
    /// Lowest KV-cache usage, then fewest queued prompt tokens.
    KvAware,
    /// The replica that already holds the longest prefix of the prompt (or the session's
    /// previous replica), unless the prefill work waiting on it exceeds `load_bound` times
    /// the fleet's average plus `slack_tokens` (bounded loads, with the absolute and relative
    /// thresholds of SGLang's cache-aware router); otherwise the fewest queued prompt tokens.
    /// The bound counts prompt tokens waiting to prefill, not requests: a replica's streams
    /// still decoding hardly delay a new prompt, while a prefill queue does.
    PrefixAffinity {
        load_bound: f64,
        #[serde(default = "default_slack_tokens")]
        slack_tokens: u32,
    },
    /// A replica that has the request's LoRA adapter in a GPU slot already, unless it holds
    /// more than `load_bound` times the fleet's average requests plus `slack_requests`; else
    /// a replica with a free slot; else the fewest requests (the adapter-affinity filter of
    /// the Kubernetes Gateway API Inference Extension's endpoint picker, which prefers pods
    /// with the adapter active, then pods with room for it). Without adapters it is
    /// least-outstanding.
    AdapterAffinity {
        load_bound: f64,
        #[serde(default = "default_slack_requests")]
        slack_requests: u32,
    },
}

/// Requests a replica may hold beyond the bound before an adapter's requests look elsewhere.
pub const DEFAULT_SLACK_REQUESTS: u32 = 8;

fn default_slack_requests() -> u32 {
    DEFAULT_SLACK_REQUESTS
}

/// Half of the token budget vLLM gives a step on an H100: a queue shorter than that clears
/// within a step, so spilling a turn away from its cache to dodge it costs more than it saves.
pub const DEFAULT_SLACK_TOKENS: u32 = 4096;

fn default_slack_tokens() -> u32 {
    DEFAULT_SLACK_TOKENS
}

impl RoutingPolicy {
    /// Prefix affinity bounded at `load_bound` with the default slack.
    pub fn prefix_affinity(load_bound: f64) -> RoutingPolicy {
        RoutingPolicy::PrefixAffinity {
            load_bound,
            slack_tokens: DEFAULT_SLACK_TOKENS,
        }
    }

    /// Whether the policy needs each replica's cached prefix length for the prompt.
    pub fn needs_prefix(&self) -> bool {
        matches!(self, RoutingPolicy::PrefixAffinity { .. })
    }

    /// Adapter affinity bounded at `load_bound` with the default slack.
    pub fn adapter_affinity(load_bound: f64) -> RoutingPolicy {
        RoutingPolicy::AdapterAffinity {
            load_bound,
            slack_requests: DEFAULT_SLACK_REQUESTS,
        }
    }

    /// A short name for tables and the command line.
    pub fn name(&self) -> &'static str {
        match self {
            RoutingPolicy::RoundRobin => "round_robin",
            RoutingPolicy::Random => "random",
            RoutingPolicy::LeastOutstanding => "least_outstanding",
            RoutingPolicy::PowerOfTwo => "power_of_two",
            RoutingPolicy::LeastQueuedTokens => "least_queued_tokens",
            RoutingPolicy::KvAware => "kv_aware",
            RoutingPolicy::PrefixAffinity { .. } => "prefix_affinity",
            RoutingPolicy::AdapterAffinity { .. } => "adapter_affinity",
        }
    }
}

/// The router's policy and its own costs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RouterConfig {
    pub policy: RoutingPolicy,
    /// Service time of one routing decision, seconds. Requests queue for the router.
    pub decision_s: f64,
    /// A fixed delay every request spends before the router serves it, seconds.
    pub fixed_delay_s: f64,
    /// Cap on the prompt tokens one request may prefill in a single engine step (0 = no cap).
    /// When set, it overrides every pool's `scheduler.long_prefill_token_threshold`, so a long
    /// prompt cannot take a whole step from the decodes sharing it.
    pub step_share_cap_tokens: u32,
}

impl Default for RouterConfig {
    fn default() -> Self {
        RouterConfig {
            policy: RoutingPolicy::LeastOutstanding,
            decision_s: 0.0001,
            fixed_delay_s: 0.0,
            step_share_cap_tokens: 0,
        }
    }
}

impl RouterConfig {
    /// The router's time per decision, seconds.
    pub const DECISION_S_RANGE: RangeInclusive<f64> = 0.0..=10.0;
    /// Prefix affinity's load bound, times the mean load.
    pub const LOAD_BOUND_RANGE: RangeInclusive<f64> = 1.0..=100.0;

    pub fn validate(&self) -> Result<(), ConfigError> {
        check_in("decision_s", self.decision_s, &Self::DECISION_S_RANGE)?;
        check_range("fixed_delay_s", self.fixed_delay_s, 0.0, 60.0)?;
        if let RoutingPolicy::PrefixAffinity {
            load_bound,
            slack_tokens,
        } = self.policy
        {
            check_in("policy.load_bound", load_bound, &Self::LOAD_BOUND_RANGE)?;
            check_range("policy.slack_tokens", slack_tokens as f64, 0.0, 1e6)?;
        }
        if let RoutingPolicy::AdapterAffinity {
            load_bound,
            slack_requests,
        } = self.policy
        {
            check_in("policy.load_bound", load_bound, &Self::LOAD_BOUND_RANGE)?;
            check_range("policy.slack_requests", slack_requests as f64, 0.0, 1e6)?;
        }
        Ok(())
    }
}

/// One replica the router may choose, as the router sees it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Candidate {
    /// The simulation's index of the replica.
    pub replica: usize,
    pub load: ReplicaLoad,
    /// Leading prompt tokens already cached on the replica (0 unless the policy needs it).
    pub cached_prefix_tokens: u32,
    /// The request's adapter sits in one of the replica's GPU slots, and the replica has a
    /// free slot (false and false when the replica serves no adapters or the policy does not
    /// read them).
    pub adapter_resident: bool,
    pub adapter_room: bool,
}

/// What the router needs to know about the request it routes.
#[derive(Clone, Copy, Debug, Default)]
pub struct RouteRequest {
    pub prompt_tokens: u32,
    pub session: Option<u64>,
}

/// The router's state: its queue, the round-robin pointer and the session map.
#[derive(Clone, Debug)]
pub struct Router {
    cfg: RouterConfig,
    next: usize,
    free_at: f64,
    /// Session to the replica that served its previous turn (looked up, never iterated).
    sessions: HashMap<u64, usize>,
    decisions: u64,
}

impl Router {
    pub fn new(cfg: RouterConfig) -> Result<Router, ConfigError> {
        cfg.validate()?;
        Ok(Router {
            cfg,
            next: 0,
            free_at: 0.0,
            sessions: HashMap::new(),
            decisions: 0,
        })
    }

    pub fn config(&self) -> &RouterConfig {
        &self.cfg
    }

    /// A request reaches the router at `t`; returns when its decision is made.
    pub fn schedule(&mut self, t: f64) -> f64 {
        let arrive = t + self.cfg.fixed_delay_s;
        let start = arrive.max(self.free_at);
        self.free_at = start + self.cfg.decision_s;
        self.free_at
    }

    /// Decisions made so far.
    pub fn decisions(&self) -> u64 {
        self.decisions
    }

    /// Picks one of `candidates` (an index into the slice); `None` when the slice is empty.
    pub fn choose(
        &mut self,
        req: RouteRequest,
        candidates: &[Candidate],
        rng: &mut Pcg64,
    ) -> Option<usize> {
        let n = candidates.len();
        if n == 0 {
            return None;
        }
        self.decisions += 1;
        // Ties go to the first replica at or after a rotating offset, so that equally
        // loaded replicas share the traffic instead of replica 0 taking all of it.
        let offset = self.next % n;
        self.next = self.next.wrapping_add(1);
        let pick = match self.cfg.policy {
            RoutingPolicy::RoundRobin => offset,
            // A u64 draw: a usize range would draw 32 bits on wasm32 and 64 natively.
            RoutingPolicy::Random => rng.gen_range(0..n as u64) as usize,
            RoutingPolicy::LeastOutstanding => {
                argmin(candidates, offset, |c| (c.load.outstanding as f64, 0.0))
            }
            RoutingPolicy::PowerOfTwo => {
                let a = rng.gen_range(0..n as u64) as usize;
                if n == 1 {
                    a
                } else {
                    // A second draw among the other n - 1, so the two are distinct.
                    let b = (a + 1 + rng.gen_range(0..(n - 1) as u64) as usize) % n;
                    if candidates[b].load.outstanding < candidates[a].load.outstanding {
                        b
                    } else {
                        a
                    }
                }
            }
            RoutingPolicy::LeastQueuedTokens => argmin(candidates, offset, |c| {
                (
                    c.load.queued_prompt_tokens as f64,
                    c.load.outstanding as f64,
                )
            }),
            RoutingPolicy::KvAware => argmin(candidates, offset, |c| {
                (kv_usage(&c.load), c.load.queued_prompt_tokens as f64)
            }),
            RoutingPolicy::PrefixAffinity {
                load_bound,
                slack_tokens,
            } => self.affinity(req, candidates, offset, load_bound, slack_tokens),
            RoutingPolicy::AdapterAffinity {
                load_bound,
                slack_requests,
            } => adapter_affinity(candidates, offset, load_bound, slack_requests),
        };
        if let Some(s) = req.session {
            self.sessions.insert(s, candidates[pick].replica);
        }
        Some(pick)
    }

    fn affinity(
        &self,
        req: RouteRequest,
        candidates: &[Candidate],
        offset: usize,
        load_bound: f64,
        slack_tokens: u32,
    ) -> usize {
        let n = candidates.len() as f64;
        let queued: f64 = candidates
            .iter()
            .map(|c| c.load.queued_prompt_tokens as f64)
            .sum();
        // Bounded loads: no replica keeps the turn while more than load_bound x the average
        // prefill queue, plus the slack, waits on it.
        let cap = load_bound * queued / n + slack_tokens as f64;
        let within = |c: &Candidate| (c.load.queued_prompt_tokens as f64) <= cap;
        if let Some(prev) = req.session.and_then(|s| self.sessions.get(&s)) {
            if let Some(i) = candidates
                .iter()
                .position(|c| c.replica == *prev && within(c))
            {
                return i;
            }
        }
        let best_hit = candidates
            .iter()
            .filter(|c| within(c))
            .map(|c| c.cached_prefix_tokens)
            .max()
            .unwrap_or(0);
        if best_hit > 0 {
            return argmin(candidates, offset, |c| {
                if within(c) && c.cached_prefix_tokens == best_hit {
                    (0.0, c.load.queued_prompt_tokens as f64)
                } else {
                    (1.0, 0.0)
                }
            });
        }
        argmin(candidates, offset, |c| {
            (
                c.load.queued_prompt_tokens as f64,
                c.load.outstanding as f64,
            )
        })
    }
}

/// The adapter-affinity choice: among replicas within the bound, one holding the adapter,
/// else one with a free slot, else any; the fewest requests within the first group found.
fn adapter_affinity(
    candidates: &[Candidate],
    offset: usize,
    load_bound: f64,
    slack_requests: u32,
) -> usize {
    let n = candidates.len() as f64;
    let total: f64 = candidates.iter().map(|c| c.load.outstanding as f64).sum();
    let cap = load_bound * total / n + slack_requests as f64;
    argmin(candidates, offset, |c| {
        let within = (c.load.outstanding as f64) <= cap;
        let group = if within && c.adapter_resident {
            0.0
        } else if within && c.adapter_room {
            1.0
        } else {
            2.0
        };
        (group, c.load.outstanding as f64)
    })
}

/// Fraction of the KV pool in use (0 when the pool size is unknown).
pub fn kv_usage(load: &ReplicaLoad) -> f64 {
    if load.kv_blocks_total == 0 {
        0.0
    } else {
        load.kv_blocks_used as f64 / load.kv_blocks_total as f64
    }
}

/// Index of the candidate with the smallest key, scanning from `offset` and wrapping.
fn argmin(
    candidates: &[Candidate],
    offset: usize,
    key: impl Fn(&Candidate) -> (f64, f64),
) -> usize {
    let n = candidates.len();
    let mut best = offset;
    let mut best_key = key(&candidates[offset]);
    for k in 1..n {
        let i = (offset + k) % n;
        let kk = key(&candidates[i]);
        if kk.0 < best_key.0 || (kk.0 == best_key.0 && kk.1 < best_key.1) {
            best = i;
            best_key = kk;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn cand(outstanding: u32, queued: u64, kv_used: u32, cached: u32) -> Candidate {
        Candidate {
            replica: 0,
            load: ReplicaLoad {
                running: outstanding,
                outstanding,
                queued_prompt_tokens: queued,
                kv_blocks_used: kv_used,
                kv_blocks_total: 100,
                ..ReplicaLoad::default()
            },
            cached_prefix_tokens: cached,
            adapter_resident: false,
            adapter_room: false,
        }
    }

    fn with_adapter(mut c: Candidate, resident: bool, room: bool) -> Candidate {
        c.adapter_resident = resident;
        c.adapter_room = room;
        c
    }

    #[test]
    fn adapter_affinity_prefers_the_adapters_replica_then_a_free_slot_within_the_bound() {
        let policy = RoutingPolicy::AdapterAffinity {
            load_bound: 1.5,
            slack_requests: 2,
        };
        // Replica 2 holds the adapter: it takes the request though it is busier than 0.
        let cands = [
            with_adapter(cand(4, 0, 0, 0), false, false),
            with_adapter(cand(5, 0, 0, 0), false, true),
            with_adapter(cand(6, 0, 0, 0), true, false),
        ];
        assert_eq!(picks(policy, &cands, 3), vec![2, 2, 2]);
        // Past 1.5 x the mean (25 / 3) + 2 = 14.5 it does not: a replica with a free slot does.
        let cands = [
            with_adapter(cand(4, 0, 0, 0), false, false),
            with_adapter(cand(5, 0, 0, 0), false, true),
            with_adapter(cand(16, 0, 0, 0), true, false),
        ];
        assert_eq!(picks(policy, &cands, 3), vec![1, 1, 1]);
        // No slot free and nobody holds it: the fewest requests.
        let cands = [
            with_adapter(cand(4, 0, 0, 0), false, false),
            with_adapter(cand(3, 0, 0, 0), false, false),
        ];
        assert_eq!(picks(policy, &cands, 2), vec![1, 1]);
    }

    /// Routes `rounds` requests (no session) over fixed candidates and returns the picks.
    fn picks(policy: RoutingPolicy, cands: &[Candidate], rounds: usize) -> Vec<usize> {
        let mut c: Vec<Candidate> = cands.to_vec();
        for (i, x) in c.iter_mut().enumerate() {
            x.replica = i;
        }
        let mut r = Router::new(RouterConfig {
            policy,
            ..RouterConfig::default()
        })
        .unwrap();
        let mut rng = Pcg64::seed_from_u64(7);
        (0..rounds)
            .map(|_| r.choose(RouteRequest::default(), &c, &mut rng).unwrap())
            .collect()
    }

    #[test]
    fn each_policy_picks_what_it_measures() {
        // Replica 0: two short requests. Replica 1: one 32K prompt. Replica 2: full KV, idle queue.
        let cands = [
            cand(2, 2_000, 10, 0),
            cand(1, 32_000, 10, 0),
            cand(3, 0, 90, 0),
        ];
        let cases = [
            (RoutingPolicy::RoundRobin, vec![0, 1, 2, 0]),
            (RoutingPolicy::LeastOutstanding, vec![1, 1, 1, 1]),
            (RoutingPolicy::LeastQueuedTokens, vec![2, 2, 2, 2]),
            (RoutingPolicy::KvAware, vec![0, 0, 0, 0]),
        ];
        for (policy, want) in cases {
            assert_eq!(picks(policy, &cands, 4), want, "{}", policy.name());
        }
        let random = picks(RoutingPolicy::Random, &cands, 60);
        assert!((0..3).all(|i| random.contains(&i)));
    }

    #[test]
    fn two_choices_take_the_less_loaded_of_two_distinct_draws() {
        // Replica 3 is the emptiest, but two random draws rarely both miss the rest, so it
        // gets about the share of a replica that is one of the pair (1 - 3/4 x 2/3 = 1/2 of the
        // picks go to a pair that holds it), not all of them.
        let cands = [
            cand(5, 0, 0, 0),
            cand(4, 0, 0, 0),
            cand(3, 0, 0, 0),
            cand(0, 0, 0, 0),
        ];
        let got = picks(RoutingPolicy::PowerOfTwo, &cands, 4_000);
        let share = |i: usize| got.iter().filter(|&&p| p == i).count() as f64 / 4_000.0;
        assert!((share(3) - 0.5).abs() < 0.04, "{}", share(3));
        // The busiest replica loses to whichever replica it is drawn with.
        assert_eq!(share(0), 0.0);
        // One replica: it is the pick.
        assert_eq!(
            picks(RoutingPolicy::PowerOfTwo, &cands[..1], 3),
            vec![0, 0, 0]
        );
    }

    #[test]
    fn ties_rotate_instead_of_piling_on_the_first_replica() {
        let cands = [cand(0, 0, 0, 0); 4];
        assert_eq!(
            picks(RoutingPolicy::LeastQueuedTokens, &cands, 4),
            vec![0, 1, 2, 3]
        );
    }

    #[test]
    fn affinity_follows_the_cache_until_the_load_bound() {
        let policy = RoutingPolicy::prefix_affinity(1.25);
        // Replica 1 caches 900 tokens of the prompt and is not overloaded: it wins.
        let cands = [cand(4, 0, 0, 0), cand(4, 900, 0, 900), cand(4, 0, 0, 100)];
        assert_eq!(picks(policy, &cands, 2), vec![1, 1]);
        // Many more streams decoding there do not move the turn: they hardly delay a prompt.
        let cands = [cand(1, 500, 0, 0), cand(40, 900, 0, 900), cand(1, 0, 0, 0)];
        assert_eq!(picks(policy, &cands, 1), vec![1]);
        // A prefill queue far above the average (and the slack) does: the least queued wins.
        let cands = [
            cand(1, 500, 0, 0),
            cand(4, 20_000, 0, 900),
            cand(1, 0, 0, 0),
        ];
        assert_eq!(picks(policy, &cands, 1), vec![2]);
        // With no slack, a queue just over load_bound x the average is already too much.
        let tight = RoutingPolicy::PrefixAffinity {
            load_bound: 1.25,
            slack_tokens: 0,
        };
        let cands = [cand(1, 500, 0, 0), cand(4, 2_000, 0, 900), cand(1, 0, 0, 0)];
        assert_eq!(picks(tight, &cands, 1), vec![2]);
        assert_eq!(picks(policy, &cands, 1), vec![1]);
    }

    #[test]
    fn a_session_sticks_to_its_replica() {
        let mut r = Router::new(RouterConfig {
            policy: RoutingPolicy::prefix_affinity(2.0),
            ..RouterConfig::default()
        })
        .unwrap();
        let mut rng = Pcg64::seed_from_u64(1);
        let mut c = [cand(1, 0, 0, 0), cand(0, 0, 0, 0), cand(1, 0, 0, 0)];
        for (i, x) in c.iter_mut().enumerate() {
            x.replica = 10 + i;
        }
        let req = RouteRequest {
            prompt_tokens: 100,
            session: Some(42),
        };
        let first = r.choose(req, &c, &mut rng).unwrap();
        assert_eq!(first, 1);
        c[1].load.outstanding = 2;
        c[1].load.queued_prompt_tokens = 3_000;
        assert_eq!(r.choose(req, &c, &mut rng), Some(1));
    }

    #[test]
    fn the_router_queues_behind_its_own_decisions() {
        let mut r = Router::new(RouterConfig {
            decision_s: 0.01,
            fixed_delay_s: 0.1,
            ..RouterConfig::default()
        })
        .unwrap();
        let got: Vec<f64> = [0.0, 0.0, 0.5].iter().map(|&t| r.schedule(t)).collect();
        let want = [0.11, 0.12, 0.61];
        assert!(got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-12));
        assert!(Router::new(RouterConfig {
            policy: RoutingPolicy::prefix_affinity(0.5),
            ..RouterConfig::default()
        })
        .is_err());
    }
}
