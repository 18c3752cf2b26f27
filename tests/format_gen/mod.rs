//! Generators of valid format values for the format test files: rows, sorted pages of rows, SST
//! metadata that describes real rows, manifests and WAL batches, plus mutations of encodings.
#![allow(
    dead_code,
    reason = "each test file uses a different part of the generators"
)]

use proptest::prelude::*;
use proptest::sample::Index;
use ttlkv::format::{
    encode_wal_batch, encode_wal_page, expiry_percentiles, key_hash, row_order, seal,
    DataPageBuilder, KeyFilter, Manifest, MovedKeyspace, NamespaceEntry, PageRef, Row, RowFeatures,
    RowRef, SstMeta, FORMAT_VERSION,
};

/// Keys from a small alphabet, so that rows often share a key.
pub fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => prop::collection::vec(b'a'..=b'd', 0..4),
        1 => prop::collection::vec(any::<u8>(), 0..24),
    ]
}

/// Any row `features` can hold.
pub fn row(features: RowFeatures) -> impl Strategy<Value = Row> {
    let expiry = features.has_expiry();
    (
        key(),
        prop_oneof![Just(u64::MAX), 0..50u64, any::<u64>()],
        any::<i64>(),
        prop::option::of(prop::collection::vec(any::<u8>(), 0..40)),
        prop::option::of(any::<i64>()),
    )
        .prop_map(move |(key, seq, ts, value, expire_at)| Row {
            key,
            seq,
            ts,
            expire_at: if expiry && value.is_some() {
                expire_at
            } else {
                None
            },
            value,
        })
}

pub fn features() -> impl Strategy<Value = RowFeatures> {
    prop_oneof![
        Just(RowFeatures::V1_BASE),
        Just(RowFeatures::V1_WITH_EXPIRY),
        Just(RowFeatures::COMPACT_BASE),
        Just(RowFeatures::COMPACT_WITH_EXPIRY)
    ]
}

/// Rows in strictly increasing (key asc, seq desc) order.
pub fn sorted_rows(features: RowFeatures, max: usize) -> impl Strategy<Value = Vec<Row>> {
    prop::collection::vec(row(features), 0..max).prop_map(|mut rows| {
        rows.sort_by(|a, b| row_order(&a.as_ref(), &b.as_ref()));
        rows.dedup_by(|a, b| a.key == b.key && a.seq == b.seq);
        rows
    })
}

pub fn page_of(features: RowFeatures, rows: &[Row]) -> Vec<u8> {
    let mut builder = DataPageBuilder::new(features);
    for row in rows {
        builder
            .push(&row.as_ref())
            .expect("rows are sorted and fit the features");
    }
    builder.finish()
}

/// A features set and an encoded data page of sorted rows with it.
pub fn data_page() -> impl Strategy<Value = (RowFeatures, Vec<Row>, Vec<u8>)> {
    features()
        .prop_flat_map(|f| (Just(f), sorted_rows(f, 24)))
        .prop_map(|(f, rows)| {
            let bytes = page_of(f, &rows);
            (f, rows, bytes)
        })
}

/// The metadata of an SST holding `rows` (sorted), cut into pages at `cuts`.
pub fn meta_of(
    id: u64,
    creation_ts: i64,
    features: RowFeatures,
    rows: &[Row],
    cuts: &[Index],
) -> SstMeta {
    let mut bounds: Vec<usize> = cuts.iter().map(|i| i.index(rows.len() + 1)).collect();
    bounds.push(0);
    bounds.push(rows.len());
    bounds.sort_unstable();
    bounds.dedup();
    let pages = bounds
        .windows(2)
        .map(|w| {
            let chunk = &rows[w[0]..w[1]];
            PageRef {
                first_key: chunk[0].key.clone(),
                last_key: chunk[chunk.len() - 1].key.clone(),
                rows: u32::try_from(chunk.len()).unwrap(),
                bytes: u32::try_from(page_of(features, chunk).len()).unwrap(),
            }
        })
        .collect();
    let mut expire_ats: Vec<i64> = rows.iter().filter_map(|r| r.expire_at).collect();
    expire_ats.sort_unstable();
    SstMeta {
        id,
        format_version: FORMAT_VERSION,
        row_features: features,
        creation_ts,
        min_ts: rows.iter().map(|r| r.ts).min().unwrap_or(0),
        max_ts: rows.iter().map(|r| r.ts).max().unwrap_or(0),
        min_seq: rows.iter().map(|r| r.seq).min().unwrap_or(0),
        max_seq: rows.iter().map(|r| r.seq).max().unwrap_or(0),
        min_expire_at: expire_ats.first().copied(),
        max_expire_at: expire_ats.last().copied(),
        row_count: rows.len() as u64,
        tombstone_count: rows.iter().filter(|r| r.value.is_none()).count() as u64,
        ttl_row_count: expire_ats.len() as u64,
        expiry_percentiles: expiry_percentiles(&expire_ats),
        pages,
        key_filter: Some(KeyFilter::build(
            &rows.iter().map(|r| key_hash(&r.key)).collect::<Vec<_>>(),
        )),
    }
}

/// Valid SST metadata, describing generated rows.
pub fn sst_meta() -> impl Strategy<Value = SstMeta> {
    (
        features().prop_flat_map(|f| (Just(f), sorted_rows(f, 40))),
        prop::collection::vec(any::<Index>(), 0..6),
        any::<u64>(),
        any::<i64>(),
    )
        .prop_map(|((f, rows), cuts, id, creation_ts)| meta_of(id, creation_ts, f, &rows, &cuts))
}

pub fn namespace() -> impl Strategy<Value = NamespaceEntry> {
    (
        any::<u32>(),
        ".{0,12}",
        prop::option::of(any::<u64>()),
        prop::option::of(any::<u64>()),
    )
        .prop_map(|(id, name, default_ttl_ms, max_ttl_ms)| NamespaceEntry {
            id,
            name,
            default_ttl_ms,
            max_ttl_ms,
        })
}

pub fn manifest() -> impl Strategy<Value = Manifest> {
    (
        (
            any::<u64>(),
            any::<i64>(),
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
        ),
        prop::collection::vec(prop::collection::vec(any::<u64>(), 0..6), 0..5),
        prop::collection::vec(namespace(), 0..4),
        (
            any::<i64>(),
            any::<u32>(),
            prop::collection::vec(any::<u32>(), 0..4),
            prop::collection::vec((any::<u32>(), any::<u32>()), 0..3),
        ),
    )
        .prop_map(
            |(
                (writer_epoch, clock_seed, flushed_seq, wal_first, next_sst_id),
                levels,
                namespaces,
                (purged_until, next_namespace_id, dropped_namespaces, moved),
            )| {
                Manifest {
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
                    moved_keyspaces: moved
                        .into_iter()
                        .map(|(handle, id)| MovedKeyspace { handle, id })
                        .collect(),
                }
            },
        )
}

/// Batches of rows as a WAL page holds them.
pub fn wal_batches() -> impl Strategy<Value = Vec<Vec<Row>>> {
    prop::collection::vec(
        prop::collection::vec(row(RowFeatures::COMPACT_WITH_EXPIRY), 0..5),
        0..5,
    )
}

pub fn wal_page_of(batches: &[Vec<Row>]) -> Vec<u8> {
    let mut body = Vec::new();
    for batch in batches {
        let refs: Vec<RowRef<'_>> = batch.iter().map(Row::as_ref).collect();
        encode_wal_batch(&mut body, &refs).expect("generated rows are encodable");
    }
    encode_wal_page(&body, u32::try_from(batches.len()).unwrap())
}

/// One change to an encoding.
#[derive(Clone, Debug)]
pub enum Mutation {
    Set(Index, u8),
    Flip(Index, u8),
    Insert(Index, u8),
    Remove(Index),
    Truncate(Index),
}

pub fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    let one = prop_oneof![
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Set(i, b)),
        (any::<Index>(), 0u8..8).prop_map(|(i, bit)| Mutation::Flip(i, bit)),
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<Index>().prop_map(Mutation::Remove),
        any::<Index>().prop_map(Mutation::Truncate),
    ];
    prop::collection::vec(one, 1..4)
}

pub fn mutate(bytes: &mut Vec<u8>, mutations: &[Mutation]) {
    for m in mutations {
        let len = bytes.len();
        match m {
            Mutation::Set(i, b) if len > 0 => bytes[i.index(len)] = *b,
            Mutation::Flip(i, bit) if len > 0 => bytes[i.index(len)] ^= 1 << bit,
            Mutation::Insert(i, b) => bytes.insert(i.index(len + 1), *b),
            Mutation::Remove(i) if len > 0 => {
                bytes.remove(i.index(len));
            }
            Mutation::Truncate(i) => bytes.truncate(i.index(len + 1)),
            _ => {}
        }
    }
}

/// `encoding` with its checksum stripped, `mutations` applied, and a fresh checksum: the result
/// passes the checksum, so only the structural checks stand between it and the decoder.
pub fn mutated_and_resealed(encoding: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut body = encoding[..encoding.len() - 4].to_vec();
    mutate(&mut body, mutations);
    seal(&mut body);
    body
}
