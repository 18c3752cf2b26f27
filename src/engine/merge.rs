//! Ordered iteration over many sources at once: memtable cursors and SST run cursors merged by
//! key, forwards or backwards, yielding every version of each key. Scans and compaction both walk
//! the tree through [`MergeCursor`].
//!
//! Cursors hold `Rc`s of the memtables, SSTs and pages they read, never a `RefCell` borrow, so a
//! merge can await page loads while writes, flushes and compactions go on.

use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::RefCell;
use core::cmp::Ordering;
use core::ops::Bound;

use super::memtable::{MemVersion, Memtable};
use super::page_cache::CacheFill;
use super::state::Inner;
use super::version::SstHandle;
use crate::error::{Error, Result};
use crate::format::DataPage;
use crate::small_sort::insertion_sort_by;

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

/// Walks the rows (every version) of a run of SSTs in key order, page by page.
pub(crate) struct RunCursor {
    ssts: Vec<Rc<SstHandle>>,
    reverse: bool,
    sst: usize,
    page_index: usize,
    /// Forwards: the current row. Backwards: one past the current row.
    row: usize,
    page: Option<DataPage>,
    done: bool,
    fill: CacheFill,
}

impl RunCursor {
    /// A cursor over `ssts` (non-overlapping, in key order; a single L0 SST is a run too) whose
    /// page reads fill the page cache as `fill` says.
    pub(crate) fn new(ssts: Vec<Rc<SstHandle>>, reverse: bool, fill: CacheFill) -> Self {
        RunCursor {
            fill,
            done: ssts.is_empty(),
            ssts,
            reverse,
            sst: 0,
            page_index: 0,
            row: 0,
            page: None,
        }
    }

    /// A cursor over each of `runs`, sought to `from` (see [`RunCursor::seek`]).
    async fn open_all(
        inner: &Inner,
        runs: Vec<Vec<Rc<SstHandle>>>,
        reverse: bool,
        from: Option<&[u8]>,
        fill: CacheFill,
    ) -> Result<Vec<RunCursor>> {
        let mut cursors = Vec::with_capacity(runs.len());
        for run in runs {
            let mut c = RunCursor::new(run, reverse, fill);
            c.seek(inner, from).await?;
            cursors.push(c);
        }
        Ok(cursors)
    }

    async fn load(&mut self, inner: &Inner) -> Result<()> {
        let sst = self
            .ssts
            .get(self.sst)
            .ok_or_else(|| Error::corruption("run cursor past its SSTs"))?;
        self.page = Some(inner.load_page(sst, self.page_index, self.fill).await?);
        Ok(())
    }

    fn page_len(&self) -> usize {
        self.page.as_ref().map_or(0, |p| p.len())
    }

    fn pages_in(&self, sst: usize) -> usize {
        self.ssts.get(sst).map_or(0, |s| s.meta.pages.len())
    }

    /// Position on the first row with key >= `start` (forwards) or the last row with key < `end`
    /// (backwards); `None` means from the very beginning / end.
    pub(crate) async fn seek(&mut self, inner: &Inner, bound: Option<&[u8]>) -> Result<()> {
        if self.done {
            return Ok(());
        }
        if !self.reverse {
            self.sst = bound.map_or(0, |s| self.ssts.partition_point(|t| t.last_key() < s));
            let Some(sst) = self.ssts.get(self.sst) else {
                self.done = true;
                return Ok(());
            };
            self.page_index = bound.map_or(0, |s| sst.page_for(s));
            self.load(inner).await?;
            self.row = match (bound, &self.page) {
                (Some(s), Some(page)) => page.lower_bound(s)?,
                _ => 0,
            };
        } else {
            let after = bound.map_or(self.ssts.len(), |e| {
                self.ssts.partition_point(|t| t.first_key() < e)
            });
            if after == 0 {
                self.done = true;
                return Ok(());
            }
            self.sst = after - 1;
            let pages = self
                .ssts
                .get(self.sst)
                .map_or(&[][..], |s| s.meta.pages.as_slice());
            let after_page = bound.map_or(pages.len(), |e| {
                pages.partition_point(|p| p.first_key.as_slice() < e)
            });
            if after_page == 0 {
                self.done = true;
                return Ok(());
            }
            self.page_index = after_page - 1;
            self.load(inner).await?;
            self.row = match (bound, &self.page) {
                (Some(e), Some(page)) => page.lower_bound(e)?,
                _ => self.page_len(),
            };
        }
        self.normalize(inner).await
    }

    /// Move onto a valid row, crossing pages and SSTs as needed.
    async fn normalize(&mut self, inner: &Inner) -> Result<()> {
        loop {
            if self.done {
                return Ok(());
            }
            if !self.reverse {
                if self.row < self.page_len() {
                    return Ok(());
                }
                self.page_index += 1;
                if self.page_index >= self.pages_in(self.sst) {
                    self.sst += 1;
                    self.page_index = 0;
                    if self.sst >= self.ssts.len() {
                        self.done = true;
                        self.page = None;
                        return Ok(());
                    }
                }
                self.load(inner).await?;
                self.row = 0;
            } else {
                if self.row > 0 {
                    return Ok(());
                }
                if self.page_index > 0 {
                    self.page_index -= 1;
                } else {
                    if self.sst == 0 {
                        self.done = true;
                        self.page = None;
                        return Ok(());
                    }
                    self.sst -= 1;
                    self.page_index = self.pages_in(self.sst).saturating_sub(1);
                }
                self.load(inner).await?;
                self.row = self.page_len();
            }
        }
    }

    /// The page and index of the current row, unless the cursor is done.
    fn at(&self) -> Option<(&DataPage, usize)> {
        let page = self.page.as_ref().filter(|_| !self.done)?;
        let index = if self.reverse {
            self.row.wrapping_sub(1)
        } else {
            self.row
        };
        Some((page, index))
    }

    /// Step to the next row in the cursor's direction.
    pub(crate) async fn advance(&mut self, inner: &Inner) -> Result<()> {
        if self.reverse {
            self.row = self.row.saturating_sub(1);
        } else {
            self.row += 1;
        }
        self.normalize(inner).await
    }
}

/// Merges memtables and SST runs into one ordered stream of keys with their versions.
pub(crate) struct MergeCursor {
    mems: Vec<MemCursor>,
    runs: Vec<RunCursor>,
    reverse: bool,
}

/// Run `i`'s bit in [`MergeCursor::next_key`]'s set of runs at the chosen key (none past the 64th).
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
    pub(crate) async fn open(
        inner: &Inner,
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
            runs: RunCursor::open_all(inner, runs, reverse, from, CacheFill::Keep).await?,
            reverse,
        })
    }

    /// A forward merge of every row of a compaction's input `runs`, every version of each key,
    /// reading pages past the page cache (they are obsolete once the compaction commits).
    pub(crate) async fn over_compaction_inputs(
        inner: &Inner,
        runs: Vec<Vec<Rc<SstHandle>>>,
    ) -> Result<Self> {
        Ok(MergeCursor {
            mems: Vec::new(),
            runs: RunCursor::open_all(inner, runs, false, Some(&[]), CacheFill::Skip).await?,
            reverse: false,
        })
    }

    /// The next key in order and all its versions from every source, newest first.
    pub(crate) async fn next_key(
        &mut self,
        inner: &Inner,
    ) -> Result<Option<(Vec<u8>, Vec<MemVersion>)>> {
        let reverse = self.reverse;
        // Whether `candidate` comes before `best` in the cursor's direction, or ties with it.
        let order = |candidate: &[u8], best: &[u8]| {
            let o = candidate.cmp(best);
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
        // The keys that decide are read without the rest of their rows, each once: bit i of
        // `at_best` says run i's current key is the one chosen (runs past the 64th are compared
        // again below), and the key is copied once, when chosen.
        let mut best: Option<&[u8]> = from_mems.as_deref();
        let mut at_best = 0u64;
        for (i, r) in self.runs.iter().enumerate() {
            if let Some((page, index)) = r.at() {
                let current = page.key(index)?;
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
        let Some(key) = best.map(<[u8]>::to_vec) else {
            return Ok(None);
        };
        let mut versions = Vec::new();
        for m in &mut self.mems {
            if m.peek().is_some_and(|(k, _)| *k == key) {
                if let Some((_, v)) = m.buffer.pop() {
                    versions.push(v);
                }
            }
        }
        for (i, r) in self.runs.iter_mut().enumerate() {
            let mut known = at_best & run_bit(i) != 0;
            if i < 64 && !known {
                continue;
            }
            // A row is decoded whole only once its key matches.
            while let Some((page, index)) = r.at() {
                if !known && page.key(index)? != key.as_slice() {
                    break;
                }
                known = false;
                versions.push(MemVersion::of_row(&page.row(index)?));
                r.advance(inner).await?;
            }
        }
        insertion_sort_by(&mut versions, |a, b| a.seq > b.seq);
        versions.dedup_by_key(|v| v.seq);
        Ok(Some((key, versions)))
    }
}
