#!/usr/bin/python3
"""The buoyancy of tank_forces_3d's box held under water as the box is raised by fractions of a particle
spacing (issue 40: "a box held under water within 2% of rho g V"). Not a timing: a figure for
docs/methods.md, "The box's buoyancy against where it cuts the lattice".

The fluid is filled on one lattice for the whole tank, so the box's faces cut it where the scene puts them;
raising the box by k / 8 of a spacing (2 r) shows how much of a load's error is that offset. Each run goes to
2 s; the buoyancy is forces.csv's fy of object 2 averaged over the frames after 1 s, against
rho0 g V = 1000 * 9.81 * (0.12 * 0.12 * 0.14) N.

    /usr/bin/python3 bench/box_offset_buoyancy.py [eddy binary] [methods, comma-separated] [threads] [r (m)]
                                                  [offsets k, comma-separated; default 0,1,...,7]

About 25 s per method on 2 cores at the scene's r = 1 cm (3,000 particles), 4.5 minutes at r = 5 mm. With
offset 0 alone it is a resolution study: at r = 1 cm / n (n = 1, 2, 3, ...) the box's faces cut the lattice
as the scene's do, the rows exactly r from every face (other radii move the cut: r = 4 mm is a half spacing).
"""
import json
import pathlib
import sys
import tempfile

from held_load import mean_lift

ROOT = pathlib.Path(__file__).resolve().parent.parent
EDDY = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build/bin/eddy")
METHODS = (sys.argv[2] if len(sys.argv) > 2 else "dfsph,wcsph,pbf").split(",")
THREADS = sys.argv[3] if len(sys.argv) > 3 else "2"
OFFSETS = [int(k) for k in sys.argv[5].split(",")] if len(sys.argv) > 5 else list(range(8))

SCENE = json.loads((ROOT / "scenes/tank_forces_3d.json").read_text())
if len(sys.argv) > 4:
    SCENE["particle_radius"] = float(sys.argv[4])
SPACING = 2.0 * SCENE["particle_radius"]
RHO_G_V = 1000.0 * 9.81 * 0.12 * 0.12 * 0.14


def buoyancy(tmp, method, dy):
    scene = json.loads(json.dumps(SCENE))
    box = scene["boundaries"][2]
    box["min"][1] += dy
    box["max"][1] += dy
    path = tmp / f"{method}_{dy:.4f}.json"
    path.write_text(json.dumps(scene))
    out = tmp / f"out_{method}_{dy:.4f}"
    return mean_lift(EDDY, path, out, method, THREADS)


with tempfile.TemporaryDirectory() as d:
    print("| method | box raised (spacings) | buoyancy (N) | against rho0 g V |")
    print("|---|---|---|---|")
    for method in METHODS:
        for k in OFFSETS:
            dy = SPACING * k / 8
            b = buoyancy(pathlib.Path(d), method, dy)
            print(f"| {method} | {k}/8 | {b:.2f} | {100 * (b / RHO_G_V - 1):+.1f}% |", flush=True)
