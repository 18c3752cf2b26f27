//! WAL pages: one page per group commit, holding the batches of the writes it made durable. A
//! batch is the rows of one atomic write; all rows of a batch share a sequence number (the
//! engine's rule, which this codec does not check).
//!
//! ```text
//! page:  | "TKVW" | version u8 | row_features u8 | reserved [u8; 2] | batch_count u32 | batches... | crc32 u32 |
//! batch: | row_count u32 | rows... (encoded with the page's row features) |
//! ```
//!
//! Pages are written with [`WAL_ROW_FEATURES`] (compact rows). A `row_features` byte of 0 is a
//! page of an earlier writer, whose rows are fixed-width (`V1_WITH_EXPIRY`).
//!
//! Replaying the WAL in page order is the engine's business; this file only encodes and checks.

use alloc::format;
use alloc::vec::Vec;

use super::checksum::{seal, CHECKSUM_LEN};
use super::codec::{put_u32, put_u8};
use super::row::{decode_row, encode_row, Row, RowFeatures, RowRef, MIN_ROW_LEN};
use super::{open_page, read_version_byte, FORMAT_VERSION_BYTE};
use crate::error::{Error, Result};

/// The first four bytes of every WAL page.
pub const WAL_MAGIC: [u8; 4] = *b"TKVW";

/// The features every WAL row is written with.
pub const WAL_ROW_FEATURES: RowFeatures = RowFeatures::COMPACT_WITH_EXPIRY;

/// magic, version, row_features, reserved, batch_count.
const HEADER_LEN: usize = 4 + 1 + 1 + 2 + 4;
/// The smallest encoded batch: an empty one (its row count).
const MIN_BATCH_LEN: usize = 4;

/// Append one batch (`row_count u32 | rows`) to `out`.
///
/// `InvalidArgument`, with `out` left as it was, if a row cannot be encoded (see
/// [`encode_row`]) or there are more than `u32::MAX` rows.
pub fn encode_wal_batch(out: &mut Vec<u8>, rows: &[RowRef<'_>]) -> Result<()> {
    let count =
        u32::try_from(rows.len()).map_err(|_| Error::invalid("a WAL batch holds too many rows"))?;
    let start = out.len();
    put_u32(out, count);
    for row in rows {
        if let Err(e) = encode_row(out, WAL_ROW_FEATURES, row) {
            out.truncate(start);
            return Err(e);
        }
    }
    Ok(())
}

/// Wrap `batch_count` batches already appended to `batches` by [`encode_wal_batch`] into a
/// checksummed WAL page.
pub fn encode_wal_page(batches: &[u8], batch_count: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + batches.len() + CHECKSUM_LEN);
    out.extend_from_slice(&WAL_MAGIC);
    put_u8(&mut out, FORMAT_VERSION_BYTE);
    put_u8(&mut out, WAL_ROW_FEATURES.bits());
    out.extend_from_slice(&[0; 2]);
    put_u32(&mut out, batch_count);
    out.extend_from_slice(batches);
    seal(&mut out);
    out
}

/// Verify and decode a WAL page into its batches of rows. `Corruption` (message prefixed "wal
/// page") on a checksum mismatch, bad magic, another version, row features other than 0 (an
/// earlier writer's fixed-width rows) or [`WAL_ROW_FEATURES`], non-zero reserved bytes, a bad
/// row, fewer or more bytes than the batch and row counts account for.
pub fn decode_wal_page(bytes: &[u8]) -> Result<Vec<Vec<Row>>> {
    decode_page(bytes).map_err(|e| e.context("wal page"))
}

fn decode_page(bytes: &[u8]) -> Result<Vec<Vec<Row>>> {
    let mut r = open_page(bytes, WAL_MAGIC)?;
    read_version_byte(&mut r)?;
    // Writers only ever wrote these two: 0 before the byte existed, and compact rows since.
    let features = match r.u8("row features")? {
        0 => RowFeatures::V1_WITH_EXPIRY,
        bits if bits == WAL_ROW_FEATURES.bits() => WAL_ROW_FEATURES,
        bits => {
            return Err(Error::corruption(format!(
                "unsupported wal row features {bits:#04x}"
            )))
        }
    };
    r.zeros::<2>("reserved bytes")?;
    let batch_count = r.u32("batch count")?;
    let mut batches = Vec::with_capacity(r.capacity_for(u64::from(batch_count), MIN_BATCH_LEN));
    for batch_index in 0..batch_count {
        let row_count = r.u32("batch row count")?;
        let mut rows = Vec::with_capacity(r.capacity_for(u64::from(row_count), MIN_ROW_LEN));
        for _ in 0..row_count {
            let (row, used) = decode_row(r.rest(), features)
                .map_err(|e| e.context(format!("batch {batch_index}")))?;
            rows.push(row.to_row());
            r.bytes(used, "row")?;
        }
        batches.push(rows);
    }
    r.finish("the batches")?;
    Ok(batches)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use alloc::vec;

    fn batch(seq: u64, keys: &[&[u8]]) -> Vec<Row> {
        keys.iter()
            .map(|k| Row {
                key: k.to_vec(),
                seq,
                ts: 1_000 + i64::try_from(seq).unwrap(),
                expire_at: (k.len() % 2 == 1).then_some(9_000),
                value: (!k.is_empty()).then(|| k.repeat(3)),
            })
            .collect()
    }

    fn page(batches: &[Vec<Row>]) -> Vec<u8> {
        let mut body = Vec::new();
        for b in batches {
            let refs: Vec<RowRef<'_>> = b.iter().map(Row::as_ref).collect();
            encode_wal_batch(&mut body, &refs).unwrap();
        }
        encode_wal_page(&body, u32::try_from(batches.len()).unwrap())
    }

    #[test]
    fn wal_pages_round_trip() {
        let batches = vec![batch(1, &[b"a", b"bb", b""]), vec![], batch(2, &[b"ccc"])];
        assert_eq!(decode_wal_page(&page(&batches)).unwrap(), batches);
        assert_eq!(decode_wal_page(&page(&[])).unwrap(), Vec::<Vec<Row>>::new());
        assert_eq!(page(&[]).len(), HEADER_LEN + CHECKSUM_LEN);
    }

    #[test]
    fn a_batch_that_cannot_be_encoded_leaves_the_buffer_unchanged() {
        let mut out = vec![1, 2, 3];
        let mut rows = batch(1, &[b"ok"]);
        rows.push(Row {
            key: b"dead".to_vec(),
            seq: 1,
            ts: 0,
            expire_at: Some(5),
            value: None,
        });
        let refs: Vec<RowRef<'_>> = rows.iter().map(Row::as_ref).collect();
        let e = encode_wal_batch(&mut out, &refs).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(out, vec![1, 2, 3]);
    }

    fn rejected(batches: &[Vec<Row>], change: impl FnOnce(&mut Vec<u8>)) -> alloc::string::String {
        let mut body = page(batches);
        body.truncate(body.len() - CHECKSUM_LEN);
        change(&mut body);
        seal(&mut body);
        let e = decode_wal_page(&body).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert!(e.message().starts_with("wal page: "), "{}", e.message());
        e.message().into()
    }

    #[test]
    fn pages_of_earlier_writers_with_fixed_width_rows_still_decode() {
        let batches = vec![batch(3, &[b"a", b"bb"])];
        let mut body = Vec::new();
        put_u32(&mut body, 2);
        for row in &batches[0] {
            encode_row(&mut body, RowFeatures::V1_WITH_EXPIRY, &row.as_ref()).unwrap();
        }
        let mut bytes = encode_wal_page(&body, 1);
        bytes[5] = 0;
        bytes.truncate(bytes.len() - CHECKSUM_LEN);
        seal(&mut bytes);
        assert_eq!(decode_wal_page(&bytes).unwrap(), batches);
    }

    #[test]
    fn decode_rejects_a_bad_header() {
        let batches = [batch(1, &[b"a"])];
        assert!(rejected(&batches, |b| b[0] = 0).contains("bad magic"));
        assert!(rejected(&batches, |b| b[4] = 0).contains("unsupported format version"));
        for features in [0x07, 0x0f, 0x17, 0x40] {
            let message = rejected(&batches, |b| b[5] = features);
            assert!(
                message.contains("unsupported wal row features"),
                "{message}"
            );
        }
        assert!(rejected(&batches, |b| b[6] = 1).contains("reserved"));
        let mut bytes = page(&batches);
        bytes[13] ^= 4;
        let e = decode_wal_page(&bytes).unwrap_err();
        assert_eq!(e.message(), "wal page: checksum mismatch");
    }

    #[test]
    fn decode_rejects_counts_that_do_not_match_the_bytes() {
        let batches = [batch(1, &[b"a", b"b"])];
        assert!(rejected(&batches, |b| b[8] = 2).contains("truncated"));
        assert!(rejected(&batches, |b| b[8] = 0).contains("trailing"));
        assert!(rejected(&batches, |b| b[12] = 3).contains("batch 0: truncated"));
        assert!(rejected(&batches, |b| b[12] = 1).contains("trailing"));
        assert!(
            rejected(&batches, |b| b[12..16].copy_from_slice(&[0xff; 4])).contains("truncated")
        );
    }

    #[test]
    fn decode_rejects_a_bad_row() {
        let batches = [batch(1, &[b"a"])];
        // The row's flags byte follows its 1-byte key length and 1-byte key.
        let message = rejected(&batches, |b| b[HEADER_LEN + 4 + 2] = 0x80);
        assert!(message.contains("unknown row flag"), "{message}");
    }
}
