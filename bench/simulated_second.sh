#!/usr/bin/env bash
# Wall time to simulate the first T seconds (default 1) of bench_dam_break_3d, per method, on 2 threads:
# DFSPH, WCSPH and PBF (PBF held at 0.5% mean compression by its density_error_target). Runs are
# interleaved ROUNDS times (default 2) so that noise on this shared machine hits every method alike;
# the table lists each run's wall time, steps, ns per particle and step, mean density error and
# iterations, from the runs' summary.json. Usage: bench/simulated_second.sh [T] [ROUNDS] [eddy binary]
set -euo pipefail
T=${1:-1}
ROUNDS=${2:-2}
EDDY=${3:-build/bin/eddy}
SCENE=scenes/bench_dam_break_3d.json
OUT=$(mktemp -d)
declare -A SETS=(
  [dfsph]="--set method=dfsph"
  [wcsph]=""
  [pbf]="--set method=pbf --set settings.density_error_target=0.005"
)
printf "%-6s %5s %9s %7s %12s %10s %10s %8s\n" method round wall_s steps ns/p/step mean_err max_err iters
for round in $(seq 1 "$ROUNDS"); do
  for m in dfsph wcsph pbf; do
    # shellcheck disable=SC2086
    "$EDDY" run "$SCENE" ${SETS[$m]} --until "$T" --threads 2 --out "$OUT/$m" > /dev/null 2>&1
    python3 - "$OUT/$m/summary.json" "$m" "$round" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
it = j.get("mean_iterations", 0.0)
dv = j.get("mean_divergence_iterations", 0.0)
its = f"{it:.1f}" + (f"+{dv:.1f}" if dv else "")
print(f"{sys.argv[2]:<6} {sys.argv[3]:>5} {j['wall_time']:9.1f} {j['steps']:7d} {j['ns_per_particle_step']:12.0f} "
      f"{100*j['mean_density_error']:9.3f}% {100*j['max_density_error']:9.2f}% {its:>8}")
PY
  done
done
rm -rf "$OUT"
