//! The purge: removing expired keys through the expiry index in O(expired keys).
//!
//! A slice walks the index from `purged_until` (every entry before it was handled) and stops at
//! the first entry not yet due (or at the slice's limit). For each entry it reads the key's
//! current row: if the row is still the one the entry was written for, the key expired and
//! produces exactly one [`ExpiredEntry`] (or is rewritten, if the expire hook returns a
//! replacement); otherwise the entry is stale (the key was overwritten, deleted or persisted).
//! An entry that carries a value is the record of a row that expired and was then replaced
//! before a purge reported it (written by the replacing write, see `write/plan.rs`): it produces
//! that row's event.
//!
//! Every verdict rests on the rows the slice read, so they are made durable before anything is
//! written or recorded on their strength; a rollback beside the slice makes it judge again.
//! An expired key needs no write: its row carries its expiry, so no read returns it. The slice
//! only moves `purged_until` past the entries it handled, and commits that manifest (after any
//! rewrites) before it reports, so a crash never fires an event twice. Entries before
//! `purged_until` are never read again; compaction drops them, and the expired rows they name,
//! without writing a tombstone for either (SNKV's and RocksDB's TTL filter: expiry is garbage
//! collection, not a delete). The one exception is a slice that ends inside the entries of one
//! expiry time: `purged_until` cannot name half of a millisecond, so the entries it handled there
//! are removed by tombstones instead, and so are their expired rows (so that no later write takes
//! one for a row whose event is owed); the next slice starts after the last of them.
//!
//! Owns the `Inner` methods [`purge_expired`](Inner::purge_expired),
//! [`find_next_expiry`](Inner::find_next_expiry) and the private `purge_slice`,
//! `commit_purged_until`, `owed_event` and `judge`; of the state, the manifest's `purged_until`,
//! and `State::next_expiry` (with `next_expiry_known` and `next_expiry_lookups`),
//! `State::purge_resume` and `State::purge_rows_walked`. Its writes (rewrites and dropped entries)
//! go through the write path (`write/mod.rs`), and are planned like any other.

use alloc::vec::Vec;

use super::keys::{
    expiry_index_from, namespace_of, owed_value, parse_expiry_index_key, user_key, validate_value,
};
use super::map_key::MapKey;
use super::memtable::{MemVersion, Versions};
use super::options::{ExpireHook, ExpiredEntry, PurgeReport, Ttl};
use super::state::{Inner, ReadPin};
use super::write::ops::WriteOp;
use super::write::plan::{CurrentRows, Planner};
use crate::error::{Error, Result};

/// What the purge decided about one due index entry.
enum Verdict {
    /// The key expired: one event, nothing to write.
    Expired(ExpiredEntry),
    /// The key expired and the hook rewrites it: this write, applied if the key still holds the
    /// row the purge read (given back, to serve as the write's read), and the event reported if
    /// the replacement is due by the time it is written.
    Rewrite(WriteOp, MemVersion, ExpiredEntry),
    /// The entry no longer describes the key's row, or its namespace was dropped.
    Stale,
}

/// One due expiry-index entry: `(expire_at, internal data key, index key, owed)`. `owed` is the
/// value of a row that expired and was then replaced before the purge reported it: the write
/// that replaced it recorded the value in the entry (see `write/plan.rs`), and its event is owed.
type DueEntry = (i64, Vec<u8>, Vec<u8>, Option<Vec<u8>>);

/// The entries one slice handles, and the `purged_until` it may record afterwards.
struct Slice {
    /// Oldest first.
    entries: Vec<DueEntry>,
    /// Every entry expiring before this is handled once the slice is done.
    horizon: i64,
    /// The slice ends inside the entries of `horizon`'s millisecond: each entry it handles must
    /// also be removed from the index, or the next slice would handle it again.
    drops_entries: bool,
}

/// Cut the due index rows read from `purged_until` on (up to `limit` + 1: the read asks for one
/// past the slice) into a slice of at most `limit` entries, and say whether more are due. A
/// slice takes every entry before the millisecond of the first it cannot take, and moves
/// `purged_until` to that millisecond. A slice that lies wholly inside that millisecond cannot
/// name half of it: it removes the entries it handles instead.
fn cut_slice(rows: Vec<(Vec<u8>, MemVersion)>, limit: usize, now: i64) -> (Slice, bool) {
    let mut entries: Vec<DueEntry> = rows
        .into_iter()
        .filter_map(|(index_key, row)| {
            let (at, data_key) = parse_expiry_index_key(&index_key)?;
            let data_key = data_key.to_vec();
            let owed = row
                .value
                .as_deref()
                .and_then(owed_value)
                .map(<[u8]>::to_vec);
            Some((at, data_key, index_key, owed))
        })
        .collect();
    let more_due = entries.len() > limit;
    let mut horizon = now.saturating_add(1);
    let mut drops_entries = false;
    if let (Some(&(next, ..)), Some(&(first, ..))) = (entries.get(limit), entries.first()) {
        horizon = next;
        if first < next {
            entries.retain(|(at, ..)| *at < next);
        } else {
            entries.pop();
            drops_entries = true;
        }
    }
    let slice = Slice {
        entries,
        horizon,
        drops_entries,
    };
    (slice, more_due)
}

/// How often a purge judges a slice again after writes beside it were rolled back.
const PURGE_ATTEMPTS: u32 = 4;

impl Inner {
    /// Handle up to `limit` due expiry-index entries, oldest first. A limit of 0 is an
    /// `InvalidArgument`: a purge that may remove nothing is no purge.
    pub(crate) async fn purge_expired(&self, limit: usize) -> Result<PurgeReport> {
        if limit == 0 {
            return Err(Error::invalid("purge_expired: limit must be at least 1"));
        }
        let _guard = self.purge_lock.lock().await;
        for _ in 0..PURGE_ATTEMPTS {
            if let Some(report) = self.purge_slice(limit).await? {
                return Ok(report);
            }
        }
        Err(Error::storage(
            "writes beside the purge kept failing and being rolled back; purge again later",
        ))
    }

    /// One slice of [`Inner::purge_expired`]; `None` if a rollback beside it undid rows it
    /// judged by (nothing was written or recorded then: judge again).
    async fn purge_slice(&self, limit: usize) -> Result<Option<PurgeReport>> {
        let snapshot = self.read_snapshot()?;
        let read_seq = snapshot.seq;
        // The rows judged below are read at `read_seq`, some after waiting on the store: pinned
        // until then, so that a write meanwhile cannot prune from the memtable the version a
        // lookup is to find (an overwrite keeps only what a pin or a rollback can see).
        let pin = ReadPin::new(self, &mut self.state.borrow_mut(), read_seq, i64::MIN);
        let now = self.clock.now()?;
        let hook = self.expire_hook.borrow().clone();
        let (purged_until, rollbacks, resume) = {
            let st = self.state.borrow();
            let resume = st.purge_resume.clone();
            (st.manifest.purged_until, st.wal.rollbacks, resume)
        };
        // Within the millisecond `purged_until` names, the entries before `resume` were removed
        // by earlier slices: start after them instead of walking past their tombstones again.
        let mut from = expiry_index_from(purged_until);
        if let Some(mut key) = resume.filter(|k| *k >= from) {
            key.push(0);
            from = key;
        }
        let due_end = expiry_index_from(now.saturating_add(1));
        let (rows, walked) = self
            .range(
                &from,
                Some(&due_end),
                false,
                limit.saturating_add(1),
                read_seq,
                None,
            )
            .await?;
        self.state.borrow_mut().purge_rows_walked += walked;
        let (slice, more_due) = cut_slice(rows, limit, now);
        let mut report = PurgeReport {
            more_due,
            ..PurgeReport::default()
        };
        // The hook's rewrites first, then the entries to drop: the first outcomes are the
        // rewrites'.
        let mut ops = Vec::new();
        let mut rewrite_events = Vec::new();
        let mut drops = Vec::new();
        let mut read = CurrentRows::default();
        for (expire_at, data_key, index_key, owed) in &slice.entries {
            let mut seen = None;
            let verdict = match owed {
                // Replaced after it expired: the key has its new value, so no hook is asked.
                Some(value) => self.owed_event(*expire_at, data_key, value.clone()),
                None => {
                    let row = self.lookup(data_key, read_seq).await?;
                    // What `RemoveExpired` checks of the row (its value, which the event takes,
                    // only has to be there).
                    seen = row.as_ref().map(|r| MemVersion {
                        value: r.value.as_ref().map(|_| Vec::new()),
                        ..*r
                    });
                    self.judge(*expire_at, data_key, row, now, hook.as_ref(), &mut report)
                }
            };
            match verdict {
                Verdict::Expired(event) => {
                    if let (true, None, Some(row)) = (slice.drops_entries, owed, seen) {
                        // `purged_until` cannot say this key was handled: its row goes too.
                        drops.push(WriteOp::RemoveExpired {
                            key: data_key.clone(),
                            expire_at: *expire_at,
                            seen_seq: row.seq,
                        });
                        read.insert(MapKey::from_slice(data_key), Versions::One(row));
                    }
                    report.removed += 1;
                    report.expired.push(event);
                }
                Verdict::Rewrite(op, row, event) => {
                    ops.push(op);
                    rewrite_events.push(event);
                    read.insert(MapKey::from_slice(data_key), Versions::One(row));
                }
                Verdict::Stale => report.stale += 1,
            }
            if slice.drops_entries {
                drops.push(WriteOp::DropIndexEntry {
                    key: index_key.clone(),
                });
            }
        }
        drop(pin);
        // Every verdict rests on rows up to `read_seq`. Before anything is written or recorded
        // on their strength, they must be durable: a row still pending in the WAL (a relaxed
        // write, or a durable one whose commit is in flight) can yet be rolled back, and then the
        // key it hid is expired again with its index entry already behind `purged_until`.
        if self.state.borrow().wal.durable_seq < read_seq {
            self.drain_wal().await?;
        }
        if self.state.borrow().wal.rollbacks != rollbacks {
            return Ok(None);
        }
        ops.append(&mut drops);
        if !ops.is_empty() {
            // The rows just read serve as the write's reads, unless something changed meanwhile
            // (then it reads again): each key is read once, not twice. Durable whatever the
            // database's durability: the events below may only fire once it cannot be lost.
            let outcomes = self
                .write_ops_prefetched(&ops, Planner::default(), Some((snapshot, read)), true)
                .await?
                .unwrap_or_default();
            for (outcome, event) in outcomes.iter().zip(rewrite_events) {
                if outcome.applied {
                    report.rewritten += 1;
                } else if outcome.due {
                    // Time passed while the hook ran: its replacement was due when written.
                    report.hook_errors.push(replacement_due(&event.key));
                    report.removed += 1;
                    report.expired.push(event);
                } else {
                    // The key's row changed after the purge read it: a write replaced the expired
                    // row (nothing else writes an expired key), so its event is owed, and fires
                    // here (this slice moves past the entry that write recorded, or drops it).
                    report.removed += 1;
                    report.expired.push(event);
                }
            }
        }
        if report.removed + report.rewritten > 0 && !slice.drops_entries {
            // An event fires once: purged_until is durable before the report leaves.
            self.commit_purged_until(slice.horizon).await?;
        } else {
            // Only stale entries (handling them again after a crash changes nothing), or a slice
            // whose durable write removed every entry it handled (nothing earlier is left due).
            let mut st = self.state.borrow_mut();
            st.manifest.purged_until = st.manifest.purged_until.max(slice.horizon);
        }
        if slice.drops_entries {
            let last = slice
                .entries
                .last()
                .map(|(_, _, index_key, _)| index_key.clone());
            self.state.borrow_mut().purge_resume = last;
        }
        self.find_next_expiry(&due_end, report.more_due.then_some(now))
            .await;
        Ok(Some(report))
    }

    /// Commit a manifest whose `purged_until` is at least `horizon`.
    async fn commit_purged_until(&self, horizon: i64) -> Result<()> {
        let seed = self.clock.last_issued();
        self.commit_manifest_change(|manifest| {
            manifest.purged_until = manifest.purged_until.max(horizon);
            manifest.clock_seed = manifest.clock_seed.max(seed);
            true
        })
        .await
    }

    /// Look up when the next index entry is due (from `from` on) and record it, or `due_now`.
    /// A failure leaves the next expiry unknown (so the next maintenance step purges again)
    /// rather than failing a purge whose removals already stand.
    pub(crate) async fn find_next_expiry(&self, from: &[u8], due_now: Option<i64>) {
        let read_seq = {
            let mut st = self.state.borrow_mut();
            // Expiries written from here on are collected while the index is looked at; until
            // the lookup answers, an entry may fall due unseen (writes must treat it so).
            st.next_expiry_known = true;
            st.next_expiry = due_now;
            if due_now.is_none() {
                st.next_expiry_lookups += 1;
            }
            st.last_seq
        };
        if due_now.is_some() {
            return;
        }
        let found = self.range(from, None, false, 1, read_seq, None).await;
        let mut st = self.state.borrow_mut();
        st.next_expiry_lookups -= 1;
        match found {
            Ok((next, _walked)) => {
                let at = next
                    .first()
                    .and_then(|(k, _)| parse_expiry_index_key(k))
                    .map(|(at, _)| at);
                if let Some(at) = at {
                    st.note_expiry(at);
                }
            }
            Err(_) => {
                st.next_expiry_known = false;
                st.next_expiry = None;
            }
        }
    }

    /// The event of a row that expired and was replaced before the purge reported it (`Stale`
    /// if its namespace was dropped since).
    fn owed_event(&self, expire_at: i64, data_key: &[u8], value: Vec<u8>) -> Verdict {
        let ns = namespace_of(data_key).unwrap_or(0);
        match self.state.borrow().namespace_name(ns) {
            Some(namespace) => Verdict::Expired(ExpiredEntry {
                namespace,
                key: user_key(data_key).to_vec(),
                value,
                expire_at,
            }),
            None => Verdict::Stale,
        }
    }

    /// Decide what to do with one due entry, given the key's current `row` (calling the hook).
    fn judge(
        &self,
        expire_at: i64,
        data_key: &[u8],
        row: Option<MemVersion>,
        now: i64,
        hook: Option<&ExpireHook>,
        report: &mut PurgeReport,
    ) -> Verdict {
        let ns = namespace_of(data_key).unwrap_or(0);
        let (name, policy) = {
            let st = self.state.borrow();
            match (
                st.namespace_name(ns),
                st.policy_of(ns, self.options.default_ttl_ms),
            ) {
                (Some(name), Ok(policy)) => (name, policy),
                // A dropped namespace: its entries go, whatever rows are left behind.
                _ => return Verdict::Stale,
            }
        };
        let Some(mut row) = row.filter(|v| v.expire_at == Some(expire_at)) else {
            return Verdict::Stale;
        };
        let Some(value) = row.value.take() else {
            return Verdict::Stale;
        };
        let event = ExpiredEntry {
            namespace: name,
            key: user_key(data_key).to_vec(),
            value,
            expire_at,
        };
        let Some(r) = hook.and_then(|hook| hook(&event)) else {
            return Verdict::Expired(event);
        };
        let checked =
            validate_value(&r.value, self.options.value_header_bytes).and_then(|()| match r.ttl {
                // The row it replaces has expired: keeping "its" TTL would make the key permanent.
                Ttl::Keep => Err(Error::invalid(alloc::format!(
                    "the expire hook's replacement for key {} keeps the expired TTL (Ttl::Keep); \
                     give it a new one",
                    shown(&event.key)
                ))),
                ttl => policy.expiry(ttl, now, None),
            });
        let at = match checked {
            Ok(at) if at.is_none_or(|at| at > now) => at,
            Ok(_) => {
                report.hook_errors.push(replacement_due(&event.key));
                return Verdict::Expired(event);
            }
            Err(e) => {
                report.hook_errors.push(e);
                return Verdict::Expired(event);
            }
        };
        let op = WriteOp::ReplaceExpired {
            key: data_key.to_vec(),
            expire_at,
            seen_seq: row.seq,
            value: r.value,
            new_expire_at: at,
        };
        row.value = Some(event.value.clone());
        Verdict::Rewrite(op, row, event)
    }
}

/// A key as an error message shows it: in quotes if it is UTF-8, else as hex. (Not Debug, nor
/// a lossy conversion: their escaping and decoding tables would come into the wasm module.)
fn shown(key: &[u8]) -> alloc::string::String {
    match core::str::from_utf8(key) {
        Ok(text) => alloc::format!("\"{text}\""),
        Err(_) => {
            const DIGITS: &[u8; 16] = b"0123456789abcdef";
            let mut hex = alloc::string::String::from("0x");
            for b in key {
                hex.push(char::from(DIGITS[usize::from(b >> 4)]));
                hex.push(char::from(DIGITS[usize::from(b & 15)]));
            }
            hex
        }
    }
}

/// The hook error of a replacement that was due by the time it was written.
fn replacement_due(key: &[u8]) -> Error {
    Error::invalid(alloc::format!(
        "the expire hook's replacement for key {} is already due; the key was removed",
        shown(key)
    ))
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn a_key_is_shown_quoted_when_it_is_text_and_as_hex_when_not() {
        assert_eq!(shown(b"session:1"), "\"session:1\"");
        assert_eq!(shown("é".as_bytes()), "\"é\"");
        assert_eq!(shown(&[0xff, 0x01, 0xa0]), "0xff01a0");
    }
}
