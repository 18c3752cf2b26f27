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
//!   [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument), writing nothing;
//! - a commit without a manifest leaves the manifest as it is; an empty commit only checks the
//!   precondition;
//! - an empty page is a page: it reads back as `Some(vec![])` and is listed;
//! - commits land in the order they are called, also when a later one is called before an
//!   earlier one has finished.
//!
//! Quota is not checked here: a store's room cannot be filled portably. Each store tests its own
//! `QuotaExceeded` path.
//!
//! Rooms: `commits` (the commit contract: atomicity, the manifest version precondition, manifest
//! versions and records), `pages` (pages: reading, replacing, deleting, listing), and `support`
//! (the helpers both use). This file only lists the behaviours.

mod commits;
mod pages;
mod support;

pub use commits::{
    a_commit_of_megabytes_is_fenced_whole_or_lands_whole,
    commit_writes_pages_and_manifest_together, commits_in_flight_together_land_in_the_order_called,
    concurrent_commits_on_one_version_let_exactly_one_through,
    empty_commit_checks_only_the_precondition, manifest_round_trips_byte_for_byte,
    manifest_version_advances_only_through_commits,
    manifest_version_that_does_not_increase_is_rejected,
    stale_precondition_fails_fenced_and_writes_nothing,
};
pub use pages::{
    commit_deletes_pages_and_missing_deletes_are_fine, commit_replaces_existing_pages,
    empty_page_is_present_not_missing, empty_store_has_no_manifest_and_no_pages,
    get_pages_reads_many_pages_in_order, large_page_round_trips_byte_for_byte,
    last_put_of_the_same_page_in_one_commit_wins, list_pages_returns_one_kind_in_ascending_order,
    many_pages_in_one_commit, put_and_delete_of_the_same_page_in_one_commit,
    same_numbers_in_different_kinds_are_different_pages,
};

use super::PageStore;

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
    commits_in_flight_together_land_in_the_order_called,
];
