//! The packed form of a batch, as `PackedBatch` in `bindings/js/codec.js` builds it: one buffer
//! of every op's key bytes, then (for a put) its tagged value bytes, back to back, and six numbers
//! per op (`BATCH_OP_FIELDS`): `[type (`BATCH_PUT` or `BATCH_DELETE`), key length, value length,
//! TTL kind, TTL argument, condition]`. A batch crosses into WebAssembly memory in one copy this way, instead of two
//! typed arrays per op. Every length is checked against the bytes actually there: a table that
//! does not add up is an `INVALID_ARGUMENT`, never a panic.

use ttlkv::{PutOptions, WriteBatch};

use super::args::{condition_of, int, small, ttl_of};
use super::call::{invalid, JsResult};
use crate::protocol::{BATCH_DELETE, BATCH_OP_FIELDS, BATCH_PUT};

/// The [`WriteBatch`] that `bytes` and `ops` describe.
pub(super) fn unpack(bytes: &[u8], ops: &[f64]) -> JsResult<WriteBatch> {
    if ops.len() % BATCH_OP_FIELDS != 0 {
        return Err(invalid(
            "a packed batch's op table must hold six numbers per op",
        ));
    }
    let mut batch = WriteBatch::new();
    let mut rest = bytes;
    for op in ops.chunks_exact(BATCH_OP_FIELDS) {
        let key = take(&mut rest, op[1])?;
        match small(op[0], "batch op type")? {
            BATCH_PUT => {
                let value = take(&mut rest, op[2])?;
                let options = PutOptions {
                    ttl: ttl_of(op[3], op[4])?,
                    condition: condition_of(op[5])?,
                };
                batch.put_with_options(key, value, options);
            }
            BATCH_DELETE => {
                if op[2] != 0.0 {
                    return Err(invalid("a packed delete has no value"));
                }
                batch.delete(key);
            }
            _ => return Err(invalid("unknown batch op type")),
        }
    }
    if !rest.is_empty() {
        return Err(invalid(
            "a packed batch holds bytes that no op accounts for",
        ));
    }
    Ok(batch)
}

/// The next `length` bytes of `rest`, which moves past them.
fn take<'a>(rest: &mut &'a [u8], length: f64) -> JsResult<&'a [u8]> {
    let length = int(length, "a packed batch's length")?;
    let length = usize::try_from(length)
        .ok()
        .filter(|&n| n <= rest.len())
        .ok_or_else(|| invalid("a packed batch's lengths run past its bytes"))?;
    let (head, tail) = rest.split_at(length);
    *rest = tail;
    Ok(head)
}
