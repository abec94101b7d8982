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
//!
//! This module holds the state ([`FleetSim`]) and the event loop; the handlers live by concern
//! in its children: `requests.rs` (client, gateway, quota store, submission, client
//! deadlines), `routing.rs` (candidates, overflow, the router's choice, dispatch),
//! `streams.rs` (replica events, the relay, stream ends and what they add to the report),
//! `scaling.rs` (the autoscaler, replicas started and drained), `faults.rs` (a replica that
//! fails, and the requests it held sent again or broken) and `accounting.rs` (counters, the
//! time series, snapshots).

use super::autoscaler::{ScaleEvent, SignalPoint};
use super::clocks::{Hops, Outcome, RequestRecord};
use super::gateway::ConnectionPool;
use super::quota::QuotaStore;
use super::relay::{FirstBursts, StepBursts};
use super::router::{Candidate, Router};
use super::{FleetConfig, PoolRole};
use crate::due::Due;
use crate::error::ConfigError;
use crate::replica::{Replica, ReplicaEvent};
use crate::workload::{GeneratedRequest, Prompt, RequestStream};
use rand::SeedableRng;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use std::collections::{BinaryHeap, VecDeque};

mod accounting;
mod faults;
mod requests;
mod routing;
mod scaling;
mod streams;

use accounting::Stats;
pub use accounting::{FleetSnapshot, ReplicaView, SeriesPoint};
use requests::DeadlineCheck;
pub use routing::{RouteCandidate, RouteTrace};

/// A fleet simulation in progress.
pub struct FleetSim {
    pub(super) cfg: FleetConfig,
    pub(super) now: f64,
    pub(super) horizon: f64,
    heap: BinaryHeap<Due<Event>>,
    next_seq: u64,
    rng: Pcg64,
    /// Draws of which clients leave early and when (a stream of its own, so that turning
    /// abandonment on leaves every other draw of the run as it was).
    leave_rng: Pcg64,
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
    /// The autoscalers that are on, each with its own state.
    scalers: Vec<Scaler>,
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
    /// The link KV caches cross between prefill and decode pools (disaggregated fleets).
    pub(super) link: Option<crate::catalog::LinkSpec>,
}

/// How a fleet run ended (or how it stands, while it runs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FleetOverload {
    /// More fleet events than `limits.max_events`.
    EventLimit,
    /// More engine steps than `limits.max_engine_steps`.
    StepLimit,
    /// More requests in the fleet at once than `limits.max_in_flight`.
    InFlightLimit,
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
    /// The request's prompt KV cache has reached its decode replica (disaggregated fleets).
    KvArrive { slot: usize },
    /// A prefill replica's step ends (or is due): read it, so that a finished prefill hands
    /// its request on at its own time.
    Wake { replica: usize },
    /// The client of the request in `slot` (while the slot is in generation `gen`) closes
    /// its connection.
    Leave { slot: usize, gen: u32 },
    /// Replica `replica` fails.
    ReplicaFail { replica: usize },
    /// The last byte of a reply (or a 429) is written and the stream closes.
    StreamEnd { slot: usize },
    /// A replica asked for by the autoscaler has loaded its weights.
    ReplicaReady { replica: usize },
    /// An autoscaler (its index among the fleet's, see [`FleetConfig::autoscalers`])
    /// evaluates its signal.
    AutoscaleTick { scaler: usize },
    /// A point of the open-streams series.
    Sample,
}

/// The state of a replica in the fleet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplicaState {
    /// Loading weights; takes no traffic yet.
    Starting,
    Ready,
    /// Finishing its requests before it stops; takes no new traffic.
    Draining,
    Stopped,
}

/// One autoscaler of the fleet and its state.
pub(super) struct Scaler {
    pub(super) cfg: super::AutoscalerConfig,
    /// When it last changed its pool.
    pub(super) last_change: f64,
    /// Server TTFTs since its last evaluation (kept only for the TTFT signal).
    pub(super) ttft: Vec<f64>,
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
    /// It failed (its state is then `Stopped`).
    pub(super) failed: bool,
    /// Its pool's role.
    pub(super) role: PoolRole,
    /// When its link to the other pool is next free (a prefill replica's sending side, a
    /// decode replica's receiving side): transfers queue for it first come, first served.
    link_free_at: f64,
    /// Seconds its link spent moving KV caches.
    pub(super) link_busy_s: f64,
    /// The earliest [`Event::Wake`] scheduled for it and not yet handled (infinite: none).
    wake_at: f64,
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
    /// Output tokens the engine had sampled when the client left (for the tokens generated
    /// for nobody, when the engine is not told).
    tokens_at_leave: u32,
    /// Times the gateway has sent it again after its replica failed.
    retries: u32,
    /// The prompt as the engine received it, kept while faults may strike so that the
    /// gateway can send it again.
    sent_prompt: Option<Prompt>,
    /// Where it is on a disaggregated fleet's path.
    phase: Phase,
    /// Its decode replica (disaggregated fleets), chosen with its prefill replica.
    decode_replica: Option<usize>,
    /// It counts as on its way to `decode_replica` (chosen, its KV cache not yet there).
    decode_pending: bool,
    /// The prefill replica holding its KV cache until the transfer is done.
    kv_holder: Option<usize>,
    /// When its prefill replica finished the prompt.
    prefill_done: f64,
    /// When its KV cache reached the decode replica.
    kv_arrived: f64,
    /// Its prefill replica, when the move of its KV cache started, and the bytes moved.
    prefill_replica: Option<usize>,
    transfer_start: f64,
    kv_bytes: f64,
    /// When the decode replica first scheduled it.
    decode_admitted: Option<f64>,
}

/// A request's place on a disaggregated fleet's path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Phase {
    /// Prefill and decode on one replica (every request of an ordinary fleet).
    #[default]
    Direct,
    /// On its prefill replica.
    Prefill,
    /// Its KV cache is on its way to the decode replica.
    Transfer,
    /// On its decode replica.
    Decode,
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
            leave_rng: Pcg64::seed_from_u64(cfg.seed ^ 0x6c65_6176_6573_0001),
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
            scalers: cfg
                .autoscalers()
                .into_iter()
                .map(|cfg| Scaler {
                    cfg,
                    last_change: f64::NEG_INFINITY,
                    ttft: Vec::new(),
                })
                .collect(),
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
            link: if cfg.disaggregated() {
                Some(
                    crate::catalog::link_or_error(&cfg.disagg.link)
                        .map_err(|e| e.within("disagg"))?,
                )
            } else {
                None
            },
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
        for f in sim.cfg.faults.clone() {
            if f.at_s >= sim.horizon {
                continue;
            }
            sim.schedule(
                f.at_s,
                Event::ReplicaFail {
                    replica: f.replica as usize,
                },
            );
        }
        sim.schedule(0.0, Event::Sample);
        for i in 0..sim.scalers.len() {
            let at = sim.scalers[i].cfg.interval_s;
            sim.schedule(at, Event::AutoscaleTick { scaler: i });
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
            Event::KvArrive { slot } => self.on_kv_arrive(slot),
            Event::Wake { replica } => self.on_wake(replica),
            Event::Leave { slot, gen } => self.on_leave(slot, gen),
            Event::ReplicaFail { replica } => self.on_replica_fail(replica),
            Event::StreamEnd { slot } => self.end_stream(slot, self.now),
            Event::ReplicaReady { replica } => {
                let rs = &mut self.replicas[replica];
                if rs.state == ReplicaState::Starting {
                    rs.state = ReplicaState::Ready;
                    rs.ready_at = self.now;
                }
            }
            Event::AutoscaleTick { scaler } => self.on_autoscale(scaler),
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
        self.arm_wake(r);
    }

    /// A prefill replica is read at each of its step ends (a finished prefill hands its
    /// request on at once); other replicas are read only when the fleet needs them.
    fn arm_wake(&mut self, r: usize) {
        let rs = &mut self.replicas[r];
        if rs.role != PoolRole::Prefill || rs.state == ReplicaState::Starting || rs.failed {
            return;
        }
        if let Some(next) = rs.replica.next_event_time() {
            if next < rs.wake_at {
                rs.wake_at = next;
                self.schedule(next, Event::Wake { replica: r });
            }
        }
    }

    /// Reads prefill replica `r` through every step that ends (or is due) by now.
    fn on_wake(&mut self, r: usize) {
        let t = self.now;
        let rs = &mut self.replicas[r];
        if rs.wake_at <= t {
            rs.wake_at = f64::INFINITY;
        }
        if rs.state == ReplicaState::Starting || rs.failed {
            return;
        }
        let mut events = std::mem::take(&mut self.events_buf);
        events.clear();
        self.replicas[r].replica.advance_to(t, &mut events);
        for &e in &events {
            self.on_replica_event(r, e);
        }
        self.events_buf = events;
        self.arm_wake(r);
    }

    /// Syncs every replica that holds work.
    fn sync_all(&mut self, t: f64) {
        for r in 0..self.replicas.len() {
            if self.replicas[r].state != ReplicaState::Starting {
                self.sync(r, t);
            }
        }
    }
}
