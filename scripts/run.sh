#!/usr/bin/env bash
# The README's first command: installs what is missing, builds the web UI,
# `kip` (installed on the PATH, see install_kip in env.sh) and the desktop
# app, puts the example capsules into the watched folder, and opens KIP
# Explorer on the default nexus. Each step says how long it took last time. With no display it
# says so and serves the same UI in a browser through
# `kip serve --capsules`, which watches the same folder as the app would.
#
# Usage: ./scripts/run.sh [kip-explorer options, e.g. --db DIR --capsules DIR]
set -euo pipefail

data="${XDG_DATA_HOME:-$HOME/.local/share}/kip-explorer"
capsules="${KIP_CAPSULES:-$data/capsules}"
# `--capsules DIR` picks the watched folder (the examples go there too); the
# other options go to the app, or to `kip serve` (which takes `--db DIR` too).
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --capsules) capsules="${2:?--capsules needs a folder}"; shift 2 ;;
    --capsules=*) capsules="${1#--capsules=}"; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
# Relative to where run.sh was started, not to the repository.
case "$capsules" in /*) ;; *) capsules="$PWD/$capsules" ;; esac
cd "$(dirname "$0")/.."

has_display() { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }

if has_display; then
  ./scripts/setup.sh --ui --desktop
else
  ./scripts/setup.sh --ui
fi
source scripts/env.sh

run_step "building the web UI" "about 1 min the first time" ./scripts/ui.sh build

mkdir -p "$capsules"
# The examples, once: never overwrite what a curator changed.
for f in capsules/examples/*; do
  [ -e "$capsules/$(basename "$f")" ] || cp "$f" "$capsules/"
done

if has_display; then
  # One cargo run for both binaries: they share most of their dependencies.
  run_step "building KIP Explorer and kip (release)" "about 6 min on 2 cores the first time, seconds after" \
    cargo build --release --locked -p kip-explorer -p kip-cli --features kip-explorer/custom-protocol
  install_kip target/release/kip
  echo "==> opening KIP Explorer (watching $capsules)"
  exec ./target/release/kip-explorer --capsules "$capsules" ${args[@]+"${args[@]}"}
fi

run_step "building kip (release)" "about 3 min on 2 cores the first time, seconds after" \
  cargo build --release --locked -p kip-cli
install_kip target/release/kip
echo
echo "No display is available (neither DISPLAY nor WAYLAND_DISPLAY is set), so the desktop"
echo "window cannot open. Serving the same UI in a browser instead, watching $capsules"
echo "(files written into it are imported; the Import view shows each file's status)."
echo "Open the URL below in a browser; stop with Ctrl+C."
exec ./target/release/kip serve --addr "${KIP_ADDR:-127.0.0.1:4840}" \
  --capsules "$capsules" ${args[@]+"${args[@]}"}
