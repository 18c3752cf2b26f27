//! Page checksums: CRC-32 (IEEE polynomial, CRC-32/ISO-HDLC) appended as 4 bytes little-endian
//! at the very end of every page and of the manifest. Natively `crc32fast` computes it (with
//! carry-less multiplication where the CPU has it); in wasm, `crc` slicing by sixteen, its 16 KiB
//! of tables built on first use: crc32fast's tables are compiled in, 17 KB of the gzipped module
//! (tables do not compress), while these cost 0.8 KB of code. Sixteen bytes a step instead of one:
//! memory ingest of 100k puts 221k -> 249k ops/s.
//!
//! [`seal`] appends the checksum of everything before it; [`unseal`] checks it and hands back the
//! body. Decoders unseal first, so any damage to a page is reported as a checksum mismatch before
//! the structure is looked at.

use alloc::vec::Vec;

use crate::error::{Error, Result};

/// The size of the trailing checksum, in bytes.
pub const CHECKSUM_LEN: usize = 4;

/// Inputs this long or longer go to the host's CRC-32 where one is in use ([`use_host_crc32`]);
/// shorter ones stay with the tables, which a call out to the host would not beat.
#[cfg(feature = "host-crc32")]
pub const HOST_CRC32_FROM: usize = 4096;

/// A CRC-32 (IEEE) the host computes faster than this crate's own for long inputs, in use once
/// [`use_host_crc32`] took it; `None` from it falls back to this crate's own.
#[cfg(feature = "host-crc32")]
pub type HostCrc32 = fn(&[u8]) -> Option<u32>;

#[cfg(feature = "host-crc32")]
static HOST_CRC32: spin::Once<HostCrc32> = spin::Once::new();

/// Compute the checksums of inputs of [`HOST_CRC32_FROM`] bytes or more with `host` from now on,
/// if it gives the same CRC-32 as this crate's own for a sample of such inputs; whether it was
/// taken. The first one taken stays for the life of the process, and later ones are not (the
/// server engine in Node takes Node's `zlib.crc32`, about four times faster than the tables in
/// WebAssembly). A `host` that
/// disagrees is refused, so a page is never sealed with anything but the CRC-32 every build reads.
#[cfg(feature = "host-crc32")]
pub fn use_host_crc32(host: HostCrc32) -> bool {
    let sample: Vec<u8> = (0..3 * HOST_CRC32_FROM as u32 + 13)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    let agrees = [
        HOST_CRC32_FROM,
        HOST_CRC32_FROM + 1,
        2 * HOST_CRC32_FROM + 7,
        sample.len(),
    ]
    .into_iter()
    .filter_map(|len| sample.get(..len))
    .all(|part| host(part) == Some(own_crc32(part)));
    if !agrees {
        return false;
    }
    let mut taken = false;
    HOST_CRC32.call_once(|| {
        taken = true;
        host
    });
    taken
}

/// The CRC-32 (IEEE) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    #[cfg(feature = "host-crc32")]
    if bytes.len() >= HOST_CRC32_FROM {
        if let Some(sum) = HOST_CRC32.get().and_then(|host| host(bytes)) {
            return sum;
        }
    }
    own_crc32(bytes)
}

/// This crate's own CRC-32 (IEEE) of `bytes`.
#[cfg(not(target_arch = "wasm32"))]
fn own_crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// This crate's own CRC-32 (IEEE) of `bytes`.
#[cfg(target_arch = "wasm32")]
fn own_crc32(bytes: &[u8]) -> u32 {
    // Built at run time, once: tables built at compile time would be 16 KiB of data in the
    // module that gzip cannot shrink.
    static CRC32: spin::Once<crc::Crc<u32, crc::Table<16>>> = spin::Once::new();
    CRC32
        .call_once(|| crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISO_HDLC))
        .checksum(bytes)
}

/// The same CRC-32 from `crc`'s sixteen-table implementation (what wasm builds use).
#[cfg(test)]
const WASM_CRC32: crc::Crc<u32, crc::Table<16>> =
    crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISO_HDLC);

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
    fn the_wasm_builds_crc32_agrees_with_the_native_one() {
        // Every length up to a few blocks, and a page-sized buffer, of varied bytes.
        let bytes: Vec<u8> = (0..20_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for len in (0..200).chain([4_095, 16_384, 20_000]) {
            let slice = &bytes[..len];
            assert_eq!(WASM_CRC32.checksum(slice), crc32(slice), "length {len}");
        }
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
