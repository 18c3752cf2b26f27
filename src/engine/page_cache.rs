//! The page cache: decoded, checksum-verified data pages kept in memory, bounded by bytes.
//! Owned by the engine state; never borrowed across an await.
//!
//! Eviction is CLOCK, the usual stand-in for least-recently-used: a hit only sets the page's
//! `referenced` bit, and when room is needed a hand sweeps round the pages, giving each
//! referenced page a second chance (clearing the bit) and evicting the first that has none. A hit
//! costs one map lookup, and the cache needs one map, not two.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::format::DataPage;
use crate::store::PageId;

/// Whether a page read from the store stays in the page cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CacheFill {
    /// Keep it: reads and scans, whose pages are likely read again.
    Keep,
    /// Do not: a compaction's inputs, which are obsolete once it commits. Keeping them would
    /// evict the pages readers use and add up to the whole cache to the compaction's peak memory.
    /// A page already cached is used, but not marked read, nor counted as a hit or a miss.
    Skip,
}

/// One cached page.
struct Slot {
    page: DataPage,
    /// Read since the hand last passed it.
    referenced: bool,
    /// Which insertion of this id the slot is; a hand entry with another one is stale.
    insertion: u64,
}

/// A CLOCK cache of decoded data pages.
pub(crate) struct PageCache {
    capacity: usize,
    bytes: usize,
    pages: BTreeMap<PageId, Slot>,
    /// The clock's face: (id, insertion) of every page cached, plus stale entries of pages
    /// removed or re-inserted since, which the hand drops as it passes.
    ring: Vec<(PageId, u64)>,
    /// Where the hand points in `ring`. Entries keep their order, so evicting one shifts the rest:
    /// about 2,000 entries of 24 bytes for the web build's 32 MiB of 16 KiB pages.
    hand: usize,
    /// How many entries of `ring` are stale; cleared out in one pass when they pile up.
    stale: usize,
    insertions: u64,
    hits: u64,
    misses: u64,
}

impl PageCache {
    /// A cache holding at most `capacity` bytes of pages (at least one page is always kept).
    pub(crate) fn new(capacity: usize) -> Self {
        PageCache {
            capacity,
            bytes: 0,
            pages: BTreeMap::new(),
            ring: Vec::new(),
            hand: 0,
            stale: 0,
            insertions: 0,
            hits: 0,
            misses: 0,
        }
    }

    /// The page, marking it recently used.
    pub(crate) fn get(&mut self, id: PageId) -> Option<DataPage> {
        match self.pages.get_mut(&id) {
            Some(slot) => {
                slot.referenced = true;
                self.hits += 1;
                Some(slot.page.clone())
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// The page, if cached, without marking it read or counting a hit or a miss: for reads
    /// that keep nothing of what they read.
    pub(crate) fn peek(&self, id: PageId) -> Option<DataPage> {
        self.pages.get(&id).map(|slot| slot.page.clone())
    }

    /// Add a page, evicting pages beyond the capacity.
    pub(crate) fn insert(&mut self, id: PageId, page: DataPage) {
        self.remove(id);
        self.insertions += 1;
        self.bytes += page.byte_len();
        self.pages.insert(
            id,
            Slot {
                page,
                referenced: false,
                insertion: self.insertions,
            },
        );
        // A new page goes in just behind the hand: the last the next sweep reaches.
        self.hand = self.hand.min(self.ring.len());
        self.ring.insert(self.hand, (id, self.insertions));
        self.hand += 1;
        while self.bytes > self.capacity && self.pages.len() > 1 {
            if self.hand >= self.ring.len() {
                self.hand = 0;
            }
            let Some(&(candidate, insertion)) = self.ring.get(self.hand) else {
                break;
            };
            let Some(slot) = self
                .pages
                .get_mut(&candidate)
                .filter(|slot| slot.insertion == insertion)
            else {
                self.ring.remove(self.hand); // stale
                self.stale = self.stale.saturating_sub(1);
                continue;
            };
            // The page just added is never the one to go (another is there: `len() > 1`).
            if slot.referenced || candidate == id {
                slot.referenced = false;
                self.hand += 1;
            } else if let Some(evicted) = self.pages.remove(&candidate) {
                self.bytes -= evicted.page.byte_len();
                self.ring.remove(self.hand);
            }
        }
    }

    /// Forget a page (its SST was deleted, or it is being replaced).
    pub(crate) fn remove(&mut self, id: PageId) {
        if let Some(slot) = self.pages.remove(&id) {
            self.bytes -= slot.page.byte_len();
            // Its ring entry is stale now. Clear them out in one pass before they are many: the
            // hand removing them one by one would shift the ring each time.
            self.stale += 1;
            if self.stale > self.pages.len() / 4 + 16 {
                self.drop_stale();
            }
        }
    }

    /// Remove every stale entry from the ring in one pass, the hand staying on the same page.
    fn drop_stale(&mut self) {
        let pages = &self.pages;
        let live = |(id, insertion): &(PageId, u64)| {
            pages
                .get(id)
                .is_some_and(|slot| slot.insertion == *insertion)
        };
        let before_hand = self.ring.iter().take(self.hand).filter(|e| live(e)).count();
        self.ring.retain(live);
        self.hand = before_hand;
        self.stale = 0;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{DataPageBuilder, RowFeatures};
    use alloc::vec::Vec;

    fn page() -> DataPage {
        let builder = DataPageBuilder::new(RowFeatures::COMPACT_BASE);
        DataPage::decode(builder.finish()).unwrap()
    }

    fn id(n: u32) -> PageId {
        PageId::sst_data(1, n)
    }

    /// A cache with room for three pages, pages 0 to `added - 1` added in order (and the size
    /// of one page).
    fn three_page_cache(added: u32) -> (PageCache, usize) {
        let one = page().byte_len();
        let mut cache = PageCache::new(3 * one);
        for n in 0..added {
            cache.insert(id(n), page());
        }
        (cache, one)
    }

    #[test]
    fn a_page_read_since_the_hand_last_passed_survives_the_next_eviction() {
        let (mut cache, one) = three_page_cache(3);
        assert!(cache.get(id(0)).is_some());
        cache.insert(id(3), page());
        // Page 0 was read, so page 1 (the next in line, never read) went instead.
        assert!(cache.get(id(0)).is_some());
        assert!(cache.get(id(1)).is_none());
        assert!(cache.get(id(2)).is_some());
        assert!(cache.get(id(3)).is_some());
        assert_eq!(cache.bytes(), 3 * one);
    }

    #[test]
    fn unread_pages_go_oldest_first() {
        let (cache, _) = three_page_cache(6);
        // Nothing was read: the three added last are the three kept.
        let kept: Vec<u32> = (0..6)
            .filter(|&n| cache.pages.contains_key(&id(n)))
            .collect();
        assert_eq!(kept, [3, 4, 5]);
    }

    #[test]
    fn a_peek_neither_marks_a_page_read_nor_counts() {
        let (mut cache, _) = three_page_cache(3);
        assert!(cache.peek(id(0)).is_some());
        assert!(cache.peek(id(9)).is_none());
        assert_eq!(cache.hit_counts(), (0, 0));
        cache.insert(id(3), page());
        // Page 0 was only peeked at: it went first, as if never read.
        assert!(cache.peek(id(0)).is_none());
        assert!(cache.peek(id(1)).is_some());
    }

    #[test]
    fn removed_and_reinserted_pages_leave_no_growing_trail() {
        let one = page().byte_len();
        let mut cache = PageCache::new(4 * one);
        for round in 0..10_000u32 {
            cache.insert(id(round % 2), page());
            cache.remove(id(round % 2));
        }
        assert_eq!(cache.bytes(), 0);
        assert!(
            cache.ring.len() <= 16 + 1,
            "the ring holds {}",
            cache.ring.len()
        );
    }

    #[test]
    fn at_least_one_page_is_kept_even_over_the_capacity() {
        let mut cache = PageCache::new(0);
        cache.insert(id(0), page());
        assert!(cache.get(id(0)).is_some());
        cache.insert(id(1), page());
        assert!(cache.get(id(0)).is_none());
        assert!(cache.get(id(1)).is_some());
    }
}
