//! The conformance suite: one `async fn` per behaviour the [`PageStore`] contract promises, each
//! taking an **empty** store and panicking (through `assert!`) with a message naming what broke.
//!
//! Every store runs it: [`MemoryStore`](super::MemoryStore) in native tests, the IndexedDB store in
//! Chromium, Firefox and WebKit, the JS adapters in Node, and (through `ttlkv-web`'s
//! `conformance` feature) the shipped adapters in workerd and Deno. [`run_all`] runs every behaviour, each on a fresh
//! store; a test harness that wants one test per behaviour calls the functions one by one
//! ([`BEHAVIOURS`] lists their names). This file is test support: it stays `no_std` + `alloc` and
//! depends on nothing but the trait.
//!
//! Rules the suite fixes where the trait's docs leave a choice:
//! - within one commit, **deletes apply before puts**: a page both deleted and put ends up present
//!   with the put's bytes; of several puts of one page, the last wins;
//! - a new manifest whose version is not greater than `expected_manifest_version` is rejected with
//!   [`ErrorKind::InvalidArgument`], writing nothing;
//! - a commit without a manifest leaves the manifest as it is; an empty commit only checks the
//!   precondition;
//! - an empty page is a page: it reads back as `Some(vec![])` and is listed.
//!
//! Quota is not checked here: a store's room cannot be filled portably. Each store tests its own
//! `QuotaExceeded` path.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use super::{Commit, ManifestRecord, PageId, PageKind, PageStore};
use crate::error::ErrorKind;
use crate::join::join;

/// Declares the behaviours once, so that [`BEHAVIOURS`] and [`run_all`] cannot drift apart.
macro_rules! behaviours {
    ($($name:ident),* $(,)?) => {
        /// The name of every behaviour, in the order [`run_all`] runs them; each is also the name
        /// of the `pub async fn` that checks it.
        pub const BEHAVIOURS: &[&str] = &[$(stringify!($name)),*];

        /// Runs every behaviour, each on a fresh, empty store made by `fresh`, and returns how many
        /// ran (always `BEHAVIOURS.len()`; a failing behaviour panics).
        pub async fn run_all<S: PageStore>(mut fresh: impl FnMut() -> S) -> usize {
            let mut ran = 0;
            $(
                $name(&fresh()).await;
                ran += 1;
            )*
            ran
        }

        /// Runs behaviour `name` on `store` (which must be empty): `false` if there is no
        /// behaviour of that name. For harnesses that make each store themselves, e.g. a
        /// runtime's JS test that opens storage asynchronously.
        pub async fn run_named(name: &str, store: &dyn PageStore) -> bool {
            match name {
                $(stringify!($name) => $name(store).await,)*
                _ => return false,
            }
            true
        }
    };
}

behaviours![
    empty_store_has_no_manifest_and_no_pages,
    commit_writes_pages_and_manifest_together,
    stale_precondition_fails_fenced_and_writes_nothing,
    manifest_version_advances_only_through_commits,
    manifest_version_that_does_not_increase_is_rejected,
    manifest_round_trips_byte_for_byte,
    commit_replaces_existing_pages,
    commit_deletes_pages_and_missing_deletes_are_fine,
    list_pages_returns_one_kind_in_ascending_order,
    same_numbers_in_different_kinds_are_different_pages,
    empty_page_is_present_not_missing,
    large_page_round_trips_byte_for_byte,
    many_pages_in_one_commit,
    empty_commit_checks_only_the_precondition,
    put_and_delete_of_the_same_page_in_one_commit,
    last_put_of_the_same_page_in_one_commit_wins,
    concurrent_commits_on_one_version_let_exactly_one_through,
    get_pages_reads_many_pages_in_order,
    a_commit_of_megabytes_is_fenced_whole_or_lands_whole,
];

/// A new store has no manifest, lists no page of any kind and finds no page.
pub async fn empty_store_has_no_manifest_and_no_pages(store: &dyn PageStore) {
    assert_eq!(
        manifest(store).await,
        None,
        "an empty store must have no manifest"
    );
    for kind in PageKind::ALL {
        assert_eq!(
            list(store, kind).await,
            [],
            "an empty store must list no {kind:?} page"
        );
    }
    for id in [
        PageId::wal(0),
        PageId::wal(1),
        PageId::sst_meta(1),
        PageId::sst_data(1, 0),
    ] {
        assert_eq!(
            page(store, id).await,
            None,
            "an empty store must not have {id}"
        );
    }
}

/// One commit writes pages of every kind and the manifest; all of it reads back.
pub async fn commit_writes_pages_and_manifest_together(store: &dyn PageStore) {
    let pages = vec![
        (PageId::wal(1), bytes(1, 100)),
        (PageId::sst_meta(7), bytes(2, 300)),
        (PageId::sst_data(7, 0), bytes(3, 4000)),
        (PageId::sst_data(7, 1), bytes(4, 17)),
    ];
    commit_ok(store, first_commit(pages.clone()), "the first commit").await;

    assert_eq!(
        manifest(store).await,
        Some(record(1)),
        "the manifest must be the one the commit wrote"
    );
    for (id, expected) in &pages {
        assert_eq!(
            page(store, *id).await.as_ref(),
            Some(expected),
            "{id} must hold what the commit wrote"
        );
    }
    assert_eq!(list(store, PageKind::Wal).await, [PageId::wal(1)]);
    assert_eq!(list(store, PageKind::SstMeta).await, [PageId::sst_meta(7)]);
    assert_eq!(
        list(store, PageKind::SstData).await,
        [PageId::sst_data(7, 0), PageId::sst_data(7, 1)]
    );
}

/// A commit whose `expected_manifest_version` is not the current one (behind or ahead, with or
/// without a manifest of its own) fails with `Fenced` and writes, replaces and deletes nothing;
/// the store keeps working afterwards.
pub async fn stale_precondition_fails_fenced_and_writes_nothing(store: &dyn PageStore) {
    let on_empty = Commit {
        expected_manifest_version: 1,
        manifest: Some(record(2)),
        puts: vec![(PageId::wal(1), bytes(1, 10))],
        deletes: vec![],
    };
    commit_fails(
        store,
        on_empty,
        ErrorKind::Fenced,
        "expecting version 1 of an empty store",
    )
    .await;
    assert_eq!(
        snapshot(store).await,
        Snapshot::default(),
        "a fenced commit must write nothing"
    );

    let a = PageId::sst_meta(1);
    commit_ok(
        store,
        first_commit(vec![(a, bytes(2, 50))]),
        "the first commit",
    )
    .await;
    let before = snapshot(store).await;

    for (expected, manifest, what) in [
        (0, Some(record(2)), "expecting version 0 after version 1"),
        (2, Some(record(3)), "expecting version 2 while it is 1"),
        (0, None, "expecting version 0 without a manifest"),
    ] {
        let stale = Commit {
            expected_manifest_version: expected,
            manifest,
            puts: vec![(a, bytes(3, 60)), (PageId::sst_data(1, 0), bytes(4, 70))],
            deletes: vec![a, PageId::wal(9)],
        };
        commit_fails(store, stale, ErrorKind::Fenced, what).await;
        assert_eq!(
            snapshot(store).await,
            before,
            "{what}: a fenced commit must change nothing"
        );
    }

    let next = Commit {
        expected_manifest_version: 1,
        manifest: Some(record(2)),
        ..Commit::default()
    };
    commit_ok(store, next, "a current commit after fenced ones").await;
    assert_eq!(manifest(store).await, Some(record(2)));
}

/// The manifest version changes only when a successful commit carries a manifest; versions may
/// skip numbers; a commit without a manifest keeps the current one.
pub async fn manifest_version_advances_only_through_commits(store: &dyn PageStore) {
    commit_ok(store, first_commit(vec![]), "the first commit").await;
    assert_eq!(manifest(store).await, Some(record(1)));
    assert_eq!(
        manifest(store).await,
        Some(record(1)),
        "reading the manifest must not change it"
    );

    let pages_only = Commit {
        expected_manifest_version: 1,
        puts: vec![(PageId::wal(1), bytes(1, 10))],
        ..Commit::default()
    };
    commit_ok(store, pages_only, "a commit without a manifest").await;
    assert_eq!(
        manifest(store).await,
        Some(record(1)),
        "a commit without a manifest must keep the current one"
    );

    commit_ok(store, advance(1, 2), "version 1 to 2").await;
    assert_eq!(manifest(store).await, Some(record(2)));

    commit_fails(
        store,
        advance(1, 3),
        ErrorKind::Fenced,
        "version 1 to 3 while it is 2",
    )
    .await;
    assert_eq!(
        manifest(store).await,
        Some(record(2)),
        "a failed commit must not advance the version"
    );

    commit_ok(store, advance(2, 10), "version 2 to 10 (skipping numbers)").await;
    assert_eq!(manifest(store).await, Some(record(10)));
}

/// A new manifest must have a version greater than the expected one; otherwise the commit fails
/// with `InvalidArgument` and writes nothing.
pub async fn manifest_version_that_does_not_increase_is_rejected(store: &dyn PageStore) {
    let zero = Commit {
        expected_manifest_version: 0,
        manifest: Some(record(0)),
        puts: vec![(PageId::wal(1), bytes(1, 10))],
        deletes: vec![],
    };
    commit_fails(
        store,
        zero,
        ErrorKind::InvalidArgument,
        "a manifest of version 0",
    )
    .await;
    assert_eq!(
        snapshot(store).await,
        Snapshot::default(),
        "a rejected commit must write nothing"
    );

    commit_ok(store, advance(0, 3), "the first commit, to version 3").await;
    let before = snapshot(store).await;
    for (version, what) in [(3, "version 3 to 3"), (2, "version 3 to 2")] {
        let mut backwards = advance(3, version);
        backwards.puts.push((PageId::sst_meta(5), bytes(2, 20)));
        commit_fails(store, backwards, ErrorKind::InvalidArgument, what).await;
        assert_eq!(
            snapshot(store).await,
            before,
            "{what}: a rejected commit must change nothing"
        );
    }
}

/// Manifest bytes come back exactly as written: none at all, and 64 KiB of pseudo-random bytes.
pub async fn manifest_round_trips_byte_for_byte(store: &dyn PageStore) {
    let empty = ManifestRecord {
        version: 1,
        bytes: vec![],
    };
    commit_ok(
        store,
        Commit {
            manifest: Some(empty.clone()),
            ..Commit::default()
        },
        "an empty manifest",
    )
    .await;
    assert_eq!(manifest(store).await, Some(empty));

    let big = ManifestRecord {
        version: 2,
        bytes: bytes(5, 64 * 1024),
    };
    commit_ok(
        store,
        Commit {
            expected_manifest_version: 1,
            manifest: Some(big.clone()),
            ..Commit::default()
        },
        "a 64 KiB manifest",
    )
    .await;
    assert!(
        manifest(store).await == Some(big),
        "a 64 KiB manifest must read back byte for byte"
    );
}

/// Putting a page that exists replaces it whole (longer or shorter), leaving other pages alone.
pub async fn commit_replaces_existing_pages(store: &dyn PageStore) {
    let (a, b) = (PageId::sst_data(3, 0), PageId::sst_data(3, 1));
    commit_ok(
        store,
        first_commit(vec![(a, bytes(1, 500)), (b, bytes(2, 40))]),
        "the first commit",
    )
    .await;

    for (seed, len) in [(3, 20), (4, 2000)] {
        let replace = Commit {
            expected_manifest_version: 1,
            puts: vec![(a, bytes(seed, len))],
            ..Commit::default()
        };
        commit_ok(store, replace, "replacing a page").await;
        assert_eq!(
            page(store, a).await,
            Some(bytes(seed, len)),
            "{a} must hold exactly the replacement of {len} bytes"
        );
        assert_eq!(
            page(store, b).await,
            Some(bytes(2, 40)),
            "{b} must be untouched"
        );
        assert_eq!(
            list(store, PageKind::SstData).await,
            [a, b],
            "a replaced page must be listed once"
        );
    }
}

/// Deleted pages are gone from reads and lists; deleting a page that does not exist (or the same
/// page twice) is not an error.
pub async fn commit_deletes_pages_and_missing_deletes_are_fine(store: &dyn PageStore) {
    let (a, b, c) = (PageId::wal(1), PageId::wal(2), PageId::sst_meta(2));
    commit_ok(
        store,
        first_commit(vec![
            (a, bytes(1, 10)),
            (b, bytes(2, 20)),
            (c, bytes(3, 30)),
        ]),
        "the first commit",
    )
    .await;

    let delete = Commit {
        expected_manifest_version: 1,
        deletes: vec![a, c, c, PageId::wal(77), PageId::sst_data(2, 0)],
        ..Commit::default()
    };
    commit_ok(store, delete, "deleting present and missing pages").await;
    assert_eq!(page(store, a).await, None, "{a} was deleted");
    assert_eq!(page(store, c).await, None, "{c} was deleted");
    assert_eq!(
        page(store, b).await,
        Some(bytes(2, 20)),
        "{b} was not deleted"
    );
    assert_eq!(list(store, PageKind::Wal).await, [b]);
    assert_eq!(list(store, PageKind::SstMeta).await, []);

    let only_missing = Commit {
        expected_manifest_version: 1,
        deletes: vec![a, PageId::sst_data(9, 9)],
        ..Commit::default()
    };
    commit_ok(store, only_missing, "deleting only missing pages").await;
    assert_eq!(list(store, PageKind::Wal).await, [b]);
}

/// `list_pages` returns exactly the pages of one kind, ordered by file then index as numbers
/// (not as strings: 10 comes after 2), including the largest ids.
pub async fn list_pages_returns_one_kind_in_ascending_order(store: &dyn PageStore) {
    let scrambled = [
        PageId::sst_data(2, 1),
        PageId::wal(256),
        PageId::sst_data(10, 0),
        PageId::sst_meta(1 << 40),
        PageId::sst_data(u64::MAX, u32::MAX),
        PageId::wal(5),
        PageId::sst_data(2, 0),
        PageId::sst_meta(3),
        PageId::sst_data(1, 300),
        PageId::wal(u64::MAX),
        PageId::sst_data(0, 0),
        PageId::sst_meta(20),
        PageId::sst_data(1, 2),
        PageId::wal(1),
    ];
    let puts = scrambled
        .iter()
        .enumerate()
        .map(|(i, id)| (*id, bytes(i as u64, 8)))
        .collect();
    commit_ok(
        store,
        first_commit(puts),
        "fourteen pages in scrambled order",
    )
    .await;

    assert_eq!(
        list(store, PageKind::Wal).await,
        [
            PageId::wal(1),
            PageId::wal(5),
            PageId::wal(256),
            PageId::wal(u64::MAX)
        ]
    );
    assert_eq!(
        list(store, PageKind::SstMeta).await,
        [
            PageId::sst_meta(3),
            PageId::sst_meta(20),
            PageId::sst_meta(1 << 40)
        ]
    );
    assert_eq!(
        list(store, PageKind::SstData).await,
        [
            PageId::sst_data(0, 0),
            PageId::sst_data(1, 2),
            PageId::sst_data(1, 300),
            PageId::sst_data(2, 0),
            PageId::sst_data(2, 1),
            PageId::sst_data(10, 0),
            PageId::sst_data(u64::MAX, u32::MAX),
        ]
    );
}

/// A WAL page, an SST meta page and an SST data page with the same numbers are three pages.
pub async fn same_numbers_in_different_kinds_are_different_pages(store: &dyn PageStore) {
    let (wal, meta, data) = (PageId::wal(7), PageId::sst_meta(7), PageId::sst_data(7, 0));
    commit_ok(
        store,
        first_commit(vec![
            (wal, bytes(1, 11)),
            (meta, bytes(2, 22)),
            (data, bytes(3, 33)),
        ]),
        "three kinds, same numbers",
    )
    .await;
    assert_eq!(page(store, wal).await, Some(bytes(1, 11)));
    assert_eq!(page(store, meta).await, Some(bytes(2, 22)));
    assert_eq!(page(store, data).await, Some(bytes(3, 33)));

    let delete_meta = Commit {
        expected_manifest_version: 1,
        deletes: vec![meta],
        ..Commit::default()
    };
    commit_ok(store, delete_meta, "deleting the meta page").await;
    assert_eq!(page(store, meta).await, None);
    assert_eq!(
        page(store, wal).await,
        Some(bytes(1, 11)),
        "deleting {meta} must not touch {wal}"
    );
    assert_eq!(
        page(store, data).await,
        Some(bytes(3, 33)),
        "deleting {meta} must not touch {data}"
    );
}

/// A page of zero bytes exists: it reads back as empty (not as missing) and is listed.
pub async fn empty_page_is_present_not_missing(store: &dyn PageStore) {
    let id = PageId::wal(1);
    commit_ok(store, first_commit(vec![(id, vec![])]), "an empty page").await;
    assert_eq!(
        page(store, id).await,
        Some(vec![]),
        "an empty page must read back as Some(empty)"
    );
    assert_eq!(list(store, PageKind::Wal).await, [id]);
}

/// A 1 MiB page of pseudo-random bytes reads back byte for byte, and a small page replacing it leaves
/// no tail behind.
pub async fn large_page_round_trips_byte_for_byte(store: &dyn PageStore) {
    let id = PageId::sst_data(1, 0);
    let large = bytes(42, 1024 * 1024);
    commit_ok(
        store,
        first_commit(vec![(id, large.clone())]),
        "a 1 MiB page",
    )
    .await;
    let read = page(store, id).await;
    assert!(
        read.as_ref() == Some(&large),
        "a 1 MiB page must read back byte for byte (read {:?} bytes)",
        read.map(|p| p.len())
    );

    let small = Commit {
        expected_manifest_version: 1,
        puts: vec![(id, vec![1, 2, 3])],
        ..Commit::default()
    };
    commit_ok(store, small, "replacing 1 MiB with 3 bytes").await;
    assert_eq!(page(store, id).await, Some(vec![1, 2, 3]));
}

/// One commit can write 1,000 pages, and another can delete them all.
pub async fn many_pages_in_one_commit(store: &dyn PageStore) {
    const COUNT: u32 = 1000;
    let ids: Vec<PageId> = (0..COUNT).map(|i| PageId::sst_data(9, i)).collect();
    let content = |i: u32| bytes(u64::from(i), 16 + (i % 50) as usize);
    let puts = ids.iter().map(|id| (*id, content(id.index))).collect();
    commit_ok(store, first_commit(puts), "1,000 pages in one commit").await;

    assert_eq!(list(store, PageKind::SstData).await, ids);
    for id in &ids {
        assert_eq!(
            page(store, *id).await,
            Some(content(id.index)),
            "{id} of a 1,000-page commit"
        );
    }

    let delete_all = Commit {
        expected_manifest_version: 1,
        deletes: ids.clone(),
        ..Commit::default()
    };
    commit_ok(store, delete_all, "deleting 1,000 pages in one commit").await;
    assert_eq!(list(store, PageKind::SstData).await, []);
}

/// A commit of several megabytes (which a store may issue in slices) is atomic too: fenced, it
/// writes and deletes nothing; with the right precondition, every put and delete lands.
pub async fn a_commit_of_megabytes_is_fenced_whole_or_lands_whole(store: &dyn PageStore) {
    let old: Vec<PageId> = (0..300).map(|i| PageId::sst_data(3, i)).collect();
    let old_puts = old
        .iter()
        .map(|id| (*id, bytes(u64::from(id.index), 40)))
        .collect();
    commit_ok(store, first_commit(old_puts), "300 small pages").await;
    let before = snapshot(store).await;

    let new: Vec<PageId> = (0..200).map(|i| PageId::sst_data(4, i)).collect();
    let content = |id: &PageId| bytes(1_000 + u64::from(id.index), 16 * 1024);
    let big = |expected_manifest_version| Commit {
        expected_manifest_version,
        manifest: Some(record(2)),
        puts: new.iter().map(|id| (*id, content(id))).collect(),
        deletes: old.clone(),
    };
    commit_fails(
        store,
        big(0),
        ErrorKind::Fenced,
        "a 3 MiB commit on a stale version",
    )
    .await;
    assert_eq!(
        snapshot(store).await,
        before,
        "a fenced commit of 3 MiB must write and delete nothing"
    );

    commit_ok(store, big(1), "a 3 MiB commit").await;
    assert_eq!(list(store, PageKind::SstData).await, new);
    for id in &new {
        assert_eq!(
            page(store, *id).await,
            Some(content(id)),
            "{id} of a 3 MiB commit"
        );
    }
    assert_eq!(manifest(store).await.map(|m| m.version), Some(2));
}

/// `get_pages` gives each page asked for in the order asked, `None` for a missing one, the same
/// bytes `get_page` gives, and nothing at all for an empty list.
pub async fn get_pages_reads_many_pages_in_order(store: &dyn PageStore) {
    let present: Vec<PageId> = (0..20).map(|i| PageId::sst_meta(100 + i)).collect();
    let content = |id: &PageId| bytes(id.file, 10 + id.file as usize % 7);
    let puts = present.iter().map(|id| (*id, content(id))).collect();
    commit_ok(store, first_commit(puts), "20 metadata pages").await;

    let mut asked: Vec<PageId> = present.iter().rev().copied().collect();
    asked.insert(5, PageId::sst_meta(7));
    asked.push(PageId::sst_data(100, 0));
    let got = store
        .get_pages(asked.clone())
        .await
        .unwrap_or_else(|e| panic!("get_pages failed: {e}"));
    assert_eq!(got.len(), asked.len(), "one answer per page asked for");
    for (id, answer) in asked.iter().zip(&got) {
        assert_eq!(
            *answer,
            page(store, *id).await,
            "get_pages and get_page agree on {id}"
        );
        let expected = present.contains(id).then(|| content(id));
        assert_eq!(*answer, expected, "get_pages gives {id}");
    }
    let none = store.get_pages(Vec::new()).await;
    assert!(
        matches!(none.as_deref(), Ok([])),
        "no pages asked, none given"
    );
}

/// A commit with no manifest, puts or deletes succeeds exactly when its precondition holds, and
/// changes nothing either way.
pub async fn empty_commit_checks_only_the_precondition(store: &dyn PageStore) {
    commit_ok(
        store,
        Commit::default(),
        "an empty commit on an empty store",
    )
    .await;
    assert_eq!(
        snapshot(store).await,
        Snapshot::default(),
        "an empty commit must not create a manifest"
    );
    commit_fails(
        store,
        Commit {
            expected_manifest_version: 1,
            ..Commit::default()
        },
        ErrorKind::Fenced,
        "an empty commit expecting version 1 of an empty store",
    )
    .await;

    commit_ok(
        store,
        first_commit(vec![(PageId::wal(1), bytes(1, 10))]),
        "the first commit",
    )
    .await;
    let before = snapshot(store).await;
    commit_ok(
        store,
        Commit {
            expected_manifest_version: 1,
            ..Commit::default()
        },
        "an empty commit expecting the current version",
    )
    .await;
    assert_eq!(
        snapshot(store).await,
        before,
        "an empty commit must change nothing"
    );
    commit_fails(
        store,
        Commit::default(),
        ErrorKind::Fenced,
        "an empty commit expecting version 0 after version 1",
    )
    .await;
    assert_eq!(
        snapshot(store).await,
        before,
        "an empty commit must change nothing"
    );
}

/// Within one commit, deletes apply before puts: a page both deleted and put ends up present with
/// the put's bytes, whether or not it existed before.
pub async fn put_and_delete_of_the_same_page_in_one_commit(store: &dyn PageStore) {
    let id = PageId::sst_meta(4);
    let both = Commit {
        expected_manifest_version: 0,
        manifest: Some(record(1)),
        puts: vec![(id, bytes(1, 10))],
        deletes: vec![id],
    };
    commit_ok(store, both, "put and delete of a new page").await;
    assert_eq!(
        page(store, id).await,
        Some(bytes(1, 10)),
        "deletes apply before puts: the new page must be present"
    );

    let again = Commit {
        expected_manifest_version: 1,
        manifest: None,
        puts: vec![(id, bytes(2, 20))],
        deletes: vec![id],
    };
    commit_ok(store, again, "put and delete of an existing page").await;
    assert_eq!(
        page(store, id).await,
        Some(bytes(2, 20)),
        "deletes apply before puts: the page must hold the put's bytes"
    );
    assert_eq!(list(store, PageKind::SstMeta).await, [id]);
}

/// Of several puts of one page in one commit, the last wins.
pub async fn last_put_of_the_same_page_in_one_commit_wins(store: &dyn PageStore) {
    let id = PageId::wal(3);
    let puts = vec![(id, bytes(1, 30)), (id, bytes(2, 5)), (id, bytes(3, 12))];
    commit_ok(store, first_commit(puts), "three puts of one page").await;
    assert_eq!(
        page(store, id).await,
        Some(bytes(3, 12)),
        "the last put of a page must win"
    );
    assert_eq!(list(store, PageKind::Wal).await, [id]);
}

/// Two commits in flight at once on the same expected version: the precondition is checked inside
/// the atomic step, so exactly one lands whole and the other is fenced and lands not at all.
pub async fn concurrent_commits_on_one_version_let_exactly_one_through(store: &dyn PageStore) {
    let writer = |seed: u64| Commit {
        expected_manifest_version: 0,
        manifest: Some(ManifestRecord {
            version: 1,
            bytes: bytes(seed, 16),
        }),
        puts: vec![(PageId::wal(seed), bytes(seed, 100))],
        deletes: vec![],
    };
    let (first, second) = join(store.commit(writer(1)), store.commit(writer(2))).await;
    let (winner, loser) = match (first, second) {
        (Ok(()), Err(e)) if e.kind() == ErrorKind::Fenced => (1, 2),
        (Err(e), Ok(())) if e.kind() == ErrorKind::Fenced => (2, 1),
        other => panic!(
            "exactly one of two racing commits must succeed and the other be fenced, got {other:?}"
        ),
    };
    assert_eq!(
        manifest(store).await.map(|m| m.bytes),
        Some(bytes(winner, 16)),
        "the manifest must be the winner's"
    );
    assert_eq!(
        page(store, PageId::wal(winner)).await,
        Some(bytes(winner, 100))
    );
    assert_eq!(
        page(store, PageId::wal(loser)).await,
        None,
        "nothing of the fenced commit may land"
    );
}

/// Everything a store holds, for "changed nothing" checks.
#[derive(Debug, Default, PartialEq, Eq)]
struct Snapshot {
    manifest: Option<ManifestRecord>,
    pages: Vec<(PageId, Vec<u8>)>,
}

async fn snapshot(store: &dyn PageStore) -> Snapshot {
    let mut pages = Vec::new();
    for kind in PageKind::ALL {
        for id in list(store, kind).await {
            match page(store, id).await {
                Some(bytes) => pages.push((id, bytes)),
                None => panic!("{id} is listed but cannot be read"),
            }
        }
    }
    Snapshot {
        manifest: manifest(store).await,
        pages,
    }
}

async fn manifest(store: &dyn PageStore) -> Option<ManifestRecord> {
    store
        .read_manifest()
        .await
        .unwrap_or_else(|e| panic!("read_manifest failed: {e}"))
}

async fn page(store: &dyn PageStore, id: PageId) -> Option<Vec<u8>> {
    store
        .get_page(id)
        .await
        .unwrap_or_else(|e| panic!("get_page({id}) failed: {e}"))
}

async fn list(store: &dyn PageStore, kind: PageKind) -> Vec<PageId> {
    store
        .list_pages(kind)
        .await
        .unwrap_or_else(|e| panic!("list_pages({kind:?}) failed: {e}"))
}

async fn commit_ok(store: &dyn PageStore, commit: Commit, what: &str) {
    if let Err(e) = store.commit(commit).await {
        panic!("{what}: commit must succeed, but failed: {e}");
    }
}

async fn commit_fails(store: &dyn PageStore, commit: Commit, kind: ErrorKind, what: &str) {
    match store.commit(commit).await {
        Ok(()) => panic!("{what}: commit must fail with {kind:?}, but succeeded"),
        Err(e) => assert_eq!(e.kind(), kind, "{what}: wrong error: {e}"),
    }
}

/// The manifest record of `version`, with bytes that name it.
fn record(version: u64) -> ManifestRecord {
    ManifestRecord {
        version,
        bytes: format!("manifest v{version}").into_bytes(),
    }
}

/// The first commit of an empty store: manifest version 1 plus `puts`.
fn first_commit(puts: Vec<(PageId, Vec<u8>)>) -> Commit {
    Commit {
        expected_manifest_version: 0,
        manifest: Some(record(1)),
        puts,
        deletes: vec![],
    }
}

/// A commit that only moves the manifest from version `from` to `to`.
fn advance(from: u64, to: u64) -> Commit {
    Commit {
        expected_manifest_version: from,
        manifest: Some(record(to)),
        ..Commit::default()
    }
}

/// `len` pseudo-random bytes determined by `seed` (xorshift64*): pages that differ by seed.
fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}
