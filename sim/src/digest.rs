//! A fixed, platform-independent 64-bit hasher, one word at a time, for trace digests and state
//! fingerprints. std's `DefaultHasher` is not promised to be stable across releases, and a
//! replay file's digest must be. (Replay files of format 1 hold FNV-1a digests, hashed a byte
//! at a time: a dependency chain four times longer on every step of every run.)

use std::hash::Hasher;

/// Combines two words into one (a splitmix64 finaliser): for fingerprints built step by step.
pub(crate) fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(31);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The digest hasher: each word written is mixed into the state; bytes are taken eight at a
/// time, little-endian, so the result is the same on every platform.
#[derive(Clone, Copy, Debug)]
pub struct Digest(u64);

impl Default for Digest {
    fn default() -> Self {
        Digest(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Digest {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.write_u64(u64::from_le_bytes(word.try_into().expect("8 bytes")));
        }
        let tail = words.remainder();
        if !tail.is_empty() {
            let mut word = [0u8; 8];
            word[..tail.len()].copy_from_slice(tail);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }

    fn write_u16(&mut self, n: u16) {
        self.write_u64(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = mix(self.0, n);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// A digest of a value.
pub(crate) fn of<T: std::hash::Hash + ?Sized>(value: &T) -> u64 {
    let mut h = Digest::default();
    value.hash(&mut h);
    h.finish()
}
