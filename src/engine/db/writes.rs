//! The write calls of [`Db`]: put, delete, the expiry changes, `get_ex`, batches and `clear`.
//! Each validates its input, turns it into [`WriteOp`]s on internal keys, and hands them to
//! `Db::write_ops` (here), which retries once after a reclaim if the store is full
//! (`engine/reclaim.rs`) and calls the write path,
//! [`Inner::write_ops`](crate::engine::state::Inner::write_ops) in `engine/write/mod.rs`, which
//! says where each step of a write happens.

use alloc::vec::Vec;

use super::Db;
use crate::engine::batch::{BatchOp, WriteBatch};
use crate::engine::keys::validate_value;
use crate::engine::namespace::{expiry_after, validate_ttl};
use crate::engine::options::{ExpireCondition, GetExOptions, PurgeReport, PutOptions, Ttl};
use crate::engine::write::ops::{validate_expire_condition, ExpireTarget, Outcome, WriteOp};
use crate::error::Result;

/// Due expiry-index entries a clear purges per slice before it clears.
const CLEAR_PURGE_SLICE: usize = 1_000;

impl Db {
    /// Store `value` under `key` with the default TTL (the namespace's, else the database's).
    pub async fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.put_with_options(key, value, PutOptions::default())
            .await
            .map(|_| ())
    }

    /// Store `value` under `key` with an explicit TTL and condition. Returns `false` only when the
    /// condition (`IfAbsent` / `IfPresent`) failed and nothing was written.
    pub async fn put_with_options(
        &self,
        key: &[u8],
        value: &[u8],
        options: PutOptions,
    ) -> Result<bool> {
        let key = self.key(key)?;
        validate_value(value, self.inner.options.value_header_bytes)?;
        validate_ttl(options.ttl)?;
        let outcome = self
            .write_one(WriteOp::Put {
                key,
                value: value.to_vec(),
                ttl: options.ttl,
                condition: options.condition,
            })
            .await?;
        Ok(outcome.applied)
    }

    /// Remove `key`. Returns whether a live key was removed.
    pub async fn delete(&self, key: &[u8]) -> Result<bool> {
        let key = self.key(key)?;
        Ok(self.write_one(WriteOp::Delete { key }).await?.applied)
    }

    /// Make `key` expire `ttl_ms` from now. `false` if the key is absent or `condition` failed.
    /// A `ttl_ms` of 0 deletes the key (`true` if it was live), as Redis `PEXPIRE` does with a
    /// time not in the future. Unlike a put's TTL, it is not held to
    /// [`MAX_TTL_MS`](crate::MAX_TTL_MS): any `ttl_ms` whose expiry, now + `ttl_ms`, fits in an
    /// `i64` is taken (at most the end of time, which never comes); past that it is
    /// `InvalidArgument`, never a delete.
    pub async fn expire(
        &self,
        key: &[u8],
        ttl_ms: u64,
        condition: ExpireCondition,
    ) -> Result<bool> {
        let at = expiry_after(self.inner.clock.now()?, ttl_ms)?;
        self.expire_at(key, at, condition).await
    }

    /// Make `key` expire at `at_ms` (ms since the Unix epoch; a time not in the future removes
    /// the key). `false` if the key is absent or `condition` failed.
    pub async fn expire_at(
        &self,
        key: &[u8],
        at_ms: i64,
        condition: ExpireCondition,
    ) -> Result<bool> {
        let key = self.key(key)?;
        validate_expire_condition(condition)?;
        let op = WriteOp::Expire {
            key,
            target: ExpireTarget::At(at_ms),
            condition,
        };
        Ok(self.write_one(op).await?.applied)
    }

    /// Remove the expiry of `key`. `true` if it had one.
    pub async fn persist(&self, key: &[u8]) -> Result<bool> {
        let key = self.key(key)?;
        let op = WriteOp::Expire {
            key,
            target: ExpireTarget::Persist,
            condition: ExpireCondition::default(),
        };
        Ok(self.write_one(op).await?.applied)
    }

    /// Read `key` and change its expiry in the same step (Redis `GETEX`): sliding sessions.
    /// Returns the value, or `None` if the key is absent or expired (then nothing changes).
    pub async fn get_ex(&self, key: &[u8], options: GetExOptions) -> Result<Option<Vec<u8>>> {
        let key = self.key(key)?;
        let target = match options {
            GetExOptions::ExpireAfter(ms) => {
                validate_ttl(Ttl::ExpireAfter(ms))?;
                ExpireTarget::At(expiry_after(self.inner.clock.now()?, ms)?)
            }
            GetExOptions::ExpireAt(at) => ExpireTarget::At(at),
            GetExOptions::Persist => ExpireTarget::Persist,
        };
        Ok(self.write_one(WriteOp::GetEx { key, target }).await?.value)
    }

    /// Apply every operation of `batch` atomically. Returns `false` (and writes nothing) if a
    /// put condition in the batch failed.
    pub async fn write(&self, batch: WriteBatch) -> Result<bool> {
        let mut ops = Vec::with_capacity(batch.ops.len());
        for op in batch.ops {
            ops.push(match op {
                BatchOp::Put {
                    key,
                    value,
                    options,
                } => {
                    validate_value(&value, self.inner.options.value_header_bytes)?;
                    validate_ttl(options.ttl)?;
                    WriteOp::Put {
                        key: self.key(&key)?,
                        value,
                        ttl: options.ttl,
                        condition: options.condition,
                    }
                }
                BatchOp::Delete { key } => WriteOp::Delete {
                    key: self.key(&key)?,
                },
            });
        }
        self.policy()?;
        if ops.is_empty() {
            self.inner.state.borrow().check_writable()?;
            return Ok(true);
        }
        Ok(self.write_ops(&ops).await?.is_some())
    }

    /// Remove every key of this handle's keyspace (the default one, or this namespace) in one
    /// atomic step whose cost does not depend on the number of keys: the keys are gone for every
    /// later read, and compaction reclaims their space. A snapshot taken before still sees them.
    /// `Closed` on a dropped namespace.
    ///
    /// Keys that had expired before the clear still get their one expire event: what is due is
    /// purged first (as [`purge_expired`](Self::purge_expired) would, in every keyspace), and the
    /// report of that purge is returned; the keys the clear itself removes fire none.
    pub async fn clear(&self) -> Result<PurgeReport> {
        let mut report = PurgeReport::default();
        let mut full = None;
        // A full store: reclaim and try once more. The purges done so far stand, and their
        // events stay in `report`.
        while let Err(e) = self.clear_into(&mut report).await {
            self.inner.try_again_after(&mut full, e).await?;
        }
        report.more_due = false;
        Ok(self.with_unreported(report))
    }

    /// [`Db::clear`], adding what its purges did to `report`.
    async fn clear_into(&self, report: &mut PurgeReport) -> Result<()> {
        loop {
            let now = self.inner.clock.now()?;
            let due = {
                let st = self.inner.state.borrow();
                st.check_writable()?;
                st.expiry_may_be_due(now)
            };
            if due {
                let slice = self.inner.purge_expired(CLEAR_PURGE_SLICE).await?;
                let go_on = slice.more_due || slice.removed + slice.rewritten + slice.stale > 0;
                report.absorb(slice);
                if go_on {
                    continue;
                }
            }
            // The commit checks again that nothing came due meanwhile; if something did, purge
            // it and try again.
            if self.inner.clear_keyspace(self.ns).await? {
                return Ok(());
            }
        }
    }

    /// [`Db::write_ops`] of one op, and its outcome.
    async fn write_one(&self, op: WriteOp) -> Result<Outcome> {
        let outcomes = self.write_ops(&[op]).await?;
        Ok(outcomes
            .and_then(|o| o.into_iter().next())
            .unwrap_or_default())
    }

    /// Apply `ops` atomically in this handle's keyspace, recording the call if the handle does;
    /// if the store is full, once more after a reclaim, with the same ops (`reclaim.rs`: a write
    /// that failed wrote nothing). Next step:
    /// [`Inner::write_ops`](crate::engine::state::Inner::write_ops), in `engine/write/mod.rs`.
    async fn write_ops(&self, ops: &[WriteOp]) -> Result<Option<Vec<Outcome>>> {
        let record = self.call.as_deref();
        let mut full = None;
        loop {
            let policy = self.policy()?;
            match self.inner.write_ops(ops, policy, record).await {
                Err(e) => {
                    self.inner.try_again_after(&mut full, e).await?;
                }
                done => return done,
            }
        }
    }
}
