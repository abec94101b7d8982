//! The hash index of the prefix cache's roots and orphans: open addressing over well-mixed
//! 64-bit keys, 8 bytes a slot, linear probing, backward-shift deletion.

/// An open-addressing map from block hash to block id, for keys that are already well-mixed
/// 64-bit hashes. Each slot is 8 bytes: the hash's high 32 bits as a tag (which also picks the
/// home slot) and the block id. A tag match is confirmed against the block's own full hash
/// (kept in the pool's block metadata), so tag collisions cost a probe, never a wrong answer.
/// Linear probing, backward-shift deletion. It is only ever looked up by key; nothing
/// iterates it in a way that affects results.
#[derive(Clone, Debug)]
pub(crate) struct HashIndex {
    /// `tag << 32 | (block + 1)`; 0 marks an empty slot.
    slots: Vec<u64>,
    pub(super) len: usize,
}

impl HashIndex {
    pub(super) fn new() -> HashIndex {
        HashIndex {
            slots: vec![0; 1024],
            len: 0,
        }
    }

    fn tag(h: u64) -> u64 {
        h >> 32
    }

    fn pack(h: u64, b: u32) -> u64 {
        Self::tag(h) << 32 | (b as u64 + 1)
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The block stored under `h` for which `confirm` holds.
    pub(super) fn get(&self, h: u64, confirm: impl Fn(u32) -> bool) -> Option<u32> {
        let tag = Self::tag(h);
        let mask = self.mask();
        let mut i = tag as usize & mask;
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if s >> 32 == tag {
                let b = (s as u32).wrapping_sub(1);
                if confirm(b) {
                    return Some(b);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Stores `b` under `h` unless a block `confirm` accepts is already stored under it, in one
    /// probe sequence; returns whether it stored.
    #[cfg(test)]
    pub(super) fn insert_unless_present(
        &mut self,
        h: u64,
        b: u32,
        confirm: impl Fn(u32) -> bool,
    ) -> bool {
        self.reserve(1);
        let stored = Self::insert_in(&mut self.slots, h, b, confirm);
        self.len += stored as usize;
        stored
    }

    /// Grows until `n` more entries keep the table at most a quarter full: short probe runs
    /// keep the branches of insert and remove predictable (the indexes hold only roots and
    /// orphans, a small share of the cached blocks, so the room costs little memory).
    fn reserve(&mut self, n: usize) {
        while (self.len + n) * 4 > self.slots.len() {
            self.grow();
        }
    }

    /// `insert_unless_present` on the slots alone (the caller counts and has made room).
    #[inline]
    fn insert_in(slots: &mut [u64], h: u64, b: u32, confirm: impl Fn(u32) -> bool) -> bool {
        let tag = Self::tag(h);
        let mask = slots.len() - 1;
        let mut i = tag as usize & mask;
        loop {
            let s = slots[i];
            if s == 0 {
                break;
            }
            if s >> 32 == tag && confirm((s as u32).wrapping_sub(1)) {
                return false;
            }
            i = (i + 1) & mask;
        }
        slots[i] = Self::pack(h, b);
        true
    }

    /// Stores `b` under `h` (the caller knows no entry for `h` should stop it).
    pub(super) fn insert(&mut self, h: u64, b: u32) {
        self.reserve(1);
        Self::insert_in(&mut self.slots, h, b, |_| false);
        self.len += 1;
    }

    /// Removes the entry for (`h`, `b`), if present.
    pub(super) fn remove(&mut self, h: u64, b: u32) {
        self.len -= Self::remove_in(&mut self.slots, h, b) as usize;
    }

    /// Removes the entry for (`h`, `b`) from the slots alone; returns whether it was there.
    #[inline]
    fn remove_in(slots: &mut [u64], h: u64, b: u32) -> bool {
        let v = Self::pack(h, b);
        let mask = slots.len() - 1;
        let mut i = Self::tag(h) as usize & mask;
        loop {
            let s = slots[i];
            if s == 0 {
                return false;
            }
            if s == v {
                break;
            }
            i = (i + 1) & mask;
        }
        // Backward-shift deletion: pull later members of the probe run into the hole.
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let s = slots[j];
            if s == 0 {
                break;
            }
            // The entry may fill the hole unless its home lies cyclically in (i, j]; as
            // distances back from j, without branches on the wrap-around.
            let home = (s >> 32) as usize & mask;
            let movable = (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(i) & mask);
            if movable {
                slots[i] = s;
                i = j;
            }
        }
        slots[i] = 0;
        true
    }

    fn grow(&mut self) {
        let bigger = vec![0; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        let mask = self.mask();
        for s in old {
            if s != 0 {
                let mut i = (s >> 32) as usize & mask;
                while self.slots[i] != 0 {
                    i = (i + 1) & mask;
                }
                self.slots[i] = s;
            }
        }
    }
}
