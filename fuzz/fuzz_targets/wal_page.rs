//! `decode_wal_page` on arbitrary bytes, as they are and with a valid checksum appended (so the
//! structural checks are reached): never panics; a page it accepts re-encodes to the same bytes
//! (one of an earlier writer, row features byte 0, to a current page of the same batches).
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
    let again = encode_wal_page(&body, count);
    if bytes.get(5) == Some(&0) {
        assert_eq!(decode_wal_page(&again).expect("a current page decodes"), batches);
    } else {
        assert_eq!(again, bytes);
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let mut sealed = data.to_vec();
    seal(&mut sealed);
    check(&sealed);
});
