//! A replica that fails mid-run: the requests it held are lost with it. The gateway sends
//! again, to another replica, each one whose client has had nothing of its reply yet (up to
//! `gateway.retries` times: the client cannot tell); a stream already under way ends with an
//! error event, since another replica cannot carry on a reply it did not start.

use super::{Event, FleetSim, Phase, ReplicaState};
use crate::fleet::clocks::{Outcome, SpillTarget};

impl FleetSim {
    pub(super) fn on_replica_fail(&mut self, r: usize) {
        let t = self.now;
        let Some(rs) = self.replicas.get(r) else {
            return;
        };
        if rs.failed || rs.state == ReplicaState::Stopped {
            return;
        }
        // Everything it did before failing counts: read it up to now.
        self.sync(r, t);
        self.stats.replicas_failed += 1;
        let rs = &mut self.replicas[r];
        rs.failed = true;
        rs.state = ReplicaState::Stopped;
        rs.stopped_at = Some(t);
        rs.decoding_streams = 0;
        let lost = rs.replica.fail(t);
        let relay = self.cfg.relay.relay_s;
        for id in lost {
            let slot = id as usize;
            let l = &self.live[slot];
            if l.streaming && l.got_first {
                self.replicas[r].firsts.finish(slot, t + relay);
            }
            if l.timed_out {
                // Its client had already gone: nothing is left to send or to break.
                self.end_stream(slot, t);
            } else {
                self.retry_or_break(slot, t);
            }
        }
        // Requests on their way to it find it failed when their connection is up (see
        // `on_submit`).
    }

    /// The replica holding the request in `slot` failed at `t`: send it again when its
    /// client has had nothing yet and retries are left, otherwise end its stream with an
    /// error.
    pub(super) fn retry_or_break(&mut self, slot: usize, t: f64) {
        let retries = self.cfg.gateway.retries;
        let l = &mut self.live[slot];
        let written = l.streaming && l.got_first;
        if written || l.retries >= retries {
            if let Some(Outcome::Spilled(SpillTarget::Pool(_))) = l.outcome {
                self.stats.spilled_pool -= 1;
            }
            l.outcome = Some(Outcome::Failed);
            self.stats.failed += 1;
            self.end_stream(slot, t);
            return;
        }
        self.stats.retried += 1;
        self.clear_decode_pending(slot);
        let l = &mut self.live[slot];
        l.phase = Phase::Direct;
        l.decode_replica = None;
        l.decode_admitted = None;
        l.prefill_done = 0.0;
        l.kv_arrived = 0.0;
        l.prefill_replica = None;
        l.transfer_start = 0.0;
        l.kv_bytes = 0.0;
        l.retries += 1;
        l.prompt = l.sent_prompt.take().or(l.prompt.take());
        l.replica = None;
        l.in_engine = false;
        l.admitted = None;
        l.got_first = false;
        l.first_release = None;
        l.cached_prefix_tokens = 0;
        if let Some(Outcome::Spilled(SpillTarget::Pool(_))) = l.outcome {
            self.stats.spilled_pool -= 1;
            l.outcome = None;
        }
        if !l.queued {
            l.queued = true;
            self.gateway_queued += 1;
        }
        // Back to the router, as if it had just passed the quota check (it has been charged).
        let decided = self.router.schedule(t);
        self.schedule(decided, Event::RouterDecide { slot });
    }
}
