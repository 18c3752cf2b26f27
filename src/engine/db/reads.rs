//! The read calls of [`Db`]: `get` and `get_with` (the row cache, then the search that needs no
//! page, then the one that may wait: [`Lookup`]), `get_entry`, `has`, `ttl`, `get_many`, `scan`
//! and `snapshot`. Each checks its input (a key, scan options) and hands over to the read path
//! ([`Inner::lookup_newest`](crate::engine::state::Inner::lookup_newest) and its kin in
//! `engine/read.rs`); liveness is decided here, against the clock's reading.

use alloc::vec::Vec;
use core::future::Future;

use super::Db;
use crate::engine::keys::{
    internal_key, internal_key_in, namespace_of, user_key, validate_key, INLINE_INTERNAL_KEY,
};
use crate::engine::memtable::{is_live, MemVersion};
use crate::engine::options::{Entry, ScanOptions};
use crate::engine::snapshot::Snapshot;
use crate::error::Result;

/// What [`Db::get_with`] gives: its answer at once, or the future of it.
#[derive(Debug)]
pub enum Lookup<R, S> {
    /// The answer, found without waiting.
    Now(R),
    /// The search that finds it.
    Later(S),
}

impl Db {
    /// The value of `key`, if it is present and not expired: as [`get_with`](Db::get_with)
    /// answers, the value copied once (without `row-cache` and `point-index`, which alone answer
    /// at once, as `get_entry` searches: the same answer, in less code).
    pub async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        #[cfg(any(feature = "row-cache", feature = "point-index"))]
        let value = match self.get_with(key, |v| v.map(<[u8]>::to_vec))? {
            Lookup::Now(value) => value,
            Lookup::Later(search) => search.await?,
        };
        #[cfg(not(any(feature = "row-cache", feature = "point-index")))]
        let value = self.live_version(key).await?.and_then(|v| v.value);
        Ok(value)
    }

    /// The lookup of [`get`](Db::get), its value (`None`: absent or expired) handed to `f`: at
    /// once ([`Lookup::Now`], lent, but a memtable's copied; `f` must not call into the engine)
    /// where the row cache holds `key` or (`point-index`) the search needs no page: a memtable
    /// holds it, or each SST rules it out or finds it through a point index over shared pages.
    /// Else the search `get_entry` makes too, as a boxed future ([`Lookup::Later`]: an answer at
    /// once stays small) that checks the handle and reads the keyspace where it is when it runs.
    pub fn get_with<R, F>(
        &self,
        key: &[u8],
        f: F,
    ) -> Result<Lookup<R, impl Future<Output = Result<R>> + 'static>>
    where
        F: Fn(Option<&[u8]>) -> R + 'static,
    {
        validate_key(key)?;
        // A closed handle fails `Closed` without asking the clock (whose reading may fail too).
        let keyspace = self.open_keyspace()?;
        let mut buf = [0; INLINE_INTERNAL_KEY];
        let ikey = internal_key_in(keyspace, key, &mut buf);
        // Asked again after the clock, which may run the app's code: the handle still open, and
        // `ikey` still in its keyspace (not cleared: else the search reads where its rows are).
        let current = || -> Result<bool> { Ok(self.open_keyspace()? == keyspace) };
        let hash =
            match self
                .inner
                .with_cached_newest(&ikey, || self.inner.clock.now(), current, &f)?
            {
                Ok(answer) => return Ok(Lookup::Now(answer)),
                Err(hash) => hash,
            };
        // Where no page has to be read (memory storage, or a key in a memtable), the search answers
        // now, the value lent where it lies, checked against a reading taken before it.
        #[cfg(feature = "point-index")]
        {
            let now = self.inner.clock.now()?;
            if current()? {
                if let Some(answer) = self.inner.with_searched_newest(&ikey, hash, now, &f)? {
                    return Ok(Lookup::Now(answer));
                }
            }
        }
        let db = self.clone();
        let ikey = ikey.into_owned();
        Ok(Lookup::Later(alloc::boxed::Box::pin(async move {
            let keyspace = db.open_keyspace()?;
            let found = if namespace_of(&ikey) == Some(keyspace) {
                db.inner.search_newest(&ikey, hash).await?
            } else {
                // A `clear` moved the keyspace between the call and this search: read where
                // its rows are now, as a `get` made now would.
                let moved = internal_key(keyspace, user_key(&ikey));
                db.inner.lookup_newest(&moved).await?
            };
            let live = db.live_now(found)?.and_then(|v| v.value);
            Ok(f(live.as_deref()))
        })))
    }

    /// The live entry of `key` with its expiry, if any.
    pub async fn get_entry(&self, key: &[u8]) -> Result<Option<Entry>> {
        Ok(self.live_version(key).await?.and_then(|v| {
            v.value.map(|value| Entry {
                key: key.to_vec(),
                value,
                expire_at: v.expire_at,
            })
        }))
    }

    /// The version of `key` a read sees now, if it holds a value that has not expired: what
    /// `get_entry`, `has` and `ttl` answer from (only `get_entry` copies the key), and `get` in an
    /// engine built with neither the row cache nor the point index.
    async fn live_version(&self, key: &[u8]) -> Result<Option<MemVersion>> {
        let ikey = self.key(key)?;
        self.policy()?;
        let found = self.inner.lookup_newest(&ikey).await?;
        self.live_now(found)
    }

    /// `found` if it holds a value that has not expired at the time the clock reads now.
    pub(super) fn live_now(&self, found: Option<MemVersion>) -> Result<Option<MemVersion>> {
        let now = self.inner.clock.now()?;
        Ok(found.filter(|v| is_live(v, now)))
    }

    /// The values of `keys`, in the same order (`None` where absent or expired).
    pub async fn get_many(&self, keys: &[&[u8]]) -> Result<Vec<Option<Vec<u8>>>> {
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            out.push(self.get(k).await?);
        }
        Ok(out)
    }

    /// Whether `key` is present and not expired.
    pub async fn has(&self, key: &[u8]) -> Result<bool> {
        Ok(self.live_version(key).await?.is_some())
    }

    /// Remaining time to live of `key` in ms: `-1` if it has no expiry, `-2` if it is absent or
    /// expired (Redis `PTTL`).
    pub async fn ttl(&self, key: &[u8]) -> Result<i64> {
        let Some(version) = self.live_version(key).await? else {
            return Ok(-2);
        };
        Ok(match version.expire_at {
            None => -1,
            Some(at) => (at - self.inner.clock.now()?).max(1),
        })
    }

    /// Live entries in key order (or reverse), as [`ScanOptions`] selects.
    pub async fn scan(&self, options: &ScanOptions) -> Result<Vec<Entry>> {
        self.policy()?;
        let read_seq = self.inner.state.borrow().last_seq;
        let now = self.inner.clock.now()?;
        self.inner
            .scan_at(self.keyspace(), options, read_seq, now)
            .await
    }

    /// A consistent view of this namespace now, expiry evaluated at this moment.
    pub fn snapshot(&self) -> Result<Snapshot> {
        Snapshot::take(self.inner.clone(), self.ns)
    }
}
