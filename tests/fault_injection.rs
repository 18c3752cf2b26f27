//! `FaultyStore` does exactly what each `FaultPlan` field says: 1-based counts since the plan was
//! set, failures that leave the store usable, and crashes that leave the inner store as before or
//! as after the fatal commit and kill the store for good.

use futures::executor::block_on;
use futures::FutureExt;
use ttlkv::store::{
    Commit, FaultPlan, FaultyStore, ManifestRecord, MemoryStore, PageId, PageKind, PageStore,
};
use ttlkv::{Error, ErrorKind};

/// Commit number `n` of a simple workload: manifest `n - 1` to `n`, plus WAL page `n`.
fn step(n: u64) -> Commit {
    Commit {
        expected_manifest_version: n - 1,
        manifest: Some(ManifestRecord {
            version: n,
            bytes: format!("m{n}").into_bytes(),
        }),
        puts: vec![(PageId::wal(n), vec![n as u8; 10])],
        deletes: vec![],
    }
}

fn faulty(plan: FaultPlan) -> FaultyStore<MemoryStore> {
    FaultyStore::new(MemoryStore::new(), plan)
}

fn version(store: &dyn PageStore) -> u64 {
    block_on(store.read_manifest())
        .expect("read_manifest")
        .map_or(0, |m| m.version)
}

fn assert_injected_failure(result: Result<impl std::fmt::Debug, Error>) {
    let e = result.expect_err("the operation must fail");
    assert_eq!(e.kind(), ErrorKind::Storage, "{e}");
    assert!(e.message().contains("injected failure"), "{e}");
}

fn assert_crashed(result: Result<impl std::fmt::Debug, Error>) {
    let e = result.expect_err("the operation must fail");
    assert_eq!(e.kind(), ErrorKind::Storage, "{e}");
    assert!(e.message().contains("crashed"), "{e}");
}

#[test]
fn an_empty_plan_passes_everything_through_and_counts() {
    let store = faulty(FaultPlan::default());
    block_on(store.commit(step(1))).unwrap();
    assert_eq!(
        block_on(store.get_page(PageId::wal(1))).unwrap(),
        Some(vec![1; 10])
    );
    assert_eq!(
        block_on(store.list_pages(PageKind::Wal)).unwrap(),
        [PageId::wal(1)]
    );
    block_on(store.commit(step(2))).unwrap();
    assert_eq!(version(&store), 2);

    assert_eq!(store.ops(), 5);
    assert_eq!(store.commits_attempted(), 2);
    assert!(!store.is_crashed());
    assert_eq!(store.inner().commits(), 2);
}

#[test]
fn fail_op_fails_exactly_the_nth_operation_of_any_kind() {
    let store = faulty(FaultPlan {
        fail_op: Some(3),
        ..FaultPlan::default()
    });
    block_on(store.read_manifest()).unwrap();
    block_on(store.list_pages(PageKind::SstData)).unwrap();
    assert_injected_failure(block_on(store.get_page(PageId::wal(1))));
    block_on(store.get_page(PageId::wal(1))).unwrap();
    assert_eq!(store.ops(), 4);
    assert!(!store.is_crashed());
}

#[test]
fn fail_op_on_a_commit_does_not_apply_it_and_the_store_keeps_working() {
    let store = faulty(FaultPlan {
        fail_op: Some(2),
        ..FaultPlan::default()
    });
    assert_eq!(version(&store), 0);
    assert_injected_failure(block_on(store.commit(step(1))));
    assert_eq!(version(store.inner()), 0, "a failed commit must not land");
    assert_eq!(store.inner().page_count(), 0);

    block_on(store.commit(step(1))).expect("the store keeps working after a failure");
    assert_eq!(version(store.inner()), 1);
}

#[test]
fn fail_commit_fails_the_nth_commit_and_reads_do_not_count() {
    let store = faulty(FaultPlan {
        fail_commit: Some(2),
        ..FaultPlan::default()
    });
    block_on(store.commit(step(1))).unwrap();
    for _ in 0..3 {
        block_on(store.read_manifest()).unwrap();
    }
    assert_injected_failure(block_on(store.commit(step(2))));
    assert_eq!(version(store.inner()), 1, "the failed commit must not land");
    assert_eq!(
        block_on(store.inner().get_page(PageId::wal(2))).unwrap(),
        None
    );

    block_on(store.commit(step(2))).expect("a retry is the third commit and passes");
    assert_eq!(version(&store), 2);
    assert_eq!(store.commits_attempted(), 3);
    assert!(!store.is_crashed());
}

#[test]
fn quota_on_commit_fails_the_nth_commit_with_quota_exceeded() {
    let store = faulty(FaultPlan {
        quota_on_commit: Some(1),
        ..FaultPlan::default()
    });
    let e = block_on(store.commit(step(1))).expect_err("the first commit must fail");
    assert_eq!(e.kind(), ErrorKind::QuotaExceeded, "{e}");
    assert_eq!(store.inner().stored_bytes(), 0, "nothing may be written");

    assert_eq!(version(&store), 0, "reads keep working");
    block_on(store.commit(step(1))).expect("the second commit passes");
    assert_eq!(version(store.inner()), 1);
}

#[test]
fn crash_before_commit_leaves_the_inner_store_as_before_that_commit() {
    let store = faulty(FaultPlan {
        crash_before_commit: Some(3),
        ..FaultPlan::default()
    });
    block_on(store.commit(step(1))).unwrap();
    block_on(store.commit(step(2))).unwrap();
    assert_crashed(block_on(store.commit(step(3))));
    assert!(store.is_crashed());

    let disk = store.inner().clone();
    drop(store);
    assert_eq!(version(&disk), 2);
    assert_eq!(block_on(disk.get_page(PageId::wal(3))).unwrap(), None);
    assert_eq!(
        block_on(disk.list_pages(PageKind::Wal)).unwrap(),
        [PageId::wal(1), PageId::wal(2)]
    );

    block_on(disk.commit(step(3))).expect("the reopened store takes the commit again");
    assert_eq!(version(&disk), 3);
}

#[test]
fn crash_after_commit_leaves_the_inner_store_as_after_that_commit() {
    let store = faulty(FaultPlan {
        crash_after_commit: Some(2),
        ..FaultPlan::default()
    });
    block_on(store.commit(step(1))).unwrap();
    assert_crashed(block_on(store.commit(step(2))));
    assert!(store.is_crashed());

    let disk = store.inner();
    assert_eq!(version(disk), 2, "the fatal commit must have landed");
    assert_eq!(
        block_on(disk.get_page(PageId::wal(2))).unwrap(),
        Some(vec![2; 10])
    );
}

#[test]
fn fail_after_commit_lands_the_commit_reports_an_error_and_the_store_keeps_working() {
    let store = faulty(FaultPlan {
        fail_after_commit: Some(2),
        ..FaultPlan::default()
    });
    block_on(store.commit(step(1))).unwrap();
    assert_injected_failure(block_on(store.commit(step(2))));
    assert!(!store.is_crashed());
    assert_eq!(
        version(&store),
        2,
        "the commit reported failed must have landed"
    );
    assert_eq!(
        block_on(store.get_page(PageId::wal(2))).unwrap(),
        Some(vec![2; 10])
    );
    block_on(store.commit(step(3))).expect("the store goes on working");
    assert_eq!(version(store.inner()), 3);
}

#[test]
fn fail_after_a_commit_the_inner_store_rejects_gives_the_inner_error() {
    let store = faulty(FaultPlan {
        fail_after_commit: Some(1),
        ..FaultPlan::default()
    });
    let e = block_on(store.commit(step(2))).expect_err("a fenced commit fails");
    assert_eq!(e.kind(), ErrorKind::Fenced, "{e}");
    assert_eq!(version(store.inner()), 0, "the fenced commit must not land");
}

#[test]
fn crash_after_a_commit_the_inner_store_rejects_still_kills_the_store() {
    let store = faulty(FaultPlan {
        crash_after_commit: Some(1),
        ..FaultPlan::default()
    });
    assert_crashed(block_on(store.commit(step(2))));
    assert!(store.is_crashed());
    assert_eq!(version(store.inner()), 0, "the fenced commit must not land");
}

#[test]
fn a_crashed_store_fails_every_call_of_every_kind() {
    for plan in [
        FaultPlan {
            crash_before_commit: Some(1),
            ..FaultPlan::default()
        },
        FaultPlan {
            crash_after_commit: Some(1),
            ..FaultPlan::default()
        },
    ] {
        let store = faulty(plan.clone());
        assert_crashed(block_on(store.commit(step(1))));
        let landed = version(store.inner());

        assert_crashed(block_on(store.read_manifest()));
        assert_crashed(block_on(store.get_page(PageId::wal(1))));
        assert_crashed(block_on(store.list_pages(PageKind::Wal)));
        assert_crashed(block_on(store.commit(step(landed + 1))));
        assert_crashed(block_on(store.clone().read_manifest()));

        store.set_plan(FaultPlan::default());
        assert!(
            store.is_crashed(),
            "a new plan must not revive a dead store"
        );
        assert_crashed(block_on(store.read_manifest()));
        assert_eq!(
            version(store.inner()),
            landed,
            "nothing may reach the disk after the crash ({plan:?})"
        );
    }
}

#[test]
fn a_crash_drops_operations_still_in_flight() {
    let store = FaultyStore::new(
        MemoryStore::new().with_latency(2),
        FaultPlan {
            crash_before_commit: Some(2),
            ..FaultPlan::default()
        },
    );
    let mut in_flight = store.commit(step(1));
    let mut read_in_flight = store.read_manifest();
    assert!(
        (&mut in_flight).now_or_never().is_none(),
        "the commit is in flight"
    );
    assert!(
        (&mut read_in_flight).now_or_never().is_none(),
        "the read is in flight"
    );
    let fatal = store.commit(step(2));
    assert_crashed(block_on(fatal));
    assert_crashed(block_on(in_flight));
    assert_crashed(block_on(read_in_flight));
    assert_eq!(
        version(store.inner()),
        0,
        "a commit not yet complete at the crash never lands"
    );
}

#[test]
fn counting_is_one_based() {
    let first = Some(1);
    let plans = [
        FaultPlan {
            fail_op: first,
            ..FaultPlan::default()
        },
        FaultPlan {
            fail_commit: first,
            ..FaultPlan::default()
        },
        FaultPlan {
            crash_before_commit: first,
            ..FaultPlan::default()
        },
        FaultPlan {
            crash_after_commit: first,
            ..FaultPlan::default()
        },
        FaultPlan {
            quota_on_commit: first,
            ..FaultPlan::default()
        },
        FaultPlan {
            fail_after_commit: first,
            ..FaultPlan::default()
        },
    ];
    for plan in plans {
        let store = faulty(plan.clone());
        assert!(
            block_on(store.commit(step(1))).is_err(),
            "{plan:?} must fail the very first commit"
        );
    }
    let never = faulty(FaultPlan {
        fail_op: Some(0),
        fail_commit: Some(0),
        crash_before_commit: Some(0),
        crash_after_commit: Some(0),
        quota_on_commit: Some(0),
        fail_after_commit: Some(0),
    });
    for n in 1..=3 {
        block_on(never.commit(step(n))).expect("a count of 0 never matches");
    }
}

#[test]
fn set_plan_restarts_the_counts() {
    let store = faulty(FaultPlan::default());
    block_on(store.commit(step(1))).unwrap();
    block_on(store.read_manifest()).unwrap();
    assert_eq!((store.ops(), store.commits_attempted()), (2, 1));

    store.set_plan(FaultPlan {
        fail_commit: Some(1),
        ..FaultPlan::default()
    });
    assert_eq!((store.ops(), store.commits_attempted()), (0, 0));
    assert_injected_failure(block_on(store.commit(step(2))));
    block_on(store.commit(step(2))).unwrap();
}

#[test]
fn clones_share_the_plan_the_counts_and_the_crash() {
    let store = faulty(FaultPlan {
        crash_before_commit: Some(2),
        ..FaultPlan::default()
    });
    let other = store.clone();
    block_on(store.commit(step(1))).unwrap();
    assert_crashed(block_on(other.commit(step(2))));
    assert_eq!(store.commits_attempted(), 2);
    assert!(store.is_crashed());
    assert_crashed(block_on(store.read_manifest()));
}

#[test]
fn when_faults_name_the_same_call_the_documented_order_decides() {
    let store = faulty(FaultPlan {
        fail_op: Some(1),
        crash_before_commit: Some(1),
        ..FaultPlan::default()
    });
    assert_injected_failure(block_on(store.commit(step(1))));
    assert!(
        !store.is_crashed(),
        "fail_op comes before crash_before_commit"
    );

    let store = faulty(FaultPlan {
        fail_commit: Some(1),
        quota_on_commit: Some(1),
        crash_after_commit: Some(1),
        ..FaultPlan::default()
    });
    assert_injected_failure(block_on(store.commit(step(1))));
    assert!(
        !store.is_crashed(),
        "fail_commit comes before crash_after_commit"
    );
}

/// The shape of a crash test: run the workload once per commit point, crash there, and check what
/// the disk holds.
#[test]
fn every_commit_point_leaves_the_disk_as_before_or_as_after_it() {
    const STEPS: u64 = 5;
    let workload = |store: &FaultyStore<MemoryStore>| -> Result<(), Error> {
        for n in 1..=STEPS {
            block_on(store.commit(step(n)))?;
        }
        Ok(())
    };
    for point in 1..=STEPS {
        let before = faulty(FaultPlan {
            crash_before_commit: Some(point),
            ..FaultPlan::default()
        });
        assert_crashed(workload(&before));
        assert_eq!(version(before.inner()), point - 1);
        assert_eq!(before.inner().page_count(), (point - 1) as usize);

        let after = faulty(FaultPlan {
            crash_after_commit: Some(point),
            ..FaultPlan::default()
        });
        assert_crashed(workload(&after));
        assert_eq!(version(after.inner()), point);
        assert_eq!(after.inner().page_count(), point as usize);
    }
    let beyond = faulty(FaultPlan {
        crash_before_commit: Some(STEPS + 1),
        ..FaultPlan::default()
    });
    workload(&beyond).expect("a crash point past the last commit never fires");
    assert_eq!(beyond.commits_attempted(), STEPS);
}
