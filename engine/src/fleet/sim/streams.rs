//! What the engines report and how each stream ends: first tokens, finishes and step ends
//! through the relay (bursts, first releases), hosted replies, the open streams' count and
//! area, and the measurements a closed stream adds to the report.

use super::{Event, FleetSim, Live, Phase, ReplicaState};
use crate::fleet::clocks::{to_ns, Outcome, RejectReason, RequestRecord, SplitPath};
use crate::replica::ReplicaEvent;

impl FleetSim {
    pub(super) fn on_replica_event(&mut self, r: usize, e: ReplicaEvent) {
        let relay = self.cfg.relay.relay_s;
        match e {
            ReplicaEvent::Admitted { id, t } => {
                let l = &mut self.live[id as usize];
                if l.phase == Phase::Decode {
                    if l.decode_admitted.is_none() {
                        l.decode_admitted = Some(t);
                    }
                } else if l.admitted.is_none() {
                    l.admitted = Some(t);
                }
            }
            ReplicaEvent::FirstToken { id, t } => {
                let slot = id as usize;
                let l = &mut self.live[slot];
                if l.got_first || l.phase == Phase::Prefill {
                    // A prefill replica's token is not the reply's: its decode replica
                    // samples the first token the client sees.
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
                        let v = t + relay - l.gateway_in;
                        self.note_ttft(v);
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
                if l.phase == Phase::Prefill && output_tokens > 0 {
                    if l.timed_out {
                        // Its client has gone: nothing moves on, and its blocks go back.
                        self.replicas[r].replica.release_kv(id, t);
                        self.end_stream(slot, t);
                    } else {
                        self.hand_off(slot, r, t);
                    }
                    return;
                }
                l.finish = t;
                l.output_tokens = output_tokens;
                if l.timed_out {
                    self.stats.tokens_for_nobody +=
                        output_tokens.saturating_sub(l.tokens_at_leave) as u64;
                }
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
                    let v = t + relay - l.gateway_in;
                    self.note_ttft(v);
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
    pub(super) fn end_stream(&mut self, slot: usize, t: f64) {
        if self.live[slot].open {
            self.close_stream(self.live[slot].gateway_in, t);
        }
        self.unqueue(slot);
        self.clear_decode_pending(slot);
        let l = std::mem::take(&mut self.live[slot]);
        self.free.push(slot);
        self.slot_gen[slot] = self.slot_gen[slot].wrapping_add(1);
        let relay = self.cfg.relay.relay_s;
        let half_rtt = self.cfg.clients.regions[l.region as usize].rtt_s / 2.0;
        let served = !matches!(
            l.outcome,
            Some(
                Outcome::Rejected { .. } | Outcome::TimedOut | Outcome::Abandoned | Outcome::Failed
            )
        );
        if let Some(r) = l.replica {
            self.release_replica(r, t);
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
            split: match (l.prefill_replica, l.decode_replica) {
                (Some(p), Some(d)) if l.kv_arrived > 0.0 => Some(SplitPath {
                    prefill_replica: p,
                    decode_replica: d,
                    prefill_admitted: l.admitted.unwrap_or(l.prefill_done),
                    prefill_done: l.prefill_done,
                    transfer_start: l.transfer_start,
                    kv_arrived: l.kv_arrived,
                    decode_admitted: l.decode_admitted.unwrap_or(l.first_token),
                    kv_bytes: l.kv_bytes,
                }),
                _ => None,
            },
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
                let parts = ttft_parts(&l);
                st.ttft_queue.push(parts[0]);
                st.ttft_prefill.push(parts[1]);
                st.ttft_transfer.push(parts[2]);
                st.ttft_first_decode.push(parts[3]);
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

    /// The request using replica `r` is done with it at `t`: its connection returns to the
    /// pool, and a draining replica left with nothing stops.
    pub(super) fn release_replica(&mut self, r: usize, t: f64) {
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

    pub(super) fn open_stream(&mut self) {
        let st = &mut self.stats;
        st.open_streams += 1;
        st.streams_opened += 1;
    }

    pub(super) fn close_stream(&mut self, opened_at: f64, t: f64) {
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
    pub(in crate::fleet) fn open_area_in_flight(&self, t: f64) -> f64 {
        let h = self.horizon;
        self.live
            .iter()
            .filter(|l| l.open)
            .map(|l| (t.min(h) - l.gateway_in.min(h)).max(0.0))
            .sum()
    }
}

/// A served request's engine TTFT in four parts that add up to it: queueing (for its prefill
/// replica, and for its decode replica once its KV cache is there), the prefill, the move
/// to the decode replica (the connection, the wait for the link and the transfer) and the
/// first decode step. On one replica the prefill ends with the first token, and the last
/// two are zero.
fn ttft_parts(l: &Live) -> [f64; 4] {
    if l.kv_arrived > 0.0 {
        let prefill_in = l.admitted.unwrap_or(l.prefill_done);
        let decode_in = l.decode_admitted.unwrap_or(l.first_token);
        [
            (prefill_in - l.engine_in) + (decode_in - l.kv_arrived),
            l.prefill_done - prefill_in,
            l.kv_arrived - l.prefill_done,
            l.first_token - decode_in,
        ]
    } else {
        let admitted = l.admitted.unwrap_or(l.first_token);
        [admitted - l.engine_in, l.first_token - admitted, 0.0, 0.0]
    }
}
