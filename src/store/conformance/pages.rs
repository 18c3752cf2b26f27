//! Pages: what a commit's puts and deletes leave, and what reads and listings return.

use alloc::vec;
use alloc::vec::Vec;

use super::support::{bytes, commit_ok, first_commit, list, manifest, page, record};
use crate::store::{Commit, PageId, PageKind, PageStore};

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
