//! The manifest: the one record that says what the database is. It holds the SSTs by level, the
//! WAL position, the writer epoch that fences a writer which lost its role, the clock seed and
//! the namespaces.
//!
//! ```text
//! | "TKVM" | version u8 | reserved [u8; 3] | writer_epoch u64 | clock_seed i64 | flushed_seq u64 |
//! | wal_first u64 | next_sst_id u64 | purged_until i64 | next_namespace_id u32 |
//! | level_count u64 | levels... | namespace_count u64 | namespaces... |
//! | dropped_count u64 | dropped namespace ids u32... |
//! | [ moved_count u64 | moved keyspaces (handle u32, id u32)... ] | crc32 u32 |
//! ```
//!
//! The moved keyspaces are optional: a manifest written before `clear` existed ends after the
//! dropped namespaces, and one with no keyspace moved is written the same way.
//!
//! The field-by-field table is in `docs/format.md`. The page store keeps the encoded manifest
//! opaque, next to the version its commits compare against; this file knows nothing of that.

use alloc::string::String;
use alloc::vec::Vec;

use super::checksum::{seal, CHECKSUM_LEN};
use super::codec::{put_bytes_u64, put_i64, put_len_u64, put_u32, put_u64, put_u8};
use super::{open_page, read_version_byte, FORMAT_VERSION_BYTE};
use crate::error::{Error, Result};

/// The first four bytes of every manifest.
pub const MANIFEST_MAGIC: [u8; 4] = *b"TKVM";

const HAS_DEFAULT_TTL: u8 = 0x01;
const HAS_MAX_TTL: u8 = 0x02;
const KNOWN_NAMESPACE_FLAGS: u8 = HAS_DEFAULT_TTL | HAS_MAX_TTL;

/// magic, version, reserved, the six fixed u64/i64 fields and next_namespace_id.
const FIXED_LEN: usize = 4 + 1 + 3 + 8 * 6 + 4;
/// The smallest encoded level: an empty one (its count).
const MIN_LEVEL_LEN: usize = 8;
/// The smallest encoded namespace: id, flags, the two TTLs and an empty name's length.
const MIN_NAMESPACE_LEN: usize = 4 + 1 + 8 + 8 + 8;

/// A namespace: a named key space with its own TTL defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceEntry {
    /// The namespace's id, as stored with its keys.
    pub id: u32,
    /// The namespace's name.
    pub name: String,
    /// The TTL a write gets when it names none, in ms; `None` = no expiry.
    pub default_ttl_ms: Option<u64>,
    /// The longest TTL a write may ask for, in ms; `None` = unlimited.
    pub max_ttl_ms: Option<u64>,
}

/// A keyspace whose keys were cleared: its rows are stored under a new namespace id from then
/// on. Handles name a keyspace by the id it was created with (0 for the default one), which a
/// clear does not change; this maps it to where its rows are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MovedKeyspace {
    /// The id the keyspace's handles use: the namespace's first id, 0 for the default one.
    pub handle: u32,
    /// The namespace id its rows are stored under now.
    pub id: u32,
}

/// The database's root record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// Bumped by every writer that takes over (a record of takeovers: fencing itself is the
    /// manifest-version precondition of every commit).
    pub writer_epoch: u64,
    /// highest timestamp ever issued (seeds the monotonic clock on open)
    pub clock_seed: i64,
    /// highest sequence number contained in SSTs (everything <= this is flushed)
    pub flushed_seq: u64,
    /// WAL segments below this number were flushed and may be deleted
    pub wal_first: u64,
    /// The id the next SST written gets.
    pub next_sst_id: u64,
    /// `levels[0]` = L0, newest SST first; `levels[n > 0]` = a sorted run, SSTs in key order
    pub levels: Vec<Vec<u64>>,
    /// Every expiry-index entry that expires before this time (ms) has been processed by the
    /// purge and its effect is durable: the compaction filter may drop such expired rows.
    pub purged_until: i64,
    /// The id the next namespace created gets (ids are never reused).
    pub next_namespace_id: u32,
    /// The namespaces, in id order (a cleared one moves to the end with its new, highest id).
    pub namespaces: Vec<NamespaceEntry>,
    /// Namespaces dropped whose rows may still be in SSTs (compaction removes them).
    pub dropped_namespaces: Vec<u32>,
    /// Keyspaces that were cleared, in handle order (see [`MovedKeyspace`]).
    pub moved_keyspaces: Vec<MovedKeyspace>,
}

impl Manifest {
    /// The encoded, checksummed manifest (magic `TKVM`, version, fields, CRC-32).
    pub fn encode(&self) -> Vec<u8> {
        let ids: usize = self.levels.iter().map(Vec::len).sum();
        let names: usize = self.namespaces.iter().map(|n| n.name.len()).sum();
        let mut out = Vec::with_capacity(
            FIXED_LEN
                + 8
                + self.levels.len() * MIN_LEVEL_LEN
                + ids * 8
                + 8
                + self.namespaces.len() * MIN_NAMESPACE_LEN
                + names
                + 8
                + self.dropped_namespaces.len() * 4
                + 8
                + self.moved_keyspaces.len() * 8
                + CHECKSUM_LEN,
        );
        out.extend_from_slice(&MANIFEST_MAGIC);
        put_u8(&mut out, FORMAT_VERSION_BYTE);
        out.extend_from_slice(&[0; 3]);
        put_u64(&mut out, self.writer_epoch);
        put_i64(&mut out, self.clock_seed);
        put_u64(&mut out, self.flushed_seq);
        put_u64(&mut out, self.wal_first);
        put_u64(&mut out, self.next_sst_id);
        put_i64(&mut out, self.purged_until);
        put_u32(&mut out, self.next_namespace_id);
        put_len_u64(&mut out, self.levels.len());
        for level in &self.levels {
            put_len_u64(&mut out, level.len());
            for id in level {
                put_u64(&mut out, *id);
            }
        }
        put_len_u64(&mut out, self.namespaces.len());
        for ns in &self.namespaces {
            put_u32(&mut out, ns.id);
            let mut flags = 0;
            if ns.default_ttl_ms.is_some() {
                flags |= HAS_DEFAULT_TTL;
            }
            if ns.max_ttl_ms.is_some() {
                flags |= HAS_MAX_TTL;
            }
            put_u8(&mut out, flags);
            put_u64(&mut out, ns.default_ttl_ms.unwrap_or(0));
            put_u64(&mut out, ns.max_ttl_ms.unwrap_or(0));
            put_bytes_u64(&mut out, ns.name.as_bytes());
        }
        put_len_u64(&mut out, self.dropped_namespaces.len());
        for id in &self.dropped_namespaces {
            put_u32(&mut out, *id);
        }
        if !self.moved_keyspaces.is_empty() {
            put_len_u64(&mut out, self.moved_keyspaces.len());
            for moved in &self.moved_keyspaces {
                put_u32(&mut out, moved.handle);
                put_u32(&mut out, moved.id);
            }
        }
        seal(&mut out);
        out
    }

    /// Verify and decode a manifest. `Corruption` (message prefixed "manifest") on a checksum
    /// mismatch, bad magic, another version, non-zero reserved bytes, unknown namespace flags, a
    /// non-zero absent TTL, a name that is not UTF-8, truncation or trailing bytes.
    pub fn decode(bytes: &[u8]) -> Result<Manifest> {
        decode_manifest(bytes).map_err(|e| e.context("manifest"))
    }
}

fn optional_ttl(present: bool, value: u64) -> Result<Option<u64>> {
    match (present, value) {
        (true, value) => Ok(Some(value)),
        (false, 0) => Ok(None),
        (false, _) => Err(Error::corruption("absent namespace TTL is not zero")),
    }
}

fn decode_manifest(bytes: &[u8]) -> Result<Manifest> {
    let mut r = open_page(bytes, MANIFEST_MAGIC)?;
    read_version_byte(&mut r)?;
    r.zeros::<3>("reserved bytes")?;
    let writer_epoch = r.u64("writer_epoch")?;
    let clock_seed = r.i64("clock_seed")?;
    let flushed_seq = r.u64("flushed_seq")?;
    let wal_first = r.u64("wal_first")?;
    let next_sst_id = r.u64("next_sst_id")?;
    let purged_until = r.i64("purged_until")?;
    let next_namespace_id = r.u32("next_namespace_id")?;
    let level_count = r.u64("level count")?;
    let mut levels = Vec::with_capacity(r.capacity_for(level_count, MIN_LEVEL_LEN));
    for _ in 0..level_count {
        let sst_count = r.u64("level sst count")?;
        let mut level = Vec::with_capacity(r.capacity_for(sst_count, 8));
        for _ in 0..sst_count {
            level.push(r.u64("sst id")?);
        }
        levels.push(level);
    }
    let namespace_count = r.u64("namespace count")?;
    let mut namespaces = Vec::with_capacity(r.capacity_for(namespace_count, MIN_NAMESPACE_LEN));
    for _ in 0..namespace_count {
        let id = r.u32("namespace id")?;
        let flags = r.u8("namespace flags")?;
        if flags & !KNOWN_NAMESPACE_FLAGS != 0 {
            return Err(Error::corruption("unknown namespace flag bits"));
        }
        let default_ttl_ms = optional_ttl(flags & HAS_DEFAULT_TTL != 0, r.u64("default_ttl_ms")?)?;
        let max_ttl_ms = optional_ttl(flags & HAS_MAX_TTL != 0, r.u64("max_ttl_ms")?)?;
        let len = r.len_u64("namespace name length")?;
        let name = core::str::from_utf8(r.bytes(len, "namespace name")?)
            .map_err(|_| Error::corruption("namespace name is not UTF-8"))?;
        namespaces.push(NamespaceEntry {
            id,
            name: String::from(name),
            default_ttl_ms,
            max_ttl_ms,
        });
    }
    let dropped_count = r.u64("dropped namespace count")?;
    let mut dropped_namespaces = Vec::with_capacity(r.capacity_for(dropped_count, 4));
    for _ in 0..dropped_count {
        dropped_namespaces.push(r.u32("dropped namespace id")?);
    }
    let mut moved_keyspaces = Vec::new();
    if !r.is_empty() {
        let moved_count = r.u64("moved keyspace count")?;
        moved_keyspaces.reserve(r.capacity_for(moved_count, 8));
        for _ in 0..moved_count {
            let handle = r.u32("moved keyspace handle")?;
            let id = r.u32("moved keyspace id")?;
            moved_keyspaces.push(MovedKeyspace { handle, id });
        }
    }
    r.finish("the moved keyspaces")?;
    Ok(Manifest {
        writer_epoch,
        clock_seed,
        flushed_seq,
        wal_first,
        next_sst_id,
        purged_until,
        next_namespace_id,
        levels,
        namespaces,
        dropped_namespaces,
        moved_keyspaces,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use alloc::vec;

    fn manifest() -> Manifest {
        Manifest {
            writer_epoch: 3,
            clock_seed: 1_700_000_000_123,
            flushed_seq: 977,
            wal_first: 12,
            next_sst_id: 9,
            purged_until: 1_700_000_000_000,
            next_namespace_id: 8,
            levels: vec![vec![8, 7], vec![], vec![1, 4, 2]],
            namespaces: vec![
                NamespaceEntry {
                    id: 0,
                    name: String::new(),
                    default_ttl_ms: None,
                    max_ttl_ms: None,
                },
                NamespaceEntry {
                    id: 7,
                    name: String::from("sessions ✓"),
                    default_ttl_ms: Some(0),
                    max_ttl_ms: Some(86_400_000),
                },
            ],
            dropped_namespaces: vec![3, 5],
            moved_keyspaces: vec![MovedKeyspace { handle: 0, id: 6 }],
        }
    }

    #[test]
    fn manifests_round_trip() {
        for m in [Manifest::default(), manifest()] {
            let bytes = m.encode();
            assert_eq!(Manifest::decode(&bytes).unwrap(), m);
        }
        assert_eq!(
            Manifest::default().encode().len(),
            FIXED_LEN + 8 + 8 + 8 + CHECKSUM_LEN
        );
    }

    fn rejected(body_change: impl FnOnce(&mut Vec<u8>)) -> alloc::string::String {
        let mut body = manifest().encode();
        body.truncate(body.len() - CHECKSUM_LEN);
        body_change(&mut body);
        seal(&mut body);
        let e = Manifest::decode(&body).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert!(e.message().starts_with("manifest: "), "{}", e.message());
        e.message().into()
    }

    #[test]
    fn decode_rejects_a_bad_header() {
        assert!(rejected(|b| b[1] = b'x').contains("bad magic"));
        assert!(rejected(|b| b[4] = 9).contains("unsupported format version"));
        assert!(rejected(|b| b[7] = 1).contains("reserved"));
        let mut bytes = manifest().encode();
        bytes[20] ^= 0x80;
        assert_eq!(
            Manifest::decode(&bytes).unwrap_err().message(),
            "manifest: checksum mismatch"
        );
    }

    #[test]
    fn decode_rejects_names_that_are_not_utf8() {
        let name = "sessions ✓".as_bytes();
        let message = rejected(|b| {
            let at = b.windows(name.len()).position(|w| w == name).unwrap() + name.len() - 1;
            b[at] = 0xff;
        });
        assert!(message.contains("not UTF-8"), "{message}");
    }

    #[test]
    fn decode_rejects_bad_namespace_flags_and_absent_ttls_that_are_not_zero() {
        // The first namespace starts right after its count.
        let ids = 2 + 3;
        let first_ns = FIXED_LEN + 8 + 3 * 8 + ids * 8 + 8;
        assert!(rejected(|b| b[first_ns + 4] = 0x04).contains("unknown namespace flag"));
        assert!(rejected(|b| b[first_ns + 5] = 1).contains("absent namespace TTL"));
    }

    #[test]
    fn decode_rejects_truncation_and_trailing_bytes() {
        assert!(rejected(|b| b.push(0)).contains("trailing"));
        assert!(rejected(|b| {
            b.pop();
        })
        .contains("truncated"));
        // A level count far beyond the input fails without allocating for it.
        assert!(
            rejected(|b| b[60..68].copy_from_slice(&u64::MAX.to_le_bytes())).contains("truncated")
        );
    }
}
