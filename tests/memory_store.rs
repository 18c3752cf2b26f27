//! `MemoryStore` beyond the conformance suite: its quota, its latency (operations in flight
//! interleave like real I/O), the counters tests read, and clones sharing one "disk".

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use futures::executor::block_on;
use proptest::prelude::*;
use ttlkv::store::{Commit, ManifestRecord, MemoryStore, PageId, PageKind, PageStore};
use ttlkv::ErrorKind;

fn manifest(version: u64, len: usize) -> ManifestRecord {
    ManifestRecord {
        version,
        bytes: vec![b'm'; len],
    }
}

/// A commit from manifest version `from` to `from + 1` (a `len`-byte manifest) with `puts`.
fn commit(from: u64, manifest_len: usize, puts: Vec<(PageId, Vec<u8>)>) -> Commit {
    Commit {
        expected_manifest_version: from,
        manifest: Some(manifest(from + 1, manifest_len)),
        puts,
        deletes: vec![],
    }
}

fn pages_only(expected: u64, puts: Vec<(PageId, Vec<u8>)>, deletes: Vec<PageId>) -> Commit {
    Commit {
        expected_manifest_version: expected,
        manifest: None,
        puts,
        deletes,
    }
}

/// The sum of page lengths plus manifest bytes, read through the trait.
fn bytes_read_back(store: &MemoryStore) -> usize {
    let mut total = block_on(store.read_manifest())
        .unwrap()
        .map_or(0, |m| m.bytes.len());
    for kind in PageKind::ALL {
        for id in block_on(store.list_pages(kind)).unwrap() {
            total += block_on(store.get_page(id)).unwrap().unwrap().len();
        }
    }
    total
}

struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Polls `future` to completion by hand; returns its output, how many polls returned `Pending`,
/// and how many times it woke its waker.
fn poll_counting<T>(mut future: Pin<Box<dyn Future<Output = T> + '_>>) -> (T, usize, usize) {
    let counter = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let waker = Waker::from(Arc::clone(&counter));
    let mut cx = Context::from_waker(&waker);
    let mut pending = 0;
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(out) => return (out, pending, counter.0.load(Ordering::SeqCst)),
            Poll::Pending => pending += 1,
        }
        assert!(pending < 1000, "the future never completes");
    }
}

#[test]
fn quota_rejects_a_commit_that_would_exceed_it_and_writes_nothing() {
    let store = MemoryStore::with_quota(100);
    block_on(store.commit(commit(0, 10, vec![(PageId::wal(1), vec![1; 60])]))).unwrap();
    assert_eq!(store.stored_bytes(), 70);

    let too_much = commit(1, 10, vec![(PageId::wal(2), vec![2; 31])]);
    let e = block_on(store.commit(too_much)).expect_err("71 + 31 bytes exceed 100");
    assert_eq!(e.kind(), ErrorKind::QuotaExceeded, "{e}");
    assert_eq!(store.stored_bytes(), 70);
    assert_eq!(store.page_count(), 1);
    assert_eq!(store.commits(), 1, "a rejected commit is not counted");
    assert_eq!(
        block_on(store.read_manifest()).unwrap(),
        Some(manifest(1, 10))
    );
}

#[test]
fn a_commit_that_fills_the_quota_exactly_passes() {
    let store = MemoryStore::with_quota(100);
    block_on(store.commit(commit(0, 10, vec![(PageId::wal(1), vec![1; 90])]))).unwrap();
    assert_eq!(store.stored_bytes(), 100);
    let one_more = pages_only(1, vec![(PageId::wal(2), vec![0])], vec![]);
    let e = block_on(store.commit(one_more)).expect_err("101 bytes exceed 100");
    assert_eq!(e.kind(), ErrorKind::QuotaExceeded);
}

#[test]
fn quota_counts_manifest_bytes() {
    let store = MemoryStore::with_quota(10);
    let e = block_on(store.commit(commit(0, 11, vec![]))).expect_err("an 11-byte manifest");
    assert_eq!(e.kind(), ErrorKind::QuotaExceeded);
    assert_eq!(block_on(store.read_manifest()).unwrap(), None);
    block_on(store.commit(commit(0, 10, vec![]))).expect("a 10-byte manifest fits");
}

#[test]
fn reads_keep_working_when_the_quota_is_reached() {
    let store = MemoryStore::with_quota(50);
    let page = PageId::sst_data(1, 0);
    block_on(store.commit(commit(0, 0, vec![(page, vec![7; 50])]))).unwrap();
    let full = pages_only(1, vec![(PageId::wal(1), vec![1])], vec![]);
    assert!(block_on(store.commit(full)).is_err());

    assert_eq!(block_on(store.get_page(page)).unwrap(), Some(vec![7; 50]));
    assert_eq!(
        block_on(store.list_pages(PageKind::SstData)).unwrap(),
        [page]
    );
    assert_eq!(block_on(store.read_manifest()).unwrap().unwrap().version, 1);
}

#[test]
fn commits_that_free_space_pass_at_the_quota() {
    let store = MemoryStore::with_quota(100);
    let (a, b) = (PageId::sst_data(1, 0), PageId::sst_data(1, 1));
    block_on(store.commit(commit(0, 0, vec![(a, vec![1; 60]), (b, vec![2; 40])]))).unwrap();

    // Replace 60 bytes by 20 and add 30 in the same commit: 90 bytes.
    let swap = pages_only(
        1,
        vec![(a, vec![3; 20]), (PageId::wal(1), vec![4; 30])],
        vec![],
    );
    block_on(store.commit(swap)).expect("a commit that ends within the quota passes");
    assert_eq!(store.stored_bytes(), 90);

    // Delete 40 and add 50: 100 bytes, exactly the quota.
    let trade = pages_only(1, vec![(PageId::wal(2), vec![5; 50])], vec![b]);
    block_on(store.commit(trade)).expect("deleting makes room in the same commit");
    assert_eq!(store.stored_bytes(), 100);

    let delete = pages_only(1, vec![], vec![a, PageId::wal(1)]);
    block_on(store.commit(delete)).expect("a delete always passes");
    assert_eq!(store.stored_bytes(), 50);
}

#[test]
fn a_store_over_a_lowered_quota_can_still_shrink_but_not_grow() {
    let store = MemoryStore::new();
    let (a, b) = (PageId::wal(1), PageId::wal(2));
    block_on(store.commit(commit(0, 0, vec![(a, vec![1; 60]), (b, vec![2; 40])]))).unwrap();
    store.set_quota(Some(50));

    let grow = pages_only(1, vec![(a, vec![1; 61])], vec![]);
    let e = block_on(store.commit(grow)).expect_err("growing past the quota");
    assert_eq!(e.kind(), ErrorKind::QuotaExceeded);

    let same = pages_only(1, vec![(a, vec![9; 60])], vec![]);
    block_on(store.commit(same)).expect("a commit that does not grow the store passes");
    let shrink = pages_only(1, vec![], vec![b]);
    block_on(store.commit(shrink)).expect("shrinking, even if still over the quota, passes");
    assert_eq!(store.stored_bytes(), 60);

    store.set_quota(None);
    let grow = pages_only(1, vec![(b, vec![2; 1000])], vec![]);
    block_on(store.commit(grow)).expect("no quota, no limit");
}

#[test]
fn latency_keeps_every_operation_pending_for_the_given_polls_and_wakes_it() {
    let store = MemoryStore::new().with_latency(3);
    let (result, pending, wakes) = poll_counting(store.commit(commit(0, 4, vec![])));
    result.unwrap();
    assert_eq!((pending, wakes), (3, 3));

    let (_, pending, wakes) = poll_counting(store.read_manifest());
    assert_eq!((pending, wakes), (3, 3));
    let (_, pending, wakes) = poll_counting(store.get_page(PageId::wal(1)));
    assert_eq!((pending, wakes), (3, 3));
    let (_, pending, wakes) = poll_counting(store.list_pages(PageKind::Wal));
    assert_eq!((pending, wakes), (3, 3));

    store.set_latency(0);
    let (result, pending, wakes) = poll_counting(store.read_manifest());
    assert_eq!(result.unwrap(), Some(manifest(1, 4)));
    assert_eq!(
        (pending, wakes),
        (0, 0),
        "no latency completes on the first poll"
    );
}

#[test]
fn a_commit_takes_effect_when_it_completes_and_a_dropped_one_never() {
    let store = MemoryStore::new().with_latency(2);
    let counter = Arc::new(CountingWaker(AtomicUsize::new(0)));
    let waker = Waker::from(counter);
    let mut cx = Context::from_waker(&waker);

    let mut landing = store.commit(commit(0, 0, vec![(PageId::wal(1), vec![1])]));
    assert!(landing.as_mut().poll(&mut cx).is_pending());
    assert!(landing.as_mut().poll(&mut cx).is_pending());
    assert_eq!(
        store.page_count(),
        0,
        "nothing lands while the commit is pending"
    );
    assert!(landing.as_mut().poll(&mut cx).is_ready());
    assert_eq!(store.page_count(), 1);

    let mut dropped = store.commit(pages_only(1, vec![(PageId::wal(2), vec![2])], vec![]));
    assert!(dropped.as_mut().poll(&mut cx).is_pending());
    drop(dropped);
    assert_eq!(store.page_count(), 1, "a dropped commit writes nothing");
    assert_eq!(store.commits(), 1);
}

#[test]
fn of_two_commits_in_flight_on_one_version_the_stale_one_is_fenced() {
    let store = MemoryStore::new().with_latency(3);
    let first = store.commit(commit(0, 1, vec![(PageId::wal(1), vec![1])]));
    let second = store.commit(commit(0, 2, vec![(PageId::wal(2), vec![2])]));
    let (first, second) = block_on(async { futures::join!(first, second) });

    first.expect("the commit that completes first lands");
    let e = second.expect_err("its precondition went stale while it was in flight");
    assert_eq!(e.kind(), ErrorKind::Fenced, "{e}");
    assert_eq!(
        block_on(store.read_manifest()).unwrap(),
        Some(manifest(1, 1))
    );
    assert_eq!(block_on(store.get_page(PageId::wal(2))).unwrap(), None);
}

#[test]
fn a_read_in_flight_sees_the_state_at_its_completion() {
    let store = MemoryStore::new().with_latency(2);
    let read_first = store.read_manifest();
    let commit_first = store.commit(commit(0, 1, vec![]));
    let read_second = store.read_manifest();
    let (before, committed, after) =
        block_on(async { futures::join!(read_first, commit_first, read_second) });
    committed.unwrap();
    assert_eq!(before.unwrap(), None, "it completed before the commit");
    assert_eq!(
        after.unwrap(),
        Some(manifest(1, 1)),
        "it completed after the commit"
    );
}

#[test]
fn counters_track_pages_bytes_reads_and_commits() {
    let store = MemoryStore::new();
    let puts = vec![
        (PageId::wal(1), vec![0; 5]),
        (PageId::wal(2), vec![0; 6]),
        (PageId::sst_meta(1), vec![0; 7]),
        (PageId::sst_data(1, 0), vec![0; 8]),
        (PageId::sst_data(1, 1), vec![0; 9]),
        (PageId::sst_data(1, 2), vec![0; 10]),
    ];
    block_on(store.commit(commit(0, 3, puts))).unwrap();
    assert_eq!(store.page_count(), 6);
    assert_eq!(store.page_count_of(PageKind::Wal), 2);
    assert_eq!(store.page_count_of(PageKind::SstMeta), 1);
    assert_eq!(store.page_count_of(PageKind::SstData), 3);
    assert_eq!(store.stored_bytes(), 3 + 5 + 6 + 7 + 8 + 9 + 10);
    assert_eq!(store.commits(), 1);

    block_on(store.get_page(PageId::wal(1))).unwrap();
    block_on(store.get_page(PageId::wal(1))).unwrap();
    block_on(store.get_page(PageId::wal(99))).unwrap();
    block_on(store.list_pages(PageKind::Wal)).unwrap();
    block_on(store.read_manifest()).unwrap();
    assert_eq!(store.page_reads(), 2, "only reads that found a page count");

    assert!(block_on(store.commit(commit(0, 1, vec![]))).is_err());
    assert_eq!(store.commits(), 1, "only successful commits count");
    block_on(store.commit(Commit {
        expected_manifest_version: 1,
        ..Commit::default()
    }))
    .unwrap();
    assert_eq!(store.commits(), 2, "an empty commit that succeeds counts");

    store.reset_counters();
    assert_eq!((store.page_reads(), store.commits()), (0, 0));
    assert_eq!(store.page_count(), 6, "resetting counters keeps the data");
    assert_eq!(store.stored_bytes(), 48);
}

#[test]
fn shared_pages_are_the_committed_bytes_handed_out_without_a_copy() {
    let store = MemoryStore::new();
    let page = PageId::sst_data(1, 0);
    block_on(store.commit(commit(0, 1, vec![(page, vec![7; 100])]))).unwrap();

    let first = store
        .shared_page(page)
        .expect("a memory store shares its pages");
    let second = store.shared_page(page).unwrap();
    assert_eq!(&first[..], &[7; 100][..]);
    assert!(std::rc::Rc::ptr_eq(&first, &second), "no copy per read");
    assert_eq!(
        block_on(store.get_page(page)).unwrap().as_deref(),
        Some(&first[..])
    );
    assert_eq!(store.page_reads(), 3, "shared reads count like get_page");
    assert_eq!(store.shared_page(PageId::sst_data(1, 1)), None);

    // Replacing or deleting the page leaves a reader's bytes as they were.
    block_on(store.commit(pages_only(1, vec![(page, vec![8; 10])], vec![]))).unwrap();
    assert_eq!(&first[..], &[7; 100][..]);
    assert_eq!(&store.shared_page(page).unwrap()[..], &[8; 10][..]);

    store.set_copies_only(true);
    assert_eq!(store.shared_page(page), None, "copies only");
    store.set_copies_only(false);
    store.set_latency(1);
    assert_eq!(
        store.shared_page(page),
        None,
        "a slow store serves reads with its latency"
    );
}

#[test]
fn clones_share_one_disk_that_outlives_a_dropped_handle() {
    let disk = MemoryStore::new();
    let handle = disk.clone();
    block_on(handle.commit(commit(0, 2, vec![(PageId::wal(1), vec![1; 3])]))).unwrap();
    drop(handle);

    let reopened = disk.clone();
    assert_eq!(
        block_on(reopened.get_page(PageId::wal(1))).unwrap(),
        Some(vec![1; 3])
    );
    assert_eq!(disk.stored_bytes(), 5);

    reopened.set_quota(Some(5));
    reopened.set_latency(1);
    let (result, pending, _) =
        poll_counting(disk.commit(pages_only(1, vec![(PageId::wal(2), vec![2])], vec![])));
    assert_eq!(result.unwrap_err().kind(), ErrorKind::QuotaExceeded);
    assert_eq!(pending, 1, "clones share the latency");
}

#[test]
fn debug_output_summarises_the_store() {
    let store = MemoryStore::with_quota(64);
    block_on(store.commit(commit(0, 2, vec![(PageId::wal(1), vec![1; 3])]))).unwrap();
    assert_eq!(
        format!("{store:?}"),
        "MemoryStore { manifest_version: 1, pages: 1, stored_bytes: 5, quota: Some(64), latency: 0 }"
    );
}

/// One operation of the model test.
#[derive(Clone, Debug)]
enum Op {
    Commit {
        stale: bool,
        manifest_len: Option<usize>,
        puts: Vec<(u8, usize)>,
        deletes: Vec<u8>,
    },
    SetQuota(Option<usize>),
}

fn page_id(n: u8) -> PageId {
    match n % 3 {
        0 => PageId::wal(u64::from(n / 3)),
        1 => PageId::sst_meta(u64::from(n / 3)),
        _ => PageId::sst_data(1, u32::from(n / 3)),
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (
            proptest::bool::weighted(0.2),
            proptest::option::of(0usize..40),
            proptest::collection::vec((0u8..12, 0usize..60), 0..5),
            proptest::collection::vec(0u8..12, 0..4),
        )
            .prop_map(|(stale, manifest_len, puts, deletes)| Op::Commit {
                stale,
                manifest_len,
                puts,
                deletes,
            }),
        1 => proptest::option::of(0usize..300).prop_map(Op::SetQuota),
    ]
}

proptest! {
    /// Any sequence of commits and quota changes leaves the store exactly as a plain model that
    /// follows the documented rules: deletes before puts, the last put wins, fenced and over-quota
    /// commits change nothing, a commit that does not grow the store always passes.
    #[test]
    fn memory_store_matches_a_model(ops in proptest::collection::vec(op(), 1..40)) {
        let store = MemoryStore::new();
        let mut pages: BTreeMap<PageId, Vec<u8>> = BTreeMap::new();
        let mut manifest_now: Option<ManifestRecord> = None;
        let mut quota: Option<usize> = None;
        let size = |pages: &BTreeMap<PageId, Vec<u8>>, m: &Option<ManifestRecord>| {
            pages.values().map(Vec::len).sum::<usize>() + m.as_ref().map_or(0, |m| m.bytes.len())
        };

        for op in ops {
            match op {
                Op::SetQuota(q) => {
                    store.set_quota(q);
                    quota = q;
                }
                Op::Commit { stale, manifest_len, puts, deletes } => {
                    let current = manifest_now.as_ref().map_or(0, |m| m.version);
                    let expected = if stale { current + 1 } else { current };
                    let c = Commit {
                        expected_manifest_version: expected,
                        manifest: manifest_len.map(|len| manifest(expected + 1, len)),
                        puts: puts
                            .iter()
                            .map(|&(n, len)| (page_id(n), vec![n; len]))
                            .collect(),
                        deletes: deletes.iter().map(|&n| page_id(n)).collect(),
                    };

                    let mut next_pages = pages.clone();
                    for id in &c.deletes {
                        next_pages.remove(id);
                    }
                    for (id, bytes) in &c.puts {
                        next_pages.insert(*id, bytes.clone());
                    }
                    let next_manifest = c.manifest.clone().or_else(|| manifest_now.clone());
                    let (before, after) =
                        (size(&pages, &manifest_now), size(&next_pages, &next_manifest));
                    let over = quota.is_some_and(|q| after > q && after > before);

                    let result = block_on(store.commit(c));
                    if stale {
                        prop_assert_eq!(result.map_err(|e| e.kind()), Err(ErrorKind::Fenced));
                    } else if over {
                        prop_assert_eq!(
                            result.map_err(|e| e.kind()),
                            Err(ErrorKind::QuotaExceeded)
                        );
                    } else {
                        prop_assert!(result.is_ok(), "{:?}", result);
                        pages = next_pages;
                        manifest_now = next_manifest;
                    }
                }
            }
            prop_assert_eq!(store.stored_bytes(), size(&pages, &manifest_now));
            prop_assert_eq!(store.stored_bytes(), bytes_read_back(&store));
            prop_assert_eq!(store.page_count(), pages.len());
            prop_assert_eq!(block_on(store.read_manifest()).unwrap(), manifest_now.clone());
            for (id, bytes) in &pages {
                prop_assert_eq!(block_on(store.get_page(*id)).unwrap(), Some(bytes.clone()));
            }
        }
    }
}
