#!/usr/bin/env bash
# Installs what building and testing KIP Explorer needs and is missing on a
# Debian machine: system packages (through apt, as root or with sudo) and the
# Rust toolchain (through rustup). Safe to run again: it skips what is there.
set -euo pipefail

need_pkgs=()
for pkg in build-essential pkg-config ca-certificates curl git; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_pkgs+=("$pkg")
done
# Extra package groups, requested by the scripts that need them.
for extra in "$@"; do
  case "$extra" in
    --ui) for pkg in nodejs npm; do
            command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && break
            dpkg -s "$pkg" >/dev/null 2>&1 || need_pkgs+=("$pkg")
          done ;;
    --browser) dpkg -s chromium >/dev/null 2>&1 || need_pkgs+=(chromium) ;;
    --desktop) for pkg in libwebkit2gtk-4.1-dev xvfb xauth webkit2gtk-driver; do
                 dpkg -s "$pkg" >/dev/null 2>&1 || need_pkgs+=("$pkg")
               done ;;
    *) echo "setup.sh: unknown option $extra" >&2; exit 2 ;;
  esac
done

if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "setup: installing ${need_pkgs[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}"
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
