//! The one definition of what the npm package's JavaScript and this crate agree on: the numbers
//! that encode options on a call (TTL kinds, put conditions, expire-condition bits, batch ops),
//! the tag byte in front of every stored value, the size limits, and the error codes.
//!
//! `bindings/js/protocol.js` is generated from this file ([`javascript`]); the JS side imports
//! every such number from there and spells none itself. The test `protocol_is_one_definition`
//! (`bindings/web/tests/`) fails when the file differs from what this module generates, or when
//! `index.d.ts` lists other error codes; `TTLKV_WRITE_PROTOCOL=1` rewrites the file.

/// Declares each constant and a table of (name, value) for [`javascript`].
macro_rules! numbers {
    ($table:ident: $( $(#[doc = $doc:expr])* $name:ident: $ty:ty = $value:expr; )*) => {
        $( $(#[doc = $doc])* pub const $name: $ty = $value; )*
        const $table: &[(&str, u64)] = &[$((stringify!($name), $value as u64)),*];
    };
}

numbers! { TTL_KINDS:
    /// The database's (or namespace's) default TTL.
    TTL_DEFAULT: u8 = 0;
    /// No expiry (`noExpiry`; `persist` for `getEx`).
    TTL_NO_EXPIRY: u8 = 1;
    /// Expire the argument's milliseconds from now (`ttlMs`).
    TTL_AFTER_MS: u8 = 2;
    /// Expire at the argument, in ms since the epoch (`expireAt`).
    TTL_AT: u8 = 3;
    /// Keep the key's current expiry (`keepTtl`).
    TTL_KEEP: u8 = 4;
}

numbers! { PUT_CONDITIONS:
    /// Write whether or not the key exists.
    PUT_ALWAYS: u8 = 0;
    /// Write only if the key is absent (`ifAbsent`, Redis `NX`).
    PUT_IF_ABSENT: u8 = 1;
    /// Write only if the key is present (`ifPresent`, Redis `XX`).
    PUT_IF_PRESENT: u8 = 2;
}

numbers! { EXPIRE_BITS:
    /// `expire` only if the key has no expiry.
    EXPIRE_NX: u8 = 1;
    /// `expire` only if the key has an expiry.
    EXPIRE_XX: u8 = 2;
    /// `expire` only if the new expiry is later.
    EXPIRE_GT: u8 = 4;
    /// `expire` only if the new expiry is earlier.
    EXPIRE_LT: u8 = 8;
}

numbers! { BATCH_OPS:
    /// A put in a packed batch's op table.
    BATCH_PUT: u8 = 0;
    /// A delete in a packed batch's op table.
    BATCH_DELETE: u8 = 1;
    /// Numbers per op in a packed batch's op table: type, key length, value length, TTL kind,
    /// TTL argument, condition.
    BATCH_OP_FIELDS: usize = 6;
}

numbers! { VALUE_TAGS:
    /// The value is UTF-8 text (a JS string).
    VALUE_STRING: u8 = 0;
    /// The value is bytes (a `Uint8Array`).
    VALUE_BYTES: u8 = 1;
    /// The value is JSON text.
    VALUE_JSON: u8 = 2;
    /// The bits of the tag byte that hold the value's type.
    VALUE_TAG_MASK: u8 = 0x7f;
    /// The bit of the tag byte set when the key was given as a string.
    KEY_WAS_STRING: u8 = 0x80;
    /// Bytes in front of every stored value (the tag).
    VALUE_HEADER_BYTES: usize = 1;
}

numbers! { LIMITS:
    /// The longest key, in bytes.
    MAX_KEY_BYTES: usize = ttlkv::MAX_KEY_LEN;
    /// The longest value, in bytes.
    MAX_VALUE_BYTES: usize = ttlkv::MAX_VALUE_LEN;
    /// The longest TTL a JS caller may give, in ms: 2^53 - 1 (the largest integer a JS number
    /// holds exactly) less the last plausible time (the end of the year 9999), so that every
    /// expiry, now + TTL, reads back in JS as the time it is (about 277,000 years).
    MAX_JS_TTL_MS: u64 = (9_007_199_254_740_991 - ttlkv::clock::MAX_PLAUSIBLE_MS) as u64;
}

/// The text of `bindings/js/protocol.js`.
pub fn javascript() -> String {
    let mut js = String::from(
        "// What the JavaScript entry and the engine agree on: generated from\n\
         // bindings/web/src/protocol.rs, which documents each name. Do not edit: the test\n\
         // protocol_is_one_definition fails when this file differs from what that module\n\
         // generates, and `TTLKV_WRITE_PROTOCOL=1 cargo test -p ttlkv-web --test\n\
         // protocol_is_one_definition` rewrites it.\n",
    );
    let groups = [
        ("TTL kinds", TTL_KINDS),
        ("put conditions", PUT_CONDITIONS),
        ("expire-condition bits", EXPIRE_BITS),
        ("packed batches", BATCH_OPS),
        ("the tag byte of a stored value", VALUE_TAGS),
        ("limits", LIMITS),
    ];
    for (title, table) in groups {
        js.push_str(&format!("\n// {title}\n"));
        for (name, value) in table {
            js.push_str(&format!("export const {name} = {value};\n"));
        }
    }
    js.push_str("\n/** The stable error codes (`TtlKvError.code`). */\nexport const CODES = Object.freeze([\n");
    for code in error_codes() {
        js.push_str(&format!("  \"{code}\",\n"));
    }
    js.push_str("]);\n");
    js
}

/// Every error code, in [`ttlkv::ErrorKind::ALL`]'s order.
pub fn error_codes() -> Vec<&'static str> {
    ttlkv::ErrorKind::ALL.iter().map(|k| k.code()).collect()
}
