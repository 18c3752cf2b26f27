//! Rows: the unit every SST data page and WAL batch is made of, and the [`RowFeatures`] that say
//! which attributes an SST's rows carry and how their numbers are written (SlateDB's
//! `row_features`).
//!
//! ```text
//! fixed:   | key_len u16 | key | flags u8 | seq u64 | ts i64 | expire_at i64 ¹ | value_len u32 ² | value ² |
//! compact: | key_len v | key | flags u8 | seq v | ts zv | expire_at - ts zv ¹ | value_len v ² | value ² |
//! v = LEB128 varint, zv = zigzag varint
//! ¹ only if the features have EXPIRE_AT and the flags have FLAG_HAS_EXPIRE
//! ² omitted for tombstones (FLAG_TOMBSTONE)
//! ```
//!
//! Rows sort by key ascending, then by sequence number descending ([`row_order`]): the newest
//! version of a key comes first. This file knows nothing of pages or checksums.

use alloc::format;
use alloc::vec::Vec;
use core::cmp::Ordering;

use super::codec::{
    put_i64, put_u16, put_u32, put_u64, put_u8, put_varint, unzigzag, varint_len, zigzag, Fields,
    Reader, MAX_VARINT_LEN,
};
use crate::error::{Error, Result};

/// Which attributes each row of an SST carries (SlateDB's `row_features`), as a bit set.
/// Version 1 requires [`FLAGS`](Self::FLAGS), [`SEQ`](Self::SEQ) and
/// [`TIMESTAMP`](Self::TIMESTAMP); [`EXPIRE_AT`](Self::EXPIRE_AT) and
/// [`VARINT`](Self::VARINT) are optional. Writers use [`COMPACT_BASE`](Self::COMPACT_BASE) and
/// [`COMPACT_WITH_EXPIRY`](Self::COMPACT_WITH_EXPIRY); the fixed-width `V1_*` rows of earlier
/// writers stay readable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowFeatures(u8);

impl RowFeatures {
    /// Each row has a flags byte.
    pub const FLAGS: u8 = 1;
    /// Each row has a sequence number.
    pub const SEQ: u8 = 2;
    /// Each row has a write timestamp.
    pub const TIMESTAMP: u8 = 4;
    /// Rows may carry an expiry time (those with [`FLAG_HAS_EXPIRE`]).
    pub const EXPIRE_AT: u8 = 8;
    /// Lengths, `seq`, `ts` and `expire_at` are varints (`expire_at` as its distance from `ts`),
    /// not fixed-width integers: a compact row.
    pub const VARINT: u8 = 16;

    const KNOWN: u8 = Self::FLAGS | Self::SEQ | Self::TIMESTAMP | Self::EXPIRE_AT | Self::VARINT;

    /// `FLAGS | SEQ | TIMESTAMP`: fixed-width rows without expiry.
    pub const V1_BASE: RowFeatures = RowFeatures(Self::FLAGS | Self::SEQ | Self::TIMESTAMP);
    /// `V1_BASE | EXPIRE_AT`: fixed-width rows that may carry an expiry.
    pub const V1_WITH_EXPIRY: RowFeatures = RowFeatures(Self::V1_BASE.0 | Self::EXPIRE_AT);
    /// `V1_BASE | VARINT`: compact rows without expiry.
    pub const COMPACT_BASE: RowFeatures = RowFeatures(Self::V1_BASE.0 | Self::VARINT);
    /// `V1_WITH_EXPIRY | VARINT`: compact rows that may carry an expiry.
    pub const COMPACT_WITH_EXPIRY: RowFeatures = RowFeatures(Self::KNOWN);

    /// The bit set.
    pub fn bits(self) -> u8 {
        self.0
    }

    /// The features with these bits. `Corruption` if a bit is unknown or a bit version 1 requires
    /// is missing.
    pub fn from_bits(bits: u8) -> Result<RowFeatures> {
        if bits & !Self::KNOWN != 0 {
            return Err(Error::corruption(format!(
                "unknown row feature bits {bits:#04x}"
            )));
        }
        let base = Self::V1_BASE.0;
        if bits & base != base {
            return Err(Error::corruption(format!(
                "row features {bits:#04x} lack FLAGS|SEQ|TIMESTAMP"
            )));
        }
        Ok(RowFeatures(bits))
    }

    /// Whether rows may carry an expiry time.
    pub fn has_expiry(self) -> bool {
        self.0 & Self::EXPIRE_AT != 0
    }

    /// Whether rows are compact (varint numbers).
    pub fn is_compact(self) -> bool {
        self.0 & Self::VARINT != 0
    }
}

/// Row flag: the row is a tombstone (a delete); it has no value.
pub const FLAG_TOMBSTONE: u8 = 0x01;
/// Row flag: the row carries an `expire_at`.
pub const FLAG_HAS_EXPIRE: u8 = 0x02;

const KNOWN_FLAGS: u8 = FLAG_TOMBSTONE | FLAG_HAS_EXPIRE;

/// The fixed part of every fixed-width row: key_len, flags, seq and ts.
const FIXED_LEN: usize = 2 + 1 + 8 + 8;

/// The smallest encoding of a row (a compact tombstone with an empty key, seq 0 and ts 0: four
/// one-byte fields), in bytes.
pub const MIN_ROW_LEN: usize = 4;

/// A borrowed row. `value: None` is a tombstone. Rows sort by key ascending, then seq descending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowRef<'a> {
    /// The key.
    pub key: &'a [u8],
    /// The sequence number of the write that produced this row.
    pub seq: u64,
    /// The write time, ms since the Unix epoch.
    pub ts: i64,
    /// When the row expires (ms since the Unix epoch); `None` = never.
    pub expire_at: Option<i64>,
    /// The value; `None` for a tombstone.
    pub value: Option<&'a [u8]>,
}

impl RowRef<'_> {
    /// An owned copy.
    pub fn to_row(&self) -> Row {
        Row {
            key: self.key.to_vec(),
            seq: self.seq,
            ts: self.ts,
            expire_at: self.expire_at,
            value: self.value.map(<[u8]>::to_vec),
        }
    }

    /// Whether this row is a delete.
    pub fn is_tombstone(&self) -> bool {
        self.value.is_none()
    }
}

/// An owned row; see [`RowRef`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The key.
    pub key: Vec<u8>,
    /// The sequence number of the write that produced this row.
    pub seq: u64,
    /// The write time, ms since the Unix epoch.
    pub ts: i64,
    /// When the row expires (ms since the Unix epoch); `None` = never.
    pub expire_at: Option<i64>,
    /// The value; `None` for a tombstone.
    pub value: Option<Vec<u8>>,
}

impl Row {
    /// A borrowed view of this row.
    pub fn as_ref(&self) -> RowRef<'_> {
        RowRef {
            key: &self.key,
            seq: self.seq,
            ts: self.ts,
            expire_at: self.expire_at,
            value: self.value.as_deref(),
        }
    }
}

/// The sort order of rows: key ascending, then seq descending (newest version first).
pub fn row_order(a: &RowRef<'_>, b: &RowRef<'_>) -> Ordering {
    a.key.cmp(b.key).then_with(|| b.seq.cmp(&a.seq))
}

/// The most bytes a compact row's fields between its key and its value take: flags (1), seq, ts
/// and the expiry's offset (a varint of up to 10 bytes each), the value's length (up to 5).
pub(crate) const ROW_FIELDS_MAX_LEN: usize = 1 + 3 * MAX_VARINT_LEN + 5;

/// Append `row` encoded with `features` to `out`.
///
/// `InvalidArgument` (and nothing written) if the row has an `expire_at` but `features` lacks
/// `EXPIRE_AT`, if a tombstone has an `expire_at` (the format cannot hold one), if the key is
/// longer than `u16::MAX` bytes or the value longer than `u32::MAX` bytes.
pub fn encode_row(out: &mut Vec<u8>, features: RowFeatures, row: &RowRef<'_>) -> Result<()> {
    let key_len = u16::try_from(row.key.len())
        .map_err(|_| Error::invalid("row key longer than 65535 bytes"))?;
    let value_len = match row.value {
        Some(value) => Some(
            u32::try_from(value.len())
                .map_err(|_| Error::invalid("row value longer than 4294967295 bytes"))?,
        ),
        None => None,
    };
    if row.expire_at.is_some() {
        if !features.has_expiry() {
            return Err(Error::invalid(
                "row has an expire_at but the row features lack EXPIRE_AT",
            ));
        }
        if row.value.is_none() {
            return Err(Error::invalid("a tombstone cannot carry an expire_at"));
        }
    }
    let mut flags = 0;
    if row.value.is_none() {
        flags |= FLAG_TOMBSTONE;
    }
    if row.expire_at.is_some() {
        flags |= FLAG_HAS_EXPIRE;
    }
    // The most any row takes besides its key and value (compact: the key length's varint, 3,
    // and its fields; fixed width: 2+1+8+8+8+4, less), without computing every varint's length.
    out.reserve(row.key.len() + row.value.map_or(0, <[u8]>::len) + 3 + ROW_FIELDS_MAX_LEN);
    if features.is_compact() {
        // The key's length, the key, then the fields between the key and the value gathered on
        // the stack (at most ROW_FIELDS_MAX_LEN bytes); then the value.
        let start = out.len();
        put_varint(out, u64::from(key_len));
        out.extend_from_slice(row.key);
        let mut fields = Fields::<ROW_FIELDS_MAX_LEN>::new();
        fields.u8(flags);
        fields.varint(row.seq);
        fields.varint(zigzag(row.ts));
        if let Some(expire_at) = row.expire_at {
            fields.varint(zigzag(expire_at.wrapping_sub(row.ts)));
        }
        if let Some(len) = value_len {
            fields.varint(u64::from(len));
        }
        if let Err(e) = fields.append_to(out) {
            out.truncate(start);
            return Err(e);
        }
        if let Some(value) = row.value {
            out.extend_from_slice(value);
        }
        return Ok(());
    }
    put_u16(out, key_len);
    out.extend_from_slice(row.key);
    put_u8(out, flags);
    put_u64(out, row.seq);
    put_i64(out, row.ts);
    if let Some(expire_at) = row.expire_at {
        put_i64(out, expire_at);
    }
    if let (Some(len), Some(value)) = (value_len, row.value) {
        put_u32(out, len);
        out.extend_from_slice(value);
    }
    Ok(())
}

/// The number of bytes [`encode_row`] writes for `row` (for a row it accepts).
pub fn encoded_row_len(features: RowFeatures, row: &RowRef<'_>) -> usize {
    let expire_at = row.expire_at.filter(|_| features.has_expiry());
    if features.is_compact() {
        let len = |n: usize| varint_len(u64::try_from(n).unwrap_or(u64::MAX));
        return len(row.key.len())
            + row.key.len()
            + 1
            + varint_len(row.seq)
            + varint_len(zigzag(row.ts))
            + expire_at.map_or(0, |at| varint_len(zigzag(at.wrapping_sub(row.ts))))
            + row.value.map_or(0, |v| len(v.len()) + v.len());
    }
    FIXED_LEN + row.key.len() + expire_at.map_or(0, |_| 8) + row.value.map_or(0, |v| 4 + v.len())
}

/// Read the key length at the front of a row with `features`.
fn read_key_len(r: &mut Reader<'_>, features: RowFeatures) -> Result<usize> {
    if !features.is_compact() {
        return r.u16("row key length").map(usize::from);
    }
    match u16::try_from(r.varint("row key length")?) {
        Ok(len) => Ok(usize::from(len)),
        Err(_) => Err(Error::corruption("row key length exceeds 65535")),
    }
}

/// The key of the row at the front of `buf`, without decoding the rest of the row.
pub fn decode_row_key(buf: &[u8], features: RowFeatures) -> Result<&[u8]> {
    let mut r = Reader::new(buf);
    let len = read_key_len(&mut r, features)?;
    r.bytes(len, "row key")
}

/// Decode one row from the front of `buf`; returns the row and the number of bytes it took.
///
/// `Corruption` if `buf` ends early, the flags have unknown bits, the row has
/// [`FLAG_HAS_EXPIRE`] but `features` lacks `EXPIRE_AT`, or a tombstone has `FLAG_HAS_EXPIRE`.
pub fn decode_row(buf: &[u8], features: RowFeatures) -> Result<(RowRef<'_>, usize)> {
    let mut r = Reader::new(buf);
    let compact = features.is_compact();
    let key_len = read_key_len(&mut r, features)?;
    let key = r.bytes(key_len, "row key")?;
    let flags = r.u8("row flags")?;
    if flags & !KNOWN_FLAGS != 0 {
        return Err(Error::corruption(format!(
            "unknown row flag bits {flags:#04x}"
        )));
    }
    let tombstone = flags & FLAG_TOMBSTONE != 0;
    let has_expire = flags & FLAG_HAS_EXPIRE != 0;
    if has_expire && !features.has_expiry() {
        return Err(Error::corruption(
            "row has an expire_at but the row features lack EXPIRE_AT",
        ));
    }
    if has_expire && tombstone {
        return Err(Error::corruption("tombstone with an expire_at"));
    }
    let (seq, ts) = if compact {
        (r.varint("row seq")?, unzigzag(r.varint("row ts")?))
    } else {
        (r.u64("row seq")?, r.i64("row ts")?)
    };
    let expire_at = match (has_expire, compact) {
        (false, _) => None,
        (true, true) => Some(ts.wrapping_add(unzigzag(r.varint("row expire_at")?))),
        (true, false) => Some(r.i64("row expire_at")?),
    };
    let value = if tombstone {
        None
    } else if compact {
        let len = u32::try_from(r.varint("row value length")?)
            .map_err(|_| Error::corruption("row value length exceeds 4294967295"))?;
        let len = usize::try_from(len).map_err(|_| Error::corruption("truncated row value"))?;
        Some(r.bytes(len, "row value")?)
    } else {
        let len = r.len_u32("row value length")?;
        Some(r.bytes(len, "row value")?)
    };
    let row = RowRef {
        key,
        seq,
        ts,
        expire_at,
        value,
    };
    Ok((row, r.position()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use alloc::vec;

    #[test]
    fn the_largest_fields_a_compact_row_can_have_fit_their_room() {
        let mut fields = Fields::<ROW_FIELDS_MAX_LEN>::new();
        fields.u8(FLAG_HAS_EXPIRE);
        fields.varint(u64::MAX);
        fields.varint(zigzag(i64::MIN));
        fields.varint(zigzag(0i64.wrapping_sub(i64::MIN)));
        fields.varint(u64::from(u32::MAX));
        let mut out = Vec::new();
        fields.append_to(&mut out).unwrap();
        assert_eq!(out.len(), ROW_FIELDS_MAX_LEN);
    }

    fn put(key: &[u8], seq: u64, value: &[u8], expire_at: Option<i64>) -> Row {
        Row {
            key: key.to_vec(),
            seq,
            ts: 1_700_000_000_000,
            expire_at,
            value: Some(value.to_vec()),
        }
    }

    fn tombstone(key: &[u8], seq: u64) -> Row {
        Row {
            key: key.to_vec(),
            seq,
            ts: -5,
            expire_at: None,
            value: None,
        }
    }

    fn round_trip(features: RowFeatures, row: &Row) {
        let mut out = vec![0xee];
        encode_row(&mut out, features, &row.as_ref()).unwrap();
        assert_eq!(out.len() - 1, encoded_row_len(features, &row.as_ref()));
        out.push(0xff);
        let (decoded, used) = decode_row(&out[1..], features).unwrap();
        assert_eq!(used, out.len() - 2);
        assert_eq!(decoded.to_row(), *row);
    }

    const ALL_FEATURES: [RowFeatures; 4] = [
        RowFeatures::V1_BASE,
        RowFeatures::V1_WITH_EXPIRY,
        RowFeatures::COMPACT_BASE,
        RowFeatures::COMPACT_WITH_EXPIRY,
    ];

    #[test]
    fn rows_round_trip_with_and_without_expiry() {
        for features in ALL_FEATURES {
            round_trip(features, &put(b"k", 1, b"v", None));
            round_trip(features, &put(b"", u64::MAX, b"", None));
            round_trip(features, &tombstone(b"gone", 7));
        }
        for features in [
            RowFeatures::V1_WITH_EXPIRY,
            RowFeatures::COMPACT_WITH_EXPIRY,
        ] {
            round_trip(features, &put(b"session", 3, b"data", Some(i64::MIN)));
            round_trip(features, &put(b"session", 3, b"data", Some(i64::MAX)));
            let mut far = put(b"k", u64::MAX, b"", Some(i64::MAX));
            far.ts = i64::MIN;
            round_trip(features, &far);
        }
    }

    #[test]
    fn the_compact_layout_is_the_documented_one() {
        let mut row = put(b"ab", 300, b"xyz", Some(1_700_000_005_000));
        let mut out = Vec::new();
        encode_row(&mut out, RowFeatures::COMPACT_WITH_EXPIRY, &row.as_ref()).unwrap();
        let ts = zigzag(1_700_000_000_000);
        let mut expected = vec![2, b'a', b'b', FLAG_HAS_EXPIRE, 0xac, 0x02];
        put_varint(&mut expected, ts);
        // expire_at - ts = 5000, zigzagged 10000 = 0x2710.
        expected.extend_from_slice(&[0x90, 0x4e, 3, b'x', b'y', b'z']);
        assert_eq!(out, expected);
        assert_eq!(out.len(), 18);

        row.expire_at = None;
        row.ts = -1;
        let mut out = Vec::new();
        encode_row(&mut out, RowFeatures::COMPACT_BASE, &row.as_ref()).unwrap();
        assert_eq!(
            out,
            vec![2, b'a', b'b', 0, 0xac, 0x02, 1, 3, b'x', b'y', b'z']
        );

        let mut out = Vec::new();
        let mut empty = tombstone(b"", 0);
        empty.ts = 0;
        encode_row(&mut out, RowFeatures::COMPACT_BASE, &empty.as_ref()).unwrap();
        assert_eq!(out, vec![0, FLAG_TOMBSTONE, 0, 0]);
        assert_eq!(out.len(), MIN_ROW_LEN);
    }

    #[test]
    fn a_compact_row_with_a_length_past_its_field_is_corruption() {
        let mut bytes = Vec::new();
        put_varint(&mut bytes, 65_536);
        let e = decode_row(&bytes, RowFeatures::COMPACT_BASE).unwrap_err();
        assert_eq!(e.message(), "row key length exceeds 65535");

        let mut bytes = vec![1, b'k', 0, 1, 2];
        put_varint(&mut bytes, 1 << 32);
        let e = decode_row(&bytes, RowFeatures::COMPACT_BASE).unwrap_err();
        assert_eq!(e.message(), "row value length exceeds 4294967295");

        let bytes = vec![1, b'k', 0, 0x80, 0x00, 0, 0];
        let e = decode_row(&bytes, RowFeatures::COMPACT_BASE).unwrap_err();
        assert_eq!(e.message(), "row seq is not a minimal varint");
    }

    #[test]
    fn the_layout_is_the_documented_one() {
        let row = put(b"ab", 0x0102, b"xyz", Some(-1));
        let mut out = Vec::new();
        encode_row(&mut out, RowFeatures::V1_WITH_EXPIRY, &row.as_ref()).unwrap();
        let mut expected = vec![2, 0, b'a', b'b', FLAG_HAS_EXPIRE, 2, 1, 0, 0, 0, 0, 0, 0];
        expected.extend_from_slice(&1_700_000_000_000i64.to_le_bytes());
        expected.extend_from_slice(&[0xff; 8]);
        expected.extend_from_slice(&[3, 0, 0, 0, b'x', b'y', b'z']);
        assert_eq!(out, expected);

        let mut out = Vec::new();
        encode_row(&mut out, RowFeatures::V1_BASE, &tombstone(b"a", 1).as_ref()).unwrap();
        assert_eq!(out.len(), FIXED_LEN + 1);
        assert_eq!(out[3], FLAG_TOMBSTONE);
    }

    #[test]
    fn features_reject_unknown_bits_and_missing_base_bits() {
        for bits in 0..=u8::MAX {
            let ok = ALL_FEATURES.iter().any(|f| f.bits() == bits);
            match RowFeatures::from_bits(bits) {
                Ok(f) => {
                    assert!(ok, "{bits:#x} accepted");
                    assert_eq!(f.bits(), bits);
                }
                Err(e) => {
                    assert!(!ok, "{bits:#x} rejected");
                    assert_eq!(e.kind(), ErrorKind::Corruption);
                }
            }
        }
        assert!(!RowFeatures::V1_BASE.has_expiry());
        assert!(RowFeatures::V1_WITH_EXPIRY.has_expiry());
        assert!(RowFeatures::COMPACT_WITH_EXPIRY.has_expiry());
        assert!(RowFeatures::COMPACT_BASE.is_compact() && !RowFeatures::V1_BASE.is_compact());
    }

    #[test]
    fn encoder_rejects_rows_the_format_cannot_hold_and_writes_nothing() {
        let mut out = vec![9];
        let expiring = put(b"k", 1, b"v", Some(10));
        let e = encode_row(&mut out, RowFeatures::V1_BASE, &expiring.as_ref()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);

        let mut dead = tombstone(b"k", 1);
        dead.expire_at = Some(10);
        let e = encode_row(&mut out, RowFeatures::V1_WITH_EXPIRY, &dead.as_ref()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);

        let long_key = vec![0u8; usize::from(u16::MAX) + 1];
        let e = encode_row(
            &mut out,
            RowFeatures::V1_BASE,
            &put(&long_key, 1, b"", None).as_ref(),
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(out, vec![9]);

        let max_key = vec![0u8; usize::from(u16::MAX)];
        round_trip(RowFeatures::V1_BASE, &put(&max_key, 1, b"v", None));
    }

    fn encoded(features: RowFeatures, row: &Row) -> Vec<u8> {
        let mut out = Vec::new();
        encode_row(&mut out, features, &row.as_ref()).unwrap();
        out
    }

    #[test]
    fn decoder_rejects_bad_flags() {
        let mut bytes = encoded(RowFeatures::V1_WITH_EXPIRY, &put(b"k", 1, b"v", None));
        let flags_at = 3;
        bytes[flags_at] = 0x04;
        let e = decode_row(&bytes, RowFeatures::V1_WITH_EXPIRY).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);

        let bytes = encoded(RowFeatures::V1_WITH_EXPIRY, &put(b"k", 1, b"v", Some(5)));
        let e = decode_row(&bytes, RowFeatures::V1_BASE).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);

        let mut bytes = encoded(RowFeatures::V1_WITH_EXPIRY, &tombstone(b"k", 1));
        bytes[flags_at] |= FLAG_HAS_EXPIRE;
        bytes.extend_from_slice(&[0; 8]);
        let e = decode_row(&bytes, RowFeatures::V1_WITH_EXPIRY).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
    }

    #[test]
    fn decoder_rejects_every_truncation() {
        for features in [
            RowFeatures::V1_WITH_EXPIRY,
            RowFeatures::COMPACT_WITH_EXPIRY,
        ] {
            let bytes = encoded(features, &put(b"key", 300, b"value", Some(5)));
            for len in 0..bytes.len() {
                let e = decode_row(&bytes[..len], features).unwrap_err();
                assert_eq!(e.kind(), ErrorKind::Corruption);
                assert!(e.message().starts_with("truncated"), "{}", e.message());
            }
        }
    }

    #[test]
    fn the_key_alone_decodes_in_both_layouts() {
        for features in ALL_FEATURES {
            let bytes = encoded(features, &put(b"key", 1, b"value", None));
            assert_eq!(decode_row_key(&bytes, features).unwrap(), b"key");
            assert!(decode_row_key(&bytes[..2], features).is_err());
        }
    }

    #[test]
    fn rows_sort_by_key_then_newest_first() {
        let a1 = put(b"a", 1, b"", None);
        let a2 = put(b"a", 2, b"", None);
        let b1 = put(b"b", 1, b"", None);
        assert_eq!(row_order(&a2.as_ref(), &a1.as_ref()), Ordering::Less);
        assert_eq!(row_order(&a1.as_ref(), &b1.as_ref()), Ordering::Less);
        assert_eq!(row_order(&a1.as_ref(), &a1.as_ref()), Ordering::Equal);
        assert!(tombstone(b"a", 1).as_ref().is_tombstone());
        assert!(!a1.as_ref().is_tombstone());
    }
}
