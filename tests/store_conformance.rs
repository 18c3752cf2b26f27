//! Every native page store passes the conformance suite (`ttlkv::store::conformance`), each
//! behaviour on a fresh store.

use std::collections::BTreeSet;
use std::rc::Rc;

use futures::executor::block_on;
use ttlkv::store::conformance::{run_all, BEHAVIOURS};
use ttlkv::store::{FaultPlan, FaultyStore, MemoryStore};

#[test]
fn behaviour_names_are_unique() {
    let unique: BTreeSet<_> = BEHAVIOURS.iter().collect();
    assert_eq!(unique.len(), BEHAVIOURS.len());
}

#[test]
fn memory_store_conforms() {
    let ran = block_on(run_all(MemoryStore::new));
    assert_eq!(ran, BEHAVIOURS.len());
}

#[test]
fn memory_store_with_latency_conforms() {
    let ran = block_on(run_all(|| MemoryStore::new().with_latency(3)));
    assert_eq!(ran, BEHAVIOURS.len());
}

#[test]
fn faulty_store_with_an_empty_plan_conforms() {
    let ran = block_on(run_all(|| {
        FaultyStore::new(MemoryStore::new(), FaultPlan::default())
    }));
    assert_eq!(ran, BEHAVIOURS.len());
}

#[test]
fn faulty_store_with_an_empty_plan_over_latency_conforms() {
    let ran = block_on(run_all(|| {
        FaultyStore::new(MemoryStore::new().with_latency(2), FaultPlan::default())
    }));
    assert_eq!(ran, BEHAVIOURS.len());
}

#[test]
fn shared_memory_store_conforms() {
    let ran = block_on(run_all(|| Rc::new(MemoryStore::new())));
    assert_eq!(ran, BEHAVIOURS.len());
}
