//! The counters and distributions a report is made from ([`Stats`]), the time series
//! ([`SeriesPoint`], one point per sample) and the snapshot a UI shows ([`FleetSnapshot`]).

use super::{Event, FleetSim, ReplicaState};
use crate::fleet::clocks::Histogram;
use crate::replica::ReplicaLoad;
use serde::{Deserialize, Serialize};

/// Counters and distributions the report is made from.
#[derive(Clone, Debug, Default)]
pub(in crate::fleet) struct Stats {
    pub(in crate::fleet) arrived: u64,
    pub(in crate::fleet) completed: u64,
    pub(in crate::fleet) rejected_quota: u64,
    pub(in crate::fleet) rejected_shed: u64,
    pub(in crate::fleet) rejected_no_replica: u64,
    pub(in crate::fleet) rejected_engine: u64,
    pub(in crate::fleet) rejected_gateway: u64,
    pub(in crate::fleet) timed_out: u64,
    /// Requests whose engine work was cut short by a cancellation.
    pub(in crate::fleet) cancelled_in_engine: u64,
    /// Clients that closed the connection before their reply ended, and of those the ones
    /// that had a first token.
    pub(in crate::fleet) abandoned: u64,
    pub(in crate::fleet) abandoned_mid_reply: u64,
    /// Output tokens engines sampled after their client had left.
    pub(in crate::fleet) tokens_for_nobody: u64,
    /// Tokens of conversation clients left out of their prompts (a session's history limit).
    pub(in crate::fleet) history_dropped: u64,
    /// Streams a replica failure broke, requests sent again after one, and the replicas
    /// that failed.
    pub(in crate::fleet) failed: u64,
    pub(in crate::fleet) retried: u64,
    pub(in crate::fleet) replicas_failed: u32,
    pub(in crate::fleet) spilled_pool: u64,
    pub(in crate::fleet) spilled_hosted: u64,
    pub(in crate::fleet) open_streams: u32,
    pub(in crate::fleet) open_max: u32,
    pub(in crate::fleet) streams_opened: u64,
    pub(in crate::fleet) streams_closed: u64,
    /// Integral of open streams over [0, horizon], stream-nanoseconds (integers, so that the
    /// order in which streams close does not change the sum).
    pub(in crate::fleet) open_area_ns: u128,
    /// Streams that opened before the horizon: count and summed duration.
    pub(in crate::fleet) horizon_streams: u64,
    pub(in crate::fleet) horizon_stream_ns: u128,
    pub(in crate::fleet) engine_ttft: Histogram,
    pub(in crate::fleet) server_ttft: Histogram,
    pub(in crate::fleet) user_ttft: Histogram,
    pub(in crate::fleet) engine_itl: Histogram,
    pub(in crate::fleet) gateway_itl: Histogram,
    pub(in crate::fleet) client_itl: Histogram,
    /// ITL of replies from the hosted API, kept apart and merged in by the report.
    pub(in crate::fleet) hosted_gateway_itl: Histogram,
    pub(in crate::fleet) hosted_client_itl: Histogram,
    pub(in crate::fleet) tpot: Histogram,
    pub(in crate::fleet) e2e: Histogram,
    pub(in crate::fleet) engine_queue: Histogram,
    pub(in crate::fleet) gap: Histogram,
    pub(in crate::fleet) hop_auth: Histogram,
    pub(in crate::fleet) hop_tokenize: Histogram,
    pub(in crate::fleet) hop_quota: Histogram,
    pub(in crate::fleet) hop_router: Histogram,
    pub(in crate::fleet) hop_connect: Histogram,
    pub(in crate::fleet) hop_relay: Histogram,
    /// Engine TTFT in parts (see `streams::ttft_parts`).
    pub(in crate::fleet) ttft_queue: Histogram,
    pub(in crate::fleet) ttft_prefill: Histogram,
    pub(in crate::fleet) ttft_transfer: Histogram,
    pub(in crate::fleet) ttft_first_decode: Histogram,
    /// KV caches moved from prefill to decode replicas, their bytes, the wait for a free
    /// link and the time on it.
    pub(in crate::fleet) kv_transfers: u64,
    pub(in crate::fleet) kv_bytes: f64,
    pub(in crate::fleet) kv_link_wait: Histogram,
    pub(in crate::fleet) kv_link_time: Histogram,
    pub(in crate::fleet) output_tokens: u64,
    pub(in crate::fleet) prompt_tokens: u64,
    pub(in crate::fleet) hosted_dollars: f64,
    /// Per tenant: arrived, completed.
    pub(in crate::fleet) tenant_arrived: Vec<u64>,
    pub(in crate::fleet) tenant_completed: Vec<u64>,
    pub(in crate::fleet) events: u64,
}

/// One point of the fleet's time series.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FleetSnapshot {
    pub t: f64,
    pub open_streams: u32,
    pub arrived: u64,
    pub completed: u64,
    pub rejected: u64,
    pub spilled: u64,
    /// Clients that gave up before a first token.
    pub timed_out: u64,
    /// Clients that closed the connection before their reply ended.
    pub abandoned: u64,
    /// Streams a replica failure broke.
    #[serde(default)]
    pub failed: u64,
    pub in_flight: u64,
    pub replicas: Vec<ReplicaView>,
}

/// One replica in a snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaView {
    pub pool: usize,
    pub state: ReplicaState,
    pub load: ReplicaLoad,
}

impl FleetSim {
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
            abandoned: s.abandoned,
            failed: s.failed,
            in_flight: s.arrived
                - s.completed
                - rejected
                - spilled
                - s.timed_out
                - s.abandoned
                - s.failed,
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

    pub(super) fn on_sample(&mut self) {
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
}
