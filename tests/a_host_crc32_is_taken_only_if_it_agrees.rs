//! The host's CRC-32 (`format::checksum::use_host_crc32`, feature `host-crc32`): taken only if it
//! gives the checksums this crate's own does, used only for long inputs, and a `None` from it
//! falls back to this crate's own. One test, in a binary of its own: the host taken stays for
//! the life of the process. `cargo test -p ttlkv --features host-crc32 --test
//! a_host_crc32_is_taken_only_if_it_agrees` (scripts/test.sh runs it).
#![cfg(feature = "host-crc32")]

use std::sync::atomic::{AtomicUsize, Ordering};

use ttlkv::format::checksum::{crc32, use_host_crc32, HOST_CRC32_FROM};

/// The standard CRC-32 (IEEE), from another implementation than the crate's.
const IEEE: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);

static CALLS: AtomicUsize = AtomicUsize::new(0);
static DECLINE: AtomicUsize = AtomicUsize::new(0);

fn off_by_one_bit(bytes: &[u8]) -> Option<u32> {
    Some(IEEE.checksum(bytes) ^ 1)
}

fn wrong_for_long_inputs_only(bytes: &[u8]) -> Option<u32> {
    let sum = IEEE.checksum(bytes);
    Some(if bytes.len() > 2 * HOST_CRC32_FROM {
        !sum
    } else {
        sum
    })
}

fn counted(bytes: &[u8]) -> Option<u32> {
    CALLS.fetch_add(1, Ordering::SeqCst);
    if DECLINE.load(Ordering::SeqCst) != 0 {
        return None;
    }
    Some(IEEE.checksum(bytes))
}

fn also_right(bytes: &[u8]) -> Option<u32> {
    Some(IEEE.checksum(bytes))
}

#[test]
fn a_host_crc32_is_taken_only_if_it_agrees_and_only_for_long_inputs() {
    let bytes: Vec<u8> = (0..5 * HOST_CRC32_FROM as u32)
        .map(|i| (i.wrapping_mul(40_503) >> 5) as u8)
        .collect();
    let long = &bytes[..HOST_CRC32_FROM + 3];

    assert!(
        !use_host_crc32(off_by_one_bit),
        "a host that is always wrong is refused"
    );
    assert!(
        !use_host_crc32(wrong_for_long_inputs_only),
        "a host wrong only for inputs past twice the bound is refused"
    );
    assert_eq!(
        crc32(long),
        IEEE.checksum(long),
        "refused hosts leave the checksums alone"
    );

    assert!(use_host_crc32(counted), "a host that agrees is taken");
    let before = CALLS.load(Ordering::SeqCst);
    assert_eq!(crc32(long), IEEE.checksum(long));
    assert_eq!(crc32(&bytes), IEEE.checksum(&bytes));
    assert_eq!(
        CALLS.load(Ordering::SeqCst),
        before + 2,
        "long inputs go to the host"
    );
    let short = &bytes[..HOST_CRC32_FROM - 1];
    assert_eq!(crc32(short), IEEE.checksum(short));
    assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    assert_eq!(
        CALLS.load(Ordering::SeqCst),
        before + 2,
        "short inputs stay with the crate's own"
    );

    DECLINE.store(1, Ordering::SeqCst);
    assert_eq!(
        crc32(long),
        IEEE.checksum(long),
        "a host that declines falls back"
    );
    DECLINE.store(0, Ordering::SeqCst);

    assert!(!use_host_crc32(also_right), "the first host taken stays");
    let before = CALLS.load(Ordering::SeqCst);
    assert_eq!(crc32(long), IEEE.checksum(long));
    assert_eq!(CALLS.load(Ordering::SeqCst), before + 1);
}
