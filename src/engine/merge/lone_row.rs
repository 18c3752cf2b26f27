//! [`LoneRow`]: a key's one version handed over by the merge where it is, a row of a page, so a
//! compaction can write it out without copying it out first (and copy its bytes as they are).
//!
//! Lone rows are held only with the core's `compaction-copies-rows` feature (on by default, and
//! in the server entries' engine). Without it (the browser's engine, where it would cost about
//! 1 KB of gzipped wasm) the type has no values, so the merge copies out every version and the
//! code that handles a lone row compiles to nothing.

use crate::engine::memtable::MemVersion;
use crate::error::Result;
use crate::format::{DataPage, RowFeatures, RowRef};

/// Row `index` of a page, the one version of its key (the page is shared: it outlives the
/// cursor's moving on).
#[cfg(feature = "compaction-copies-rows")]
pub(crate) struct LoneRow {
    page: DataPage,
    index: usize,
}

/// No lone rows without the `compaction-copies-rows` feature: every version is copied out.
#[cfg(not(feature = "compaction-copies-rows"))]
pub(crate) enum LoneRow {}

#[cfg(feature = "compaction-copies-rows")]
impl LoneRow {
    /// Row `index` of `page`, held where it is.
    pub(super) fn hold(page: &DataPage, index: usize) -> Option<LoneRow> {
        Some(LoneRow {
            page: page.clone(),
            index,
        })
    }

    /// The row, and its bytes as its page encodes them.
    pub(crate) fn row_and_bytes(&self) -> Result<(RowRef<'_>, &[u8])> {
        self.page.row_and_bytes(self.index)
    }

    /// How its page encodes rows.
    pub(crate) fn features(&self) -> RowFeatures {
        self.page.row_features()
    }

    /// The row, copied out.
    pub(super) fn version(&self) -> Result<MemVersion> {
        Ok(MemVersion::of_row(&self.page.row(self.index)?))
    }
}

#[cfg(not(feature = "compaction-copies-rows"))]
impl LoneRow {
    pub(super) fn hold(_: &DataPage, _: usize) -> Option<LoneRow> {
        None
    }

    pub(crate) fn row_and_bytes(&self) -> Result<(RowRef<'_>, &[u8])> {
        match *self {}
    }

    pub(crate) fn features(&self) -> RowFeatures {
        match *self {}
    }

    pub(super) fn version(&self) -> Result<MemVersion> {
        match *self {}
    }
}
