//! A request's way in: the client sends it, the gateway opens its stream (or refuses it when
//! its queue is full), the quota store answers, the engine receives it; and the ways a
//! client leaves early: its deadline, which cancels a request still without a first token,
//! and a client that closes the connection whenever it likes (before or during its reply).

use super::{Event, FleetSim, Live, Phase, ReplicaState};
use crate::fleet::clocks::{Outcome, RejectReason, SpillTarget};
use crate::fleet::quota::QuotaDecision;
use crate::replica::EngineRequest;
use rand::Rng;

/// What a client deadline found.
pub(super) enum DeadlineCheck {
    /// The engine holding the request was read up to the deadline: look again.
    Read,
    /// The request has its first token, or has ended: the deadline lapses.
    Met,
    /// No first token by the deadline: the client gives up.
    Missed,
}

impl FleetSim {
    pub(super) fn on_send(&mut self, source: usize) {
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
        self.stats.history_dropped += u64::from(req.history_dropped);
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

    pub(super) fn on_gateway_in(&mut self, slot: usize) {
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
        let clients = &self.cfg.clients;
        if clients.abandon_fraction > 0.0 {
            let (u, v) = (self.leave_rng.gen::<f64>(), self.leave_rng.gen::<f64>());
            if u < clients.abandon_fraction {
                let stay = -clients.abandon_after_s * (1.0 - v).ln();
                let gen = self.slot_gen[slot];
                self.schedule(t + stay, Event::Leave { slot, gen });
            }
        }
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

    pub(super) fn on_quota(&mut self, slot: usize) {
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

    pub(super) fn on_submit(&mut self, slot: usize) {
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
        if self.replicas[r].failed {
            // It failed while the connection was being set up.
            self.retry_or_break(slot, t);
            return;
        }
        let keep = !self.cfg.faults.is_empty();
        let l = &mut self.live[slot];
        let req = if l.phase == Phase::Prefill {
            // The prefill replica computes the prompt and samples one token (which the
            // decode replica samples again); the prompt stays for the decode replica.
            EngineRequest {
                id: slot as u64,
                prompt: l.prompt.clone().unwrap_or_default(),
                output_len: 1,
                tenant: l.tenant,
            }
        } else {
            let prompt = l.prompt.take().unwrap_or_default();
            if keep {
                l.sent_prompt = Some(prompt.clone());
            }
            EngineRequest {
                id: slot as u64,
                prompt,
                output_len: l.output_len,
                tenant: l.tenant,
            }
        };
        if self.live[slot].phase == Phase::Prefill {
            // Its blocks stay until its decode replica has pulled them.
            self.replicas[r].replica.submit_holding_kv(t, req);
        } else {
            self.replicas[r].replica.submit(t, req);
        }
        // A request the engine can never hold is refused at once: hear about it now.
        self.sync(r, t);
    }

    /// Prefill replica `r` finished the prompt of the request in `slot` at `t`: its answer
    /// frees its connection, the gateway sends the request on to the decode replica chosen
    /// with it, and the decode replica pulls the prompt's KV cache over the link, which each
    /// end gives to one transfer at a time.
    pub(super) fn hand_off(&mut self, slot: usize, r: usize, t: f64) {
        self.release_replica(r, t);
        let link = self
            .link
            .clone()
            .expect("a disaggregated fleet has its link");
        let share = self.cfg.disagg.link_share;
        let l = &mut self.live[slot];
        l.prefill_done = t;
        l.kv_holder = Some(r);
        l.phase = Phase::Transfer;
        l.in_engine = false;
        l.replica = None;
        let Some(d) = l.decode_replica else {
            return;
        };
        let tokens = l.prompt_tokens;
        let connect = self.replicas[d].conn.acquire(t, &self.cfg.gateway.pool);
        let asked = t + connect;
        let cost = self.replicas[r].replica.cost_model();
        let took = cost.kv_transfer_time(tokens, &link, share);
        let bytes = cost.kv_transfer_bytes(tokens);
        let start = asked
            .max(self.replicas[r].link_free_at)
            .max(self.replicas[d].link_free_at);
        let end = start + took;
        let l = &mut self.live[slot];
        l.prefill_replica = Some(r);
        l.transfer_start = start;
        l.kv_bytes = bytes;
        for e in [r, d] {
            let rs = &mut self.replicas[e];
            rs.link_free_at = end;
            rs.link_busy_s += took;
        }
        let st = &mut self.stats;
        st.kv_transfers += 1;
        st.kv_bytes += bytes;
        st.kv_link_wait.push(start - asked);
        st.kv_link_time.push(took);
        self.schedule(end, Event::KvArrive { slot });
    }

    /// The prompt's KV cache of the request in `slot` has reached its decode replica, which
    /// takes it in: its first step computes the last prompt token and samples the reply's
    /// first token.
    pub(super) fn on_kv_arrive(&mut self, slot: usize) {
        let t = self.now;
        let Some(d) = self.live[slot].decode_replica else {
            return;
        };
        self.clear_decode_pending(slot);
        // The pull is done: the prefill replica frees the blocks it kept for it.
        if let Some(p) = self.live[slot].kv_holder.take() {
            self.release_held_kv(p, slot, t);
        }
        let l = &mut self.live[slot];
        // The connection to the decode replica is held from here to the stream's end.
        l.replica = Some(d);
        l.kv_arrived = t;
        if l.timed_out {
            self.end_stream(slot, t);
            return;
        }
        if self.replicas[d].failed {
            self.retry_or_break(slot, t);
            return;
        }
        self.sync(d, t);
        let keep = !self.cfg.faults.is_empty();
        let l = &mut self.live[slot];
        l.phase = Phase::Decode;
        l.in_engine = true;
        let prompt = l.prompt.take().unwrap_or_default();
        if keep {
            l.sent_prompt = Some(prompt.clone());
        }
        let kv = l.prompt_tokens;
        let req = EngineRequest {
            id: slot as u64,
            prompt,
            output_len: l.output_len,
            tenant: l.tenant,
        };
        self.replicas[d].replica.submit_with_kv(t, req, kv);
        self.sync(d, t);
    }

    /// Prefill replica `p` frees, at `t`, the blocks it kept for the request in `slot`.
    pub(super) fn release_held_kv(&mut self, p: usize, slot: usize, t: f64) {
        if self.replicas[p].state == ReplicaState::Starting {
            return;
        }
        // Steps before `t` ran without these blocks.
        self.sync(p, t);
        self.replicas[p].replica.release_kv(slot as u64, t);
        self.arm_wake(p);
    }

    /// The request in `slot` no longer counts as on its way to its decode replica.
    pub(super) fn clear_decode_pending(&mut self, slot: usize) {
        let l = &mut self.live[slot];
        if !l.decode_pending {
            return;
        }
        l.decode_pending = false;
        if let Some(d) = l.decode_replica {
            let rs = &mut self.replicas[d];
            rs.dispatching = rs.dispatching.saturating_sub(1);
            rs.dispatching_tokens = rs.dispatching_tokens.saturating_sub(l.prompt_tokens as u64);
        }
    }

    /// Takes the request in `slot` out of the gateway's queue, if it is in it.
    pub(super) fn unqueue(&mut self, slot: usize) {
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
    pub(super) fn deadline_check(&mut self, slot: usize, t: f64) -> DeadlineCheck {
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
    pub(super) fn time_out(&mut self, slot: usize, t: f64) {
        self.stats.events += 1;
        self.stats.timed_out += 1;
        self.leave(slot, t, Outcome::TimedOut);
    }

    /// The client of the request in `slot` (generation `gen`) closes its connection now,
    /// unless its stream has ended, its reply is complete, or it was refused or sent to a
    /// hosted API (that call runs its course).
    pub(super) fn on_leave(&mut self, slot: usize, gen: u32) {
        let t = self.now;
        if self.slot_gen[slot] != gen {
            return;
        }
        // Read the engine up to now: the reply may have ended before the client left.
        if let Some(r) = self.live[slot]
            .replica
            .filter(|_| self.live[slot].in_engine)
        {
            self.sync(r, t);
            if self.slot_gen[slot] != gen {
                return;
            }
        }
        let l = &self.live[slot];
        let pending = matches!(
            l.outcome,
            None | Some(Outcome::Spilled(SpillTarget::Pool(_)))
        );
        if !pending || l.timed_out || l.hosted || l.finish > 0.0 {
            return;
        }
        self.stats.abandoned += 1;
        if l.got_first {
            self.stats.abandoned_mid_reply += 1;
        }
        self.leave(slot, t, Outcome::Abandoned);
    }

    /// The client of the request in `slot` is gone at `t` (`outcome` says how): the gateway
    /// closes the stream and, when it tells engines (`gateway.abort_on_disconnect`), the
    /// engine holding the request drops it and frees its blocks at once. Otherwise the
    /// engine's work goes on for nobody, and its end (or the request's next milestone before
    /// an engine) frees the slot.
    fn leave(&mut self, slot: usize, t: f64, outcome: Outcome) {
        let engine = self.live[slot]
            .replica
            .filter(|_| self.live[slot].in_engine);
        self.unqueue(slot);
        let l = &mut self.live[slot];
        if let Some(Outcome::Spilled(SpillTarget::Pool(_))) = l.outcome {
            self.stats.spilled_pool -= 1;
        }
        l.outcome = Some(outcome);
        l.timed_out = true;
        // The client disconnects: the gateway closes the stream now.
        l.open = false;
        let (opened, streaming, got_first) = (l.gateway_in, l.streaming, l.got_first);
        self.close_stream(opened, t);
        let Some(r) = engine else {
            // Before the engine, the request's next milestone frees the slot.
            return;
        };
        if !self.cfg.gateway.abort_on_disconnect {
            // The engine is not told: count what it samples from here on as work for nobody.
            self.live[slot].tokens_at_leave = self.replicas[r]
                .replica
                .output_tokens(slot as u64)
                .unwrap_or(0);
            return;
        }
        let relay = self.cfg.relay.relay_s;
        let rs = &mut self.replicas[r];
        if rs.replica.cancel(slot as u64, t) {
            self.stats.cancelled_in_engine += 1;
            if streaming && got_first {
                rs.decoding_streams = rs.decoding_streams.saturating_sub(1);
                rs.firsts.finish(slot, t + relay);
            }
            self.end_stream(slot, t);
        }
        // Otherwise the engine has finished it: its end is on its way and frees the slot.
    }
}
