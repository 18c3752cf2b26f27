//! What the behaviours share: reading a store whole, committing with a verdict, and making
//! manifest records and page bytes.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use crate::error::ErrorKind;
use crate::store::{Commit, ManifestRecord, PageId, PageKind, PageStore};

/// Everything a store holds, for "changed nothing" checks.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Snapshot {
    manifest: Option<ManifestRecord>,
    pages: Vec<(PageId, Vec<u8>)>,
}

pub(super) async fn snapshot(store: &dyn PageStore) -> Snapshot {
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

pub(super) async fn manifest(store: &dyn PageStore) -> Option<ManifestRecord> {
    store
        .read_manifest()
        .await
        .unwrap_or_else(|e| panic!("read_manifest failed: {e}"))
}

pub(super) async fn page(store: &dyn PageStore, id: PageId) -> Option<Vec<u8>> {
    store
        .get_page(id)
        .await
        .unwrap_or_else(|e| panic!("get_page({id}) failed: {e}"))
}

pub(super) async fn list(store: &dyn PageStore, kind: PageKind) -> Vec<PageId> {
    store
        .list_pages(kind)
        .await
        .unwrap_or_else(|e| panic!("list_pages({kind:?}) failed: {e}"))
}

pub(super) async fn commit_ok(store: &dyn PageStore, commit: Commit, what: &str) {
    if let Err(e) = store.commit(commit).await {
        panic!("{what}: commit must succeed, but failed: {e}");
    }
}

pub(super) async fn commit_fails(
    store: &dyn PageStore,
    commit: Commit,
    kind: ErrorKind,
    what: &str,
) {
    match store.commit(commit).await {
        Ok(()) => panic!("{what}: commit must fail with {kind:?}, but succeeded"),
        Err(e) => assert_eq!(e.kind(), kind, "{what}: wrong error: {e}"),
    }
}

/// The manifest record of `version`, with bytes that name it.
pub(super) fn record(version: u64) -> ManifestRecord {
    ManifestRecord {
        version,
        bytes: format!("manifest v{version}").into_bytes(),
    }
}

/// The first commit of an empty store: manifest version 1 plus `puts`.
pub(super) fn first_commit(puts: Vec<(PageId, Vec<u8>)>) -> Commit {
    Commit {
        expected_manifest_version: 0,
        manifest: Some(record(1)),
        puts,
        deletes: vec![],
    }
}

/// A commit that only moves the manifest from version `from` to `to`.
pub(super) fn advance(from: u64, to: u64) -> Commit {
    Commit {
        expected_manifest_version: from,
        manifest: Some(record(to)),
        ..Commit::default()
    }
}

/// `len` pseudo-random bytes determined by `seed` (xorshift64*): pages that differ by seed.
pub(super) fn bytes(seed: u64, len: usize) -> Vec<u8> {
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
