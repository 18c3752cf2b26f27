#!/usr/bin/env bash
# Bundle the package's JavaScript (no Rust build: the engines in bindings/js/pkg and
# bindings/js/pkg-server must be built, see build-package.sh) into bindings/js/dist, what
# package.json "exports" names:
#   index.js, core.js        the browser entry (browsers, web workers, bundlers) and everything it
#                            uses (bindings/js/core.js and what it imports, the wasm-bindgen glue
#                            included), minified
#   pkg/ttlkv_web_bg.wasm    the browser's engine, compiled for size
#   server/                  the server entries (node.js, deno.js, workerd.js, edge-light.js), each
#                            telling the core how its runtime finds the engine, over a core of
#                            their own and server/pkg/ttlkv_web_bg.wasm, the engine compiled for
#                            speed (its glue is not the browser build's: bundled from a staged copy
#                            of the sources with pkg-server in place of pkg)
#   keyv.js, adapters/*.js   the Keyv store and the page-store adapters, each its own entry
# Then prints what a browser loads (index.js + core.js + the wasm), raw and gzipped.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x node_modules/.bin/esbuild ] || npm install --no-audit --no-fund

src=bindings/js
out=bindings/js/dist
for built in pkg pkg-server; do
  [ -f "$src/$built/ttlkv_web_bg.wasm" ] || { echo "bundle-js.sh: $src/$built holds no engine: run scripts/build-package.sh" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$out/pkg" "$out/adapters"
cp "$src/pkg/ttlkv_web_bg.wasm" "$out/pkg/"
esbuild() {
  node_modules/.bin/esbuild "$@" --bundle --minify --format=esm --platform=neutral \
    --legal-comments=none --log-level=warning
}
# An entry keeps its imports of the core, the engine and the runtime's modules as written.
entry() {
  esbuild "$1" --external:./core.js --external:./pkg/* --external:node:* --external:cloudflare:* --outfile="$2"
}
esbuild "$src/core.js" --outfile="$out/core.js"
entry "$src/index.js" "$out/index.js"

stage=target/js-server
rm -rf "$stage"
mkdir -p "$stage" "$out/server/pkg"
cp "$src"/*.js "$stage/"
cp -r "$src/pkg-server" "$stage/pkg"
cp "$src/pkg-server/ttlkv_web_bg.wasm" "$out/server/pkg/"
esbuild "$stage/core.js" --outfile="$out/server/core.js"
for name in node workerd edge-light; do
  entry "$src/$name.js" "$out/server/$name.js"
done
# esbuild does not parse a source-phase import (`import source`): deno.js ships as written.
cp "$src/deno.js" "$out/server/deno.js"
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
