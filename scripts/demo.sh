#!/usr/bin/env bash
# The README's main command: build the npm package's engine (installing the Rust wasm target and
# the pinned wasm-bindgen CLI once, if missing), then serve the demo page (www/) on the embedded
# default storage, IndexedDB, at http://localhost:8080/www/ (PORT overrides the port).
# `node examples/sessions.mjs` is the same store in Node, in a terminal.
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
exec node scripts/serve.mjs "${PORT:-8080}"
