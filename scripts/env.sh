# Sourced by the scripts: the tools setup.sh may have installed locally.
export PATH="$PWD/.tools/bin:$PWD/.tools/node/bin:$HOME/.cargo/bin:$PATH"

# run_step NAME FIRST_TIME_HINT CMD…: one step of a script. Says what runs
# and how long it took the last time on this machine (or the hint, the
# first time), runs it, and says how long it took. Times are kept in
# .tools/step-times/.
run_step() {
  local name="$1" hint="$2"
  shift 2
  local dir="$PWD/.tools/step-times" key
  key=$(printf '%s' "$name" | tr -c 'a-zA-Z0-9' '_')
  mkdir -p "$dir"
  local expect=""
  if [ -s "$dir/$key" ]; then
    expect=" (last time: $(human_secs "$(cat "$dir/$key")"))"
  elif [ -n "$hint" ]; then
    expect=" ($hint)"
  fi
  printf '\n==> %s%s\n' "$name" "$expect"
  local start=$SECONDS
  "$@"
  local took=$((SECONDS - start))
  echo "$took" >"$dir/$key"
  if [ "$took" -ge 3 ]; then
    printf '    done in %s\n' "$(human_secs "$took")"
  fi
}

human_secs() {
  local s="$1"
  if [ "$s" -ge 60 ]; then printf '%dm %02ds' $((s / 60)) $((s % 60)); else printf '%ds' "$s"; fi
}

# install_kip BIN: puts a copy of BIN on the PATH as `kip` — /usr/local/bin
# when it is writable (root), else ~/.local/bin — so the README's examples
# run as written. Says where, and how to reach it when that folder is not
# on the PATH.
install_kip() {
  local bin="$1" dest
  if [ -w /usr/local/bin ]; then dest=/usr/local/bin; else dest="$HOME/.local/bin"; fi
  mkdir -p "$dest"
  install -m 0755 "$bin" "$dest/kip"
  echo "kip: installed at $dest/kip (a copy of $bin)"
  case ":$PATH:" in
    *":$dest:"*) ;;
    *) echo "kip: $dest is not on your PATH; add it with: export PATH=\"$dest:\$PATH\"" ;;
  esac
}
