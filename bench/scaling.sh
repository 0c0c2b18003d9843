#!/usr/bin/env bash
# Strong scaling on one machine (issue 14, docs/scaling.md): the same scene on 1 process x 2 threads
# and on 2 processes x 1 thread (mpirun), rounds interleaved; per step time, halo bytes and time in
# communication from summary.json.
#   bash bench/scaling.sh [STEPS=100] [ROUNDS=3] [BUILD=build] [SCENE=bench/scenes/bench_basin_2048.json] [eddy run flags]
# e.g. particles: bash bench/scaling.sh 1233 2 build scenes/bench_dam_break_3d.json --set method=dfsph
set -euo pipefail
STEPS=${1:-100}; ROUNDS=${2:-3}; BUILD=${3:-build}
HERE=$(cd "$(dirname "$0")/.." && pwd)
EDDY=$HERE/$BUILD/bin/eddy
SCENE=${4:-$HERE/bench/scenes/bench_basin_2048.json}
shift $(( $# < 4 ? $# : 4 ))  # the rest: flags for eddy run
FORMAT=vti; grep -q '"shallow_water"' "$SCENE" || FORMAT=vtk
command -v mpirun >/dev/null || { echo "scaling.sh: no mpirun (Debian: openmpi-bin)"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
report() {
    python3 - "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
p = s.get("processes")
line = f"{sys.argv[2]:<8} {s['method']:<6} {s['mean_ms_per_step']:8.2f} ms/step  {s['steps']} steps  wall {s['wall_time']:.2f} s"
if p:
    n = p["steps"]
    line += "  halo " + "/".join(f"{b / 1e6:.2f}" for b in p["halo_bytes_sent_per_step"]) + " MB/step"
    line += "  halo exchange " + "/".join(f"{1e3 * t / n:.2f}" for t in p["halo_exchange_seconds"]) + " ms/step"
    line += "  reductions " + "/".join(f"{1e3 * t / n:.2f}" for t in p["reduction_seconds"]) + " ms/step"
    if "blocks" in p:
        line += f"  blocks {p['blocks']} halo {p['halo_cells_wide']}"
    else:
        line += f"  {p['decomposition']}, ghosts/step " + "/".join(f"{g:.0f}" for g in p["ghosts_per_step"])
        line += f", imbalance {p['load_imbalance']:.3f} at worst, {p['rebalances']} rebalances"
print(line)
PY
}
echo "$(basename "$SCENE" .json), $STEPS steps, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
    "$EDDY" run "$SCENE" --steps "$STEPS" --out "$OUT/a" -j2 --quiet --format $FORMAT "$@"
    report "$OUT/a" "1 x 2"
    mpirun -np 2 "$EDDY" run "$SCENE" --steps "$STEPS" --out "$OUT/b" -j1 --quiet --format $FORMAT "$@"
    report "$OUT/b" "2 x 1"
done
