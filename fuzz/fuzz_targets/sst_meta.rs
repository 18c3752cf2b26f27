//! `SstMeta::decode` on arbitrary bytes, as they are and with a valid checksum appended (so the
//! structural and consistency checks are reached): never panics; metadata it accepts re-encodes
//! to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttlkv::format::{seal, SstMeta};

fn check(bytes: &[u8]) {
    if let Ok(meta) = SstMeta::decode(bytes) {
        assert_eq!(meta.encode(), bytes);
        let share = meta.expired_share_at(i64::MAX);
        assert!((0.0..=1.0).contains(&share));
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let mut sealed = data.to_vec();
    seal(&mut sealed);
    check(&sealed);
});
