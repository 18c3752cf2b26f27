//! [`Slot`]: one entry of the row cache (`row_cache.rs`), a key's newest version in one buffer:
//! the version's fields, then its key, then its value. A slot is the buffer's pointer and
//! lengths alone, so the cache's array of slots stays small enough to keep near the processor
//! (a hit reads its slot, then the buffer it points to), and a fill into a slot that held an
//! entry reuses its buffer.

use alloc::vec::Vec;

use crate::format::RowRef;

/// Where the fields of the version lie in a slot's buffer, before its key: the sequence
/// number, the time written and the expiry (little-endian), the key's length, and the flags.
const SEQ: usize = 0;
const TS: usize = 8;
const EXPIRE_AT: usize = 16;
const KEY_LEN: usize = 24;
const FLAGS: usize = 28;
/// The key starts here.
const HEADER: usize = 29;

/// Flag bits: the version is a tombstone (no value follows the key); it has an expiry.
const TOMBSTONE: u8 = 1;
const EXPIRES: u8 = 2;

/// An entry: a key's newest version, its fields, key and value in one buffer.
#[derive(Debug)]
pub(super) struct Slot {
    bytes: Vec<u8>,
}

impl Slot {
    /// The entry of the version `row` is, its bytes in `buf`'s allocation: an entry's old
    /// buffer takes the new one's bytes, so a warm cache of entries of like sizes allocates
    /// nothing. `None` for a key too long to tell its length in the buffer's four bytes (no key
    /// the engine takes comes near).
    pub(super) fn of_row(row: &RowRef<'_>, mut buf: Vec<u8>) -> Option<Slot> {
        let key_len = u32::try_from(row.key.len()).ok()?;
        let value = row.value.unwrap_or_default();
        let flags = if row.value.is_none() { TOMBSTONE } else { 0 }
            | if row.expire_at.is_some() { EXPIRES } else { 0 };
        buf.clear();
        buf.reserve_exact(HEADER + row.key.len() + value.len());
        buf.extend_from_slice(&row.seq.to_le_bytes());
        buf.extend_from_slice(&row.ts.to_le_bytes());
        buf.extend_from_slice(&row.expire_at.unwrap_or(0).to_le_bytes());
        buf.extend_from_slice(&key_len.to_le_bytes());
        buf.push(flags);
        buf.extend_from_slice(row.key);
        buf.extend_from_slice(value);
        Some(Slot { bytes: buf })
    }

    /// The eight bytes at `at` of the header.
    fn word(&self, at: usize) -> [u8; 8] {
        self.bytes
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .unwrap_or_default()
    }

    fn flags(&self) -> u8 {
        self.bytes.get(FLAGS).copied().unwrap_or(TOMBSTONE)
    }

    /// Where the key ends and the value starts.
    fn key_end(&self) -> usize {
        let len = self
            .bytes
            .get(KEY_LEN..KEY_LEN + 4)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u32::from_le_bytes);
        HEADER + len as usize
    }

    pub(super) fn key(&self) -> &[u8] {
        self.bytes.get(HEADER..self.key_end()).unwrap_or_default()
    }

    pub(super) fn seq(&self) -> u64 {
        u64::from_le_bytes(self.word(SEQ))
    }

    /// The version held, as a row.
    pub(super) fn row(&self) -> RowRef<'_> {
        let flags = self.flags();
        let key_end = self.key_end().min(self.bytes.len());
        let (head, value) = self.bytes.split_at(key_end);
        RowRef {
            key: head.get(HEADER..).unwrap_or_default(),
            seq: self.seq(),
            ts: i64::from_le_bytes(self.word(TS)),
            expire_at: (flags & EXPIRES != 0).then(|| i64::from_le_bytes(self.word(EXPIRE_AT))),
            value: (flags & TOMBSTONE == 0).then_some(value),
        }
    }

    /// The bytes of its buffer (its slot is counted with the slots).
    pub(super) fn charge(&self) -> usize {
        self.bytes.capacity()
    }

    /// Its buffer, for the entry that takes its slot.
    pub(super) fn into_buffer(self) -> Vec<u8> {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_gives_back_the_row_it_was_made_of() {
        let rows = [
            RowRef {
                key: b"k",
                seq: 7,
                ts: -3,
                expire_at: Some(i64::MIN),
                value: Some(b"value"),
            },
            RowRef {
                key: b"key",
                seq: u64::MAX,
                ts: i64::MAX,
                expire_at: None,
                value: None,
            },
            RowRef {
                key: b"",
                seq: 0,
                ts: 0,
                expire_at: Some(0),
                value: Some(b""),
            },
        ];
        let mut buf = Vec::new();
        for row in &rows {
            let slot = Slot::of_row(row, buf).unwrap();
            assert_eq!(slot.row(), *row);
            assert_eq!((slot.key(), slot.seq()), (row.key, row.seq));
            buf = slot.into_buffer();
        }
    }
}
