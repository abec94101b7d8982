//! A standalone driver: one workload feeding one replica, with a report of what it measured.
//!
//! [`ReplicaSim`] interleaves the workload's arrivals with the replica's steps in time order
//! (an arrival at the same time as a step start joins that step). A UI frame loop can drive it
//! by events ([`ReplicaSim::step_event`]), to a simulated time ([`ReplicaSim::advance_to`]) or
//! for a budget of work ([`ReplicaSim::advance_for_work`]), and look at it any time
//! ([`ReplicaSim::snapshot`], [`ReplicaSim::report`]). [`ReplicaSim::run`] goes to the end.
//!
//! A runaway configuration cannot hang it: the run stops at a [`WorkLimits`] cap with an
//! [`Verdict::Overloaded`] verdict.

use super::{EngineRequest, Replica, ReplicaConfig, ReplicaEvent, ReplicaSnapshot, StepTrace};
use crate::error::{check_range, ConfigError};
use crate::stats::{Samples, Summary};
use crate::workload::{RequestStream, WorkloadConfig};
use serde::{Deserialize, Serialize};

/// A workload, a replica, and how to run and measure them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaSimConfig {
    pub replica: ReplicaConfig,
    pub workload: WorkloadConfig,
    #[serde(default)]
    pub limits: WorkLimits,
    /// Spacing of the KV usage and queue time series, seconds.
    #[serde(default = "default_sample_interval")]
    pub sample_interval_s: f64,
    /// The client's cap on requests in flight (`vllm bench serve --max-concurrency`): a request
    /// due while that many are unfinished is sent when one finishes, and its clocks (TTFT, end
    /// to end) start then, as the benchmark's do. None: every request is sent when it is due.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u32>,
}

/// Caps that stop a run which would otherwise never end (or take far too long). They can be
/// lowered but not raised past [`WorkLimits::MAX`], so a scenario file cannot switch them off.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkLimits {
    /// Engine steps.
    pub max_steps: u64,
    /// Requests waiting in the replica's queue: beyond this the queue is growing without bound.
    pub max_waiting: u32,
    /// Requests taken from the workload.
    pub max_requests: u64,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Still running: the report of the run so far.
    Running,
    /// The workload ran out and every request finished.
    Completed,
    /// The workload ran out, but the replica refused every request (each needs more KV
    /// blocks than the replica has, or asks for no tokens): nothing was served.
    NothingServed,
    /// The run hit a work cap at simulated time `at`; the queue was growing without bound.
    Overloaded { reason: OverloadReason, at: f64 },
}

/// Which cap stopped an overloaded run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverloadReason {
    QueueLimit,
    StepLimit,
    RequestLimit,
}

/// One request's life. Times are seconds on the engine clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    pub id: u64,
    pub tenant: u32,
    pub session: Option<u64>,
    pub arrival: f64,
    pub prompt_len: u32,
    pub output_len: u32,
    /// First scheduled.
    pub admitted: Option<f64>,
    pub first_token: Option<f64>,
    pub finish: Option<f64>,
    pub output_tokens: u32,
    pub preemptions: u32,
    /// Refused by the replica (larger than its whole KV pool).
    pub rejected: bool,
    /// Every token's time, with `record_token_times`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_times: Option<Vec<f64>>,
}

/// The replica's state at one sample time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    pub t: f64,
    pub kv_blocks_used: u32,
    /// Fraction of the KV pool in use.
    pub kv_usage: f64,
    pub running: u32,
    pub waiting: u32,
}

/// Everything a run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Simulated seconds covered (up to the last step end or arrival).
    pub sim_time_s: f64,
    pub steps: u64,
    pub arrived: u64,
    pub finished: u64,
    pub rejected: u64,
    pub in_flight: u64,
    /// Arrival to first token.
    pub ttft: Summary,
    /// Between consecutive tokens of one request (exact, per token).
    pub itl: Summary,
    /// Per request: (finish - first token) / (output tokens - 1).
    pub tpot: Summary,
    /// Arrival to last token.
    pub e2e: Summary,
    /// Arrival to first scheduled.
    pub queue_delay: Summary,
    /// Prompt tokens of finished requests per simulated second.
    pub input_tokens_per_s: f64,
    /// Output tokens per simulated second.
    pub output_tokens_per_s: f64,
    pub preemptions: u64,
    pub prefix_hit_tokens: u64,
    pub prefix_query_tokens: u64,
    /// Cached prompt tokens / prompt tokens looked up.
    pub prefix_hit_rate: f64,
    /// Time-weighted mean of requests in the system (waiting or running).
    pub mean_in_system: f64,
    /// Fraction of time with a step in flight.
    pub busy_fraction: f64,
    pub kv_blocks_total: u32,
    pub peak_kv_blocks_used: u32,
    /// The run's figures as `vllm bench serve` names and defines them (milliseconds and per
    /// second; TPOT excludes the first token, as there).
    pub vllm: crate::replica::metrics::ServeMetrics,
    pub series: Vec<SeriesPoint>,
    pub requests: Vec<RequestRecord>,
    pub trace: Vec<StepTrace>,
}

/// Everything a UI needs to draw the run at this moment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimSnapshot {
    pub now: f64,
    pub arrived: u64,
    pub finished: u64,
    pub next_arrival: Option<f64>,
    pub done: bool,
    pub replica: ReplicaSnapshot,
}

/// One replica fed by one workload.
#[derive(Clone, Debug)]
pub struct ReplicaSim {
    cfg: ReplicaSimConfig,
    replica: Replica,
    stream: RequestStream,
    events: Vec<ReplicaEvent>,
    records: Vec<RequestRecord>,
    finished: u64,
    rejected: u64,
    in_system: u64,
    area: f64,
    area_t: f64,
    last_t: f64,
    series: Vec<SeriesPoint>,
    sample_idx: u64,
    last_point: SeriesPoint,
    peak_kv: u32,
    verdict: Option<Verdict>,
    /// With a concurrency cap: the time the cap last let a waiting request go (a request due
    /// earlier is sent then).
    gate_t: f64,
}

/// Longest time series kept, in points.
pub const MAX_SERIES_POINTS: usize = 200_000;

fn default_sample_interval() -> f64 {
    1.0
}

impl Default for WorkLimits {
    fn default() -> Self {
        WorkLimits {
            max_steps: 20_000_000,
            max_waiting: 100_000,
            max_requests: 1_000_000,
        }
    }
}

impl WorkLimits {
    /// The highest each cap may be set to.
    pub const MAX: WorkLimits = WorkLimits {
        max_steps: 200_000_000,
        max_waiting: 1_000_000,
        max_requests: 5_000_000,
    };

    pub fn validate(&self) -> Result<(), ConfigError> {
        let m = WorkLimits::MAX;
        let caps = [
            ("max_steps", self.max_steps, m.max_steps),
            ("max_waiting", self.max_waiting as u64, m.max_waiting as u64),
            ("max_requests", self.max_requests, m.max_requests),
        ];
        crate::error::check_caps(&caps)
    }
}

impl ReplicaSimConfig {
    /// The seed replica under its share of the seed load (6.25 req/s, 1,000 in, 250 out) for an hour.
    pub fn seed() -> Self {
        ReplicaSimConfig {
            replica: ReplicaConfig::seed(),
            workload: WorkloadConfig::seed_replica(),
            limits: WorkLimits::default(),
            sample_interval_s: 1.0,
            max_concurrency: None,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        self.replica.validate().map_err(|e| e.within("replica"))?;
        self.workload.validate().map_err(|e| e.within("workload"))?;
        self.limits.validate().map_err(|e| e.within("limits"))?;
        check_range("sample_interval_s", self.sample_interval_s, 1e-3, 1e6)?;
        if self.max_concurrency == Some(0) {
            return Err(ConfigError::new(
                "max_concurrency",
                "a concurrency cap must let at least one request in flight",
            ));
        }
        Ok(())
    }
}

impl ReplicaSim {
    pub fn new(cfg: ReplicaSimConfig) -> Result<ReplicaSim, ConfigError> {
        cfg.validate()?;
        let mut replica = Replica::new(cfg.replica.clone()).map_err(|e| e.within("replica"))?;
        replica.set_step_limit(cfg.limits.max_steps);
        let stream = RequestStream::new(&cfg.workload).map_err(|e| e.within("workload"))?;
        Ok(ReplicaSim {
            replica,
            stream,
            events: Vec::new(),
            records: Vec::new(),
            finished: 0,
            rejected: 0,
            in_system: 0,
            area: 0.0,
            area_t: 0.0,
            last_t: 0.0,
            series: Vec::new(),
            sample_idx: 0,
            last_point: SeriesPoint {
                t: 0.0,
                kv_blocks_used: 0,
                kv_usage: 0.0,
                running: 0,
                waiting: 0,
            },
            peak_kv: 0,
            verdict: None,
            gate_t: 0.0,
            cfg,
        })
    }

    pub fn replica(&self) -> &Replica {
        &self.replica
    }

    pub fn config(&self) -> &ReplicaSimConfig {
        &self.cfg
    }

    /// Whether the run is over (completed or stopped at a cap).
    pub fn done(&self) -> bool {
        self.verdict.is_some()
    }

    /// Simulated time of the next arrival or engine event; None when done.
    pub fn next_time(&self) -> Option<f64> {
        if self.verdict.is_some() {
            return None;
        }
        match (self.next_arrival(), self.replica.next_event_time()) {
            (Some(a), Some(r)) => Some(a.min(r)),
            (a, r) => a.or(r),
        }
    }

    /// Whether the client's concurrency cap holds the next request back.
    fn gated(&self) -> bool {
        self.cfg
            .max_concurrency
            .is_some_and(|c| self.in_system >= c as u64)
    }

    /// When the next request is sent: when it is due, or when the concurrency cap lets it
    /// go; None while the cap holds it (a finish will open it) or when the workload is over.
    fn next_arrival(&self) -> Option<f64> {
        if self.gated() {
            return None;
        }
        self.stream.peek_time().map(|a| a.max(self.gate_t))
    }

    /// Processes one event (an arrival, a step start or a step end); false when the run is over.
    pub fn step_event(&mut self) -> bool {
        if self.verdict.is_some() {
            return false;
        }
        let arrival = self.next_arrival();
        let engine = self.replica.next_event_time();
        let take_arrival = match (arrival, engine) {
            (None, None) => {
                let arrived = self.records.len() as u64;
                self.verdict = Some(if arrived > 0 && self.rejected == arrived {
                    Verdict::NothingServed
                } else {
                    Verdict::Completed
                });
                self.fill_series(self.last_t);
                return false;
            }
            (Some(a), Some(e)) => a <= e,
            (Some(_), None) => true,
            (None, Some(_)) => false,
        };
        if take_arrival {
            self.arrive();
        } else {
            self.replica.process_next(&mut self.events);
            self.after_engine();
        }
        true
    }

    /// Processes every event up to simulated time `t`, fast-forwarding runs of decode-only steps.
    pub fn advance_to(&mut self, t: f64) {
        self.run_until(t);
        if self.verdict.is_none() {
            self.replica.advance_to(t, &mut self.events);
            self.absorb_events();
        }
    }

    /// Processes up to `n` events one at a time; returns how many were processed.
    pub fn advance_for_work(&mut self, n: u64) -> u64 {
        let mut done = 0;
        while done < n && self.step_event() {
            done += 1;
        }
        done
    }

    /// Runs to the end (or to a cap) and reports.
    pub fn run(&mut self) -> RunReport {
        self.run_until(f64::INFINITY);
        self.report()
    }

    /// Processes every event at or before `limit`: arrivals one by one, engine steps in
    /// batches up to the next arrival (so the replica can fast-forward), in chunks of simulated
    /// time so the event buffer stays small.
    fn run_until(&mut self, limit: f64) {
        const CHUNK_S: f64 = 5.0;
        while self.verdict.is_none() {
            let arrival = self.next_arrival().filter(|&a| a <= limit);
            let engine = self.replica.next_event_time().filter(|&e| e <= limit);
            match (arrival, engine) {
                // The cap holds a request back: go one engine event at a time, so the finish
                // that lets it go is seen at its own time.
                (None, Some(_)) if self.gated() => {
                    self.replica.process_next(&mut self.events);
                    self.after_engine();
                }
                (None, None) => {
                    if self.next_time().is_none() {
                        self.step_event();
                    }
                    return;
                }
                (Some(a), Some(e)) if e < a => {
                    let h = (e + CHUNK_S).min(limit);
                    if h < a {
                        self.replica.advance_to(h, &mut self.events);
                    } else {
                        self.replica.advance_before(a, &mut self.events);
                    }
                    self.after_engine();
                }
                (Some(_), _) => self.arrive(),
                (None, Some(e)) => {
                    let h = (e + CHUNK_S).min(limit);
                    self.replica.advance_to(h, &mut self.events);
                    self.after_engine();
                }
            }
        }
    }

    fn after_engine(&mut self) {
        self.absorb_events();
        if self.replica.metrics().steps >= self.cfg.limits.max_steps {
            self.stop(OverloadReason::StepLimit);
        }
    }

    pub fn snapshot(&self) -> SimSnapshot {
        SimSnapshot {
            now: self.replica.now(),
            arrived: self.records.len() as u64,
            finished: self.finished,
            next_arrival: self.stream.peek_time(),
            done: self.verdict.is_some(),
            replica: self.replica.snapshot(),
        }
    }

    /// Requests so far, indexed by id.
    pub fn records(&self) -> &[RequestRecord] {
        &self.records
    }

    /// What the run has measured so far (the whole run once it is done).
    pub fn report(&self) -> RunReport {
        let mut ttft = Samples::new();
        let mut tpot = Samples::new();
        let mut e2e = Samples::new();
        let mut queue = Samples::new();
        let mut output_tokens = 0u64;
        for r in &self.records {
            if let Some(a) = r.admitted {
                queue.push(a - r.arrival);
            }
            if let Some(f) = r.first_token {
                ttft.push(f - r.arrival);
            }
            if let Some(end) = r.finish {
                if !r.rejected {
                    e2e.push(end - r.arrival);
                    if let Some(f) = r.first_token.filter(|_| r.output_tokens > 1) {
                        tpot.push((end - f) / (r.output_tokens - 1) as f64);
                    }
                }
            }
            output_tokens += r.output_tokens as u64;
        }
        let m = self.replica.metrics();
        let t = self.last_t;
        let per_s = |x: u64| if t > 0.0 { x as f64 / t } else { 0.0 };
        let mut series = self.series.clone();
        if self.verdict.is_none() {
            // Not done: show the series up to now.
            let mut idx = self.sample_idx;
            while self.sample_time(idx) <= t && series.len() < MAX_SERIES_POINTS {
                series.push(SeriesPoint {
                    t: self.sample_time(idx),
                    ..self.last_point
                });
                idx += 1;
            }
        }
        let area = self.area + self.in_system as f64 * (t - self.area_t);
        let itl = m.itl.summary_of_copy();
        RunReport {
            verdict: self.verdict.unwrap_or(Verdict::Running),
            sim_time_s: t,
            steps: m.steps,
            arrived: self.records.len() as u64,
            finished: self.finished,
            rejected: self.rejected,
            in_flight: self.in_system,
            ttft: ttft.summary(),
            vllm: crate::replica::metrics::ServeMetrics::from_records(&self.records, &itl, None),
            itl,
            tpot: tpot.summary(),
            e2e: e2e.summary(),
            queue_delay: queue.summary(),
            input_tokens_per_s: per_s(m.finished_prompt_tokens),
            output_tokens_per_s: per_s(output_tokens),
            preemptions: m.preemptions,
            prefix_hit_tokens: m.prefix_hit_tokens,
            prefix_query_tokens: m.prefix_query_tokens,
            prefix_hit_rate: if m.prefix_query_tokens > 0 {
                m.prefix_hit_tokens as f64 / m.prefix_query_tokens as f64
            } else {
                0.0
            },
            mean_in_system: if t > 0.0 { area / t } else { 0.0 },
            busy_fraction: if t > 0.0 {
                (m.busy_time_s / t).min(1.0)
            } else {
                0.0
            },
            kv_blocks_total: self.replica.kv_blocks_total(),
            peak_kv_blocks_used: self.peak_kv,
            series,
            requests: self.records.clone(),
            trace: self.replica.trace().to_vec(),
        }
    }

    fn arrive(&mut self) {
        let Some(g) = self.stream.next() else {
            return;
        };
        // Sent when due, or later when a concurrency cap held it back.
        let t = g.arrival.max(self.gate_t);
        self.mark_time(t);
        self.area += self.in_system as f64 * (t - self.area_t);
        self.area_t = t;
        self.in_system += 1;
        // Records are indexed by id; the stream numbers requests 0, 1, 2, ... in order.
        self.records.push(RequestRecord {
            id: g.id,
            tenant: g.tenant,
            session: g.session,
            arrival: t,
            prompt_len: g.prompt.len(),
            output_len: g.output_len,
            admitted: None,
            first_token: None,
            finish: None,
            output_tokens: 0,
            preemptions: 0,
            rejected: false,
            token_times: None,
        });
        self.replica.submit(
            t,
            EngineRequest {
                id: g.id,
                prompt: g.prompt,
                output_len: g.output_len,
                tenant: g.tenant,
            },
        );
        // A rejection is reported at once; fetch it now.
        self.replica.drain_events(&mut self.events);
        self.absorb_events();
        let load = self.replica.load();
        if load.waiting > self.cfg.limits.max_waiting {
            self.stop(OverloadReason::QueueLimit);
        } else if self.records.len() as u64 >= self.cfg.limits.max_requests
            && self.stream.peek_time().is_some()
        {
            self.stop(OverloadReason::RequestLimit);
        }
    }

    fn stop(&mut self, reason: OverloadReason) {
        self.verdict = Some(Verdict::Overloaded {
            reason,
            at: self.last_t,
        });
    }

    fn mark_time(&mut self, t: f64) {
        if t > self.last_t {
            self.last_t = t;
        }
    }

    fn record(&mut self, id: u64) -> Option<&mut RequestRecord> {
        self.records.get_mut(usize::try_from(id).ok()?)
    }

    fn absorb_events(&mut self) {
        let mut events = std::mem::take(&mut self.events);
        for e in events.drain(..) {
            match e {
                ReplicaEvent::Admitted { id, t } => {
                    if let Some(r) = self.record(id) {
                        r.admitted = Some(t);
                    }
                }
                ReplicaEvent::FirstToken { id, t } => {
                    if let Some(r) = self.record(id) {
                        r.first_token = Some(t);
                    }
                }
                ReplicaEvent::Preempted { id, .. } => {
                    if let Some(r) = self.record(id) {
                        r.preemptions += 1;
                    }
                }
                ReplicaEvent::Finished {
                    id,
                    t,
                    output_tokens,
                } => {
                    self.mark_time(t);
                    self.area += self.in_system as f64 * (t - self.area_t);
                    self.area_t = t;
                    if self.gated() {
                        self.gate_t = t;
                    }
                    self.in_system = self.in_system.saturating_sub(1);
                    self.finished += 1;
                    let rejected = output_tokens == 0;
                    self.rejected += rejected as u64;
                    if let Some(r) = self.record(id) {
                        r.finish = Some(t);
                        r.output_tokens = output_tokens;
                        r.rejected = rejected;
                    }
                }
                ReplicaEvent::StepEnd {
                    t,
                    running,
                    waiting,
                    kv_blocks_used,
                    ..
                } => {
                    self.mark_time(t);
                    self.fill_series(t);
                    let total = self.replica.kv_blocks_total().max(1);
                    self.last_point = SeriesPoint {
                        t,
                        kv_blocks_used,
                        kv_usage: kv_blocks_used as f64 / total as f64,
                        running,
                        waiting,
                    };
                    self.peak_kv = self.peak_kv.max(kv_blocks_used);
                }
            }
        }
        self.events = events;
        if self.cfg.replica.record_token_times {
            for (id, times) in self.replica.drain_token_times() {
                if let Some(r) = self.record(id) {
                    r.token_times = Some(times);
                }
            }
        }
    }

    /// Emits the sample points strictly before `t` with the state as of the last step end.
    fn fill_series(&mut self, t: f64) {
        while self.sample_time(self.sample_idx) < t && self.series.len() < MAX_SERIES_POINTS {
            self.series.push(SeriesPoint {
                t: self.sample_time(self.sample_idx),
                ..self.last_point
            });
            self.sample_idx += 1;
        }
    }

    fn sample_time(&self, idx: u64) -> f64 {
        idx as f64 * self.cfg.sample_interval_s
    }
}
