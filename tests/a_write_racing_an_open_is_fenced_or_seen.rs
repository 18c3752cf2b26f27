//! A writer that is losing its role (another context is opening the same database) may still
//! commit while the open is under way. Whatever it manages to commit must be seen by the new
//! writer; whatever the new writer will not see must fail with `Fenced`. An acknowledged durable
//! write is never lost. The old writer's write is tried before every store operation the open
//! makes, one point at a time.

mod common;

use core::cell::{Cell, RefCell};
use core::future::Future;
use core::pin::Pin;
use std::rc::Rc;

use common::{run, small, T0};
use ttlkv::store::{
    Commit, ManifestRecord, MemoryStore, PageId, PageKind, PageStore, StoreFuture, YieldFuture,
};
use ttlkv::{Db, DbOptions, ErrorKind, FakeClock, Result};

type Hook = Pin<Box<dyn Future<Output = ()>>>;

/// A store that runs `hook` (once) just before its operation number `at`.
struct RaceBefore {
    inner: MemoryStore,
    at: usize,
    ops: Cell<usize>,
    hook: RefCell<Option<Hook>>,
}

impl RaceBefore {
    fn before<'a, T: 'a>(&'a self, op: StoreFuture<'a, T>) -> StoreFuture<'a, T> {
        let n = self.ops.get();
        self.ops.set(n + 1);
        let hook = if n == self.at {
            self.hook.borrow_mut().take()
        } else {
            None
        };
        Box::pin(async move {
            if let Some(hook) = hook {
                hook.await;
            }
            op.await
        })
    }
}

impl PageStore for RaceBefore {
    fn read_manifest(&self) -> StoreFuture<'_, Option<ManifestRecord>> {
        self.before(self.inner.read_manifest())
    }
    fn get_page(&self, id: PageId) -> StoreFuture<'_, Option<Vec<u8>>> {
        self.before(self.inner.get_page(id))
    }
    fn get_pages(&self, ids: Vec<PageId>) -> StoreFuture<'_, Vec<Option<Vec<u8>>>> {
        self.before(self.inner.get_pages(ids))
    }
    fn list_pages(&self, kind: PageKind) -> StoreFuture<'_, Vec<PageId>> {
        self.before(self.inner.list_pages(kind))
    }
    fn commit(&self, commit: Commit) -> StoreFuture<'_, ()> {
        self.before(self.inner.commit(commit))
    }
    fn yield_now(&self) -> YieldFuture<'_> {
        self.inner.yield_now()
    }
}

/// One race: the old writer's durable put (and, with `then_flush`, its flush: a manifest commit)
/// runs just before the opener's store operation `at`. Returns `None` once `at` is past the last
/// operation of the open.
fn race_before_operation(at: usize, options: &DbOptions, then_flush: bool) -> Option<Result<()>> {
    let disk = MemoryStore::new();
    let clock = FakeClock::new(T0);
    run(async {
        let old = Db::open(disk.clone(), clock.clone(), options.clone())
            .await
            .unwrap();
        // Something in an SST, something only in the WAL: the open has every kind of work.
        for i in 0..40u32 {
            old.put(format!("sst-{i:03}").as_bytes(), b"v")
                .await
                .unwrap();
        }
        old.flush().await.unwrap();
        old.put(b"wal-only", b"v").await.unwrap();

        let outcome = Rc::new(RefCell::new(None));
        let hook: Hook = {
            let (old, outcome) = (old.clone(), outcome.clone());
            Box::pin(async move {
                let result = old.put(b"late", b"from the old writer").await;
                if then_flush && result.is_ok() {
                    // Landed or fenced; either way the put's outcome is what was acknowledged.
                    if let Err(e) = old.flush().await {
                        assert_eq!(e.kind(), ErrorKind::Fenced, "{e}");
                    }
                }
                *outcome.borrow_mut() = Some(result);
            })
        };
        let store = Rc::new(RaceBefore {
            inner: disk.clone(),
            at,
            ops: Cell::new(0),
            hook: RefCell::new(Some(hook)),
        });
        let new = Db::open(store.clone(), clock.clone(), options.clone())
            .await
            .unwrap();
        let result = outcome.borrow_mut().take()?;

        let reopened = Db::open(disk.clone(), clock.clone(), options.clone())
            .await
            .unwrap();
        for db in [&new, &reopened] {
            let seen = db.get(b"late").await.unwrap();
            match &result {
                Ok(()) => assert_eq!(
                    seen.as_deref(),
                    Some(&b"from the old writer"[..]),
                    "racing before operation {at}: an acknowledged write was lost"
                ),
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::Fenced, "operation {at}: {e}");
                    assert_eq!(seen, None, "operation {at}: a failed write landed");
                }
            }
            assert_eq!(
                db.get(b"wal-only").await.unwrap().as_deref(),
                Some(&b"v"[..])
            );
            assert_eq!(
                db.get(b"sst-007").await.unwrap().as_deref(),
                Some(&b"v"[..])
            );
        }
        Some(result)
    })
}

#[test]
fn a_write_racing_any_step_of_an_open_is_either_seen_by_the_new_writer_or_fenced() {
    every_race(false);
}

/// The old writer's manifest commit lands between the opener's manifest read and its own commit
/// of the role: the opener's commit is fenced, and it reads again and retries.
#[test]
fn a_manifest_commit_racing_an_open_makes_the_open_retry_not_fail() {
    every_race(true);
}

fn every_race(then_flush: bool) {
    for options in [DbOptions::default(), small()] {
        let mut outcomes = Vec::new();
        for at in 0.. {
            match race_before_operation(at, &options, then_flush) {
                Some(result) => outcomes.push(result.is_ok()),
                None => break,
            }
        }
        // Both outcomes happen: early in the open the old writer still lands its write, once the
        // new writer has taken the role it is fenced.
        assert!(outcomes.first() == Some(&true), "{outcomes:?}");
        assert!(outcomes.last() == Some(&false), "{outcomes:?}");
    }
}
