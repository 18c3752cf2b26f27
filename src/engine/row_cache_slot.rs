//! [`Slot`]: one entry of the row cache (`row_cache.rs`), a key's newest version with its key
//! and value in one buffer, so that a hit reads one allocation past the slot, and a fill into a
//! slot that held an entry reuses its buffer.

use alloc::vec::Vec;
use core::cell::Cell;

use crate::format::RowRef;

/// An entry: a key's newest version, its key and value in one buffer, so that a hit reads one
/// allocation past the slot.
#[derive(Debug)]
pub(super) struct Slot {
    pub(super) hash: u64,
    /// The key, then the value (nothing for a tombstone).
    bytes: Vec<u8>,
    key_len: usize,
    pub(super) seq: u64,
    ts: i64,
    expire_at: Option<i64>,
    tombstone: bool,
    /// Read since a fill last passed this slot over.
    pub(super) used: Cell<bool>,
}

impl Slot {
    /// The entry of the version `row` is, its bytes in `buf`'s allocation: an entry's old
    /// buffer takes the new one's bytes, so a warm cache of entries of like sizes allocates
    /// nothing.
    pub(super) fn of_row(hash: u64, row: &RowRef<'_>, mut buf: Vec<u8>) -> Slot {
        buf.clear();
        buf.reserve_exact(row.key.len() + row.value.map_or(0, <[u8]>::len));
        buf.extend_from_slice(row.key);
        buf.extend_from_slice(row.value.unwrap_or_default());
        Slot {
            hash,
            bytes: buf,
            key_len: row.key.len(),
            seq: row.seq,
            ts: row.ts,
            expire_at: row.expire_at,
            tombstone: row.value.is_none(),
            used: Cell::new(false),
        }
    }

    pub(super) fn key(&self) -> &[u8] {
        self.bytes.get(..self.key_len).unwrap_or_default()
    }

    /// The version held, as a row.
    pub(super) fn row(&self) -> RowRef<'_> {
        let (key, value) = self.bytes.split_at(self.key_len.min(self.bytes.len()));
        RowRef {
            key,
            seq: self.seq,
            ts: self.ts,
            expire_at: self.expire_at,
            value: (!self.tombstone).then_some(value),
        }
    }

    /// The bytes of its buffer (its slot is counted with the slots).
    pub(super) fn charge(&self) -> usize {
        self.bytes.capacity()
    }

    /// The version `row` is in place of the one held, in the same buffer; whether it was read
    /// since a fill passed it stays.
    pub(super) fn rewrite(&mut self, row: &RowRef<'_>) {
        let buf = core::mem::take(&mut self.bytes);
        let used = self.used.get();
        *self = Slot::of_row(self.hash, row, buf);
        self.used.set(used);
    }

    /// Its buffer, for the entry that takes its slot.
    pub(super) fn into_buffer(self) -> Vec<u8> {
        self.bytes
    }
}
