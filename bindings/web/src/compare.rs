//! `memcmp` and `bcmp` for the wasm build, eight bytes at a step.
//!
//! The engine compares its keys through its key order (`ttlkv::format::key_order`), which skips
//! equal eight-byte words and finds the first differing byte within the first word that
//! differs; every other comparison of byte strings (a slice's `==` or `cmp`, in the engine, its
//! dependencies and this binding) ends in `memcmp` or `bcmp`. The wasm target's own (from
//! `compiler_builtins`) walk one byte at a time, and keys share long prefixes (`session:0001…`),
//! so most of a comparison was the prefix: these are the key order too (memory ingest of 100k
//! puts 188k → 227k ops/s when they first compared words). The exported symbols, in the wasm
//! build only, take the place of `compiler_builtins`' weak ones.

use ttlkv::format::key_order::compare_keys;

/// The C `memcmp` of two slices of one length: below 0, 0 or above 0 as the first differing
/// byte of `a` is below, equal to or above `b`'s. The engine's own key order
/// ([`compare_keys`]), which compares without slice comparisons (those would call `memcmp`
/// again).
fn compare(a: &[u8], b: &[u8]) -> i32 {
    compare_keys(a, b) as i32
}

/// `a` and `b` as slices of `n` bytes.
///
/// # Safety
/// For `n > 0`, both must be valid for reads of `n` bytes, and not written while the slices live.
#[cfg(target_arch = "wasm32")]
unsafe fn slices<'a>(a: *const u8, b: *const u8, n: usize) -> (&'a [u8], &'a [u8]) {
    if n == 0 {
        return (&[], &[]);
    }
    // SAFETY: the caller's contract; `n > 0`, so the pointers are not null.
    unsafe {
        (
            core::slice::from_raw_parts(a, n),
            core::slice::from_raw_parts(b, n),
        )
    }
}

/// The C `memcmp`.
///
/// # Safety
/// `a` and `b` must be valid for reads of `n` bytes.
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's contract.
    let (a, b) = unsafe { slices(a, b, n) };
    compare(a, b)
}

/// The C `bcmp`: 0 if the `n` bytes of `a` and `b` are equal, else not 0.
///
/// # Safety
/// `a` and `b` must be valid for reads of `n` bytes.
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's contract.
    let (a, b) = unsafe { slices(a, b, n) };
    compare(a, b)
}

#[cfg(test)]
mod tests {
    use super::compare;

    /// What `memcmp` must answer: the sign of the first difference, byte by byte.
    fn bytewise(a: &[u8], b: &[u8]) -> i32 {
        a.iter()
            .zip(b)
            .find(|(x, y)| x != y)
            .map_or(0, |(x, y)| (i32::from(*x) - i32::from(*y)).signum())
    }

    #[test]
    fn compare_answers_as_a_bytewise_memcmp_at_every_length_and_difference() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n).map(|i| (i * 7 % 251) as u8).collect();
            assert_eq!(compare(&a, &a), 0, "equal, {n} bytes");
            for at in 0..n {
                for delta in [1u8, 0x80, 0xff] {
                    let mut b = a.clone();
                    b[at] = b[at].wrapping_add(delta);
                    // A later difference must not change the answer.
                    if at + 1 < n {
                        b[n - 1] ^= 0x5a;
                    }
                    assert_eq!(
                        compare(&a, &b).signum(),
                        bytewise(&a, &b),
                        "n {n}, first difference at {at}"
                    );
                    assert_eq!(
                        compare(&b, &a).signum(),
                        bytewise(&b, &a),
                        "n {n}, first difference at {at}"
                    );
                }
            }
        }
    }
}
