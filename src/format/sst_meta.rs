//! The SST metadata page: one per SST, read before any of its data pages. It holds what the
//! planner needs without touching the rows (format version, row features, time, sequence and
//! expiry ranges, counts, the **expiry percentiles**), the index of the SST's data pages and its
//! [`KeyFilter`].
//!
//! ```text
//! | "TKVS" | format_version u32 | row_features u8 | presence u8 | reserved u16 | fixed fields |
//! | page_count u64 | page refs... | [key filter: probes u8 | bits_len u64 | bits] | crc32 u32 |
//! ```
//!
//! The field-by-field table is in `docs/format.md`. This file knows nothing of how data pages are
//! laid out inside; data page `i` of SST `id` is stored at `PageId::sst_data(id, i)`.

use alloc::format;
use alloc::vec::Vec;

use super::checksum::{seal, CHECKSUM_LEN};
use super::codec::{put_bytes_u64, put_i64, put_len_u64, put_u16, put_u32, put_u64, put_u8};
use super::key_filter::KeyFilter;
use super::row::RowFeatures;
use super::{open_page, FORMAT_VERSION};
use crate::error::{Error, Result};

/// The first four bytes of every SST metadata page.
pub const SST_META_MAGIC: [u8; 4] = *b"TKVS";

const HAS_MIN_EXPIRE_AT: u8 = 0x01;
const HAS_MAX_EXPIRE_AT: u8 = 0x02;
const HAS_PERCENTILES: u8 = 0x04;
const HAS_KEY_FILTER: u8 = 0x08;
const KNOWN_PRESENCE: u8 = HAS_MIN_EXPIRE_AT | HAS_MAX_EXPIRE_AT | HAS_PERCENTILES | HAS_KEY_FILTER;

/// The size of everything before the page list: magic, version, features, presence, reserved,
/// 11 eight-byte fields, 5 percentiles and the page count.
const FIXED_LEN: usize = 4 + 4 + 1 + 1 + 2 + 8 * 11 + 8 * 5 + 8;

/// The smallest encoded [`PageRef`]: two empty keys with their lengths, rows and bytes.
const MIN_PAGE_REF_LEN: usize = 8 + 8 + 4 + 4;

/// Where one data page of an SST starts and ends, and how big it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageRef {
    /// The key of the page's first row.
    pub first_key: Vec<u8>,
    /// The key of the page's last row.
    pub last_key: Vec<u8>,
    /// The number of rows in the page (at least 1).
    pub rows: u32,
    /// The encoded size of the page, in bytes.
    pub bytes: u32,
}

/// An SST's metadata page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SstMeta {
    /// The SST's id.
    pub id: u64,
    /// The format version its pages are written in (must be [`FORMAT_VERSION`]).
    pub format_version: u32,
    /// The attributes every row of the SST carries.
    pub row_features: RowFeatures,
    /// When the SST was written, ms since the Unix epoch.
    pub creation_ts: i64,
    /// The smallest row `ts`.
    pub min_ts: i64,
    /// The largest row `ts`.
    pub max_ts: i64,
    /// The smallest row sequence number.
    pub min_seq: u64,
    /// The largest row sequence number.
    pub max_seq: u64,
    /// The earliest `expire_at` of any row; `Some` iff `ttl_row_count > 0`.
    pub min_expire_at: Option<i64>,
    /// The latest `expire_at` of any row; `Some` iff `ttl_row_count > 0`.
    pub max_expire_at: Option<i64>,
    /// The number of rows (all versions, tombstones included).
    pub row_count: u64,
    /// The number of tombstones.
    pub tombstone_count: u64,
    /// rows that carry an expire_at
    pub ttl_row_count: u64,
    /// expire_at at which 20/40/60/80/100 % of the TTL rows have expired; Some iff ttl_row_count > 0
    pub expiry_percentiles: Option<[i64; 5]>,
    /// data page i is stored at PageId::sst_data(id, i)
    pub pages: Vec<PageRef>,
    /// A Bloom filter over every key of the SST; `None` in SSTs written without one, which
    /// every point read then searches.
    pub key_filter: Option<KeyFilter>,
}

impl SstMeta {
    /// The encoded, checksummed page (magic `TKVS`, version, fields, CRC-32).
    ///
    /// Encoding never fails; [`decode`](Self::decode) rejects a page whose fields are inconsistent,
    /// so the writer should only encode metadata that describes real rows.
    pub fn encode(&self) -> Vec<u8> {
        let keys: usize = self
            .pages
            .iter()
            .map(|p| p.first_key.len() + p.last_key.len())
            .sum();
        let filter = self
            .key_filter
            .as_ref()
            .map_or(0, |f| 1 + 8 + f.bits().len());
        let mut out = Vec::with_capacity(
            FIXED_LEN + self.pages.len() * MIN_PAGE_REF_LEN + keys + filter + CHECKSUM_LEN,
        );
        out.extend_from_slice(&SST_META_MAGIC);
        put_u32(&mut out, self.format_version);
        put_u8(&mut out, self.row_features.bits());
        let mut presence = 0;
        if self.min_expire_at.is_some() {
            presence |= HAS_MIN_EXPIRE_AT;
        }
        if self.max_expire_at.is_some() {
            presence |= HAS_MAX_EXPIRE_AT;
        }
        if self.expiry_percentiles.is_some() {
            presence |= HAS_PERCENTILES;
        }
        if self.key_filter.is_some() {
            presence |= HAS_KEY_FILTER;
        }
        put_u8(&mut out, presence);
        put_u16(&mut out, 0);
        put_u64(&mut out, self.id);
        put_i64(&mut out, self.creation_ts);
        put_i64(&mut out, self.min_ts);
        put_i64(&mut out, self.max_ts);
        put_u64(&mut out, self.min_seq);
        put_u64(&mut out, self.max_seq);
        put_i64(&mut out, self.min_expire_at.unwrap_or(0));
        put_i64(&mut out, self.max_expire_at.unwrap_or(0));
        put_u64(&mut out, self.row_count);
        put_u64(&mut out, self.tombstone_count);
        put_u64(&mut out, self.ttl_row_count);
        for p in self.expiry_percentiles.unwrap_or([0; 5]) {
            put_i64(&mut out, p);
        }
        put_len_u64(&mut out, self.pages.len());
        for page in &self.pages {
            put_bytes_u64(&mut out, &page.first_key);
            put_bytes_u64(&mut out, &page.last_key);
            put_u32(&mut out, page.rows);
            put_u32(&mut out, page.bytes);
        }
        if let Some(filter) = &self.key_filter {
            put_u8(&mut out, filter.probes());
            put_bytes_u64(&mut out, filter.bits());
        }
        seal(&mut out);
        out
    }

    /// Verify and decode a metadata page. `Corruption` (message prefixed "sst meta") on a
    /// checksum mismatch, bad magic, another format version, bad row features, unknown presence
    /// bits, non-zero reserved or absent fields, truncation or trailing bytes, and on
    /// inconsistent contents: `min > max` for ts, seq or expiry; percentiles not non-decreasing
    /// or outside `[min_expire_at, max_expire_at]`; expiry fields not `Some` exactly when
    /// `ttl_row_count > 0`; TTL rows without the `EXPIRE_AT` feature; `tombstone_count +
    /// ttl_row_count > row_count`; page row counts not summing to `row_count`; a page with no
    /// rows or with `first_key > last_key`; pages out of key order; a key filter with 0 or more
    /// than 30 probes or no bits.
    pub fn decode(bytes: &[u8]) -> Result<SstMeta> {
        decode_meta(bytes).map_err(|e| e.context("sst meta"))
    }

    /// The total size of the SST's data pages, in bytes.
    pub fn data_bytes(&self) -> u64 {
        self.pages.iter().map(|p| u64::from(p.bytes)).sum()
    }

    /// The SST's smallest key, if it has rows.
    pub fn first_key(&self) -> Option<&[u8]> {
        self.pages.first().map(|p| p.first_key.as_slice())
    }

    /// The SST's largest key, if it has rows.
    pub fn last_key(&self) -> Option<&[u8]> {
        self.pages.last().map(|p| p.last_key.as_slice())
    }

    /// `(min_expire_at, max_expire_at)` if every row carries an expiry (so the whole SST is gone
    /// once `max_expire_at` has passed); `None` if some row never expires, or there are no rows.
    pub fn expiry_range_of_every_row(&self) -> Option<(i64, i64)> {
        match (self.min_expire_at, self.max_expire_at) {
            (Some(min), Some(max)) if self.ttl_row_count == self.row_count => Some((min, max)),
            _ => None,
        }
    }

    /// The share (0.0..=1.0) of all rows estimated to have expired at `now`, from the
    /// percentiles: (number of percentile points `<= now`) × 0.2 × `ttl_row_count / row_count`.
    /// 0.0 when there are no TTL rows.
    pub fn expired_share_at(&self, now: i64) -> f64 {
        let Some(percentiles) = self.expiry_percentiles else {
            return 0.0;
        };
        if self.ttl_row_count == 0 || self.row_count == 0 {
            return 0.0;
        }
        let points = percentiles.iter().filter(|&&p| p <= now).count();
        let share = points as f64 * 0.2 * (self.ttl_row_count as f64 / self.row_count as f64);
        share.clamp(0.0, 1.0)
    }

    /// The consistency checks `decode` applies after parsing.
    fn check(&self) -> Result<()> {
        if self.min_ts > self.max_ts {
            return Err(Error::corruption("min_ts > max_ts"));
        }
        if self.min_seq > self.max_seq {
            return Err(Error::corruption("min_seq > max_seq"));
        }
        let accounted = self.tombstone_count.checked_add(self.ttl_row_count);
        if accounted.is_none_or(|n| n > self.row_count) {
            return Err(Error::corruption(
                "tombstone_count + ttl_row_count > row_count",
            ));
        }
        let has_ttl = self.ttl_row_count > 0;
        if has_ttl && !self.row_features.has_expiry() {
            return Err(Error::corruption(
                "TTL rows in an SST whose row features lack EXPIRE_AT",
            ));
        }
        match (
            self.min_expire_at,
            self.max_expire_at,
            self.expiry_percentiles,
        ) {
            (Some(min), Some(max), Some(percentiles)) if has_ttl => {
                if min > max {
                    return Err(Error::corruption("min_expire_at > max_expire_at"));
                }
                let mut previous = min;
                for p in percentiles {
                    if p < previous {
                        return Err(Error::corruption(
                            "expiry percentiles decrease or fall below min_expire_at",
                        ));
                    }
                    previous = p;
                }
                if previous > max {
                    return Err(Error::corruption("expiry percentiles exceed max_expire_at"));
                }
            }
            (None, None, None) if !has_ttl => {}
            _ => {
                return Err(Error::corruption(
                    "expiry range and percentiles must be present exactly when ttl_row_count > 0",
                ))
            }
        }
        let mut page_rows = 0u64;
        let mut previous_last: Option<&[u8]> = None;
        for (index, page) in self.pages.iter().enumerate() {
            if page.rows == 0 {
                return Err(Error::corruption(format!("data page {index} has no rows")));
            }
            if page.first_key > page.last_key {
                return Err(Error::corruption(format!(
                    "data page {index} has first_key > last_key"
                )));
            }
            if previous_last.is_some_and(|last| last > page.first_key.as_slice()) {
                return Err(Error::corruption(format!(
                    "data page {index} starts before the previous one ends"
                )));
            }
            previous_last = Some(&page.last_key);
            page_rows += u64::from(page.rows);
        }
        if page_rows != self.row_count {
            return Err(Error::corruption(
                "data page row counts do not sum to row_count",
            ));
        }
        Ok(())
    }
}

/// `value` if `present`; otherwise it must have been written as zero.
fn optional<T: Default + PartialEq>(present: bool, value: T, what: &str) -> Result<Option<T>> {
    if present {
        Ok(Some(value))
    } else if value == T::default() {
        Ok(None)
    } else {
        Err(Error::corruption(format!("absent {what} is not zero")))
    }
}

fn decode_meta(bytes: &[u8]) -> Result<SstMeta> {
    let mut r = open_page(bytes, SST_META_MAGIC)?;
    let format_version = r.u32("format version")?;
    if format_version != FORMAT_VERSION {
        return Err(Error::corruption("unsupported format version"));
    }
    let row_features = RowFeatures::from_bits(r.u8("row features")?)?;
    let presence = r.u8("presence bits")?;
    if presence & !KNOWN_PRESENCE != 0 {
        return Err(Error::corruption(format!(
            "unknown presence bits {presence:#04x}"
        )));
    }
    r.zeros::<2>("reserved bytes")?;
    let id = r.u64("id")?;
    let creation_ts = r.i64("creation_ts")?;
    let min_ts = r.i64("min_ts")?;
    let max_ts = r.i64("max_ts")?;
    let min_seq = r.u64("min_seq")?;
    let max_seq = r.u64("max_seq")?;
    let min_expire_at = r.i64("min_expire_at")?;
    let max_expire_at = r.i64("max_expire_at")?;
    let row_count = r.u64("row_count")?;
    let tombstone_count = r.u64("tombstone_count")?;
    let ttl_row_count = r.u64("ttl_row_count")?;
    let mut percentiles = [0i64; 5];
    for p in &mut percentiles {
        *p = r.i64("expiry percentiles")?;
    }
    let page_count = r.u64("page count")?;
    let mut pages = Vec::with_capacity(r.capacity_for(page_count, MIN_PAGE_REF_LEN));
    for _ in 0..page_count {
        let len = r.len_u64("page first_key length")?;
        let first_key = r.bytes(len, "page first_key")?.to_vec();
        let len = r.len_u64("page last_key length")?;
        let last_key = r.bytes(len, "page last_key")?.to_vec();
        let rows = r.u32("page rows")?;
        let bytes = r.u32("page bytes")?;
        pages.push(PageRef {
            first_key,
            last_key,
            rows,
            bytes,
        });
    }
    let key_filter = if presence & HAS_KEY_FILTER != 0 {
        let probes = r.u8("key filter probes")?;
        let len = r.len_u64("key filter length")?;
        Some(KeyFilter::from_parts(
            probes,
            r.bytes(len, "key filter")?.to_vec(),
        )?)
    } else {
        None
    };
    r.finish("the page list and key filter")?;
    let meta = SstMeta {
        id,
        format_version,
        row_features,
        creation_ts,
        min_ts,
        max_ts,
        min_seq,
        max_seq,
        min_expire_at: optional(
            presence & HAS_MIN_EXPIRE_AT != 0,
            min_expire_at,
            "min_expire_at",
        )?,
        max_expire_at: optional(
            presence & HAS_MAX_EXPIRE_AT != 0,
            max_expire_at,
            "max_expire_at",
        )?,
        row_count,
        tombstone_count,
        ttl_row_count,
        expiry_percentiles: optional(
            presence & HAS_PERCENTILES != 0,
            percentiles,
            "expiry percentiles",
        )?,
        pages,
        key_filter,
    };
    meta.check()?;
    Ok(meta)
}

/// The expiry percentiles of a **sorted** (ascending) slice of `expire_at` values: for p in
/// 20, 40, 60, 80, 100 %, the element at index ⌈p·n⌉ − 1 (computed exactly, in integers).
/// `None` for an empty slice. An unsorted slice gives the elements at those indices all the same.
pub fn expiry_percentiles(sorted_expire_ats: &[i64]) -> Option<[i64; 5]> {
    let n = sorted_expire_ats.len();
    let mut out = [0i64; 5];
    for (k, slot) in (1..=5usize).zip(out.iter_mut()) {
        // ⌈k·n/5⌉ without overflowing k·n.
        let rank = k * (n / 5) + (k * (n % 5)).div_ceil(5);
        *slot = *sorted_expire_ats.get(rank.checked_sub(1)?)?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use alloc::vec;

    fn page(first: &[u8], last: &[u8], rows: u32) -> PageRef {
        PageRef {
            first_key: first.to_vec(),
            last_key: last.to_vec(),
            rows,
            bytes: 1000 + rows,
        }
    }

    fn meta() -> SstMeta {
        SstMeta {
            id: 42,
            format_version: FORMAT_VERSION,
            row_features: RowFeatures::V1_WITH_EXPIRY,
            creation_ts: 1_700_000_000_000,
            min_ts: 10,
            max_ts: 20,
            min_seq: 3,
            max_seq: 9,
            min_expire_at: Some(100),
            max_expire_at: Some(500),
            row_count: 10,
            tombstone_count: 2,
            ttl_row_count: 5,
            expiry_percentiles: Some([100, 200, 300, 400, 500]),
            pages: vec![
                page(b"a", b"f", 4),
                page(b"f", b"k", 5),
                page(b"m", b"m", 1),
            ],
            key_filter: None,
        }
    }

    fn filtered() -> SstMeta {
        let hashes: Vec<u64> = [&b"a"[..], b"f", b"k", b"m"]
            .iter()
            .map(|k| crate::format::key_hash(k))
            .collect();
        SstMeta {
            key_filter: Some(KeyFilter::build(&hashes)),
            ..meta()
        }
    }

    fn no_ttl() -> SstMeta {
        SstMeta {
            row_features: RowFeatures::V1_BASE,
            min_expire_at: None,
            max_expire_at: None,
            ttl_row_count: 0,
            expiry_percentiles: None,
            ..meta()
        }
    }

    #[test]
    fn the_expiry_range_of_every_row_exists_only_when_every_row_expires() {
        assert_eq!(
            meta().expiry_range_of_every_row(),
            None,
            "5 of 10 rows expire"
        );
        let all = SstMeta {
            tombstone_count: 0,
            ttl_row_count: 10,
            ..meta()
        };
        assert_eq!(all.expiry_range_of_every_row(), Some((100, 500)));
        assert_eq!(no_ttl().expiry_range_of_every_row(), None);
    }

    #[test]
    fn metadata_round_trips_with_and_without_ttl_rows_and_a_key_filter() {
        for m in [meta(), no_ttl(), filtered()] {
            assert_eq!(SstMeta::decode(&m.encode()).unwrap(), m);
        }
        let empty = SstMeta {
            min_ts: 0,
            max_ts: 0,
            min_seq: 0,
            max_seq: 0,
            row_count: 0,
            tombstone_count: 0,
            pages: vec![],
            ..no_ttl()
        };
        assert_eq!(SstMeta::decode(&empty.encode()).unwrap(), empty);
        assert_eq!(empty.first_key(), None);
    }

    #[test]
    fn the_encoding_has_the_documented_size() {
        let m = meta();
        let keys = 2 + 2 + 2;
        assert_eq!(FIXED_LEN, 148);
        assert_eq!(
            m.encode().len(),
            FIXED_LEN + 3 * MIN_PAGE_REF_LEN + keys + CHECKSUM_LEN
        );
    }

    #[test]
    fn a_key_filter_adds_its_probe_count_length_and_bits() {
        let m = filtered();
        let bits = m.key_filter.as_ref().unwrap().bits().len();
        assert_eq!(m.encode().len(), meta().encode().len() + 1 + 8 + bits);
        let decoded = SstMeta::decode(&m.encode()).unwrap();
        assert!(decoded.key_filter.unwrap().may_contain(b"k"));
    }

    #[test]
    fn decode_rejects_a_key_filter_out_of_range_or_cut_short() {
        let good = filtered().encode();
        let filter_at = meta().encode().len() - CHECKSUM_LEN;
        let with = |edit: &dyn Fn(&mut Vec<u8>)| {
            let mut bytes = good[..good.len() - CHECKSUM_LEN].to_vec();
            edit(&mut bytes);
            seal(&mut bytes);
            SstMeta::decode(&bytes)
        };
        assert!(with(&|_| {}).is_ok());
        for probes in [0u8, 31, 255] {
            let e = with(&|b| b[filter_at] = probes).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Corruption, "{probes}: {e}");
        }
        // A length past the end, a zero length, the filter's last byte cut off.
        let e = with(&|b| b[filter_at + 1..filter_at + 9].copy_from_slice(&u64::MAX.to_le_bytes()));
        assert_eq!(e.unwrap_err().kind(), ErrorKind::Corruption);
        let e = with(&|b| {
            b[filter_at + 1..filter_at + 9].copy_from_slice(&0u64.to_le_bytes());
            b.truncate(filter_at + 9);
        });
        assert_eq!(e.unwrap_err().kind(), ErrorKind::Corruption);
        let e = with(&|b| {
            b.pop();
        });
        assert_eq!(e.unwrap_err().kind(), ErrorKind::Corruption);
        // The presence bit without a filter behind the page list.
        let mut bytes = meta().encode();
        bytes.truncate(bytes.len() - CHECKSUM_LEN);
        bytes[9] |= HAS_KEY_FILTER;
        seal(&mut bytes);
        assert_eq!(
            SstMeta::decode(&bytes).unwrap_err().kind(),
            ErrorKind::Corruption
        );
    }

    #[test]
    fn accessors_sum_pages_and_name_the_key_range() {
        let m = meta();
        assert_eq!(m.data_bytes(), 1004 + 1005 + 1001);
        assert_eq!(m.first_key(), Some(&b"a"[..]));
        assert_eq!(m.last_key(), Some(&b"m"[..]));
    }

    fn rejected(m: SstMeta) -> alloc::string::String {
        let e = SstMeta::decode(&m.encode()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert!(e.message().starts_with("sst meta: "), "{}", e.message());
        e.message().into()
    }

    #[test]
    fn decode_rejects_inconsistent_metadata() {
        let expiry_presence = "present exactly when ttl_row_count > 0";
        let cases = [
            (
                SstMeta {
                    format_version: 2,
                    ..meta()
                },
                "unsupported format version",
            ),
            (
                SstMeta {
                    min_ts: 21,
                    ..meta()
                },
                "min_ts > max_ts",
            ),
            (
                SstMeta {
                    min_seq: 10,
                    ..meta()
                },
                "min_seq > max_seq",
            ),
            (
                SstMeta {
                    tombstone_count: 6,
                    ..meta()
                },
                "> row_count",
            ),
            (
                SstMeta {
                    ttl_row_count: u64::MAX,
                    ..meta()
                },
                "> row_count",
            ),
            (
                SstMeta {
                    row_features: RowFeatures::V1_BASE,
                    ..meta()
                },
                "lack EXPIRE_AT",
            ),
            (
                SstMeta {
                    min_expire_at: Some(501),
                    ..meta()
                },
                "min_expire_at > max_expire_at",
            ),
            (
                SstMeta {
                    max_expire_at: None,
                    ..meta()
                },
                expiry_presence,
            ),
            (
                SstMeta {
                    expiry_percentiles: None,
                    ..meta()
                },
                expiry_presence,
            ),
            (
                SstMeta {
                    expiry_percentiles: Some([0; 5]),
                    ..no_ttl()
                },
                expiry_presence,
            ),
            (
                SstMeta {
                    min_expire_at: Some(1),
                    ..no_ttl()
                },
                expiry_presence,
            ),
            (
                SstMeta {
                    expiry_percentiles: Some([100, 300, 200, 400, 500]),
                    ..meta()
                },
                "percentiles decrease",
            ),
            (
                SstMeta {
                    expiry_percentiles: Some([99, 200, 300, 400, 500]),
                    ..meta()
                },
                "percentiles decrease or fall below min_expire_at",
            ),
            (
                SstMeta {
                    expiry_percentiles: Some([100, 200, 300, 400, 501]),
                    ..meta()
                },
                "percentiles exceed max_expire_at",
            ),
            (
                SstMeta {
                    row_count: 11,
                    ..meta()
                },
                "do not sum to row_count",
            ),
        ];
        for (m, expected) in cases {
            let message = rejected(m);
            assert!(message.contains(expected), "{message} lacks {expected}");
        }
        let mut m = meta();
        m.pages[1].rows = 0;
        m.pages[2].rows = 6;
        assert!(rejected(m).contains("page 1 has no rows"));
        let mut m = meta();
        m.pages[0].first_key = b"g".to_vec();
        assert!(rejected(m).contains("page 0 has first_key > last_key"));
        let mut m = meta();
        m.pages[2].first_key = b"j".to_vec();
        assert!(rejected(m).contains("page 2 starts before the previous one ends"));
    }

    #[test]
    fn decode_rejects_a_bad_checksum_and_trailing_bytes() {
        let mut bytes = meta().encode();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert_eq!(rejected_bytes(&bytes), "sst meta: checksum mismatch");
        let mut body = meta().encode();
        body.truncate(body.len() - 4);
        body.push(0);
        seal(&mut body);
        assert!(rejected_bytes(&body).contains("trailing"));
    }

    fn rejected_bytes(bytes: &[u8]) -> alloc::string::String {
        let e = SstMeta::decode(bytes).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        e.message().into()
    }

    #[test]
    fn percentiles_pick_the_ceil_rank_element() {
        assert_eq!(expiry_percentiles(&[]), None);
        assert_eq!(expiry_percentiles(&[7]), Some([7; 5]));
        assert_eq!(expiry_percentiles(&[1, 2, 3]), Some([1, 2, 2, 3, 3]));
        assert_eq!(expiry_percentiles(&[1, 2, 3, 4, 5]), Some([1, 2, 3, 4, 5]));
        let ten: Vec<i64> = (0..10).collect();
        assert_eq!(expiry_percentiles(&ten), Some([1, 3, 5, 7, 9]));
        let seven: Vec<i64> = (0..7).collect();
        // ceil(1.4)=2, ceil(2.8)=3, ceil(4.2)=5, ceil(5.6)=6, 7
        assert_eq!(expiry_percentiles(&seven), Some([1, 2, 4, 5, 6]));
    }

    #[test]
    fn percentiles_match_the_definition_for_every_small_length() {
        for n in 1..200usize {
            let values: Vec<i64> = (0..i64::try_from(n).unwrap()).collect();
            let got = expiry_percentiles(&values).unwrap();
            for (k, value) in (1..=5usize).zip(got) {
                // smallest rank r with 5·r >= k·n
                let rank = (1..=n).find(|r| 5 * r >= k * n).unwrap();
                assert_eq!(value, i64::try_from(rank - 1).unwrap(), "n={n} k={k}");
            }
        }
    }

    #[test]
    fn expired_share_counts_percentile_points_weighted_by_ttl_share() {
        let m = meta(); // 5 of 10 rows have a TTL
        assert_eq!(m.expired_share_at(99), 0.0);
        assert!((m.expired_share_at(100) - 0.1).abs() < 1e-12);
        assert!((m.expired_share_at(350) - 0.3).abs() < 1e-12);
        assert!((m.expired_share_at(500) - 0.5).abs() < 1e-12);
        assert!((m.expired_share_at(i64::MAX) - 0.5).abs() < 1e-12);
        assert_eq!(no_ttl().expired_share_at(i64::MAX), 0.0);
        let all = SstMeta {
            tombstone_count: 0,
            ttl_row_count: 10,
            ..meta()
        };
        assert!((all.expired_share_at(500) - 1.0).abs() < 1e-12);
    }
}
