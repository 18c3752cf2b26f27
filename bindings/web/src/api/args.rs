//! The arguments of calls as the JS entry encodes them (`bindings/js/protocol.js`, generated from
//! `protocol.rs`), decoded into the core's option types. The JS entry checks options before
//! encoding them; this layer checks again every number it is handed, so a hand-made call gets an
//! `INVALID_ARGUMENT`, never a panic or a silent change of meaning.

use ttlkv::{ExpireCondition, GetExOptions, NamespaceOptions, PutCondition, ScanOptions, Ttl};

use super::call::{invalid, JsResult};
use crate::protocol::{
    EXPIRE_GT, EXPIRE_LT, EXPIRE_NX, EXPIRE_XX, PUT_ALWAYS, PUT_IF_ABSENT, PUT_IF_PRESENT,
    TTL_AFTER_MS, TTL_AT, TTL_DEFAULT, TTL_KEEP, TTL_NO_EXPIRY,
};

/// A JS number that must be a finite integer in i64 range.
pub(super) fn int(x: f64, what: &str) -> JsResult<i64> {
    if !x.is_finite() || x.fract() != 0.0 || x.abs() > 9.007_199_254_740_991e15 {
        return Err(invalid(&format!("{what} must be a finite integer")));
    }
    Ok(x as i64)
}

/// A JS number that must be an integer > 0 (a TTL in ms).
pub(super) fn positive(x: f64, what: &str) -> JsResult<u64> {
    let n = int(x, what)?;
    if n <= 0 {
        return Err(invalid(&format!("{what} must be greater than 0")));
    }
    Ok(n as u64)
}

/// A code that must be an integer from 0 to 255 (a TTL kind, a condition, a batch op's type):
/// one out of that range is unknown, never read modulo 256 as a `u8` parameter would be.
pub(super) fn small(x: f64, what: &str) -> JsResult<u8> {
    u8::try_from(int(x, what)?).map_err(|_| invalid(&format!("unknown {what}")))
}

/// A count the caller gives (a limit) as a `usize`: one past what the address space can number
/// (2^32 and more in WebAssembly) is as good as no limit, never cut to its low 32 bits.
pub(super) fn count(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// A TTL: its kind and argument.
pub(super) fn ttl_of(kind: f64, arg: f64) -> JsResult<Ttl> {
    Ok(match small(kind, "TTL kind")? {
        TTL_DEFAULT => Ttl::Default,
        TTL_NO_EXPIRY => Ttl::NoExpiry,
        TTL_AFTER_MS => Ttl::ExpireAfter(positive(arg, "ttlMs")?),
        TTL_AT => Ttl::ExpireAt(int(arg, "expireAt")?),
        TTL_KEEP => Ttl::Keep,
        _ => return Err(invalid("unknown TTL kind")),
    })
}

/// `getEx`'s TTL change: one of the TTL kinds that set an expiry or take it away.
pub(super) fn get_ex_of(kind: f64, arg: f64) -> JsResult<GetExOptions> {
    Ok(match small(kind, "getEx option")? {
        TTL_AFTER_MS => GetExOptions::ExpireAfter(positive(arg, "ttlMs")?),
        TTL_AT => GetExOptions::ExpireAt(int(arg, "expireAt")?),
        TTL_NO_EXPIRY => GetExOptions::Persist,
        _ => return Err(invalid("unknown getEx option")),
    })
}

/// A put condition.
pub(super) fn condition_of(c: f64) -> JsResult<PutCondition> {
    Ok(match small(c, "put condition")? {
        PUT_ALWAYS => PutCondition::Always,
        PUT_IF_ABSENT => PutCondition::IfAbsent,
        PUT_IF_PRESENT => PutCondition::IfPresent,
        _ => return Err(invalid("unknown put condition")),
    })
}

/// An expire condition from its bits (the core refuses combinations that contradict); a bit that
/// names no condition is an unknown condition.
pub(super) fn expire_condition_of(bits: f64) -> JsResult<ExpireCondition> {
    let bits = small(bits, "expire condition")?;
    if bits & !(EXPIRE_NX | EXPIRE_XX | EXPIRE_GT | EXPIRE_LT) != 0 {
        return Err(invalid("unknown expire condition"));
    }
    Ok(ExpireCondition {
        nx: bits & EXPIRE_NX != 0,
        xx: bits & EXPIRE_XX != 0,
        gt: bits & EXPIRE_GT != 0,
        lt: bits & EXPIRE_LT != 0,
    })
}

/// Namespace options: none unless `has_options`; a NaN TTL is none.
pub(super) fn namespace_options(
    has_options: bool,
    default_ttl_ms: f64,
    max_ttl_ms: f64,
) -> JsResult<Option<NamespaceOptions>> {
    let optional = |x: f64, what| {
        if x.is_nan() {
            Ok(None)
        } else {
            positive(x, what).map(Some)
        }
    };
    if !has_options {
        return Ok(None);
    }
    Ok(Some(NamespaceOptions {
        default_ttl_ms: optional(default_ttl_ms, "defaultTtlMs")?,
        max_ttl_ms: optional(max_ttl_ms, "maxTtlMs")?,
    }))
}

/// Scan options; a negative `limit` is none.
pub(super) fn scan_options(
    prefix: Option<Vec<u8>>,
    start: Option<Vec<u8>>,
    end: Option<Vec<u8>>,
    limit: f64,
    reverse: bool,
) -> JsResult<ScanOptions> {
    let limit = if limit < 0.0 {
        None
    } else {
        // Not negative here: `unsigned_abs` is the number itself.
        Some(count(int(limit, "limit")?.unsigned_abs()))
    };
    Ok(ScanOptions {
        prefix,
        start,
        end,
        limit,
        reverse,
    })
}
