# Sourced by the scripts: the tools setup.sh may have installed locally.
export PATH="$PWD/.tools/bin:$PWD/.tools/node/bin:$HOME/.cargo/bin:$PATH"
