//! Build-up 1: request D, a 2,000-token prompt, joins a replica already decoding A, B and C.
//!
//! [`ReplicaStory::run`] runs the shipped scenario `replica-follow-one-chat` (with the
//! learner's changes: D's prompt length, the token budget, the pool size, prefix caching)
//! one event at a time and keeps a [`ReplicaFrame`] at the end of every engine step: the
//! step's batch, the budget it used, every KV block coloured by owner, and the queues. The six
//! chapters follow the content brief's steps: D arrives and waits for the next step; D is
//! prefilled in chunks; its blocks fill; its first token; the first preemption; the
//! preempted request's recompute. Tracing here is the driver looking at the replica between
//! events; the engine's hot path is unchanged.

use super::{Chapter, Figures, Variant};
use serde::{Deserialize, Serialize};
use trainer_engine::error::ConfigError;
use trainer_engine::format;
use trainer_engine::replica::{ReplicaSim, RequestRecord, TokenKind};
use trainer_engine::scenario::ReplicaScenario;
use trainer_engine::workload::LengthDist;

/// The requests' names, by id: three chats decoding, then D.
pub const NAMES: [&str; 4] = ["A", "B", "C", "D"];

/// D's id in the run.
pub const D: usize = 3;

/// The shipped scenario the build-up runs.
pub const SCENARIO: &str = "replica-follow-one-chat";

/// What the learner may change, each within [`ReplicaParams::RANGES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaParams {
    /// D's prompt, tokens.
    pub d_prompt: u32,
    /// The token budget per step (`max_num_batched_tokens`).
    pub budget: u32,
    /// The KV pool, blocks.
    pub pool_blocks: u32,
    pub prefix_caching: bool,
}

/// One request's share of a traced step.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchRow {
    /// Request index (see [`NAMES`]).
    pub who: usize,
    pub tokens: u32,
    pub kind: TokenKind,
    /// Tokens in its KV cache after the step.
    pub context: u32,
    /// Blocks in its table.
    pub blocks: u32,
}

/// One KV block at the end of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", content = "owner", rename_all = "snake_case")]
pub enum Cell {
    /// Never used, or freed without content worth keeping.
    Free,
    /// Free, but holding content a prefix-cache hit could reuse.
    Cached,
    /// In this request's block table.
    Owned(usize),
    /// Freed in this step; it was this request's.
    JustFreed(usize),
}

/// The replica at the end of one engine step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaFrame {
    /// The engine's step number (from 0).
    pub step: u64,
    pub start: f64,
    pub end: f64,
    /// The step's batch, in scheduling order.
    pub batch: Vec<BatchRow>,
    pub budget: u32,
    pub budget_used: u32,
    /// Every block of the pool, by block id.
    pub cells: Vec<Cell>,
    /// Requests in the waiting queue, in order.
    pub waiting: Vec<usize>,
    pub kv_used: u32,
    pub admitted: Vec<usize>,
    pub preempted: Vec<usize>,
    pub first_tokens: Vec<usize>,
    pub finished: Vec<usize>,
}

/// D's clocks as of the end of one frame.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DClock {
    pub arrival: f64,
    /// Arrival to first scheduled, once scheduled.
    pub waited: Option<f64>,
    /// Prefill chunks done, of how many.
    pub chunks_done: u32,
    pub chunks: u32,
    /// Arrival to first token, once it has one.
    pub ttft: Option<f64>,
}

/// The whole build-up: the run's frames and its six chapters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaStory {
    pub params: ReplicaParams,
    pub frames: Vec<ReplicaFrame>,
    pub chapters: Vec<Chapter>,
    pub requests: Vec<RequestRecord>,
    pub block_size: u32,
    pub kv_blocks_total: u32,
    pub kv_bytes_per_block: f64,
    /// D's prefill chunks before its first token: (frame, tokens).
    pub d_chunks: Vec<(usize, u32)>,
    pub preemptions: u64,
}

impl ReplicaParams {
    /// (field, lowest, highest) for each number the learner may change.
    pub const RANGES: [(&'static str, u32, u32); 3] = [
        ("prompt", 16, 8_000),
        ("budget", 16, 8_192),
        ("pool", 64, 4_096),
    ];

    /// The shipped scenario's values.
    pub fn shipped() -> ReplicaParams {
        let s = scenario();
        let sc = &s.config.replica.scheduler;
        let d_prompt = match &s.config.workload.prompt_len {
            LengthDist::Sequence { values } => values.get(D).copied().unwrap_or(2_000),
            _ => 2_000,
        };
        ReplicaParams {
            d_prompt,
            budget: sc.max_num_batched_tokens,
            pool_blocks: s.config.replica.kv_blocks_override.unwrap_or(240),
            prefix_caching: sc.enable_prefix_caching,
        }
    }

    /// Checks every value; the error names the URL key (`prompt`, `budget`, `pool`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let values = [self.d_prompt, self.budget, self.pool_blocks];
        for ((field, lo, hi), v) in Self::RANGES.iter().zip(values) {
            if v < *lo || v > *hi {
                return Err(ConfigError::new(
                    *field,
                    format!(
                        "must be {} to {}, got {}",
                        format::int(*lo as f64),
                        format::int(*hi as f64),
                        format::int(v as f64)
                    ),
                ));
            }
        }
        let s = scenario();
        let bs = s.config.replica.scheduler.block_size;
        let d_out = match &s.config.workload.output_len {
            LengthDist::Sequence { values } => values.get(D).copied().unwrap_or(1),
            _ => 1,
        };
        let need = (self.d_prompt + d_out - 1).div_ceil(bs);
        if need > self.pool_blocks {
            return Err(ConfigError::new(
                "prompt",
                format!(
                    "D's {}-token prompt and {}-token reply need {} blocks of {} tokens, more than the whole pool of {}",
                    format::int(self.d_prompt as f64),
                    d_out,
                    need,
                    bs,
                    self.pool_blocks
                ),
            ));
        }
        Ok(())
    }
}

fn scenario() -> ReplicaScenario {
    // The file is shipped and tested (`course/tests/buildups.rs`); it always parses.
    ReplicaScenario::builtin(SCENARIO).expect("the shipped build-up scenario parses")
}

impl ReplicaStory {
    /// The named engine the build-up's replica runs (the learner's changes leave it as is).
    pub fn engine() -> Option<trainer_engine::engine::Engine> {
        trainer_engine::engine::Engine::of_replica(&scenario().config.replica)
    }

    /// Runs the build-up's replica with `params` and cuts it into chapters.
    pub fn run(params: ReplicaParams) -> Result<ReplicaStory, ConfigError> {
        params.validate()?;
        let mut cfg = scenario().config;
        if let LengthDist::Sequence { values } = &mut cfg.workload.prompt_len {
            if let Some(v) = values.get_mut(D) {
                *v = params.d_prompt;
            }
        }
        let sc = &mut cfg.replica.scheduler;
        sc.max_num_batched_tokens = params.budget;
        sc.enable_prefix_caching = params.prefix_caching;
        cfg.replica.kv_blocks_override = Some(params.pool_blocks);
        cfg.replica.trace_capacity = 100_000;
        let mut sim = ReplicaSim::new(cfg)?;
        let total = sim.replica().kv_blocks_total() as usize;
        let mut frames: Vec<ReplicaFrame> = Vec::new();
        let mut owners = vec![None::<usize>; total];
        while sim.step_event() {
            let trace = sim.replica().trace();
            if trace.len() <= frames.len() {
                continue;
            }
            let tr = &trace[trace.len() - 1];
            let snap = sim.snapshot().replica;
            let mut now = vec![None::<usize>; total];
            for s in &snap.running {
                for &b in &s.blocks {
                    now[b as usize] = Some(s.id as usize);
                }
            }
            let mut cells: Vec<Cell> = now
                .iter()
                .zip(&owners)
                .map(|(n, before)| match (n, before) {
                    (Some(o), _) => Cell::Owned(*o),
                    (None, Some(o)) => Cell::JustFreed(*o),
                    (None, None) => Cell::Free,
                })
                .collect();
            for b in sim.replica().free_cached_blocks() {
                if cells[b as usize] == Cell::Free {
                    cells[b as usize] = Cell::Cached;
                }
            }
            owners = now;
            let ids = |v: &[u64]| v.iter().map(|&i| i as usize).collect::<Vec<_>>();
            frames.push(ReplicaFrame {
                step: tr.index,
                start: tr.start,
                end: tr.end,
                batch: tr
                    .entries
                    .iter()
                    .map(|e| BatchRow {
                        who: e.id as usize,
                        tokens: e.new_tokens,
                        kind: e.kind,
                        context: e.context_len,
                        blocks: e.blocks,
                    })
                    .collect(),
                budget: tr.budget,
                budget_used: tr.budget_used,
                cells,
                waiting: snap.waiting.iter().map(|s| s.id as usize).collect(),
                kv_used: tr.kv_blocks_used,
                admitted: ids(&tr.admitted),
                preempted: ids(&tr.preempted),
                first_tokens: ids(&tr.first_tokens),
                finished: ids(&tr.finished),
            });
        }
        let report = sim.report();
        if report.requests.len() != NAMES.len() || report.requests.iter().any(|r| r.rejected) {
            return Err(ConfigError::new(
                "prompt",
                "the replica refused one of the four requests",
            ));
        }
        let snap = sim.snapshot().replica;
        let mut story = ReplicaStory {
            params,
            frames,
            chapters: Vec::new(),
            requests: report.requests,
            block_size: snap.block_size,
            kv_blocks_total: snap.kv_blocks_total,
            kv_bytes_per_block: snap.kv_bytes_per_block,
            d_chunks: Vec::new(),
            preemptions: report.preemptions,
        };
        story.cut()?;
        Ok(story)
    }

    /// The frame where request `who` is first admitted, gets its first token, ...
    fn frame_where(&self, f: impl Fn(&ReplicaFrame) -> bool) -> Option<usize> {
        self.frames.iter().position(f)
    }

    /// D's clocks at the end of frame `k`.
    pub fn d_clock(&self, k: usize) -> DClock {
        let d = &self.requests[D];
        let end = self.frames.get(k).map_or(f64::INFINITY, |f| f.end);
        let start = self.frames.get(k).map_or(f64::INFINITY, |f| f.start);
        DClock {
            arrival: d.arrival,
            waited: d.admitted.filter(|&a| a <= start).map(|a| a - d.arrival),
            chunks_done: self.d_chunks.iter().filter(|(f, _)| *f <= k).count() as u32,
            chunks: self.d_chunks.len() as u32,
            ttft: d.first_token.filter(|&t| t <= end).map(|t| t - d.arrival),
        }
    }

    /// The name of a request.
    pub fn name(who: usize) -> &'static str {
        NAMES.get(who).copied().unwrap_or("?")
    }

    fn cut(&mut self) -> Result<(), ConfigError> {
        let missing = || ConfigError::new("trace", "the run's trace does not show D's prefill");
        let d = self.requests[D].clone();
        let k_admit = self
            .frame_where(|f| f.admitted.contains(&D))
            .ok_or_else(missing)?;
        let k_first = self
            .frame_where(|f| f.first_tokens.contains(&D))
            .ok_or_else(missing)?;
        let k_arrive = self
            .frames
            .iter()
            .rposition(|f| f.start < d.arrival)
            .unwrap_or(k_admit)
            .min(k_admit);
        self.d_chunks = (k_admit..=k_first)
            .filter_map(|k| {
                self.frames[k]
                    .batch
                    .iter()
                    .find(|r| r.who == D && r.kind == TokenKind::Prefill)
                    .map(|r| (k, r.tokens))
            })
            .collect();
        let last = self.frames.len() - 1;
        let total = self.kv_blocks_total as f64;
        let admitted = d.admitted.unwrap_or(d.arrival);
        let first_token = d.first_token.unwrap_or(d.arrival);
        let mut chapters = Vec::new();

        // 1. D waits only for the next step.
        let fa = &self.frames[k_arrive];
        let others = fa.batch.iter().filter(|r| r.who != D).count();
        let mut f = Figures::new();
        f.secs("d_arrival", d.arrival)
            .count("d_prompt", d.prompt_len as f64)
            .count("decoding", others as f64)
            .secs("step_in_flight", fa.end - fa.start)
            .secs("d_admitted", admitted)
            .secs("d_wait", admitted - d.arrival);
        chapters.push(chapter(
            "arrive",
            k_arrive,
            k_admit,
            f.done(),
            Variant::Happened,
        ));

        // 2. Chunked prefill under the budget while the others decode.
        let chunk_list = self
            .d_chunks
            .iter()
            .map(|(_, t)| format::int(*t as f64))
            .collect::<Vec<_>>()
            .join(", ");
        let decodes = self.frames[k_admit]
            .batch
            .iter()
            .filter(|r| r.kind == TokenKind::Decode)
            .count();
        let mut f = Figures::new();
        f.count("chunks", self.d_chunks.len() as f64)
            .add("chunk_list", self.d_chunks.len() as f64, chunk_list)
            .count("budget", self.params.budget as f64)
            .count("decodes_per_step", decodes as f64)
            .secs("prefill_time", first_token - admitted);
        chapters.push(chapter(
            "chunks",
            k_admit,
            k_first,
            f.done(),
            Variant::Happened,
        ));

        // 3. Paged blocks.
        let ff = &self.frames[k_first];
        let d_blocks = ff.batch.iter().find(|r| r.who == D).map_or(0, |r| r.blocks);
        let mut f = Figures::new();
        f.count("d_blocks", d_blocks as f64)
            .count("block_size", self.block_size as f64)
            .add(
                "block_bytes",
                self.kv_bytes_per_block,
                format!(
                    "{} MiB",
                    format::sig(self.kv_bytes_per_block / (1 << 20) as f64, 3)
                ),
            )
            .add(
                "d_bytes",
                d_blocks as f64 * self.kv_bytes_per_block,
                format!(
                    "{} MiB",
                    format::sig(
                        d_blocks as f64 * self.kv_bytes_per_block / (1 << 20) as f64,
                        3
                    )
                ),
            )
            .count("pool_used", ff.kv_used as f64)
            .count("pool_total", total)
            .pct("pool_pct", ff.kv_used as f64 / total);
        chapters.push(chapter(
            "blocks",
            k_admit,
            k_first,
            f.done(),
            Variant::Happened,
        ));

        // 4. First token after the last chunk.
        let mut f = Figures::new();
        f.secs("d_ttft", first_token - d.arrival)
            .secs("d_wait", admitted - d.arrival)
            .secs("prefill_time", first_token - admitted)
            .count("chunks", self.d_chunks.len() as f64);
        chapters.push(chapter(
            "first_token",
            k_first,
            (k_first + 1).min(last),
            f.done(),
            Variant::Happened,
        ));

        // 5 and 6: the first preemption, and the recompute it cost.
        let (k_peak, peak) = self
            .frames
            .iter()
            .enumerate()
            .max_by_key(|(i, f)| (f.kv_used, usize::MAX - i))
            .map(|(i, f)| (i, f.kv_used))
            .unwrap_or((0, 0));
        match self.frame_where(|f| !f.preempted.is_empty()) {
            Some(kp) => {
                let victim = self.frames[kp].preempted[0];
                let before = &self.frames[kp.saturating_sub(1)];
                let row = before.batch.iter().find(|r| r.who == victim);
                let held = before
                    .cells
                    .iter()
                    .filter(|c| **c == Cell::Owned(victim))
                    .count();
                let lost = row.map_or(0, |r| r.context);
                let v = &self.requests[victim];
                let mut f = Figures::new();
                f.name("victim", victim as f64, Self::name(victim).to_string())
                    .secs("preempt_at", self.frames[kp].start)
                    .count("free_before", total - before.kv_used as f64)
                    .count("pool_total", total)
                    .count("victim_blocks", held as f64)
                    .count("victim_tokens", lost as f64)
                    .secs("victim_admitted", v.admitted.unwrap_or(v.arrival));
                chapters.push(chapter(
                    "preempt",
                    kp.saturating_sub(1),
                    kp,
                    f.done(),
                    Variant::Happened,
                ));
                // The recompute: its prefill steps after the preemption, up to the step that
                // computed its last known token.
                let redo: Vec<(usize, u32)> = (kp + 1..self.frames.len())
                    .map(|k| (k, &self.frames[k]))
                    .filter_map(|(k, f)| {
                        f.batch
                            .iter()
                            .find(|r| r.who == victim && r.kind == TokenKind::Prefill)
                            .map(|r| (k, r.tokens))
                    })
                    .collect();
                // Only the first run of recompute steps (a later preemption starts another).
                let mut run: Vec<(usize, u32)> = Vec::new();
                for (k, t) in redo {
                    if run.last().is_some_and(|(p, _)| k != p + 1) {
                        break;
                    }
                    run.push((k, t));
                }
                let (k_start, k_done) = match (run.first(), run.last()) {
                    (Some(a), Some(b)) => (a.0, b.0),
                    _ => (last, last),
                };
                let recomputed: u32 = run.iter().map(|(_, t)| t).sum();
                // What it held once recomputed, less what it computed: prefix-cache hits.
                let held_after = self.frames[k_done]
                    .batch
                    .iter()
                    .find(|r| r.who == victim)
                    .map_or(recomputed, |r| r.context);
                let mut f = Figures::new();
                f.name("victim", victim as f64, Self::name(victim).to_string())
                    .secs(
                        "requeued",
                        self.frames[k_start].start - self.frames[kp].start,
                    )
                    .count("recompute_tokens", recomputed as f64)
                    .count("recompute_steps", run.len() as f64)
                    .secs(
                        "recompute_time",
                        self.frames[k_done].end - self.frames[k_start].start,
                    )
                    .count(
                        "cached_tokens",
                        held_after.saturating_sub(recomputed) as f64,
                    )
                    .secs("cost", self.frames[k_done].end - self.frames[kp].start)
                    .count("preemptions", self.preemptions as f64)
                    .pct("peak_pct", peak as f64 / total);
                chapters.push(chapter(
                    "recompute",
                    kp,
                    k_done,
                    f.done(),
                    Variant::Happened,
                ));
            }
            None => {
                let mut f = Figures::new();
                f.count("pool_total", total)
                    .count("peak_used", peak as f64)
                    .pct("peak_pct", peak as f64 / total)
                    .secs("peak_at", self.frames[k_peak].end);
                chapters.push(chapter(
                    "preempt",
                    k_peak,
                    k_peak,
                    f.done(),
                    Variant::Absent,
                ));
                let mut f = Figures::new();
                f.count("preemptions", 0.0)
                    .pct("peak_pct", peak as f64 / total)
                    .secs("last_finish", self.frames[last].end);
                chapters.push(chapter(
                    "recompute",
                    k_peak,
                    last,
                    f.done(),
                    Variant::Absent,
                ));
            }
        }
        self.chapters = chapters;
        Ok(())
    }
}

fn chapter(
    id: &'static str,
    first: usize,
    last: usize,
    figures: Vec<crate::buildup::Figure>,
    variant: Variant,
) -> Chapter {
    Chapter {
        id: id.into(),
        first,
        last: last.max(first),
        figures,
        variant,
    }
}
