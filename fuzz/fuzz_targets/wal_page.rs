//! `decode_wal_page` on arbitrary bytes, as they are and with a valid checksum appended (so the
//! structural checks are reached): never panics; a page it accepts re-encodes to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttlkv::format::{decode_wal_page, encode_wal_batch, encode_wal_page, seal, Row, RowRef};

fn check(bytes: &[u8]) {
    let Ok(batches) = decode_wal_page(bytes) else {
        return;
    };
    let mut body = Vec::new();
    for batch in &batches {
        let rows: Vec<RowRef<'_>> = batch.iter().map(Row::as_ref).collect();
        encode_wal_batch(&mut body, &rows).expect("decoded rows re-encode");
    }
    let count = u32::try_from(batches.len()).expect("the count came from a u32");
    assert_eq!(encode_wal_page(&body, count), bytes);
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let mut sealed = data.to_vec();
    seal(&mut sealed);
    check(&sealed);
});
