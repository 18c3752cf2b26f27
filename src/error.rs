//! The one public error of the crate: a small, stable [`ErrorKind`] plus a message.
//!
//! Every layer (format decoders, page stores, the engine) reports failures as [`Error`]. The kinds
//! map one to one onto the `code`s of the JavaScript `TtlKvError` (see `CODES` in `bindings/js/index.d.ts`), so the bindings
//! never have to guess. This module must not depend on any other module of the crate.

use alloc::string::{String, ToString};
use core::fmt;

/// What went wrong, and so what the caller should do about it.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The caller passed something invalid (wrong type, conflicting options, zero TTL, ...).
    /// Fix the call; retrying it unchanged fails again.
    InvalidArgument,
    /// A key is empty or longer than [`crate::MAX_KEY_LEN`].
    KeyTooLarge,
    /// A value is longer than [`crate::MAX_VALUE_LEN`].
    ValueTooLarge,
    /// The database (or snapshot) was closed or released.
    Closed,
    /// Another writer took over this database: this handle may no longer write. Reopen.
    Fenced,
    /// The storage quota is reached. Nothing was half-written; reads keep working.
    QuotaExceeded,
    /// A checksum or decode failure; the message names the page.
    Corruption,
    /// Any other storage failure.
    Storage,
    /// The operation is not available here (e.g. a storage kind the platform lacks).
    Unsupported,
}

impl ErrorKind {
    /// The stable code used by the JavaScript API (`TtlKvError.code`).
    pub const fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "INVALID_ARGUMENT",
            ErrorKind::KeyTooLarge => "KEY_TOO_LARGE",
            ErrorKind::ValueTooLarge => "VALUE_TOO_LARGE",
            ErrorKind::Closed => "CLOSED",
            ErrorKind::Fenced => "FENCED",
            ErrorKind::QuotaExceeded => "QUOTA_EXCEEDED",
            ErrorKind::Corruption => "CORRUPTION",
            ErrorKind::Storage => "STORAGE",
            ErrorKind::Unsupported => "UNSUPPORTED",
        }
    }

    /// Every kind, in declaration order (for exhaustive tests of the mapping).
    pub const ALL: [ErrorKind; 9] = [
        ErrorKind::InvalidArgument,
        ErrorKind::KeyTooLarge,
        ErrorKind::ValueTooLarge,
        ErrorKind::Closed,
        ErrorKind::Fenced,
        ErrorKind::QuotaExceeded,
        ErrorKind::Corruption,
        ErrorKind::Storage,
        ErrorKind::Unsupported,
    ];
}

/// An error from ttlkv: a [`kind`](Error::kind) to branch on and a human-readable message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// `Result` with ttlkv's [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;

impl Error {
    /// A new error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The human-readable description.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Shorthand for an [`ErrorKind::InvalidArgument`] error.
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    /// Shorthand for an [`ErrorKind::Corruption`] error.
    pub fn corruption(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Corruption, message)
    }

    /// Shorthand for an [`ErrorKind::Storage`] error.
    pub fn storage(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Storage, message)
    }

    /// Shorthand for an [`ErrorKind::Closed`] error.
    pub fn closed() -> Self {
        Error::new(ErrorKind::Closed, "the database is closed")
    }

    /// The same error with `context` put in front of the message (e.g. the page it concerns).
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        let mut message = context.to_string();
        message.push_str(": ");
        message.push_str(&self.message);
        self.message = message;
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.code(), self.message)
    }
}

impl core::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_distinct_upper_snake_code() {
        let codes: alloc::vec::Vec<_> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
        for (i, a) in codes.iter().enumerate() {
            assert!(a.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
            assert!(!codes[i + 1..].contains(a), "duplicate code {a}");
        }
    }

    #[test]
    fn context_names_the_page_in_front_of_the_message() {
        let e = Error::corruption("bad checksum").context("page sst/3/data/0");
        assert_eq!(e.kind(), ErrorKind::Corruption);
        assert_eq!(e.message(), "page sst/3/data/0: bad checksum");
        assert_eq!(
            alloc::format!("{e}"),
            "CORRUPTION: page sst/3/data/0: bad checksum"
        );
    }
}
