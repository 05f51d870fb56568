#!/usr/bin/env bash
# The web UI's steps, for run.sh and test.sh: install its npm packages from
# the lock file (only when they changed), then `build`, `check` (type check),
# `unit`, `e2e` (browser tests against kip serve) or `desktop` (the window).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

# A copy of the lock file the packages were installed from.
stamp=ui/node_modules/.kip-explorer-lock.json
if [ ! -f "$stamp" ] || ! cmp -s ui/package-lock.json "$stamp"; then
  echo "ui: npm ci"
  # --ignore-scripts: no package may download a browser or a driver.
  npm ci --prefix ui --no-audit --no-fund --ignore-scripts --loglevel=error
  cp ui/package-lock.json "$stamp"
fi

for step in "$@"; do
  case "$step" in
    build) npm --prefix ui run --silent build -- --logLevel warn ;;
    check) npm --prefix ui run --silent check ;;
    unit) npm --prefix ui run --silent test:unit ;;
    e2e) npm --prefix ui run --silent test:e2e ;;
    desktop) xvfb-run -a -s "-screen 0 1440x900x24" timeout 600 npm --prefix ui run --silent test:desktop ;;
    *) echo "ui.sh: unknown step $step" >&2; exit 2 ;;
  esac
done
