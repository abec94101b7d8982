//! Workloads: arrival processes, length distributions, chat sessions, tenants.
//!
//! A [`WorkloadConfig`] describes traffic; a [`RequestStream`] turns it into requests in
//! arrival order, lazily, so an hour at a million requests per second costs nothing until it
//! is consumed. Every random draw comes from one `Pcg64` seeded by `seed`, and every
//! transcendental function comes from `libm`, so the same (config, seed) yields the same
//! requests bit for bit natively and in WASM.
//!
//! Prompts are lists of [`Segment`]s of pseudo-tokens rather than token ids: a segment is a run
//! of `len` tokens of some content. Token `j` of a segment is "token `j` of content
//! `content`", so two prompts share a prefix exactly as far as their leading segments agree.
//! A chat turn resends the earlier turns' segments and appends its own, which is what makes
//! its prefix repeat (and the prefix cache hit).

use crate::due::Due;
use crate::error::{check_in, check_positive, check_range, ConfigError};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use std::collections::BinaryHeap;
use std::ops::RangeInclusive;

/// A run of `len` pseudo-tokens of one piece of content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    pub content: u64,
    pub len: u32,
}

/// A prompt as a list of segments of pseudo-tokens. Two prompts share a prefix exactly when their
/// leading segments are equal (same content id and length).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    pub segments: Vec<Segment>,
    /// Its content was made for this one request ([`Prompt::fresh`]): no other prompt starts
    /// with any of it, and it reaches an engine once. Only this request could then hit its
    /// cached blocks, so the engine keeps them out of the shared prefix index (same answers,
    /// less work). Wrong when set on a shared prompt, so only the generator sets it: never
    /// read from a file nor written to one.
    #[serde(skip)]
    pub fresh: bool,
}

/// When requests arrive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Arrival {
    /// Exponential gaps with mean `1 / rate` (requests per second).
    Poisson { rate: f64 },
    /// Evenly spaced at `rate` per second, the first at time zero.
    Constant { rate: f64 },
    /// Bursty: gamma-distributed gaps with mean `1 / rate` and coefficient of variation `cv`
    /// (1 is Poisson; above 1 is burstier).
    Gamma { rate: f64, cv: f64 },
    /// Explicit arrival times in seconds, non-decreasing.
    Trace { times: Vec<f64> },
}

/// How many tokens a prompt or a reply has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum LengthDist {
    Constant {
        value: u32,
    },
    /// Uniform over `min..=max`.
    Uniform {
        min: u32,
        max: u32,
    },
    /// Lognormal with the given mean and 99th percentile (p99 > mean). Written `log_normal`
    /// or `lognormal`.
    #[serde(alias = "lognormal")]
    LogNormal {
        mean: f64,
        p99: f64,
    },
    /// Drawn uniformly from a list of observed lengths.
    Empirical {
        values: Vec<u32>,
    },
    /// The listed lengths in order, one per request, starting over at the end: with a
    /// [`Arrival::Trace`] this sets up an exact scenario (request D has 2,000 prompt tokens).
    Sequence {
        values: Vec<u32>,
    },
}

/// Multi-turn chat: each session has `turns` turns; each turn's prompt = whole history + new user text.
///
/// The session's first turn arrives from the arrival process. Turn `k + 1` arrives at turn
/// `k`'s arrival + its reply length x `reply_time_per_token_s` + `think_time_s`: the user reads
/// the streamed reply, thinks, and types. The workload is open-loop (it does not wait for the
/// simulated reply), which keeps it independent of the engine and identical across runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SessionConfig {
    pub turns: u32,
    pub think_time_s: f64,
    /// Tokens of the system prompt every session of a tenant starts with (shared content).
    pub system_prompt_len: u32,
    /// Assumed time per streamed reply token when scheduling the next turn.
    pub reply_time_per_token_s: f64,
    /// Most tokens of conversation a turn resends (the system prompt and the new user text
    /// included): past it, the client drops the oldest parts of the history, a turn's text or
    /// a reply at a time, until the prompt fits (the system prompt and the new text always
    /// stay). Dropping changes the front of every later prompt, so nothing after the system
    /// prompt is found in any prefix cache. 0, the default: the whole history.
    pub history_limit: u32,
}

/// Traffic offered to a replica or a fleet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadConfig {
    pub arrival: Arrival,
    /// Prompt length (for sessions: the new user text of each turn).
    pub prompt_len: LengthDist,
    pub output_len: LengthDist,
    /// None = independent requests.
    pub sessions: Option<SessionConfig>,
    /// Requests (or sessions) are spread uniformly over tenants `0..tenants`.
    pub tenants: u32,
    /// Stop generating arrivals after this many seconds.
    pub duration_s: f64,
    pub seed: u64,
}

/// One request, as the workload produces it.
#[derive(Clone, Debug)]
pub struct GeneratedRequest {
    /// Sequential from 0 in arrival order.
    pub id: u64,
    pub arrival: f64,
    pub prompt: Prompt,
    pub output_len: u32,
    pub tenant: u32,
    /// The chat session this turn belongs to, if any.
    pub session: Option<u64>,
    /// Tokens of the conversation so far that the client left out of this prompt (its
    /// session's history limit), 0 when it resends everything.
    pub history_dropped: u32,
}

/// Lazily yields requests in arrival order.
///
/// Ties in arrival time are broken by creation order, so the order is total and reproducible.
#[derive(Clone, Debug)]
pub struct RequestStream {
    cfg: WorkloadConfig,
    rng: Pcg64,
    lognormal_prompt: Option<(f64, f64)>,
    lognormal_output: Option<(f64, f64)>,
    /// Index of the next arrival from the arrival process.
    arrivals_made: u64,
    /// Time of the next arrival from the arrival process, if any remain.
    next_arrival: Option<f64>,
    /// Later turns of open sessions, by arrival time.
    turns: BinaryHeap<Due<PendingTurn>>,
    next_id: u64,
    next_session: u64,
    created: u64,
    prompt_seq: usize,
    output_seq: usize,
}

/// Hard ceiling on any single length, in tokens.
pub const MAX_LEN: u32 = 10_000_000;
/// Hard ceiling on an arrival rate, requests per second.
pub const MAX_RATE: f64 = 1e9;

impl Prompt {
    /// Total tokens.
    pub fn len(&self) -> u32 {
        self.segments
            .iter()
            .fold(0u32, |a, s| a.saturating_add(s.len))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A prompt of `len` tokens sharing nothing with any prompt of another `content`.
    pub fn unique(content: u64, len: u32) -> Prompt {
        Prompt {
            segments: vec![Segment { content, len }],
            fresh: false,
        }
    }

    /// [`Prompt::unique`] for content no other prompt will ever carry, submitted once (see
    /// [`Prompt::fresh`](Prompt#structfield.fresh)).
    pub fn fresh(content: u64, len: u32) -> Prompt {
        Prompt {
            fresh: true,
            ..Prompt::unique(content, len)
        }
    }
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            turns: 4,
            think_time_s: 10.0,
            system_prompt_len: 500,
            reply_time_per_token_s: 0.02,
            history_limit: 0,
        }
    }
}

impl SessionConfig {
    /// Turns a session may have.
    pub const TURNS_RANGE: RangeInclusive<u32> = 1..=200;
    /// Think time between turns, seconds.
    pub const THINK_TIME_S_RANGE: RangeInclusive<f64> = 0.0..=86_400.0;

    pub fn validate(&self) -> Result<(), ConfigError> {
        let turns = Self::TURNS_RANGE;
        if !turns.contains(&self.turns) {
            return Err(ConfigError::new(
                "turns",
                format!(
                    "must be {} to {}, got {}",
                    turns.start(),
                    turns.end(),
                    self.turns
                ),
            ));
        }
        check_in("think_time_s", self.think_time_s, &Self::THINK_TIME_S_RANGE)?;
        if self.system_prompt_len > MAX_LEN {
            return Err(ConfigError::new(
                "system_prompt_len",
                format!("must be at most {MAX_LEN}"),
            ));
        }
        check_range(
            "reply_time_per_token_s",
            self.reply_time_per_token_s,
            0.0,
            10.0,
        )?;
        if self.history_limit > MAX_LEN {
            return Err(ConfigError::new(
                "history_limit",
                format!("must be at most {MAX_LEN}"),
            ));
        }
        Ok(())
    }
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig::seed_replica()
    }
}

impl WorkloadConfig {
    /// Tenants a workload may have.
    pub const TENANTS_RANGE: RangeInclusive<u32> = 1..=1_000_000;
    /// How long a workload may generate arrivals, seconds.
    pub const DURATION_S_RANGE: RangeInclusive<f64> = 0.0..=1e7;

    /// One replica's share of the seed problem: Poisson at 6.25 req/s (50 / 8 replicas),
    /// 1,000 prompt tokens and 250 output tokens each, for one hour.
    pub fn seed_replica() -> Self {
        WorkloadConfig {
            arrival: Arrival::Poisson { rate: 6.25 },
            prompt_len: LengthDist::Constant { value: 1000 },
            output_len: LengthDist::Constant { value: 250 },
            sessions: None,
            tenants: 1,
            duration_s: 3600.0,
            seed: 1,
        }
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.arrival.validate().map_err(|e| e.within("arrival"))?;
        self.prompt_len
            .validate()
            .map_err(|e| e.within("prompt_len"))?;
        self.output_len
            .validate()
            .map_err(|e| e.within("output_len"))?;
        if let Some(s) = &self.sessions {
            s.validate().map_err(|e| e.within("sessions"))?;
        }
        let tenants = Self::TENANTS_RANGE;
        if !tenants.contains(&self.tenants) {
            return Err(ConfigError::new(
                "tenants",
                format!(
                    "must be {} to {}, got {}",
                    tenants.start(),
                    tenants.end(),
                    self.tenants
                ),
            ));
        }
        check_in("duration_s", self.duration_s, &Self::DURATION_S_RANGE)?;
        Ok(())
    }
}

impl Arrival {
    /// The coefficient of variation of gamma arrivals' gaps.
    pub const CV_RANGE: RangeInclusive<f64> = 0.05..=20.0;

    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            Arrival::Poisson { rate } | Arrival::Constant { rate } => {
                check_positive("rate", *rate, MAX_RATE)?;
            }
            Arrival::Gamma { rate, cv } => {
                check_positive("rate", *rate, MAX_RATE)?;
                check_in("cv", *cv, &Self::CV_RANGE)?;
            }
            Arrival::Trace { times } => {
                let mut prev = 0.0;
                for (i, &t) in times.iter().enumerate() {
                    check_range(&format!("times[{i}]"), t, 0.0, 1e7)?;
                    if t < prev {
                        return Err(ConfigError::new(
                            format!("times[{i}]"),
                            "arrival times must not decrease",
                        ));
                    }
                    prev = t;
                }
            }
        }
        Ok(())
    }

    /// Mean arrivals per second (for a trace, count over its span; zero if it has fewer than two).
    pub fn mean_rate(&self) -> f64 {
        match self {
            Arrival::Poisson { rate }
            | Arrival::Constant { rate }
            | Arrival::Gamma { rate, .. } => *rate,
            Arrival::Trace { times } => match (times.first(), times.last()) {
                (Some(a), Some(b)) if b > a => (times.len() - 1) as f64 / (b - a),
                _ => 0.0,
            },
        }
    }
}

impl LengthDist {
    /// Any one length, tokens (a lognormal's mean and p99 as well).
    pub const LEN_RANGE: RangeInclusive<u32> = 1..=MAX_LEN;

    pub fn validate(&self) -> Result<(), ConfigError> {
        let check_len = |field: &str, v: u32| {
            if !Self::LEN_RANGE.contains(&v) {
                Err(ConfigError::new(
                    field,
                    format!("must be 1 to {MAX_LEN} tokens, got {v}"),
                ))
            } else {
                Ok(())
            }
        };
        match self {
            LengthDist::Constant { value } => check_len("value", *value),
            LengthDist::Uniform { min, max } => {
                check_len("min", *min)?;
                check_len("max", *max)?;
                if min > max {
                    return Err(ConfigError::new("max", "must not be below min"));
                }
                Ok(())
            }
            LengthDist::LogNormal { mean, p99 } => {
                let (min, max) = (*Self::LEN_RANGE.start() as f64, MAX_LEN as f64);
                check_range("mean", *mean, min, max)?;
                check_range("p99", *p99, min, max)?;
                lognormal_params(*mean, *p99).map(|_| ())
            }
            LengthDist::Empirical { values } | LengthDist::Sequence { values } => {
                if values.is_empty() {
                    return Err(ConfigError::new("values", "needs at least one length"));
                }
                for (i, &v) in values.iter().enumerate() {
                    check_len(&format!("values[{i}]"), v)?;
                }
                Ok(())
            }
        }
    }

    /// Mean length in tokens.
    pub fn mean(&self) -> f64 {
        match self {
            LengthDist::Constant { value } => *value as f64,
            LengthDist::Uniform { min, max } => (*min as f64 + *max as f64) / 2.0,
            LengthDist::LogNormal { mean, .. } => *mean,
            LengthDist::Empirical { values } | LengthDist::Sequence { values } => {
                if values.is_empty() {
                    0.0
                } else {
                    values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64
                }
            }
        }
    }
}

/// The 99th percentile of the standard normal distribution.
const Z99: f64 = 2.326_347_874_040_840_8;

/// (mu, sigma) of the underlying normal for a lognormal with this mean and p99.
///
/// mean = exp(mu + sigma^2 / 2) and p99 = exp(mu + z sigma), so
/// sigma^2 / 2 - z sigma + ln(p99 / mean) = 0; the smaller root is the one with p99 above the mean.
fn lognormal_params(mean: f64, p99: f64) -> Result<(f64, f64), ConfigError> {
    if p99 <= mean {
        return Err(ConfigError::new(
            "p99",
            format!("must be above the mean ({mean}), got {p99}"),
        ));
    }
    let gap = libm::log(p99 / mean);
    let disc = Z99 * Z99 - 2.0 * gap;
    if disc < 0.0 {
        return Err(ConfigError::new(
            "p99",
            format!(
                "is too far above the mean for a lognormal (at most {:.1} x the mean)",
                libm::exp(Z99 * Z99 / 2.0)
            ),
        ));
    }
    let sigma = Z99 - libm::sqrt(disc);
    let mu = libm::log(mean) - sigma * sigma / 2.0;
    Ok((mu, sigma))
}

/// A later turn of a session, waiting for its arrival time.
#[derive(Clone, Debug)]
struct PendingTurn {
    session: u64,
    tenant: u32,
    /// Turns still to come after this one.
    turns_left: u32,
    prompt: Prompt,
    output_len: u32,
    /// Tokens of the whole conversation so far, this turn's text included: the prompt's
    /// length unless a history limit dropped some.
    whole: u32,
}

/// The content id of the reply to `prompt`: a hash of the prompt's segments, so equal prompts
/// get equal replies (as greedy decoding would). The engine hashes the blocks its generated
/// tokens fill with it, and a chat's next turn resends the reply under the same id, which is
/// what lets that turn hit the blocks its previous answer filled.
pub fn reply_content(prompt: &Prompt) -> u64 {
    prompt.segments.iter().fold(0x7265_706c_795f_6964, |h, s| {
        mix64(h.rotate_left(29) ^ s.content ^ (s.len as u64).rotate_left(43))
    })
}

/// SplitMix64's finaliser: a fast, well-mixed, platform-independent 64-bit hash step.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl RequestStream {
    pub fn new(cfg: &WorkloadConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let lognormal = |d: &LengthDist| match d {
            LengthDist::LogNormal { mean, p99 } => lognormal_params(*mean, *p99).ok(),
            _ => None,
        };
        let mut s = RequestStream {
            lognormal_prompt: lognormal(&cfg.prompt_len),
            lognormal_output: lognormal(&cfg.output_len),
            cfg: cfg.clone(),
            rng: Pcg64::seed_from_u64(cfg.seed),
            arrivals_made: 0,
            next_arrival: None,
            turns: BinaryHeap::new(),
            next_id: 0,
            next_session: 0,
            created: 0,
            prompt_seq: 0,
            output_seq: 0,
        };
        s.next_arrival = s.draw_arrival(0.0);
        Ok(s)
    }

    /// Arrival time of the next request, or None when the stream is exhausted.
    pub fn peek_time(&self) -> Option<f64> {
        match (self.next_arrival, self.turns.peek()) {
            (Some(a), Some(t)) => Some(a.min(t.t)),
            (Some(a), None) => Some(a),
            (None, Some(t)) => Some(t.t),
            (None, None) => None,
        }
    }

    /// The workload this stream draws from.
    pub fn config(&self) -> &WorkloadConfig {
        &self.cfg
    }

    /// Draws the arrival after one at `prev`; None past the duration or the end of a trace.
    fn draw_arrival(&mut self, prev: f64) -> Option<f64> {
        let k = self.arrivals_made;
        let t = match self.cfg.arrival {
            Arrival::Poisson { rate } => {
                if k == 0 {
                    self.exp(rate)
                } else {
                    prev + self.exp(rate)
                }
            }
            Arrival::Constant { rate } => k as f64 / rate,
            Arrival::Gamma { rate, cv } => {
                let shape = 1.0 / (cv * cv);
                let gap = self.gamma(shape) / (shape * rate);
                if k == 0 {
                    gap
                } else {
                    prev + gap
                }
            }
            Arrival::Trace { ref times } => *times.get(k as usize)?,
        };
        if t.is_finite() && t <= self.cfg.duration_s {
            Some(t)
        } else {
            None
        }
    }

    /// A uniform draw in (0, 1].
    fn unit_open(&mut self) -> f64 {
        1.0 - self.rng.gen::<f64>()
    }

    fn exp(&mut self, rate: f64) -> f64 {
        -libm::log(self.unit_open()) / rate
    }

    fn normal(&mut self) -> f64 {
        // Box-Muller; one of the pair is discarded to keep the draw count simple.
        let u1 = self.unit_open();
        let u2 = self.rng.gen::<f64>();
        libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2)
    }

    /// A Gamma(shape, 1) draw: Marsaglia and Tsang's method, boosted for shape < 1.
    fn gamma(&mut self, shape: f64) -> f64 {
        if shape < 1.0 {
            let g = self.gamma(shape + 1.0);
            return g * libm::pow(self.unit_open(), 1.0 / shape);
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / libm::sqrt(9.0 * d);
        // The acceptance rate is above 95 %; the cap only guards against a broken generator.
        for _ in 0..1000 {
            let x = self.normal();
            let v = 1.0 + c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let u = self.unit_open();
            if libm::log(u) < 0.5 * x * x + d - d * v + d * libm::log(v) {
                return d * v;
            }
        }
        shape
    }

    fn draw_len(&mut self, which: Length) -> u32 {
        let output = which == Length::Output;
        let dist = if output {
            &self.cfg.output_len
        } else {
            &self.cfg.prompt_len
        };
        let v = match dist {
            LengthDist::Constant { value } => *value,
            LengthDist::Uniform { min, max } => {
                let (min, max) = (*min, *max);
                self.rng.gen_range(min..=max)
            }
            LengthDist::LogNormal { .. } => {
                let params = if output {
                    self.lognormal_output
                } else {
                    self.lognormal_prompt
                };
                let (mu, sigma) = params.unwrap_or((0.0, 0.0));
                let x = libm::exp(mu + sigma * self.normal());
                libm::round(x).clamp(1.0, MAX_LEN as f64) as u32
            }
            LengthDist::Empirical { values } => {
                // A u64 draw: a usize range would draw 32 bits on wasm32 and 64 natively.
                let n = values.len().max(1) as u64;
                let i = self.rng.gen_range(0..n) as usize;
                values.get(i).copied().unwrap_or(1)
            }
            LengthDist::Sequence { values } => {
                let counter = if output {
                    &mut self.output_seq
                } else {
                    &mut self.prompt_seq
                };
                let v = values.get(*counter % values.len().max(1)).copied();
                *counter += 1;
                v.unwrap_or(1)
            }
        };
        v.clamp(1, MAX_LEN)
    }

    fn draw_tenant(&mut self) -> u32 {
        if self.cfg.tenants <= 1 {
            0
        } else {
            self.rng.gen_range(0..self.cfg.tenants)
        }
    }

    fn content_id(&mut self) -> u64 {
        self.created += 1;
        mix64(self.cfg.seed ^ mix64(self.created))
    }

    /// Creates the first turn of a new session (or an independent request) arriving at `t`.
    fn start(&mut self, t: f64) -> GeneratedRequest {
        let tenant = self.draw_tenant();
        let user = self.draw_len(Length::Prompt);
        let output_len = self.draw_len(Length::Output);
        let Some(sc) = self.cfg.sessions.clone() else {
            // A content id is drawn once and never resent (no sessions): fresh.
            let content = self.content_id();
            return self.emit(t, Prompt::fresh(content, user), output_len, tenant, None);
        };
        let session = self.next_session;
        self.next_session += 1;
        let mut prompt = Prompt::default();
        if sc.system_prompt_len > 0 {
            // Every session of a tenant shares its system prompt.
            prompt.segments.push(Segment {
                content: mix64(0x5157_u64 ^ mix64(tenant as u64 + 1)),
                len: sc.system_prompt_len,
            });
        }
        let content = self.content_id();
        prompt.segments.push(Segment { content, len: user });
        let whole = prompt.len();
        self.schedule_next_turn(
            &sc,
            t,
            session,
            tenant,
            sc.turns - 1,
            (&prompt, whole),
            output_len,
        );
        self.emit(t, prompt, output_len, tenant, Some(session))
    }

    /// Queues the turn after one that arrived at `t` with this prompt and reply length.
    #[allow(clippy::too_many_arguments)]
    fn schedule_next_turn(
        &mut self,
        sc: &SessionConfig,
        t: f64,
        session: u64,
        tenant: u32,
        turns_left: u32,
        (prompt, whole): (&Prompt, u32),
        output_len: u32,
    ) {
        if turns_left == 0 {
            return;
        }
        let arrival = t + output_len as f64 * sc.reply_time_per_token_s + sc.think_time_s;
        if arrival > self.cfg.duration_s || !arrival.is_finite() {
            return;
        }
        let mut next = prompt.clone();
        let reply = reply_content(prompt);
        next.segments.push(Segment {
            content: reply,
            len: output_len,
        });
        let user = self.draw_len(Length::Prompt);
        let content = self.content_id();
        next.segments.push(Segment { content, len: user });
        let whole = whole.saturating_add(output_len).saturating_add(user);
        if sc.history_limit > 0 {
            // The shared system prompt stays first; the oldest history after it goes.
            let first = usize::from(sc.system_prompt_len > 0);
            while next.len() > sc.history_limit && next.segments.len() > first + 1 {
                next.segments.remove(first);
            }
        }
        let next_output = self.draw_len(Length::Output);
        let order = self.created;
        self.turns.push(Due {
            t: arrival,
            // Creation order breaks ties.
            seq: order,
            item: PendingTurn {
                session,
                tenant,
                turns_left: turns_left - 1,
                prompt: next,
                output_len: next_output,
                whole,
            },
        });
    }

    fn emit(
        &mut self,
        arrival: f64,
        prompt: Prompt,
        output_len: u32,
        tenant: u32,
        session: Option<u64>,
    ) -> GeneratedRequest {
        let id = self.next_id;
        self.next_id += 1;
        GeneratedRequest {
            id,
            arrival,
            prompt,
            output_len,
            tenant,
            session,
            history_dropped: 0,
        }
    }
}

impl Iterator for RequestStream {
    type Item = GeneratedRequest;

    fn next(&mut self) -> Option<GeneratedRequest> {
        let turn_first = match (self.next_arrival, self.turns.peek()) {
            (None, None) => return None,
            (Some(a), Some(t)) => t.t < a,
            (None, Some(_)) => true,
            (Some(_), None) => false,
        };
        if turn_first {
            let Due {
                t: arrival,
                item: turn,
                ..
            } = self.turns.pop()?;
            if let Some(sc) = self.cfg.sessions.clone() {
                self.schedule_next_turn(
                    &sc,
                    arrival,
                    turn.session,
                    turn.tenant,
                    turn.turns_left,
                    (&turn.prompt, turn.whole),
                    turn.output_len,
                );
            }
            let dropped = turn.whole.saturating_sub(turn.prompt.len());
            let mut r = self.emit(
                arrival,
                turn.prompt,
                turn.output_len,
                turn.tenant,
                Some(turn.session),
            );
            r.history_dropped = dropped;
            return Some(r);
        }
        let t = self.next_arrival?;
        self.arrivals_made += 1;
        self.next_arrival = self.draw_arrival(t);
        Some(self.start(t))
    }
}

/// Which of a request's lengths a draw is for (each has its own distribution and state).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Length {
    Prompt,
    Output,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(cfg: &WorkloadConfig, n: usize) -> Vec<GeneratedRequest> {
        RequestStream::new(cfg).unwrap().take(n).collect()
    }

    #[test]
    fn poisson_rate_and_constant_lengths() {
        let cfg = WorkloadConfig::seed_replica();
        let reqs: Vec<_> = RequestStream::new(&cfg).unwrap().collect();
        // 22,500 expected in an hour; a Poisson count is within 3 % at this size.
        assert!(
            (reqs.len() as f64 - 22_500.0).abs() < 675.0,
            "{}",
            reqs.len()
        );
        assert!(reqs.windows(2).all(|w| w[0].arrival <= w[1].arrival));
        assert!(reqs
            .iter()
            .all(|r| r.prompt.len() == 1000 && r.output_len == 250));
        assert!(reqs.iter().enumerate().all(|(i, r)| r.id == i as u64));
    }

    #[test]
    fn same_seed_same_stream_and_other_seed_differs() {
        let mut cfg = WorkloadConfig::seed_replica();
        cfg.prompt_len = LengthDist::LogNormal {
            mean: 1000.0,
            p99: 6000.0,
        };
        let a = take(&cfg, 500);
        let b = take(&cfg, 500);
        assert!(a
            .iter()
            .zip(&b)
            .all(|(x, y)| x.arrival.to_bits() == y.arrival.to_bits() && x.prompt == y.prompt));
        cfg.seed = 2;
        let c = take(&cfg, 500);
        assert!(a.iter().zip(&c).any(|(x, y)| x.arrival != y.arrival));
    }

    /// Checks that the sample mean (and, for a lognormal, the sample p99) of many draws is near
    /// the configured figure.
    fn check_lengths(dist: LengthDist, mean: f64, p99: Option<f64>) {
        let mut cfg = WorkloadConfig::seed_replica();
        cfg.arrival = Arrival::Constant { rate: 1000.0 };
        cfg.prompt_len = dist.clone();
        let mut lens: Vec<f64> = take(&cfg, 200_000)
            .iter()
            .map(|r| r.prompt.len() as f64)
            .collect();
        let m = lens.iter().sum::<f64>() / lens.len() as f64;
        assert!((m - mean).abs() < 0.02 * mean, "{dist:?}: mean {m}");
        if let Some(p) = p99 {
            lens.sort_by(f64::total_cmp);
            let q = lens[(lens.len() as f64 * 0.99) as usize];
            assert!((q - p).abs() < 0.05 * p, "{dist:?}: p99 {q}");
        }
    }

    #[test]
    fn length_distributions_hit_their_parameters() {
        check_lengths(LengthDist::Uniform { min: 100, max: 300 }, 200.0, None);
        check_lengths(
            LengthDist::LogNormal {
                mean: 1000.0,
                p99: 5000.0,
            },
            1000.0,
            Some(5000.0),
        );
        check_lengths(
            LengthDist::Empirical {
                values: vec![10, 20, 90],
            },
            40.0,
            None,
        );
    }

    #[test]
    fn gamma_gaps_have_the_requested_mean_and_cv() {
        let mut cfg = WorkloadConfig::seed_replica();
        for cv in [0.5, 2.0] {
            cfg.arrival = Arrival::Gamma { rate: 10.0, cv };
            cfg.duration_s = 1e6;
            let t: Vec<f64> = take(&cfg, 100_000).iter().map(|r| r.arrival).collect();
            let gaps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
            let n = gaps.len() as f64;
            let m = gaps.iter().sum::<f64>() / n;
            let sd = (gaps.iter().map(|g| (g - m) * (g - m)).sum::<f64>() / n).sqrt();
            assert!((m - 0.1).abs() < 0.003, "cv {cv}: mean gap {m}");
            assert!((sd / m - cv).abs() < 0.05 * cv, "cv {cv}: cv {}", sd / m);
        }
    }

    #[test]
    fn trace_and_sequence_give_an_exact_scenario() {
        let cfg = WorkloadConfig {
            arrival: Arrival::Trace {
                times: vec![0.0, 0.0, 0.5],
            },
            prompt_len: LengthDist::Sequence {
                values: vec![100, 2000],
            },
            output_len: LengthDist::Constant { value: 7 },
            ..WorkloadConfig::seed_replica()
        };
        let r = take(&cfg, 10);
        let got: Vec<(f64, u32)> = r.iter().map(|r| (r.arrival, r.prompt.len())).collect();
        assert_eq!(got, vec![(0.0, 100), (0.0, 2000), (0.5, 100)]);
    }

    #[test]
    fn session_turns_resend_the_history() {
        let cfg = WorkloadConfig {
            arrival: Arrival::Constant { rate: 0.01 },
            prompt_len: LengthDist::Constant { value: 50 },
            output_len: LengthDist::Constant { value: 100 },
            sessions: Some(SessionConfig {
                turns: 3,
                think_time_s: 5.0,
                system_prompt_len: 200,
                reply_time_per_token_s: 0.02,
                history_limit: 0,
            }),
            duration_s: 1000.0,
            ..WorkloadConfig::seed_replica()
        };
        let r = take(&cfg, 4);
        // Session 0 at t = 0, its turns at 7 s and 14 s; session 1 at 100 s.
        let got: Vec<(f64, Option<u64>, u32)> = r
            .iter()
            .map(|r| (r.arrival, r.session, r.prompt.len()))
            .collect();
        assert_eq!(
            got,
            vec![
                (0.0, Some(0), 250),
                (7.0, Some(0), 400),
                (14.0, Some(0), 550),
                (100.0, Some(1), 250)
            ]
        );
        assert_eq!(r[1].prompt.segments[..2], r[0].prompt.segments[..]);
        assert_eq!(r[2].prompt.segments[..4], r[1].prompt.segments[..]);
        assert_eq!(r[3].prompt.segments[0], r[0].prompt.segments[0]);
    }

    /// With a history limit the client drops the oldest text and replies, one at a time, until
    /// the prompt fits: the system prompt stays first, the newest text last, and the front of
    /// the history changes, so a later turn shares only the system prompt with an earlier one.
    #[test]
    fn a_history_limit_drops_the_oldest_turns() {
        let cfg = WorkloadConfig {
            arrival: Arrival::Constant { rate: 0.01 },
            prompt_len: LengthDist::Constant { value: 50 },
            output_len: LengthDist::Constant { value: 100 },
            sessions: Some(SessionConfig {
                turns: 4,
                think_time_s: 5.0,
                system_prompt_len: 200,
                reply_time_per_token_s: 0.02,
                history_limit: 420,
            }),
            duration_s: 1000.0,
            ..WorkloadConfig::seed_replica()
        };
        let r = take(&cfg, 4);
        let lens: Vec<u32> = r.iter().map(|r| r.prompt.len()).collect();
        // 250, then 400; then 550 less the first text (50) and its reply (100): 400; then
        // 400 + 150 less the next text and reply: 400 again.
        assert_eq!(lens, vec![250, 400, 400, 400]);
        for t in &r {
            assert_eq!(
                t.prompt.segments[0], r[0].prompt.segments[0],
                "system prompt first"
            );
            assert!(t.prompt.len() <= 420);
        }
        assert_ne!(r[2].prompt.segments[1], r[1].prompt.segments[1]);
        let dropped: Vec<u32> = r.iter().map(|r| r.history_dropped).collect();
        assert_eq!(dropped, vec![0, 0, 150, 300]);
        // No limit: the same turns resend everything.
        let whole = WorkloadConfig {
            sessions: cfg.sessions.clone().map(|s| SessionConfig {
                history_limit: 0,
                ..s
            }),
            ..cfg.clone()
        };
        let lens: Vec<u32> = take(&whole, 4).iter().map(|r| r.prompt.len()).collect();
        assert_eq!(lens, vec![250, 400, 550, 700]);
    }

    #[test]
    fn bad_fields_are_named() {
        let cases: Vec<(WorkloadConfig, &str)> = vec![
            (
                WorkloadConfig {
                    arrival: Arrival::Poisson { rate: f64::NAN },
                    ..WorkloadConfig::seed_replica()
                },
                "arrival.rate",
            ),
            (
                WorkloadConfig {
                    arrival: Arrival::Poisson { rate: -1.0 },
                    ..WorkloadConfig::seed_replica()
                },
                "arrival.rate",
            ),
            (
                WorkloadConfig {
                    prompt_len: LengthDist::Constant { value: 0 },
                    ..WorkloadConfig::seed_replica()
                },
                "prompt_len.value",
            ),
            (
                WorkloadConfig {
                    output_len: LengthDist::LogNormal {
                        mean: 100.0,
                        p99: 50.0,
                    },
                    ..WorkloadConfig::seed_replica()
                },
                "output_len.p99",
            ),
            (
                WorkloadConfig {
                    arrival: Arrival::Trace {
                        times: vec![1.0, 0.5],
                    },
                    ..WorkloadConfig::seed_replica()
                },
                "arrival.times[1]",
            ),
            (
                WorkloadConfig {
                    tenants: 0,
                    ..WorkloadConfig::seed_replica()
                },
                "tenants",
            ),
        ];
        for (cfg, field) in cases {
            assert_eq!(RequestStream::new(&cfg).unwrap_err().field, field);
        }
    }
}
