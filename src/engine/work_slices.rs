//! When long work gives the host a turn: a flush building its SST and a compaction's merge each
//! count the bytes they have written and, every
//! [`DbOptions::work_slice_bytes`](super::DbOptions::work_slice_bytes) of them, call
//! [`PageStore::yield_now`](crate::store::PageStore::yield_now).

/// The next point, in bytes written, at which the work gives the host a turn.
pub(crate) struct WorkSlices {
    slice_bytes: usize,
    next_turn: usize,
}

impl WorkSlices {
    pub(crate) fn new(slice_bytes: usize) -> Self {
        WorkSlices {
            slice_bytes,
            next_turn: slice_bytes,
        }
    }

    /// Whether the work, having written `written` bytes so far, is due a turn now (the next one
    /// is then a slice further on).
    pub(crate) fn turn_due(&mut self, written: usize) -> bool {
        if written < self.next_turn {
            return false;
        }
        self.next_turn = written.saturating_add(self.slice_bytes);
        true
    }
}
