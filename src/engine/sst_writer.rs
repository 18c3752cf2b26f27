//! Writing SSTs: rows in order in, data pages of bounded size plus one metadata page out, with
//! the statistics the planner needs (timestamps, expiry range and percentiles, TTL share) and
//! the key filter point reads ask first.

use alloc::vec::Vec;

use crate::error::Result;
use crate::format::key_order::keys_equal;
use crate::format::{
    expiry_percentiles, key_hash, DataPageBuilder, KeyFilter, PageRef, RowFeatures, RowRef,
    SstMeta, FORMAT_VERSION,
};
use crate::small_sort::radix_sort_times;
use crate::store::PageId;

/// An SST ready to be committed: its metadata and every page to put.
pub(crate) struct BuiltSst {
    pub meta: SstMeta,
    pub pages: Vec<(PageId, Vec<u8>)>,
}

/// Builds one SST from rows given in (key asc, seq desc) order.
pub(crate) struct SstWriter {
    id: u64,
    features: RowFeatures,
    page_size: usize,
    creation_ts: i64,
    page: DataPageBuilder,
    page_first_key: Vec<u8>,
    last_key: Vec<u8>,
    pages: Vec<(PageId, Vec<u8>)>,
    refs: Vec<PageRef>,
    bytes: usize,
    rows: u64,
    tombstones: u64,
    expire_ats: Vec<i64>,
    key_hashes: Vec<u64>,
    min_ts: i64,
    max_ts: i64,
    min_seq: u64,
    max_seq: u64,
}

impl SstWriter {
    /// A writer for SST `id`. `with_expiry` must be true if any row may carry an expiry.
    pub(crate) fn new(id: u64, with_expiry: bool, page_size: usize, creation_ts: i64) -> Self {
        let features = if with_expiry {
            RowFeatures::COMPACT_WITH_EXPIRY
        } else {
            RowFeatures::COMPACT_BASE
        };
        SstWriter {
            id,
            features,
            page_size,
            creation_ts,
            page: DataPageBuilder::with_capacity(features, page_size),
            page_first_key: Vec::new(),
            last_key: Vec::new(),
            pages: Vec::new(),
            refs: Vec::new(),
            bytes: 0,
            rows: 0,
            tombstones: 0,
            expire_ats: Vec::new(),
            key_hashes: Vec::new(),
            min_ts: i64::MAX,
            max_ts: i64::MIN,
            min_seq: u64::MAX,
            max_seq: 0,
        }
    }

    /// Append a row (after every row already added in (key asc, seq desc) order).
    pub(crate) fn add(&mut self, row: &RowRef<'_>) -> Result<()> {
        self.make_room(crate::format::encoded_row_len(self.features, row), row.key);
        self.page.push(row)?;
        self.added(row);
        Ok(())
    }

    /// Append a row read from a page whose rows are encoded with `features`, `encoded` its bytes
    /// there ([`DataPage::row_and_bytes`](crate::format::DataPage)): copied as they are when
    /// `features` are this writer's, else encoded anew as [`add`](Self::add) does.
    pub(crate) fn add_encoded(
        &mut self,
        row: &RowRef<'_>,
        features: RowFeatures,
        encoded: &[u8],
    ) -> Result<()> {
        if features != self.features {
            return self.add(row);
        }
        self.make_room(encoded.len(), row.key);
        self.page.push_encoded(row, encoded)?;
        self.added(row);
        Ok(())
    }

    /// Cut the page if a row of `row_len` bytes would take it past the page size; note `key` as
    /// the first key of a page it starts.
    #[inline(always)]
    fn make_room(&mut self, row_len: usize, key: &[u8]) {
        if !self.page.is_empty() && self.page.size() + row_len > self.page_size {
            self.cut_page();
        }
        if self.page.is_empty() {
            self.page_first_key = key.to_vec();
        }
    }

    /// The statistics of `row`, just pushed.
    #[inline(always)]
    fn added(&mut self, row: &RowRef<'_>) {
        if !keys_equal(&self.last_key, row.key) {
            // In the buffer it already has: one allocation per key fewer.
            self.last_key.clear();
            self.last_key.extend_from_slice(row.key);
            self.key_hashes.push(key_hash(row.key));
        }
        self.rows += 1;
        if row.value.is_none() {
            self.tombstones += 1;
        }
        if let Some(at) = row.expire_at {
            self.expire_ats.push(at);
        }
        self.min_ts = self.min_ts.min(row.ts);
        self.max_ts = self.max_ts.max(row.ts);
        self.min_seq = self.min_seq.min(row.seq);
        self.max_seq = self.max_seq.max(row.seq);
    }

    fn cut_page(&mut self) {
        let rows = self.page.len();
        let bytes = self.page.take_page();
        let index = self.pages.len();
        self.refs.push(PageRef {
            first_key: core::mem::take(&mut self.page_first_key),
            last_key: self.last_key.clone(),
            rows: u32::try_from(rows).unwrap_or(u32::MAX),
            bytes: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
        });
        self.bytes += bytes.len();
        self.pages.push((
            PageId::sst_data(self.id, u32::try_from(index).unwrap_or(u32::MAX)),
            bytes,
        ));
    }

    /// Bytes of data written so far (including the page being filled).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes + self.page.size()
    }

    /// The finished SST, or `None` if no row was added.
    pub(crate) fn finish(mut self) -> Option<BuiltSst> {
        if self.rows == 0 {
            return None;
        }
        if !self.page.is_empty() {
            self.cut_page();
        }
        radix_sort_times(&mut self.expire_ats);
        let meta = SstMeta {
            id: self.id,
            format_version: FORMAT_VERSION,
            row_features: self.features,
            creation_ts: self.creation_ts,
            min_ts: self.min_ts,
            max_ts: self.max_ts,
            min_seq: self.min_seq,
            max_seq: self.max_seq,
            min_expire_at: self.expire_ats.first().copied(),
            max_expire_at: self.expire_ats.last().copied(),
            row_count: self.rows,
            tombstone_count: self.tombstones,
            ttl_row_count: self.expire_ats.len() as u64,
            expiry_percentiles: expiry_percentiles(&self.expire_ats),
            pages: self.refs,
            key_filter: Some(KeyFilter::build(&self.key_hashes)),
        };
        let mut pages = self.pages;
        pages.push((PageId::sst_meta(self.id), meta.encode()));
        Some(BuiltSst { meta, pages })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{DataPage, Row};

    /// Rows of every kind: with and without expiry, a tombstone, two versions of one key.
    fn rows() -> Vec<Row> {
        let row = |key: &str, seq: u64, expire_at: Option<i64>, value: Option<&[u8]>| Row {
            key: key.as_bytes().to_vec(),
            seq,
            ts: 1_000 + seq as i64,
            expire_at,
            value: value.map(<[u8]>::to_vec),
        };
        alloc::vec![
            row("a", 9, None, Some(b"first")),
            row("b", 8, Some(90_000), Some(b"expiring")),
            row("c", 7, None, None),
            row("d", 6, Some(5_000), Some(b"newer")),
            row("d", 2, None, Some(b"older")),
        ]
    }

    /// Every row of `built`'s data pages, in order.
    fn rows_of(built: &BuiltSst) -> Vec<Row> {
        let data = &built.pages[..built.pages.len() - 1];
        data.iter()
            .flat_map(|(_, bytes)| {
                let page = DataPage::decode(bytes.clone()).unwrap();
                page.rows().map(|r| r.unwrap().to_row()).collect::<Vec<_>>()
            })
            .collect()
    }

    /// A page of `rows` encoded with `features`.
    fn page_of(features: RowFeatures, rows: &[Row]) -> DataPage {
        let mut page = DataPageBuilder::new(features);
        for row in rows {
            page.push(&row.as_ref()).unwrap();
        }
        DataPage::decode(page.finish()).unwrap()
    }

    /// An SST of `rows` written by `add_encoded` from a page encoded with `features` (into a
    /// writer with the expiry field if `with_expiry`).
    fn copied_from(features: RowFeatures, rows: &[Row], with_expiry: bool) -> BuiltSst {
        let source = page_of(features, rows);
        let mut writer = SstWriter::new(1, with_expiry, 64, 0);
        for index in 0..source.len() {
            let (row, bytes) = source.row_and_bytes(index).unwrap();
            writer.add_encoded(&row, features, bytes).unwrap();
        }
        writer.finish().unwrap()
    }

    /// An SST of `rows` written by `add`.
    fn added(rows: &[Row], with_expiry: bool) -> BuiltSst {
        let mut writer = SstWriter::new(1, with_expiry, 64, 0);
        for row in rows {
            writer.add(&row.as_ref()).unwrap();
        }
        writer.finish().unwrap()
    }

    #[test]
    fn rows_copied_from_pages_of_any_encoding_are_written_as_the_rows_added_one_by_one() {
        // Copied as their bytes from a page of the writer's encoding, encoded anew from a
        // fixed-width page; with and without the expiry field.
        let without_expiry: Vec<Row> = rows()
            .into_iter()
            .filter(|r| r.expire_at.is_none())
            .collect();
        let cases = [
            (RowFeatures::COMPACT_WITH_EXPIRY, rows(), true),
            (RowFeatures::V1_WITH_EXPIRY, rows(), true),
            (RowFeatures::COMPACT_BASE, without_expiry.clone(), false),
            (RowFeatures::V1_BASE, without_expiry, false),
        ];
        for (features, rows, with_expiry) in cases {
            let added = added(&rows, with_expiry);
            assert_eq!(rows_of(&added), rows);
            let copied = copied_from(features, &rows, with_expiry);
            assert_eq!(rows_of(&copied), rows, "{features:?}");
            // The same pages byte for byte, cut at the same rows, and the same metadata.
            assert_eq!(copied.pages, added.pages, "{features:?}");
            assert_eq!(copied.meta, added.meta, "{features:?}");
        }
    }

    #[test]
    fn a_row_copied_out_of_order_is_refused_and_changes_nothing() {
        let source = page_of(RowFeatures::COMPACT_WITH_EXPIRY, &rows());
        let mut writer = SstWriter::new(1, true, 4096, 0);
        let (second, bytes) = source.row_and_bytes(1).unwrap();
        writer
            .add_encoded(&second, RowFeatures::COMPACT_WITH_EXPIRY, bytes)
            .unwrap();
        let before = writer.bytes();
        let (first, bytes) = source.row_and_bytes(0).unwrap();
        let refused = writer.add_encoded(&first, RowFeatures::COMPACT_WITH_EXPIRY, bytes);
        assert_eq!(
            refused.map_err(|e| e.kind()),
            Err(crate::error::ErrorKind::InvalidArgument)
        );
        assert_eq!(writer.bytes(), before);
        assert_eq!(rows_of(&writer.finish().unwrap()), [rows()[1].clone()]);
    }
}
