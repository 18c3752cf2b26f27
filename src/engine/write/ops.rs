//! The write path's vocabulary: [`WriteOp`] (one change a call asks for, on an internal key),
//! [`ExpireTarget`], [`Outcome`] (what one op did), and [`CallRecord`] (the outcome kept for a
//! call that may be sent twice). Plain data: `Db` builds ops, the purge builds its own, `plan.rs`
//! decides them, and `write/mod.rs` applies them.

use alloc::vec::Vec;

use crate::engine::options::{ExpireCondition, PutCondition, Ttl};
use crate::error::{Error, Result};

/// What `expire` sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExpireTarget {
    /// Expire at this absolute time.
    At(i64),
    /// Remove the expiry.
    Persist,
}

/// One change, on an internal key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum WriteOp {
    Put {
        key: Vec<u8>,
        value: Vec<u8>,
        ttl: Ttl,
        condition: PutCondition,
    },
    Delete {
        key: Vec<u8>,
    },
    Expire {
        key: Vec<u8>,
        target: ExpireTarget,
        condition: ExpireCondition,
    },
    /// Read the live value and change its expiry in one step (Redis `GETEX`).
    GetEx {
        key: Vec<u8>,
        target: ExpireTarget,
    },
    /// Remove an expiry-index entry unconditionally (the purge handled it, and its slice ends
    /// inside the entries of one expiry time).
    DropIndexEntry {
        key: Vec<u8>,
    },
    /// A tombstone for a key the purge found expired, written only if the key still holds the
    /// row the purge saw (`seen_seq`, expiring at `expire_at`): so that no later write takes
    /// the row for one whose expire event is still owed (see `plan::plan`). Used where the purge
    /// cannot record that through `purged_until` (a slice ending inside one millisecond).
    RemoveExpired {
        key: Vec<u8>,
        expire_at: i64,
        seen_seq: u64,
    },
    /// The expire hook's replacement for a key the purge found expired: written only if the key
    /// still holds the row the purge saw (`seen_seq`, expiring at `expire_at`).
    ReplaceExpired {
        key: Vec<u8>,
        expire_at: i64,
        seen_seq: u64,
        value: Vec<u8>,
        new_expire_at: Option<i64>,
    },
}

impl WriteOp {
    /// The internal key the op changes.
    pub(crate) fn key(&self) -> &[u8] {
        match self {
            WriteOp::Put { key, .. }
            | WriteOp::Delete { key }
            | WriteOp::Expire { key, .. }
            | WriteOp::GetEx { key, .. }
            | WriteOp::DropIndexEntry { key }
            | WriteOp::RemoveExpired { key, .. }
            | WriteOp::ReplaceExpired { key, .. } => key,
        }
    }

    /// Whether the op depends on the key's current row. A plain put does not, but while an
    /// expiry may be due and not yet purged (`owing`) it reads it anyway: replacing an expired
    /// row whose event has not fired records that event (see `plan::plan`).
    pub(crate) fn needs_current(&self, owing: bool) -> bool {
        (owing && self.is_plain_put()) || self.needs_current_anyway()
    }

    /// A put that needs no current row for itself (no condition, no `Ttl::Keep`).
    pub(crate) fn is_plain_put(&self) -> bool {
        matches!(self, WriteOp::Put { .. }) && !self.needs_current_anyway()
    }

    /// Whether the op depends on the key's current row for its own outcome.
    fn needs_current_anyway(&self) -> bool {
        match self {
            WriteOp::Put { ttl, condition, .. } => {
                *condition != PutCondition::Always || *ttl == Ttl::Keep
            }
            WriteOp::DropIndexEntry { .. } => false,
            _ => true,
        }
    }
}

/// What one op did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// put: written; delete: a live key was removed; expire/persist: the expiry changed;
    /// get_ex: the key was live; replace_expired: the key was rewritten.
    pub applied: bool,
    /// get_ex: the live value.
    pub value: Option<Vec<u8>>,
    /// replace_expired: not written because the replacement's expiry had come by then.
    pub due: bool,
}

impl Outcome {
    pub(crate) fn yes() -> Self {
        Outcome {
            applied: true,
            ..Outcome::default()
        }
    }

    pub(crate) fn no() -> Self {
        Outcome::default()
    }
}

/// Check an `ExpireCondition` given by a caller (Redis rejects the same combinations).
pub(crate) fn validate_expire_condition(c: ExpireCondition) -> Result<()> {
    if c.nx && (c.xx || c.gt || c.lt) {
        return Err(Error::invalid("nx cannot be combined with xx, gt or lt"));
    }
    if c.gt && c.lt {
        return Err(Error::invalid("gt and lt cannot be combined"));
    }
    Ok(())
}

/// The outcome of a write that was recorded under its call id, written in the same batch as
/// its effect: a call sent again (after its writer went away without answering) gets this
/// instead of running twice. Only writes that changed something are recorded; one that did not
/// can run again, as if it had been sent once, later.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallRecord {
    /// The first op's outcome: put written, delete removed a key, expiry changed...
    pub applied: bool,
    /// The value `get_ex` read, if the call was one.
    pub value: Option<Vec<u8>>,
}

impl CallRecord {
    /// The record of a call whose ops had `results`.
    pub(crate) fn of(results: &[Outcome]) -> Self {
        let first = results.first();
        CallRecord {
            applied: first.is_some_and(|o| o.applied),
            value: first.and_then(|o| o.value.clone()),
        }
    }

    /// `[applied, has value]`, then the value's bytes.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let value = self.value.as_deref();
        let mut out = alloc::vec![u8::from(self.applied), u8::from(value.is_some())];
        out.extend_from_slice(value.unwrap_or_default());
        out
    }

    /// The record in `bytes`, or `None` if they are not one.
    pub(crate) fn decode(bytes: &[u8]) -> Option<Self> {
        match bytes {
            [applied @ (0 | 1), has_value @ (0 | 1), value @ ..] => Some(CallRecord {
                applied: *applied == 1,
                value: (*has_value == 1).then(|| value.to_vec()),
            }),
            _ => None,
        }
    }
}
