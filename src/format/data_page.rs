//! SST data pages: one bounded-size page of an SST's rows, sorted (key ascending, seq descending)
//! and checksummed. [`DataPageBuilder`] writes one; [`DataPage`] verifies one and serves point
//! lookups from it.
//!
//! ```text
//! +--------+---------+----------+----------+-----------+---------+-----------------+-------+
//! | "TKVD" | version | features | reserved | row_count | rows... | offsets u32 × n | crc32 |
//! | 4      | u8 = 1  | u8       | u16 = 0  | u32       |         | from rows start | u32   |
//! +--------+---------+----------+----------+-----------+---------+-----------------+-------+
//! ```
//!
//! The offsets let a reader binary-search the page without decoding it. Which SST a page belongs
//! to, and where it is stored, is the engine's business.

use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cmp::Ordering;

use super::checksum::{seal, unchecked_body, unseal, CHECKSUM_LEN};
use super::codec::{put_u16, put_u32, put_u8, Reader};
use super::key_order::{compare_keys, key_below};
use super::key_prefixes::SearchAid;
use super::row::{decode_row, decode_row_key, encode_row, row_order, RowFeatures, RowRef};
use super::{open_body, read_version_byte, FORMAT_VERSION_BYTE};
use crate::error::{Error, Result};

/// The first four bytes of every data page.
pub const DATA_PAGE_MAGIC: [u8; 4] = *b"TKVD";

/// The size of the header (magic, version, features, reserved, row_count).
const HEADER_LEN: usize = 12;
const OFFSET_LEN: usize = 4;
/// The bytes a row of a typical page takes, offset included (a key of a dozen bytes and a small
/// value), for sizing the offsets up front: a page of smaller rows grows them, once per builder.
const TYPICAL_ROW_AND_OFFSET_LEN: usize = 32;
/// The most room [`DataPageBuilder::with_capacity`] reserves up front, whatever the page size:
/// the page size is the caller's option, and a builder of larger pages grows its buffers past
/// this once, as they fill.
const MAX_RESERVED_PAGE_BYTES: usize = 256 * 1024;

/// Writes one data page. Rows must be pushed in strictly increasing (key asc, seq desc) order.
///
/// A writer of many pages keeps one builder and takes each page with
/// [`take_page`](Self::take_page): the builder's buffers, reserved once for the page size
/// ([`with_capacity`](Self::with_capacity)), are written again for every page and stay in the
/// cache, and each page is copied out once into an allocation of its size.
#[derive(Clone, Debug)]
pub struct DataPageBuilder {
    features: RowFeatures,
    rows: Vec<u8>,
    offsets: Vec<u32>,
    last_key: Vec<u8>,
    last_seq: u64,
}

impl DataPageBuilder {
    /// An empty page whose rows are encoded with `features`.
    pub fn new(features: RowFeatures) -> Self {
        Self::with_capacity(features, 0)
    }

    /// An empty page whose rows are encoded with `features`, with room for the rows of a page of
    /// up to `page_bytes` bytes (an SST writer's page size: it cuts a page before a row would
    /// take it past that), so that filling one does not grow the rows' buffer; at most
    /// 256 KiB are reserved (a larger page grows the buffers once, as it fills).
    pub fn with_capacity(features: RowFeatures, page_bytes: usize) -> Self {
        let reserved = page_bytes.min(MAX_RESERVED_PAGE_BYTES);
        DataPageBuilder {
            features,
            rows: Vec::with_capacity(reserved),
            offsets: Vec::with_capacity(reserved / TYPICAL_ROW_AND_OFFSET_LEN),
            last_key: Vec::new(),
            last_seq: 0,
        }
    }

    /// Append `row`.
    ///
    /// `InvalidArgument` (and the page unchanged) if the row is not strictly after the previous
    /// one in (key asc, seq desc) order, if [`encode_row`] rejects it, or if the page would
    /// outgrow its `u32` offsets.
    pub fn push(&mut self, row: &RowRef<'_>) -> Result<()> {
        self.check_order(row)?;
        let offset = self.next_offset()?;
        encode_row(&mut self.rows, self.features, row)?;
        self.pushed(row, offset);
        Ok(())
    }

    /// Append `row`, whose encoding with this page's features is `encoded` (a row read from a
    /// page with the same [`RowFeatures`], by [`DataPage::row_and_bytes`]): the bytes are copied
    /// as they are, not encoded again. The same order check and errors as [`push`](Self::push).
    pub(crate) fn push_encoded(&mut self, row: &RowRef<'_>, encoded: &[u8]) -> Result<()> {
        debug_assert_eq!(
            decode_row(encoded, self.features).map(|(r, used)| (r, used == encoded.len())),
            Ok((*row, true))
        );
        self.check_order(row)?;
        let offset = self.next_offset()?;
        self.rows.extend_from_slice(encoded);
        self.pushed(row, offset);
        Ok(())
    }

    /// `InvalidArgument` unless `row` comes strictly after the last row pushed.
    #[inline(always)]
    fn check_order(&self, row: &RowRef<'_>) -> Result<()> {
        if !self.offsets.is_empty() {
            let in_order = match compare_keys(&self.last_key, row.key) {
                Ordering::Less => true,
                Ordering::Equal => row.seq < self.last_seq,
                Ordering::Greater => false,
            };
            if !in_order {
                return Err(Error::invalid(
                    "rows must be pushed in strictly increasing (key asc, seq desc) order",
                ));
            }
        }
        Ok(())
    }

    /// Where the next row starts. Every row takes at least MIN_ROW_LEN bytes, so bounding the
    /// offsets by u32 also keeps the row count within the header's u32.
    #[inline(always)]
    fn next_offset(&self) -> Result<u32> {
        u32::try_from(self.rows.len()).map_err(|_| Error::invalid("data page rows exceed 4 GiB"))
    }

    /// Record `row`, just appended at `offset`.
    #[inline(always)]
    fn pushed(&mut self, row: &RowRef<'_>, offset: u32) {
        self.offsets.push(offset);
        self.last_key.clear();
        self.last_key.extend_from_slice(row.key);
        self.last_seq = row.seq;
    }

    /// The number of rows pushed.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// Whether no row was pushed.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// The encoded size of the page if it were finished now, in bytes.
    pub fn size(&self) -> usize {
        HEADER_LEN + self.rows.len() + OFFSET_LEN * self.offsets.len() + CHECKSUM_LEN
    }

    /// The encoded, checksummed page.
    pub fn finish(mut self) -> Vec<u8> {
        self.take_page()
    }

    /// The encoded, checksummed page, leaving this builder empty (with its buffers' room) for
    /// the next page.
    pub fn take_page(&mut self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size());
        out.extend_from_slice(&DATA_PAGE_MAGIC);
        put_u8(&mut out, FORMAT_VERSION_BYTE);
        put_u8(&mut out, self.features.bits());
        put_u16(&mut out, 0);
        // `push` keeps the row count within u32 (see there).
        put_u32(
            &mut out,
            u32::try_from(self.offsets.len()).unwrap_or(u32::MAX),
        );
        out.extend_from_slice(&self.rows);
        for offset in &self.offsets {
            put_u32(&mut out, *offset);
        }
        seal(&mut out);
        self.rows.clear();
        self.offsets.clear();
        self.last_key.clear();
        self.last_seq = 0;
        out
    }
}

/// A decoded, verified data page: its bytes, shared (a clone copies no row), and a few indices.
/// Cheap to clone, so a cache and a reader, or a store and a reader, hold the same bytes.
///
/// [`decode`](Self::decode) checks everything once (checksum, header, offsets, every row, the sort
/// order); the accessors then cannot fail on a page it accepted, but still return `Result` rather
/// than panic. [`decode_trusted`](Self::decode_trusted) checks only the header, for pages that
/// never left this process; the accessors' bounds checks still turn any damage into an error.
///
/// Once a few [`lower_bound`](Self::lower_bound)s show the page is read often, one of them builds
/// the rows' key prefixes ([`SearchAid`]), shared by every clone, so later searches read one
/// small array instead of each probed row.
#[derive(Clone, Debug)]
pub struct DataPage {
    bytes: Rc<Vec<u8>>,
    features: RowFeatures,
    count: usize,
    /// Where the rows area ends and the offsets begin (an index into `bytes`).
    rows_end: usize,
    /// The rows' key prefixes, once a search asked for them.
    search: SearchAid,
}

/// Pages are equal when their bytes are: whether a search built the prefixes yet does not count.
impl PartialEq for DataPage {
    fn eq(&self, other: &DataPage) -> bool {
        self.bytes == other.bytes
    }
}

impl Eq for DataPage {}

/// What `DataPage::decode` learns from the bytes.
struct Layout {
    features: RowFeatures,
    count: usize,
    rows_end: usize,
}

/// The header of a page's `body` (its bytes before the checksum) and where its offsets begin.
fn read_layout(body: &[u8]) -> Result<Layout> {
    let mut r = open_body(body, DATA_PAGE_MAGIC)?;
    read_version_byte(&mut r)?;
    let features = RowFeatures::from_bits(r.u8("row features")?)?;
    r.zeros::<2>("reserved bytes")?;
    let count = usize::try_from(r.u32("row count")?)
        .map_err(|_| Error::corruption("row count too large"))?;
    let offsets_len = count
        .checked_mul(OFFSET_LEN)
        .filter(|&len| len <= r.remaining())
        .ok_or_else(|| Error::corruption("row count exceeds the page"))?;
    Ok(Layout {
        features,
        count,
        rows_end: body.len() - offsets_len,
    })
}

/// The checksum, the header, then every row and the order of the rows.
fn verify(bytes: &[u8]) -> Result<Layout> {
    let body = unseal(bytes)?;
    let layout = read_layout(body)?;
    let (rows, offsets) = body
        .get(HEADER_LEN..)
        .and_then(|after_header| after_header.split_at_checked(layout.rows_end - HEADER_LEN))
        .ok_or_else(|| Error::corruption("row count exceeds the page"))?;
    let mut offsets = Reader::new(offsets);
    let mut previous: Option<RowRef<'_>> = None;
    let mut next_offset = 0usize;
    for _ in 0..layout.count {
        let offset = offsets.u32("row offset")?;
        if usize::try_from(offset).ok() != Some(next_offset) {
            return Err(Error::corruption("row offsets do not tile the rows area"));
        }
        let rest = rows
            .get(next_offset..)
            .ok_or_else(|| Error::corruption("row offset out of bounds"))?;
        let (row, used) = decode_row(rest, layout.features)?;
        if let Some(previous) = previous {
            if row_order(&previous, &row) != Ordering::Less {
                return Err(Error::corruption(
                    "rows are not sorted by key asc, seq desc",
                ));
            }
        }
        previous = Some(row);
        next_offset += used;
    }
    if next_offset != rows.len() {
        return Err(Error::corruption("row offsets do not tile the rows area"));
    }
    Ok(layout)
}

impl DataPage {
    /// Verify `bytes` and wrap them. `Corruption` (message prefixed "data page") on a checksum
    /// mismatch, a bad header, offsets that are out of bounds, not strictly increasing, not
    /// starting at 0 or not exactly tiling the rows area, an undecodable row, or rows out of order.
    pub fn decode(bytes: Vec<u8>) -> Result<DataPage> {
        let layout = verify(&bytes).map_err(|e| e.context("data page"))?;
        Ok(DataPage {
            bytes: Rc::new(bytes),
            features: layout.features,
            count: layout.count,
            rows_end: layout.rows_end,
            search: SearchAid::default(),
        })
    }

    /// Wrap `bytes` after checking only the header and that the offsets fit: no checksum, no row
    /// or order check. For pages this process wrote and kept in its own memory, which nothing
    /// else can change. Accessors stay bounds-checked, so a damaged page still gives `Corruption`
    /// (or wrong rows), never a panic.
    pub fn decode_trusted(bytes: Rc<Vec<u8>>) -> Result<DataPage> {
        let layout = unchecked_body(&bytes)
            .and_then(read_layout)
            .map_err(|e| e.context("data page"))?;
        Ok(DataPage {
            bytes,
            features: layout.features,
            count: layout.count,
            rows_end: layout.rows_end,
            search: SearchAid::default(),
        })
    }

    /// The page's bytes, as stored (copied for a compaction merged on its own thread).
    #[cfg(feature = "threads")]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The features the rows are encoded with.
    pub fn row_features(&self) -> RowFeatures {
        self.features
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the page has no rows.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The size of the encoded page, in bytes.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// The offset of row `index` from the start of the rows area (`index == len()` gives the
    /// end of the rows area).
    fn offset(&self, index: usize) -> Result<usize> {
        if index == self.count {
            return Ok(self.rows_end - HEADER_LEN);
        }
        let at = self.rows_end + index * OFFSET_LEN;
        let bytes = self
            .bytes
            .get(at..)
            .and_then(<[u8]>::first_chunk::<OFFSET_LEN>)
            .ok_or_else(|| Error::corruption("data page: row offset out of bounds"))?;
        usize::try_from(u32::from_le_bytes(*bytes))
            .map_err(|_| Error::corruption("data page: row offset out of bounds"))
    }

    /// The encoded bytes of row `index`.
    fn row_bytes(&self, index: usize) -> Result<&[u8]> {
        if index >= self.count {
            return Err(Error::invalid("row index out of range"));
        }
        let start = HEADER_LEN + self.offset(index)?;
        let end = HEADER_LEN + self.offset(index + 1)?;
        self.bytes
            .get(start..end)
            .ok_or_else(|| Error::corruption("data page: row offset out of bounds"))
    }

    /// The row that begins `at` bytes into the rows area (an offset a walk of the rows from 0
    /// reached, as [`row_at`](Self::row_at) gives them), and where the next begins: the end of
    /// the rows area ([`rows_len`](Self::rows_len)) after the last. Reads no offset: a row
    /// found by its place reads its own bytes only.
    pub fn row_at(&self, at: usize) -> Result<(RowRef<'_>, usize)> {
        let rows = self
            .bytes
            .get(HEADER_LEN..self.rows_end)
            .and_then(|rows| rows.get(at..))
            .filter(|rest| !rest.is_empty())
            .ok_or_else(|| Error::invalid("row offset out of range"))?;
        let (row, used) = decode_row(rows, self.features)?;
        Ok((row, at + used))
    }

    /// The length of the rows area: where [`row_at`](Self::row_at)'s walk ends.
    pub fn rows_len(&self) -> usize {
        self.rows_end - HEADER_LEN
    }

    /// Row `index`. `InvalidArgument` ("row index out of range") if `index >= len()`.
    pub fn row(&self, index: usize) -> Result<RowRef<'_>> {
        decode_row(self.row_bytes(index)?, self.features).map(|(row, _)| row)
    }

    /// Row `index` and its encoded bytes (as [`DataPageBuilder::push_encoded`] takes them).
    /// `InvalidArgument` ("row index out of range") if `index >= len()`.
    #[cfg_attr(not(feature = "compaction-copies-rows"), allow(dead_code))]
    pub(crate) fn row_and_bytes(&self, index: usize) -> Result<(RowRef<'_>, &[u8])> {
        let bytes = self.row_bytes(index)?;
        let (row, used) = decode_row(bytes, self.features)?;
        Ok((row, bytes.get(..used).unwrap_or(bytes)))
    }

    /// The key of row `index`, without decoding the rest of the row.
    /// `InvalidArgument` ("row index out of range") if `index >= len()`.
    pub fn key(&self, index: usize) -> Result<&[u8]> {
        decode_row_key(self.row_bytes(index)?, self.features)
    }

    /// The index of the first row whose key is `>= key`, or `len()` if there is none. Where a key
    /// has several versions this is its newest one. A binary search over the rows' prefixes, then
    /// over the offsets among the rows whose prefix is the key's.
    pub fn lower_bound(&self, key: &[u8]) -> Result<usize> {
        let range = self.search.narrow(key, self.count, || {
            (0..self.count).map(|index| self.key(index).ok()).collect()
        });
        let (mut low, mut high) = (range.start, range.end);
        while low < high {
            let mid = low + (high - low) / 2;
            if key_below(self.key(mid)?, key) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        Ok(low)
    }

    /// Every row, in order.
    pub fn rows(&self) -> impl Iterator<Item = Result<RowRef<'_>>> + '_ {
        (0..self.count).map(move |index| self.row(index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::format::checksum::seal;
    use crate::format::row::Row;
    use alloc::vec;

    fn row(key: &[u8], seq: u64) -> Row {
        Row {
            key: key.to_vec(),
            seq,
            ts: 100 + i64::try_from(seq).unwrap(),
            expire_at: (seq % 2 == 0 && seq % 3 != 0).then_some(5_000),
            value: (seq % 3 != 0).then(|| vec![b'v'; usize::try_from(seq).unwrap()]),
        }
    }

    fn build(rows: &[Row]) -> Vec<u8> {
        let mut builder = DataPageBuilder::new(RowFeatures::V1_WITH_EXPIRY);
        for r in rows {
            builder.push(&r.as_ref()).unwrap();
        }
        builder.finish()
    }

    /// Push compact rows with expiry, keys `session:{from}` on, as an SST writer does: until the
    /// next would take the finished page past `page_bytes`. Returns the rows pushed.
    fn fill(builder: &mut DataPageBuilder, from: u64, page_bytes: usize) -> Vec<Row> {
        let mut pushed = Vec::new();
        for i in from.. {
            let r = Row {
                key: alloc::format!("session:{i:08}").into_bytes(),
                seq: 1_000 + i,
                ts: 1_764_000_000_000,
                expire_at: Some(1_764_001_800_000),
                value: Some(vec![b'v'; 100]),
            };
            let next = crate::format::encoded_row_len(builder.features, &r.as_ref()) + OFFSET_LEN;
            if builder.size() + next > page_bytes {
                break;
            }
            builder.push(&r.as_ref()).unwrap();
            pushed.push(r);
        }
        pushed
    }

    #[test]
    fn a_walk_of_the_rows_by_their_places_visits_every_row_in_order_and_ends_at_the_rows_end() {
        let rows: Vec<Row> = (0..20).map(|i| row(&[b'k', i as u8], i + 1)).collect();
        let page = DataPage::decode(build(&rows)).unwrap();
        let mut at = 0;
        for (index, expected) in rows.iter().enumerate() {
            let (got, next) = page.row_at(at).unwrap();
            assert_eq!(got, page.row(index).unwrap());
            assert_eq!(got, expected.as_ref());
            assert!(next > at);
            at = next;
        }
        assert_eq!(at, page.rows_len());
        let past = page.row_at(at).unwrap_err();
        assert_eq!(past.kind(), ErrorKind::InvalidArgument);
        assert!(page.row_at(usize::MAX).is_err());
    }

    #[test]
    fn a_builder_for_pages_of_any_size_reserves_a_bounded_room_and_still_takes_big_rows() {
        let features = RowFeatures::COMPACT_BASE;
        let huge = DataPageBuilder::with_capacity(features, usize::MAX);
        assert!(huge.rows.capacity() <= MAX_RESERVED_PAGE_BYTES);
        assert!(huge.offsets.capacity() <= MAX_RESERVED_PAGE_BYTES);
        // A row larger than the room reserved grows the buffer, as a fresh builder's would.
        let mut builder = DataPageBuilder::with_capacity(features, 64);
        let big = Row {
            key: b"big".to_vec(),
            seq: 1,
            ts: 0,
            expire_at: None,
            value: Some(vec![7; 100_000]),
        };
        builder.push(&big.as_ref()).unwrap();
        let page = builder.take_page();
        let mut fresh = DataPageBuilder::new(features);
        fresh.push(&big.as_ref()).unwrap();
        assert_eq!(page, fresh.finish());
    }

    #[test]
    fn a_builder_reused_page_after_page_writes_what_fresh_ones_write_and_never_grows() {
        let features = RowFeatures::COMPACT_WITH_EXPIRY;
        let page_bytes = 16 * 1024;
        let mut reused = DataPageBuilder::with_capacity(features, page_bytes);
        let buffers = |b: &DataPageBuilder| {
            (
                b.rows.as_ptr(),
                b.rows.capacity(),
                b.offsets.as_ptr(),
                b.offsets.capacity(),
            )
        };
        let before = buffers(&reused);
        // The second page starts below the first's keys: a new page has no order to keep with
        // the last one.
        for from in [500, 0, 1_000] {
            let rows = fill(&mut reused, from, page_bytes);
            assert!(rows.len() > 100, "{} rows", rows.len());
            assert_eq!(buffers(&reused), before, "a buffer grew");
            let page = reused.take_page();
            assert!(reused.is_empty());
            let mut fresh = DataPageBuilder::new(features);
            for r in &rows {
                fresh.push(&r.as_ref()).unwrap();
            }
            assert_eq!(page, fresh.finish());
            assert!(page.len() <= page_bytes);
            // Each page is its own allocation of its size, not of the builder's room.
            assert!(page.capacity() < page.len() + 64, "{}", page.capacity());
            assert_eq!(DataPage::decode(page).unwrap().len(), rows.len());
        }
        assert_eq!(reused.take_page(), DataPageBuilder::new(features).finish());
    }

    fn sample() -> Vec<Row> {
        vec![
            row(b"apple", 4),
            row(b"banana", 9),
            row(b"banana", 7),
            row(b"banana", 2),
            row(b"cherry", 1),
            row(b"date", 3),
        ]
    }

    #[test]
    fn a_built_page_decodes_to_the_same_rows() {
        let rows = sample();
        let mut builder = DataPageBuilder::new(RowFeatures::V1_WITH_EXPIRY);
        for r in &rows {
            builder.push(&r.as_ref()).unwrap();
        }
        assert_eq!(builder.len(), rows.len());
        let size = builder.size();
        let bytes = builder.finish();
        assert_eq!(bytes.len(), size);
        let page = DataPage::decode(bytes).unwrap();
        assert_eq!(page.len(), rows.len());
        assert_eq!(page.byte_len(), size);
        assert_eq!(page.row_features(), RowFeatures::V1_WITH_EXPIRY);
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(page.row(i).unwrap().to_row(), *r);
            assert_eq!(page.key(i).unwrap(), r.key.as_slice());
        }
        let all: Vec<Row> = page.rows().map(|r| r.unwrap().to_row()).collect();
        assert_eq!(all, rows);
    }

    #[test]
    fn an_empty_page_round_trips() {
        let builder = DataPageBuilder::new(RowFeatures::V1_BASE);
        assert!(builder.is_empty());
        assert_eq!(builder.size(), HEADER_LEN + CHECKSUM_LEN);
        let page = DataPage::decode(builder.finish()).unwrap();
        assert!(page.is_empty());
        assert_eq!(page.lower_bound(b"x").unwrap(), 0);
        assert_eq!(page.rows().count(), 0);
    }

    #[test]
    fn builder_rejects_rows_out_of_order_and_keeps_the_page_unchanged() {
        let mut builder = DataPageBuilder::new(RowFeatures::V1_WITH_EXPIRY);
        builder.push(&row(b"b", 5).as_ref()).unwrap();
        let size = builder.size();
        for bad in [row(b"a", 1), row(b"b", 5), row(b"b", 6)] {
            let e = builder.push(&bad.as_ref()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert_eq!(builder.size(), size);
        }
        builder.push(&row(b"b", 4).as_ref()).unwrap();
        builder.push(&row(b"c", 100).as_ref()).unwrap();
        assert_eq!(builder.len(), 3);
    }

    #[test]
    fn builder_rejects_a_row_its_features_cannot_hold() {
        let mut builder = DataPageBuilder::new(RowFeatures::V1_BASE);
        let e = builder.push(&row(b"a", 2).as_ref()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(builder.is_empty());
        // The rejected row does not count as "previous" for the order check.
        builder.push(&row(b"a", 1).as_ref()).unwrap();
    }

    #[test]
    fn lower_bound_finds_the_newest_version_of_a_key() {
        let page = DataPage::decode(build(&sample())).unwrap();
        assert_eq!(page.lower_bound(b"").unwrap(), 0);
        assert_eq!(page.lower_bound(b"apple").unwrap(), 0);
        assert_eq!(page.lower_bound(b"apricot").unwrap(), 1);
        assert_eq!(page.lower_bound(b"banana").unwrap(), 1);
        assert_eq!(page.row(1).unwrap().seq, 9);
        assert_eq!(page.lower_bound(b"banana\0").unwrap(), 4);
        assert_eq!(page.lower_bound(b"date").unwrap(), 5);
        assert_eq!(page.lower_bound(b"zebra").unwrap(), 6);
    }

    #[test]
    fn lower_bound_over_many_versions_of_one_key() {
        let rows: Vec<Row> = (1..=9).rev().map(|seq| row(b"k", seq)).collect();
        let page = DataPage::decode(build(&rows)).unwrap();
        assert_eq!(page.lower_bound(b"k").unwrap(), 0);
        assert_eq!(page.row(0).unwrap().seq, 9);
        assert_eq!(page.lower_bound(b"j").unwrap(), 0);
        assert_eq!(page.lower_bound(b"l").unwrap(), 9);
    }

    #[test]
    fn an_index_past_the_end_is_an_invalid_argument() {
        let page = DataPage::decode(build(&sample())).unwrap();
        let e = page.row(6).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(e.message(), "row index out of range");
        assert_eq!(
            page.key(usize::MAX).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }

    /// Re-seal `bytes` after `change` so that the structural checks, not the checksum, decide.
    fn resealed(bytes: &[u8], change: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut body = bytes[..bytes.len() - CHECKSUM_LEN].to_vec();
        change(&mut body);
        seal(&mut body);
        body
    }

    fn corruption(bytes: Vec<u8>) -> alloc::string::String {
        let e = DataPage::decode(bytes).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        e.message().into()
    }

    #[test]
    fn decode_rejects_a_bad_header() {
        let good = build(&sample());
        assert_eq!(
            corruption(resealed(&good, |b| b[0] = b'X')),
            "data page: bad magic"
        );
        assert_eq!(
            corruption(resealed(&good, |b| b[4] = 2)),
            "data page: unsupported format version"
        );
        assert!(corruption(resealed(&good, |b| b[5] = 0x10)).contains("row feature"));
        assert_eq!(
            corruption(resealed(&good, |b| b[6] = 1)),
            "data page: reserved bytes are not zero"
        );
        assert_eq!(
            corruption(resealed(&good, |b| b[8..12].copy_from_slice(&u32::MAX.to_le_bytes()))),
            "data page: row count exceeds the page"
        );
        assert_eq!(
            corruption(good[..good.len() - 1].to_vec()),
            "data page: checksum mismatch"
        );
    }

    #[test]
    fn decode_rejects_offsets_that_do_not_tile_the_rows() {
        let good = build(&sample());
        let offsets_at = good.len() - CHECKSUM_LEN - 4 * 6;
        let set = |i: usize, v: u32| {
            resealed(&good, move |b| {
                b[offsets_at + 4 * i..offsets_at + 4 * i + 4].copy_from_slice(&v.to_le_bytes())
            })
        };
        for bad in [set(0, 1), set(2, 0), set(3, u32::MAX), set(5, 1)] {
            assert!(corruption(bad).contains("tile"));
        }
        // One row count fewer: the last row's bytes become an unexplained tail.
        let fewer = resealed(&good, |b| {
            b[8] -= 1;
            b.drain(offsets_at + 20..offsets_at + 24);
        });
        assert!(corruption(fewer).contains("tile"));
    }

    #[test]
    fn decode_rejects_rows_out_of_order() {
        let mut a = DataPageBuilder::new(RowFeatures::V1_BASE);
        a.push(&row(b"a", 1).as_ref()).unwrap();
        a.push(&row(b"b", 1).as_ref()).unwrap();
        let good = a.finish();
        // Swap the keys "a" and "b": same lengths, so the offsets stay valid.
        let swapped = resealed(&good, |b| {
            let first = HEADER_LEN + 2;
            let row_len = (b.len() - HEADER_LEN - 8) / 2;
            b[first] = b'b';
            b[first + row_len] = b'a';
        });
        assert!(corruption(swapped).contains("not sorted"));
        let same_version = resealed(&good, |b| {
            let row_len = (b.len() - HEADER_LEN - 8) / 2;
            b[HEADER_LEN + row_len + 2] = b'a';
        });
        assert!(corruption(same_version).contains("not sorted"));
    }

    #[test]
    fn a_trusted_page_reads_the_same_rows_without_checking_the_checksum() {
        let rows = sample();
        let bytes = build(&rows);
        let trusted = DataPage::decode_trusted(bytes.clone().into()).unwrap();
        assert_eq!(trusted, DataPage::decode(bytes.clone()).unwrap());
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(corruption(flipped.clone()), "data page: checksum mismatch");
        let trusted = DataPage::decode_trusted(flipped.into()).unwrap();
        assert_eq!(trusted.row(1).unwrap().to_row(), rows[1]);
        assert_eq!(trusted.lower_bound(b"cherry").unwrap(), 4);
    }

    #[test]
    fn a_trusted_page_still_checks_its_header_and_bounds() {
        let good = build(&sample());
        let bad_magic = resealed(&good, |b| b[0] = b'X');
        let err = DataPage::decode_trusted(bad_magic.into()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Corruption);
        let too_many = resealed(&good, |b| b[8..12].copy_from_slice(&u32::MAX.to_le_bytes()));
        assert!(DataPage::decode_trusted(too_many.into()).is_err());
        // An offset pointing past the rows: the row read fails, nothing panics.
        let offsets_at = good.len() - CHECKSUM_LEN - 4 * 6;
        let mut wild = good.clone();
        wild[offsets_at + 8..offsets_at + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        let page = DataPage::decode_trusted(wild.into()).unwrap();
        assert_eq!(page.row(2).unwrap_err().kind(), ErrorKind::Corruption);
        assert!(page.row(1).is_err());
    }
}
