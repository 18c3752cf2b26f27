//! The host's CRC-32 for the core's page checksums (feature `host-crc32`, the server entries'
//! engine). Where the host has Node's `zlib.crc32` (Node from 20.16, through
//! `process.getBuiltinModule`), the checksums of long pages and WAL pages are computed by it rather
//! than by the tables compiled to WebAssembly: about four times faster from 16 KiB. The core takes
//! it only if it gives the same CRC-32 as its own for a sample
//! ([`ttlkv::format::checksum::use_host_crc32`]), so every page stays readable by every build.
//!
//! The module is compiled in every build, its JS module declared in each, used only with the
//! feature: wasm-bindgen numbers a crate's inline JS modules in the order it meets them, and a
//! module one build lacked shifted the numbers of every other in it. The engine of one entry
//! loaded by another's glue then failed for a module the glue does not provide (a `TypeError`)
//! rather than with the `LinkError` that `load.js` names as the wrong entry's engine.

#[cfg(feature = "host-crc32")]
use std::sync::Once;

use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
let memory;
let crc32;
let whole;
export function hostCrc32s(m) {
  memory = m;
  const zlib = globalThis.process?.getBuiltinModule?.("node:zlib");
  crc32 = typeof zlib?.crc32 === "function" ? zlib.crc32 : undefined;
  return crc32 !== undefined;
}
export function hostCrc32(at, length) {
  if (whole === undefined || whole.byteLength === 0) whole = new Uint8Array(memory.buffer);
  return crc32(whole.subarray(at, at + length));
}
"#)]
#[cfg_attr(not(feature = "host-crc32"), allow(dead_code))]
extern "C" {
    /// Whether the host has a CRC-32 (Node's `zlib.crc32`); keeps `memory` (this module's) for
    /// [`host_crc32_at`].
    #[wasm_bindgen(js_name = hostCrc32s)]
    fn host_crc32s(memory: &JsValue) -> bool;

    /// The host's CRC-32 of the `length` bytes at `at` in this module's memory (a view of the
    /// whole memory is kept, and made again once the memory has grown). Not a number, or a
    /// throw, if the host misbehaves.
    #[wasm_bindgen(js_name = hostCrc32, catch)]
    fn host_crc32_at(at: u32, length: u32) -> Result<JsValue, JsValue>;
}

/// Offer the core the host's CRC-32, once per instance, if the host has one.
#[cfg(feature = "host-crc32")]
pub(crate) fn offer() {
    static OFFERED: Once = Once::new();
    OFFERED.call_once(|| {
        if host_crc32s(&wasm_bindgen::memory()) {
            ttlkv::format::checksum::use_host_crc32(host_crc32);
        }
    });
}

/// The host's CRC-32 of `bytes`; `None` (the core's own then) if its answer is no CRC-32.
#[cfg(feature = "host-crc32")]
fn host_crc32(bytes: &[u8]) -> Option<u32> {
    // Addresses and lengths in a wasm32 module's memory fit in 32 bits.
    let sum = host_crc32_at(bytes.as_ptr() as u32, bytes.len() as u32)
        .ok()?
        .as_f64()?;
    (sum >= 0.0 && sum <= f64::from(u32::MAX) && sum.fract() == 0.0).then_some(sum as u32)
}
