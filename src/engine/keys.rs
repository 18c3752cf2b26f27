//! The engine's internal key space and the limits on user keys and values.
//!
//! Every stored row's key is `namespace id (u32, big-endian) ‖ user key`, so each namespace is a
//! contiguous, separately scannable range and the default namespace is id 0. The byte order of
//! internal keys is therefore the byte order of user keys within a namespace.
//!
//! The last namespace id, `u32::MAX`, is the **expiry index**: one row per write that gave a key an
//! expiry, keyed `FFFFFFFF ‖ expire_at (sortable u64, big-endian) ‖ namespace ‖ user key`, so the
//! index is ordered by expiry time and a purge walks it from the oldest entry.

use alloc::borrow::Cow;
use alloc::vec::Vec;

use crate::error::{Error, ErrorKind, Result};
use crate::{MAX_KEY_LEN, MAX_VALUE_LEN};

/// Length of the namespace prefix of an internal key.
pub(crate) const NAMESPACE_PREFIX_LEN: usize = 4;

/// The id of the default namespace.
pub(crate) const DEFAULT_NAMESPACE: u32 = 0;

/// The namespace id reserved for the expiry index.
pub(crate) const EXPIRY_INDEX_NS: u32 = u32::MAX;

/// The namespace id reserved for call records (see [`call_record_key`]); the highest a user
/// namespace may have is below it.
pub(crate) const CALL_RECORD_NS: u32 = u32::MAX - 1;

/// Whether internal key `key` is an expiry-index row's.
pub(crate) fn is_expiry_index_key(key: &[u8]) -> bool {
    key.len() >= NAMESPACE_PREFIX_LEN && key.starts_with(&EXPIRY_INDEX_NS.to_be_bytes())
}

/// The internal key of the record of call `id`: the outcome of a write made for a caller that
/// may send the same call again (a tab whose writer went away before it answered).
pub(crate) fn call_record_key(id: &[u8]) -> Vec<u8> {
    internal_key(CALL_RECORD_NS, id)
}

/// An `i64` time as a `u64` whose big-endian bytes sort like the time.
fn sortable(t: i64) -> u64 {
    (t as u64) ^ (1 << 63)
}

fn unsortable(u: u64) -> i64 {
    (u ^ (1 << 63)) as i64
}

/// The expiry-index key of internal data key `data_key` expiring at `expire_at`.
pub(crate) fn expiry_index_key(expire_at: i64, data_key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(NAMESPACE_PREFIX_LEN + 8 + data_key.len());
    out.extend_from_slice(&EXPIRY_INDEX_NS.to_be_bytes());
    out.extend_from_slice(&sortable(expire_at).to_be_bytes());
    out.extend_from_slice(data_key);
    out
}

/// The first byte of an expiry-index entry's value that records an owed expire event; an entry
/// written with its data row has an empty value.
const OWED_EVENT: u8 = 1;

/// The value of an expiry-index entry that records the expire event owed for a row with value
/// `value`, which expired and was replaced before the purge reported it.
pub(crate) fn owed_entry_value(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + value.len());
    out.push(OWED_EVENT);
    out.extend_from_slice(value);
    out
}

/// The value of the row an expiry-index entry records an owed event for, if it records one.
pub(crate) fn owed_value(entry_value: &[u8]) -> Option<&[u8]> {
    match entry_value.split_first() {
        Some((&OWED_EVENT, value)) => Some(value),
        _ => None,
    }
}

/// The first expiry-index key of entries expiring at or after `t`.
pub(crate) fn expiry_index_from(t: i64) -> Vec<u8> {
    let mut out = EXPIRY_INDEX_NS.to_be_bytes().to_vec();
    out.extend_from_slice(&sortable(t).to_be_bytes());
    out
}

/// `(expire_at, internal data key)` of an expiry-index key, if it is one.
pub(crate) fn parse_expiry_index_key(key: &[u8]) -> Option<(i64, &[u8])> {
    let (ns, rest) = key.split_first_chunk::<4>()?;
    if u32::from_be_bytes(*ns) != EXPIRY_INDEX_NS {
        return None;
    }
    let (at, data_key) = rest.split_first_chunk::<8>()?;
    if data_key.len() < NAMESPACE_PREFIX_LEN {
        return None;
    }
    Some((unsortable(u64::from_be_bytes(*at)), data_key))
}

/// The namespace id of an internal key.
pub(crate) fn namespace_of(internal: &[u8]) -> Option<u32> {
    internal.first_chunk::<4>().map(|b| u32::from_be_bytes(*b))
}

/// Check a user key against the key limits (1 byte to [`MAX_KEY_LEN`]).
pub(crate) fn validate_key(key: &[u8]) -> Result<()> {
    if key.is_empty() {
        return Err(Error::invalid("a key must be at least 1 byte"));
    }
    if key.len() > MAX_KEY_LEN {
        return Err(Error::new(
            ErrorKind::KeyTooLarge,
            alloc::format!("key of {} bytes exceeds {MAX_KEY_LEN}", key.len()),
        ));
    }
    Ok(())
}

/// Check a value against the value limit: at most [`MAX_VALUE_LEN`] bytes besides the
/// `header` bytes a binding adds (`DbOptions::value_header_bytes`).
pub(crate) fn validate_value(value: &[u8], header: usize) -> Result<()> {
    let own = value.len().saturating_sub(header);
    if own > MAX_VALUE_LEN {
        return Err(Error::new(
            ErrorKind::ValueTooLarge,
            alloc::format!("value of {own} bytes exceeds {MAX_VALUE_LEN}"),
        ));
    }
    Ok(())
}

/// The internal key of `key` in namespace `ns`.
pub(crate) fn internal_key(ns: u32, key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(NAMESPACE_PREFIX_LEN + key.len());
    out.extend_from_slice(&ns.to_be_bytes());
    out.extend_from_slice(key);
    out
}

/// The bytes [`internal_key_in`] builds an internal key in without an allocation.
pub(crate) const INLINE_INTERNAL_KEY: usize = 64;

/// [`internal_key`], built in `buf` where it fits (a point read's key, most keys: no
/// allocation), else on the heap.
pub(crate) fn internal_key_in<'b>(
    ns: u32,
    key: &[u8],
    buf: &'b mut [u8; INLINE_INTERNAL_KEY],
) -> Cow<'b, [u8]> {
    let len = NAMESPACE_PREFIX_LEN + key.len();
    match buf.get_mut(..len) {
        Some(out) => {
            let (prefix, rest) = out.split_at_mut(NAMESPACE_PREFIX_LEN);
            prefix.copy_from_slice(&ns.to_be_bytes());
            rest.copy_from_slice(key);
            Cow::Borrowed(out)
        }
        None => Cow::Owned(internal_key(ns, key)),
    }
}

/// The user key inside an internal key.
pub(crate) fn user_key(internal: &[u8]) -> &[u8] {
    internal.get(NAMESPACE_PREFIX_LEN..).unwrap_or(&[])
}

/// The first internal key of namespace `ns`.
pub(crate) fn namespace_start(ns: u32) -> Vec<u8> {
    ns.to_be_bytes().to_vec()
}

/// The first internal key after namespace `ns` (exclusive end of its range), `None` for the last.
pub(crate) fn namespace_end(ns: u32) -> Option<Vec<u8>> {
    ns.checked_add(1).map(|n| n.to_be_bytes().to_vec())
}

/// The smallest byte string greater than every string starting with `prefix`, or `None` if there
/// is none (the prefix is all `0xff`).
pub(crate) fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut out = prefix.to_vec();
    while let Some(last) = out.pop() {
        if last < 0xff {
            out.push(last + 1);
            return Some(out);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_a_namespace_sort_together_and_by_user_key() {
        let a = internal_key(1, b"a");
        let b = internal_key(1, b"b");
        let other = internal_key(2, b"\x00");
        assert!(a < b && b < other);
        assert!(namespace_start(1) <= a && other >= namespace_end(1).unwrap());
        assert_eq!(user_key(&b), b"b");
    }

    #[test]
    fn expiry_index_keys_sort_by_time_even_across_zero_and_parse_back() {
        let data = internal_key(3, b"k");
        let times = [i64::MIN, -5, -1, 0, 1, 1_700_000_000_000, i64::MAX];
        let keys: Vec<_> = times.iter().map(|t| expiry_index_key(*t, &data)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        for (t, k) in times.iter().zip(&keys) {
            assert_eq!(parse_expiry_index_key(k), Some((*t, data.as_slice())));
            assert!(*k >= expiry_index_from(*t));
            assert!(
                namespace_end(3).unwrap() < *k,
                "the index sorts after every namespace"
            );
        }
        assert_eq!(parse_expiry_index_key(&data), None);
    }

    #[test]
    fn an_internal_key_built_in_place_is_the_one_built_on_the_heap() {
        let mut buf = [0; INLINE_INTERNAL_KEY];
        let fits = [7u8; INLINE_INTERNAL_KEY - NAMESPACE_PREFIX_LEN];
        let built = internal_key_in(3, &fits, &mut buf);
        assert!(matches!(built, Cow::Borrowed(_)));
        assert_eq!(&*built, internal_key(3, &fits).as_slice());
        let mut buf = [0; INLINE_INTERNAL_KEY];
        let longer = [7u8; INLINE_INTERNAL_KEY - NAMESPACE_PREFIX_LEN + 1];
        let built = internal_key_in(3, &longer, &mut buf);
        assert!(matches!(built, Cow::Owned(_)));
        assert_eq!(&*built, internal_key(3, &longer).as_slice());
        assert_eq!(
            &*internal_key_in(u32::MAX, b"k", &mut buf),
            internal_key(u32::MAX, b"k")
        );
    }

    #[test]
    fn prefix_successor_skips_trailing_ff() {
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_successor(b"\xff\xff"), None);
    }

    #[test]
    fn empty_and_oversized_keys_and_values_are_rejected_with_their_kind() {
        assert_eq!(
            validate_key(b"").unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
        let big = alloc::vec![0u8; MAX_KEY_LEN + 1];
        assert_eq!(
            validate_key(&big).unwrap_err().kind(),
            ErrorKind::KeyTooLarge
        );
        assert!(validate_key(&big[..MAX_KEY_LEN]).is_ok());
        let huge = alloc::vec![0u8; MAX_VALUE_LEN + 1];
        assert_eq!(
            validate_value(&huge, 0).unwrap_err().kind(),
            ErrorKind::ValueTooLarge
        );
        assert!(validate_value(&huge[..MAX_VALUE_LEN], 0).is_ok());
        assert!(
            validate_value(&huge, 1).is_ok(),
            "a binding's header byte does not count"
        );
        let over = alloc::vec![0u8; MAX_VALUE_LEN + 2];
        assert_eq!(
            validate_value(&over, 1).unwrap_err().kind(),
            ErrorKind::ValueTooLarge
        );
    }
}
