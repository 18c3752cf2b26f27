//! [`Snapshot`]: a consistent view of one namespace at one sequence number **and one time**.
//! A key that expires after the snapshot was taken is still visible through it; compaction and
//! memtable pruning keep every version a live snapshot can see (it is pinned in the state).

use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::Cell;

use super::keys::{internal_key, validate_key};
use super::memtable::is_live;
use super::options::{Entry, ScanOptions};
use super::state::Inner;
use crate::error::{Error, Result};

/// A read-only view as of the moment it was taken, expiry included. Release it (or drop it) when
/// done: while it lives, the versions it can see are kept.
pub struct Snapshot {
    inner: Rc<Inner>,
    ns: u32,
    seq: u64,
    time: i64,
    released: Cell<bool>,
}

impl Snapshot {
    /// A snapshot of the keyspace with handle id `handle`: it reads the rows the keyspace has
    /// now, also after a clear moves the keyspace on.
    pub(crate) fn take(inner: Rc<Inner>, handle: u32) -> Result<Snapshot> {
        let (ns, seq, time) = {
            let mut st = inner.state.borrow_mut();
            st.check_open()?;
            let ns = st.keyspace_id(handle);
            st.policy_of(ns, None)?;
            let seq = st.last_seq;
            let time = inner.clock.now()?;
            st.pin(seq, time);
            (ns, seq, time)
        };
        Ok(Snapshot {
            inner,
            ns,
            seq,
            time,
            released: Cell::new(false),
        })
    }

    fn check(&self) -> Result<()> {
        if self.released.get() {
            return Err(Error::new(
                crate::ErrorKind::Closed,
                "the snapshot was released",
            ));
        }
        self.inner.state.borrow().check_open()
    }

    /// The time (ms since the Unix epoch) this snapshot evaluates expiry at.
    pub fn time(&self) -> i64 {
        self.time
    }

    /// The value of `key` as of the snapshot.
    pub async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.get_entry(key).await?.map(|e| e.value))
    }

    /// The entry of `key` as of the snapshot.
    pub async fn get_entry(&self, key: &[u8]) -> Result<Option<Entry>> {
        self.check()?;
        validate_key(key)?;
        let found = self
            .inner
            .lookup(&internal_key(self.ns, key), self.seq)
            .await?;
        Ok(found.filter(|v| is_live(v, self.time)).and_then(|v| {
            v.value.map(|value| Entry {
                key: key.to_vec(),
                value,
                expire_at: v.expire_at,
            })
        }))
    }

    /// Whether `key` was live as of the snapshot.
    pub async fn has(&self, key: &[u8]) -> Result<bool> {
        Ok(self.get_entry(key).await?.is_some())
    }

    /// Remaining TTL of `key` at the snapshot's time (`-1` no expiry, `-2` absent).
    pub async fn ttl(&self, key: &[u8]) -> Result<i64> {
        Ok(match self.get_entry(key).await? {
            None => -2,
            Some(Entry {
                expire_at: None, ..
            }) => -1,
            Some(Entry {
                expire_at: Some(at),
                ..
            }) => at - self.time,
        })
    }

    /// A scan as of the snapshot.
    pub async fn scan(&self, options: &ScanOptions) -> Result<Vec<Entry>> {
        self.check()?;
        self.inner
            .scan_at(self.ns, options, self.seq, self.time)
            .await
    }

    /// Let go of the snapshot; later calls fail with `Closed`. Releasing twice is harmless.
    pub fn release(&self) {
        if !self.released.replace(true) {
            if let Ok(mut st) = self.inner.state.try_borrow_mut() {
                st.unpin(self.seq, self.time);
            }
        }
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.release();
    }
}

impl core::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Snapshot")
            .field("seq", &self.seq)
            .field("time", &self.time)
            .finish_non_exhaustive()
    }
}
