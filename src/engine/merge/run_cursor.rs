//! One input of a merge: [`RunCursor`] walks the rows (every version) of a run of SSTs in key
//! order, forwards or backwards, page by page, and keeps its current row's key copied out for the
//! merge's comparisons.

use alloc::rc::Rc;
use alloc::vec::Vec;

use super::page_source::PageSource;
use crate::engine::page_cache::CacheFill;
use crate::engine::version::SstHandle;
use crate::error::{Error, Result};
use crate::format::key_order::key_below;
use crate::format::DataPage;

/// Walks the rows (every version) of a run of SSTs in key order, page by page.
pub(crate) struct RunCursor {
    ssts: Vec<Rc<SstHandle>>,
    reverse: bool,
    sst: usize,
    page_index: usize,
    /// Forwards: the current row. Backwards: one past the current row.
    row: usize,
    page: Option<DataPage>,
    /// The current row's key, copied out once as the cursor arrives on the row: a merge
    /// compares it with the other sources' keys once per key it yields, and decoding it from
    /// the page each time cost several decodes a row.
    pub(super) key: Vec<u8>,
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
            key: Vec::new(),
        }
    }

    /// A cursor over each of `runs`, sought to `from` (see [`RunCursor::seek`]).
    pub(super) async fn open_all<S: PageSource>(
        src: &S,
        runs: Vec<Vec<Rc<SstHandle>>>,
        reverse: bool,
        from: Option<&[u8]>,
        fill: CacheFill,
    ) -> Result<Vec<RunCursor>> {
        let mut cursors = Vec::with_capacity(runs.len());
        for run in runs {
            let mut c = RunCursor::new(run, reverse, fill);
            c.seek(src, from).await?;
            cursors.push(c);
        }
        Ok(cursors)
    }

    async fn load<S: PageSource>(&mut self, src: &S) -> Result<()> {
        let sst = self
            .ssts
            .get(self.sst)
            .ok_or_else(|| Error::corruption("run cursor past its SSTs"))?;
        self.page = Some(src.page(sst, self.page_index, self.fill).await?);
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
    pub(crate) async fn seek<S: PageSource>(
        &mut self,
        src: &S,
        bound: Option<&[u8]>,
    ) -> Result<()> {
        if self.done {
            return Ok(());
        }
        if !self.reverse {
            self.sst = bound.map_or(0, |s| {
                self.ssts.partition_point(|t| key_below(t.last_key(), s))
            });
            let Some(sst) = self.ssts.get(self.sst) else {
                self.done = true;
                return Ok(());
            };
            self.page_index = bound.map_or(0, |s| sst.page_for(s));
            self.load(src).await?;
            self.row = match (bound, &self.page) {
                (Some(s), Some(page)) => page.lower_bound(s)?,
                _ => 0,
            };
        } else {
            let after = bound.map_or(self.ssts.len(), |e| {
                self.ssts.partition_point(|t| key_below(t.first_key(), e))
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
                pages.partition_point(|p| key_below(&p.first_key, e))
            });
            if after_page == 0 {
                self.done = true;
                return Ok(());
            }
            self.page_index = after_page - 1;
            self.load(src).await?;
            self.row = match (bound, &self.page) {
                (Some(e), Some(page)) => page.lower_bound(e)?,
                _ => self.page_len(),
            };
        }
        self.normalize(src).await
    }

    /// Move onto a valid row, crossing pages and SSTs as needed, and copy out its key.
    async fn normalize<S: PageSource>(&mut self, src: &S) -> Result<()> {
        loop {
            if self.done {
                return Ok(());
            }
            if !self.reverse {
                if self.row < self.page_len() {
                    break;
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
                self.load(src).await?;
                self.row = 0;
            } else {
                if self.row > 0 {
                    break;
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
                self.load(src).await?;
                self.row = self.page_len();
            }
        }
        self.copy_key()
    }

    /// Copy the current row's key into `key` (its buffer reused from row to row). Every row the
    /// cursor arrives on has its key read, also the one past the last a scan takes.
    fn copy_key(&mut self) -> Result<()> {
        let index = if self.reverse {
            self.row.wrapping_sub(1)
        } else {
            self.row
        };
        self.key.clear();
        if let Some(page) = &self.page {
            self.key.extend_from_slice(page.key(index)?);
        }
        Ok(())
    }

    /// The current row's key, unless the cursor is done.
    #[inline(always)]
    pub(super) fn key(&self) -> Option<&[u8]> {
        (self.page.is_some() && !self.done).then_some(self.key.as_slice())
    }

    /// The page and index of the current row, unless the cursor is done.
    pub(super) fn at(&self) -> Option<(&DataPage, usize)> {
        let page = self.page.as_ref().filter(|_| !self.done)?;
        let index = if self.reverse {
            self.row.wrapping_sub(1)
        } else {
            self.row
        };
        Some((page, index))
    }

    /// Step to the next row in the cursor's direction.
    pub(crate) async fn advance<S: PageSource>(&mut self, src: &S) -> Result<()> {
        if self.reverse {
            self.row = self.row.saturating_sub(1);
        } else {
            self.row += 1;
        }
        self.normalize(src).await
    }
}
