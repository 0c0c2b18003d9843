#!/usr/bin/env bash
# Soak run (issue 12; not in CI): a long particle run and a long 2048^2 shallow-water run with periodic
# checkpoints, the resident memory (RSS) of each sampled every minute into a CSV, and a verdict: the
# RSS after the first sample must not grow by more than 5% (no leak, no unbounded growth).
#   bench/soak.sh [SECONDS=3600] [BUILD=build]   -> soak/particles_rss.csv, soak/grid_rss.csv
set -euo pipefail
SECONDS_TOTAL=${1:-3600}
BUILD=${2:-build}
EDDY="$BUILD/bin/eddy"
OUT=soak
SAMPLE=${SOAK_SAMPLE:-60}
mkdir -p "$OUT"
[ -x "$EDDY" ] || { echo "soak: $EDDY not built (make build)" >&2; exit 1; }

# A 2048^2 grid: the bundled wet dam break, refined.
GRID_SCENE="$OUT/shallow_2048.json"
sed -e 's/"cells": *\[[^]]*\]/"cells": [2048, 2048]/' -e 's/"dx": *[0-9.eE+-]*/"dx": 0.005/' \
  scenes/shallow_dam_break_wet.json > "$GRID_SCENE"

soak_one() {  # name, then eddy run arguments
  local name=$1; shift
  "$EDDY" run "$@" --out "$OUT/$name" --until 1e6 --checkpoint-every 1 --quiet --fps 1 &
  local pid=$!
  echo "elapsed_s,rss_kb" > "$OUT/${name}_rss.csv"
  local t=0
  while [ $t -lt "$SECONDS_TOTAL" ] && kill -0 $pid 2>/dev/null; do
    sleep "$SAMPLE"; t=$((t + SAMPLE))
    local rss; rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
    echo "$t,$rss" >> "$OUT/${name}_rss.csv"
  done
  kill -INT $pid 2>/dev/null || true
  wait $pid || true
  awk -F, -v name="$name" 'NR == 2 {first = $2} NR > 1 {last = $2; if ($2 > max) max = $2}
    END {growth = first > 0 ? (max - first) / first : 0;
         printf "soak %s: RSS first %d kB, largest %d kB, last %d kB: growth %.1f%% %s\n", name, first, max, last,
                100 * growth, growth <= 0.05 ? "(ok)" : "(GROWS)"; exit growth > 0.05}' "$OUT/${name}_rss.csv"
}

status=0
soak_one particles scenes/bench_dam_break_3d.json || status=1
soak_one grid "$GRID_SCENE" || status=1
exit $status
