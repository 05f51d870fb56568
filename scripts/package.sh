#!/usr/bin/env bash
# Builds the desktop app's Debian package: the web UI, `kip` and
# `kip-explorer` in release (the UI embedded), then Tauri's bundler (the
# npm package @tauri-apps/cli-linux-x64-gnu, from ui/package-lock.json) makes
# a .deb with /usr/bin/kip-explorer, /usr/bin/kip, the desktop entry and the
# icons of icons/ (bundle section of src-tauri/tauri.conf.json).
# Prints the .deb's path as its last line (progress goes to stderr). Safe to
# run again: cargo rebuilds only what changed and the bundler replaces the
# package. Install it with: sudo apt install ./target/release/bundle/deb/kip-explorer_*.deb
#   --debug   package the debug build instead (what scripts/test.sh checks:
#             it reuses the suite's debug builds, so it takes seconds)
#   --no-ui   use ui/dist as it is (rebuilding it makes cargo re-embed it)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

profile=release
build_ui=1
for arg in "$@"; do
  case "$arg" in
    --debug) profile=debug ;;
    --no-ui) build_ui=0 ;;
    *) echo "package.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
cargo_profile=()
bundle_profile=()
first_build=""
if [ "$profile" = debug ]; then
  bundle_profile=(--debug)
else
  cargo_profile=(--release)
  first_build=" (a first release build takes about 10 minutes)"
fi

started=$SECONDS
step() {
  printf '==> package: %s\n' "$*" >&2
  step_started=$SECONDS
}
done_step() { printf '    done in %ss\n' "$((SECONDS - step_started))" >&2; }

[ "$(uname -s)/$(uname -m)" = Linux/x86_64 ] || {
  echo "package.sh: the .deb is built on x86_64 Linux only (the bundler is @tauri-apps/cli-linux-x64-gnu)" >&2
  exit 2
}
# dpkg-shlibdeps and strip come with build-essential (dpkg-dev, binutils).
for tool in dpkg-deb dpkg-shlibdeps strip node npm cargo; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "package.sh: $tool is missing (./scripts/setup.sh --ui --desktop installs what building needs)" >&2
    exit 2
  }
done

# Where cargo puts release builds (CARGO_TARGET_DIR or a cargo config may move it).
target=$(cargo metadata --format-version 1 --no-deps --locked |
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).target_directory))')

if [ "$build_ui" = 1 ]; then
  step "web UI (npm ci when the lock file changed, vite build)"
  ./scripts/ui.sh build >&2
else
  step "web UI: ui/dist as it is, the bundler from ui/node_modules"
  [ -f ui/dist/index.html ] || { echo "package.sh: ui/dist is missing (run without --no-ui)" >&2; exit 2; }
  ./scripts/ui.sh >&2
fi
done_step

step "kip, $profile build$first_build"
cargo build "${cargo_profile[@]}" --locked -p kip-cli >&2
done_step

step "kip-explorer, $profile build with the UI embedded$first_build"
cargo build "${cargo_profile[@]}" --locked -p kip-explorer --features custom-protocol >&2
done_step

step "Debian package (Tauri's bundler)"
deb_dir="$target/$profile/bundle/deb"
rm -rf "$deb_dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The libraries both binaries link, with the versions they need, as Debian
# computes them (dpkg-shlibdeps, from dpkg-dev); the bundler adds its own
# libwebkit2gtk-4.1-0 and libgtk-3-0 to these.
mkdir -p "$work/shlibs/debian"
printf 'Source: kip-explorer\n\nPackage: kip-explorer\nArchitecture: any\n' >"$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$target/$profile/kip" "$target/$profile/kip-explorer" 2>/dev/null |
  sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "package.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# `kip` comes from wherever cargo built it (tauri.conf.json's mapping assumes ./target/release).
config=$(node -e '
  const [kip, depends] = process.argv.slice(1);
  console.log(JSON.stringify({ bundle: { linux: { deb: { files: { "/usr/bin/kip": kip }, depends: depends.split(", ") } } } }));
' "$target/$profile/kip" "$depends")
node --input-type=module -e '
  import { createRequire } from "node:module";
  const require = createRequire(process.cwd() + "/ui/package.json");
  let cli;
  try {
    cli = require("@tauri-apps/cli-linux-x64-gnu");
  } catch {
    console.error("package.sh: the Tauri bundler is missing from ui/node_modules (./scripts/ui.sh installs it)");
    process.exit(2);
  }
  cli.run(process.argv.slice(1), "tauri", (error, ok) => {
    if (error) {
      console.error(error.message);
      process.exit(1);
    }
    process.exit(ok === false ? 1 : 0);
  });
' bundle "${bundle_profile[@]}" --bundles deb --features custom-protocol --ci --config "$config" >&2
built=("$deb_dir"/*.deb)
[ ${#built[@]} -eq 1 ] && [ -f "${built[0]}" ] || { echo "package.sh: the bundler made no single .deb in $deb_dir" >&2; exit 1; }
done_step

# The bundler copies the binaries as cargo left them, with the release
# profile's line tables (about 4/5 of their size); Debian packages ship them
# stripped. Symbols stay, so a backtrace still names its functions.
step "strip the binaries' debug information, name the package as Debian does"
dpkg-deb -R "${built[0]}" "$work/root"
strip --strip-debug "$work/root/usr/bin/kip" "$work/root/usr/bin/kip-explorer"
(cd "$work/root" && find usr -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
sed -i "s/^Installed-Size: .*/Installed-Size: $(du -sk --exclude=DEBIAN "$work/root" | cut -f1)/" "$work/root/DEBIAN/control"
# The bundler's file name has the product name's space; Debian's is package_version_arch.
version=$(sed -n 's/^Version: //p' "$work/root/DEBIAN/control")
deb="$deb_dir/kip-explorer_${version}_amd64.deb"
# The bundler's unpacked copy beside it is a few hundred MB.
rm -rf "${built[0]}" "${built[0]%.deb}"
# xz as Debian's own packages (about 20 s); the test's debug package uses zstd (under a second).
compression=xz
[ "$profile" = debug ] && compression=zstd
dpkg-deb --root-owner-group "-Z$compression" --build "$work/root" "$deb" >/dev/null
done_step

printf '==> package: built in %ss (%s KB)\n' "$((SECONDS - started))" "$(($(stat -c %s "$deb") / 1024))" >&2
echo "$deb"
