//! Where a merge reads its SSTs' data pages ([`PageSource`]): the tree (`Inner`: pages shared
//! by the store, the page cache, the store), or a compaction job's own copies of its inputs
//! (`compaction/job.rs`).

use crate::engine::page_cache::CacheFill;
use crate::engine::state::Inner;
use crate::engine::version::SstHandle;
use crate::error::Result;
use crate::format::DataPage;

/// Where a merge's run cursors read their SSTs' data pages.
pub(crate) trait PageSource {
    /// Data page `index` of `sst`; `fill` says whether a page read from the store stays cached.
    async fn page(&self, sst: &SstHandle, index: usize, fill: CacheFill) -> Result<DataPage>;
    /// Give the host a turn between the slices of a long merge (see `WorkSlices`).
    async fn turn(&self);
}

/// The tree's pages: shared by the store, from the page cache, or read from the store.
impl PageSource for Inner {
    async fn page(&self, sst: &SstHandle, index: usize, fill: CacheFill) -> Result<DataPage> {
        self.load_page(sst, index, fill).await
    }

    async fn turn(&self) {
        self.store.yield_now().await;
    }
}
