//! Ordered iteration over many sources at once: memtable cursors and SST run cursors merged by
//! key, forwards or backwards, yielding every version of each key. Scans and compaction both walk
//! the tree through [`MergeCursor`].
//!
//! Cursors hold `Rc`s of the memtables, SSTs and pages they read, never a `RefCell` borrow, so a
//! merge can await page loads while writes, flushes and compactions go on. Their pages come from
//! a [`PageSource`]: the tree (`Inner`), or a compaction job's own copies of its inputs
//! (`compaction/job.rs`), which it merges on a thread of its own.

use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::RefCell;
use core::cmp::Ordering;
use core::ops::Bound;

use super::memtable::{MemVersion, Memtable};
use super::page_cache::CacheFill;
use super::version::SstHandle;
use crate::error::Result;
use crate::format::key_order::{compare_keys, keys_equal};
use crate::small_sort::insertion_sort_by;

mod lone_row;
mod page_source;
mod run_cursor;
pub(crate) use lone_row::LoneRow;
pub(crate) use page_source::PageSource;
use run_cursor::RunCursor;

/// How many keys a memtable cursor copies out per refill.
const MEM_CHUNK: usize = 64;

/// Walks one memtable's keys in order, yielding each key's newest version at `read_seq`.
struct MemCursor {
    table: Rc<RefCell<Memtable>>,
    /// The next keys and versions copied out, the next one last (so it pops off the end).
    buffer: Vec<(Vec<u8>, MemVersion)>,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    reverse: bool,
    read_seq: u64,
    exhausted: bool,
}

fn as_ref_bound(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl MemCursor {
    fn peek(&mut self) -> Option<&(Vec<u8>, MemVersion)> {
        if self.buffer.is_empty() && !self.exhausted {
            let mut chunk = self.table.borrow().visible_range(
                as_ref_bound(&self.lower),
                as_ref_bound(&self.upper),
                self.read_seq,
                self.reverse,
                MEM_CHUNK,
            );
            if chunk.len() < MEM_CHUNK {
                self.exhausted = true;
            }
            if let Some((last, _)) = chunk.last() {
                if self.reverse {
                    self.upper = Bound::Excluded(last.clone());
                } else {
                    self.lower = Bound::Excluded(last.clone());
                }
            }
            chunk.reverse();
            self.buffer = chunk;
        }
        self.buffer.last()
    }
}

/// Merges memtables and SST runs into one ordered stream of keys with their versions.
pub(crate) struct MergeCursor {
    mems: Vec<MemCursor>,
    runs: Vec<RunCursor>,
    reverse: bool,
    /// The key of the row [`next`](Self::next) takes from a run alone (a buffer it reuses).
    taken: Vec<u8>,
}

/// A key of a merge and its versions.
pub(crate) enum Next {
    /// The key's one version, a row of a page (see [`LoneRow`]: none without its feature).
    #[cfg_attr(not(feature = "compaction-copies-rows"), allow(dead_code))]
    Lone(LoneRow),
    /// The key and its versions, newest first.
    Versions(Vec<u8>, Vec<MemVersion>),
}

/// Run `i`'s bit in [`MergeCursor::next`]'s set of runs at the chosen key (none past the 64th).
fn run_bit(i: usize) -> u64 {
    if i < 64 {
        1 << i
    } else {
        0
    }
}

impl MergeCursor {
    /// A merge over `memtables` (each yielding its newest version at `read_seq` per key) and
    /// `runs`, restricted to `[lower, upper)`, forwards or backwards.
    pub(crate) async fn open<S: PageSource>(
        src: &S,
        memtables: Vec<Rc<RefCell<Memtable>>>,
        runs: Vec<Vec<Rc<SstHandle>>>,
        lower: &[u8],
        upper: Option<&[u8]>,
        reverse: bool,
        read_seq: u64,
    ) -> Result<Self> {
        let mems = memtables
            .into_iter()
            .map(|table| MemCursor {
                table,
                buffer: Vec::new(),
                lower: Bound::Included(lower.to_vec()),
                upper: upper.map_or(Bound::Unbounded, |u| Bound::Excluded(u.to_vec())),
                reverse,
                read_seq,
                exhausted: false,
            })
            .collect();
        let from = if reverse { upper } else { Some(lower) };
        Ok(MergeCursor {
            mems,
            runs: RunCursor::open_all(src, runs, reverse, from, CacheFill::Keep).await?,
            reverse,
            taken: Vec::new(),
        })
    }

    /// A forward merge of every row of a compaction's input `runs`, every version of each key,
    /// reading pages past the page cache (they are obsolete once the compaction commits).
    pub(crate) async fn over_compaction_inputs<S: PageSource>(
        src: &S,
        runs: Vec<Vec<Rc<SstHandle>>>,
    ) -> Result<Self> {
        Ok(MergeCursor {
            mems: Vec::new(),
            runs: RunCursor::open_all(src, runs, false, Some(&[]), CacheFill::Skip).await?,
            reverse: false,
            taken: Vec::new(),
        })
    }

    /// The next key in order: its one version as a row of a page, read where it is (most keys of
    /// a compaction), or all its versions from every source, newest first, copied out.
    pub(crate) async fn next<S: PageSource>(&mut self, src: &S) -> Result<Option<Next>> {
        let reverse = self.reverse;
        // Whether `candidate` comes before `best` in the cursor's direction, or ties with it.
        let order = |candidate: &[u8], best: &[u8]| {
            let o = compare_keys(candidate, best);
            if reverse {
                o.reverse()
            } else {
                o
            }
        };
        let mut from_mems: Option<Vec<u8>> = None;
        for m in &mut self.mems {
            if let Some((k, _)) = m.peek() {
                if from_mems.as_deref().is_none_or(|b| order(k, b).is_lt()) {
                    from_mems = Some(k.clone());
                }
            }
        }
        // The runs' current keys (each copied out once, as its cursor arrived) decide: bit i of
        // `at_best` says run i's current key is the one chosen (runs past the 64th are compared
        // again below). The key is copied into `taken`, whose buffer a lone row's key reuses.
        let mut best: Option<&[u8]> = from_mems.as_deref();
        let mut at_best = 0u64;
        for (i, r) in self.runs.iter().enumerate() {
            if let Some(current) = r.key() {
                match best.map(|b| order(current, b)) {
                    None | Some(Ordering::Less) => {
                        best = Some(current);
                        at_best = run_bit(i);
                    }
                    Some(Ordering::Equal) => at_best |= run_bit(i),
                    Some(Ordering::Greater) => {}
                }
            }
        }
        let Some(best) = best else {
            return Ok(None);
        };
        self.taken.clear();
        self.taken.extend_from_slice(best);
        let key = self.taken.as_slice();
        let mut versions = Vec::new();
        for m in &mut self.mems {
            if m.peek().is_some_and(|(k, _)| keys_equal(k, key)) {
                if let Some((_, v)) = m.buffer.pop() {
                    versions.push(v);
                }
            }
        }
        // The first row found stays in its page until a second version turns up (where lone rows
        // are held at all: see `LoneRow`).
        let mut first: Option<LoneRow> = None;
        for (i, r) in self.runs.iter_mut().enumerate() {
            let mut known = at_best & run_bit(i) != 0;
            if i < 64 && !known {
                continue;
            }
            // A row is decoded whole only once its key matches, and a row held as lone not here.
            while let Some((page, index)) = r.at() {
                if !known && !keys_equal(&r.key, key) {
                    break;
                }
                known = false;
                if versions.is_empty() && first.is_none() {
                    first = LoneRow::hold(page, index);
                } else if let Some(lone) = first.take() {
                    versions.push(lone.version()?);
                }
                if first.is_none() {
                    versions.push(MemVersion::of_row(&page.row(index)?));
                }
                r.advance(src).await?;
            }
        }
        if let Some(lone) = first {
            return Ok(Some(Next::Lone(lone)));
        }
        insertion_sort_by(&mut versions, |a, b| a.seq > b.seq);
        versions.dedup_by_key(|v| v.seq);
        // The key moves out with its buffer (the next key's copy makes a new one).
        Ok(Some(Next::Versions(
            core::mem::take(&mut self.taken),
            versions,
        )))
    }
}
