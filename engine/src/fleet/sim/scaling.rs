//! Scaling: the autoscaler's signal and decision at each tick, replicas started (loading
//! weights, then ready) and drained or stopped.

use super::{Event, FleetSim, ReplicaSlot, ReplicaState};
use crate::error::ConfigError;
use crate::fleet::autoscaler::{ScaleEvent, ScaleSignal, SignalPoint};
use crate::fleet::clocks::Histogram;
use crate::fleet::gateway::ConnectionPool;
use crate::fleet::relay::{FirstBursts, StepBursts};
use crate::fleet::router::kv_usage;
use crate::replica::{Replica, ReplicaConfig};

impl FleetSim {
    /// A server TTFT, for the autoscalers that watch it.
    pub(super) fn note_ttft(&mut self, v: f64) {
        for s in &mut self.scalers {
            if s.cfg.signal == ScaleSignal::Ttft {
                s.ttft.push(v);
            }
        }
    }

    pub(super) fn on_autoscale(&mut self, which: usize) {
        let a = self.scalers[which].cfg;
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
                let seen = &self.scalers[which].ttft;
                if seen.is_empty() {
                    f64::NAN
                } else {
                    let mut h = Histogram::new();
                    for &v in seen {
                        h.push(v);
                    }
                    h.quantile(a.ttft_quantile)
                }
            }
        };
        self.scalers[which].ttft.clear();
        self.signal_series.push(SignalPoint {
            t,
            pool,
            value,
            ready,
            provisioned: current,
        });
        let p = &self.cfg.pools[pool];
        let max = p.max_replicas;
        let min = a.floor_at(t, p.min_replicas, max);
        let since = t - self.scalers[which].last_change;
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
                    pool,
                    signal: value,
                    from: current,
                    to: want,
                });
                self.scalers[which].last_change = t;
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
            self.schedule(next, Event::AutoscaleTick { scaler: which });
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

    pub(super) fn add_replica(
        &mut self,
        pool: usize,
        state: ReplicaState,
    ) -> Result<usize, ConfigError> {
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
            failed: false,
            role: self.cfg.pools[pool].role,
            link_free_at: 0.0,
            link_busy_s: 0.0,
            wake_at: f64::INFINITY,
        });
        Ok(self.replicas.len() - 1)
    }
}
