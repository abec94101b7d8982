//! The fleet's event loop.
//!
//! Each request passes through a fixed chain of milestones, each one event:
//! `Send` (the client sends; the next request of its source is drawn) -> `GatewayIn` (the
//! stream opens; authentication and tokenising are pure delays) -> `QuotaSend` (the quota
//! store's single server answers, and an allowed request joins the router's queue) ->
//! `RouterDecide` (a replica is chosen from live load, or overflow acts; a connection is
//! taken) -> `EngineSubmit` (the engine receives) -> replica events (first token, finish,
//! every step) -> `StreamEnd` (the last byte is written and the stream closes).
//!
//! The quota store and the router are first-come-first-served single servers, so the time a
//! request leaves each is known as soon as it joins (Lindley's recursion) and needs no event
//! of its own.
//!
//! Replicas are advanced lazily: only when the fleet needs their state (a routing decision
//! reads every replica's load, a submission, a sample, the autoscaler), and to the end when
//! nothing else is left. Between those moments a replica runs its steps on its own, so runs
//! of decode-only steps are fast-forwarded in one call (see [`Replica::advance_to`]). Its
//! events carry their own times, and everything the fleet does with them is keyed on those
//! times, not on when they were read: a stream whose last byte was written before the
//! moment the replica was read is closed at its own time at once; a later one is scheduled.
//! So the results are the same as if every step had been an event.

use super::autoscaler::{ScaleEvent, ScaleSignal, SignalPoint};
use super::clocks::{to_ns, Histogram, Hops, Outcome, RejectReason, RequestRecord, SpillTarget};
use super::gateway::ConnectionPool;
use super::overflow::OverflowAction;
use super::quota::{QuotaDecision, QuotaStore};
use super::relay::{FirstBursts, StepBursts};
use super::router::{kv_usage, Candidate, RouteRequest, Router, RoutingPolicy};
use super::FleetConfig;
use crate::due::Due;
use crate::error::ConfigError;
use crate::replica::{EngineRequest, Replica, ReplicaConfig, ReplicaEvent, ReplicaLoad};
use crate::workload::{GeneratedRequest, Prompt, RequestStream};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;
use std::collections::{BinaryHeap, VecDeque};

/// A fleet simulation in progress.
pub struct FleetSim {
    pub(super) cfg: FleetConfig,
    pub(super) now: f64,
    pub(super) horizon: f64,
    heap: BinaryHeap<Due<Event>>,
    next_seq: u64,
    rng: Pcg64,
    sources: Vec<Source>,
    live: Vec<Live>,
    free: Vec<usize>,
    pub(super) replicas: Vec<ReplicaSlot>,
    pub(super) quota: QuotaStore,
    pub(super) router: Router,
    pub(super) stats: Stats,
    pub(super) records: Vec<RequestRecord>,
    pub(super) scale_events: Vec<ScaleEvent>,
    pub(super) signal_series: Vec<SignalPoint>,
    pub(super) series: Vec<SeriesPoint>,
    sample_interval: f64,
    last_scale_change: f64,
    interval_ttft: Vec<f64>,
    events_buf: Vec<ReplicaEvent>,
    cand_buf: Vec<Candidate>,
    /// Whether every request streams (then every decode token is a streamed token).
    pub(super) all_streaming: bool,
    /// Whether deltas reach the client one by one (then client ITL is gateway ITL).
    pub(super) unbuffered: bool,
    /// (tokens per burst, flush interval) of the relay, for hosted replies.
    release_rule: (u32, f64),
    /// Client deadlines (gateway arrival + timeout) in the order they fall due, as (time,
    /// slot, generation of the slot): one queue instead of one heap event per request,
    /// since every deadline is the same time after an arrival the heap hands out in order.
    deadlines: VecDeque<(f64, u32, u32)>,
    /// Each slot's generation, raised whenever the slot is freed, so a stale deadline is
    /// recognised.
    slot_gen: Vec<u32>,
    /// Requests the gateway holds that no engine has received yet (see
    /// [`super::GatewayConfig::max_queued`]).
    gateway_queued: u32,
    verdict: Option<FleetVerdict>,
    /// Routing decisions kept for a visualisation (see [`FleetSim::trace_routes`]).
    route_trace: Vec<RouteTrace>,
    /// How many `route_trace` keeps: 0 (the default) keeps none and costs one comparison
    /// per decision.
    route_trace_cap: usize,
}

/// One routing decision as the router saw it, kept by [`FleetSim::trace_routes`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RouteTrace {
    /// The request's arrival order (its [`RequestRecord::seq`]).
    pub seq: u64,
    pub t: f64,
    /// The ready replicas of serving pools and their live load, as the router read them.
    pub candidates: Vec<RouteCandidate>,
    /// The replica it went to (`None`: refused, or sent to a hosted API).
    pub chosen: Option<usize>,
}

/// One replica the router could have chosen, in a [`RouteTrace`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RouteCandidate {
    pub replica: usize,
    pub load: ReplicaLoad,
    pub cached_prefix_tokens: u32,
}

/// How a fleet run ended (or how it stands, while it runs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum FleetVerdict {
    /// Still running: this is the report of the run so far.
    Running,
    /// All traffic was sent and every stream closed, and some requests were served.
    Completed,
    /// Every stream closed, but no request was served: each was refused or timed out.
    NothingServed,
    /// The run hit a work cap at simulated time `at` and stopped there: the load is more
    /// than the simulation can follow in reasonable time and memory.
    Overloaded { reason: FleetOverload, at: f64 },
}

/// Which cap stopped an overloaded fleet run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FleetOverload {
    /// More fleet events than `limits.max_events`.
    EventLimit,
    /// More engine steps than `limits.max_engine_steps`.
    StepLimit,
    /// More requests in the fleet at once than `limits.max_in_flight`.
    InFlightLimit,
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

/// What a client deadline found.
enum DeadlineCheck {
    /// The engine holding the request was read up to the deadline: look again.
    Read,
    /// The request has its first token, or has ended: the deadline lapses.
    Met,
    /// No first token by the deadline: the client gives up.
    Missed,
}

/// What happens at a moment of simulated time. A closed set: every kind is handled in one
/// `match`, which keeps the order of effects visible.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    /// The next request of a traffic source leaves its client.
    Send { source: usize },
    /// A request reaches the gateway.
    GatewayIn { slot: usize },
    /// The gateway asks the quota store (after authentication and tokenising).
    QuotaSend { slot: usize },
    /// The router serves the request.
    RouterDecide { slot: usize },
    /// The engine receives the request.
    EngineSubmit { slot: usize },
    /// The last byte of a reply (or a 429) is written and the stream closes.
    StreamEnd { slot: usize },
    /// A replica asked for by the autoscaler has loaded its weights.
    ReplicaReady { replica: usize },
    /// The autoscaler evaluates its signal.
    AutoscaleTick,
    /// A point of the open-streams series.
    Sample,
}

/// The state of a replica in the fleet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplicaState {
    /// Loading weights; takes no traffic yet.
    Starting,
    Ready,
    /// Finishing its requests before it stops; takes no new traffic.
    Draining,
    Stopped,
}

/// One point of the fleet's time series.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SeriesPoint {
    pub t: f64,
    /// Streams the gateway holds.
    pub open_streams: u32,
    /// Ready replicas in serving pools.
    pub ready_replicas: u32,
    /// Replicas being paid for (starting, ready or draining), all pools.
    pub provisioned_replicas: u32,
    /// Prompt tokens waiting for prefill across the fleet.
    pub queued_prompt_tokens: u64,
    /// Requests running in an engine step, all replicas.
    pub running: u32,
    /// Requests waiting in the engines' queues, all replicas.
    pub waiting: u32,
    /// KV blocks in use and in the pools, all replicas taking traffic or draining.
    pub kv_blocks_used: u64,
    pub kv_blocks_total: u64,
    /// Counts since the start (differences between points give rates): streams served
    /// to the end, requests answered 429 (every cause), requests spilled, and output
    /// tokens the fleet's engines produced.
    pub completed: u64,
    pub rejected: u64,
    pub spilled: u64,
    pub output_tokens: u64,
}

/// What a UI shows of the fleet at one moment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FleetSnapshot {
    pub t: f64,
    pub open_streams: u32,
    pub arrived: u64,
    pub completed: u64,
    pub rejected: u64,
    pub spilled: u64,
    /// Clients that gave up before a first token.
    pub timed_out: u64,
    pub in_flight: u64,
    pub replicas: Vec<ReplicaView>,
}

/// One replica in a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ReplicaView {
    pub pool: usize,
    pub state: ReplicaState,
    pub load: ReplicaLoad,
}

struct Source {
    stream: RequestStream,
    start: f64,
    next: Option<GeneratedRequest>,
}

pub(super) struct ReplicaSlot {
    pub(super) pool: usize,
    pub(super) replica: Replica,
    pub(super) state: ReplicaState,
    pub(super) created_at: f64,
    /// When it became ready (infinite while starting).
    ready_at: f64,
    pub(super) stopped_at: Option<f64>,
    conn: ConnectionPool,
    bursts: StepBursts,
    firsts: FirstBursts,
    busy_mark: f64,
    decoding_streams: u32,
    /// Requests routed here whose connection is still being set up, and their prompt
    /// tokens: the router counts them as its own outstanding work on the replica.
    dispatching: u32,
    dispatching_tokens: u64,
    pub(super) routed: u64,
    /// Sum of the replica's outstanding requests over the points of the series (its mean
    /// load is this over the number of points).
    pub(super) sampled_outstanding: u64,
}

/// A request in the fleet, from send to stream end. Slots are reused.
#[derive(Clone, Debug, Default)]
struct Live {
    seq: u64,
    tenant: u32,
    region: u32,
    streaming: bool,
    prompt: Option<Prompt>,
    prompt_tokens: u32,
    output_len: u32,
    output_tokens: u32,
    session: Option<u64>,
    sent: f64,
    gateway_in: f64,
    engine_in: f64,
    admitted: Option<f64>,
    got_first: bool,
    first_token: f64,
    finish: f64,
    first_release: Option<f64>,
    hops: Hops,
    replica: Option<usize>,
    hosted: bool,
    /// The gateway holds the stream (from arrival at the gateway to the last byte).
    open: bool,
    outcome: Option<Outcome>,
    cached_prefix_tokens: u32,
    /// Counted in the gateway's queue (arrived, not yet received by an engine).
    queued: bool,
    /// An engine has received it.
    in_engine: bool,
    /// The client gave up; what is left of the request only frees its place.
    timed_out: bool,
}

/// Counters and distributions the report is made from.
#[derive(Clone, Debug, Default)]
pub(super) struct Stats {
    pub(super) arrived: u64,
    pub(super) completed: u64,
    pub(super) rejected_quota: u64,
    pub(super) rejected_shed: u64,
    pub(super) rejected_no_replica: u64,
    pub(super) rejected_engine: u64,
    pub(super) rejected_gateway: u64,
    pub(super) timed_out: u64,
    /// Requests whose engine work was cut short by a cancellation.
    pub(super) cancelled_in_engine: u64,
    pub(super) spilled_pool: u64,
    pub(super) spilled_hosted: u64,
    pub(super) open_streams: u32,
    pub(super) open_max: u32,
    pub(super) streams_opened: u64,
    pub(super) streams_closed: u64,
    /// Integral of open streams over [0, horizon], stream-nanoseconds (integers, so that the
    /// order in which streams close does not change the sum).
    pub(super) open_area_ns: u128,
    /// Streams that opened before the horizon: count and summed duration.
    pub(super) horizon_streams: u64,
    pub(super) horizon_stream_ns: u128,
    pub(super) engine_ttft: Histogram,
    pub(super) server_ttft: Histogram,
    pub(super) user_ttft: Histogram,
    pub(super) engine_itl: Histogram,
    pub(super) gateway_itl: Histogram,
    pub(super) client_itl: Histogram,
    /// ITL of replies from the hosted API, kept apart and merged in by the report.
    pub(super) hosted_gateway_itl: Histogram,
    pub(super) hosted_client_itl: Histogram,
    pub(super) tpot: Histogram,
    pub(super) e2e: Histogram,
    pub(super) engine_queue: Histogram,
    pub(super) gap: Histogram,
    pub(super) hop_auth: Histogram,
    pub(super) hop_tokenize: Histogram,
    pub(super) hop_quota: Histogram,
    pub(super) hop_router: Histogram,
    pub(super) hop_connect: Histogram,
    pub(super) hop_relay: Histogram,
    pub(super) output_tokens: u64,
    pub(super) prompt_tokens: u64,
    pub(super) hosted_dollars: f64,
    /// Per tenant: arrived, completed.
    pub(super) tenant_arrived: Vec<u64>,
    pub(super) tenant_completed: Vec<u64>,
    pub(super) events: u64,
}

impl FleetSim {
    /// Validates the configuration and sets up the fleet at time zero.
    pub fn new(cfg: FleetConfig) -> Result<FleetSim, ConfigError> {
        cfg.validate()?;
        let mut sources = Vec::with_capacity(cfg.traffic.len());
        for (i, s) in cfg.traffic.iter().enumerate() {
            let stream = RequestStream::new(&s.workload)
                .map_err(|e| e.within(&format!("traffic[{i}].workload")))?;
            sources.push(Source {
                stream,
                start: s.start_s,
                next: None,
            });
        }
        let tenants = cfg
            .traffic
            .iter()
            .map(|s| s.workload.tenants)
            .max()
            .unwrap_or(1);
        let quota = QuotaStore::new(cfg.quota.clone(), tenants).map_err(|e| e.within("quota"))?;
        let router = Router::new(cfg.router).map_err(|e| e.within("router"))?;
        let horizon = cfg.horizon();
        let sample_interval = cfg.sample_interval_s.max(horizon / 4000.0);
        let mut sim = FleetSim {
            now: 0.0,
            horizon,
            heap: BinaryHeap::new(),
            next_seq: 0,
            rng: Pcg64::seed_from_u64(cfg.seed),
            sources,
            live: Vec::new(),
            free: Vec::new(),
            replicas: Vec::new(),
            quota,
            router,
            stats: Stats {
                tenant_arrived: vec![0; tenants as usize],
                tenant_completed: vec![0; tenants as usize],
                ..Stats::default()
            },
            records: Vec::new(),
            scale_events: Vec::new(),
            signal_series: Vec::new(),
            series: Vec::new(),
            sample_interval,
            last_scale_change: f64::NEG_INFINITY,
            interval_ttft: Vec::new(),
            events_buf: Vec::new(),
            cand_buf: Vec::new(),
            all_streaming: cfg.clients.streaming_fraction >= 1.0,
            unbuffered: cfg.relay.unbuffered(),
            release_rule: cfg.relay.release_rule(),
            deadlines: VecDeque::new(),
            slot_gen: Vec::new(),
            gateway_queued: 0,
            verdict: None,
            route_trace: Vec::new(),
            route_trace_cap: 0,
            cfg,
        };
        for p in 0..sim.cfg.pools.len() {
            for _ in 0..sim.cfg.pools[p].replicas {
                sim.add_replica(p, ReplicaState::Ready)?;
            }
        }
        for i in 0..sim.sources.len() {
            sim.pull(i);
        }
        sim.schedule(0.0, Event::Sample);
        if sim.cfg.autoscaler.enabled {
            sim.schedule(sim.cfg.autoscaler.interval_s, Event::AutoscaleTick);
        }
        Ok(sim)
    }

    /// The current simulated time.
    pub fn now(&self) -> f64 {
        self.now
    }

    pub fn config(&self) -> &FleetConfig {
        &self.cfg
    }

    /// Whether the run is over: every event processed (all traffic sent and every stream
    /// closed), or a work cap reached.
    pub fn is_done(&self) -> bool {
        // With no event due and every replica idle, no request is left (a live request
        // always waits for an event or an engine), so the deadlines left are stale.
        matches!(self.verdict, Some(FleetVerdict::Overloaded { .. }))
            || (self.heap.is_empty()
                && self
                    .replicas
                    .iter()
                    .all(|r| r.replica.next_event_time().is_none()))
    }

    /// How the run ended, or [`FleetVerdict::Running`] while it runs.
    pub fn verdict(&self) -> FleetVerdict {
        if let Some(v) = self.verdict {
            return v;
        }
        if !self.is_done() {
            return FleetVerdict::Running;
        }
        let st = &self.stats;
        if st.arrived > 0 && st.completed + st.spilled_pool + st.spilled_hosted == 0 {
            FleetVerdict::NothingServed
        } else {
            FleetVerdict::Completed
        }
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.stats.events
    }

    /// Processes the next event; returns its time, or `None` when the run is over.
    pub fn step(&mut self) -> Option<f64> {
        if self.verdict.is_some() {
            return None;
        }
        // A client deadline due before the next event comes first.
        loop {
            let heap_t = self.heap.peek().map(|s| s.t);
            let Some(d) = self
                .next_deadline()
                .filter(|&d| heap_t.is_none_or(|h| d < h))
            else {
                break;
            };
            let slot = self.deadlines[0].1 as usize;
            match self.deadline_check(slot, d) {
                DeadlineCheck::Read => {}
                DeadlineCheck::Met => {
                    self.deadlines.pop_front();
                }
                DeadlineCheck::Missed => {
                    self.deadlines.pop_front();
                    self.advance_clock(d);
                    self.time_out(slot, d);
                    self.check_limits();
                    return Some(d);
                }
            }
        }
        if self.heap.is_empty() {
            // Nothing else will read the replicas: let them finish what they hold (each
            // stops at the step cap, so this is bounded work).
            self.sync_all(f64::INFINITY);
            self.check_limits();
            if self.verdict.is_some() {
                return None;
            }
        }
        let s = self.heap.pop()?;
        self.advance_clock(s.t);
        self.stats.events += 1;
        self.handle(s.item);
        self.check_limits();
        Some(s.t)
    }

    fn advance_clock(&mut self, t: f64) {
        if t > self.now {
            self.now = t;
        }
    }

    /// Stops the run with an "overloaded" verdict when it has reached a work cap.
    fn check_limits(&mut self) {
        let lim = self.cfg.limits;
        let in_flight = (self.live.len() - self.free.len()) as u64;
        let reason = if self.stats.events >= lim.max_events {
            Some(FleetOverload::EventLimit)
        } else if in_flight > lim.max_in_flight as u64 {
            Some(FleetOverload::InFlightLimit)
        } else if (self.stats.events % 1024 == 0 || self.heap.is_empty())
            && self.engine_steps() >= lim.max_engine_steps
        {
            Some(FleetOverload::StepLimit)
        } else {
            None
        };
        if let Some(reason) = reason {
            self.verdict = Some(FleetVerdict::Overloaded {
                reason,
                at: self.now,
            });
        }
    }

    /// Engine steps run so far, all replicas.
    fn engine_steps(&self) -> u64 {
        self.replicas
            .iter()
            .map(|r| r.replica.metrics().steps)
            .sum()
    }

    /// The earliest client deadline still standing, dropping those of requests already
    /// gone. Requests that have a first token are dropped when their deadline comes.
    fn next_deadline(&mut self) -> Option<f64> {
        while let Some(&(t, slot, gen)) = self.deadlines.front() {
            if self.slot_gen[slot as usize] == gen {
                return Some(t);
            }
            self.deadlines.pop_front();
        }
        None
    }

    /// Processes every event up to and including time `t`; then the clock reads `t`.
    pub fn advance_to(&mut self, t: f64) {
        while self.verdict.is_none()
            && (self.heap.peek().is_some_and(|s| s.t <= t)
                || self.next_deadline().is_some_and(|d| d <= t))
        {
            self.step();
        }
        if self.verdict.is_some() {
            return;
        }
        if t.is_finite() && t > self.now {
            self.now = t;
            // Bring every replica to `t`, so that a snapshot shows them as they are now.
            self.sync_all(t);
        }
    }

    /// Processes at most `events` events (one slice of work for an animation frame).
    /// Returns how many were processed.
    pub fn advance_for(&mut self, events: u64) -> u64 {
        let mut n = 0;
        while n < events && self.step().is_some() {
            n += 1;
        }
        n
    }

    /// Runs to the end: all traffic sent and every stream closed.
    pub fn run(&mut self) {
        while self.step().is_some() {}
    }

    /// The replicas, all pools, in the order they were created (indices match
    /// [`RequestRecord::replica`] and [`FleetSnapshot::replicas`]). A UI can open one to
    /// show its queues and block tables; it reflects the last time the fleet read it.
    pub fn replicas(&self) -> impl Iterator<Item = &Replica> {
        self.replicas.iter().map(|r| &r.replica)
    }

    /// Keeps the first `capacity` routing decisions (candidates with their live load, and
    /// the choice) for a visualisation; call before running. Off by default.
    pub fn trace_routes(&mut self, capacity: usize) {
        self.route_trace_cap = capacity;
    }

    /// The routing decisions kept by [`FleetSim::trace_routes`], in decision order.
    pub fn route_trace(&self) -> &[RouteTrace] {
        &self.route_trace
    }

    /// Per-request records (only with `record_requests`), in the order streams closed.
    pub fn records(&self) -> &[RequestRecord] {
        &self.records
    }

    /// The fleet at this moment.
    pub fn snapshot(&self) -> FleetSnapshot {
        let s = &self.stats;
        let rejected = s.rejected_quota
            + s.rejected_shed
            + s.rejected_no_replica
            + s.rejected_engine
            + s.rejected_gateway;
        let spilled = s.spilled_pool + s.spilled_hosted;
        FleetSnapshot {
            t: self.now,
            open_streams: s.open_streams,
            arrived: s.arrived,
            completed: s.completed,
            rejected,
            spilled,
            timed_out: s.timed_out,
            in_flight: s.arrived - s.completed - rejected - spilled - s.timed_out,
            replicas: self
                .replicas
                .iter()
                .map(|r| ReplicaView {
                    pool: r.pool,
                    state: r.state,
                    load: r.replica.load(),
                })
                .collect(),
        }
    }

    fn schedule(&mut self, t: f64, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Due {
            t,
            seq,
            item: event,
        });
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Send { source } => self.on_send(source),
            Event::GatewayIn { slot } => self.on_gateway_in(slot),
            Event::QuotaSend { slot } => self.on_quota(slot),
            Event::RouterDecide { slot } => self.on_route(slot),
            Event::EngineSubmit { slot } => self.on_submit(slot),
            Event::StreamEnd { slot } => self.end_stream(slot, self.now),
            Event::ReplicaReady { replica } => {
                let rs = &mut self.replicas[replica];
                if rs.state == ReplicaState::Starting {
                    rs.state = ReplicaState::Ready;
                    rs.ready_at = self.now;
                }
            }
            Event::AutoscaleTick => self.on_autoscale(),
            Event::Sample => self.on_sample(),
        }
    }

    /// Draws the next request of source `i` and schedules its send.
    fn pull(&mut self, i: usize) {
        let src = &mut self.sources[i];
        src.next = src.stream.next();
        if let Some(r) = &src.next {
            let t = src.start + r.arrival;
            self.schedule(t, Event::Send { source: i });
        }
    }

    fn on_send(&mut self, source: usize) {
        let Some(req) = self.sources[source].next.take() else {
            return;
        };
        self.pull(source);
        let t = self.now;
        let clients = &self.cfg.clients;
        let region = clients.region_for(self.rng.gen::<f64>());
        let new_conn = self.rng.gen::<f64>() < clients.regions[region].new_connection_fraction;
        let streaming = self.all_streaming || self.rng.gen::<f64>() < clients.streaming_fraction;
        let setup = if new_conn {
            clients.connection_setup_s(region)
        } else {
            0.0
        };
        let gateway_in = t + setup + clients.regions[region].rtt_s / 2.0;
        let seq = self.stats.arrived;
        self.stats.arrived += 1;
        let tenant = req.tenant;
        if let Some(c) = self.stats.tenant_arrived.get_mut(tenant as usize) {
            *c += 1;
        }
        let prompt_tokens = req.prompt.len();
        let live = Live {
            seq,
            tenant,
            region: region as u32,
            streaming,
            prompt_tokens,
            output_len: req.output_len.min(clients.max_tokens).max(1),
            // Sessions of different sources must not meet in the router's session map.
            session: req.session.map(|s| s ^ ((source as u64) << 56)),
            prompt: Some(req.prompt),
            sent: t,
            gateway_in,
            ..Live::default()
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.live[s] = live;
                s
            }
            None => {
                self.live.push(live);
                self.slot_gen.push(0);
                self.live.len() - 1
            }
        };
        self.schedule(gateway_in, Event::GatewayIn { slot });
    }

    fn on_gateway_in(&mut self, slot: usize) {
        self.open_stream();
        self.live[slot].open = true;
        let g = self.cfg.gateway;
        let t = self.now;
        if self.gateway_queued >= g.max_queued {
            // The gateway's queue is full: 429 at once.
            self.stats.rejected_gateway += 1;
            self.live[slot].outcome = Some(Outcome::Rejected {
                reason: RejectReason::GatewayFull,
                retry_after_s: 1,
            });
            self.end_stream(slot, t);
            return;
        }
        self.gateway_queued += 1;
        self.live[slot].queued = true;
        let deadline = t + self.cfg.clients.timeout_s;
        self.deadlines
            .push_back((deadline, slot as u32, self.slot_gen[slot]));
        let auth = if self.rng.gen::<f64>() < g.auth_miss_fraction {
            g.auth_miss_s
        } else {
            g.auth_s
        };
        let l = &mut self.live[slot];
        l.hops.auth = auth;
        l.hops.tokenize = l.prompt_tokens as f64 * g.tokenize_s_per_token;
        let t = self.now + auth + l.hops.tokenize;
        self.schedule(t, Event::QuotaSend { slot });
    }

    fn on_quota(&mut self, slot: usize) {
        let t = self.now;
        if self.live[slot].timed_out {
            self.end_stream(slot, t);
            return;
        }
        let answered = if self.quota.config().enabled {
            let (run_at, answered) = self.quota.schedule(t);
            let l = &self.live[slot];
            let cost = l.prompt_tokens as u64 + self.cfg.clients.max_tokens as u64;
            let decision = self
                .quota
                .check(run_at, l.tenant, cost, l.prompt_tokens as u64);
            self.live[slot].hops.quota = answered - t;
            if let QuotaDecision::Rejected { retry_after_s } = decision {
                self.stats.rejected_quota += 1;
                self.unqueue(slot);
                self.live[slot].outcome = Some(Outcome::Rejected {
                    reason: RejectReason::Quota,
                    retry_after_s,
                });
                self.schedule(answered, Event::StreamEnd { slot });
                return;
            }
            answered
        } else {
            t
        };
        // Answers leave the store in the order checks arrived, so the router sees its
        // arrivals in time order and its queue can be resolved now.
        let decided = self.router.schedule(answered);
        self.live[slot].hops.router = decided - answered;
        self.schedule(decided, Event::RouterDecide { slot });
    }

    fn on_route(&mut self, slot: usize) {
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
            RouteDecision::NoReplica => {
                self.stats.rejected_no_replica += 1;
                self.unqueue(slot);
                self.live[slot].outcome = Some(Outcome::Rejected {
                    reason: RejectReason::NoReplica,
                    retry_after_s: 1,
                });
                self.schedule(t, Event::StreamEnd { slot });
            }
            RouteDecision::Replica(r) => self.dispatch(slot, r, t, needs_prefix),
        }
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
        for (i, r) in self.replicas.iter().enumerate() {
            if r.state == ReplicaState::Ready && self.cfg.pools[r.pool].serving {
                let cached = match (needs_prefix, prompt) {
                    (true, Some(p)) => r.replica.cached_prefix_tokens(p),
                    _ => 0,
                };
                let mut load = r.replica.load();
                load.waiting += r.dispatching;
                load.outstanding += r.dispatching;
                load.queued_prompt_tokens += r.dispatching_tokens;
                cands.push(Candidate {
                    replica: i,
                    load,
                    cached_prefix_tokens: cached,
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

    fn on_submit(&mut self, slot: usize) {
        let t = self.now;
        let Some(r) = self.live[slot].replica else {
            return;
        };
        // Bring the replica up to now (a step due now is not composed yet, so this request
        // can join it).
        self.sync(r, t);
        let l = &mut self.live[slot];
        let rs = &mut self.replicas[r];
        rs.dispatching = rs.dispatching.saturating_sub(1);
        rs.dispatching_tokens = rs.dispatching_tokens.saturating_sub(l.prompt_tokens as u64);
        if l.timed_out {
            self.end_stream(slot, t);
            return;
        }
        l.engine_in = t;
        l.in_engine = true;
        self.unqueue(slot);
        let l = &mut self.live[slot];
        let req = EngineRequest {
            id: slot as u64,
            prompt: l.prompt.take().unwrap_or_default(),
            output_len: l.output_len,
            tenant: l.tenant,
        };
        self.replicas[r].replica.submit(t, req);
        // A request the engine can never hold is refused at once: hear about it now.
        self.sync(r, t);
    }

    /// Runs replica `r` through every step that ends before `t` (all of them when `t` is
    /// infinite) and handles what it reports.
    fn sync(&mut self, r: usize, t: f64) {
        let mut events = std::mem::take(&mut self.events_buf);
        events.clear();
        if t.is_finite() {
            self.replicas[r].replica.advance_before(t, &mut events);
        } else {
            self.replicas[r].replica.advance_to(t, &mut events);
        }
        for &e in &events {
            self.on_replica_event(r, e);
        }
        self.events_buf = events;
    }

    /// Syncs every replica that holds work.
    fn sync_all(&mut self, t: f64) {
        for r in 0..self.replicas.len() {
            if self.replicas[r].state != ReplicaState::Starting {
                self.sync(r, t);
            }
        }
    }

    fn on_replica_event(&mut self, r: usize, e: ReplicaEvent) {
        let relay = self.cfg.relay.relay_s;
        match e {
            ReplicaEvent::Admitted { id, t } => {
                let l = &mut self.live[id as usize];
                if l.admitted.is_none() {
                    l.admitted = Some(t);
                }
            }
            ReplicaEvent::FirstToken { id, t } => {
                let slot = id as usize;
                let l = &mut self.live[slot];
                if l.got_first {
                    return;
                }
                l.got_first = true;
                l.first_token = t;
                if l.streaming {
                    let rs = &mut self.replicas[r];
                    rs.decoding_streams += 1;
                    if let Some(at) = rs.firsts.first_token(slot, t + relay) {
                        l.first_release = Some(at);
                    }
                    if !l.timed_out {
                        self.interval_ttft.push(t + relay - l.gateway_in);
                    }
                }
            }
            ReplicaEvent::Finished {
                id,
                t,
                output_tokens,
            } => {
                let slot = id as usize;
                let l = &mut self.live[slot];
                l.finish = t;
                l.output_tokens = output_tokens;
                if output_tokens == 0 && !l.got_first {
                    // The engine refused it (it can never fit in the KV pool).
                    self.stats.rejected_engine += 1;
                    l.outcome = Some(Outcome::Rejected {
                        reason: RejectReason::NoReplica,
                        retry_after_s: 0,
                    });
                } else if l.streaming {
                    let rs = &mut self.replicas[r];
                    rs.decoding_streams = rs.decoding_streams.saturating_sub(1);
                    if let Some(at) = rs.firsts.finish(slot, t + relay) {
                        l.first_release = Some(at);
                    }
                } else if !l.timed_out {
                    self.interval_ttft.push(t + relay - l.gateway_in);
                }
                let end = t + relay;
                if end <= self.now {
                    self.end_stream(slot, end);
                } else {
                    self.schedule(end, Event::StreamEnd { slot });
                }
            }
            ReplicaEvent::Preempted { .. } => {}
            ReplicaEvent::StepEnd {
                t,
                duration,
                decode_tokens,
                ..
            } => {
                let st = &mut self.stats;
                let rs = &mut self.replicas[r];
                st.engine_itl.push_n(duration, decode_tokens as u64);
                // When every request streams, the gateway's gaps are the engine's, and with
                // nothing buffering the client's are the gateway's: the report reuses them.
                let streamed = if self.all_streaming {
                    decode_tokens
                } else {
                    decode_tokens.min(rs.decoding_streams)
                } as u64;
                if !self.all_streaming {
                    st.gateway_itl.push_n(duration, streamed);
                }
                if !self.unbuffered {
                    let client = &mut st.client_itl;
                    rs.bursts.step(t + relay, duration, streamed, &mut |g, w| {
                        client.push_n(g, w)
                    });
                }
                if !rs.firsts.is_empty() {
                    let live = &mut self.live;
                    rs.firsts.step(t + relay, &mut |slot, at| {
                        live[slot].first_release = Some(at);
                    });
                }
            }
        }
    }

    /// The last byte of the stream in `slot` was written at `t` (which may be earlier than
    /// now, when the replica reporting it was read late).
    fn end_stream(&mut self, slot: usize, t: f64) {
        if self.live[slot].open {
            self.close_stream(self.live[slot].gateway_in, t);
        }
        self.unqueue(slot);
        let l = std::mem::take(&mut self.live[slot]);
        self.free.push(slot);
        self.slot_gen[slot] = self.slot_gen[slot].wrapping_add(1);
        let relay = self.cfg.relay.relay_s;
        let half_rtt = self.cfg.clients.regions[l.region as usize].rtt_s / 2.0;
        let served = !matches!(
            l.outcome,
            Some(Outcome::Rejected { .. } | Outcome::TimedOut)
        );
        if let Some(r) = l.replica {
            let rs = &mut self.replicas[r];
            rs.conn.release(t, &self.cfg.gateway.pool);
            if rs.state == ReplicaState::Draining
                && rs.dispatching == 0
                && rs.replica.load().outstanding == 0
            {
                rs.state = ReplicaState::Stopped;
                rs.stopped_at = Some(t);
            }
        }
        let outcome = match l.outcome {
            Some(o) => o,
            None => {
                self.stats.completed += 1;
                if let Some(c) = self.stats.tenant_completed.get_mut(l.tenant as usize) {
                    *c += 1;
                }
                Outcome::Completed
            }
        };
        let mut rec = RequestRecord {
            seq: l.seq,
            tenant: l.tenant,
            region: l.region,
            streaming: l.streaming,
            prompt_tokens: l.prompt_tokens,
            output_tokens: l.output_tokens,
            outcome,
            replica: l.replica,
            sent: l.sent,
            gateway_in: l.gateway_in,
            engine_in: l.engine_in,
            first_token: l.first_token,
            first_byte_written: t,
            last_byte_written: t,
            first_byte_at_client: t + half_rtt,
            last_byte_at_client: t + half_rtt,
            hops: l.hops,
            cached_prefix_tokens: l.cached_prefix_tokens,
        };
        if served {
            let written = if l.streaming {
                l.first_token + relay
            } else {
                t
            };
            let released = if l.hosted && l.streaming {
                self.hosted_first_release(&l, written, t)
            } else {
                l.first_release.unwrap_or(written).max(written)
            };
            rec.hops.relay = relay;
            rec.first_byte_written = written;
            rec.first_byte_at_client = released + half_rtt;
            let st = &mut self.stats;
            st.output_tokens += l.output_tokens as u64;
            st.prompt_tokens += l.prompt_tokens as u64;
            st.server_ttft.push(rec.server_ttft());
            st.user_ttft.push(rec.user_ttft());
            st.e2e.push(rec.e2e());
            if !l.hosted {
                st.engine_ttft.push(rec.engine_ttft());
                st.engine_queue
                    .push(l.admitted.unwrap_or(l.first_token) - l.engine_in);
            }
            if l.output_tokens > 1 {
                st.tpot
                    .push((l.finish - l.first_token) / (l.output_tokens - 1) as f64);
            }
            if l.streaming {
                st.gap.push(rec.server_ttft() - rec.engine_ttft());
                st.hop_auth.push(rec.hops.auth);
                st.hop_tokenize.push(rec.hops.tokenize);
                st.hop_quota.push(rec.hops.quota);
                st.hop_router.push(rec.hops.router);
                st.hop_connect.push(rec.hops.connect);
                st.hop_relay.push(rec.hops.relay);
                if l.hosted && l.output_tokens > 1 {
                    self.hosted_itl(&l);
                }
            }
        }
        if self.cfg.record_requests && self.records.len() < self.cfg.limits.max_records as usize {
            self.records.push(rec);
        }
    }

    /// Takes the request in `slot` out of the gateway's queue, if it is in it.
    fn unqueue(&mut self, slot: usize) {
        let l = &mut self.live[slot];
        if l.queued {
            l.queued = false;
            self.gateway_queued -= 1;
        }
    }

    /// Whether the request in `slot`, whose deadline `t` is the next thing due, is still
    /// waiting for a first token. An engine holding it that was last read before `t` is read
    /// up to `t` first (its events keep their own times, and any stream end it reveals is
    /// scheduled as usual, so the clock does not move).
    fn deadline_check(&mut self, slot: usize, t: f64) -> DeadlineCheck {
        let l = &self.live[slot];
        let waiting = !l.got_first
            && !l.timed_out
            && matches!(
                l.outcome,
                None | Some(Outcome::Spilled(SpillTarget::Pool(_)))
            );
        if !waiting {
            return DeadlineCheck::Met;
        }
        match l.replica.filter(|_| l.in_engine) {
            Some(r) if self.replicas[r].replica.now() < t => {
                self.sync(r, t);
                DeadlineCheck::Read
            }
            _ => DeadlineCheck::Missed,
        }
    }

    /// The client of the request in `slot` gives up at `t`, and the gateway cancels it.
    fn time_out(&mut self, slot: usize, t: f64) {
        let engine = self.live[slot]
            .replica
            .filter(|_| self.live[slot].in_engine);
        self.stats.events += 1;
        self.stats.timed_out += 1;
        self.unqueue(slot);
        let l = &mut self.live[slot];
        if let Some(Outcome::Spilled(SpillTarget::Pool(_))) = l.outcome {
            self.stats.spilled_pool -= 1;
        }
        l.outcome = Some(Outcome::TimedOut);
        l.timed_out = true;
        // The client disconnects: the gateway closes the stream now.
        l.open = false;
        let opened = l.gateway_in;
        self.close_stream(opened, t);
        if let Some(r) = engine {
            let rs = &mut self.replicas[r];
            if rs.replica.cancel(slot as u64, t) {
                self.stats.cancelled_in_engine += 1;
                self.end_stream(slot, t);
            }
            // Otherwise the engine is running it: it ends as usual and its end frees the slot.
        }
        // Before the engine, the request's next milestone frees the slot.
    }

    /// When the first burst of a hosted reply (tokens evenly spaced) leaves the relay.
    fn hosted_first_release(&self, l: &Live, written: f64, end: f64) -> f64 {
        let (tokens, interval) = self.release_rule;
        let gap = if l.output_tokens > 1 {
            (l.finish - l.first_token) / (l.output_tokens - 1) as f64
        } else {
            0.0
        };
        let mut at = end;
        if tokens > 0 {
            at = at.min(written + tokens.saturating_sub(1) as f64 * gap);
        }
        if interval > 0.0 {
            at = at.min(written + interval);
        }
        at.max(written)
    }

    /// ITL of a hosted reply, evenly spaced at the provider's speed, through the relay.
    fn hosted_itl(&mut self, l: &Live) {
        let n = (l.output_tokens - 1) as u64;
        let gap = (l.finish - l.first_token) / n as f64;
        self.stats.hosted_gateway_itl.push_n(gap, n);
        let (tokens, interval) = self.release_rule;
        let per_burst = if tokens > 0 {
            tokens as u64
        } else {
            libm::ceil(interval / gap).max(1.0) as u64
        };
        let bursts = n / per_burst.max(1);
        if per_burst <= 1 {
            self.stats.hosted_client_itl.push_n(gap, n);
        } else {
            let h = &mut self.stats.hosted_client_itl;
            h.push_n(gap * per_burst as f64, bursts);
            h.push_n(0.0, n - bursts);
        }
    }

    fn open_stream(&mut self) {
        let st = &mut self.stats;
        st.open_streams += 1;
        st.streams_opened += 1;
    }

    fn close_stream(&mut self, opened_at: f64, t: f64) {
        let h = self.horizon;
        let st = &mut self.stats;
        st.open_streams = st.open_streams.saturating_sub(1);
        st.streams_closed += 1;
        st.open_area_ns += to_ns(t.min(h) - opened_at.min(h)) as u128;
        if opened_at < h {
            st.horizon_streams += 1;
            st.horizon_stream_ns += to_ns(t - opened_at) as u128;
        }
    }

    /// Stream-seconds, over [0, horizon], of the streams still open at time `t`.
    pub(super) fn open_area_in_flight(&self, t: f64) -> f64 {
        let h = self.horizon;
        self.live
            .iter()
            .filter(|l| l.open)
            .map(|l| (t.min(h) - l.gateway_in.min(h)).max(0.0))
            .sum()
    }

    fn on_sample(&mut self) {
        let t = self.now;
        self.sync_all(t);
        self.stats.open_max = self.stats.open_max.max(self.stats.open_streams);
        let mut ready = 0;
        let mut provisioned = 0;
        let mut queued = 0;
        let (mut running, mut waiting) = (0, 0);
        let (mut kv_used, mut kv_total) = (0u64, 0u64);
        let mut output_tokens = 0;
        for r in &mut self.replicas {
            if r.state != ReplicaState::Stopped {
                provisioned += 1;
            }
            if r.state == ReplicaState::Ready && self.cfg.pools[r.pool].serving {
                ready += 1;
            }
            output_tokens += r.replica.metrics().output_tokens;
            if r.state != ReplicaState::Starting {
                let load = r.replica.load();
                queued += load.queued_prompt_tokens;
                running += load.running;
                waiting += load.waiting;
                r.sampled_outstanding += load.outstanding as u64;
                if r.state != ReplicaState::Stopped {
                    kv_used += load.kv_blocks_used as u64;
                    kv_total += load.kv_blocks_total as u64;
                }
            }
        }
        let st = &self.stats;
        self.series.push(SeriesPoint {
            t: self.now,
            open_streams: st.open_streams,
            ready_replicas: ready,
            provisioned_replicas: provisioned,
            queued_prompt_tokens: queued,
            running,
            waiting,
            kv_blocks_used: kv_used,
            kv_blocks_total: kv_total,
            completed: st.completed,
            rejected: st.rejected_quota
                + st.rejected_shed
                + st.rejected_no_replica
                + st.rejected_engine
                + st.rejected_gateway,
            spilled: st.spilled_pool + st.spilled_hosted,
            output_tokens,
        });
        let next = self.now + self.sample_interval;
        if next <= self.horizon {
            self.schedule(next, Event::Sample);
        }
    }

    fn on_autoscale(&mut self) {
        let a = self.cfg.autoscaler;
        let t = self.now;
        self.sync_all(t);
        let pool = a.pool;
        let mut ready = 0u32;
        let mut current = 0u32;
        let mut busy = 0.0;
        let mut ready_time = 0.0;
        let mut queued = 0.0;
        let mut kv = 0.0;
        for r in self.replicas.iter_mut().filter(|r| r.pool == pool) {
            let b = r.replica.metrics().busy_time_s;
            if r.state == ReplicaState::Ready {
                ready += 1;
                busy += (b - r.busy_mark).max(0.0);
                ready_time += (t - r.ready_at).clamp(0.0, a.interval_s);
                let load = r.replica.load();
                queued += load.queued_prompt_tokens as f64;
                kv += kv_usage(&load);
            }
            if matches!(r.state, ReplicaState::Ready | ReplicaState::Starting) {
                current += 1;
            }
            r.busy_mark = b;
        }
        let n = ready.max(1) as f64;
        let value = match a.signal {
            ScaleSignal::GpuUtilisation => {
                if ready_time > 0.0 {
                    (busy / ready_time).min(1.0)
                } else {
                    f64::NAN
                }
            }
            ScaleSignal::QueuedTokens => queued / n,
            ScaleSignal::KvUsage => kv / n,
            ScaleSignal::Ttft => {
                if self.interval_ttft.is_empty() {
                    f64::NAN
                } else {
                    let mut h = Histogram::new();
                    for &v in &self.interval_ttft {
                        h.push(v);
                    }
                    h.quantile(a.ttft_quantile)
                }
            }
        };
        self.interval_ttft.clear();
        self.signal_series.push(SignalPoint {
            t,
            value,
            ready,
            provisioned: current,
        });
        let p = &self.cfg.pools[pool];
        let max = p.max_replicas;
        let min = a.floor_at(t, p.min_replicas, max);
        let since = t - self.last_scale_change;
        let want = a.desired(ready, current, value, min, max).and_then(|want| {
            if want > current {
                (since >= a.cooldown_s).then_some(want)
            } else {
                (since >= a.cooldown_s.max(a.scale_down_cooldown_s))
                    .then_some(want.max(current.saturating_sub(a.max_scale_down_step)))
            }
        });
        // A scheduled floor is asked for at once, whatever the signal and the cooldown say.
        let want = match want {
            None if current < min => Some(min),
            w => w,
        };
        {
            if let Some(want) = want {
                self.scale_events.push(ScaleEvent {
                    t,
                    signal: value,
                    from: current,
                    to: want,
                });
                self.last_scale_change = t;
                if want > current {
                    for _ in current..want {
                        if let Ok(r) = self.add_replica(pool, ReplicaState::Starting) {
                            self.schedule(
                                t + a.scale_up_delay_s,
                                Event::ReplicaReady { replica: r },
                            );
                        }
                    }
                } else {
                    self.drain(pool, current - want);
                }
            }
        }
        let next = t + a.interval_s;
        if next <= self.horizon {
            self.schedule(next, Event::AutoscaleTick);
        }
    }

    /// Stops routing to `n` replicas of `pool` (starting ones first, then the least loaded).
    fn drain(&mut self, pool: usize, n: u32) {
        let t = self.now;
        for _ in 0..n {
            let pick = self
                .replicas
                .iter()
                .enumerate()
                .filter(|(_, r)| r.pool == pool && r.state == ReplicaState::Starting)
                .map(|(i, _)| i)
                .next_back()
                .or_else(|| {
                    self.replicas
                        .iter()
                        .enumerate()
                        .filter(|(_, r)| r.pool == pool && r.state == ReplicaState::Ready)
                        .min_by_key(|(i, r)| (r.replica.load().outstanding, usize::MAX - i))
                        .map(|(i, _)| i)
                });
            let Some(i) = pick else { return };
            let rs = &mut self.replicas[i];
            if rs.state == ReplicaState::Starting || rs.replica.load().outstanding == 0 {
                rs.state = ReplicaState::Stopped;
                rs.stopped_at = Some(t);
            } else {
                rs.state = ReplicaState::Draining;
            }
        }
    }

    fn add_replica(&mut self, pool: usize, state: ReplicaState) -> Result<usize, ConfigError> {
        let mut cfg: ReplicaConfig = self.cfg.pools[pool].replica.clone();
        let cap = self.cfg.router.step_share_cap_tokens;
        if cap > 0 {
            cfg.scheduler.long_prefill_token_threshold = cap;
        }
        let mut replica =
            Replica::new(cfg).map_err(|e| e.within(&format!("pools[{pool}].replica")))?;
        // The fleet records ITL per hop itself (see `clocks`).
        replica.set_itl_samples(false);
        self.replicas.push(ReplicaSlot {
            pool,
            replica,
            state,
            created_at: self.now,
            ready_at: if state == ReplicaState::Ready {
                self.now
            } else {
                f64::INFINITY
            },
            stopped_at: None,
            conn: ConnectionPool::default(),
            bursts: StepBursts::new(&self.cfg.relay),
            firsts: FirstBursts::new(&self.cfg.relay),
            busy_mark: 0.0,
            decoding_streams: 0,
            dispatching: 0,
            dispatching_tokens: 0,
            routed: 0,
            sampled_outstanding: 0,
        });
        Ok(self.replicas.len() - 1)
    }
}
