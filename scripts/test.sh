#!/usr/bin/env bash
# Runs every test of KIP Explorer, after installing what is missing.
# This is the README's test command and what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --ui --browser --desktop --tools
source scripts/env.sh
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

step() { printf '\n==> %s\n' "$*"; }

# The desktop crate embeds ui/dist and the UI's bindings are generated from
# kip-api: build the UI before the Rust steps.
step "web UI: install and build"
./scripts/ui.sh build
step "format"
cargo fmt --all -- --check
step "lint"
cargo clippy --workspace --all-targets --locked -- -D warnings
step "unit, integration and golden tests"
cargo test --workspace --locked
step "capsules check"
for f in capsules/genesis/*.kip; do
  ./target/debug/kip check "$f" >/dev/null || { echo "capsule $f does not check"; exit 1; }
done
step "web UI: type check and unit tests"
./scripts/ui.sh check unit
step "web UI in Chromium against kip serve"
cargo build --locked -p kip-cli
./scripts/ui.sh e2e
step "desktop window over WebDriver (Xvfb)"
cargo build --locked -p kip-explorer --features custom-protocol
./scripts/ui.sh desktop
step "desktop package (.deb of the debug build): contents, packaged binaries (Xvfb)"
deb=$(./scripts/package.sh --debug --no-ui)
KIP_DEB="$deb" xvfb-run -a -s "-screen 0 1440x900x24" timeout 600 npm --prefix ui run --silent test:package
echo
echo "all tests passed"
