#!/bin/sh
# Times one build's bulk link import the way BENCHMARKS.md compares builds:
# the 50 link capsules of the 1M benchmark graph imported by `kip import`
# into a fresh copy of a store that already holds the schema and the 200k
# concepts (the copy is part of the time). Prepare once with
#   ./scripts/bench/import-links.sh --prepare KIP_BINARY
# (keeps the capsules in $DIR/capsules and the store in $DIR/base), then
#   farm-bench -n 3 --warmup 0 --timeout 300 \
#     --vs "./scripts/bench/import-links.sh OLD_KIP" -- ./scripts/bench/import-links.sh NEW_KIP
set -eu
DIR=${KIP_BENCH_DIR:-/tmp/kip-import-links}
if [ "${1:-}" = "--prepare" ]; then
  kip=$2
  rm -rf "$DIR" && mkdir -p "$DIR"
  KIP_BENCH_KEEP_CAPSULES=1 "$kip" bench --db "$DIR/full" --iterations 1 > /dev/null 2>&1
  mv "$DIR/full-capsules" "$DIR/capsules"
  rm -rf "$DIR/full" "$DIR"/full.*
  "$kip" import --db "$DIR/base" --originator bench "$DIR"/capsules/0-schema-*.kip "$DIR"/capsules/1-concepts-*.kip > /dev/null 2>&1
  exit 0
fi
run="$DIR/run-$$"
rm -rf "$run" && cp -r "$DIR/base" "$run"
status=0
"$1" import --db "$run" --originator bench "$DIR"/capsules/2-links-*.kip > /dev/null 2>&1 || status=$?
rm -rf "$run"
exit $status
