//! [`MapKey`]: a key as the engine's in-memory maps hold it (the memtable's, and a write's planned
//! rows, `memtable_map.rs`): up to 30 bytes in place, a longer key on the heap.
//!
//! A map's searches compare the key sought with the keys of its entries. A key on the heap is one
//! more load, which waits on the entry's load before it: in a memtable of tens of thousands of
//! keys, a cache miss each comparison. Held in place, a key is read where its entry is, and it
//! costs no allocation (nor its free) when a write plans it. Internal keys are a 4-byte namespace
//! id and the user's key, so user keys of up to 26 bytes are held in place; an expiry-index key
//! (12 bytes more) only when its user key is of 14 bytes or fewer. With the `inline-keys` feature
//! only (natively, on by default): the browser's engine leaves it out, and so does the server's
//! (in Node the session mixes and the ingest measured no faster with it).

use alloc::vec::Vec;
use core::fmt;
use core::ops::Deref;

/// The longest key held in place: with its length byte and the enum's tag, 32 bytes, as large as
/// a `MapKey` is anyway on a 64-bit target (the heap variant's `Vec` is 24 bytes, and the inline
/// variant leaves it no spare bit pattern for the tag).
#[cfg(feature = "inline-keys")]
pub(crate) const INLINE: usize = 30;

/// A byte-string key, in place up to [`INLINE`] bytes (see the module docs). It reads as the
/// slice of its bytes ([`Deref`]).
#[cfg(feature = "inline-keys")]
#[derive(Clone)]
pub(crate) enum MapKey {
    /// `bytes[..len]`.
    Inline { len: u8, bytes: [u8; INLINE] },
    /// Longer than [`INLINE`].
    Heap(Vec<u8>),
}

#[cfg(feature = "inline-keys")]
impl MapKey {
    /// `key`, in place if it is short enough, else copied to the heap.
    pub(crate) fn from_slice(key: &[u8]) -> MapKey {
        match u8::try_from(key.len()) {
            Ok(len) if key.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..key.len()].copy_from_slice(key);
                MapKey::Inline { len, bytes }
            }
            _ => MapKey::Heap(key.to_vec()),
        }
    }

    /// The key's bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            MapKey::Inline { len, bytes } => &bytes[..usize::from(*len)],
            MapKey::Heap(key) => key,
        }
    }

    /// Whether the key is held in place.
    #[cfg(test)]
    fn in_place(&self) -> bool {
        matches!(self, MapKey::Inline { .. })
    }
}

#[cfg(feature = "inline-keys")]
impl From<Vec<u8>> for MapKey {
    /// A short key copied in place (its buffer freed), a longer one kept where it is.
    fn from(key: Vec<u8>) -> MapKey {
        if key.len() <= INLINE {
            MapKey::from_slice(&key)
        } else {
            MapKey::Heap(key)
        }
    }
}

/// A byte-string key, on the heap (without the `inline-keys` feature).
#[cfg(not(feature = "inline-keys"))]
#[derive(Clone)]
pub(crate) struct MapKey(Vec<u8>);

#[cfg(not(feature = "inline-keys"))]
impl MapKey {
    /// `key`, copied to the heap.
    pub(crate) fn from_slice(key: &[u8]) -> MapKey {
        MapKey(key.to_vec())
    }

    /// The key's bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.0
    }

    /// Whether the key is held in place: never, without the feature.
    #[cfg(test)]
    fn in_place(&self) -> bool {
        false
    }
}

#[cfg(not(feature = "inline-keys"))]
impl From<Vec<u8>> for MapKey {
    /// The key, kept where it is.
    fn from(key: Vec<u8>) -> MapKey {
        MapKey(key)
    }
}

impl Deref for MapKey {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl PartialEq for MapKey {
    fn eq(&self, other: &MapKey) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for MapKey {}

impl fmt::Debug for MapKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn a_key_reads_back_as_its_bytes_whether_it_is_held_in_place_or_on_the_heap() {
        for len in 0..=40 {
            // Zero bytes among them, and at the end: the bytes past a key held in place are
            // zeros too, and must never count.
            let key: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(7) % 5).collect();
            let from_slice = MapKey::from_slice(&key);
            let from_vec = MapKey::from(key.clone());
            assert_eq!(&*from_slice, key.as_slice());
            assert_eq!(&*from_vec, key.as_slice());
            assert_eq!(from_slice, from_vec);
            let in_place = cfg!(feature = "inline-keys") && len <= 30;
            assert_eq!(from_slice.in_place(), in_place, "{len} bytes");
            assert_eq!(from_vec.in_place(), in_place, "{len} bytes");
        }
        // Keys that differ only past the inline bytes, or only in length (by zero bytes), differ.
        assert_ne!(MapKey::from(vec![1; 30]), MapKey::from(vec![1; 31]));
        assert_ne!(MapKey::from_slice(&[0]), MapKey::from_slice(&[]));
        assert_ne!(MapKey::from_slice(&[1, 0]), MapKey::from_slice(&[1]));
        assert_ne!(MapKey::from_slice(&[1, 0, 0]), MapKey::from(vec![1, 0]));
        assert_eq!(&*MapKey::from_slice(&[1, 0, 0]), &[1, 0, 0]);
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_key_takes_no_more_room_in_an_entry_than_32_bytes() {
        assert!(core::mem::size_of::<MapKey>() <= 32);
    }
}
