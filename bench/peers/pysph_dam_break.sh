#!/usr/bin/env bash
# Peer run, side by side with eddy: PySPH (Debian's python3-pysph, 1.0b1) WCSPH dam breaks, its own
# bundled examples, stepped a fixed number of steps with OpenMP, no output. Prints ns per fluid
# particle per step. Not part of the test suite.
#   bash bench/peers/pysph_dam_break.sh [steps] [threads]
# Needs: apt-get install python3-pysph (not installed by scripts/install-deps.sh: it is a peer, not a
# dependency).
set -euo pipefail
steps=${1:-40}
threads=${2:-2}
py=/usr/bin/python3
ex=$($py -c 'import os, pysph.examples as e; print(os.path.dirname(e.__file__))')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() {  # name, script, extra args
    local name=$1 script=$2; shift 2
    # A first short run compiles PySPH's generated code, so that the timed run measures stepping only.
    OMP_NUM_THREADS=$threads $py "$ex/$script" --max-steps 2 --disable-output --openmp -d "$work/warm" "$@" >/dev/null 2>&1
    local log="$work/$name.log"
    OMP_NUM_THREADS=$threads $py "$ex/$script" --max-steps "$steps" --disable-output --openmp -d "$work/$name" "$@" >"$log" 2>&1
    local n secs
    n=$(grep -m1 -Eo 'fluid: [0-9]+' "$log" | grep -Eo '[0-9]+')
    secs=$(grep -m1 -Eo 'Run took: [0-9.]+' "$log" | grep -Eo '[0-9.]+$')
    awk -v name="$name" -v n="$n" -v s="$secs" -v k="$steps" -v t="$threads" \
        'BEGIN { printf "pysph %-16s threads %d  fluid particles %7d  %6.2f s for %d steps  %8.0f ns per fluid particle per step\n", name, t, n, s, k, 1e9*s/(n*k) }'
}
run dam_break_3d dam_break_3d.py
run dam_break_2d dam_break_2d.py
