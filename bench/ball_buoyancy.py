#!/usr/bin/python3
"""The buoyancy of a ball held under water against rho0 g V (issue 40: "a box held under water within 2% of
rho g V", here for the solid ball the smooth walls draw from its volume map). Not a timing: a figure for
docs/methods.md, "Solid balls from a volume map".

tank_forces_3d with its box replaced by a sphere of radius 6 cm centred at (0.12, 0.13, 0.15) m, or the same
tank in 2D with a circle (rho0 g V per metre of depth). Each run goes to 2 s; the buoyancy is forces.csv's fy
of object 2 averaged over the frames after 1 s.

    /usr/bin/python3 bench/ball_buoyancy.py [eddy binary] [methods, comma-separated] [threads]
                                            [r (m), comma-separated] [dimensions, comma-separated]

About 25 s per method in 3D at r = 1 cm on 2 cores, 4-5 minutes at r = 5 mm; 2D runs take seconds.
"""
import json
import math
import pathlib
import sys
import tempfile

from held_load import mean_lift

ROOT = pathlib.Path(__file__).resolve().parent.parent
EDDY = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build/bin/eddy")
METHODS = (sys.argv[2] if len(sys.argv) > 2 else "dfsph,wcsph,pbf").split(",")
THREADS = sys.argv[3] if len(sys.argv) > 3 else "2"
RADII = [float(r) for r in (sys.argv[4] if len(sys.argv) > 4 else "0.01").split(",")]
DIMS = [int(d) for d in (sys.argv[5] if len(sys.argv) > 5 else "2,3").split(",")]
R = 0.06


def scene(dim, r):
    s = json.loads((ROOT / "scenes/tank_forces_3d.json").read_text())
    s["particle_radius"] = r
    s["boundaries"][2] = {"shape": "sphere", "solid": True, "center": [0.12, 0.13, 0.15], "radius": R}
    if dim == 2:
        s["dimension"] = 2
        s["gravity"] = [0, -9.81]
        for b in s["boundaries"] + s["fluids"]:
            for key in ("min", "max", "center", "pivot"):
                if key in b:
                    b[key] = b[key][:2]
        s["boundaries"][2]["shape"] = "circle"
    return s


def buoyancy(tmp, dim, r, method):
    path = tmp / f"{method}_{dim}_{r}.json"
    path.write_text(json.dumps(scene(dim, r)))
    out = tmp / f"out_{method}_{dim}_{r}"
    return mean_lift(EDDY, path, out, method, THREADS)


with tempfile.TemporaryDirectory() as d:
    print("| D | r (m) | method | buoyancy (N; N/m in 2D) | against rho0 g V |")
    print("|---|---|---|---|---|")
    for dim in DIMS:
        want = 1000.0 * 9.81 * (4.0 / 3.0 * math.pi * R**3 if dim == 3 else math.pi * R**2)
        for r in RADII:
            for method in METHODS:
                b = buoyancy(pathlib.Path(d), dim, r, method)
                print(f"| {dim} | {r:g} | {method} | {b:.3f} | {100 * (b / want - 1):+.2f}% |", flush=True)
