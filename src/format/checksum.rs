//! Page checksums: CRC-32 (IEEE polynomial, as computed by `crc32fast`) appended as 4 bytes
//! little-endian at the very end of every page and of the manifest.
//!
//! [`seal`] appends the checksum of everything before it; [`unseal`] checks it and hands back the
//! body. Decoders unseal first, so any damage to a page is reported as a checksum mismatch before
//! the structure is looked at.

use alloc::vec::Vec;

use crate::error::{Error, Result};

/// The size of the trailing checksum, in bytes.
pub const CHECKSUM_LEN: usize = 4;

/// The CRC-32 (IEEE) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// Append the CRC-32 of `buf` to it (4 bytes LE).
pub fn seal(buf: &mut Vec<u8>) {
    let crc = crc32(buf);
    buf.extend_from_slice(&crc.to_le_bytes());
}

/// Check the trailing CRC-32 and return the body before it.
///
/// Errors (`Corruption`): "too short to hold a checksum" for fewer than 4 bytes, "checksum
/// mismatch" when the stored and computed checksums differ.
pub fn unseal(bytes: &[u8]) -> Result<&[u8]> {
    let (body, stored) = split_checksum(bytes)?;
    if u32::from_le_bytes(*stored) == crc32(body) {
        Ok(body)
    } else {
        Err(Error::corruption("checksum mismatch"))
    }
}

/// The body before the trailing checksum, which is not checked: for pages that never left this
/// process (see `DataPage::decode_trusted`). "too short to hold a checksum" for fewer than 4
/// bytes.
pub fn unchecked_body(bytes: &[u8]) -> Result<&[u8]> {
    split_checksum(bytes).map(|(body, _)| body)
}

fn split_checksum(bytes: &[u8]) -> Result<(&[u8], &[u8; CHECKSUM_LEN])> {
    bytes
        .split_last_chunk::<CHECKSUM_LEN>()
        .ok_or_else(|| Error::corruption("too short to hold a checksum"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use alloc::vec;

    #[test]
    fn crc32_is_the_ieee_checksum() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn sealed_bytes_unseal_to_the_original_body() {
        let mut buf = vec![1u8, 2, 3];
        seal(&mut buf);
        assert_eq!(buf.len(), 7);
        assert_eq!(unseal(&buf).unwrap(), &[1, 2, 3]);
        let mut empty = Vec::new();
        seal(&mut empty);
        assert_eq!(unseal(&empty).unwrap(), &[] as &[u8]);
    }

    #[test]
    fn a_changed_byte_is_a_checksum_mismatch() {
        let mut buf = vec![1u8, 2, 3];
        seal(&mut buf);
        buf[1] ^= 0x10;
        let e = unseal(&buf).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert_eq!(e.message(), "checksum mismatch");
    }

    #[test]
    fn fewer_than_four_bytes_are_too_short() {
        for len in 0..CHECKSUM_LEN {
            let e = unseal(&vec![0u8; len]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Corruption);
            assert_eq!(e.message(), "too short to hold a checksum");
        }
    }
}
