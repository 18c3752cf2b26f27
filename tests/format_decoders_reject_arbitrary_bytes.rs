//! Every decoder of `ttlkv::format` answers arbitrary bytes with `Ok` or `Err`, never a panic,
//! whether the bytes are random, random behind a valid header and checksum, or a valid encoding
//! that was truncated or changed (with the checksum recomputed, so the structural checks are what
//! stands in the way).
//!
//! When a changed encoding is still accepted, re-encoding what was decoded must give back exactly
//! those bytes: a decoder accepts only canonical encodings, so nothing it lets through can mean
//! two things.

mod format_gen;

use format_gen::{
    data_page, features, manifest, mutate, mutated_and_resealed, mutations, page_of, row, sst_meta,
    wal_batches, wal_page_of,
};
use proptest::prelude::*;
use ttlkv::format::{
    decode_row, decode_wal_page, encode_row, seal, DataPage, Manifest, Row, RowFeatures, SstMeta,
};

/// Decode `bytes` as a row; if it decodes, it must re-encode to the bytes it took.
fn check_row(bytes: &[u8], features: RowFeatures) -> Result<(), TestCaseError> {
    if let Ok((row, used)) = decode_row(bytes, features) {
        prop_assert!(used <= bytes.len());
        let mut again = Vec::new();
        encode_row(&mut again, features, &row).unwrap();
        prop_assert_eq!(again.as_slice(), &bytes[..used]);
    }
    Ok(())
}

/// Decode `bytes` as a data page; if it decodes, every accessor answers and rebuilding the page
/// from its rows gives the same bytes.
fn check_data_page(bytes: &[u8], probe: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(page) = DataPage::decode(bytes.to_vec()) {
        let rows: Vec<Row> = page.rows().map(|r| r.unwrap().to_row()).collect();
        for (i, row) in rows.iter().enumerate() {
            prop_assert_eq!(page.key(i).unwrap(), row.key.as_slice());
        }
        prop_assert!(page.row(page.len()).is_err());
        prop_assert!(page.lower_bound(probe).unwrap() <= page.len());
        prop_assert_eq!(page_of(page.row_features(), &rows), bytes);
    }
    Ok(())
}

/// Read `bytes` as a trusted data page (header only): every accessor answers `Ok` or `Err`,
/// never a panic, and where full verification accepts the page both give the same rows.
fn check_trusted_data_page(bytes: &[u8], probe: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(page) = DataPage::decode_trusted(bytes.to_vec().into()) {
        for i in 0..=page.len() {
            let _ = page.row(i);
            let _ = page.key(i);
        }
        let _ = page.lower_bound(probe);
        if let Ok(verified) = DataPage::decode(bytes.to_vec()) {
            prop_assert_eq!(page.len(), verified.len());
            for i in 0..page.len() {
                prop_assert_eq!(page.row(i).unwrap(), verified.row(i).unwrap());
            }
        }
    }
    Ok(())
}

fn check_sst_meta(bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(meta) = SstMeta::decode(bytes) {
        prop_assert_eq!(meta.encode(), bytes);
        let share = meta.expired_share_at(0);
        prop_assert!((0.0..=1.0).contains(&share));
    }
    Ok(())
}

fn check_manifest(bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(manifest) = Manifest::decode(bytes) {
        prop_assert_eq!(manifest.encode(), bytes);
    }
    Ok(())
}

/// A page in the current layout re-encodes to its bytes; one of an earlier writer (row features
/// byte 0, fixed-width rows) re-encodes to a current page of the same batches.
fn check_wal_page(bytes: &[u8]) -> Result<(), TestCaseError> {
    if let Ok(batches) = decode_wal_page(bytes) {
        if bytes.get(5) == Some(&0) {
            prop_assert_eq!(decode_wal_page(&wal_page_of(&batches)).unwrap(), batches);
        } else {
            prop_assert_eq!(wal_page_of(&batches), bytes);
        }
    }
    Ok(())
}

fn check_all(bytes: &[u8]) -> Result<(), TestCaseError> {
    check_row(bytes, RowFeatures::V1_BASE)?;
    check_row(bytes, RowFeatures::V1_WITH_EXPIRY)?;
    check_row(bytes, RowFeatures::COMPACT_BASE)?;
    check_row(bytes, RowFeatures::COMPACT_WITH_EXPIRY)?;
    check_data_page(bytes, bytes.get(..3).unwrap_or(bytes))?;
    check_trusted_data_page(bytes, bytes.get(..3).unwrap_or(bytes))?;
    check_sst_meta(bytes)?;
    check_manifest(bytes)?;
    check_wal_page(bytes)
}

/// A valid header of each page kind, so random bytes after it reach the structural checks.
fn header() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"TKVD\x01\x0f\x00\x00".to_vec()),
        Just(b"TKVD\x01\x07\x00\x00".to_vec()),
        Just(b"TKVD\x01\x1f\x00\x00".to_vec()),
        Just(b"TKVD\x01\x17\x00\x00".to_vec()),
        Just(b"TKVS\x01\x00\x00\x00".to_vec()),
        Just(b"TKVM\x01\x00\x00\x00".to_vec()),
        Just(b"TKVW\x01\x00\x00\x00".to_vec()),
        Just(b"TKVW\x01\x1f\x00\x00".to_vec()),
    ]
}

proptest! {
    #[test]
    fn random_bytes_never_panic_any_decoder(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        check_all(&bytes)?;
    }

    #[test]
    fn random_bytes_behind_a_valid_header_and_checksum_never_panic_any_decoder(
        header in header(),
        tail in prop::collection::vec(any::<u8>(), 0..400),
    ) {
        let mut bytes = header;
        bytes.extend_from_slice(&tail);
        seal(&mut bytes);
        check_all(&bytes)?;
    }

    #[test]
    fn changed_rows_never_panic_decode_row(
        (features, row) in features().prop_flat_map(|f| (Just(f), row(f))),
        changes in mutations(),
        other_features in features(),
    ) {
        let mut bytes = Vec::new();
        encode_row(&mut bytes, features, &row.as_ref()).unwrap();
        mutate(&mut bytes, &changes);
        check_row(&bytes, features)?;
        check_row(&bytes, other_features)?;
    }

    #[test]
    fn changed_data_pages_never_panic_decode(
        (_features, rows, bytes) in data_page(),
        changes in mutations(),
        truncate_at in any::<prop::sample::Index>(),
    ) {
        let probe = rows.first().map(|r| r.key.clone()).unwrap_or_default();
        check_data_page(&mutated_and_resealed(&bytes, &changes), &probe)?;
        let mut raw = bytes.clone();
        mutate(&mut raw, &changes);
        check_data_page(&raw, &probe)?;
        check_data_page(&bytes[..truncate_at.index(bytes.len())], &probe)?;
        // Read without verification, the damage must still give errors, not panics.
        check_trusted_data_page(&raw, &probe)?;
        check_trusted_data_page(&bytes[..truncate_at.index(bytes.len())], &probe)?;
    }

    #[test]
    fn changed_sst_meta_pages_never_panic_decode(
        meta in sst_meta(),
        changes in mutations(),
    ) {
        let bytes = meta.encode();
        check_sst_meta(&mutated_and_resealed(&bytes, &changes))?;
        let mut raw = bytes;
        mutate(&mut raw, &changes);
        check_sst_meta(&raw)?;
    }

    #[test]
    fn changed_manifests_never_panic_decode(manifest in manifest(), changes in mutations()) {
        let bytes = manifest.encode();
        check_manifest(&mutated_and_resealed(&bytes, &changes))?;
        let mut raw = bytes;
        mutate(&mut raw, &changes);
        check_manifest(&raw)?;
    }

    #[test]
    fn changed_wal_pages_never_panic_decode(batches in wal_batches(), changes in mutations()) {
        let bytes = wal_page_of(&batches);
        check_wal_page(&mutated_and_resealed(&bytes, &changes))?;
        let mut raw = bytes;
        mutate(&mut raw, &changes);
        check_wal_page(&raw)?;
    }

    #[test]
    fn every_truncation_of_a_valid_page_is_rejected(
        meta in sst_meta(),
        manifest in manifest(),
        batches in wal_batches(),
        (_features, _rows, data) in data_page(),
        cut in any::<prop::sample::Index>(),
    ) {
        let meta = meta.encode();
        prop_assert!(SstMeta::decode(&meta[..cut.index(meta.len())]).is_err());
        let manifest = manifest.encode();
        prop_assert!(Manifest::decode(&manifest[..cut.index(manifest.len())]).is_err());
        let wal = wal_page_of(&batches);
        prop_assert!(decode_wal_page(&wal[..cut.index(wal.len())]).is_err());
        prop_assert!(DataPage::decode(data[..cut.index(data.len())].to_vec()).is_err());
    }
}

#[test]
fn inputs_too_short_for_a_header_are_rejected_by_every_page_decoder() {
    for len in 0..16 {
        let zeros = vec![0u8; len];
        let mut sealed = zeros.clone();
        seal(&mut sealed);
        for bytes in [&zeros, &sealed] {
            assert!(DataPage::decode(bytes.clone()).is_err());
            assert!(SstMeta::decode(bytes).is_err());
            assert!(Manifest::decode(bytes).is_err());
            assert!(decode_wal_page(bytes).is_err());
        }
        assert!(decode_row(&zeros, RowFeatures::V1_WITH_EXPIRY).is_err());
    }
}
