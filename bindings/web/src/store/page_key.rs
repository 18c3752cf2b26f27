//! What the two stores on the JS side (the JS adapter, IndexedDB) share: page ids as strings in
//! fixed-width hex, so the strings of one kind sort like the ids, and the check of a commit's
//! manifest version (it must advance, and fit a JS number) before anything reaches storage.

use ttlkv::store::{PageId, PageKind};

/// The string prefix of a page kind.
pub fn kind_prefix(kind: PageKind) -> &'static str {
    match kind {
        PageKind::Wal => "w/",
        PageKind::SstMeta => "m/",
        PageKind::SstData => "d/",
    }
}

/// The id of the record `id` is stored as, the one its [`page_key`] names: a WAL or metadata
/// page's key has no index, so two ids that differ only there are one record.
pub fn stored_id(id: PageId) -> PageId {
    match id.kind {
        PageKind::SstData => id,
        PageKind::Wal | PageKind::SstMeta => PageId { index: 0, ..id },
    }
}

/// The string key of a page: `w/<file>`, `m/<file>` or `d/<file>/<index>` in fixed-width hex.
pub fn page_key(id: PageId) -> String {
    match id.kind {
        PageKind::SstData => format!("d/{:016x}/{:08x}", id.file, id.index),
        kind => format!("{}{:016x}", kind_prefix(kind), id.file),
    }
}

/// The page id of a string key, if it is one.
pub fn parse_page_key(key: &str) -> Option<PageId> {
    // Over bytes: slicing a `str` would bring its char-boundary panic (and `str`'s Debug, with
    // its escape tables) into the module.
    let key = key.as_bytes();
    let rest = key.get(2..)?;
    match key.get(..2)? {
        b"w/" => hex(rest, 16).map(PageId::wal),
        b"m/" => hex(rest, 16).map(PageId::sst_meta),
        b"d/" if rest.len() == 16 + 1 + 8 && rest[16] == b'/' => {
            let index = u32::try_from(hex(&rest[17..], 8)?).ok()?;
            Some(PageId::sst_data(hex(&rest[..16], 16)?, index))
        }
        _ => None,
    }
}

/// The value of `digits`, exactly `width` lowercase hex digits as [`page_key`] writes them, else
/// `None`: a key spelled any other way (`w/00000001`, upper case) is not the key of the id it
/// would parse to, and reading or deleting by that id would miss it.
fn hex(digits: &[u8], width: usize) -> Option<u64> {
    if digits.len() != width {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        let digit = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => return None,
        };
        Some(n << 4 | u64::from(digit))
    })
}

/// The page ids of `keys` (as a store listed them for `kind`), ascending; `None` if any key is
/// not a string key of a page of that kind. Not generic over the iterator: both stores share
/// one copy of it in the module.
pub fn page_ids_of_kind(
    keys: &mut dyn Iterator<Item = Option<String>>,
    kind: PageKind,
) -> Option<Vec<PageId>> {
    let mut ids = keys
        .map(|key| parse_page_key(&key?).filter(|id| id.kind == kind))
        .collect::<Option<Vec<_>>>()?;
    PageId::sort(&mut ids);
    Some(ids)
}

/// The largest manifest version a JS number holds exactly (2^53 - 1).
pub const MAX_JS_VERSION: u64 = 9_007_199_254_740_991;

/// Refuse a commit whose new manifest does not advance the version, or could not be stored as a
/// JS number, before anything reaches the store.
pub fn check_manifest_version(commit: &ttlkv::store::Commit) -> ttlkv::Result<()> {
    if let Some(m) = &commit.manifest {
        if m.version <= commit.expected_manifest_version {
            return Err(ttlkv::Error::invalid(
                "a new manifest's version must be greater than the expected one",
            ));
        }
        if m.version > MAX_JS_VERSION {
            return Err(ttlkv::Error::invalid(
                "a manifest version above 2^53 - 1 cannot be stored",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_keys_round_trip_and_sort_like_ids() {
        let ids = [
            PageId::wal(1),
            PageId::wal(0x1_0000),
            PageId::sst_meta(7),
            PageId::sst_data(7, 0),
            PageId::sst_data(7, 255),
            PageId::sst_data(300, 1),
        ];
        for id in ids {
            assert_eq!(parse_page_key(&page_key(id)), Some(id));
        }
        // An id with an index its kind's key has no room for names the record `stored_id` says.
        for odd in [PageId::wal(9), PageId::sst_meta(9), PageId::sst_data(9, 0)] {
            let odd = PageId { index: 5, ..odd };
            assert_eq!(parse_page_key(&page_key(odd)), Some(stored_id(odd)));
        }
        let mut data: Vec<_> = ids
            .iter()
            .filter(|i| i.kind == PageKind::SstData)
            .copied()
            .collect();
        let mut keys: Vec<_> = data.iter().map(|i| page_key(*i)).collect();
        keys.sort();
        data.sort();
        assert_eq!(keys, data.iter().map(|i| page_key(*i)).collect::<Vec<_>>());
        assert_eq!(parse_page_key("d/zz"), None);
        assert_eq!(parse_page_key("w/+000000000000001"), None);
        assert_eq!(parse_page_key("é/0000000000000001"), None);
        assert_eq!(parse_page_key("w/00000000000000é"), None);
        assert_eq!(parse_page_key("d/0000000000000001x00000002"), None);
        assert_eq!(parse_page_key("d/0000000000000001/0000000é"), None);
        assert_eq!(parse_page_key(""), None);
        assert_eq!(parse_page_key("w/1"), None);
        // Only the one spelling page_key writes: not 8 digits where 16 belong, not upper case.
        assert_eq!(parse_page_key("w/00000001"), None);
        assert_eq!(parse_page_key("m/00000001"), None);
        assert_eq!(parse_page_key("w/000000000000000A"), None);
        assert_eq!(parse_page_key("d/000000000000000A/00000001"), None);
        assert_eq!(parse_page_key("d/0000000000000001/0000000A"), None);
        assert_eq!(parse_page_key("d/0000000000000001/0000000000000001"), None);
        assert_eq!(parse_page_key("w/000000000000000a"), Some(PageId::wal(10)));
    }
}
