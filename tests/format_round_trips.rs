//! Every encoder/decoder pair of `ttlkv::format` gives back exactly what it was given.

mod format_gen;

use format_gen::{data_page, features, manifest, row, sst_meta, wal_batches, wal_page_of};
use proptest::prelude::*;
use ttlkv::format::{
    decode_row, decode_wal_page, encode_row, encoded_row_len, expiry_percentiles, seal, unseal,
    DataPage, DataPageBuilder, Manifest, Row, SstMeta,
};

proptest! {
    #[test]
    fn rows_round_trip_and_report_their_length(
        (features, row) in features().prop_flat_map(|f| (Just(f), row(f))),
        prefix in prop::collection::vec(any::<u8>(), 0..4),
        suffix in prop::collection::vec(any::<u8>(), 0..4),
    ) {
        let mut out = prefix.clone();
        encode_row(&mut out, features, &row.as_ref()).unwrap();
        let len = out.len() - prefix.len();
        prop_assert_eq!(len, encoded_row_len(features, &row.as_ref()));
        out.extend_from_slice(&suffix);
        let (decoded, used) = decode_row(&out[prefix.len()..], features).unwrap();
        prop_assert_eq!(used, len);
        prop_assert_eq!(decoded.to_row(), row);
    }

    #[test]
    fn data_pages_round_trip((features, rows, bytes) in data_page()) {
        let page = DataPage::decode(bytes.clone()).unwrap();
        prop_assert_eq!(page.row_features(), features);
        prop_assert_eq!(page.len(), rows.len());
        prop_assert_eq!(page.byte_len(), bytes.len());
        for (i, row) in rows.iter().enumerate() {
            prop_assert_eq!(&page.row(i).unwrap().to_row(), row);
            prop_assert_eq!(page.key(i).unwrap(), row.key.as_slice());
        }
        let decoded: Vec<Row> = page.rows().map(|r| r.unwrap().to_row()).collect();
        prop_assert_eq!(decoded, rows);
    }

    #[test]
    fn builder_size_is_the_finished_length((features, rows, _bytes) in data_page()) {
        let mut builder = DataPageBuilder::new(features);
        for row in &rows {
            builder.push(&row.as_ref()).unwrap();
            prop_assert_eq!(
                builder.size(),
                DataPageBuilder::new(features).size()
                    + rows[..builder.len()]
                        .iter()
                        .map(|r| encoded_row_len(features, &r.as_ref()) + 4)
                        .sum::<usize>()
            );
        }
        let size = builder.size();
        prop_assert_eq!(builder.finish().len(), size);
    }

    #[test]
    fn lower_bound_matches_a_linear_scan(
        (_features, rows, bytes) in data_page(),
        probes in prop::collection::vec(format_gen::key(), 0..8),
    ) {
        let page = DataPage::decode(bytes).unwrap();
        let all_probes = rows.iter().map(|r| r.key.clone()).chain(probes);
        for probe in all_probes {
            let expected = rows
                .iter()
                .position(|r| r.key.as_slice() >= probe.as_slice())
                .unwrap_or(rows.len());
            prop_assert_eq!(page.lower_bound(&probe).unwrap(), expected);
        }
    }

    #[test]
    fn sst_meta_round_trips(meta in sst_meta()) {
        prop_assert_eq!(SstMeta::decode(&meta.encode()).unwrap(), meta);
    }

    #[test]
    fn manifests_round_trip(manifest in manifest()) {
        prop_assert_eq!(Manifest::decode(&manifest.encode()).unwrap(), manifest);
    }

    #[test]
    fn wal_pages_round_trip(batches in wal_batches()) {
        prop_assert_eq!(decode_wal_page(&wal_page_of(&batches)).unwrap(), batches);
    }

    #[test]
    fn seal_then_unseal_gives_the_body_back(body in prop::collection::vec(any::<u8>(), 0..256)) {
        let mut sealed = body.clone();
        seal(&mut sealed);
        prop_assert_eq!(sealed.len(), body.len() + 4);
        prop_assert_eq!(unseal(&sealed).unwrap(), body.as_slice());
    }

    #[test]
    fn expiry_percentiles_split_the_values_at_each_fifth(
        mut values in prop::collection::vec(any::<i64>(), 1..100),
    ) {
        values.sort_unstable();
        let n = values.len();
        let percentiles = expiry_percentiles(&values).unwrap();
        for (k, p) in (1..=5usize).zip(percentiles) {
            // At least k/5 of the values are <= p, and fewer than k/5 are < p.
            let at_most = values.iter().filter(|&&v| v <= p).count();
            let below = values.iter().filter(|&&v| v < p).count();
            prop_assert!(5 * at_most >= k * n, "k={} p={}", k, p);
            prop_assert!(5 * below < k * n, "k={} p={}", k, p);
        }
        prop_assert_eq!(percentiles[4], values[n - 1]);
    }
}
