#!/usr/bin/env bash
# Runs every test of KIP Explorer, after installing what is missing.
# This is the README's test command and what CI runs (.ci/run). Each step
# says how long it took the last time on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --ui --browser --desktop --tools
source scripts/env.sh
# setup.sh installed the embedding model: tests that search by meaning must
# find it, and fail rather than skip when it is missing.
[ "${KIP_SETUP_NO_MODEL:-0}" = 1 ] || export KIP_EMBED_REQUIRED=1
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# A run of every test rebuilds what changed once: incremental compilation's
# caches would only take disk (gigabytes on a fresh clone, where CI has run
# out of it). Set CARGO_INCREMENTAL=1 to keep them.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

check_capsules() {
  for f in capsules/genesis/*.kip; do
    ./target/debug/kip check "$f" >/dev/null || { echo "capsule $f does not check"; exit 1; }
  done
}

# The desktop crate and `kip` embed ui/dist, and the UI's bindings are
# generated from kip-api: build the UI before the Rust steps.
run_step "web UI: install and build" "about 1 min the first time" ./scripts/ui.sh build
run_step "format" "" cargo fmt --all -- --check
run_step "lint" "about 6 min on 2 cores the first time" \
  cargo clippy --workspace --all-targets --locked -- -D warnings
run_step "unit, integration, golden and end-to-end tests" "about 5 min the first time" \
  cargo test --workspace --locked
run_step "capsules check" "" check_capsules
run_step "web UI: type check and unit tests" "" ./scripts/ui.sh check unit
run_step "web UI in Chromium against kip serve" "about 1 min" \
  bash -c 'cargo build --locked -p kip-cli && ./scripts/ui.sh e2e'
run_step "desktop window over WebDriver (Xvfb)" "about 3 min the first time" \
  bash -c 'cargo build --locked -p kip-explorer --features custom-protocol && ./scripts/ui.sh desktop'
run_step "desktop package (.deb of the debug build): contents, packaged binaries (Xvfb)" "about 30 s" \
  bash -c 'deb=$(./scripts/package.sh --debug --no-ui) && KIP_DEB="$deb" xvfb-run -a -s "-screen 0 1440x900x24" timeout 600 npm --prefix ui run --silent test:package'
# The README's examples call `kip`: make sure there is one (run.sh installs
# a release build; this one only when none is there yet).
command -v kip >/dev/null 2>&1 || install_kip target/debug/kip
echo
echo "all tests passed"
