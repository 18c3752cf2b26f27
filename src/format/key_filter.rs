//! The key filter of an SST: a Bloom filter over every key it holds, kept in its metadata page.
//! A point read asks it first; "no" is certain, so the SST's data pages are not touched (on
//! IndexedDB, a round trip saved for every SST a key is not in). "Maybe" is wrong for about 1 %
//! of absent keys at [`BITS_PER_KEY`] bits per key.
//!
//! Each key is hashed once with XXH3-64; probe `i` of `probes` sets or tests bit
//! `(h1 + i·h2) mod bits`, where `h1` and `h2` are the hash's low and high 32 bits (double
//! hashing). The byte layout is in `docs/format.md`.

use alloc::vec;
use alloc::vec::Vec;

use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Error, Result};

/// Filter bits per distinct key.
pub const BITS_PER_KEY: usize = 10;

/// Probes per key: `BITS_PER_KEY · ln 2` (6.9) rounded down; 7 would save 0.02 % of false
/// positives for one more probe.
pub const PROBES: u8 = 6;

/// The most probes a decoder accepts.
const MAX_PROBES: u8 = 30;

/// A Bloom filter over the keys of one SST.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyFilter {
    probes: u8,
    bits: Vec<u8>,
}

/// The hash a filter is built from and probed with.
pub fn key_hash(key: &[u8]) -> u64 {
    xxh3_64(key)
}

impl KeyFilter {
    /// A filter holding every key whose [`key_hash`] is in `hashes` (duplicates are harmless).
    pub fn build(hashes: &[u64]) -> KeyFilter {
        let bytes = (hashes.len() * BITS_PER_KEY).div_ceil(8).max(8);
        let mut filter = KeyFilter {
            probes: PROBES,
            bits: vec![0; bytes],
        };
        let bit_count = filter.bit_count();
        for &hash in hashes {
            for bit in probe_bits(hash, filter.probes, bit_count) {
                if let Some(byte) = filter.bits.get_mut(byte_of(bit)) {
                    *byte |= 1 << (bit % 8);
                }
            }
        }
        filter
    }

    /// A filter from its parts, as stored: `Corruption` for 0 or more than 30 probes, or no bits.
    pub fn from_parts(probes: u8, bits: Vec<u8>) -> Result<KeyFilter> {
        if probes == 0 || probes > MAX_PROBES {
            return Err(Error::corruption("key filter probe count out of range"));
        }
        if bits.is_empty() {
            return Err(Error::corruption("key filter has no bits"));
        }
        Ok(KeyFilter { probes, bits })
    }

    /// Probes per key.
    pub fn probes(&self) -> u8 {
        self.probes
    }

    /// The filter's bits, 8 per byte, bit `i` in byte `i / 8` at position `i % 8`.
    pub fn bits(&self) -> &[u8] {
        &self.bits
    }

    /// False only if no key with this hash was added.
    pub fn may_contain_hash(&self, hash: u64) -> bool {
        probe_bits(hash, self.probes, self.bit_count()).all(|bit| {
            self.bits
                .get(byte_of(bit))
                .is_some_and(|byte| byte & (1 << (bit % 8)) != 0)
        })
    }

    /// False only if `key` was not added.
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.may_contain_hash(key_hash(key))
    }

    /// In `u64`: a filter of 512 MiB or more has more bits than a 32-bit `usize` counts.
    fn bit_count(&self) -> u64 {
        self.bits.len() as u64 * 8
    }
}

/// The bits `hash` sets: `(h1 + i·h2) mod bit_count` for `i` in `0..probes` (`bit_count > 0`).
fn probe_bits(hash: u64, probes: u8, bit_count: u64) -> impl Iterator<Item = u64> {
    let h1 = hash as u32;
    let h2 = (hash >> 32) as u32;
    (0..u32::from(probes)).map(move |i| u64::from(h1.wrapping_add(i.wrapping_mul(h2))) % bit_count)
}

/// The index of the byte holding `bit`; below the filter's length, so it fits a `usize`.
fn byte_of(bit: u64) -> usize {
    usize::try_from(bit / 8).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn every_added_key_is_reported_present() {
        let keys: Vec<Vec<u8>> = (0..5_000)
            .map(|i| format!("key-{i}").into_bytes())
            .collect();
        let hashes: Vec<u64> = keys.iter().map(|k| key_hash(k)).collect();
        let filter = KeyFilter::build(&hashes);
        assert!(keys.iter().all(|k| filter.may_contain(k)));
    }

    #[test]
    fn about_one_absent_key_in_a_hundred_is_a_false_positive() {
        let hashes: Vec<u64> = (0..10_000)
            .map(|i| key_hash(format!("present-{i}").as_bytes()))
            .collect();
        let filter = KeyFilter::build(&hashes);
        let false_positives = (0..100_000)
            .filter(|i| filter.may_contain(format!("absent-{i}").as_bytes()))
            .count();
        // 10 bits per key and 6 probes: 0.84 % in theory.
        assert!(false_positives < 1_500, "{false_positives} of 100000");
    }

    #[test]
    fn an_empty_filter_reports_nothing_present() {
        let filter = KeyFilter::build(&[]);
        assert!(!filter.may_contain(b"anything"));
    }

    #[test]
    fn stored_parts_out_of_range_are_corruption() {
        assert!(KeyFilter::from_parts(0, vec![0xff]).is_err());
        assert!(KeyFilter::from_parts(31, vec![0xff]).is_err());
        assert!(KeyFilter::from_parts(6, Vec::new()).is_err());
        assert!(KeyFilter::from_parts(6, vec![0xff]).is_ok());
    }
}
