//! [`PointIndex`]: where each key of one SST lies (its data page and row), found by the key's
//! hash. A point read of an SST that has one goes from the hash straight to the key's row: no
//! key filter, no search of the page boundaries, no search of the page, where those searches
//! are most of a read's dependent memory loads (about ten a read among a million keys). An
//! absent key ends at an empty slot, so the index answers "absent" as surely as the rows do.
//!
//! Built in memory from an SST's own rows, never stored: an SST never changes, so its index never
//! goes stale. `read.rs` builds one only where the store shares its pages (every page already in
//! this process's memory: building reads nothing from storage) and only once lookups show the
//! SST is read often ([`SstHandle::point_index`](super::version::SstHandle::point_index)).
//! It costs eight bytes a slot, one and a quarter to two and a half slots a row (a key's older
//! versions and its expiry-index entry are rows too). A build reads every row once, in one go
//! (a few tens of nanoseconds a row natively): an SST of more than [`MAX_INDEXED_ROWS`] rows,
//! far above what the default `sst_target_bytes` writes, is searched as before instead, so no
//! read waits long for one.
//!
//! With the `point-index` feature off (the browser's engine, whose pages come from IndexedDB
//! and whose code size is counted) there is no index and reads search as before.

use alloc::boxed::Box;
use alloc::vec;

use crate::error::Result;
use crate::format::{key_hash, DataPage};

/// The most rows an indexed SST has (see the module docs).
pub(crate) const MAX_INDEXED_ROWS: u64 = 1 << 17;

/// Where the rows of one SST's keys lie, by [`key_hash`]: open addressing, linear probing. A
/// slot is `0` (empty) or, from the high bits down, a fingerprint of the hash (16 bits, never
/// 0), the data page of the key's newest row (16 bits) and where that row begins in the page's
/// rows area (32 bits, as [`DataPage::row_at`] takes it: the read goes to the row's bytes
/// without reading the page's offsets).
#[derive(Debug)]
pub(crate) struct PointIndex {
    slots: Box<[u64]>,
}

/// The fingerprint kept of `hash` (its top 16 bits, never 0: 0 marks an empty slot). The slot is
/// chosen by the low bits. A slot of another key with the same fingerprint costs its reader one
/// key comparison, about once in 32,768 slots probed (15 bits vary).
fn fingerprint(hash: u64) -> u64 {
    (hash >> 48) | 1
}

impl PointIndex {
    /// The index of the rows of `pages` (an SST's data pages in order, `rows` rows in all), or
    /// `None` for an SST of more than [`MAX_INDEXED_ROWS`] rows or 65,536 pages. A key's
    /// versions lie next to each other, newest first: the index points at the first.
    pub(crate) fn build(rows: u64, pages: &[DataPage]) -> Result<Option<PointIndex>> {
        if !Self::may_cover(rows, pages.len()) {
            return Ok(None);
        }
        let Some(capacity) = usize::try_from(rows)
            .ok()
            .and_then(|rows| rows.checked_add(rows / 4 + 1))
            .and_then(usize::checked_next_power_of_two)
        else {
            return Ok(None);
        };
        let mut index = PointIndex {
            slots: vec![0; capacity].into_boxed_slice(),
        };
        let mut previous: Option<&[u8]> = None;
        let mut filled = 0usize;
        for (page_index, page) in pages.iter().enumerate() {
            let Ok(page_bits) = u16::try_from(page_index) else {
                return Ok(None);
            };
            let mut at = 0;
            while at < page.rows_len() {
                let (row, next) = page.row_at(at)?;
                let Ok(at_bits) = u32::try_from(at) else {
                    return Ok(None);
                };
                if previous != Some(row.key) {
                    filled += 1;
                    // More distinct keys than the metadata's row count: the table could fill.
                    if filled > capacity - capacity / 8 {
                        return Ok(None);
                    }
                    let position = u64::from(page_bits) << 32 | u64::from(at_bits);
                    index.insert(key_hash(row.key), position);
                }
                previous = Some(row.key);
                at = next;
            }
        }
        Ok(Some(index))
    }

    /// Whether an SST of `rows` rows in `pages` data pages may have an index: asked before its
    /// pages are gathered, so an SST too large for one gathers none.
    pub(crate) fn may_cover(rows: u64, pages: usize) -> bool {
        rows <= MAX_INDEXED_ROWS && pages <= usize::from(u16::MAX) + 1
    }

    fn insert(&mut self, hash: u64, position: u64) {
        let mask = self.slots.len() - 1;
        let mut at = (hash as usize) & mask;
        while self.slots[at] != 0 {
            at = (at + 1) & mask;
        }
        self.slots[at] = fingerprint(hash) << 48 | position;
    }

    /// The places (data page, offset in its rows area) where the newest row of the key whose
    /// [`key_hash`] is `hash` may begin, in probe order: the caller compares the key at each.
    /// None left means the SST does not hold the key.
    pub(crate) fn candidates(&self, hash: u64) -> impl Iterator<Item = (usize, usize)> + '_ {
        let mask = self.slots.len() - 1;
        let wanted = fingerprint(hash);
        let start = (hash as usize) & mask;
        (0..self.slots.len())
            .map(move |i| self.slots[(start + i) & mask])
            .take_while(|&slot| slot != 0)
            .filter(move |&slot| slot >> 48 == wanted)
            .map(|slot| {
                (
                    (slot >> 32 & 0xffff) as usize,
                    (slot & 0xffff_ffff) as usize,
                )
            })
    }

    /// The bytes the index holds.
    pub(crate) fn bytes(&self) -> usize {
        self.slots.len() * core::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{DataPageBuilder, Row, RowFeatures};
    use alloc::rc::Rc;
    use alloc::vec::Vec;

    fn page(rows: &[(&[u8], u64)]) -> DataPage {
        let mut builder = DataPageBuilder::new(RowFeatures::V1_WITH_EXPIRY);
        for (key, seq) in rows {
            let row = Row {
                key: key.to_vec(),
                seq: *seq,
                ts: 1,
                expire_at: None,
                value: Some(b"v".to_vec()),
            };
            builder.push(&row.as_ref()).unwrap();
        }
        DataPage::decode_trusted(Rc::new(builder.finish())).unwrap()
    }

    /// Where `index` says `key`'s newest row is: (page, row index).
    fn positions(index: &PointIndex, key: &[u8], pages: &[DataPage]) -> Vec<(usize, usize)> {
        index
            .candidates(key_hash(key))
            .filter(|&(p, at)| pages[p].row_at(at).unwrap().0.key == key)
            .map(|(p, at)| {
                let row = (0..pages[p].len())
                    .find(|&r| pages[p].row_at(offset_of(&pages[p], r)).unwrap().1 > at)
                    .unwrap();
                (p, row)
            })
            .collect()
    }

    /// Where row `row` of `page` begins in its rows area.
    fn offset_of(page: &DataPage, row: usize) -> usize {
        (0..row).fold(0, |at, _| page.row_at(at).unwrap().1)
    }

    #[test]
    fn each_key_is_found_at_its_newest_row_and_an_absent_key_nowhere() {
        // "b" has versions on both pages: the index points at the newest, on the first.
        let pages = [
            page(&[(b"a", 1), (b"b", 9), (b"b", 5)]),
            page(&[(b"b", 2), (b"c", 3)]),
        ];
        let index = PointIndex::build(5, &pages).unwrap().unwrap();
        assert_eq!(positions(&index, b"a", &pages), [(0, 0)]);
        assert_eq!(positions(&index, b"b", &pages), [(0, 1)]);
        assert_eq!(positions(&index, b"c", &pages), [(1, 1)]);
        assert!(positions(&index, b"d", &pages).is_empty());
        assert_eq!(index.bytes(), 8 * 8);
    }

    #[test]
    fn every_one_of_many_keys_is_found_once_and_none_of_the_others() {
        let keys: Vec<Vec<u8>> = (0..3000u32).map(|i| i.to_be_bytes().to_vec()).collect();
        let pages: Vec<DataPage> = keys
            .chunks(100)
            .map(|chunk| page(&chunk.iter().map(|k| (&k[..], 1)).collect::<Vec<_>>()))
            .collect();
        let index = PointIndex::build(3000, &pages).unwrap().unwrap();
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(positions(&index, key, &pages), [(i / 100, i % 100)]);
        }
        for i in 3000..6000u32 {
            assert!(positions(&index, &i.to_be_bytes(), &pages).is_empty());
        }
    }

    #[test]
    fn an_sst_of_more_rows_than_an_index_may_cover_builds_none() {
        assert!(PointIndex::may_cover(MAX_INDEXED_ROWS, 1 << 16));
        assert!(!PointIndex::may_cover(MAX_INDEXED_ROWS + 1, 1));
        assert!(!PointIndex::may_cover(1, (1 << 16) + 1));
        let pages = [page(&[(b"a", 1)])];
        assert!(PointIndex::build(MAX_INDEXED_ROWS + 1, &pages)
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_row_count_below_the_keys_there_are_builds_no_index_rather_than_a_full_table() {
        let pages = [page(&[(b"a", 1), (b"b", 1), (b"c", 1), (b"d", 1)])];
        assert!(PointIndex::build(1, &pages).unwrap().is_none());
    }
}
