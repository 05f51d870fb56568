#!/usr/bin/env bash
# Installs what is missing, builds KIP Explorer and starts it on the default
# nexus. Until the desktop app lands (see the README's status), this builds
# the `kip` command line and checks the Genesis capsules with it.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo build --release --locked -p kip-cli
for f in capsules/genesis/*.kip; do
  printf '%s: ' "$f"
  ./target/release/kip check "$f"
done
echo
echo "kip is at ./target/release/kip — try: ./target/release/kip fmt capsules/genesis/01_genesis.kip"
