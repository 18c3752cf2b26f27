//! Flipping any single bit of a data page, an SST metadata page, a manifest or a WAL page makes
//! its decoder fail with `ErrorKind::Corruption`: the CRC-32 covers every byte before it, and a
//! flip inside the CRC itself no longer matches either.

use ttlkv::format::{
    decode_wal_page, encode_wal_batch, encode_wal_page, expiry_percentiles, key_hash, DataPage,
    DataPageBuilder, KeyFilter, Manifest, MovedKeyspace, NamespaceEntry, PageRef, Row, RowFeatures,
    RowRef, SstMeta, FORMAT_VERSION,
};
use ttlkv::{ErrorKind, Result};

fn rows() -> Vec<Row> {
    let row = |key: &[u8], seq: u64, expire_at: Option<i64>, value: Option<&[u8]>| Row {
        key: key.to_vec(),
        seq,
        ts: 1_700_000_000_000 + i64::try_from(seq).unwrap(),
        expire_at,
        value: value.map(<[u8]>::to_vec),
    };
    vec![
        row(b"cart:17", 12, Some(1_700_000_600_000), Some(b"3 items")),
        row(b"cart:17", 9, None, None),
        row(
            b"session:a",
            11,
            Some(1_700_003_600_000),
            Some(b"{\"user\":1}"),
        ),
        row(b"session:b", 10, None, Some(b"")),
    ]
}

/// Every single-bit change of `encoding` fails to decode with `Corruption`.
fn assert_every_bit_flip_is_corruption<T>(encoding: &[u8], decode: impl Fn(&[u8]) -> Result<T>) {
    assert!(decode(encoding).is_ok(), "the unchanged encoding decodes");
    let mut flipped = encoding.to_vec();
    for byte in 0..encoding.len() {
        for bit in 0..8 {
            flipped[byte] ^= 1 << bit;
            match decode(&flipped) {
                Ok(_) => panic!("flipping bit {bit} of byte {byte} went unnoticed"),
                Err(e) => assert_eq!(e.kind(), ErrorKind::Corruption, "byte {byte} bit {bit}"),
            }
            flipped[byte] ^= 1 << bit;
        }
    }
}

#[test]
fn every_bit_flip_in_a_data_page_is_corruption() {
    let mut builder = DataPageBuilder::new(RowFeatures::V1_WITH_EXPIRY);
    for row in rows() {
        builder.push(&row.as_ref()).unwrap();
    }
    let page = builder.finish();
    assert_every_bit_flip_is_corruption(&page, |bytes| DataPage::decode(bytes.to_vec()));
}

#[test]
fn every_bit_flip_in_an_sst_meta_page_is_corruption() {
    let rows = rows();
    let mut expire_ats: Vec<i64> = rows.iter().filter_map(|r| r.expire_at).collect();
    expire_ats.sort_unstable();
    let meta = SstMeta {
        id: 5,
        format_version: FORMAT_VERSION,
        row_features: RowFeatures::V1_WITH_EXPIRY,
        creation_ts: 1_700_000_100_000,
        min_ts: 1_700_000_000_009,
        max_ts: 1_700_000_000_012,
        min_seq: 9,
        max_seq: 12,
        min_expire_at: expire_ats.first().copied(),
        max_expire_at: expire_ats.last().copied(),
        row_count: 4,
        tombstone_count: 1,
        ttl_row_count: 2,
        expiry_percentiles: expiry_percentiles(&expire_ats),
        pages: vec![
            PageRef {
                first_key: b"cart:17".to_vec(),
                last_key: b"session:a".to_vec(),
                rows: 3,
                bytes: 140,
            },
            PageRef {
                first_key: b"session:b".to_vec(),
                last_key: b"session:b".to_vec(),
                rows: 1,
                bytes: 55,
            },
        ],
        key_filter: Some(KeyFilter::build(
            &rows.iter().map(|r| key_hash(&r.key)).collect::<Vec<_>>(),
        )),
    };
    assert_every_bit_flip_is_corruption(&meta.encode(), SstMeta::decode);
}

#[test]
fn every_bit_flip_in_a_manifest_is_corruption() {
    let manifest = Manifest {
        writer_epoch: 2,
        clock_seed: 1_700_000_100_000,
        flushed_seq: 12,
        wal_first: 4,
        next_sst_id: 6,
        purged_until: 1_700_000_050_000,
        next_namespace_id: 2,
        levels: vec![vec![5, 3], vec![1, 2]],
        namespaces: vec![NamespaceEntry {
            id: 1,
            name: "sessions".into(),
            default_ttl_ms: Some(3_600_000),
            max_ttl_ms: None,
        }],
        dropped_namespaces: vec![7],
        moved_keyspaces: vec![MovedKeyspace { handle: 0, id: 8 }],
    };
    assert_every_bit_flip_is_corruption(&manifest.encode(), Manifest::decode);
}

#[test]
fn every_bit_flip_in_a_wal_page_is_corruption() {
    let rows = rows();
    let refs: Vec<RowRef<'_>> = rows.iter().map(Row::as_ref).collect();
    let mut batches = Vec::new();
    let (first, second) = refs.split_at(2);
    encode_wal_batch(&mut batches, first).unwrap();
    encode_wal_batch(&mut batches, second).unwrap();
    assert_every_bit_flip_is_corruption(&encode_wal_page(&batches, 2), decode_wal_page);
}
