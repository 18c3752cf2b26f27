//! The two primitives every codec in [`format`](super) is built from: a bounded [`Reader`] over a
//! byte slice, and little-endian write helpers.
//!
//! Integers are little-endian and fixed width, except the LEB128 varints of compact rows
//! ([`Reader::varint`], [`put_varint`]; the `unsigned-varint` crate, which rejects overlong
//! encodings; the reader also rejects a tenth byte above 1, whose extra bits the crate drops, so
//! each number has exactly one encoding). The reader never indexes: each read takes its
//! bytes with a checked split and returns an [`ErrorKind::Corruption`](crate::ErrorKind::Corruption)
//! error that says what was cut short, so a decoder built on it cannot read past its input.
//! This file knows nothing of rows, pages or checksums.

use alloc::format;
use alloc::vec::Vec;

use crate::error::{Error, Result};

/// A cursor over untrusted bytes. Every read either returns the bytes it asked for or a
/// `Corruption` error ("truncated `what`") and leaves the cursor where it was.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    rest: &'a [u8],
    consumed: usize,
}

fn truncated(what: &str) -> Error {
    Error::corruption(format!("truncated {what}"))
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader {
            rest: bytes,
            consumed: 0,
        }
    }

    /// How many bytes are left.
    pub fn remaining(&self) -> usize {
        self.rest.len()
    }

    /// How many bytes were read so far.
    pub fn position(&self) -> usize {
        self.consumed
    }

    /// Whether every byte was read.
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The bytes not read yet (the cursor does not move).
    pub fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// The next `len` bytes.
    pub fn bytes(&mut self, len: usize, what: &str) -> Result<&'a [u8]> {
        let (head, tail) = self
            .rest
            .split_at_checked(len)
            .ok_or_else(|| truncated(what))?;
        self.rest = tail;
        self.consumed += len;
        Ok(head)
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let (head, tail) = self
            .rest
            .split_first_chunk::<N>()
            .ok_or_else(|| truncated(what))?;
        self.rest = tail;
        self.consumed += N;
        Ok(*head)
    }

    /// The next byte.
    pub fn u8(&mut self, what: &str) -> Result<u8> {
        self.array::<1>(what).map(u8::from_le_bytes)
    }

    /// The next `u16`.
    pub fn u16(&mut self, what: &str) -> Result<u16> {
        self.array(what).map(u16::from_le_bytes)
    }

    /// The next `u32`.
    pub fn u32(&mut self, what: &str) -> Result<u32> {
        self.array(what).map(u32::from_le_bytes)
    }

    /// The next `u64`.
    pub fn u64(&mut self, what: &str) -> Result<u64> {
        self.array(what).map(u64::from_le_bytes)
    }

    /// The next `i64`.
    pub fn i64(&mut self, what: &str) -> Result<i64> {
        self.array(what).map(i64::from_le_bytes)
    }

    /// `N` reserved bytes, which must all be zero (`Corruption` "`what` are not zero" otherwise).
    pub fn zeros<const N: usize>(&mut self, what: &str) -> Result<()> {
        if self.array::<N>(what)? == [0; N] {
            Ok(())
        } else {
            Err(Error::corruption(format!("{what} are not zero")))
        }
    }

    /// Read an unsigned LEB128 varint of at most 10 bytes in its one minimal encoding.
    /// `Corruption`: "truncated `what`" if the input ends inside it, "`what` is not a minimal
    /// varint" or "`what` overflows 64 bits" otherwise.
    #[inline]
    pub fn varint(&mut self, what: &str) -> Result<u64> {
        // Most varints of a row (its key's and value's lengths) are one byte: no loop for them.
        if let Some((&byte, rest)) = self.rest.split_first() {
            if byte < 0x80 {
                self.consumed += 1;
                self.rest = rest;
                return Ok(u64::from(byte));
            }
        }
        self.varint_of_bytes(what)
    }

    /// [`varint`](Self::varint) of more than one byte (or none: the error), by the crate.
    fn varint_of_bytes(&mut self, what: &str) -> Result<u64> {
        match unsigned_varint::decode::u64(self.rest) {
            // The tenth byte holds bit 63 alone; the crate drops any higher bits it has, which
            // would give one number two encodings.
            Ok((_, rest)) if self.rest.len() - rest.len() == 10 && self.rest.get(9) > Some(&1) => {
                Err(Error::corruption(format!("{what} overflows 64 bits")))
            }
            Ok((value, rest)) => {
                self.consumed += self.rest.len() - rest.len();
                self.rest = rest;
                Ok(value)
            }
            Err(unsigned_varint::decode::Error::Insufficient) => Err(truncated(what)),
            Err(unsigned_varint::decode::Error::NotMinimal) => {
                Err(Error::corruption(format!("{what} is not a minimal varint")))
            }
            Err(_) => Err(Error::corruption(format!("{what} overflows 64 bits"))),
        }
    }

    /// A length written as `u32`, checked against the bytes left (so it can size an allocation).
    pub fn len_u32(&mut self, what: &str) -> Result<usize> {
        let len = self.u32(what)?;
        self.checked_len(u64::from(len), what)
    }

    /// A length written as `u64`, checked against the bytes left (so it can size an allocation).
    pub fn len_u64(&mut self, what: &str) -> Result<usize> {
        let len = self.u64(what)?;
        self.checked_len(len, what)
    }

    fn checked_len(&self, len: u64, what: &str) -> Result<usize> {
        match usize::try_from(len) {
            Ok(len) if len <= self.rest.len() => Ok(len),
            _ => Err(truncated(what)),
        }
    }

    /// A capacity for `count` items of at least `min_item_len` bytes each, never more than the
    /// bytes left could hold: a lying count cannot make a decoder allocate.
    pub fn capacity_for(&self, count: u64, min_item_len: usize) -> usize {
        let fits = self.rest.len() / min_item_len.max(1);
        usize::try_from(count).map_or(fits, |count| count.min(fits))
    }

    /// `Ok` if every byte was read, else a `Corruption` error naming `what` had trailing bytes.
    pub fn finish(&self, what: &str) -> Result<()> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(Error::corruption(format!(
                "{} trailing bytes after {what}",
                self.rest.len()
            )))
        }
    }
}

/// Append one byte.
pub fn put_u8(out: &mut Vec<u8>, value: u8) {
    out.push(value);
}

/// Append a `u16`, little-endian.
pub fn put_u16(out: &mut Vec<u8>, value: u16) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// Append a `u32`, little-endian.
pub fn put_u32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// Append a `u64`, little-endian.
pub fn put_u64(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// Append an `i64`, little-endian.
pub fn put_i64(out: &mut Vec<u8>, value: i64) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// Append `value` as an unsigned LEB128 varint (1 to 10 bytes, minimal).
#[inline]
pub fn put_varint(out: &mut Vec<u8>, value: u64) {
    // Byte by byte: most varints take one or two, which a copy of unknown length (a call to
    // `memmove`) costs more than. Several in a row gather in [`Fields`] instead.
    leb128(value, |byte| out.push(byte));
}

/// Hand `value`'s unsigned LEB128 bytes (1 to 10, minimal: low seven bits first, the high bit
/// set on all but the last) to `put`, one by one: the one writer of varints, for [`put_varint`]
/// and [`Fields::varint`]. Tested against the `unsigned-varint` crate, which [`Reader::varint`]
/// decodes with; writing through the crate instead (its buffer, then a copy of each byte) cost
/// 3.5 % of a single put's instructions.
#[inline]
fn leb128(mut value: u64, mut put: impl FnMut(u8)) {
    while value >= 0x80 {
        put((value as u8) | 0x80);
        value >>= 7;
    }
    put(value as u8);
}

/// The most bytes a varint takes (a `u64`: 64 bits, 7 a byte).
pub const MAX_VARINT_LEN: usize = 10;

/// Up to `N` bytes of small fields (single bytes, varints) gathered on the stack, then appended
/// to a `Vec` with one copy. A row's varints take one to six bytes each: appending them a byte at
/// a time (a capacity check per byte) or each with a copy of its own cost more than copying the
/// row's key and value (`encode_row` took about 580 instructions a row that way).
///
/// `N` is the most the caller can put in (each `varint` takes at most [`MAX_VARINT_LEN`]). A
/// caller that puts in more gets an error from [`append_to`](Self::append_to), never a field
/// with bytes missing.
pub struct Fields<const N: usize> {
    bytes: [u8; N],
    /// The bytes put in, also those past `N` (which were not kept).
    len: usize,
}

impl<const N: usize> Fields<N> {
    /// No bytes yet.
    #[inline]
    pub fn new() -> Self {
        Fields {
            bytes: [0; N],
            len: 0,
        }
    }

    /// Add one byte.
    #[inline]
    pub fn u8(&mut self, byte: u8) {
        if let Some(slot) = self.bytes.get_mut(self.len) {
            *slot = byte;
        }
        self.len += 1;
    }

    /// Add `value` as an unsigned LEB128 varint (1 to 10 bytes, minimal; see [`put_varint`]).
    #[inline]
    pub fn varint(&mut self, value: u64) {
        leb128(value, |byte| self.u8(byte));
    }

    /// Append the bytes gathered to `out`; `InvalidArgument` and nothing appended if more than
    /// `N` were put in.
    #[inline]
    pub fn append_to(&self, out: &mut Vec<u8>) -> Result<()> {
        let bytes = self.bytes.get(..self.len).ok_or_else(fields_overflow)?;
        out.extend_from_slice(bytes);
        Ok(())
    }
}

/// The error of a [`Fields`] given more bytes than its room (out of line: with the sizes the row
/// encoder uses, it never happens).
#[cold]
fn fields_overflow() -> Error {
    Error::invalid("more bytes of fields than their room")
}

impl<const N: usize> Default for Fields<N> {
    fn default() -> Self {
        Self::new()
    }
}

/// The number of bytes [`put_varint`] writes for `value`.
pub fn varint_len(value: u64) -> usize {
    // 7 bits per byte; 0 still takes one byte.
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// `value` mapped to an unsigned number that is small when `|value|` is small (0, -1, 1, -2, …
/// become 0, 1, 2, 3, …), for [`put_varint`].
pub fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// The inverse of [`zigzag`].
pub fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

/// Append a length as `u64`. A `usize` always fits on the targets Rust supports; the saturation
/// only exists so this cannot panic.
pub fn put_len_u64(out: &mut Vec<u8>, len: usize) {
    put_u64(out, u64::try_from(len).unwrap_or(u64::MAX));
}

/// Append `bytes` preceded by their length as `u64`.
pub fn put_bytes_u64(out: &mut Vec<u8>, bytes: &[u8]) {
    put_len_u64(out, bytes.len());
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use alloc::vec;

    #[test]
    fn integers_are_written_little_endian_and_read_back() {
        let mut out = Vec::new();
        put_u8(&mut out, 0xab);
        put_u16(&mut out, 0x0102);
        put_u32(&mut out, 0x0304_0506);
        put_u64(&mut out, 0x0708_090a_0b0c_0d0e);
        put_i64(&mut out, -2);
        assert_eq!(&out[..7], &[0xab, 0x02, 0x01, 0x06, 0x05, 0x04, 0x03]);
        let mut r = Reader::new(&out);
        assert_eq!(r.u8("a").unwrap(), 0xab);
        assert_eq!(r.u16("b").unwrap(), 0x0102);
        assert_eq!(r.u32("c").unwrap(), 0x0304_0506);
        assert_eq!(r.u64("d").unwrap(), 0x0708_090a_0b0c_0d0e);
        assert_eq!(r.i64("e").unwrap(), -2);
        assert_eq!(r.position(), out.len());
        r.finish("test").unwrap();
    }

    #[test]
    fn a_short_read_is_a_truncation_error_and_does_not_move_the_cursor() {
        let bytes = [1u8, 2, 3];
        let mut r = Reader::new(&bytes);
        let e = r.u32("row seq").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert_eq!(e.message(), "truncated row seq");
        assert_eq!(r.remaining(), 3);
        assert_eq!(r.bytes(3, "x").unwrap(), &bytes);
        assert!(r.is_empty());
    }

    #[test]
    fn a_length_longer_than_the_input_is_rejected_before_any_allocation() {
        let mut out = Vec::new();
        put_u64(&mut out, u64::MAX);
        put_u32(&mut out, 5);
        out.extend_from_slice(&[0; 4]);
        let mut r = Reader::new(&out);
        assert!(r.len_u64("name length").is_err());
        let mut r = Reader::new(&out[8..]);
        assert!(r.len_u32("name length").is_err());
    }

    #[test]
    fn capacity_is_bounded_by_the_bytes_left() {
        let bytes = vec![0u8; 40];
        let r = Reader::new(&bytes);
        assert_eq!(r.capacity_for(u64::MAX, 8), 5);
        assert_eq!(r.capacity_for(3, 8), 3);
        assert_eq!(r.capacity_for(7, 0), 7);
    }

    #[test]
    fn reserved_bytes_must_be_zero() {
        let mut r = Reader::new(&[0, 0, 0, 1]);
        r.zeros::<2>("reserved bytes").unwrap();
        let e = r.zeros::<2>("reserved bytes").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert_eq!(e.message(), "reserved bytes are not zero");
        assert!(Reader::new(&[0]).zeros::<2>("reserved bytes").is_err());
    }

    #[test]
    fn fields_put_in_past_their_room_are_an_error_and_append_nothing() {
        let mut out = vec![9u8];
        let mut fields = Fields::<3>::new();
        fields.u8(1);
        fields.varint(300);
        fields.append_to(&mut out).unwrap();
        assert_eq!(out, [9, 1, 0xac, 0x02]);
        fields.u8(4);
        let e = fields.append_to(&mut out).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert_eq!(out, [9, 1, 0xac, 0x02]);
    }

    #[test]
    fn varints_round_trip_in_their_minimal_length() {
        for value in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut out = vec![];
            put_varint(&mut out, value);
            assert_eq!(out.len(), varint_len(value), "{value}");
            out.push(0xaa);
            let mut r = Reader::new(&out);
            assert_eq!(r.varint("n").unwrap(), value);
            assert_eq!(r.remaining(), 1);
        }
        for value in [0, 1, -1, 63, -64, 64, i64::MAX, i64::MIN] {
            assert_eq!(unzigzag(zigzag(value)), value);
            assert!(zigzag(value) <= value.unsigned_abs().saturating_mul(2));
        }
        // What follows a short varint is not part of it, whatever its tenth byte is.
        let mut r = Reader::new(&[5, 0, 0, 0, 0, 0, 0, 0, 0, 9]);
        assert_eq!(r.varint("n").unwrap(), 5);
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn varints_agree_with_the_unsigned_varint_crate() {
        let mut values: Vec<u64> = (0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1]).collect();
        values.extend([u64::MAX, 300, 16_384, 1_700_000_000_000]);
        for value in values {
            let mut buf = unsigned_varint::encode::u64_buffer();
            let theirs = unsigned_varint::encode::u64(value, &mut buf);
            let mut ours = Vec::new();
            put_varint(&mut ours, value);
            assert_eq!(ours, theirs, "{value}");
            let mut gathered = Fields::<MAX_VARINT_LEN>::new();
            gathered.varint(value);
            let mut out = Vec::new();
            gathered.append_to(&mut out).unwrap();
            assert_eq!(out, theirs, "{value}");
        }
        // Every input of up to three bytes from a spread of byte values, and long runs: the
        // reader accepts what the crate accepts, with the same value and length, except a tenth
        // byte above 1, whose bits the crate drops.
        let bytes = [0x00, 0x01, 0x7f, 0x80, 0x81, 0xff];
        let mut inputs: Vec<Vec<u8>> = Vec::new();
        for a in bytes {
            inputs.push(vec![a]);
            for b in bytes {
                inputs.push(vec![a, b]);
                for c in bytes {
                    inputs.push(vec![a, b, c]);
                }
            }
        }
        for len in 1..=11 {
            for last in [0x00, 0x01, 0x02, 0x7f, 0x80] {
                let mut input = vec![0xff; len - 1];
                input.push(last);
                inputs.push(input);
            }
        }
        for input in inputs {
            let mut r = Reader::new(&input);
            let ours = r.varint("n").ok().map(|v| (v, r.position()));
            let theirs = unsigned_varint::decode::u64(&input)
                .ok()
                .map(|(v, rest)| (v, input.len() - rest.len()))
                .filter(|&(_, used)| used < 10 || input.get(9) <= Some(&1));
            assert_eq!(ours, theirs, "{input:x?}");
        }
    }

    #[test]
    fn a_bad_varint_is_corruption_and_does_not_move_the_cursor() {
        let cases: [(&[u8], &str); 4] = [
            (&[0x80, 0x80], "truncated seq"),
            (&[0x80, 0x00], "seq is not a minimal varint"),
            (&[0xff; 11], "seq overflows 64 bits"),
            (
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
                "seq overflows 64 bits",
            ),
        ];
        for (bytes, message) in cases {
            let mut r = Reader::new(bytes);
            let e = r.varint("seq").unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Corruption);
            assert_eq!(e.message(), message);
            assert_eq!(r.position(), 0);
        }
    }

    #[test]
    fn trailing_bytes_are_reported() {
        let r = Reader::new(&[0u8; 2]);
        let e = r.finish("manifest").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert_eq!(e.message(), "2 trailing bytes after manifest");
    }
}
