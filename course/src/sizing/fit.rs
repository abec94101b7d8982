//! Whether a replica holds what a question asks of it, and, when it does not, the smallest
//! tensor-parallel size (GPUs per replica) that does: the calculator's way out of a dead end
//! such as Llama 3.1 70B on one H100.

use super::derive::cost_and_memory;
use super::{Inputs, Question};
use serde::Serialize;
use trainer_engine::cost::{CostModel, MemoryConfig};
use trainer_engine::error::ConfigError;
use trainer_engine::format::{gb, int};

/// The GPUs per replica the fix tries, smallest first: the powers of two up to the field's
/// largest value, as tensor parallelism splits a model.
pub const TP_SIZES: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// What does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MisfitKind {
    /// The weights (and the reserve) fill the memory the engine may use: no KV cache at all.
    NoKvRoom,
    /// The chats question: one chat is longer than the whole KV pool.
    ChatTooLong,
}

/// A replica that cannot hold what the question asks, with the figures that say so and the
/// smallest GPUs per replica that would.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Misfit {
    /// What does not fit.
    pub kind: MisfitKind,
    /// GPUs per replica now.
    pub gpus: u32,
    /// The smallest of [`TP_SIZES`] that fits, all else unchanged; `None` when even the
    /// largest does not (then only a larger GPU or a smaller model helps).
    pub fix: Option<u32>,
    /// Bytes of weights on the replica.
    pub weight_bytes: f64,
    /// Bytes the engine may use on the replica's GPUs, less the reserve.
    pub usable_bytes: f64,
    /// Tokens the KV pool holds now (zero when there is no room).
    pub pool_tokens: f64,
    /// The chat length the chats question asks for (zero for the other questions).
    pub chat_tokens: f64,
}

/// Name of the input that sets the GPUs per replica, which the fix changes.
pub const FIX_FIELD: &str = "gpus_per_replica";

impl Misfit {
    /// The input the learner should change: GPUs per replica when some size fits, the GPU's
    /// memory when none does; for a chat too long, the chat's length (which was typed).
    pub fn field(&self) -> &'static str {
        match (self.kind, self.fix) {
            (MisfitKind::ChatTooLong, _) => "chat_tokens",
            (MisfitKind::NoKvRoom, Some(_)) => FIX_FIELD,
            (MisfitKind::NoKvRoom, None) => "gpu_mem_gb",
        }
    }

    /// The error on [`Misfit::field`]: a message that reads as a sentence after the field's
    /// label ("GPUs per replica is too few: …").
    pub fn error(&self) -> ConfigError {
        let fits = |tp: u32| format!("{tp} GPUs per replica leave room");
        let message = match (self.kind, self.fix) {
            (MisfitKind::NoKvRoom, Some(tp)) => format!(
                "is too few for these weights: {} of them fill the {} that {} may use, leaving \
                 no room for the KV cache; {}",
                gb(self.weight_bytes, 4),
                gb(self.usable_bytes.max(0.0), 4),
                gpus(self.gpus),
                fits(tp),
            ),
            (MisfitKind::NoKvRoom, None) => format!(
                "leaves no room for the KV cache: {} of weights fill what {} may use, and no \
                 more GPUs per replica make room; pick a larger GPU or a smaller model",
                gb(self.weight_bytes, 4),
                gpus(self.gpus),
            ),
            (MisfitKind::ChatTooLong, fix) => format!(
                "is longer than the whole KV pool of {} tokens, so not one chat of {} tokens \
                 fits; shorten the chat{}",
                int(self.pool_tokens),
                int(self.chat_tokens),
                match fix {
                    Some(tp) => format!(" or set GPUs per replica to {tp}"),
                    None => " or pick a larger GPU".to_string(),
                }
            ),
        };
        ConfigError::new(self.field(), message)
    }
}

fn gpus(n: u32) -> String {
    if n == 1 {
        "1 GPU".to_string()
    } else {
        format!("{n} GPUs")
    }
}

/// What does not fit on the replica the inputs describe, if anything; `None` when it fits or
/// when some input is bad in another way (its own error says so).
pub fn misfit(q: Question, inputs: &Inputs) -> Option<Misfit> {
    if !inputs.validate(q).is_empty() {
        return None;
    }
    let (cost, memory, _) = cost_and_memory(inputs).ok()?;
    misfit_of(q, inputs, &cost, &memory)
}

/// The smallest of [`TP_SIZES`] at which the replica holds what question `q` asks (room for
/// the KV cache, and for the chats question one whole chat), all other inputs unchanged;
/// `None` when none does or an input is bad in another way.
pub fn smallest_fitting_tp(q: Question, inputs: &Inputs) -> Option<u32> {
    if !inputs.validate(q).is_empty() {
        return None;
    }
    TP_SIZES.into_iter().find(|&tp| {
        let mut at = inputs.clone();
        at.set(q, FIX_FIELD, tp as f64).is_ok()
            && cost_and_memory(&at)
                .is_ok_and(|(cost, memory, _)| shortfall(q, &at, &cost, &memory).is_none())
    })
}

/// The misfit of a replica whose cost model is already built (the derivation's check).
pub(super) fn misfit_of(
    q: Question,
    inputs: &Inputs,
    cost: &CostModel,
    memory: &MemoryConfig,
) -> Option<Misfit> {
    let kind = shortfall(q, inputs, cost, memory)?;
    let tp = cost.deployment().tp;
    let usable = cost.kv_pool_bytes(memory) + cost.weight_bytes();
    Some(Misfit {
        kind,
        gpus: tp,
        fix: smallest_fitting_tp(q, inputs).filter(|&f| f != tp),
        weight_bytes: cost.weight_bytes(),
        usable_bytes: usable,
        pool_tokens: cost.kv_pool_tokens(memory),
        chat_tokens: if q == Question::ChatsPerReplica {
            inputs.get("chat_tokens").unwrap_or(0.0)
        } else {
            0.0
        },
    })
}

/// What the replica lacks for question `q`, if anything.
fn shortfall(
    q: Question,
    inputs: &Inputs,
    cost: &CostModel,
    memory: &MemoryConfig,
) -> Option<MisfitKind> {
    let pool = cost.kv_pool_tokens(memory);
    if pool < 1.0 {
        return Some(MisfitKind::NoKvRoom);
    }
    let chat = inputs.get("chat_tokens").unwrap_or(0.0);
    (q == Question::ChatsPerReplica && chat > pool).then_some(MisfitKind::ChatTooLong)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sizing::derive;

    fn with(q: Question, pairs: &[(&str, &str)]) -> Inputs {
        let mut i = Inputs::defaults(q);
        for (k, v) in pairs {
            i.set_text(q, k, v).expect("a valid value");
        }
        i
    }

    #[test]
    fn the_70b_model_on_one_h100_needs_two_gpus_per_replica() {
        let q = Question::Fleet;
        let i = with(q, &[("model", "llama-3.1-70b")]);
        let m = misfit(q, &i).expect("70B in BF16 does not fit one H100");
        assert_eq!((m.kind, m.gpus, m.fix), (MisfitKind::NoKvRoom, 1, Some(2)));
        assert_eq!(smallest_fitting_tp(q, &i), Some(2));
        assert_eq!(m.field(), "gpus_per_replica");
        // The derivation's error is the same, on the same field.
        let errs = derive(q, &i).unwrap_err();
        assert_eq!(errs, vec![m.error()]);
        assert!(
            m.error().message.starts_with("is too few"),
            "{}",
            m.error().message
        );
        // At the fix it derives, and one size below it still does not fit.
        let mut fixed = i.clone();
        fixed.set(q, FIX_FIELD, 2.0).unwrap();
        assert!(derive(q, &fixed).is_ok());
        assert!(misfit(q, &fixed).is_none());
    }

    #[test]
    fn the_fix_is_the_smallest_size_that_leaves_kv_room() {
        // 405B in BF16 holds about 811 GB of weights: 8 H100s may use 589 GB, 16 may use
        // 1,178 GB; in FP8 half the bytes fit on 8.
        let q = Question::GpuHours;
        let i = with(q, &[("model", "llama-3.1-405b")]);
        assert_eq!(smallest_fitting_tp(q, &i), Some(16));
        let fp8 = with(q, &[("model", "llama-3.1-405b"), ("weight_dtype", "fp8")]);
        assert_eq!(smallest_fitting_tp(q, &fp8), Some(8));
        for inputs in [&i, &fp8] {
            let tp = smallest_fitting_tp(q, inputs).unwrap();
            for smaller in TP_SIZES.into_iter().filter(|&t| t < tp) {
                let mut at = inputs.clone();
                at.set(q, FIX_FIELD, smaller as f64).unwrap();
                assert!(misfit(q, &at).is_some(), "{smaller} GPUs fit already");
            }
        }
        // What fits already needs nothing more, and its smallest size is what it has.
        let seed = Inputs::defaults(Question::Fleet);
        assert_eq!(misfit(Question::Fleet, &seed), None);
        assert_eq!(smallest_fitting_tp(Question::Fleet, &seed), Some(1));
    }

    #[test]
    fn no_size_fits_when_the_reserve_eats_every_gpu() {
        let q = Question::Fleet;
        let i = with(q, &[("gpu_mem_gb", "4"), ("reserve_gb", "3.9")]);
        let m = misfit(q, &i).expect("no room on any number of GPUs");
        assert_eq!((m.fix, m.field()), (None, "gpu_mem_gb"));
        assert_eq!(smallest_fitting_tp(q, &i), None);
        assert_eq!(derive(q, &i).unwrap_err()[0].field, "gpu_mem_gb");
    }

    #[test]
    fn a_chat_longer_than_the_pool_names_the_size_that_holds_it() {
        let q = Question::ChatsPerReplica;
        let i = with(q, &[("chat_tokens", "2000000")]);
        let m = misfit(q, &i).expect("two million tokens overflow four H100s");
        assert_eq!(m.kind, MisfitKind::ChatTooLong);
        let tp = m.fix.expect("some size holds it");
        let mut fixed = i.clone();
        fixed.set(q, FIX_FIELD, tp as f64).unwrap();
        assert!(derive(q, &fixed).is_ok());
        let mut below = i.clone();
        below.set(q, FIX_FIELD, (tp / 2) as f64).unwrap();
        assert!(derive(q, &below).is_err());
        assert_eq!(derive(q, &i).unwrap_err(), vec![m.error()]);
        assert!(m.error().message.starts_with("is longer than"));
    }
}
