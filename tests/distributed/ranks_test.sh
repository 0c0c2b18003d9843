#!/usr/bin/env bash
# The distributed layer (issue 14), through the CLI under mpirun: every check runs a scene on 1 process
# (no mpirun) and on N = 2, 3, 4 processes (--oversubscribe: 3 and 4 on 2 cores) and compares.
#   ranks_test.sh EDDY CHECK [args...]
# CHECK:
#   same SCENE UNTIL [--set ...]   frames (.vti, .csv, .obj) byte-identical for N = 1..4; summaries agree
#   resume SCENE T1 T2             N = 2 runs to T1, N = 3 resumes to T2: the frames of one run to T2
#   tiny                           a 3 x 1 grid on 4 processes: one process has no cell and idles
#   particles SCENE UNTIL [--set ...]  a particle scene: every frame the same particles (by id) with the same
#                                  values for N = 1..4, none lost or doubled; summaries agree (particles_agree.py);
#                                  volume maps: no process filled a node one process did not, one fewer
#   particles_resume SCENE T1 T2   N = 2 runs to T1 (checkpoint), N = 3 resumes to T2: one process's frames
#   particles_idle                 3 particles on 4 processes: empty subdomains run along
#   particles_probes               a tank with probes: probes.csv byte-identical for N = 1..4, and after N = 2
#                                  to T1 resumed on N = 3 (the probes' rows travel in the checkpoint), and in
#                                  pieces on 3, whose root gathered only the fluid near the probes
#   particles_wall_pressure_pieces SCENE UNTIL  --wall-pressure on 3 processes in pieces: each walls_NNNNN.vtp
#                                  one process's bytes; the root gathered only the fluid near the walls
#   particles_whitewater           a dam break with --whitewater: the whitewater files (frames, .pvd, .csv)
#                                  byte-identical for N = 1..4, and after N = 2 to T1 resumed on N = 3;
#                                  `eddy whitewater` on 3 processes' frames writes one process's files
#   particles_pieces_resume SCENE T1 T2 [--set ...]  --pieces: checkpoints in pieces (no process holds the whole
#                                  fluid); 3 processes to T1, resumed on 1, 2, 4 and 3 to T2: one process's frames;
#                                  each resumed process built its share of the fluid and (but WCSPH's) the walls
#                                  near its box
#   particles_memory_budget        --max-memory per process: refused on 1 process, runs on 4 (issue 44)
#   particles_pieces SCENE UNTIL   --pieces on 3 processes: each .pvtp's pieces are the one-process .vtp
#                                  (pvtp_equals_vtp.py; VTK's reader too with python3-vtk9); eddy mesh reads them
#   particles_walls_pieces SCENE UNTIL  --pieces on 3 processes with moving walls: walls.vtp (the walls that do
#                                  not move, once) and walls_NNNNN.vtp (those that move) are together each of one
#                                  process's frames (walls_split_equal.py); the root kept only the walls near its box
#   errors                         a bad scene, a refused particle mode, a grid's and a particle divergence:
#                                  one line, the exit code
#   pieces_resume SCENE T1 T2      --pieces with .vti only (no whole grid anywhere: checkpoints in pieces):
#                                  3 processes to T1, resumed on 1, 2, 4 and 3 to T2: the one-process frames
#   pieces SCENE UNTIL             --pieces on 1 and 3 processes: the .pvti's pieces put together are the
#                                  one-process .vti, byte for byte (and VTK's own reader, when python3-vtk9
#                                  is installed, reads the .pvti as that grid)
set -euo pipefail
EDDY=$1; CHECK=$2; shift 2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
fail() { echo "FAIL: $*" >&2; exit 1; }
mpi() { local n=$1; shift; mpirun --oversubscribe -np "$n" "$EDDY" "$@"; }
# A run in pieces (issue 44): after writing the walls that do not move, the root keeps, as the others do, only
# those near its box (summary.json: root_holds_walls false, fewer wall particles on rank 0 than the whole).
root_keeps_its_walls() {
    python3 - "$1/summary.json" <<'PY' || fail "$1: the root kept every wall particle after writing them"
import json, sys
s = json.load(open(sys.argv[1]))
w = s["processes"]["walls_per_rank"]
if s["processes"]["root_holds_walls"] or w[0] >= s["boundary_particles"]:
    sys.exit(f"the root holds {w} of {s['boundary_particles']}")
print(f"{sys.argv[1]}: wall particles per rank {w} of {s['boundary_particles']}")
PY
}

# The run in $2 (pieces) sent the root, over all processes, fewer than 1/$3 of the bytes the run in $1 (whole
# frames) did, and some: what $4 needs of the fluid, not the whole (summary.json: processes.gather_bytes_sent).
root_gathered_less() {
    python3 - "$1/summary.json" "$2/summary.json" "$3" "$4" <<'PY' || fail "$4 gathered the whole fluid"
import json, sys
whole, near = (sum(json.load(open(f))["processes"]["gather_bytes_sent"]) for f in sys.argv[1:3])
print(f"bytes gathered on the root: {whole:.0f} with whole frames, {near:.0f} in pieces for {sys.argv[4]}")
if not 0 < int(sys.argv[3]) * near < whole:
    sys.exit(f"{near} bytes gathered for {sys.argv[4]} against {whole} for whole frames")
PY
}

# frames of $1 and $2 equal byte for byte (and as many)
same_frames() {
    local a=$1 b=$2 n=0
    [ "$(ls "$a/frames" | wc -l)" = "$(ls "$b/frames" | wc -l)" ] || fail "$b: $(ls "$b/frames" | wc -l) frames, $a: $(ls "$a/frames" | wc -l)"
    for f in "$a"/frames/*; do
        case "$f" in *.png) continue ;; esac  # pictures: the same code on the same grid
        cmp -s "$f" "$b/frames/$(basename "$f")" || fail "$b/frames/$(basename "$f") differs from one process's"
        n=$((n + 1))
    done
    echo "$b: $n frame files identical to one process's"
}
# summary keys that must agree (the whole grid's statistics: volumes from the gathered grid)
same_summary() {
    python3 - "$1/summary.json" "$2/summary.json" "$3" <<'PY'
import json, sys
a, b, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
for k in ["status", "steps", "simulated_time", "cells", "max_speed", "max_depth", "volume_initial", "volume_final"]:
    assert a[k] == b[k], f"{sys.argv[2]}: {k} = {b[k]}, one process: {a[k]}"
assert [f["volume"] for f in a["frames"]] == [f["volume"] for f in b["frames"]], "frame volumes differ"
for k in ["volume_added", "volume_outflow"]:  # sums over processes: in another order
    assert abs(a[k] - b[k]) <= 1e-9 * max(1.0, abs(a[k])), f"{k}: {b[k]} vs {a[k]}"
p = b["processes"]
assert p["ranks"] == n, p
cells = a["cells"][0] * a["cells"][1]
assert sum(p["cells_per_rank"]) == cells, f"owned cells {sum(p['cells_per_rank'])} != {cells}"
print(f"{sys.argv[2]}: summary agrees; blocks {p['blocks']}, halo {p['halo_cells_wide']}, imbalance {p['load_imbalance']:.3f}")
PY
}

case "$CHECK" in
same)
    SCENE=$1; UNTIL=$2; shift 2
    "$EDDY" run "$SCENE" --until "$UNTIL" --out n1 -j1 --quiet --format vti --format csv --format obj "$@"
    for n in 2 3 4; do
        mpi "$n" run "$SCENE" --until "$UNTIL" --out "n$n" -j1 --quiet --format vti --format csv --format obj "$@"
        same_frames n1 "n$n"
        same_summary n1 "n$n" "$n"
    done
    ;;
resume)
    SCENE=$1; T1=$2; T2=$3
    "$EDDY" run "$SCENE" --until "$T2" --out straight -j1 --quiet
    mpi 2 run "$SCENE" --until "$T1" --out split -j1 --quiet --checkpoint-every "$T1"
    mpi 3 run --resume split --until "$T2" -j1 --quiet
    same_frames straight split
    ;;
particles)
    SCENE=$1; UNTIL=$2; shift 2
    HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
    "$EDDY" run "$SCENE" --until "$UNTIL" --out n1 -j1 --quiet --format csv "$@"
    for n in 2 3 4; do
        mpi "$n" run "$SCENE" --until "$UNTIL" --out "n$n" -j1 --quiet --format csv "$@"
        python3 "$HERE/particles_agree.py" n1 "n$n" "$n" new
        # Walls drawn from volume maps (issue 44): each process keeps only the blocks its box and halo read, so
        # none holds a node one process does not (its particles are some of the whole fluid's), now or at its
        # most, and one holds fewer.
        python3 - "n$n" <<'PY' || fail "n$n: volume map nodes"
import json, sys
one = json.load(open("n1/summary.json")).get("volume_map_nodes")
if one is None or one["peak"] == 0: sys.exit(0)
p = json.load(open(sys.argv[1] + "/summary.json"))["processes"]
ranks, peaks = p["volume_map_nodes_filled_per_rank"], p["volume_map_nodes_peak_per_rank"]
print(f"{sys.argv[1]}: volume map nodes filled per rank {ranks} (at most {peaks}); one process {one['filled']} "
      f"(at most {one['peak']}) of {one['held']}")
sys.exit(0 if max(ranks) <= one["filled"] and max(peaks) <= one["peak"] and min(peaks) < one["peak"] else 1)
PY
    done
    ;;
particles_resume)
    SCENE=$1; T1=$2; T2=$3
    HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
    "$EDDY" run "$SCENE" --until "$T2" --out straight -j1 --quiet --format csv
    mpi 2 run "$SCENE" --until "$T1" --out split -j1 --quiet --format csv --checkpoint-every "$T1"
    mpi 3 run --resume split --until "$T2" -j1 --quiet
    python3 "$HERE/particles_agree.py" straight split 3 resume
    ;;
particles_pieces_resume)
    # Checkpoints in pieces (issue 44): each process writes its own particles and the root an index; no
    # process holds the whole fluid. 3 processes to T1, resumed on 1, 2, 4 and 3: one process's frames.
    SCENE=$1; T1=$2; T2=$3; shift 3  # then the scene's --set options, if any
    HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
    "$EDDY" run "$SCENE" --until "$T2" --out straight -j1 --quiet --format csv "$@"
    mpi 3 run "$SCENE" --until "$T1" --out p3 -j1 --quiet --format csv --pieces --checkpoint-every "$(python3 -c "print($T1 / 2)")" "$@"
    [ "$(ls p3/checkpoint_s*_p*.eddy | wc -l)" = 3 ] || fail "p3: $(ls p3/checkpoint_s*_p*.eddy | wc -l) checkpoint pieces, expected 3 (older ones removed)"
    [ ! -e p3/last_frame.png ] || fail "p3: a last_frame.png drawn from a gathered fluid"
    for n in 1 2 4 3; do
        cp -r p3 "r$n"
        if [ "$n" = 1 ]; then "$EDDY" run --resume r1 --until "$T2" -j1 --quiet; else mpi "$n" run --resume "r$n" --until "$T2" -j1 --quiet; fi
        python3 "$HERE/particles_agree.py" straight "r$n" "$n" pieces
        # as many pieces as processes (one process writes a whole checkpoint and removes the pieces)
        pieces=$(ls "r$n" | grep -c '^checkpoint_s.*_p[0-9]*\.eddy$' || true)
        [ "$pieces" = "$([ "$n" = 1 ] && echo 0 || echo "$n")" ] || fail "r$n: $pieces checkpoint pieces after a resume on $n processes"
    done
    # A missing piece: one line naming it, exit 2.
    rm "r3/$(ls r3 | grep '_p0001.eddy$')"
    set +e; out=$(mpi 2 run --resume r3 --until "$T2" -j1 --quiet 2>&1); rc=$?; set -e
    [ "$rc" = 2 ] && echo "$out" | grep -q "piece checkpoint_s.*_p0001.eddy (of 3) is missing" || fail "a missing piece: exit $rc, it said: $out"
    echo "a missing piece: $(echo "$out" | grep -m1 eddy:)"
    ;;
particles_memory_budget)
    # --max-memory is each process's (issue 44): each process builds its share of the fluid and holds its
    # share of the neighbour lists. A budget the one-process estimate exceeds is refused on one process (exit 2,
    # one line with the estimate) and runs on 4, whose estimate says each process's share.
    RUN=(run bench_dam_break_3d --set method=dfsph --steps 2 --max-memory 80M -j1 --quiet)
    set +e; out=$("$EDDY" "${RUN[@]}" --out n1 2>&1); rc=$?; set -e
    [ "$rc" = 2 ] && echo "$out" | grep -q "more than the limit 80.0 MB (--max-memory): neighbour lists 68" ||
        fail "one process within 80 MB: exit $rc, it said: $out"
    echo "one process: $out"
    mpi 4 "${RUN[@]}" --out n4 || fail "4 processes within 80 MB each: exit $?"
    python3 -c "import json; s = json.load(open('n4/summary.json')); assert s['status'] == 'completed' and s['steps'] == 2, s['status']"
    set +e; out=$(mpi 4 "${RUN[@]/80M/1}" --out n4b 2>&1); set -e
    echo "$out" | grep -q "neighbour lists (a process's share of 4: 50%)" || fail "4 processes: the estimate does not say the share: $out"
    echo "4 processes: each within 80 MB; $(echo "$out" | grep -m1 'eddy: error')"
    ;;
particles_walls_pieces)
    # Moving walls in pieces (issue 44): the walls that do not move are written once, those that move every
    # frame, so the root need not keep every wall particle after the first frame.
    SCENE=$1; UNTIL=$2
    HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
    "$EDDY" run "$SCENE" --until "$UNTIL" --out whole -j1 --quiet --format vtk
    mpi 3 run "$SCENE" --until "$UNTIL" --out p3 -j1 --quiet --format vtk --pieces
    python3 "$HERE/walls_split_equal.py" whole p3
    root_keeps_its_walls p3
    ;;
particles_pieces)
    SCENE=$1; UNTIL=$2
    HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
    "$EDDY" run "$SCENE" --until "$UNTIL" --out whole -j1 --quiet --format vtk
    mpi 3 run "$SCENE" --until "$UNTIL" --out p3 -j1 --quiet --format vtk --pieces
    for f in whole/frames/particles_*.vtp; do
        python3 "$HERE/pvtp_equals_vtp.py" "$f" "p3/frames/$(basename "$f" .vtp).pvtp"
    done
    grep -q 'file="frames/particles_00001.pvtp"' p3/particles.pvd || fail "p3/particles.pvd does not list the .pvtp frames"
    # The walls are written once, whole, by the root, which then keeps only those near its box (issue 44).
    cmp whole/frames/walls.vtp p3/frames/walls.vtp || fail "p3/frames/walls.vtp differs from one process's"
    root_keeps_its_walls p3
    "$EDDY" mesh p3/frames/particles_00001.pvtp --out one.obj || fail "eddy mesh cannot read a .pvtp"
    "$EDDY" mesh p3/frames --out meshes || fail "eddy mesh cannot read a folder of .pvtp frames"
    # One OBJ per frame (and, for ParaView, a .vtp beside each and surface.pvd listing them).
    [ "$(ls meshes/*.obj | wc -l)" = "$(ls p3/frames/*.pvtp | wc -l)" ] || fail "eddy mesh: $(ls meshes/*.obj | wc -l) meshes for $(ls p3/frames/*.pvtp | wc -l) frames"
    [ "$(ls meshes/*.vtp | wc -l)" = "$(ls p3/frames/*.pvtp | wc -l)" ] && [ -f meshes/surface.pvd ] || fail "eddy mesh: no .vtp per frame or no surface.pvd"
    echo "eddy mesh: one mesh per .pvtp frame ($(ls meshes | wc -l))"
    if /usr/bin/python3 -c "import vtk" 2>/dev/null; then
        /usr/bin/python3 - p3/frames/particles_00001.pvtp whole/frames/particles_00001.vtp <<'PY'
import sys, vtk
p = vtk.vtkXMLPPolyDataReader(); p.SetFileName(sys.argv[1]); p.Update()
w = vtk.vtkXMLPolyDataReader(); w.SetFileName(sys.argv[2]); w.Update()
assert p.GetOutput().GetNumberOfPoints() == w.GetOutput().GetNumberOfPoints() > 0
print(f"VTK {vtk.vtkVersion.GetVTKVersion()} reads {sys.argv[1]} as one data set of {p.GetOutput().GetNumberOfPoints()} points")
PY
    else
        echo "python3-vtk9 not installed: VTK's own .pvtp reader not tried"
    fi
    ;;
particles_probes)
    cat > probes.json <<'JSON'
{ "name": "probe_tank", "dimension": 2, "method": "dfsph", "particle_radius": 0.005, "duration": 0.3,
  "boundaries": [ { "shape": "box", "min": [0, 0], "max": [0.2, 0.2] } ],
  "fluids": [ { "shape": "box", "min": [0, 0], "max": [0.2, 0.1] } ], "output": { "fps": 20, "formats": ["csv"] },
  "probes": [ { "name": "middle", "position": [0.1, 0.05] }, { "name": "air", "position": [0.1, 0.17] } ] }
JSON
    "$EDDY" run probes.json --out n1 -j1 --quiet
    for n in 2 3 4; do
        mpi "$n" run probes.json --out "n$n" -j1 --quiet
        cmp -s n1/probes.csv "n$n/probes.csv" || fail "n$n/probes.csv differs from one process's"
    done
    mpi 2 run probes.json --until 0.1 --out split -j1 --quiet
    mpi 3 run --resume split --until 0.3 -j1 --quiet
    cmp -s n1/probes.csv split/probes.csv || fail "split/probes.csv (2 processes, resumed on 3) differs from one process's"
    # In pieces (.vtp pieces, nothing else gathered) the root gathers only the fluid near the probes.
    mpi 3 run probes.json --out pieces --pieces --format vtk -j1 --quiet
    cmp -s n1/probes.csv pieces/probes.csv || fail "pieces/probes.csv (3 processes, --pieces) differs from one process's"
    root_gathered_less n3 pieces 5 "the probes"
    echo "probes.csv: the same bytes on 1-4 processes, resumed from 2 on 3 and in pieces ($(wc -l < n1/probes.csv) lines)"
    ;;
particles_wall_pressure_pieces)
    # The fluid's pressure on the walls (--wall-pressure) over 3 processes in pieces: each walls_NNNNN.vtp one
    # process's bytes, from the fluid near the walls alone gathered on the root (fewer bytes than whole frames).
    SCENE=$1; UNTIL=$2
    "$EDDY" run "$SCENE" --until "$UNTIL" --out n1 --wall-pressure -j1 --quiet
    mpi 3 run "$SCENE" --until "$UNTIL" --out pieces --pieces --format vtk --wall-pressure -j1 --quiet
    mpi 3 run "$SCENE" --until "$UNTIL" --out whole --format csv -j1 --quiet
    k=0
    for f in n1/frames/walls_*.vtp; do
        cmp -s "$f" "pieces/frames/$(basename "$f")" || fail "pieces/frames/$(basename "$f") differs from one process's"
        k=$((k + 1))
    done
    [ "$k" -gt 1 ] || fail "n1: $k walls_NNNNN.vtp files"
    root_gathered_less whole pieces 2 "the wall pressure"
    echo "walls with their pressure: $k files the same bytes on 1 process and on 3 in pieces"
    ;;
particles_whitewater)
    # dam_break_3d coarsened to r = 1 cm (3,375 particles): foam and bubbles from about 0.1 s
    ww() { "$@" --set particle_radius=0.01 --until 0.3 --fps 20 --format csv --whitewater -j1 --quiet; }
    ww "$EDDY" run dam_break_3d --out n1
    for n in 2 3 4; do
        ww mpi "$n" run dam_break_3d --out "n$n"
    done
    "$EDDY" run dam_break_3d --set particle_radius=0.01 --until 0.15 --fps 20 --format csv --whitewater -j1 --quiet --out split1
    mpi 2 run dam_break_3d --set particle_radius=0.01 --until 0.15 --fps 20 --format csv --whitewater -j1 --quiet --out split
    mpi 3 run --resume split --until 0.3 -j1 --quiet
    "$EDDY" run --resume split1 --until 0.3 -j1 --quiet
    for d in n2 n3 n4 split split1; do
        k=0
        for f in n1/frames/whitewater_* n1/whitewater.pvd n1/whitewater.csv; do
            cmp -s "$f" "$d/${f#n1/}" || fail "$d/${f#n1/} differs from one process's"
            k=$((k + 1))
        done
        [ "$(ls "$d"/frames/whitewater_* | wc -l)" = "$(ls n1/frames/whitewater_* | wc -l)" ] || fail "$d: whitewater frames"
    done
    python3 -c "import csv; r = list(csv.DictReader(open('n1/whitewater.csv'))); assert int(r[-1]['foam']) + int(r[-1]['bubbles']) + int(r[-1]['spray']) > 0, r[-1]; print('last frame:', dict(r[-1]))"
    echo "whitewater: $k files the same bytes on 1-4 processes, and resumed (one process; 2 processes to 0.15 s resumed on 3)"
    # eddy whitewater afterwards: 3 processes' frames (in id order) give one process's (in its storage order)
    "$EDDY" whitewater n1 -j1 > /dev/null
    "$EDDY" whitewater n3 -j2 > /dev/null
    for f in n1/frames/whitewater_* n1/whitewater.csv; do
        cmp -s "$f" "n3/${f#n1/}" || fail "eddy whitewater: n3/${f#n1/} differs from one process's"
    done
    echo "eddy whitewater over 3 processes' frames: one process's files"
    ;;
particles_idle)
    HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
    cat > few.json <<'JSON'
{ "name": "few", "method": "wcsph", "dimension": 2, "particle_radius": 0.001, "duration": 0.01,
  "boundaries": [ { "shape": "box", "min": [0, 0], "max": [0.02, 0.02] } ],
  "fluids": [ { "shape": "box", "min": [0, 0], "max": [0.006, 0.002] } ],
  "output": { "fps": 500, "formats": ["csv"] } }
JSON
    "$EDDY" run few.json --out n1 -j1 --quiet
    mpi 4 run few.json --out n4 -j1 --quiet
    python3 "$HERE/particles_agree.py" n1 n4 4
    python3 -c "import json; c = json.load(open('n4/summary.json'))['processes']['particles_per_rank']; assert sum(c) == 3 and c.count(0) >= 1, c; print('idle processes:', c)"
    ;;
tiny)
    cat > tiny.json <<'JSON'
{ "name": "tiny", "method": "shallow_water", "dimension": 2, "duration": 0.2,
  "grid": { "cells": [3, 1], "dx": 0.1 }, "water": { "surface": "x < 0.15 ? 0.3 : 0.1" },
  "output": { "fps": 20, "formats": ["vti"] } }
JSON
    "$EDDY" run tiny.json --out n1 -j1 --quiet
    mpi 4 run tiny.json --out n4 -j1 --quiet
    same_frames n1 n4
    python3 -c "import json; p = json.load(open('n4/summary.json'))['processes']; assert p['ranks'] == 4 and p['cells_per_rank'].count(0) >= 1, p; print('idle ranks:', p['cells_per_rank'])"
    ;;
errors)
    # exit code and the one line rank 0 prints (the others print nothing)
    expect() {
        local code=$1 pattern=$2; shift 2
        set +e; out=$(mpi 3 "$@" 2>&1); rc=$?; set -e
        [ "$rc" = "$code" ] || fail "mpirun -np 3 eddy $*: exit $rc, expected $code; it said: $out"
        n=$(grep -c "^eddy: error: " <<<"$out" || true)
        [ "$n" = 1 ] || fail "mpirun -np 3 eddy $*: $n error lines, expected 1: $out"
        grep -q -- "$pattern" <<<"$out" || fail "mpirun -np 3 eddy $*: no '$pattern' in: $out"
        echo "exit $rc: $(grep '^eddy: error: ' <<<"$out")"
    }
    expect 2 "unknown key 'bogus'" run shallow_drops --set settings.bogus=1 --out e1
    expect 2 "sequential mode" run clavet_dam_break_2d --set settings.mode=sequential --out e2
    expect 2 "springs" run clavet_slime_2d --out e4
    # floating bodies on a grid run on one process only (docs/bodies.md, "Shallow water")
    expect 2 "floating bodies run on one process only" run river_logs --out e6
    # a particle divergence (a time step 30 times too long): every process stops at the same step
    expect 3 "diverged at step 2 " run dam_break_2d --set settings.fixed_dt=0.004 --until 0.5 --out e5
    cat > diverge.json <<'JSON'
{ "name": "diverge", "method": "shallow_water", "dimension": 2, "duration": 1.0,
  "grid": { "cells": [60, 40], "dx": 0.1 }, "water": { "depth": "x > 5.5 && x < 5.9 && y > 3 ? 1e38 : 0.5" },
  "settings": { "time_step": 0.001 }, "output": { "fps": 100, "formats": ["vti"] } }
JSON
    # the overflow is in the third block (x from 4 to 6 m) only: every process stops at the same step
    expect 3 "diverged at step 2 " run diverge.json --out e3
    python3 -c "import json; s = json.load(open('e3/summary.json')); assert s['status'] == 'diverged', s['status']; print('summary:', s['status'], s['message'])"
    ;;
pieces_resume)
    SCENE=$1; T1=$2; T2=$3
    HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
    "$EDDY" run "$SCENE" --until "$T2" --out whole -j1 --quiet --format vti
    mpi 3 run "$SCENE" --until "$T1" --out p3 -j1 --quiet --format vti --pieces
    ls p3/checkpoint_s*_p0001.eddy p3/checkpoint_s*_p0002.eddy >/dev/null || fail "no checkpoint pieces in p3"
    for n in 1 2 4 3; do  # 3: the same blocks; the others gather their cells from the pieces
        rm -rf "r$n"; cp -r p3 "r$n"
        if [ "$n" = 1 ]; then "$EDDY" run --resume "r$n" --until "$T2" -j1 --quiet; else mpi "$n" run --resume "r$n" --until "$T2" -j1 --quiet; fi
        for f in whole/frames/grid_*.vti; do python3 "$HERE/pvti_equals_vti.py" "$f" "r$n/frames/$(basename "$f" .vti).pvti"; done
        echo "resumed on $n: the frames of one process"
    done
    [ "$(ls r3/checkpoint_s*_p0001.eddy | wc -l)" = 1 ] || fail "older checkpoint pieces were not removed"
    ;;
pieces)
    SCENE=$1; UNTIL=$2
    HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
    "$EDDY" run "$SCENE" --until "$UNTIL" --out whole -j1 --quiet --format vti
    "$EDDY" run "$SCENE" --until "$UNTIL" --out p1 -j1 --quiet --format vti --pieces
    mpi 3 run "$SCENE" --until "$UNTIL" --out p3 -j1 --quiet --format vti --pieces
    for f in whole/frames/grid_*.vti; do
        stem=$(basename "$f" .vti)
        python3 "$HERE/pvti_equals_vti.py" "$f" "p1/frames/$stem.pvti"
        python3 "$HERE/pvti_equals_vti.py" "$f" "p3/frames/$stem.pvti"
    done
    grep -q 'file="frames/grid_00001.pvti"' p3/grid.pvd || fail "p3/grid.pvd does not list the .pvti frames"
    if /usr/bin/python3 -c "import vtk" 2>/dev/null; then
        /usr/bin/python3 - p3/frames/grid_00001.pvti whole/frames/grid_00001.vti <<'PY'
import sys, vtk
from vtk.util.numpy_support import vtk_to_numpy
p = vtk.vtkXMLPImageDataReader(); p.SetFileName(sys.argv[1]); p.Update()
w = vtk.vtkXMLImageDataReader(); w.SetFileName(sys.argv[2]); w.Update()
a, b = p.GetOutput(), w.GetOutput()
assert a.GetDimensions() == b.GetDimensions(), (a.GetDimensions(), b.GetDimensions())
for name in ["terrain", "depth", "eta", "velocity", "ink", "solid"]:
    x, y = vtk_to_numpy(a.GetCellData().GetArray(name)), vtk_to_numpy(b.GetCellData().GetArray(name))
    assert (x == y).all(), name
print(f"VTK {vtk.vtkVersion.GetVTKVersion()} reads {sys.argv[1]} as one grid {a.GetDimensions()}, equal to {sys.argv[2]}")
PY
    else
        echo "python3-vtk9 not installed: VTK's own .pvti reader not tried"
    fi
    ;;
*) fail "unknown check $CHECK" ;;
esac
