#!/usr/bin/env bash
# The README's main command: build the npm package's engine (installing the Rust wasm target and
# the pinned wasm-bindgen CLI once, if missing), then run the session-store example in Node on the
# embedded default storage.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust with rustup first" >&2
  exit 1
fi
if ! command -v node >/dev/null 2>&1; then
  apt-get update && apt-get install -y nodejs
fi
bash scripts/build-package.sh
node examples/sessions.mjs
