#!/usr/bin/env bash
# Peak memory per process (issue 44, docs/scaling.md): a particle scene on one process, then on N under
# mpirun with --pieces (frames and checkpoints one piece per process: nothing gathered), each process's
# maximum resident set size (GNU time's %M) and its ratio to the one-process run's.
#   bash bench/rank_memory.sh [N=4] [STEPS=6] [BUILD=build] [SCENE and eddy run flags]
# Default scene: bench_dam_break_3d as DFSPH at r = 5 mm, 10^6 particles (12 s on one process here).
set -euo pipefail
N=${1:-4}; STEPS=${2:-6}; BUILD=${3:-build}
shift $(( $# < 3 ? $# : 3 ))
ARGS=("$@"); [ ${#ARGS[@]} -gt 0 ] || ARGS=(bench_dam_break_3d --set method=dfsph --set particle_radius=0.005)
HERE=$(cd "$(dirname "$0")/.." && pwd)
EDDY=$HERE/$BUILD/bin/eddy
command -v mpirun >/dev/null || { echo "rank_memory.sh: no mpirun (Debian: openmpi-bin)"; exit 1; }
[ -x /usr/bin/time ] || { echo "rank_memory.sh: needs GNU time as /usr/bin/time (Debian: time)"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
cat > "$OUT/rss.sh" <<'SH'
#!/bin/sh
exec /usr/bin/time -f "rank ${OMPI_COMM_WORLD_RANK:-0} %M" -o "$RSS_DIR/rank_${OMPI_COMM_WORLD_RANK:-0}" "$@"
SH
chmod +x "$OUT/rss.sh"
export RSS_DIR=$OUT
echo "${ARGS[*]}, $STEPS steps, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
"$OUT/rss.sh" "$EDDY" run "${ARGS[@]}" --steps "$STEPS" --out "$OUT/one" -j1 --quiet --format vtk
one=$(cut -d' ' -f3 "$OUT/rank_0")
rm "$OUT/rank_0"
mpirun --oversubscribe -x RSS_DIR -np "$N" "$OUT/rss.sh" "$EDDY" run "${ARGS[@]}" --steps "$STEPS" --out "$OUT/many" -j1 --quiet --format vtk --pieces
/usr/bin/python3 - "$OUT" "$N" "$one" <<'PY'
import json, sys
out, n, one = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
peaks = [int(open(f"{out}/rank_{r}").read().split()[2]) for r in range(n)]
p = json.load(open(f"{out}/many/summary.json"))["processes"]
print(f"1 process: {one / 1024:.0f} MB")
for r, k in enumerate(peaks):
    print(f"rank {r} of {n}: {k / 1024:.0f} MB = {k / one:.3f} x one process ({p['particles_per_rank'][r]:.0f} particles, "
          f"{p['ghosts_per_step'][r]:.0f} ghosts, {p['walls_per_rank'][r]:.0f} wall particles)")
print(f"largest: {max(peaks) / one:.3f} x one process")
if "volume_map_nodes_peak_per_rank" in p:  # walls drawn from volume maps: the nodes each process keeps
    m = json.load(open(f"{out}/one/summary.json"))["volume_map_nodes"]
    print(f"volume map nodes of {m['held']} held: one process {m['filled']} at the end, {m['peak']} at most; "
          f"per rank {p['volume_map_nodes_filled_per_rank']} at the end, {p['volume_map_nodes_peak_per_rank']} at most")
PY
