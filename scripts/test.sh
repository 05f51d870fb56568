#!/usr/bin/env bash
# Runs every test of KIP Explorer, after installing what is missing.
# This is the README's test command and what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

step() { printf '\n==> %s\n' "$*"; }

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
echo
echo "all tests passed"
