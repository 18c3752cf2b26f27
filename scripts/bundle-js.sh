#!/usr/bin/env bash
# Bundle the package's JavaScript (no Rust build: the engine in bindings/js/pkg must be built,
# see build-package.sh) into bindings/js/dist, what package.json "exports" names:
#   core.js          everything the entries share (bindings/js/core.js and what it imports,
#                    the wasm-bindgen glue included), minified
#   index.js …       one small entry per runtime (index.js for browsers and bundlers, node.js,
#                    deno.js, workerd.js, edge-light.js): each tells the core how to find the
#                    engine and re-exports it
#   keyv.js, adapters/*.js   the Keyv store and the page-store adapters, each its own entry
#   pkg/ttlkv_web_bg.wasm    the engine
# Then prints what a browser loads (index.js + core.js + the wasm), raw and gzipped.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x node_modules/.bin/esbuild ] || npm install --no-audit --no-fund

src=bindings/js
out=bindings/js/dist
rm -rf "$out"
mkdir -p "$out/pkg" "$out/adapters"
cp "$src/pkg/ttlkv_web_bg.wasm" "$out/pkg/"
esbuild() {
  node_modules/.bin/esbuild "$@" --bundle --minify --format=esm --platform=neutral \
    --legal-comments=none --log-level=warning
}
esbuild "$src/core.js" --outfile="$out/core.js"
# The entries keep their imports of the core, the engine and Node's modules as written.
for entry in index node workerd edge-light; do
  esbuild "$src/$entry.js" --external:./core.js --external:./pkg/* --external:node:* --external:cloudflare:* --outfile="$out/$entry.js"
done
# esbuild does not parse a source-phase import (`import source`): deno.js ships as written.
cp "$src/deno.js" "$out/deno.js"
if [ -f "$src/keyv.js" ]; then
  esbuild "$src/keyv.js" --external:ttlkv --outfile="$out/keyv.js"
fi
for adapter in "$src"/adapters/*.js; do
  [ -f "$adapter" ] || continue
  esbuild "$adapter" --external:node:* --outfile="$out/adapters/$(basename "$adapter")"
done

wasm_raw=$(wc -c <"$out/pkg/ttlkv_web_bg.wasm")
wasm_gz=$(gzip -9c "$out/pkg/ttlkv_web_bg.wasm" | wc -c)
js_raw=$(cat "$out/index.js" "$out/core.js" | wc -c)
js_gz=$(( $(gzip -9c "$out/index.js" | wc -c) + $(gzip -9c "$out/core.js" | wc -c) ))
echo "package size (browser): wasm $wasm_raw B ($wasm_gz B gzipped), JS $js_raw B ($js_gz B gzipped)"
