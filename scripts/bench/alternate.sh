#!/bin/sh
# Fresh 1M `kip bench --iterations 1` runs of several builds in turns (the
# machine's speed drifts: compare builds within a round), appending one line
# per run to OUT: binary, propositions/s, seconds, peak RssAnon MB.
#   ROUNDS="1 2 3" ./scripts/bench/alternate.sh OUT OLD_KIP NEW_KIP
set -eu
out=$1; shift
db=${KIP_BENCH_DIR:-/tmp/kip-alternate}
for round in ${ROUNDS:-1 2 3}; do
  for kip in "$@"; do
    rm -rf "$db" "$db-capsules" "$db.json"
    "$kip" bench --db "$db" --iterations 1 --json "$db.json" > /dev/null 2>&1
    python3 -c "
import json, sys
i = json.load(open(sys.argv[1]))['import']
print(sys.argv[2], round(i['propositions_per_second']), round(i['proposition_seconds'], 2), i['peak_rss_anon_mb'])
" "$db.json" "$kip" >> "$out"
  done
done
rm -rf "$db" "$db-capsules" "$db.json"
