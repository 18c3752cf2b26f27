#!/usr/bin/env bash
# Build the npm package from the matrix in wasm-pack.toml: for each [[target]], build `ttlkv-web`
# for wasm32 with the target's cargo profile, run wasm-bindgen (the version pinned in
# bindings/web/Cargo.toml; installed once if missing) into its out_dir, then the [wasm_opt] tool
# (wasm-opt from npm's binaryen) with its flags. Then scripts/bundle-js.sh bundles the JS (the
# core with the wasm-bindgen glue, an entry per runtime, the adapters, the Keyv store) into
# bindings/js/dist, what the package ships, and prints what a browser loads, raw and gzipped.
# wasm-opt and esbuild are pinned root devDependencies, installed when missing.
# TTLKV_PROFILE overrides every target's profile (e.g. `dev` for a quick debug build).
set -euo pipefail
cd "$(dirname "$0")/.."

crate=$(awk -F'"' '/^path *=/{print $2; exit}' wasm-pack.toml)
want=$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' "$crate/Cargo.toml")
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$want" ]; then
  echo "installing wasm-bindgen-cli $want (a few minutes, once)"
  cargo install wasm-bindgen-cli --version "$want" --locked
fi
opt_enabled=$(sed -n 's/^enabled *= *\(true\|false\)/\1/p' wasm-pack.toml)
opt_tool=$(awk -F'"' '/^tool *=/{print $2; exit}' wasm-pack.toml)
if { [ "$opt_enabled" = true ] && [ ! -x "$opt_tool" ]; } || [ ! -x node_modules/.bin/esbuild ]; then
  echo "installing the root devDependencies (wasm-opt from npm's binaryen, esbuild)"
  npm install --no-audit --no-fund
fi
read -r -a opt_flags <<<"$(sed -n 's/^flags *= *\[\(.*\)\]/\1/p' wasm-pack.toml | tr -d '",')"

# "name out_dir profile" for each [[target]].
targets=$(awk -F'"' '
  /^\[\[target\]\]/ { if (name != "") print name, out, profile; name = ""; out = ""; profile = "release" }
  /^name *=/ { name = $2 } /^out_dir *=/ { out = $2 } /^profile *=/ { profile = $2 }
  END { if (name != "") print name, out, profile }' wasm-pack.toml)

while read -r target out_dir profile; do
  profile=${TTLKV_PROFILE:-$profile}
  dir=$profile; [ "$profile" = dev ] && dir=debug
  echo "target $target: cargo profile $profile -> $out_dir"
  cargo build -p ttlkv-web --target wasm32-unknown-unknown --profile "$profile"
  # No default module path: the entry always passes the wasm's location (a fallback URL relative
  # to the glue would point next to the bundle, where bundlers would look for a file that is not
  # there).
  wasm-bindgen --target "$target" --out-dir "$out_dir" --no-typescript --omit-default-module-path \
    "target/wasm32-unknown-unknown/$dir/ttlkv_web.wasm"
  if [ "$opt_enabled" = true ] && [ "$profile" != dev ]; then
    "$opt_tool" "${opt_flags[@]}" -o "$out_dir/ttlkv_web_bg.wasm" "$out_dir/ttlkv_web_bg.wasm"
  fi
done <<<"$targets"

bash scripts/bundle-js.sh
