//! Planning a write: deciding, against the rows it read ([`CurrentRows`]), what each op does
//! ([`Outcome`]) and which row every touched key ends up with. Pure: no state, no store, no
//! await; `write/mod.rs` calls [`plan`] inside the write's synchronous step, and the purge hands
//! its own reads in as [`CurrentRows`] with a default [`Planner`].

use alloc::vec::Vec;

use super::ops::{CallRecord, ExpireTarget, Outcome, WriteOp};
use crate::engine::keys::{call_record_key, expiry_index_key, owed_entry_value};
use crate::engine::map_key::MapKey;
use crate::engine::memtable::{is_live, MemVersion, Versions};
use crate::engine::memtable_map::ChunkedMap;
use crate::engine::namespace::TtlPolicy;
use crate::engine::options::PutCondition;
use crate::error::Result;
use crate::format::key_order::{compare_keys, key_below};

/// The rows a write read, by internal key: the key's row, or none ([`Versions::of`]). (Not an
/// `Option`: this map then has the memtable's map type, and the wasm module carries the code of
/// one map where it would carry two.)
pub(crate) type CurrentRows = ChunkedMap<Versions>;

/// The point a write read its rows at, to detect anything that happened since.
pub(crate) struct ReadSnapshot {
    /// Rows were read at this seq.
    pub seq: u64,
    /// The manifest version then (a flush or compaction since makes the write read again).
    pub manifest_version: u64,
    /// `WalState::rollbacks` then (a rollback since makes the write read again).
    pub rollbacks: u64,
}

/// The seq of a planned row until the write is applied: newer than any real one.
const UNASSIGNED_SEQ: u64 = u64::MAX;

/// The expiry and value of `row` if it expired (by `now`) and the purge has not reported it yet
/// (its expiry is not before `purged_until`), so that replacing it owes an expire event.
fn owed_event(row: &MemVersion, now: i64, purged_until: i64) -> Option<(i64, &[u8])> {
    let at = row
        .expire_at
        .filter(|at| *at <= now && *at >= purged_until)?;
    Some((at, row.value.as_deref()?))
}

/// If `row`, the row `key` holds, expired unreported ([`owed_event`]), plan the expiry-index
/// entry that records its event with its value, for the purge to report: a write that replaces
/// the row would otherwise leave nothing saying it expired.
fn plan_owed_entry(
    planned: &mut Planned,
    key: &[u8],
    row: Option<&MemVersion>,
    now: i64,
    purged_until: i64,
) {
    if let Some((at, old)) = row.and_then(|r| owed_event(r, now, purged_until)) {
        let entry = MemVersion {
            seq: UNASSIGNED_SEQ,
            ts: now,
            expire_at: Some(at),
            value: Some(owed_entry_value(old)),
        };
        planned.insert(expiry_index_key(at, key).into(), entry);
    }
}

/// The row a write decided on: a value, or a tombstone if its expiry is not in the future (as
/// Redis does). Written at `now`; its seq is assigned when the write is applied.
fn planned_value(value: Vec<u8>, expire_at: Option<i64>, now: i64) -> MemVersion {
    if expire_at.is_some_and(|at| at <= now) {
        return planned_tombstone(now);
    }
    MemVersion {
        seq: UNASSIGNED_SEQ,
        ts: now,
        expire_at,
        value: Some(value),
    }
}

/// A tombstone a write decided on (see [`planned_value`]).
fn planned_tombstone(now: i64) -> MemVersion {
    MemVersion {
        seq: UNASSIGNED_SEQ,
        ts: now,
        expire_at: None,
        value: None,
    }
}

/// Each op's outcome, and the row every touched key ends up with.
pub(crate) type Planning = (Vec<Outcome>, Planned);

/// The row every key a write touches ends up with, in key order. A sorted list while the keys
/// come in ascending order, as in a single put and a batch loaded in key order, where a map's
/// searches, nodes and frees were pure cost (inserting into it and dropping it took 10 % of a
/// batch ingest); a map from the first key that comes below the last one and was not planned
/// yet (a batch out of key order, the purge, a put that records an owed expire event: an
/// expiry-index key sorts after every key of a namespace). The map keeps each row as
/// [`CurrentRows`] does: one map type in the wasm module, not two.
pub(crate) enum Planned {
    /// Keys strictly ascending.
    Sorted(Vec<(MapKey, MemVersion)>),
    /// Any order.
    Map(CurrentRows),
}

impl Planned {
    /// Where `key` is in a sorted list, or where it would go.
    fn position(list: &[(MapKey, MemVersion)], key: &[u8]) -> core::result::Result<usize, usize> {
        list.binary_search_by(|(k, _)| compare_keys(k, key))
    }

    /// The row planned for `key`, if one was. In the list, a key above the last is answered
    /// without a search: in a batch in key order, every op's key.
    fn get(&self, key: &[u8]) -> Option<&MemVersion> {
        match self {
            Planned::Sorted(list) => {
                let (last, _) = list.last()?;
                if key_below(last, key) {
                    return None;
                }
                list.get(Self::position(list, key).ok()?)
                    .map(|(_, row)| row)
            }
            Planned::Map(map) => map.get(key).and_then(Versions::newest),
        }
    }

    /// Plan `row` for `key`, in place of anything planned for it before.
    fn insert(&mut self, key: MapKey, row: MemVersion) {
        if let Planned::Sorted(list) = self {
            if list.last().is_none_or(|(last, _)| key_below(last, &key)) {
                list.push((key, row));
                return;
            }
            if let Some(slot) = Self::position(list, &key)
                .ok()
                .and_then(|at| list.get_mut(at))
            {
                slot.1 = row;
                return;
            }
            // The list so far goes in as one ascending run: each insert extends the map's last
            // chunk, a comparison or two.
            let mut map = CurrentRows::default();
            for (k, r) in core::mem::take(list) {
                map.insert(k, Versions::One(r));
            }
            *self = Planned::Map(map);
        }
        if let Planned::Map(map) = self {
            map.insert(key, Versions::One(row));
        }
    }

    /// Whether nothing was planned.
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Planned::Sorted(list) => list.is_empty(),
            Planned::Map(map) => map.is_empty(),
        }
    }

    /// The planned rows in key order.
    pub(crate) fn into_sorted(self) -> Vec<(MapKey, MemVersion)> {
        match self {
            Planned::Sorted(list) => list,
            Planned::Map(map) => {
                let mut list = Vec::with_capacity(map.len());
                for (key, rows) in map {
                    if let Some(row) = rows.into_newest() {
                        list.push((key, row));
                    }
                }
                list
            }
        }
    }
}

/// Decide every op's outcome against the current rows (ops see the effects of earlier ops of the
/// same call). `None` if a put condition failed; an error if an expiry is past the range of times.
///
/// A put that replaces a row which expired and whose expire event has not fired (its expiry is
/// not before `purged_until`) records that event in the same batch: the row's expiry-index entry
/// is written again carrying the row's value, and the purge reports it from there (Redis fires
/// `expired` for a key that is overwritten after it expired, too).
pub(crate) fn plan(
    ops: &[WriteOp],
    current: &CurrentRows,
    now: i64,
    planner: &Planner<'_>,
    purged_until: i64,
) -> Result<Option<Planning>> {
    let policy = &planner.policy;
    // Room for each op's row and the expiry-index row `apply_planned` adds behind it, and a call
    // record: in the common case the list becomes the write's versions without growing.
    let mut planned = Planned::Sorted(Vec::with_capacity(2 * ops.len() + 1));
    let mut results = Vec::with_capacity(ops.len());
    for op in ops {
        let key = op.key();
        // The key's row as this call sees it: an earlier op's plan, or what was read.
        let raw: Option<MemVersion> = planned
            .get(key)
            .or_else(|| current.get(key).and_then(Versions::newest))
            .cloned();
        let live = raw.clone().filter(|v| is_live(v, now));
        let outcome = match op {
            WriteOp::Put {
                value,
                ttl,
                condition,
                ..
            } => {
                let ok = match condition {
                    PutCondition::Always => true,
                    PutCondition::IfAbsent => live.is_none(),
                    PutCondition::IfPresent => live.is_some(),
                };
                if !ok {
                    return Ok(None);
                }
                plan_owed_entry(&mut planned, key, raw.as_ref(), now, purged_until);
                let expire_at = policy.expiry(*ttl, now, live.as_ref())?;
                planned.insert(
                    MapKey::from_slice(key),
                    planned_value(value.clone(), expire_at, now),
                );
                Outcome::yes()
            }
            WriteOp::Delete { .. } => match live {
                Some(_) => {
                    planned.insert(MapKey::from_slice(key), planned_tombstone(now));
                    Outcome::yes()
                }
                None => Outcome::no(),
            },
            WriteOp::Expire {
                target, condition, ..
            } => {
                let Some(row) = live else {
                    results.push(Outcome::no());
                    continue;
                };
                let cur = row.expire_at;
                let new_expire = match target {
                    ExpireTarget::Persist => {
                        if cur.is_none() {
                            results.push(Outcome::no());
                            continue;
                        }
                        policy.clamp(None, now)
                    }
                    ExpireTarget::At(at) => {
                        let ok = (!condition.nx || cur.is_none())
                            && (!condition.xx || cur.is_some())
                            && (!condition.gt || cur.is_some_and(|c| *at > c))
                            && (!condition.lt || cur.is_none_or(|c| *at < c));
                        if !ok {
                            results.push(Outcome::no());
                            continue;
                        }
                        policy.clamp(Some(*at), now)
                    }
                };
                if new_expire != cur {
                    let value = row.value.unwrap_or_default();
                    planned.insert(
                        MapKey::from_slice(key),
                        planned_value(value, new_expire, now),
                    );
                }
                Outcome {
                    applied: new_expire != cur || matches!(target, ExpireTarget::At(_)),
                    ..Outcome::default()
                }
            }
            WriteOp::GetEx { target, .. } => {
                let Some(row) = live else {
                    results.push(Outcome::no());
                    continue;
                };
                let new_expire = match target {
                    ExpireTarget::Persist => policy.clamp(None, now),
                    ExpireTarget::At(at) => policy.clamp(Some(*at), now),
                };
                let value = row.value.unwrap_or_default();
                if new_expire != row.expire_at {
                    planned.insert(
                        MapKey::from_slice(key),
                        planned_value(value.clone(), new_expire, now),
                    );
                }
                Outcome {
                    applied: true,
                    value: Some(value),
                    due: false,
                }
            }
            WriteOp::DropIndexEntry { .. } => {
                planned.insert(MapKey::from_slice(key), planned_tombstone(now));
                Outcome::no()
            }
            WriteOp::RemoveExpired {
                expire_at,
                seen_seq,
                ..
            } => {
                let same_row = raw.as_ref().is_some_and(|v| {
                    v.seq == *seen_seq && v.value.is_some() && v.expire_at == Some(*expire_at)
                });
                if same_row && *expire_at <= now {
                    planned.insert(MapKey::from_slice(key), planned_tombstone(now));
                }
                Outcome::no()
            }
            WriteOp::ReplaceExpired {
                expire_at,
                seen_seq,
                value,
                new_expire_at,
                ..
            } => {
                let same_row = raw.as_ref().is_some_and(|v| {
                    v.seq == *seen_seq && v.value.is_some() && v.expire_at == Some(*expire_at)
                });
                if !same_row || *expire_at > now {
                    Outcome::no()
                } else if new_expire_at.is_some_and(|at| at <= now) {
                    // Due by now (time passed since the hook answered): the purge reports the key
                    // as expired, and its row goes (so no later write takes it for one whose
                    // event is owed). The event is recorded as a write over an expired row records
                    // it: should the purge's commit of `purged_until` fail, or a crash come
                    // first, the next purge reports it from there, the key's row (a tombstone)
                    // no longer saying it expired.
                    plan_owed_entry(&mut planned, key, raw.as_ref(), now, purged_until);
                    planned.insert(MapKey::from_slice(key), planned_tombstone(now));
                    Outcome {
                        due: true,
                        ..Outcome::no()
                    }
                } else {
                    planned.insert(
                        MapKey::from_slice(key),
                        planned_value(value.clone(), *new_expire_at, now),
                    );
                    Outcome::yes()
                }
            }
        };
        results.push(outcome);
    }
    if let (Some(id), false) = (planner.record, planned.is_empty()) {
        let record = MemVersion {
            seq: UNASSIGNED_SEQ,
            ts: now,
            expire_at: Some(now.saturating_add(CALL_RECORD_TTL_MS)),
            value: Some(CallRecord::of(&results).encode()),
        };
        planned.insert(call_record_key(id).into(), record);
    }
    Ok(Some((results, planned)))
}

/// How long the record of a call's outcome is kept: far longer than a resent call can take to
/// arrive (a writer's timeout, then a new writer's open).
const CALL_RECORD_TTL_MS: i64 = 10 * 60 * 1000;

/// The rules a write is planned by: its keyspace's TTL policy, and the call id whose outcome it
/// records, if any.
#[derive(Clone, Copy, Default)]
pub(crate) struct Planner<'a> {
    pub policy: TtlPolicy,
    pub record: Option<&'a [u8]>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;
    use proptest::prelude::*;

    fn row(seq: u64) -> MemVersion {
        MemVersion {
            seq,
            ts: 0,
            expire_at: None,
            value: Some(alloc::vec![1]),
        }
    }

    proptest! {
        /// Whatever the order of its keys, `Planned` answers every `get` as the map it replaced
        /// would, and gives back the same rows in key order; it stays a sorted list for as long
        /// as no key came below the last one unplanned. Up to 400 ops over 300 keys: the map it
        /// falls back to passes several chunks and splits them.
        #[test]
        fn planned_rows_answer_as_a_map_would_in_any_key_order(
            ops in prop::collection::vec((any::<bool>(), 0u16..300), 0..400),
        ) {
            let mut planned = Planned::Sorted(Vec::new());
            let mut model: BTreeMap<Vec<u8>, MemVersion> = BTreeMap::new();
            let mut fell_back = false;
            for (n, (insert, k)) in ops.into_iter().enumerate() {
                let [hi, lo] = k.to_be_bytes();
                // Every third key too long to be held in place (`MapKey`): both kinds meet in
                // the list and in the map.
                let mut key = alloc::vec![b'k', hi, lo];
                if lo % 3 == 0 {
                    key.extend_from_slice(&[b'-'; 40]);
                }
                if insert {
                    let below = model.keys().next_back().is_some_and(|last| key < *last);
                    fell_back |= below && !model.contains_key(&key);
                    planned.insert(key.clone().into(), row(n as u64));
                    model.insert(key, row(n as u64));
                } else {
                    prop_assert_eq!(planned.get(&key), model.get(&key));
                }
                prop_assert_eq!(matches!(planned, Planned::Map(_)), fell_back);
                prop_assert_eq!(planned.is_empty(), model.is_empty());
            }
            let rows = planned.into_sorted();
            prop_assert_eq!(
                rows,
                model
                    .into_iter()
                    .map(|(k, r)| (MapKey::from(k), r))
                    .collect::<Vec<_>>()
            );
        }
    }
}
