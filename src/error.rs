//! The one public error of the crate: a small, stable [`ErrorKind`], a message, and the
//! underlying failure it came from, if any ([`Error::cause`]).
//!
//! Every layer (format decoders, page stores, the engine) reports failures as [`Error`]. The kinds
//! map one to one onto the `code`s of the JavaScript `TtlKvError` ([`ErrorKind::code`] is the one
//! definition: the npm package's `CODES` are generated from it), so the bindings never have to
//! guess. A page store keeps the error its platform gave as the source (for a JavaScript store,
//! the thrown JS value, which becomes the `cause` of the `TtlKvError`). This module must not
//! depend on any other module of the crate.

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
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

    /// The kind whose [`code`](ErrorKind::code) is `code`, if there is one.
    pub fn from_code(code: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.code() == code)
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

/// The failure underneath an [`Error`] (a platform's I/O error, a JavaScript exception).
pub type Source = Arc<dyn core::error::Error + Send + Sync + 'static>;

/// An error from ttlkv: a [`kind`](Error::kind) to branch on, a human-readable message, and the
/// failure underneath, if any (`core::error::Error::source`).
///
/// Two errors are equal when their kinds and messages are: the source is context, not identity.
///
/// One pointer wide: a `Result` carrying it costs its callers no more than one carrying a `Box`.
#[derive(Clone)]
pub struct Error(Box<Details>);

#[derive(Clone)]
struct Details {
    kind: ErrorKind,
    message: String,
    source: Option<Source>,
}

/// `Result` with ttlkv's [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;

impl Error {
    /// A new error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(Details {
            kind,
            message: message.into(),
            source: None,
        }))
    }

    /// The same error, caused by `source`.
    pub fn with_source(mut self, source: impl core::error::Error + Send + Sync + 'static) -> Self {
        self.0.source = Some(Arc::new(source));
        self
    }

    /// The failure underneath, as it was given to [`with_source`](Error::with_source).
    pub fn cause(&self) -> Option<&Source> {
        self.0.source.as_ref()
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The human-readable description.
    pub fn message(&self) -> &str {
        &self.0.message
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
        message.push_str(&self.0.message);
        self.0.message = message;
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.kind.code(), self.0.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.0.kind)
            .field("message", &self.0.message);
        if let Some(source) = &self.0.source {
            d.field("source", &format_args!("{source}"));
        }
        d.finish()
    }
}

impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        self.0.kind == other.0.kind && self.0.message == other.0.message
    }
}

impl Eq for Error {}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|s| s as &(dyn core::error::Error + 'static))
    }
}

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
    fn a_code_names_its_kind_and_nothing_else() {
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_code(kind.code()), Some(kind));
        }
        assert_eq!(ErrorKind::from_code("ENOENT"), None);
        assert_eq!(ErrorKind::from_code("storage"), None);
    }

    #[derive(Debug)]
    struct Underneath;

    impl fmt::Display for Underneath {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the disk said no")
        }
    }

    impl core::error::Error for Underneath {}

    #[test]
    fn the_source_survives_context_and_clones() {
        use core::error::Error as _;
        let e = Error::storage("write failed")
            .with_source(Underneath)
            .context("page w/1");
        let copy = e.clone();
        for e in [&e, &copy] {
            let source = e.source().expect("the source is kept");
            assert!(source.downcast_ref::<Underneath>().is_some());
            assert_eq!(source.to_string(), "the disk said no");
        }
        assert_eq!(
            e,
            Error::storage("page w/1: write failed"),
            "equality ignores the source"
        );
        assert!(alloc::format!("{e:?}").contains("the disk said no"));
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
