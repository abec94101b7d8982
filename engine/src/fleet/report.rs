//! What a fleet run measured: outcomes, the four clocks, the gap by hop, open streams against
//! Little's law, tenants, pools, the autoscaler and cost.

use super::autoscaler::{ScaleEvent, SignalPoint};
use super::clocks::Histogram;
use super::quota::TenantCounters;
use super::sim::{FleetSim, FleetVerdict, ReplicaState, SeriesPoint};
use crate::stats::Summary;
use serde::{Deserialize, Serialize};

/// The probabilities at which [`Cdf`] reads a distribution: every percent, then the tail
/// (99.5 %, 99.9 %) and the maximum.
pub const CDF_QUANTILES: [f64; 102] = {
    let mut q = [0.0; 102];
    let mut i = 0;
    while i < 99 {
        q[i] = (i + 1) as f64 / 100.0;
        i += 1;
    }
    q[99] = 0.995;
    q[100] = 0.999;
    q[101] = 1.0;
    q
};

/// A latency distribution as (value in seconds, fraction at or below) at [`CDF_QUANTILES`];
/// empty when nothing was measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cdf {
    pub count: u64,
    pub points: Vec<(f64, f64)>,
}

impl Cdf {
    /// The curve of a histogram, at its own (nearest-rank) quantiles.
    pub fn of(h: &Histogram) -> Cdf {
        if h.is_empty() {
            return Cdf::default();
        }
        Cdf {
            count: h.len(),
            points: h
                .quantiles(&CDF_QUANTILES)
                .into_iter()
                .zip(CDF_QUANTILES)
                .collect(),
        }
    }

    /// The value at probability `q`, read off the curve (the first point at or above it).
    pub fn at(&self, q: f64) -> f64 {
        self.points
            .iter()
            .find(|p| p.1 >= q - 1e-12)
            .or(self.points.last())
            .map_or(0.0, |p| p.0)
    }
}

/// The six latency curves: TTFT at the engine, the gateway and the client, and ITL at the
/// same three places.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Distributions {
    pub engine_ttft: Cdf,
    pub server_ttft: Cdf,
    pub user_ttft: Cdf,
    pub engine_itl: Cdf,
    pub gateway_itl: Cdf,
    pub client_itl: Cdf,
}

/// One replica's work over the run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaSummary {
    pub pool: usize,
    pub state: ReplicaState,
    /// Requests the router sent it.
    pub routed: u64,
    /// Requests it held (running and waiting), averaged over the points of the series.
    pub mean_outstanding: f64,
    /// Fraction of its life spent running steps.
    pub busy_fraction: f64,
    pub output_tokens: u64,
    pub preemptions: u64,
}

/// The whole report of a run (or of the run so far).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FleetReport {
    /// How the run ended: completed, nothing served, or overloaded (which cap, and when).
    #[serde(flatten)]
    pub verdict: FleetVerdict,
    /// Things a reader must know to trust the figures (empty in an ordinary run).
    pub warnings: Vec<String>,
    /// Simulated time reached, seconds.
    pub end_s: f64,
    /// When the traffic stopped, seconds.
    pub horizon_s: f64,
    /// Events the simulation processed.
    pub events: u64,
    pub outcomes: Outcomes,
    pub clocks: Clocks,
    pub gap: GapBreakdown,
    pub streams: Streams,
    pub slo: SloReport,
    pub tenants: Vec<TenantReport>,
    pub pools: Vec<PoolReport>,
    pub scale_events: Vec<ScaleEvent>,
    /// Every evaluation of the autoscaler: what its signal read.
    pub autoscaler_signal: Vec<SignalPoint>,
    pub series: Vec<SeriesPoint>,
    /// The engines' gauges over the series, per ready replica (kept when a page drops the
    /// series itself).
    #[serde(default)]
    pub gauges: Gauges,
    pub cost: CostReport,
    /// Engine TTFT in the parts it is made of (in a disaggregated fleet: queueing, prefill,
    /// the KV cache's move, the first decode step).
    #[serde(default)]
    pub ttft_split: TtftSplit,
    /// KV caches moved from prefill to decode replicas (none in an ordinary fleet).
    #[serde(default)]
    pub kv_transfer: KvTransferReport,
    /// What `vllm bench serve` would report from the clients, under its names: TTFT and E2EL
    /// from client sends to the first and last byte at the client, ITL between tokens as the
    /// client reads them, TPOT per request at the engine (the fleet keeps distributions, so
    /// there are no standard deviations and no goodput here; `slo` has the attainments).
    pub vllm: crate::replica::metrics::ServeMetrics,
}

/// How every arriving request ended: `arrived` = completed + rejected + spilled + timed out
/// + abandoned + failed + in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcomes {
    pub arrived: u64,
    pub completed: u64,
    /// 429 from the quota store.
    pub rejected_quota: u64,
    /// 429 from overflow shedding.
    pub rejected_shed: u64,
    /// No ready replica, or the engine could never hold the request.
    pub rejected_no_replica: u64,
    /// 429 from the gateway's bounds: its queue was full, or every replica held
    /// `gateway.max_outstanding_per_replica` requests.
    pub rejected_gateway: u64,
    /// The client gave up before its first token (`clients.timeout_s`).
    pub timed_out: u64,
    /// The client closed the connection before its reply ended
    /// (`clients.abandon_fraction`), and of those, the ones that had read part of a reply.
    #[serde(default)]
    pub abandoned: u64,
    #[serde(default)]
    pub abandoned_mid_reply: u64,
    /// Requests of clients that left (timed out or abandoned) that an engine held and
    /// dropped at once, its blocks freed (`gateway.abort_on_disconnect`).
    pub cancelled_in_engine: u64,
    /// Output tokens engines sampled after the client had left: work nobody reads (none
    /// when the gateway tells the engine, but the step in flight).
    #[serde(default)]
    pub tokens_for_nobody: u64,
    /// Tokens of conversation the clients left out of the prompts they sent: the oldest parts
    /// of chats their history limit dropped (0 when every turn resends everything).
    #[serde(default)]
    pub history_dropped: u64,
    /// Streams broken by a replica failure (the client had part of its reply, or the
    /// gateway's retries ran out), requests the gateway sent again after one, and replicas
    /// that failed.
    #[serde(default)]
    pub failed: u64,
    #[serde(default)]
    pub retried: u64,
    #[serde(default)]
    pub replicas_failed: u32,
    pub spilled_to_pool: u64,
    pub spilled_to_hosted: u64,
    pub in_flight: u64,
}

impl Outcomes {
    pub fn rejected(&self) -> u64 {
        self.rejected_quota + self.rejected_shed + self.rejected_no_replica + self.rejected_gateway
    }

    pub fn spilled(&self) -> u64 {
        self.spilled_to_pool + self.spilled_to_hosted
    }
}

/// The clocks as distributions, seconds. TTFTs and E2E are per request; ITLs are per token.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Clocks {
    /// Engine receives -> first token sampled (requests served by the fleet's engines).
    pub engine_ttft: Summary,
    /// Gateway receives -> first byte written.
    pub server_ttft: Summary,
    /// Client sends -> first byte at the client.
    pub user_ttft: Summary,
    /// Gap between a sequence's tokens at the engine (every decode token).
    pub engine_itl: Summary,
    /// Gap between events written by the gateway (streamed tokens).
    pub gateway_itl: Summary,
    /// Gap between tokens as the client probe reads them.
    pub client_itl: Summary,
    /// Per request: (last token - first token) / (output tokens - 1) at the engine.
    pub tpot: Summary,
    /// Client sends -> last byte at the client.
    pub e2e: Summary,
    /// Engine receives -> first scheduled (the engine's own queue).
    pub engine_queue: Summary,
}

/// Server TTFT minus engine TTFT, and the hops it is made of (streamed requests), seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GapBreakdown {
    pub server_minus_engine: Summary,
    pub auth: Summary,
    pub tokenize: Summary,
    pub quota: Summary,
    pub router: Summary,
    pub connect: Summary,
    pub relay: Summary,
}

/// The gauges an engine exports (`vllm:num_requests_running`, `vllm:num_requests_waiting`,
/// `vllm:kv_cache_usage_perc`), per ready replica, over the points of the series.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gauges {
    pub running: Gauge,
    pub waiting: Gauge,
    /// KV blocks in use over the blocks there are (0 to 1).
    pub kv_usage: Gauge,
}

/// A gauge's mean and peak over the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gauge {
    pub mean: f64,
    pub peak: f64,
}

impl Gauges {
    /// Over `series`, leaving out points with no replica ready.
    pub fn of(series: &[SeriesPoint]) -> Gauges {
        let gauge = |f: &dyn Fn(&SeriesPoint) -> Option<f64>| {
            let (mut n, mut sum, mut peak) = (0usize, 0.0, 0.0f64);
            for v in series.iter().filter(|p| p.ready_replicas > 0).filter_map(f) {
                n += 1;
                sum += v;
                peak = peak.max(v);
            }
            Gauge {
                mean: if n > 0 { sum / n as f64 } else { 0.0 },
                peak,
            }
        };
        let per = |v: f64, p: &SeriesPoint| v / p.ready_replicas as f64;
        Gauges {
            running: gauge(&|p| Some(per(p.running as f64, p))),
            waiting: gauge(&|p| Some(per(p.waiting as f64, p))),
            kv_usage: gauge(&|p| {
                (p.kv_blocks_total > 0).then(|| p.kv_blocks_used as f64 / p.kv_blocks_total as f64)
            }),
        }
    }
}

/// Streams held by the gateway.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Streams {
    /// Time-weighted mean of open streams while traffic arrives (over [0, horizon]).
    pub open_mean: f64,
    /// Highest open-stream count among the sampled points of the series.
    pub open_max: u32,
    pub opened: u64,
    pub closed: u64,
    /// Streams opened per second over [0, horizon].
    pub arrival_rate: f64,
    /// Mean time a stream stays open (gateway receives -> last byte written), seconds.
    pub mean_stream_s: f64,
    /// Little's law from the simulated streams: arrival rate x mean stream time.
    pub littles_law: f64,
    /// The back-of-the-envelope estimate: arrival rate x mean output tokens x the TPOT target.
    pub estimate_at_tpot_target: f64,
}

/// Attainment of the service-level objectives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SloReport {
    pub ttft_s: f64,
    pub tpot_s: f64,
    /// Fraction of served requests whose server TTFT met the target.
    pub server_ttft_attainment: f64,
    /// Fraction of served requests whose TPOT met the target.
    pub tpot_attainment: f64,
}

/// One tenant's traffic and quota.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TenantReport {
    pub tenant: u32,
    pub arrived: u64,
    pub completed: u64,
    pub quota: TenantCounters,
}

/// A served request's engine TTFT (engine receives to first token) in four parts that add
/// up to it, seconds. On a replica that prefills and decodes, the prefill ends with the first
/// token, and `transfer` and `first_decode` are zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TtftSplit {
    /// Waiting to be scheduled: for the prefill replica, then for the decode replica once
    /// the KV cache is there.
    pub queue: Summary,
    /// First scheduled on the prefill replica to the prompt computed.
    pub prefill: Summary,
    /// Prefill done to the KV cache on the decode replica: the gateway's connection to it,
    /// the wait for a free link, the transfer.
    pub transfer: Summary,
    /// The decode replica's first step: the last prompt token and the reply's first token.
    pub first_decode: Summary,
}

/// KV caches moved from prefill to decode replicas.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KvTransferReport {
    /// The link's catalog id (empty in an ordinary fleet).
    pub link: String,
    pub transfers: u64,
    pub bytes: f64,
    /// Seconds a transfer waited for the link to be free at both ends.
    pub wait: Summary,
    /// Seconds a transfer took on the link.
    pub time: Summary,
}

/// One pool's replicas and work.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolReport {
    pub name: String,
    /// Replicas ready at the end of the run.
    pub ready_at_end: u32,
    /// Most replicas provisioned at once (starting, ready or draining).
    pub peak_provisioned: u32,
    pub gpu_hours: f64,
    /// Fraction of provisioned replica time spent running steps ("GPU utilisation").
    pub busy_fraction: f64,
    pub steps: u64,
    pub output_tokens: u64,
    pub routed: u64,
    pub preemptions: u64,
    /// Prompt tokens found in the prefix cache / prompt tokens looked up.
    pub prefix_hit_rate: f64,
    /// Speculative decoding: guesses accepted / guesses verified (0 without speculation).
    #[serde(default)]
    pub spec_acceptance: f64,
    /// Tokens a decoding request gains per verifying step: its accepted guesses and the
    /// target's own token (0 without speculation).
    #[serde(default)]
    pub spec_tokens_per_step: f64,
    /// Its role (prefill and decode together, or one of them).
    #[serde(default)]
    pub role: crate::fleet::PoolRole,
    /// Fraction of provisioned replica time its links spent moving KV caches
    /// (disaggregated fleets).
    #[serde(default)]
    pub link_busy_fraction: f64,
    /// Host-memory tier: prompt tokens found there and copied back / prompt tokens looked up
    /// (0 without one), and the compute the copies saved, net of their own time, seconds.
    #[serde(default)]
    pub host_hit_rate: f64,
    #[serde(default)]
    pub reload_saved_s: f64,
    /// LoRA adapters (0 without them): copies into GPU slots (misses), those read from
    /// storage first, the seconds the copies added to steps (every request in such a step
    /// waits for them), the seconds of the adapters' kernels, and the requests passed over at
    /// least once because their adapter was one too many for a step.
    #[serde(default)]
    pub lora_loads: u64,
    #[serde(default)]
    pub lora_storage_loads: u64,
    #[serde(default)]
    pub lora_load_s: f64,
    #[serde(default)]
    pub lora_kernel_s: f64,
    #[serde(default)]
    pub lora_passed_over: u64,
}

/// What the run cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CostReport {
    pub gpu_hours: f64,
    pub gpu_dollars: f64,
    pub hosted_dollars: f64,
    /// Output tokens of served requests (the fleet's and the hosted API's).
    pub output_tokens: u64,
    pub dollars_per_million_output_tokens: f64,
}

impl FleetSim {
    /// The report of the run so far (call after [`FleetSim::run`] for the whole run).
    pub fn report(&self) -> FleetReport {
        let st = &self.stats;
        let outcomes = Outcomes {
            arrived: st.arrived,
            completed: st.completed,
            rejected_quota: st.rejected_quota,
            rejected_shed: st.rejected_shed,
            rejected_no_replica: st.rejected_no_replica + st.rejected_engine,
            rejected_gateway: st.rejected_gateway,
            timed_out: st.timed_out,
            abandoned: st.abandoned,
            abandoned_mid_reply: st.abandoned_mid_reply,
            cancelled_in_engine: st.cancelled_in_engine,
            tokens_for_nobody: st.tokens_for_nobody,
            history_dropped: st.history_dropped,
            failed: st.failed,
            retried: st.retried,
            replicas_failed: st.replicas_failed,
            spilled_to_pool: st.spilled_pool,
            spilled_to_hosted: st.spilled_hosted,
            in_flight: 0,
        };
        let outcomes = Outcomes {
            in_flight: outcomes.arrived
                - outcomes.completed
                - outcomes.rejected()
                - outcomes.spilled()
                - outcomes.timed_out
                - outcomes.abandoned
                - outcomes.failed,
            ..outcomes
        };
        let (gateway_itl, client_itl) = self.itl_histograms();
        let client_itl = client_itl.as_ref().unwrap_or(&gateway_itl).summary();
        let clocks = Clocks {
            engine_ttft: st.engine_ttft.summary(),
            server_ttft: st.server_ttft.summary(),
            user_ttft: st.user_ttft.summary(),
            engine_itl: st.engine_itl.summary(),
            gateway_itl: gateway_itl.summary(),
            client_itl,
            tpot: st.tpot.summary(),
            e2e: st.e2e.summary(),
            engine_queue: st.engine_queue.summary(),
        };
        let gap = GapBreakdown {
            server_minus_engine: st.gap.summary(),
            auth: st.hop_auth.summary(),
            tokenize: st.hop_tokenize.summary(),
            quota: st.hop_quota.summary(),
            router: st.hop_router.summary(),
            connect: st.hop_connect.summary(),
            relay: st.hop_relay.summary(),
        };
        let horizon = self.horizon.max(1e-9);
        let covered = self.now.min(self.horizon).max(1e-9);
        let arrival_rate = st.horizon_streams as f64 / horizon;
        let mean_stream_s = if st.horizon_streams > 0 {
            st.horizon_stream_ns as f64 * 1e-9 / st.horizon_streams as f64
        } else {
            0.0
        };
        let served = st.completed + st.spilled_pool + st.spilled_hosted;
        let mean_output = if served > 0 {
            st.output_tokens as f64 / served as f64
        } else {
            0.0
        };
        let streams = Streams {
            open_mean: (st.open_area_ns as f64 * 1e-9 + self.open_area_in_flight(self.now))
                / covered,
            open_max: st.open_max,
            opened: st.streams_opened,
            closed: st.streams_closed,
            arrival_rate,
            mean_stream_s,
            littles_law: arrival_rate * mean_stream_s,
            estimate_at_tpot_target: arrival_rate * mean_output * self.cfg.slo.tpot_s,
        };
        let slo = SloReport {
            ttft_s: self.cfg.slo.ttft_s,
            tpot_s: self.cfg.slo.tpot_s,
            server_ttft_attainment: st.server_ttft.fraction_at_or_below(self.cfg.slo.ttft_s),
            tpot_attainment: st.tpot.fraction_at_or_below(self.cfg.slo.tpot_s),
        };
        let tenants = self
            .quota
            .counters()
            .iter()
            .enumerate()
            .map(|(i, q)| TenantReport {
                tenant: i as u32,
                arrived: st.tenant_arrived.get(i).copied().unwrap_or(0),
                completed: st.tenant_completed.get(i).copied().unwrap_or(0),
                quota: *q,
            })
            .collect();
        let mut pools = Vec::with_capacity(self.cfg.pools.len());
        let mut gpu_hours = 0.0;
        let mut gpu_dollars = 0.0;
        for (p, pc) in self.cfg.pools.iter().enumerate() {
            let mut rep = PoolReport {
                name: pc.name.clone(),
                role: pc.role,
                ..PoolReport::default()
            };
            let mut link_s = 0.0;
            let mut host_hit = 0u64;
            let mut alive_s = 0.0;
            let mut busy_s = 0.0;
            let mut hit = 0u64;
            let mut query = 0u64;
            let (mut proposed, mut accepted, mut verifies) = (0u64, 0u64, 0u64);
            for r in self.replicas.iter().filter(|r| r.pool == p) {
                let m = r.replica.metrics();
                let end = r.stopped_at.unwrap_or(self.now);
                alive_s += (end - r.created_at).max(0.0);
                busy_s += m.busy_time_s;
                rep.steps += m.steps;
                rep.output_tokens += m.output_tokens;
                rep.preemptions += m.preemptions;
                rep.routed += r.routed;
                link_s += r.link_busy_s;
                hit += m.prefix_hit_tokens;
                host_hit += m.host_hit_tokens;
                rep.reload_saved_s += m.reload_saved_s;
                rep.lora_loads += m.lora_loads;
                rep.lora_storage_loads += m.lora_storage_loads;
                rep.lora_load_s += m.lora_load_s;
                rep.lora_kernel_s += m.lora_kernel_s;
                rep.lora_passed_over += m.lora_passed_over;
                query += m.prefix_query_tokens;
                proposed += m.spec_proposed;
                accepted += m.spec_accepted;
                verifies += m.spec_verifies;
                if r.state == ReplicaState::Ready {
                    rep.ready_at_end += 1;
                }
            }
            rep.peak_provisioned = peak_provisioned(self, p);
            let tp = pc.replica.deployment.tp as f64;
            rep.gpu_hours = alive_s * tp / 3600.0;
            rep.busy_fraction = if alive_s > 0.0 { busy_s / alive_s } else { 0.0 };
            rep.link_busy_fraction = if alive_s > 0.0 { link_s / alive_s } else { 0.0 };
            rep.prefix_hit_rate = if query > 0 {
                hit as f64 / query as f64
            } else {
                0.0
            };
            rep.host_hit_rate = if query > 0 {
                host_hit as f64 / query as f64
            } else {
                0.0
            };
            if proposed > 0 {
                rep.spec_acceptance = accepted as f64 / proposed as f64;
            }
            if verifies > 0 {
                rep.spec_tokens_per_step = 1.0 + accepted as f64 / verifies as f64;
            }
            gpu_hours += rep.gpu_hours;
            gpu_dollars += rep.gpu_hours * pc.gpu_hour_price;
            pools.push(rep);
        }
        let dollars = gpu_dollars + st.hosted_dollars;
        let cost = CostReport {
            gpu_hours,
            gpu_dollars,
            hosted_dollars: st.hosted_dollars,
            output_tokens: st.output_tokens,
            dollars_per_million_output_tokens: if st.output_tokens > 0 {
                dollars / (st.output_tokens as f64 / 1e6)
            } else {
                0.0
            },
        };
        let mut warnings = Vec::new();
        let all = [
            ("engine TTFT", &st.engine_ttft),
            ("server TTFT", &st.server_ttft),
            ("user TTFT", &st.user_ttft),
            ("end to end", &st.e2e),
            ("engine queue", &st.engine_queue),
            ("TPOT", &st.tpot),
        ];
        for (name, h) in all {
            if h.clamped() > 0 {
                warnings.push(format!(
                    "{} {name} measurements exceeded the histogram's range (about 146 years) \
                     and are counted at its top: its high percentiles are lower bounds",
                    h.clamped()
                ));
            }
        }
        let kept = self.records.len();
        if self.cfg.record_requests
            && kept >= self.cfg.limits.max_records as usize
            && st.arrived > kept as u64
        {
            warnings.push(format!(
                "only the first {kept} request records were kept (limits.max_records)"
            ));
        }
        FleetReport {
            verdict: self.verdict(),
            warnings,
            end_s: self.now,
            horizon_s: self.horizon,
            events: st.events,
            outcomes,
            clocks,
            gap,
            streams,
            slo,
            tenants,
            pools,
            scale_events: self.scale_events.clone(),
            autoscaler_signal: self.signal_series.clone(),
            series: self.series.clone(),
            gauges: Gauges::of(&self.series),
            cost,
            ttft_split: TtftSplit {
                queue: st.ttft_queue.summary(),
                prefill: st.ttft_prefill.summary(),
                transfer: st.ttft_transfer.summary(),
                first_decode: st.ttft_first_decode.summary(),
            },
            kv_transfer: KvTransferReport {
                link: self.link.as_ref().map(|l| l.id.clone()).unwrap_or_default(),
                transfers: st.kv_transfers,
                bytes: st.kv_bytes,
                wait: st.kv_link_wait.summary(),
                time: st.kv_link_time.summary(),
            },
            vllm: self.vllm_metrics(&clocks),
        }
    }

    /// ITL at the gateway and, when it differs (a buffered relay), at the client, with the
    /// hosted API's replies merged in: the distributions the report summarises.
    fn itl_histograms(&self) -> (Histogram, Option<Histogram>) {
        let st = &self.stats;
        let mut gateway_itl = if self.all_streaming {
            st.engine_itl.clone()
        } else {
            st.gateway_itl.clone()
        };
        gateway_itl.merge(&st.hosted_gateway_itl);
        let client_itl = (!self.unbuffered).then(|| {
            let mut c = st.client_itl.clone();
            c.merge(&st.hosted_client_itl);
            c
        });
        (gateway_itl, client_itl)
    }

    /// The latency distributions of the run so far as cumulative curves, each at the
    /// quantiles [`CDF_QUANTILES`] (the same nearest-rank figures as the report's
    /// summaries): a bounded picture of every clock, however long the run.
    pub fn distributions(&self) -> Distributions {
        let st = &self.stats;
        let (gateway_itl, client_itl) = self.itl_histograms();
        let client = client_itl.as_ref().unwrap_or(&gateway_itl);
        Distributions {
            engine_ttft: Cdf::of(&st.engine_ttft),
            server_ttft: Cdf::of(&st.server_ttft),
            user_ttft: Cdf::of(&st.user_ttft),
            engine_itl: Cdf::of(&st.engine_itl),
            gateway_itl: Cdf::of(&gateway_itl),
            client_itl: Cdf::of(client),
        }
    }

    /// Each replica's share of the work so far, in the order the replicas were created.
    pub fn replica_summaries(&self) -> Vec<ReplicaSummary> {
        let points = self.series.len().max(1) as f64;
        self.replicas
            .iter()
            .map(|r| {
                let m = r.replica.metrics();
                let end = r.stopped_at.unwrap_or(self.now);
                let alive = (end - r.created_at).max(0.0);
                ReplicaSummary {
                    pool: r.pool,
                    state: r.state,
                    routed: r.routed,
                    mean_outstanding: r.sampled_outstanding as f64 / points,
                    busy_fraction: if alive > 0.0 {
                        m.busy_time_s / alive
                    } else {
                        0.0
                    },
                    output_tokens: m.output_tokens,
                    preemptions: m.preemptions,
                }
            })
            .collect()
    }

    /// The clients' view under `vllm bench serve`'s names (see [`FleetReport::vllm`]).
    fn vllm_metrics(&self, clocks: &Clocks) -> crate::replica::metrics::ServeMetrics {
        let st = &self.stats;
        crate::replica::metrics::ServeMetrics::from_summaries(
            st.completed,
            self.now,
            st.prompt_tokens,
            st.output_tokens,
            &clocks.user_ttft,
            &clocks.tpot,
            &clocks.client_itl,
            &clocks.e2e,
            None,
        )
    }
}

/// Most replicas of pool `p` alive at once, from creation and stop times.
fn peak_provisioned(sim: &FleetSim, p: usize) -> u32 {
    let mut edges: Vec<(f64, i32)> = Vec::new();
    for r in sim.replicas.iter().filter(|r| r.pool == p) {
        edges.push((r.created_at, 1));
        if let Some(s) = r.stopped_at {
            edges.push((s, -1));
        }
    }
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut cur = 0i32;
    let mut peak = 0i32;
    for (_, d) in edges {
        cur += d;
        peak = peak.max(cur);
    }
    peak.max(0) as u32
}
