#!/usr/bin/env bash
# bench_dam_break_3d's front at 0.5 s for each particle method, with its defaults and with the dissipation
# matched (issue 40: "the three methods' fronts within 5%"). Not a timing: a figure for docs/methods.md,
# "bench_dam_break_3d's fronts". The front is the 99.9th percentile of x of the frame at --until; Z is its
# distance from the tank's left wall (x = -2 m), the column's a = 1 m, so Z/a is Martin & Moyce's measure
# (percentages of x itself would depend on where the scene puts its origin).
#
#   bash bench/dam_break_fronts.sh [eddy binary] [until] [threads]
#
# About 8 minutes on 2 cores. Uses /usr/bin/python3 (numpy) to read the csv frames.
set -euo pipefail
EDDY=${1:-build/bin/eddy}
UNTIL=${2:-0.5}
THREADS=${3:-2}
SCENE="$(cd "$(dirname "$0")/.." && pwd)/scenes/bench_dam_break_3d.json"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# name | overrides
runs=(
  "dfsph|method=dfsph"
  "dfsph-nu0.01|method=dfsph settings.viscosity=0.01"
  "dfsph-nu0.01-particles|method=dfsph settings.viscosity=0.01 settings.boundary_model=particles"
  "pbf|method=pbf"
  "wcsph|method=wcsph"
  "wcsph-wallvisc0|method=wcsph settings.boundary_viscosity=0"
  "wcsph-smooth|method=wcsph settings.boundary_model=smooth"
  "wcsph-alpha0.045-smooth|method=wcsph settings.artificial_viscosity=0.045 settings.boundary_model=smooth"
)
printf "%-26s %6s %9s %7s %10s\n" run steps front_x Z/a max_speed
for r in "${runs[@]}"; do
  name=${r%%|*}
  sets=()
  for o in ${r#*|}; do sets+=(--set "$o"); done
  "$EDDY" run "$SCENE" "${sets[@]}" --until "$UNTIL" --fps "$(/usr/bin/python3 -c "print(1/$UNTIL)")" \
    --format csv --threads "$THREADS" -o "$OUT/$name" > /dev/null 2>&1
  /usr/bin/python3 - "$OUT/$name" "$name" <<'PY'
import glob, json, sys
import numpy as np
d, name = sys.argv[1], sys.argv[2]
a = np.loadtxt(sorted(glob.glob(d + "/frames/particles_*.csv"))[-1], delimiter=",", skiprows=1)
front = np.percentile(a[:, 1], 99.9)
speed = np.sqrt((a[:, 4:7] ** 2).sum(axis=1)).max()
steps = json.load(open(d + "/summary.json"))["steps"]
print(f"{name:<26} {steps:6d} {front:9.3f} {front + 2.0:7.3f} {speed:10.2f}")
PY
done
