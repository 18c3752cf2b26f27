//! An open reads a metadata page that fails its check (missing, damaged, or naming another SST)
//! a second time, and decodes it again, before it reports `Corruption`: a page that reads right
//! the second time opens the database with every key; one that reads wrong again fails the open
//! with the error of the second reading. (In WebKit an open once decoded a page whose bytes were
//! right to another SST's id, and the same bytes decoded again gave the right one.)

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use common::{run, small, T0};
use ttlkv::store::{MemoryStore, PageId, PageStore, StoreFuture};
use ttlkv::{Db, ErrorKind, FakeClock};

/// What a [`Misreading`] store hands back instead of one page's bytes.
#[derive(Clone)]
enum Wrong {
    /// Another page's bytes (another SST's metadata: a valid page, its checksum right).
    Bytes(Vec<u8>),
    /// Nothing, as if the page were missing.
    Missing,
}

/// A memory store that answers the first `wrong_reads` reads of `page` with `wrong`, and counts
/// every read of it.
#[derive(Clone)]
struct Misreading {
    inner: MemoryStore,
    page: PageId,
    wrong: Wrong,
    wrong_reads: u32,
    reads: Rc<Cell<u32>>,
    batches: Rc<RefCell<Vec<usize>>>,
}

impl PageStore for Misreading {
    forward_to_inner!(read_manifest, get_page, list_pages, commit);
    fn get_pages(&self, ids: Vec<PageId>) -> StoreFuture<'_, Vec<Option<Vec<u8>>>> {
        let this = self.clone();
        Box::pin(async move {
            this.batches.borrow_mut().push(ids.len());
            let mut pages = this.inner.get_pages(ids.clone()).await?;
            for (id, bytes) in ids.iter().zip(pages.iter_mut()) {
                if *id != this.page {
                    continue;
                }
                let read = this.reads.get() + 1;
                this.reads.set(read);
                if read <= this.wrong_reads {
                    *bytes = match &this.wrong {
                        Wrong::Bytes(b) => Some(b.clone()),
                        Wrong::Missing => None,
                    };
                }
            }
            Ok(pages)
        })
    }
}

const KEYS: u32 = 200;

/// A closed database with at least two SSTs, and the ids of two of them.
fn two_ssts() -> (MemoryStore, FakeClock, u64, u64) {
    let store = MemoryStore::new();
    let clock = FakeClock::new(T0);
    let db = run(Db::open(store.clone(), clock.clone(), small())).expect("open");
    for half in [0..KEYS / 2, KEYS / 2..KEYS] {
        for i in half {
            run(db.put(format!("key{i:04}").as_bytes(), b"value")).expect("put");
        }
        run(db.flush()).expect("flush");
    }
    let ids: Vec<u64> = db
        .stats()
        .levels
        .iter()
        .flat_map(|l| l.ssts.iter().map(|s| s.id))
        .collect();
    assert!(ids.len() >= 2, "two SSTs at least: {ids:?}");
    run(db.close()).expect("close");
    (store, clock, ids[0], ids[1])
}

/// Open through a store that reads SST `read`'s metadata page wrong `wrong_reads` times; the
/// open's outcome and the reads of that page.
fn open_misreading(wrong: Wrong, wrong_reads: u32) -> (ttlkv::Result<Db>, u32, Vec<usize>) {
    let (store, clock, read, other) = two_ssts();
    let wrong = match wrong {
        Wrong::Bytes(_) => Wrong::Bytes(
            run(store.get_page(PageId::sst_meta(other)))
                .expect("read")
                .expect("the other SST's metadata page"),
        ),
        missing => missing,
    };
    let misreading = Misreading {
        inner: store,
        page: PageId::sst_meta(read),
        wrong,
        wrong_reads,
        reads: Rc::default(),
        batches: Rc::default(),
    };
    let opened = run(Db::open(misreading.clone(), clock, small()));
    let batches = misreading.batches.borrow().clone();
    (opened, misreading.reads.get(), batches)
}

fn every_key_reads_back(db: &Db) {
    for i in 0..KEYS {
        assert_eq!(
            run(db.get(format!("key{i:04}").as_bytes())).expect("get"),
            Some(b"value".to_vec()),
            "key{i:04}"
        );
    }
}

#[test]
fn a_metadata_page_naming_another_sst_once_is_read_again_and_the_open_succeeds() {
    let (opened, reads, batches) = open_misreading(Wrong::Bytes(Vec::new()), 1);
    let db = opened.expect("the second reading is right");
    assert_eq!(reads, 2);
    // The page read again alone, in one more round trip after the open's reads of every page.
    assert_eq!(batches.last(), Some(&1));
    every_key_reads_back(&db);
}

#[test]
fn a_metadata_page_missing_once_is_read_again_and_the_open_succeeds() {
    let (opened, reads, _) = open_misreading(Wrong::Missing, 1);
    let db = opened.expect("the second reading is right");
    assert_eq!(reads, 2);
    every_key_reads_back(&db);
}

#[test]
fn a_metadata_page_with_a_flipped_bit_once_is_read_again_and_the_open_succeeds() {
    let (store, clock, read, _) = two_ssts();
    let mut damaged = run(store.get_page(PageId::sst_meta(read)))
        .expect("read")
        .expect("its metadata page");
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x10;
    let misreading = Misreading {
        inner: store,
        page: PageId::sst_meta(read),
        wrong: Wrong::Bytes(damaged),
        wrong_reads: 1,
        reads: Rc::default(),
        batches: Rc::default(),
    };
    let db =
        run(Db::open(misreading.clone(), clock, small())).expect("the second reading is right");
    assert_eq!(misreading.reads.get(), 2);
    every_key_reads_back(&db);
}

#[test]
fn a_metadata_page_that_names_another_sst_every_time_fails_the_open_with_corruption() {
    let (opened, reads, _) = open_misreading(Wrong::Bytes(Vec::new()), u32::MAX);
    let Err(e) = opened else {
        panic!("the open succeeded");
    };
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(e.to_string().contains("metadata names another SST"), "{e}");
    // Read twice, no more: the second reading decides.
    assert_eq!(reads, 2);
}

#[test]
fn a_metadata_page_missing_every_time_fails_the_open_with_corruption() {
    let (opened, reads, _) = open_misreading(Wrong::Missing, u32::MAX);
    let Err(e) = opened else {
        panic!("the open succeeded");
    };
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(e.to_string().contains("missing"), "{e}");
    assert_eq!(reads, 2);
}
