#!/usr/bin/env bash
# Instructions per tools/call on the server, floor against ours, both eras (issue #41):
#   cargo bench --bench http_floor --no-run && benches/http_floor/callgrind.sh [CALLS]
# Each server runs alone under callgrind; one connection is warmed up (200 calls), the
# counters are zeroed, and CALLS calls (default 2000) on a fresh connection are counted.
# HTTP_FLOOR_CLIENTS=50 spreads the calls over that many connections at once.
set -euo pipefail
BIN=${BIN:-$(ls -t target/release/deps/http_floor-* | grep -v '\.d$' | head -1)}
CALLS=${1:-2000}
OUT=${OUT:-/tmp/http_floor_callgrind}
mkdir -p "$OUT"
for server in ${SERVERS:-floor mcp}; do
  for era in ${ERAS:-session stateless}; do
    file="$OUT/$server-$era.out"
    rm -f "$file"* "$OUT/port"
    HTTP_FLOOR_SERVE=$server valgrind --tool=callgrind ${VG_OPTS:-} --callgrind-out-file="$file" \
      "$BIN" > "$OUT/port" 2> "$OUT/valgrind.log" &
    vg=$!
    until [ -s "$OUT/port" ]; do sleep 0.2; done
    port=$(cat "$OUT/port")
    HTTP_FLOOR_DRIVE=$port HTTP_FLOOR_ERA=$era HTTP_FLOOR_CALLS=200 "$BIN"
    callgrind_control -z "$vg" > /dev/null
    HTTP_FLOOR_DRIVE=$port HTTP_FLOOR_ERA=$era HTTP_FLOOR_CALLS=$CALLS "$BIN"
    callgrind_control -d "$vg" > /dev/null
    kill "$vg"; wait "$vg" 2> /dev/null || true
    dump="$file.1"
    total=$(callgrind_annotate "$dump" 2> /dev/null | grep -m1 'PROGRAM TOTALS' | awk '{gsub(",","",$1); print $1}')
    echo "$server $era: $((total / CALLS)) instructions per call ($dump)"
  done
done
