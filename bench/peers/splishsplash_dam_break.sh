#!/usr/bin/env bash
# The peer most users compare with, SPlisHSPlasH's DFSPH, side by side with eddy's DFSPH on the same
# dam break (bench_dam_break_3d is the geometry of the peer's own data/Scenes/DamBreakModel.json: a
# 4 x 3 x 1.5 m tank, a 1 m cube 5 cm from the left wall and 5 cm above the floor), first 0.5 s,
# 2 threads, runs interleaved so that the shared machine's noise hits both alike.
#
#   bash bench/peers/splishsplash_dam_break.sh PEER_DIR [ROUNDS] [eddy binary]
#
# PEER_DIR is a SPlisHSPlasH source tree with SPHSimulator built in PEER_DIR/bin (Release, OpenMP;
# how it was built offline for docs/performance.md is described there). The peer's scene is read from
# PEER_DIR/data/Scenes/DamBreakModel.json at run time and changed only where said:
#   peer      particleRadius 0.0125, as eddy's scene (the file has 0.025); everything else as shipped:
#             volume-map walls, "Standard" viscosity nu = 0.01 m^2/s, cflFactor 1, maxError 0.05 %
#   peer-nu0  the same without viscosity (viscosityMethod 0), as eddy's DFSPH (XSPH only)
#   eddy      bench_dam_break_3d with method dfsph, its defaults (XSPH 0.05, Akinci walls)
#   eddy-nu   the same with the peer's viscosity, nu = 0.01 m^2/s (eddy's implicit solver, Weiler 2018)
# The peer's steps are its SimStep time sum over its average (its log prints both), its particle count
# from its log; eddy's from summary.json. process_s includes set-up (the peer builds its walls' volume
# map, about 3-4 s, in its first round only: its cache sits beside the scene file, in this script's temporary
# directory, which the later rounds reuse); loop_s is
# the time stepping alone (eddy's summary wall_time, the peer's SimStep sum); ns/p/step is loop_s per
# particle and step.
set -euo pipefail
PEER=${1:?usage: splishsplash_dam_break.sh PEER_DIR [ROUNDS] [eddy binary]}
ROUNDS=${2:-2}
EDDY=${3:-build/bin/eddy}
SIM="$PEER/bin/SPHSimulator"
SCENE="$(cd "$(dirname "$0")/../.." && pwd)/scenes/bench_dam_break_3d.json"
[ -x "$SIM" ] || { echo "no $SIM: build SPlisHSPlasH's SPHSimulator first (docs/performance.md)"; exit 1; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
python3 - "$PEER" "$OUT" <<'PY'
import json, sys, os
peer, out = sys.argv[1], sys.argv[2]
base = json.load(open(os.path.join(peer, "data/Scenes/DamBreakModel.json")))
base["Configuration"]["particleRadius"] = 0.0125
for rb in base["RigidBodies"]:
    rb["geometryFile"] = os.path.join(peer, "data/models", os.path.basename(rb["geometryFile"]))
json.dump(base, open(os.path.join(out, "peer.json"), "w"), indent=1)
for m in base["Materials"]:
    m["viscosityMethod"] = 0
json.dump(base, open(os.path.join(out, "peer-nu0.json"), "w"), indent=1)
PY
printf "%-8s %5s %9s %7s %9s %6s %11s\n" run round process_s loop_s particles steps ns/p/step
for round in $(seq 1 "$ROUNDS"); do
  for run in eddy eddy-nu; do
    extra=""
    [ "$run" = eddy-nu ] && extra="--set settings.viscosity=0.01"
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$EDDY" run "$SCENE" --set method=dfsph $extra --until 0.5 --threads 2 --out "$OUT/$run" > /dev/null 2>&1
    end=$(date +%s.%N)
    python3 - "$OUT/$run/summary.json" "$run" "$round" "$start" "$end" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); w = float(sys.argv[5]) - float(sys.argv[4]); n = j["particles"]; loop = j["wall_time"]
print(f"{sys.argv[2]:<8} {sys.argv[3]:>5} {w:9.2f} {loop:7.2f} {n:9d} {j['steps']:6d} {loop / j['steps'] / n * 1e9:11.0f}")
PY
  done
  for scene in peer peer-nu0; do
    start=$(date +%s.%N)
    OMP_NUM_THREADS=2 "$SIM" --no-gui --stopAt 0.5 --output-dir "$OUT/out-$scene" "$OUT/$scene.json" > "$OUT/$scene.log" 2>&1
    end=$(date +%s.%N)
    python3 - "$OUT/$scene.log" "$scene" "$round" "$start" "$end" <<'PY'
import re, sys
log = open(sys.argv[1]).read(); w = float(sys.argv[5]) - float(sys.argv[4])
n = int(re.search(r"Number of fluid particles: (\d+)", log).group(1))
avg = float(re.search(r"Average time: SimStep: ([\d.]+) ms", log).group(1))
tot = float(re.search(r"Time sum: SimStep: ([\d.]+) ms", log).group(1))
steps = round(tot / avg)
print(f"{sys.argv[2]:<8} {sys.argv[3]:>5} {w:9.2f} {tot / 1000:7.2f} {n:9d} {steps:6d} {tot / 1000 / steps / n * 1e9:11.0f}")
PY
  done
done
