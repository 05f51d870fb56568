#!/usr/bin/env bash
# The README's first command: installs what is missing, builds the web UI,
# `kip` and the desktop app, puts the example capsules into the watched
# folder, and opens KIP Explorer on the default nexus. With no display it
# says so and serves the same UI in a browser through `kip serve`.
#
# Usage: ./scripts/run.sh [kip-explorer options, e.g. --db DIR --capsules DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

has_display() { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }

if has_display; then
  ./scripts/setup.sh --ui --desktop
else
  ./scripts/setup.sh --ui
fi
source scripts/env.sh

echo "==> building the web UI"
./scripts/ui.sh build

data="${XDG_DATA_HOME:-$HOME/.local/share}/kip-explorer"
capsules="${KIP_CAPSULES:-$data/capsules}"
mkdir -p "$capsules"
# The examples, once: never overwrite what a curator changed.
for f in capsules/examples/*; do
  [ -e "$capsules/$(basename "$f")" ] || cp "$f" "$capsules/"
done

if has_display; then
  echo "==> building KIP Explorer (release; the first build takes a few minutes)"
  cargo build --release --locked -p kip-explorer --features custom-protocol
  echo "==> opening KIP Explorer (watching $capsules)"
  exec ./target/release/kip-explorer --capsules "$capsules" "$@"
fi

echo "==> building kip (release)"
cargo build --release --locked -p kip-cli
echo
echo "No display is available (neither DISPLAY nor WAYLAND_DISPLAY is set), so the desktop"
echo "window cannot open. Serving the same UI in a browser instead."
./target/release/kip import "$capsules" >/dev/null || echo "(some capsules in $capsules did not import; the Import view shows why)"
echo "Open the URL below in a browser; stop with Ctrl+C."
exec ./target/release/kip serve --addr "${KIP_ADDR:-127.0.0.1:4840}" --ui ui/dist
