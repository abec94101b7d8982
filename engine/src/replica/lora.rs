//! Many LoRA adapters on one base model (vLLM's `--enable-lora`): each tenant's requests run
//! that tenant's adapter. A step may hold requests of at most `max_loras` distinct adapters
//! (vLLM's scheduler passes over a waiting request whose adapter would be one too many and
//! takes the next); an adapter must sit in one of the `max_loras` GPU slots while its requests
//! run, and one that is not there is copied in before the step, from host memory when it is in
//! the host cache of `max_cpu_loras` adapters, else read from storage first. The slots and the
//! host cache each let their least recently used adapter go.

use crate::error::{check_in, ConfigError};
use serde::{Deserialize, Serialize};
use std::ops::RangeInclusive;

/// The adapters' knobs, named as in vLLM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoraConfig {
    /// Distinct adapters in one step, and GPU slots holding adapters (vLLM's default: 1).
    pub max_loras: u32,
    /// The adapters' rank (vLLM sizes its slots and kernels to `max_lora_rank`, default 16;
    /// here every adapter has this rank).
    pub max_lora_rank: u32,
    /// Adapters kept in host memory; 0 means as many as `max_loras` (vLLM's default).
    pub max_cpu_loras: u32,
    /// GB/s at which an adapter missing from host memory is read from storage and unpacked.
    /// An assumed effective rate (a data-centre NVMe drive reads 3 to 7 GB/s; parsing the
    /// file and building the tensors takes its share), not a measured one.
    pub storage_gb_s: f64,
}

impl Default for LoraConfig {
    fn default() -> Self {
        LoraConfig {
            max_loras: 1,
            max_lora_rank: 16,
            max_cpu_loras: 0,
            storage_gb_s: 2.0,
        }
    }
}

impl LoraConfig {
    pub const MAX_LORAS_RANGE: RangeInclusive<u32> = 1..=256;
    /// vLLM accepts ranks 1, 8, 16, 32, 64, 128, 256, 320 and 512; any rank up to 512 runs here.
    pub const RANK_RANGE: RangeInclusive<u32> = 1..=512;
    pub const MAX_CPU_LORAS_RANGE: RangeInclusive<u32> = 0..=100_000;
    pub const STORAGE_GB_S_RANGE: RangeInclusive<f64> = 0.01..=1000.0;

    pub fn validate(&self) -> Result<(), ConfigError> {
        let whole = |field: &str, v: u32, r: &RangeInclusive<u32>| {
            check_in(field, v as f64, &(*r.start() as f64..=*r.end() as f64))
        };
        whole("max_loras", self.max_loras, &Self::MAX_LORAS_RANGE)?;
        whole("max_lora_rank", self.max_lora_rank, &Self::RANK_RANGE)?;
        whole(
            "max_cpu_loras",
            self.max_cpu_loras,
            &Self::MAX_CPU_LORAS_RANGE,
        )?;
        if self.max_cpu_loras != 0 && self.max_cpu_loras < self.max_loras {
            return Err(ConfigError::new(
                "max_cpu_loras",
                format!(
                    "must be 0 or at least max_loras ({}), got {}",
                    self.max_loras, self.max_cpu_loras
                ),
            ));
        }
        check_in("storage_gb_s", self.storage_gb_s, &Self::STORAGE_GB_S_RANGE).map(|_| ())
    }

    /// Adapters the host cache holds.
    pub fn host_slots(&self) -> u32 {
        if self.max_cpu_loras == 0 {
            self.max_loras
        } else {
            self.max_cpu_loras
        }
    }
}

/// The replica's adapters: what the GPU slots and the host cache hold, and the distinct
/// adapters of the step being composed.
#[derive(Clone, Debug)]
pub(super) struct Adapters {
    pub(super) cfg: LoraConfig,
    /// (adapter, step that last used it), at most `max_loras`.
    gpu: Vec<(u32, u64)>,
    /// (adapter, step that last used it), at most `host_slots()`.
    host: Vec<(u32, u64)>,
    /// Distinct adapters of the step being composed.
    pub(super) scheduled: Vec<u32>,
    tick: u64,
}

/// What putting a step's adapters in place took.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Loads {
    /// Adapters copied into a GPU slot.
    pub(super) gpu: u32,
    /// Of those, adapters read from storage first.
    pub(super) storage: u32,
}

impl Adapters {
    pub(super) fn new(cfg: LoraConfig) -> Adapters {
        Adapters {
            gpu: Vec::with_capacity(cfg.max_loras as usize),
            host: Vec::new(),
            scheduled: Vec::with_capacity(cfg.max_loras as usize),
            tick: 0,
            cfg,
        }
    }

    /// Starts composing a step.
    pub(super) fn begin(&mut self) {
        self.scheduled.clear();
        self.tick += 1;
    }

    /// Whether a request of `adapter` may join the step (vLLM's check before it schedules a
    /// waiting request: its adapter is in the step already, or the step has room for one more).
    pub(super) fn may_join(&self, adapter: u32) -> bool {
        self.scheduled.contains(&adapter) || (self.scheduled.len() as u32) < self.cfg.max_loras
    }

    /// A request of `adapter` is in the step.
    pub(super) fn join(&mut self, adapter: u32) {
        if !self.scheduled.contains(&adapter) {
            self.scheduled.push(adapter);
        }
    }

    /// Puts every adapter of the step in a GPU slot, letting go of the least recently used
    /// adapter the step does not use; returns what had to be loaded.
    pub(super) fn load(&mut self) -> Loads {
        let mut loads = Loads::default();
        let tick = self.tick;
        let host_slots = self.cfg.host_slots() as usize;
        for &a in &self.scheduled {
            if let Some(e) = self.gpu.iter_mut().find(|e| e.0 == a) {
                e.1 = tick;
                continue;
            }
            loads.gpu += 1;
            match self.host.iter_mut().find(|e| e.0 == a) {
                Some(e) => e.1 = tick,
                None => {
                    loads.storage += 1;
                    if self.host.len() >= host_slots {
                        lru_out(&mut self.host, &[]);
                    }
                    self.host.push((a, tick));
                }
            }
            if self.gpu.len() >= self.cfg.max_loras as usize {
                lru_out(&mut self.gpu, &self.scheduled);
            }
            self.gpu.push((a, tick));
        }
        loads
    }

    /// Whether `adapter` sits in a GPU slot now.
    pub(super) fn resident(&self, adapter: u32) -> bool {
        self.gpu.iter().any(|e| e.0 == adapter)
    }

    /// Adapters in GPU slots now.
    pub(super) fn resident_count(&self) -> u32 {
        self.gpu.len() as u32
    }
}

/// Removes the least recently used entry whose adapter is not in `keep`.
fn lru_out(entries: &mut Vec<(u32, u64)>, keep: &[u32]) {
    let victim = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| !keep.contains(&e.0))
        .min_by_key(|(_, e)| e.1)
        .map(|(i, _)| i);
    if let Some(i) = victim {
        entries.swap_remove(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapters(max_loras: u32, cpu: u32) -> Adapters {
        Adapters::new(LoraConfig {
            max_loras,
            max_cpu_loras: cpu,
            ..LoraConfig::default()
        })
    }

    #[test]
    fn a_step_holds_at_most_max_loras_adapters() {
        let mut a = adapters(2, 0);
        a.begin();
        assert!(a.may_join(7));
        a.join(7);
        a.join(7);
        assert!(a.may_join(9));
        a.join(9);
        assert!(a.may_join(7) && a.may_join(9));
        assert!(!a.may_join(3), "a third adapter in a step of max_loras 2");
    }

    #[test]
    fn slots_let_the_least_recently_used_adapter_go_and_the_host_cache_keeps_it() {
        let mut a = adapters(2, 3);
        for (step, adapter) in [1u32, 2, 1, 3].into_iter().enumerate() {
            a.begin();
            a.join(adapter);
            let l = a.load();
            let first = [0, 1, 3].contains(&step);
            assert_eq!(l.gpu, first as u32, "step {step}");
            assert_eq!(l.storage, first as u32, "step {step}");
        }
        // Adapter 2 was used least recently: 3 took its slot; 1 stays.
        assert!(a.resident(1) && a.resident(3) && !a.resident(2));
        a.begin();
        a.join(2);
        assert_eq!(
            a.load(),
            Loads { gpu: 1, storage: 0 },
            "adapter 2 comes back from host memory"
        );
        // With host room for max_loras only (vLLM's default), a fourth adapter pushes one out.
        let mut b = adapters(1, 0);
        for adapter in [1u32, 2, 1] {
            b.begin();
            b.join(adapter);
            assert_eq!(b.load(), Loads { gpu: 1, storage: 1 });
        }
    }

    #[test]
    fn an_adapter_the_step_uses_is_never_let_go() {
        let mut a = adapters(2, 0);
        a.begin();
        a.join(1);
        a.join(2);
        a.load();
        a.begin();
        a.join(2);
        a.join(3);
        assert_eq!(a.load().gpu, 1);
        assert!(a.resident(2) && a.resident(3) && !a.resident(1));
        assert_eq!(a.resident_count(), 2);
    }

    #[test]
    fn validation_names_the_field() {
        let bad = |c: LoraConfig| c.validate().unwrap_err().field;
        let d = LoraConfig::default();
        assert_eq!(
            bad(LoraConfig {
                max_loras: 0,
                ..d.clone()
            }),
            "max_loras"
        );
        assert_eq!(
            bad(LoraConfig {
                max_lora_rank: 0,
                ..d.clone()
            }),
            "max_lora_rank"
        );
        assert_eq!(
            bad(LoraConfig {
                max_loras: 4,
                max_cpu_loras: 2,
                ..d.clone()
            }),
            "max_cpu_loras"
        );
        assert_eq!(
            bad(LoraConfig {
                storage_gb_s: 0.0,
                ..d.clone()
            }),
            "storage_gb_s"
        );
        assert!(d.validate().is_ok());
    }
}
