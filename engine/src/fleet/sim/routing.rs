//! Routing decisions: the candidates and their live load, the overflow policy when every
//! candidate is saturated, the gateway's per-replica bound, the router's choice and the
//! dispatch to the chosen replica; and the trace of decisions kept for a visualisation.

use super::{Event, FleetSim, Phase, ReplicaState};
use crate::fleet::clocks::{Outcome, RejectReason, SpillTarget};
use crate::fleet::overflow::OverflowAction;
use crate::fleet::router::{Candidate, RouteRequest, RoutingPolicy};
use crate::fleet::PoolRole;
use crate::replica::ReplicaLoad;
use serde::{Deserialize, Serialize};

/// One routing decision as the router saw it, kept by [`FleetSim::trace_routes`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RouteTrace {
    /// The request's arrival order (its [`RequestRecord::seq`]).
    ///
    /// [`RequestRecord::seq`]: crate::fleet::RequestRecord::seq
    pub seq: u64,
    pub t: f64,
    /// The ready replicas of serving pools and their live load, as the router read them.
    pub candidates: Vec<RouteCandidate>,
    /// The replica it went to (`None`: refused, or sent to a hosted API).
    pub chosen: Option<usize>,
}

/// One replica the router could have chosen, in a [`RouteTrace`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RouteCandidate {
    pub replica: usize,
    pub load: ReplicaLoad,
    pub cached_prefix_tokens: u32,
}

/// What `on_route` does with a request.
enum RouteDecision {
    /// Send it to this replica.
    Replica(usize),
    /// No replica can take it: 429.
    NoReplica,
    /// It has been answered already (shed, spilled to a hosted API, or the gateway is full).
    Answered,
}

/// What the overflow policy made of a request.
enum OverflowStep {
    /// Route it as usual.
    Route,
    /// Send it to this replica of the spill pool.
    SpillTo(usize),
    /// It has been answered (shed, or spilled to a hosted API).
    Answered,
}

impl FleetSim {
    pub(super) fn on_route(&mut self, slot: usize) {
        let t = self.now;
        if self.live[slot].timed_out {
            self.end_stream(slot, t);
            return;
        }
        let needs_prefix = self.router.config().policy.needs_prefix();
        self.sync_for_route(t);
        let mut cands = std::mem::take(&mut self.cand_buf);
        self.route_candidates(slot, needs_prefix, &mut cands);
        let decision = self.decide_route(slot, t, &cands);
        if self.route_trace.len() < self.route_trace_cap {
            self.trace_route(slot, t, &cands, &decision);
        }
        self.cand_buf = cands;
        match decision {
            RouteDecision::Answered => {}
            RouteDecision::Replica(r) if self.replicas[r].role == PoolRole::Prefill => {
                // A disaggregated fleet's router picks the pair: the prefill replica, and the
                // decode replica its KV cache will move to.
                match self.pick_decode() {
                    Some(d) => {
                        let tokens = self.live[slot].prompt_tokens as u64;
                        let ds = &mut self.replicas[d];
                        ds.dispatching += 1;
                        ds.dispatching_tokens += tokens;
                        let l = &mut self.live[slot];
                        l.phase = Phase::Prefill;
                        l.decode_replica = Some(d);
                        l.decode_pending = true;
                        self.dispatch(slot, r, t, needs_prefix);
                    }
                    None => self.refuse_no_replica(slot, t),
                }
            }
            RouteDecision::NoReplica => self.refuse_no_replica(slot, t),
            RouteDecision::Replica(r) => self.dispatch(slot, r, t, needs_prefix),
        }
    }

    /// No replica can take the request in `slot`: 429.
    fn refuse_no_replica(&mut self, slot: usize, t: f64) {
        self.stats.rejected_no_replica += 1;
        self.unqueue(slot);
        self.live[slot].outcome = Some(Outcome::Rejected {
            reason: RejectReason::NoReplica,
            retry_after_s: 1,
        });
        self.schedule(t, Event::StreamEnd { slot });
    }

    /// The ready decode replica with the fewest requests, those on their way included.
    fn pick_decode(&self) -> Option<usize> {
        self.replicas
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                r.role == PoolRole::Decode
                    && r.state == ReplicaState::Ready
                    && self.cfg.pools[r.pool].serving
            })
            .min_by_key(|(i, r)| (r.replica.load().outstanding + r.dispatching, *i))
            .map(|(i, _)| i)
    }

    /// Keeps one routing decision (only with [`FleetSim::trace_routes`]).
    fn trace_route(&mut self, slot: usize, t: f64, cands: &[Candidate], decision: &RouteDecision) {
        let chosen = match decision {
            RouteDecision::Replica(r) => Some(*r),
            _ => None,
        };
        self.route_trace.push(RouteTrace {
            seq: self.live[slot].seq,
            t,
            candidates: cands
                .iter()
                .map(|c| RouteCandidate {
                    replica: c.replica,
                    load: c.load,
                    cached_prefix_tokens: c.cached_prefix_tokens,
                })
                .collect(),
            chosen,
        });
    }

    /// Brings the replicas up to `t` before a routing decision. A policy that reads only the
    /// number of outstanding requests (or nothing) need not wait for replicas that would only
    /// report step ends: their count stays as it is.
    fn sync_for_route(&mut self, t: f64) {
        let outstanding_only = matches!(
            self.router.config().policy,
            RoutingPolicy::RoundRobin
                | RoutingPolicy::Random
                | RoutingPolicy::LeastOutstanding
                | RoutingPolicy::PowerOfTwo
        ) && !self.cfg.overflow.active();
        if outstanding_only {
            for r in 0..self.replicas.len() {
                if self.replicas[r].state != ReplicaState::Starting
                    && !self.replicas[r].replica.quiet_before(t)
                {
                    self.sync(r, t);
                }
            }
        } else {
            self.sync_all(t);
        }
    }

    /// The ready replicas of serving pools, with their load as the router sees it (requests
    /// on their way to a replica count as waiting there) and, when the policy reads it, how
    /// much of the request's prompt each has cached.
    fn route_candidates(&self, slot: usize, needs_prefix: bool, cands: &mut Vec<Candidate>) {
        cands.clear();
        let prompt = self.live[slot].prompt.as_ref();
        let adapter = matches!(
            self.router.config().policy,
            RoutingPolicy::AdapterAffinity { .. }
        )
        .then_some(self.live[slot].tenant);
        for (i, r) in self.replicas.iter().enumerate() {
            if r.state == ReplicaState::Ready
                && self.cfg.pools[r.pool].serving
                && r.role != PoolRole::Decode
            {
                let cached = match (needs_prefix, prompt) {
                    (true, Some(p)) => r.replica.cached_prefix_tokens(p),
                    _ => 0,
                };
                let mut load = r.replica.load();
                load.waiting += r.dispatching;
                load.outstanding += r.dispatching;
                load.queued_prompt_tokens += r.dispatching_tokens;
                let (adapter_resident, adapter_room) = match adapter {
                    Some(a) => {
                        let (used, slots) = r.replica.adapter_slots();
                        (r.replica.adapter_resident(a).unwrap_or(false), used < slots)
                    }
                    None => (false, false),
                };
                cands.push(Candidate {
                    replica: i,
                    load,
                    cached_prefix_tokens: cached,
                    adapter_resident,
                    adapter_room,
                });
            }
        }
    }

    /// Where the request in `slot` goes: the overflow action when every candidate is
    /// saturated, a 429 when every candidate is at the gateway's bound, else the router's
    /// choice.
    fn decide_route(&mut self, slot: usize, t: f64, cands: &[Candidate]) -> RouteDecision {
        let target = match self.overflow(slot, t, cands) {
            OverflowStep::Answered => return RouteDecision::Answered,
            OverflowStep::SpillTo(r) => Some(r),
            OverflowStep::Route => None,
        };
        let bound = self.cfg.gateway.max_outstanding_per_replica;
        if target.is_none()
            && !cands.is_empty()
            && cands.iter().all(|c| c.load.outstanding >= bound)
        {
            // Every replica holds as much as the gateway lets it: 429 rather than queue.
            self.stats.rejected_gateway += 1;
            self.unqueue(slot);
            self.live[slot].outcome = Some(Outcome::Rejected {
                reason: RejectReason::GatewayFull,
                retry_after_s: 1,
            });
            self.end_stream(slot, t);
            return RouteDecision::Answered;
        }
        let target = target.or_else(|| {
            let route = RouteRequest {
                prompt_tokens: self.live[slot].prompt_tokens,
                session: self.live[slot].session,
            };
            self.router
                .choose(route, cands, &mut self.rng)
                .map(|i| cands[i].replica)
        });
        match target {
            Some(r) => RouteDecision::Replica(r),
            None => RouteDecision::NoReplica,
        }
    }

    /// The overflow policy, when every candidate is saturated: queue (route as usual), shed
    /// with a 429, spill to another pool's least loaded ready replica (route as usual when it
    /// has none) or hand the request to a hosted API.
    fn overflow(&mut self, slot: usize, t: f64, cands: &[Candidate]) -> OverflowStep {
        let ov = self.cfg.overflow;
        let saturated = ov.active()
            && cands
                .iter()
                .all(|c| ov.replica_saturated(c.load.queued_prompt_tokens, c.load.waiting));
        if !saturated {
            return OverflowStep::Route;
        }
        match ov.action {
            OverflowAction::Queue => OverflowStep::Route,
            OverflowAction::Shed { retry_after_s } => {
                self.stats.rejected_shed += 1;
                self.unqueue(slot);
                self.live[slot].outcome = Some(Outcome::Rejected {
                    reason: RejectReason::Shed,
                    retry_after_s,
                });
                self.schedule(t, Event::StreamEnd { slot });
                OverflowStep::Answered
            }
            OverflowAction::SpillToPool { pool } => {
                let target = self
                    .replicas
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.pool == pool && r.state == ReplicaState::Ready)
                    .min_by_key(|(_, r)| {
                        let l = r.replica.load();
                        (l.queued_prompt_tokens, l.outstanding)
                    })
                    .map(|(i, _)| i);
                match target {
                    Some(r) => {
                        self.stats.spilled_pool += 1;
                        self.live[slot].outcome = Some(Outcome::Spilled(SpillTarget::Pool(pool)));
                        OverflowStep::SpillTo(r)
                    }
                    None => OverflowStep::Route,
                }
            }
            OverflowAction::Hosted(api) => {
                self.stats.spilled_hosted += 1;
                self.unqueue(slot);
                let l = &mut self.live[slot];
                l.outcome = Some(Outcome::Spilled(SpillTarget::Hosted));
                l.hosted = true;
                l.engine_in = t;
                l.prompt = None;
                let (ttft, rest) = api.timing(l.prompt_tokens, l.output_len);
                l.admitted = Some(t);
                l.got_first = true;
                l.first_token = t + ttft;
                l.finish = l.first_token + rest;
                l.output_tokens = l.output_len;
                self.stats.hosted_dollars += api.price(l.prompt_tokens, l.output_len);
                let end = l.finish + self.cfg.relay.relay_s;
                self.schedule(end, Event::StreamEnd { slot });
                OverflowStep::Answered
            }
        }
    }

    /// Sends the request in `slot` to replica `r`: it counts as on its way there, and reaches
    /// the engine once the gateway has a connection to it.
    fn dispatch(&mut self, slot: usize, r: usize, t: f64, needs_prefix: bool) {
        let rs = &mut self.replicas[r];
        rs.routed += 1;
        rs.dispatching += 1;
        rs.dispatching_tokens += self.live[slot].prompt_tokens as u64;
        let connect = rs.conn.acquire(t, &self.cfg.gateway.pool);
        if self.cfg.record_requests || needs_prefix {
            // The prefix cache is read as of now.
            self.sync(r, t);
            let l = &mut self.live[slot];
            if let Some(p) = &l.prompt {
                l.cached_prefix_tokens = self.replicas[r].replica.cached_prefix_tokens(p);
            }
        }
        let l = &mut self.live[slot];
        l.replica = Some(r);
        l.hops.connect = connect;
        self.schedule(t + connect, Event::EngineSubmit { slot });
    }
}
