//! `Manifest::decode` on arbitrary bytes, as they are and with a valid checksum appended (so the
//! structural checks are reached): never panics; a manifest it accepts re-encodes to the same
//! bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttlkv::format::{seal, Manifest};

fn check(bytes: &[u8]) {
    if let Ok(manifest) = Manifest::decode(bytes) {
        assert_eq!(manifest.encode(), bytes);
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let mut sealed = data.to_vec();
    seal(&mut sealed);
    check(&sealed);
});
