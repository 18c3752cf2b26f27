//! The page cache: decoded, checksum-verified data pages kept in memory, least recently used
//! evicted first, bounded by bytes. Owned by the engine state; never borrowed across an await.

use alloc::collections::BTreeMap;
use alloc::rc::Rc;

use crate::format::DataPage;
use crate::store::PageId;

/// An LRU cache of decoded data pages.
pub(crate) struct PageCache {
    capacity: usize,
    bytes: usize,
    tick: u64,
    pages: BTreeMap<PageId, (Rc<DataPage>, u64)>,
    by_age: BTreeMap<u64, PageId>,
    hits: u64,
    misses: u64,
}

impl PageCache {
    /// A cache holding at most `capacity` bytes of pages (at least one page is always kept).
    pub(crate) fn new(capacity: usize) -> Self {
        PageCache {
            capacity,
            bytes: 0,
            tick: 0,
            pages: BTreeMap::new(),
            by_age: BTreeMap::new(),
            hits: 0,
            misses: 0,
        }
    }

    /// The page, marking it recently used.
    pub(crate) fn get(&mut self, id: PageId) -> Option<Rc<DataPage>> {
        self.tick += 1;
        let tick = self.tick;
        match self.pages.get_mut(&id) {
            Some((page, age)) => {
                self.by_age.remove(age);
                *age = tick;
                self.by_age.insert(tick, id);
                self.hits += 1;
                Some(page.clone())
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Add a page, evicting the least recently used ones beyond the capacity.
    pub(crate) fn insert(&mut self, id: PageId, page: Rc<DataPage>) {
        self.remove(id);
        self.tick += 1;
        self.bytes += page.byte_len();
        self.pages.insert(id, (page, self.tick));
        self.by_age.insert(self.tick, id);
        while self.bytes > self.capacity && self.pages.len() > 1 {
            let Some((_, oldest)) = self.by_age.pop_first() else {
                break;
            };
            if let Some((page, _)) = self.pages.remove(&oldest) {
                self.bytes -= page.byte_len();
            }
        }
    }

    /// Forget a page (its SST was deleted).
    pub(crate) fn remove(&mut self, id: PageId) {
        if let Some((page, age)) = self.pages.remove(&id) {
            self.by_age.remove(&age);
            self.bytes -= page.byte_len();
        }
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// (hits, misses) since open.
    pub(crate) fn hit_counts(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }
}
