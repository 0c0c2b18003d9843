#!/usr/bin/env bash
# The cost of bodies (issue 30; docs/performance.md, "Bodies"): each pair of scenes run side by side in
# one session, the same number of steps, and the ratio of their mean step times (summary.json).
#   bench_dam_break_3d_bodies    100 crates the water moves, against the same crates as fixed obstacles
#   bench_ducks_1000             1,000 balls with Bullet's contacts, against the water alone
# Usage: bench/bodies_cost.sh [eddy binary] [threads] [steps]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
eddy="${1:-$here/../build/bin/eddy}"
threads="${2:-2}"
steps="${3:-150}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
ms() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['mean_ms_per_step'])" "$1/summary.json"; }
run() { "$eddy" run "$here/scenes/$1.json" -o "$out/$1" -j "$threads" --steps "$steps" >/dev/null 2>&1; ms "$out/$1"; }
for pair in "bench_dam_break_3d_bodies bench_dam_break_3d_crates_fixed" "bench_ducks_1000 bench_ducks_none"; do
    set -- $pair
    a=$(run "$1"); b=$(run "$2"); a2=$(run "$1"); b2=$(run "$2")
    /usr/bin/python3 -c "
import sys
a, b, a2, b2 = map(float, sys.argv[3:7])
print(f'{sys.argv[1]}: {a:.1f} / {a2:.1f} ms a step against {sys.argv[2]}: {b:.1f} / {b2:.1f} ms: ratio {a/b:.3f}, {a2/b2:.3f}')
" "$1" "$2" "$a" "$b" "$a2" "$b2"
done
