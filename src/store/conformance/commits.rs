//! The commit contract: a commit lands whole or not at all, only on the manifest version it
//! names, and manifest versions only ever advance through commits.

use alloc::vec;
use alloc::vec::Vec;

use super::support::{
    advance, bytes, commit_fails, commit_ok, first_commit, list, manifest, page, record, snapshot,
    Snapshot,
};
use crate::error::ErrorKind;
use crate::join::join;
use crate::store::{Commit, ManifestRecord, PageId, PageKind, PageStore};

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

/// A commit of several megabytes (which a store may issue in slices) is atomic too: fenced (on
/// none expected where a manifest is stored, or on a version behind), it writes and deletes
/// nothing; with the right precondition, every put and delete lands.
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

    // A version behind, not only none where one is stored: fenced whole too.
    let after = snapshot(store).await;
    let behind = Commit {
        expected_manifest_version: 1,
        manifest: Some(record(3)),
        puts: old.iter().map(|id| (*id, content(id))).collect(),
        deletes: new.clone(),
    };
    commit_fails(
        store,
        behind,
        ErrorKind::Fenced,
        "a 3 MiB commit a version behind",
    )
    .await;
    assert_eq!(
        snapshot(store).await,
        after,
        "a 3 MiB commit a version behind must write and delete nothing"
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

/// Two commits called one after the other, the second before the first has finished, land in
/// the order they were called. The engine may give up waiting on a commit (a WAL group's) and make
/// the next one, which deletes the page the first wrote in case it landed: that delete must not
/// come before the page. The first is a large page, the second small, so that a store which runs
/// its commits side by side lets the second finish first.
pub async fn commits_in_flight_together_land_in_the_order_called(store: &dyn PageStore) {
    let written = PageId::wal(7);
    let first = Commit {
        expected_manifest_version: 0,
        manifest: None,
        puts: vec![(written, bytes(7, 1024 * 1024))],
        deletes: vec![],
    };
    let second = Commit {
        expected_manifest_version: 0,
        manifest: None,
        puts: vec![(PageId::wal(8), bytes(8, 16))],
        deletes: vec![written],
    };
    let (a, b) = join(store.commit(first), store.commit(second)).await;
    assert!(a.is_ok(), "the first commit failed: {a:?}");
    assert!(b.is_ok(), "the second commit failed: {b:?}");
    assert_eq!(
        page(store, written).await,
        None,
        "the second commit's delete must come after the first commit's page, not before it"
    );
    assert_eq!(page(store, PageId::wal(8)).await, Some(bytes(8, 16)));
}
