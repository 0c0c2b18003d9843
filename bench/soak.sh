#!/usr/bin/env bash
# Soak run (issue 12; not in CI): a long particle run and a long 2048^2 shallow-water run with periodic
# checkpoints, the resident memory (RSS) of each sampled every minute into a CSV, and a verdict: no
# growth over the second half of the run beyond 1% (soak_verdict below).
# Both run at once, on one thread each.
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

# The verdict on one RSS series. A run's working set grows while its fluid spreads (more occupied cells,
# longer neighbour lists) and spikes while a frame is written, so the first sample is no baseline: a leak
# is growth over the second half of the run, when the flow has developed. Compared: the median of the
# last 5 samples against the median of the 5 samples where the second half starts; at most 1%.
soak_verdict() {  # name, csv
  awk -F, -v name="$1" 'NR > 1 {n++; rss[n] = $2; if ($2 > peak) peak = $2}
    function median5(from,   a, i, j, t) { for (i = 0; i < 5; i++) a[i] = rss[from + i];
      for (i = 0; i < 5; i++) for (j = i + 1; j < 5; j++) if (a[j] < a[i]) {t = a[i]; a[i] = a[j]; a[j] = t}
      return a[2] }
    END { if (n < 10) {printf "soak %s: only %d samples, no verdict\n", name, n; exit 1}
          mid = int(n / 2) + 1; if (mid + 4 > n) mid = n - 4
          a = median5(mid); b = median5(n - 4); growth = (b - a) / a
          printf "soak %s: %d samples, RSS %d kB at the start, %d kB at half time, %d kB at the end (medians of 5), peak %d kB: growth over the second half %.2f%% %s\n",
                 name, n, rss[1], a, b, peak, 100 * growth, growth <= 0.01 ? "(ok)" : "(GROWS)"; exit growth > 0.01 }' "$2"
}

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
  soak_verdict "$name" "$OUT/${name}_rss.csv"
}

# Both at once, one thread each (an hour of wall time for both, not two).
soak_one particles scenes/bench_dam_break_3d.json --threads 1 & p1=$!
soak_one grid "$GRID_SCENE" --threads 1 & p2=$!
status=0
wait $p1 || status=1
wait $p2 || status=1
exit $status
