//! Where a merge reads its SSTs' data pages ([`PageSource`]): the tree (`Inner`: pages shared
//! by the store, the page cache, the store), or a compaction job's own copies of its inputs
//! (`compaction/job.rs`).

use core::future::Future;

use crate::engine::page_cache::CacheFill;
use crate::engine::state::Inner;
use crate::engine::version::SstHandle;
use crate::error::Result;
use crate::format::DataPage;

/// Where a merge's run cursors read their SSTs' data pages. (The methods give their sources'
/// own futures, not `async fn` wrappers around them: a wrapper's state machine is code the
/// browser's engine would carry for nothing.)
pub(crate) trait PageSource {
    /// Data page `index` of `sst`; `fill` says whether a page read from the store stays cached.
    fn page<'a>(
        &'a self,
        sst: &'a SstHandle,
        index: usize,
        fill: CacheFill,
    ) -> impl Future<Output = Result<DataPage>> + 'a;
}

/// The tree's pages: shared by the store, from the page cache, or read from the store.
impl PageSource for Inner {
    #[inline]
    fn page<'a>(
        &'a self,
        sst: &'a SstHandle,
        index: usize,
        fill: CacheFill,
    ) -> impl Future<Output = Result<DataPage>> + 'a {
        self.load_page(sst, index, fill)
    }
}
