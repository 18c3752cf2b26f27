#!/usr/bin/env bash
# Every test of the project, from a fresh machine: installs what it needs (idempotently, skipping
# what is already there: Rust targets, the pinned wasm-bindgen CLI, Debian's Chromium and
# chromedriver, the end-to-end tests' npm packages), then runs formatting and lint checks, the
# no_std build, the native tests (unit, behaviour, model-based, crash, format properties), builds
# the npm package's engine, runs the wasm tests in Node and in Chromium, Firefox and WebKit, the
# package's JS tests, the packed package in the runtimes it names (Deno, workerd, Vercel Edge)
# with its storage adapters and its Keyv store, and the end-to-end tests of the packed package
# (Node, TypeScript; Vite, plain script modules, workers and many tabs in Chromium, Firefox and
# WebKit), then the benchmarks at smoke sizes in all three engines.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }
# node --test with the spec reporter, which ends with the names of the tests that failed: a log
# cut to its end still says which.
node_test() { node --test --test-reporter=spec "$@"; }

step "toolchain"
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust with rustup first" >&2
  exit 1
fi
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
for target in thumbv7em-none-eabihf wasm32-unknown-unknown; do
  rustup target list --installed | grep -qx "$target" || rustup target add "$target"
done
if ! command -v node >/dev/null 2>&1; then
  apt-get update && apt-get install -y nodejs
fi
# The three browser engines, from Debian: Chromium (+ chromedriver), Firefox ESR, WebKitGTK's
# WebDriver (MiniBrowser, which has no headless mode: it runs under Xvfb).
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1 \
  || ! command -v firefox-esr >/dev/null 2>&1 || ! command -v WebKitWebDriver >/dev/null 2>&1 \
  || ! command -v xvfb-run >/dev/null 2>&1 || ! command -v xauth >/dev/null 2>&1; then
  apt-get update && apt-get install -y chromium chromium-driver firefox-esr webkit2gtk-driver xvfb xauth
fi
# geckodriver (Firefox's WebDriver, for wasm-bindgen-test) is not in Debian: from the crate
# registry, pinned.
geckodriver_version=0.37.1
if [ "$(geckodriver --version 2>/dev/null | awk 'NR==1{print $2}')" != "$geckodriver_version" ]; then
  echo "installing geckodriver $geckodriver_version (a few minutes, once)"
  cargo install --locked geckodriver --version "$geckodriver_version"
fi
cargo --version && node --version && { chromium --version; firefox-esr --version; dpkg-query -W -f='WebKitGTK ${Version}\n' libwebkit2gtk-4.1-0; } 2>/dev/null || true

step "format"
cargo fmt --all -- --check

step "lint (clippy, warnings are errors)"
cargo clippy --workspace --all-targets -- -D warnings

step "the core builds with no std (thumbv7em-none-eabihf)"
cargo build -p ttlkv --no-default-features --target thumbv7em-none-eabihf

step "the web bindings build for wasm32"
cargo build -p ttlkv-web --target wasm32-unknown-unknown

step "fuzz targets compile (when a nightly toolchain is installed)"
if rustup toolchain list | grep -q '^nightly'; then
  cargo +nightly check --manifest-path fuzz/Cargo.toml --bins
else
  echo "no nightly toolchain: skipped (the decoders' property tests below still run)"
fi

step "rustdoc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p ttlkv -p ttlkv-web

step "native tests: unit, behaviour, model-based, crash points, format properties"
mkdir -p target
set +e
cargo test --workspace -- --nocapture > target/native-tests.log 2>&1
status=$?
set -e
grep -E '^(test |running|test result|model-based|crash test|group commit|compaction:|purge complexity|whole-SST|percentile trigger)|panicked|FAILED' target/native-tests.log || true
if [ "$status" -ne 0 ]; then
  echo "native tests failed (exit $status); full log: target/native-tests.log" >&2
  tail -n 60 target/native-tests.log >&2
  exit "$status"
fi

step "native tests of the engine as browsers get it (without search-prefixes, compaction-copies-rows, memtable-filter, row-cache, point-index and inline-keys)"
set +e
cargo test -p ttlkv --no-default-features --features std,test-util > target/native-tests-lean.log 2>&1
status=$?
set -e
grep -E '^test result|panicked|FAILED' target/native-tests-lean.log || true
if [ "$status" -ne 0 ]; then
  echo "native tests without the speed features failed (exit $status); full log: target/native-tests-lean.log" >&2
  tail -n 60 target/native-tests-lean.log >&2
  exit "$status"
fi

# The host's CRC-32 (the server entries' engine hands it Node's zlib.crc32): its own test binary,
# since the host taken stays for the life of the process.
step "a host's CRC-32 is taken only if it agrees (feature host-crc32)"
cargo test -p ttlkv --features host-crc32 --test a_host_crc32_is_taken_only_if_it_agrees 2>&1 | grep -E '^test |^test result|panicked|FAILED|error'

# The read path's features combine: each alone (the builds above have all or none of them),
# over the tests of what a read answers.
step "the read path's tests with each of its speed features alone"
for feature in search-prefixes memtable-filter row-cache point-index; do
  set +e
  cargo test -p ttlkv --no-default-features --features "std,test-util,$feature" \
    --test model_based --test row_cache_answers_as_the_levels_do \
    --test point_index_answers_as_the_search_does --test bad_clock_readings \
    > "target/native-tests-$feature.log" 2>&1
  status=$?
  set -e
  echo "with $feature alone: $(grep -E '^test result' "target/native-tests-$feature.log" | awk '{p += $4; f += $6} END {print p " passed, " f " failed"}')"
  if [ "$status" -ne 0 ]; then
    echo "the read path's tests with $feature alone failed (exit $status); full log: target/native-tests-$feature.log" >&2
    tail -n 60 "target/native-tests-$feature.log" >&2
    exit "$status"
  fi
done

step "the npm package's engine: wasm32 build + wasm-bindgen (installs the pinned CLI once)"
bash scripts/build-package.sh

step "wasm-bindgen-test: the JS adapters in Node, the IndexedDB store in Chromium, Firefox and WebKit"
# Chromium loads the test pages through scripts/one-request-per-connection.mjs, whose header says
# why: without it the runner's server could leave one of the page's module requests unread, the
# page stuck at "Loading scripts..." until ChromeDriver's 300 s timeout (one run in three to six).
# The runner reads its browser's capabilities from `webdriver.json` where cargo runs it, the
# package's folder: written for the Chromium run, removed after it.
through_proxy() {
  local port_file proxy port status
  port_file=$(mktemp)
  node scripts/one-request-per-connection.mjs > "$port_file" &
  proxy=$!
  for _ in $(seq 1 100); do
    [ -s "$port_file" ] && break
    kill -0 "$proxy" 2>/dev/null || { echo "the test pages' proxy did not start" >&2; return 1; }
    sleep 0.1
  done
  port=$(head -n 1 "$port_file")
  rm -f "$port_file"
  trap 'rm -f bindings/web/webdriver.json; kill '"$proxy"' 2>/dev/null || true' EXIT
  printf '{"goog:chromeOptions":{"args":["proxy-server=http://127.0.0.1:%s","proxy-bypass-list=<-loopback>"]}}\n' \
    "$port" > bindings/web/webdriver.json
  set +e
  "$@"
  status=$?
  set -e
  rm -f bindings/web/webdriver.json
  kill "$proxy" 2>/dev/null || true
  trap - EXIT
  return "$status"
}
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
echo "-- Node and Chromium"
through_proxy env CHROMEDRIVER=/usr/bin/chromedriver cargo test -p ttlkv-web --target wasm32-unknown-unknown
echo "-- Firefox (the runner picks the first driver it finds set: only one is)"
env -u CHROMEDRIVER GECKODRIVER="$(command -v geckodriver)" \
  cargo test -p ttlkv-web --target wasm32-unknown-unknown --test indexeddb_in_browser
echo "-- WebKit (MiniBrowser under Xvfb; without a display its WebDriver session never starts, hence the timeout)"
env -u CHROMEDRIVER -u GECKODRIVER SAFARIDRIVER=/usr/bin/WebKitWebDriver \
  timeout 600 xvfb-run -a cargo test -p ttlkv-web --target wasm32-unknown-unknown --test indexeddb_in_browser
unset CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER

step "lint of the web bindings for wasm32 (as browsers get them, and with the server entries' features)"
cargo clippy -p ttlkv-web --target wasm32-unknown-unknown --all-targets -- -D warnings
server_features=$(node scripts/build-matrix.mjs | awk '$1 == "target" && $5 != "-" { print $5 }' | tail -n 1)
cargo clippy -p ttlkv-web --target wasm32-unknown-unknown --all-targets --features "$server_features" -- -D warnings

step "JS tests of the package (node --test)"
node_test tests/js/

step "the package in every runtime it names: Deno, workerd, Vercel Edge, Node files; the adapters; Keyv"
# The runtimes come from npm (root devDependencies: Deno, workerd, @edge-runtime/vm, Keyv and its
# test suite); `npm install` is quick when they are there already.
npm install --no-audit --no-fund
# The end-to-end tests' packages: TypeScript there also checks the adapters' declarations here.
if [ ! -d tests/e2e/node_modules/vite ] || [ ! -d tests/e2e/node_modules/playwright-core ] \
  || [ ! -d tests/e2e/node_modules/typescript ] || [ ! -d tests/e2e/node_modules/puppeteer-core ] \
  || [ ! -d tests/e2e/node_modules/selenium-webdriver ]; then
  # `npm install`, not `npm ci`: the lock file npm writes here lists only two of rollup's
  # per-platform optional packages, and `npm ci` then refuses it as out of sync.
  (cd tests/e2e && npm install --no-audit --no-fund)
fi
# A test build of the engine with the page-store conformance suite callable from JS, to check
# each adapter in its own runtime.
bash scripts/build-conformance.sh
node_test tests/runtimes/

step "end-to-end: the packed package in a scratch project (Node, tsc; Vite, plain modules, workers, many tabs, quota, kills, the demo in Chromium, Firefox and WebKit)"
node_test tests/e2e/

step "benchmarks at smoke sizes (they still run; figures come from npm run bench)"
if [ ! -d node_modules/lru-cache ] || [ ! -d node_modules/dexie ] || [ ! -d node_modules/idb-keyval ] \
  || [ ! -d node_modules/@isaacs/ttlcache ] || [ ! -d node_modules/playwright-core ]; then
  npm install --no-audit --no-fund
fi
node --expose-gc bench/run.mjs --smoke | tail -n 20
