//! `decode_row` on arbitrary bytes: never panics, and a row it accepts re-encodes to exactly the
//! bytes it consumed. The first input byte picks the row features.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ttlkv::format::{decode_row, encode_row, RowFeatures};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let features = match selector & 3 {
        0 => RowFeatures::V1_BASE,
        1 => RowFeatures::V1_WITH_EXPIRY,
        2 => RowFeatures::COMPACT_BASE,
        _ => RowFeatures::COMPACT_WITH_EXPIRY,
    };
    if let Ok((row, used)) = decode_row(bytes, features) {
        let mut again = Vec::new();
        encode_row(&mut again, features, &row).expect("a decoded row re-encodes");
        assert_eq!(again.as_slice(), &bytes[..used]);
    }
});
