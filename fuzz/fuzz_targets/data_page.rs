//! `DataPage::decode` on arbitrary bytes, as they are and with a valid checksum appended (so the
//! structural checks are reached): never panics; a page it accepts answers every accessor and
//! rebuilds to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttlkv::format::{seal, DataPage, DataPageBuilder, Row};

fn check(bytes: Vec<u8>) {
    let Ok(page) = DataPage::decode(bytes.clone()) else {
        return;
    };
    let rows: Vec<Row> = page
        .rows()
        .map(|r| r.expect("rows of a verified page decode").to_row())
        .collect();
    let mut builder = DataPageBuilder::new(page.row_features());
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(
            page.key(i).expect("keys of a verified page decode"),
            row.key
        );
        let at = page
            .lower_bound(&row.key)
            .expect("lower_bound on a verified page");
        assert!(at <= i);
        assert_eq!(page.key(at).expect("in range"), row.key);
        builder
            .push(&row.as_ref())
            .expect("a verified page's rows are in order");
    }
    assert!(page.row(page.len()).is_err());
    assert_eq!(builder.finish(), bytes);
}

fuzz_target!(|data: &[u8]| {
    check(data.to_vec());
    let mut sealed = data.to_vec();
    seal(&mut sealed);
    check(sealed);
});
