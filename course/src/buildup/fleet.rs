//! Build-up 2: one request followed hop by hop through the fleet.
//!
//! [`FleetStory::sim`] sets up the shipped scenario `fleet-follow-one-request` with every
//! request recorded and the routing decisions traced ([`FleetSim::trace_routes`]); a driver
//! runs it (the app a slice per animation frame) and [`FleetStory::from_sim`] reads the run.
//! The followed request is the first one served by a replica among those sent once the
//! second wave of traffic starts. Its moments (client sends, gateway, quota, router, engine,
//! first token, first byte written, first byte at the client, last byte) become the frames,
//! each with the five clocks as they stand then; the chapters add another tenant's 429 with
//! Retry-After (inside the first step, never its first or last moment: a step opens on its
//! last, and the build-up opens on the followed request), the router's view of the replicas,
//! the autoscaler's first scale-up with its lead time, and the first request sent down the
//! overflow path.

use super::{Chapter, Figures, Variant};
use serde::{Deserialize, Serialize};
use trainer_engine::error::ConfigError;
use trainer_engine::fleet::{
    FleetConfig, FleetSim, Outcome, RejectReason, RequestRecord, RouteTrace, ScaleEvent,
    ScaleSignal,
};
use trainer_engine::format;
use trainer_engine::scenario::FleetScenario;

/// The shipped scenario the build-up runs.
pub const SCENARIO: &str = "fleet-follow-one-request";

/// Most decode replicas the build-up's fleet may be split with (`split=` in its URL).
pub const MAX_SPLIT: u32 = 8;

/// Routing decisions kept: the whole run of the scenario.
const ROUTE_TRACE: usize = 20_000;

/// A box of the request-path diagram (the ids `RequestPath` draws).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hop {
    Client,
    Gateway,
    Quota,
    Router,
    Engine,
    Relay,
    Autoscaler,
    Overflow,
}

impl Hop {
    /// The id the request-path diagram gives the hop's box.
    pub fn id(self) -> &'static str {
        match self {
            Hop::Client => "client",
            Hop::Gateway => "gateway",
            Hop::Quota => "quota",
            Hop::Router => "router",
            Hop::Engine => "engine",
            Hop::Relay => "relay",
            Hop::Autoscaler => "autoscaler",
            Hop::Overflow => "overflow",
        }
    }
}

/// What happens at a moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MomentKind {
    Sent,
    AtGateway,
    QuotaChecked,
    /// Another tenant's request refused with 429.
    Refused,
    Routed,
    AtEngine,
    /// Split pools: the prefill replica has computed the prompt.
    PrefillDone,
    /// Split pools: the KV cache starts across the link.
    TransferStart,
    /// Split pools: the KV cache is on the decode replica.
    KvArrived,
    FirstToken,
    FirstByteWritten,
    FirstByteAtClient,
    LastByte,
    ScaleDecision,
    ReplicaReady,
    /// A request sent down the overflow path.
    Spilled,
    /// Nothing of the kind happened in the run (the chapter's absent variant).
    Nothing,
}

/// The clocks the build-up follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    EngineTtft,
    ServerTtft,
    UserTtft,
    GatewayItl,
    ClientItl,
}

impl Clock {
    pub const ALL: [Clock; 5] = [
        Clock::EngineTtft,
        Clock::ServerTtft,
        Clock::UserTtft,
        Clock::GatewayItl,
        Clock::ClientItl,
    ];

    /// A stable id for `data-testid`.
    pub fn id(self) -> &'static str {
        match self {
            Clock::EngineTtft => "engine_ttft",
            Clock::ServerTtft => "server_ttft",
            Clock::UserTtft => "user_ttft",
            Clock::GatewayItl => "gateway_itl",
            Clock::ClientItl => "client_itl",
        }
    }

    /// Where the clock is read.
    pub fn hop(self) -> Hop {
        match self {
            Clock::EngineTtft => Hop::Engine,
            Clock::ServerTtft => Hop::Gateway,
            Clock::UserTtft | Clock::ClientItl => Hop::Client,
            Clock::GatewayItl => Hop::Relay,
        }
    }
}

/// A clock at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ClockState {
    NotStarted,
    Running {
        elapsed: f64,
    },
    /// Stopped with this reading (for ITL, the mean gap over the reply).
    Stopped {
        value: f64,
    },
}

/// One frame: a moment of the run, the hop it happens at, and the followed request's clocks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Moment {
    pub t: f64,
    pub hop: Hop,
    pub kind: MomentKind,
    /// The followed request's clocks then, in [`Clock::ALL`] order.
    pub clocks: Vec<(Clock, ClockState)>,
}

/// The whole build-up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FleetStory {
    /// The followed request.
    pub followed: RequestRecord,
    /// The router's decision for it.
    pub route: Option<RouteTrace>,
    /// Another tenant's request refused by the quota, if any.
    pub refused: Option<RequestRecord>,
    pub scale_up: Option<ScaleEvent>,
    /// The first request sent down the overflow path, and the router's view then.
    pub spilled: Option<(RequestRecord, Option<RouteTrace>)>,
    pub moments: Vec<Moment>,
    pub chapters: Vec<Chapter>,
}

/// The five clocks of `r` at time `t`.
pub fn clocks_at(r: &RequestRecord, t: f64) -> Vec<(Clock, ClockState)> {
    let n = r.output_tokens.saturating_sub(1).max(1) as f64;
    Clock::ALL
        .iter()
        .map(|&c| {
            let (start, stop, value) = match c {
                Clock::EngineTtft => (r.engine_in, r.first_token, r.engine_ttft()),
                Clock::ServerTtft => (r.gateway_in, r.first_byte_written, r.server_ttft()),
                Clock::UserTtft => (r.sent, r.first_byte_at_client, r.user_ttft()),
                Clock::GatewayItl => (
                    r.first_byte_written,
                    r.last_byte_written,
                    (r.last_byte_written - r.first_byte_written) / n,
                ),
                Clock::ClientItl => (
                    r.first_byte_at_client,
                    r.last_byte_at_client,
                    (r.last_byte_at_client - r.first_byte_at_client) / n,
                ),
            };
            let state = if t < start {
                ClockState::NotStarted
            } else if t < stop {
                ClockState::Running { elapsed: t - start }
            } else {
                ClockState::Stopped { value }
            };
            (c, state)
        })
        .collect()
}

/// How a replica is named in the narration.
pub fn replica_name(i: usize) -> String {
    format!("replica {}", i + 1)
}

impl FleetStory {
    /// The named engine the build-up's fleet runs.
    pub fn engine() -> Option<trainer_engine::engine::Engine> {
        FleetStory::config()
            .ok()
            .and_then(|c| trainer_engine::engine::Engine::of_fleet(&c))
    }

    /// The build-up's fleet.
    pub fn config() -> Result<FleetConfig, ConfigError> {
        let mut cfg = FleetScenario::builtin(SCENARIO)?
            .arms
            .into_iter()
            .next()
            .map(|(_, c)| c)
            .ok_or_else(|| ConfigError::new("scenario", "the build-up's fleet has no arm"))?;
        cfg.record_requests = true;
        Ok(cfg)
    }

    /// The fleet, ready to run, with requests recorded and routing traced.
    pub fn sim() -> Result<FleetSim, ConfigError> {
        Self::sim_of(Self::config()?)
    }

    /// The build-up's fleet split: its pool prefills, and `decode` replicas like them decode
    /// (0: the fleet as shipped).
    pub fn config_split(decode: u32) -> Result<FleetConfig, ConfigError> {
        if decode > MAX_SPLIT {
            return Err(ConfigError::new(
                "split",
                format!("must be 0 to {MAX_SPLIT} decode replicas, got {decode}"),
            ));
        }
        let mut cfg = Self::config()?;
        cfg.split_first_pool(decode)?;
        Ok(cfg)
    }

    /// Another fleet set up the same way (tests use it for runs without a 429, a scale-up
    /// or an overflow).
    pub fn sim_of(mut cfg: FleetConfig) -> Result<FleetSim, ConfigError> {
        cfg.record_requests = true;
        let mut sim = FleetSim::new(cfg)?;
        sim.trace_routes(ROUTE_TRACE);
        Ok(sim)
    }

    /// Runs the build-up's fleet to the end and reads it (natively; the app runs it in slices).
    pub fn run() -> Result<FleetStory, ConfigError> {
        let mut sim = Self::sim()?;
        sim.run();
        Self::from_sim(&sim)
    }

    /// Reads a finished run of [`FleetStory::sim`].
    pub fn from_sim(sim: &FleetSim) -> Result<FleetStory, ConfigError> {
        let cfg = sim.config();
        let mut records: Vec<&RequestRecord> = sim.records().iter().collect();
        records.sort_by_key(|r| r.seq);
        let wave = cfg
            .traffic
            .iter()
            .map(|s| s.start_s)
            .filter(|&s| s > 0.0)
            .fold(f64::INFINITY, f64::min);
        let wave = if wave.is_finite() { wave } else { 0.0 };
        let trace_of = |seq: u64| sim.route_trace().iter().find(|d| d.seq == seq).cloned();
        // The first served after the wave starts whose router saw the replicas' queues differ
        // (so its choice shows), else the first served after the wave, else the first served.
        let uneven = |seq: u64| {
            trace_of(seq).is_some_and(|d| {
                let q = d.candidates.iter().map(|c| c.load.queued_prompt_tokens);
                q.clone().max() != q.min()
            })
        };
        let served = |r: &&&RequestRecord| r.outcome == Outcome::Completed && r.replica.is_some();
        let followed = records
            .iter()
            .filter(served)
            .find(|r| r.sent >= wave && uneven(r.seq))
            .or_else(|| records.iter().filter(served).find(|r| r.sent >= wave))
            .or_else(|| records.iter().find(served))
            .map(|r| (*r).clone())
            .ok_or_else(|| ConfigError::new("scenario", "no request was served"))?;
        let route = trace_of(followed.seq);
        let refused = records
            .iter()
            .find(|r| {
                matches!(
                    r.outcome,
                    Outcome::Rejected {
                        reason: RejectReason::Quota,
                        ..
                    }
                )
            })
            .map(|r| (*r).clone());
        let scale_up = sim
            .report()
            .scale_events
            .into_iter()
            .find(|e| e.to > e.from);
        let spilled = records
            .iter()
            .find(|r| matches!(r.outcome, Outcome::Spilled(_)))
            .map(|r| ((*r).clone(), trace_of(r.seq)));
        let mut story = FleetStory {
            followed,
            route,
            refused,
            scale_up,
            spilled,
            moments: Vec::new(),
            chapters: Vec::new(),
        };
        story.cut(cfg, sim);
        Ok(story)
    }

    fn moment(&mut self, t: f64, clock_t: f64, hop: Hop, kind: MomentKind) -> usize {
        self.moments.push(Moment {
            t,
            hop,
            kind,
            clocks: clocks_at(&self.followed, clock_t),
        });
        self.moments.len() - 1
    }

    fn cut(&mut self, cfg: &FleetConfig, sim: &FleetSim) {
        let r = self.followed.clone();
        let h = r.hops;
        let report = sim.report();
        let mut chapters = Vec::new();

        // 1. Gateway and quota, and another tenant's 429. The page opens a step on its last
        // moment (the one its narration describes), so the step begins and ends on the
        // followed request's own moments: the other tenant's 429 is shown between its arrival
        // at the gateway and its own quota answer, while it waits at the quota store.
        let a = self.moment(r.sent, r.sent, Hop::Client, MomentKind::Sent);
        self.moment(
            r.gateway_in,
            r.gateway_in,
            Hop::Gateway,
            MomentKind::AtGateway,
        );
        let at_quota = r.gateway_in + h.auth + h.tokenize;
        let quota_t = at_quota + h.quota;
        let mut f = Figures::new();
        f.secs("sent_at", r.sent)
            .secs("to_gateway", r.gateway_in - r.sent)
            .secs("auth", h.auth + h.tokenize)
            .secs("quota_check", h.quota)
            .count("charged", (r.prompt_tokens + cfg.clients.max_tokens) as f64)
            .count("tenant", r.tenant as f64);
        let variant = match self.refused.clone() {
            Some(x) => {
                self.moment(x.gateway_in, at_quota, Hop::Quota, MomentKind::Refused);
                let retry = match x.outcome {
                    Outcome::Rejected { retry_after_s, .. } => retry_after_s,
                    _ => 0,
                };
                f.count("refused_tenant", x.tenant as f64)
                    .count("refused_budget", cfg.quota.budget(x.tenant) as f64)
                    .secs("refused_at", x.gateway_in)
                    .count("retry_after", retry as f64)
                    .count("refused_total", report.outcomes.rejected_quota as f64);
                Variant::Happened
            }
            None => Variant::Absent,
        };
        let b = self.moment(quota_t, quota_t, Hop::Quota, MomentKind::QuotaChecked);
        chapters.push(Chapter {
            id: "gateway".into(),
            first: a,
            last: b,
            figures: f.done(),
            variant,
        });

        // 2. The router's choice from live load.
        let routed = quota_t + h.router;
        let a = self.moment(routed, routed, Hop::Router, MomentKind::Routed);
        let mut f = Figures::new();
        f.secs("router_time", h.router).add(
            "policy",
            0.0,
            cfg.router.policy.name().replace('_', " "),
        );
        let chosen = r.replica.unwrap_or(0);
        f.name("chosen", chosen as f64, replica_name(chosen));
        if let Some(rt) = &self.route {
            let load = |i: usize| {
                rt.candidates
                    .iter()
                    .find(|c| c.replica == i)
                    .map_or(0, |c| c.load.queued_prompt_tokens)
            };
            let busiest = rt
                .candidates
                .iter()
                .map(|c| c.load.queued_prompt_tokens)
                .max()
                .unwrap_or(0);
            f.count("candidates", rt.candidates.len() as f64)
                .count("chosen_queued", load(chosen) as f64)
                .count("busiest_queued", busiest as f64);
        } else {
            f.count("candidates", 0.0)
                .count("chosen_queued", 0.0)
                .count("busiest_queued", 0.0);
        }
        chapters.push(Chapter {
            id: "router".into(),
            first: a,
            last: a,
            figures: f.done(),
            variant: Variant::Happened,
        });

        // 3. The engine: one replica, or a prefill replica, the KV cache's move and a decode
        // replica.
        let a = self.moment(r.engine_in, r.engine_in, Hop::Engine, MomentKind::AtEngine);
        let mut f = Figures::new();
        f.secs("connect", h.connect)
            .secs("engine_in", r.engine_in)
            .count("prompt_tokens", r.prompt_tokens as f64)
            .secs("engine_ttft", r.engine_ttft())
            .count("output_tokens", r.output_tokens as f64);
        let variant = match r.split {
            Some(p) => {
                for (t, kind) in [
                    (p.prefill_done, MomentKind::PrefillDone),
                    (p.transfer_start, MomentKind::TransferStart),
                    (p.kv_arrived, MomentKind::KvArrived),
                ] {
                    self.moment(t, t, Hop::Engine, kind);
                }
                f.name(
                    "prefill_replica",
                    p.prefill_replica as f64,
                    replica_name(p.prefill_replica),
                )
                .name(
                    "decode_replica",
                    p.decode_replica as f64,
                    replica_name(p.decode_replica),
                )
                .secs("prefill_queue", p.prefill_admitted - r.engine_in)
                .secs("prefill_time", p.prefill_done - p.prefill_admitted)
                .add("kv_bytes", p.kv_bytes, format::gb(p.kv_bytes, 3))
                .add("link", 0.0, link_name(&cfg.disagg.link))
                .secs("link_wait", p.transfer_start - p.prefill_done)
                .secs("transfer", p.kv_arrived - p.transfer_start)
                .secs("decode_queue", p.decode_admitted - p.kv_arrived)
                .secs("first_decode", r.first_token - p.decode_admitted);
                Variant::Split
            }
            None => Variant::Happened,
        };
        let b = self.moment(
            r.first_token,
            r.first_token,
            Hop::Engine,
            MomentKind::FirstToken,
        );
        chapters.push(Chapter {
            id: "engine".into(),
            first: a,
            last: b,
            figures: f.done(),
            variant,
        });

        // 4. Streaming back: the relay, and the clocks that stop.
        let a = self.moment(
            r.first_byte_written,
            r.first_byte_written,
            Hop::Relay,
            MomentKind::FirstByteWritten,
        );
        self.moment(
            r.first_byte_at_client,
            r.first_byte_at_client,
            Hop::Client,
            MomentKind::FirstByteAtClient,
        );
        let b = self.moment(
            r.last_byte_at_client,
            r.last_byte_at_client,
            Hop::Client,
            MomentKind::LastByte,
        );
        let n = r.output_tokens.saturating_sub(1).max(1) as f64;
        let mut f = Figures::new();
        f.secs("relay", h.relay)
            .secs("engine_ttft", r.engine_ttft())
            .secs("server_ttft", r.server_ttft())
            .secs("user_ttft", r.user_ttft())
            .secs("gap", r.server_ttft() - r.engine_ttft())
            .secs(
                "gateway_itl",
                (r.last_byte_written - r.first_byte_written) / n,
            )
            .secs(
                "client_itl",
                (r.last_byte_at_client - r.first_byte_at_client) / n,
            )
            .secs("tpot_target", cfg.slo.tpot_s);
        chapters.push(Chapter {
            id: "streaming".into(),
            first: a,
            last: b,
            figures: f.done(),
            variant: Variant::Happened,
        });

        // 5. The autoscaler's first scale-up and its lead time.
        let a_cfg = cfg.autoscaler;
        let end = r.last_byte_at_client;
        let mut f = Figures::new();
        let signal = match a_cfg.signal {
            ScaleSignal::GpuUtilisation => "GPU utilisation",
            ScaleSignal::QueuedTokens => "queued prompt tokens per replica",
            ScaleSignal::KvUsage => "KV usage",
            ScaleSignal::Ttft => "TTFT",
        };
        f.add("signal", 0.0, signal.to_string())
            .count("target", a_cfg.target)
            .secs("lead_time", a_cfg.scale_up_delay_s);
        let (first, last, variant) = match self.scale_up {
            Some(e) => {
                let a = self.moment(e.t, end, Hop::Autoscaler, MomentKind::ScaleDecision);
                let ready = e.t + a_cfg.scale_up_delay_s;
                let b = self.moment(ready, end, Hop::Autoscaler, MomentKind::ReplicaReady);
                f.secs("scale_at", e.t)
                    .count("scale_signal", e.signal)
                    .count("scale_from", e.from as f64)
                    .count("scale_to", e.to as f64)
                    .secs("ready_at", ready);
                (a, b, Variant::Happened)
            }
            None => {
                let a = self.moment(end, end, Hop::Autoscaler, MomentKind::Nothing);
                (a, a, Variant::Absent)
            }
        };
        chapters.push(Chapter {
            id: "autoscaler".into(),
            first,
            last,
            figures: f.done(),
            variant,
        });

        // 6. Overflow.
        let ov = cfg.overflow;
        let mut f = Figures::new();
        f.count("trigger", ov.queued_tokens_trigger as f64).count(
            "spilled_total",
            (report.outcomes.spilled_to_hosted + report.outcomes.spilled_to_pool) as f64,
        );
        let (first, variant) = match self.spilled.clone() {
            Some((x, rt)) => {
                let t = x.gateway_in + x.hops.auth + x.hops.tokenize + x.hops.quota + x.hops.router;
                let a = self.moment(t, end, Hop::Overflow, MomentKind::Spilled);
                let least = rt
                    .as_ref()
                    .and_then(|d| {
                        d.candidates
                            .iter()
                            .map(|c| c.load.queued_prompt_tokens)
                            .min()
                    })
                    .unwrap_or(0);
                f.secs("spill_at", t)
                    .count("least_queued", least as f64)
                    .secs("spill_ttft", x.server_ttft());
                (a, Variant::Happened)
            }
            None => (
                self.moment(end, end, Hop::Overflow, MomentKind::Nothing),
                Variant::Absent,
            ),
        };
        chapters.push(Chapter {
            id: "overflow".into(),
            first,
            last: first,
            figures: f.done(),
            variant,
        });
        self.chapters = chapters;
    }
}

/// The catalog's name of a link (its id when the catalog has no such link).
fn link_name(id: &str) -> String {
    trainer_engine::catalog::links()
        .into_iter()
        .find(|l| l.id == id)
        .map_or_else(|| id.to_string(), |l| l.name)
}

/// Formats a clock reading for the diagram: "412 ms" (stopped), "…120 ms" (running), "–".
pub fn clock_text(s: ClockState) -> String {
    match s {
        ClockState::NotStarted => "–".to_string(),
        ClockState::Running { elapsed } => format!("{} and running", format::duration(elapsed, 3)),
        ClockState::Stopped { value } => format::duration(value, 3),
    }
}
