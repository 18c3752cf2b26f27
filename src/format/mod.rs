//! The bytes: how rows, SST pages, the manifest and WAL pages are encoded, and how they are checked
//! when read back. The byte-by-byte layout of everything here is in `docs/format.md`.
//!
//! Rooms: [`codec`] (a bounded reader and little-endian writers), [`checksum`] (CRC-32 seals),
//! [`row`] (rows and row features), [`data_page`] (an SST's bounded-size pages of sorted rows),
//! [`key_prefixes`] (a search aid over sorted keys, in memory only), [`key_order`] (keys compared
//! eight bytes a step),
//! [`sst_meta`] (an SST's metadata page, with its expiry percentiles), [`manifest`] (the SST list,
//! WAL position, writer epoch and clock seed), [`wal`] (one group commit of write batches).
//!
//! Rules for this module: every decoder returns an error on bad input and never panics, never
//! indexes out of bounds, and never sizes an allocation from a length it has not checked against
//! the input left. Decode failures are [`ErrorKind::Corruption`](crate::ErrorKind::Corruption);
//! asking an encoder for something the format cannot hold is
//! [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument). This module knows nothing of
//! where pages are stored or of the engine that reads them.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

pub mod checksum;
pub mod codec;
pub mod data_page;
pub mod key_filter;
pub mod key_order;
pub mod key_prefixes;
pub mod manifest;
pub mod row;
pub mod sst_meta;
pub mod wal;

pub use checksum::{crc32, seal, unseal};
pub use data_page::{DataPage, DataPageBuilder};
pub use key_filter::{key_hash, KeyFilter};
pub use key_prefixes::{KeyPrefixes, SearchAid};
pub use manifest::{Manifest, MovedKeyspace, NamespaceEntry};
pub use row::{
    decode_row, decode_row_key, encode_row, encoded_row_len, row_order, Row, RowFeatures, RowRef,
    FLAG_HAS_EXPIRE, FLAG_TOMBSTONE,
};
pub use sst_meta::{expiry_percentiles, PageRef, SstMeta};
pub use wal::{decode_wal_page, encode_wal_batch, encode_wal_page};

use crate::error::{Error, Result};
use codec::Reader;

/// The version of the on-storage format this code writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// [`FORMAT_VERSION`] as the single byte the page headers store.
const FORMAT_VERSION_BYTE: u8 = 1;
const _: () = assert!(FORMAT_VERSION_BYTE as u32 == FORMAT_VERSION);

/// The start of every page decoder: verify the trailing checksum of `bytes`, then the `magic` they
/// begin with. The reader continues after the magic and stops before the checksum.
fn open_page(bytes: &[u8], magic: [u8; 4]) -> Result<Reader<'_>> {
    open_body(unseal(bytes)?, magic)
}

/// A reader of a page's `body` (the bytes before its checksum), after the `magic` it must begin
/// with.
fn open_body(body: &[u8], magic: [u8; 4]) -> Result<Reader<'_>> {
    let mut r = Reader::new(body);
    if r.array::<4>("magic")? == magic {
        Ok(r)
    } else {
        Err(Error::corruption("bad magic"))
    }
}

/// Read the one-byte format version of a page header, which must be [`FORMAT_VERSION`].
fn read_version_byte(r: &mut Reader<'_>) -> Result<()> {
    if r.u8("version")? == FORMAT_VERSION_BYTE {
        Ok(())
    } else {
        Err(Error::corruption("unsupported format version"))
    }
}
