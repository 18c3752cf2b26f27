#!/usr/bin/env bash
# Build the npm package from its build matrix, build.toml (read by scripts/build-matrix.mjs with a
# TOML parser): for each [[target]], build `ttlkv-web` for wasm32 with the target's cargo
# profile and features, run wasm-bindgen (the version pinned in bindings/web/Cargo.toml;
# installed once if missing) into its out_dir, then the [wasm_opt] tool (wasm-opt from npm's
# binaryen) with its flags and the target's own after them. Then scripts/bundle-js.sh bundles the JS (the core with the
# wasm-bindgen glue, an entry per runtime, the adapters, the Keyv store) into bindings/js/dist,
# what the package ships, and prints what a browser loads, raw and gzipped. wasm-opt, esbuild and
# the TOML parser are pinned root devDependencies, installed when missing.
# TTLKV_PROFILE overrides every target's profile (e.g. `dev` for a quick debug build).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -x node_modules/.bin/esbuild ] || [ ! -d node_modules/smol-toml ]; then
  echo "installing the root devDependencies (wasm-opt from npm's binaryen, esbuild, smol-toml)"
  npm install --no-audit --no-fund
fi
matrix=$(node scripts/build-matrix.mjs)
field() { awk -v kind="$1" '$1 == kind { $1 = ""; sub(/^ /, ""); print }' <<<"$matrix"; }
crate=$(field crate)
read -r opt_enabled opt_tool <<<"$(field wasm_opt)"
mapfile -t opt_flags < <(field wasm_opt_flag)

want=$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' "$crate/Cargo.toml")
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$want" ]; then
  echo "installing wasm-bindgen-cli $want (a few minutes, once)"
  cargo install wasm-bindgen-cli --version "$want" --locked
fi

# Panic locations in dependencies name their source files by absolute path, under this machine's
# cargo home: shipped as is, they would publish that path, and cost bytes. Remapped to the
# registry-relative path (the crate and version still show where a panic came from).
cargo fetch --quiet
registry=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ 2>/dev/null | head -n 1)
if [ -n "$registry" ]; then
  export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="--remap-path-prefix=${registry%/}=c"
fi

while read -r target out_dir profile features extra; do
  profile=${TTLKV_PROFILE:-$profile}
  dir=$profile; [ "$profile" = dev ] && dir=debug
  [ "$features" = - ] && features=""
  extra_flags=()
  [ "$extra" = - ] || IFS=, read -r -a extra_flags <<<"$extra"
  echo "target $target: cargo profile $profile${features:+, features $features} -> $out_dir"
  cargo build -p ttlkv-web --target wasm32-unknown-unknown --profile "$profile" --features "$features"
  # No default module path: the entry always passes the wasm's location (a fallback URL relative
  # to the glue would point next to the bundle, where bundlers would look for a file that is not
  # there).
  wasm-bindgen --target "$target" --out-dir "$out_dir" --no-typescript --omit-default-module-path \
    "target/wasm32-unknown-unknown/$dir/ttlkv_web.wasm"
  if [ "$opt_enabled" = true ] && [ "$profile" != dev ]; then
    "$opt_tool" "${opt_flags[@]}" ${extra_flags[@]+"${extra_flags[@]}"} -o "$out_dir/ttlkv_web_bg.wasm" "$out_dir/ttlkv_web_bg.wasm"
  fi
done < <(field target)

bash scripts/bundle-js.sh
