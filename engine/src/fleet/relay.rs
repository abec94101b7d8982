//! The way back out: the gateway relays each token delta as a server-sent event.
//!
//! With nothing in between, every delta reaches the client one network hop after the engine
//! sampled it, so the client sees the engine's inter-token gaps. A proxy that buffers the
//! response, gzip on the event stream, or a load balancer that coalesces writes holds deltas
//! back and releases them in bursts: after `N` tokens (a buffer fills) or every `T` seconds
//! (a coalescing timer). The client then sees one gap of about `N` engine steps followed by
//! `N - 1` gaps of almost nothing, while the engine's own ITL stays flat.
//!
//! The simulation cannot follow 45 million tokens one by one, so it works per engine step.
//! [`StepBursts`] turns a replica's steps into the client's ITL distribution as weighted
//! samples, assuming the streams on a replica share one release cycle (their phases differ in
//! reality, which shifts each stream's bursts in time but not the distribution of its gaps).
//! [`FirstBursts`] follows each stream exactly until its first burst is released, because
//! that release is the moment the user's first byte leaves for the client.

use crate::error::{check_range, ConfigError};
use serde::{Deserialize, Serialize};

/// What sits between the gateway and the client on the event stream.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Buffering {
    /// Each event is flushed as soon as it is written.
    Off,
    /// A reverse proxy with response buffering on (nginx `proxy_buffering on`): it forwards
    /// once its buffer of `buffer_bytes` fills.
    Proxy { buffer_bytes: u32 },
    /// gzip on the event stream: the compressor emits a block once it has `flush_bytes` of
    /// compressed output, and events compress by `ratio` (uncompressed / compressed).
    Gzip { flush_bytes: u32, ratio: f64 },
    /// A load balancer that coalesces writes and flushes every `interval_s` seconds.
    CoalescingLb { interval_s: f64 },
}

/// The return path's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RelayConfig {
    /// Time from the engine sampling a token to the gateway writing its event: the hop back,
    /// detokenising and serialising. Seconds, the same for every delta.
    pub relay_s: f64,
    /// Size of one token's server-sent event on the wire (an OpenAI-style chunk), bytes.
    pub bytes_per_event: u32,
    pub buffering: Buffering,
}

impl Default for RelayConfig {
    fn default() -> Self {
        RelayConfig {
            relay_s: 0.0005,
            bytes_per_event: 200,
            buffering: Buffering::Off,
        }
    }
}

impl RelayConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_range("relay_s", self.relay_s, 0.0, 10.0)?;
        if self.bytes_per_event == 0 {
            return Err(ConfigError::new(
                "bytes_per_event",
                "must be greater than zero",
            ));
        }
        match self.buffering {
            Buffering::Off => {}
            Buffering::Proxy { buffer_bytes } => {
                check_range(
                    "buffering.buffer_bytes",
                    buffer_bytes as f64,
                    1.0,
                    16_777_216.0,
                )?;
            }
            Buffering::Gzip { flush_bytes, ratio } => {
                check_range(
                    "buffering.flush_bytes",
                    flush_bytes as f64,
                    1.0,
                    16_777_216.0,
                )?;
                check_range("buffering.ratio", ratio, 1.0, 100.0)?;
            }
            Buffering::CoalescingLb { interval_s } => {
                check_range("buffering.interval_s", interval_s, 1e-4, 60.0)?;
            }
        }
        Ok(())
    }

    /// The release rule: (tokens per burst, 0 = no size limit; flush interval, 0 = no timer).
    pub fn release_rule(&self) -> (u32, f64) {
        let per = self.bytes_per_event as f64;
        match self.buffering {
            Buffering::Off => (1, 0.0),
            Buffering::Proxy { buffer_bytes } => {
                (libm::ceil(buffer_bytes as f64 / per).max(1.0) as u32, 0.0)
            }
            Buffering::Gzip { flush_bytes, ratio } => (
                libm::ceil(flush_bytes as f64 * ratio / per).max(1.0) as u32,
                0.0,
            ),
            Buffering::CoalescingLb { interval_s } => (0, interval_s),
        }
    }

    /// Whether deltas reach the client one by one.
    pub fn unbuffered(&self) -> bool {
        self.release_rule() == (1, 0.0)
    }
}

/// One replica's release cycle, turning engine steps into client ITL samples.
#[derive(Clone, Debug, Default)]
pub struct StepBursts {
    tokens: u32,
    interval: f64,
    open: bool,
    open_t: f64,
    steps: u32,
    weight: u64,
    last_release: Option<f64>,
    /// Remainder carried between cycles so that rounding streams to whole counts loses nothing.
    carry: u64,
}

impl StepBursts {
    pub fn new(relay: &RelayConfig) -> StepBursts {
        let (tokens, interval) = relay.release_rule();
        StepBursts {
            tokens,
            interval,
            ..StepBursts::default()
        }
    }

    /// An engine step ended at `t` (gateway time) after `duration` seconds, delivering one
    /// token to each of `streams` streams. Calls `sink(gap, weight)` with the client ITL
    /// samples this step completes.
    pub fn step(&mut self, t: f64, duration: f64, streams: u64, sink: &mut impl FnMut(f64, u64)) {
        if streams == 0 {
            return;
        }
        if self.tokens == 1 && self.interval == 0.0 {
            sink(duration, streams);
            return;
        }
        if self.open && self.interval > 0.0 && t > self.open_t + self.interval {
            self.release(self.open_t + self.interval, sink);
        }
        if !self.open {
            self.open = true;
            self.open_t = t;
            self.steps = 0;
            self.weight = 0;
        }
        self.steps += 1;
        self.weight += streams;
        if self.tokens > 0 && self.steps >= self.tokens {
            self.release(t, sink);
        }
    }

    fn release(&mut self, at: f64, sink: &mut impl FnMut(f64, u64)) {
        self.open = false;
        let steps = self.steps.max(1) as u64;
        // Each stream sees one gap since the previous burst and steps - 1 gaps inside this one.
        let total = self.weight + self.carry;
        let big = total / steps;
        self.carry = total % steps;
        let small = self.weight.saturating_sub(big);
        if let Some(prev) = self.last_release {
            sink(at - prev, big);
        } else {
            sink(at - self.open_t, big);
        }
        sink(0.0, small);
        self.last_release = Some(at);
    }
}

/// Streams whose first burst has not reached the client yet, on one replica.
#[derive(Clone, Debug, Default)]
pub struct FirstBursts {
    tokens: u32,
    interval: f64,
    pending: Vec<Pending>,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    key: usize,
    first_t: f64,
    count: u32,
}

impl FirstBursts {
    pub fn new(relay: &RelayConfig) -> FirstBursts {
        let (tokens, interval) = relay.release_rule();
        FirstBursts {
            tokens,
            interval,
            pending: Vec::new(),
        }
    }

    /// The stream `key` wrote its first event at `t`. Returns `Some(t)` when it leaves at once.
    pub fn first_token(&mut self, key: usize, t: f64) -> Option<f64> {
        if self.tokens == 1 {
            return Some(t);
        }
        self.pending.push(Pending {
            key,
            first_t: t,
            count: 1,
        });
        None
    }

    /// An engine step's tokens were written at `t`; calls `released(key, at)` for each stream
    /// whose first burst leaves.
    pub fn step(&mut self, t: f64, released: &mut impl FnMut(usize, f64)) {
        let (tokens, interval) = (self.tokens, self.interval);
        self.pending.retain_mut(|p| {
            if interval > 0.0 && t > p.first_t + interval {
                released(p.key, p.first_t + interval);
                return false;
            }
            if t > p.first_t {
                p.count += 1;
                if tokens > 0 && p.count >= tokens {
                    released(p.key, t);
                    return false;
                }
            }
            true
        });
    }

    /// The stream `key` ended at `t`: the end of the response flushes whatever is buffered.
    /// Returns when its first burst left, if it was still waiting.
    pub fn finish(&mut self, key: usize, t: f64) -> Option<f64> {
        let i = self.pending.iter().position(|p| p.key == key)?;
        let p = self.pending.swap_remove(i);
        Some(if self.interval > 0.0 {
            t.min(p.first_t + self.interval)
        } else {
            t
        })
    }

    /// Streams still waiting for their first burst.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relay(buffering: Buffering) -> RelayConfig {
        RelayConfig {
            buffering,
            ..RelayConfig::default()
        }
    }

    /// Feeds `steps` steps of `d` seconds with `streams` streams; returns (gap, weight) pairs
    /// merged by gap.
    fn client_gaps(buffering: Buffering, steps: u32, d: f64, streams: u64) -> Vec<(f64, u64)> {
        let mut b = StepBursts::new(&relay(buffering));
        let mut out: Vec<(f64, u64)> = Vec::new();
        for i in 1..=steps {
            b.step(i as f64 * d, d, streams, &mut |g, w| {
                let g = (g * 1e6).round() / 1e6;
                match out.iter_mut().find(|(x, _)| *x == g) {
                    Some(e) => e.1 += w,
                    None => out.push((g, w)),
                }
            });
        }
        out.retain(|&(_, w)| w > 0);
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out
    }

    #[test]
    fn release_rules_follow_from_bytes_and_timers() {
        let cases = [
            (Buffering::Off, (1, 0.0)),
            (Buffering::Proxy { buffer_bytes: 4096 }, (21, 0.0)),
            (
                Buffering::Gzip {
                    flush_bytes: 1000,
                    ratio: 4.0,
                },
                (20, 0.0),
            ),
            (Buffering::CoalescingLb { interval_s: 0.05 }, (0, 0.05)),
        ];
        for (b, want) in cases {
            assert_eq!(relay(b).release_rule(), want, "{b:?}");
        }
    }

    #[test]
    fn unbuffered_gaps_are_the_engine_steps() {
        assert_eq!(client_gaps(Buffering::Off, 10, 0.01, 8), vec![(0.01, 80)]);
    }

    #[test]
    fn a_buffer_turns_n_steps_into_one_gap_and_n_minus_1_zero_gaps() {
        // 20 tokens per burst; 100 steps of 10 ms with 8 streams: 5 bursts per stream.
        let got = client_gaps(
            Buffering::Gzip {
                flush_bytes: 1000,
                ratio: 4.0,
            },
            100,
            0.01,
            8,
        );
        assert_eq!(got, vec![(0.0, 8 * 95), (0.19, 8), (0.2, 8 * 4)]);
    }

    #[test]
    fn a_coalescing_timer_releases_every_interval() {
        // Flush every 45 ms over 10 ms steps: a window opened by one token holds five, and
        // releases come 50 ms apart (the timer, then the wait for the next token).
        let got = client_gaps(Buffering::CoalescingLb { interval_s: 0.045 }, 60, 0.01, 1);
        let total: u64 = got.iter().map(|g| g.1).sum();
        assert_eq!(total, 60 - 5, "the last open window has not been released");
        assert_eq!(got, vec![(0.0, 44), (0.045, 1), (0.05, 10)]);
    }

    #[test]
    fn first_bursts_wait_for_the_buffer_or_the_end_of_the_stream() {
        let mut f = FirstBursts::new(&relay(Buffering::Proxy { buffer_bytes: 600 }));
        assert_eq!(f.first_token(1, 1.0), None);
        assert_eq!(f.first_token(2, 1.5), None);
        let mut out = Vec::new();
        for t in [1.0, 1.5, 2.0, 2.5, 3.0] {
            f.step(t, &mut |k, at| out.push((k, at)));
        }
        // Three tokens per burst: stream 1 has tokens at 1.0, 1.5, 2.0.
        assert_eq!(out, vec![(1, 2.0), (2, 2.5)]);
        assert_eq!(f.first_token(3, 3.0), None);
        assert_eq!(f.finish(3, 3.2), Some(3.2));
        assert!(f.is_empty());
        let mut off = FirstBursts::new(&relay(Buffering::Off));
        assert_eq!(off.first_token(9, 4.0), Some(4.0));
    }

    #[test]
    fn bad_buffers_are_errors() {
        let bad = [
            Buffering::Proxy { buffer_bytes: 0 },
            Buffering::Gzip {
                flush_bytes: 10,
                ratio: 0.5,
            },
            Buffering::CoalescingLb { interval_s: -1.0 },
        ];
        for b in bad {
            assert!(relay(b).validate().is_err(), "{b:?}");
        }
    }
}
