//! The end of a step (vLLM's `update_from_output`): the batch's tokens are computed, each
//! request whose known tokens are all computed samples one, first tokens and finishes are
//! reported, finished requests free their blocks, the metrics and the trace are updated and
//! the next step is scheduled.

use super::{Replica, ReplicaEvent, State};
use crate::workload::Prompt;

impl Replica {
    /// Ends the step in flight: computes its tokens, samples, finishes requests, and schedules
    /// the next step.
    pub(super) fn finish_step(&mut self, start: f64, end: f64, events: &mut Vec<ReplicaEvent>) {
        if self.ff.take_fast_finish() {
            self.finish_fast_forwarded(start, end, events);
            return;
        }
        if std::mem::take(&mut self.spec_step) {
            self.finish_speculating(start, end, false, events);
            return;
        }
        self.settle();
        self.ff.invalidate();
        self.now = end;
        let dur = end - start;
        let returned0 = self.pool.returned;
        let mut decode_tokens = 0u32;
        let mut prefill_tokens = 0u32;
        let mut first_tokens = 0u32;
        let mut same_itl = 0u64;
        let mut any_finished = false;
        let mut guessed = 0u32;
        let mut extra_tokens = 0u32;
        let record = self.cfg.record_token_times;
        for k in 0..self.batch.len() {
            let (slot, new, prefill) = self.batch[k];
            let s = &mut self.seqs[slot as usize];
            // Speculative decoding: of a decoding request's guesses, those up to the first
            // wrong one are kept, with the target's own next token. The rejected guesses are
            // rolled back from the computed tokens only: as in vLLM's scheduler, the blocks
            // their slots took stay with the request, for its next guesses to write over.
            let mut kept = 0;
            match &self.proposer {
                Some(p) if !prefill && new > 1 => {
                    let guesses = new - 1;
                    kept = p.accepted(s.id, s.generated, guesses);
                    s.computed += 1 + kept;
                    self.metrics.spec_proposed += guesses as u64;
                    self.metrics.spec_accepted += kept as u64;
                    guessed += 1;
                }
                _ => s.computed += new,
            }
            if prefill {
                prefill_tokens += new;
            }
            if s.computed < s.prompt_len + s.generated {
                continue;
            }
            // Every known token is computed: sample the next one (and keep the accepted
            // guesses before it).
            s.generated += 1 + kept;
            extra_tokens += kept;
            s.in_decode = true;
            if s.has_first_token {
                decode_tokens += 1;
                if s.last_token_time == start {
                    same_itl += 1;
                } else {
                    if self.itl_samples {
                        self.metrics.itl.push(end - s.last_token_time);
                    }
                }
            } else {
                s.has_first_token = true;
                first_tokens += 1;
                events.push(ReplicaEvent::FirstToken { id: s.id, t: end });
                if let Some(tr) = self.cur_trace.as_mut() {
                    tr.first_tokens.push(s.id);
                }
            }
            s.last_token_time = end;
            if record {
                for _ in 0..=kept {
                    s.token_times.push(end);
                }
            }
            if s.generated >= s.output_len {
                any_finished = true;
                self.retire(slot, end, events);
            }
        }
        let decode_batch = self
            .batch
            .iter()
            .filter(|b| !b.2)
            .map(|b| b.1 as u64)
            .sum::<u64>();
        self.close_step(
            end,
            dur,
            Tally {
                same_itl,
                any_finished,
                decode_batch,
                prefill_tokens,
                decode_tokens,
                first_tokens,
                extra_tokens,
                guessed,
                returned0,
            },
            events,
        );
    }

    /// A request has produced its last token at `end`: it leaves the running requests (the
    /// caller drops it from the list), frees its blocks and its slot, and is reported.
    pub(super) fn retire(&mut self, slot: u32, end: f64, events: &mut Vec<ReplicaEvent>) {
        let s = &mut self.seqs[slot as usize];
        s.running = false;
        if s.hold_kv {
            // Its KV cache is still to be pulled: the blocks outlive the request.
            self.held_kv.push((s.id, std::mem::take(&mut s.blocks)));
        } else {
            self.pool.release_table(&s.blocks);
            s.blocks.clear();
        }
        self.metrics.finished += 1;
        self.metrics.finished_prompt_tokens += s.prompt_len as u64;
        events.push(ReplicaEvent::Finished {
            id: s.id,
            t: end,
            output_tokens: s.generated,
        });
        if let Some(tr) = self.cur_trace.as_mut() {
            tr.finished.push(s.id);
        }
        if self.cfg.record_token_times {
            let times = std::mem::take(&mut s.token_times);
            self.finished_token_times.push((s.id, times));
        }
        s.prompt = Prompt::default();
        self.free_slots.push(slot);
    }

    /// What every end of a step does after its requests have sampled: the step's metrics, its
    /// `StepEnd` event and trace, and the next step's schedule.
    pub(super) fn close_step(
        &mut self,
        end: f64,
        dur: f64,
        t: Tally,
        events: &mut Vec<ReplicaEvent>,
    ) {
        if self.itl_samples {
            self.metrics.itl.push_n(dur, t.same_itl);
        }
        if t.any_finished {
            let seqs = &self.seqs;
            self.running.retain(|&s| seqs[s as usize].running);
        }
        self.metrics.steps += 1;
        self.metrics.busy_time_s += dur;
        self.metrics.prefill_tokens += t.prefill_tokens as u64;
        self.metrics.decode_tokens += t.decode_batch;
        self.metrics.output_tokens += (t.decode_tokens + t.first_tokens + t.extra_tokens) as u64;
        self.metrics.spec_verifies += t.guessed as u64;
        let running = self.running.len() as u32;
        let waiting = (self.waiting.len() + self.pending.len()) as u32;
        let kv_blocks_used = self.pool.num_used();
        events.push(ReplicaEvent::StepEnd {
            t: end,
            duration: dur,
            decode_tokens: t.decode_tokens,
            prefill_tokens: t.prefill_tokens,
            first_tokens: t.first_tokens,
            running,
            waiting,
            kv_blocks_used,
        });
        if let Some(mut tr) = self.cur_trace.take() {
            tr.blocks_freed += (self.pool.returned - t.returned0) as u32;
            tr.kv_blocks_used = kv_blocks_used;
            tr.running = running;
            tr.waiting = waiting;
            self.trace.push(tr);
        }
        self.batch.clear();
        self.state = if !self.running.is_empty() || !self.waiting.is_empty() {
            State::StartAt(end)
        } else if let Some(&(t, _)) = self.pending.front() {
            State::StartAt(t.max(end))
        } else {
            State::Idle
        };
    }
}

/// What a step's end counted, for [`Replica::close_step`].
pub(super) struct Tally {
    /// Requests whose previous token came at the step's start (one ITL sample each of the
    /// step's duration).
    pub same_itl: u64,
    pub any_finished: bool,
    /// Tokens the batch computed for decoding requests (guesses included).
    pub decode_batch: u64,
    pub prefill_tokens: u32,
    /// Requests that sampled a token after their first.
    pub decode_tokens: u32,
    pub first_tokens: u32,
    /// Accepted guesses, beyond each request's one sampled token.
    pub extra_tokens: u32,
    /// Requests that verified guesses.
    pub guessed: u32,
    /// The pool's returned-block count when the step ended (for the trace).
    pub returned0: u64,
}
