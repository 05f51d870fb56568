#!/usr/bin/env bash
# Installs what is missing, builds KIP Explorer and starts it on the default
# nexus. Until the desktop app lands (see the README's status), this builds
# the `kip` command line, imports the example capsules into the default nexus
# and prints its Cognitive Primer.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PATH"
cargo build --release --locked -p kip-cli
kip=./target/release/kip
"$kip" import capsules/examples >/dev/null
echo "The default nexus now holds the example capsules. Its Cognitive Primer:"
"$kip" exec 'DESCRIBE PRIMER'
echo
echo "Next: $kip exec 'SEARCH CONCEPT \"aspirin\"'   (see README.md for more)"
