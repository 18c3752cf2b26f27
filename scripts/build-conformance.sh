#!/usr/bin/env bash
# A test build of the engine with the core's page-store conformance suite callable from
# JavaScript (ttlkv-web's `conformance` feature), into target/conformance-pkg (wasm-bindgen's
# `web` target: instantiate it with `init({ module_or_path })`). The runtime tests check each
# shipped page-store adapter with it in its own runtime. Needs the toolchain build-package.sh
# installs.
set -euo pipefail
cd "$(dirname "$0")/.."
# The package's profile: only ttlkv-web is built again (with the feature), not the core.
cargo build -p ttlkv-web --features conformance --target wasm32-unknown-unknown --profile wasm-release
wasm-bindgen --target web --out-dir target/conformance-pkg --no-typescript --omit-default-module-path \
  target/wasm32-unknown-unknown/wasm-release/ttlkv_web.wasm
