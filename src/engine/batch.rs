//! [`WriteBatch`]: puts and deletes applied atomically by [`Db::write`](super::Db::write).

use alloc::vec::Vec;

use super::options::PutOptions;

/// One operation of a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchOp {
    /// Store a value.
    Put {
        /// The key.
        key: Vec<u8>,
        /// The value.
        value: Vec<u8>,
        /// TTL and condition; a failed condition aborts the whole batch.
        options: PutOptions,
    },
    /// Remove a key.
    Delete {
        /// The key.
        key: Vec<u8>,
    },
}

/// Operations applied all together or not at all. Later operations on the same key see the
/// effect of earlier ones.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteBatch {
    pub(crate) ops: Vec<BatchOp>,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a put with the default TTL.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> &mut Self {
        self.put_with_options(key, value, PutOptions::default())
    }

    /// Add a put with explicit options.
    pub fn put_with_options(&mut self, key: &[u8], value: &[u8], options: PutOptions) -> &mut Self {
        self.ops.push(BatchOp::Put {
            key: key.to_vec(),
            value: value.to_vec(),
            options,
        });
        self
    }

    /// Add a delete.
    pub fn delete(&mut self, key: &[u8]) -> &mut Self {
        self.ops.push(BatchOp::Delete { key: key.to_vec() });
        self
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the batch has no operations.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The operations, in order.
    pub fn ops(&self) -> &[BatchOp] {
        &self.ops
    }
}
