#!/usr/bin/env bash
# Build the npm package's engine: ttlkv-web for wasm32, then wasm-bindgen's ES module output into
# bindings/js/pkg (the version pinned in bindings/web/Cargo.toml; installed if missing). The build
# matrix is wasm-pack.toml: one "web" target that works in browsers, bundlers, workers and Node.
set -euo pipefail
cd "$(dirname "$0")/.."
want=$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' bindings/web/Cargo.toml)
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$want" ]; then
  echo "installing wasm-bindgen-cli $want (a few minutes, once)"
  cargo install wasm-bindgen-cli --version "$want" --locked
fi
profile=${TTLKV_PROFILE:-release}
cargo build -p ttlkv-web --target wasm32-unknown-unknown --profile "$profile"
dir=$profile; [ "$profile" = dev ] && dir=debug
wasm-bindgen --target web --out-dir bindings/js/pkg --no-typescript \
  "target/wasm32-unknown-unknown/$dir/ttlkv_web.wasm"
if command -v wasm-opt >/dev/null 2>&1; then
  wasm-opt -Oz --enable-bulk-memory -o bindings/js/pkg/ttlkv_web_bg.wasm bindings/js/pkg/ttlkv_web_bg.wasm
fi
ls -l bindings/js/pkg
