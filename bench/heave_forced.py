#!/usr/bin/python3
"""Forced heave of a half-immersed circle (issue 40: why a floating circle drawn from its volume map swings
short; docs/methods.md, "Solid balls from a volume map"). Not a timing: a figure against linear theory.

The circle of tests/validation/heave_decay_test.cpp (radius a = 5 cm, r = 2.5 mm, 2 m tank, 20 cm of water)
is a keyframed solid wall, not a body: centred on the still water's level, still for 1 s, then moved up and
down by z = A sin(w t) (A = a / 10, w sqrt(a / g) = 0.8933, the free heave's natural frequency; its amplitude
ramped in over one period), to 4.5 s, before the radiated waves come back from the tank's ends. The fluid's
vertical force on it (forces.csv, object 1, 200 frames a second) is fitted by F = F0 + F_s sin + F_c cos over
each window. With F - F0 = -C z - a33 z'' - B33 z', C = rho g 2a the waterplane stiffness:

    added mass a33 = (F_s / A + C) / w^2,   damping B33 = -F_c / (w A),

given over rho pi a^2 / 2 (the body's displaced mass) and over rho pi a^2 w / 2. Ursell's (1949) theory at this
frequency (tests/validation/data/ursell_heave.py, whose m_z and b_z are over rho pi a^2 / 2 and
rho pi a^2 sqrt(g / a) / 2): a33 0.596, B33 0.4667 / 0.8933 = 0.522.

    /usr/bin/python3 bench/heave_forced.py [eddy binary] [methods, comma-separated] [models, comma-separated]

models: "smooth" (the default walls: the circle from its volume map) and "particles" (Akinci's). About 3 minutes
a run in 2D on 2 cores. Needs numpy (Debian's python3-numpy: run it with /usr/bin/python3).
"""
import csv
import json
import math
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

A_RADIUS, R, WIDTH, DEPTH, G, RHO = 0.05, 0.0025, 2.0, 0.2, 9.81, 1000.0
AMPLITUDE = 0.1 * A_RADIUS
OMEGA = 0.8933 / math.sqrt(A_RADIUS / G)
START, END = 1.0, 4.5


def scene(method):
    keys = [{"time": 0.0, "translate": [0, 0]}]
    t = START
    while t <= END + 1e-9:
        ramp = min(1.0, (t - START) * OMEGA / (2 * math.pi))
        keys.append({"time": round(t, 6), "translate": [0, ramp * AMPLITUDE * math.sin(OMEGA * (t - START))]})
        t += 0.004
    return {"name": "heave_forced", "dimension": 2, "method": method, "particle_radius": R, "gravity": [0, -G],
            "boundaries": [{"shape": "box", "min": [0, 0], "max": [WIDTH, DEPTH + 0.15]},
                           {"shape": "circle", "center": [0.5 * WIDTH, DEPTH], "radius": A_RADIUS, "solid": True,
                            "motion": {"keyframes": keys}}],
            "fluids": [{"shape": "box", "min": [0, 0], "max": [WIDTH, DEPTH]}]}


def run(eddy, method, model, out):
    (out / "scene.json").write_text(json.dumps(scene(method)))
    cmd = [eddy, "run", str(out / "scene.json"), "--until", str(END), "--fps", "200", "--format", "csv", "-q",
           "--out", str(out), "--set", f"settings.boundary_model={model}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    t, f = [], []
    with open(out / "forces.csv") as rows:
        for row in csv.DictReader(rows):
            if row["object"] == "1":
                t.append(float(row["time"]))
                f.append(float(row["fy"]))
    return np.array(t), np.array(f)


def main():
    eddy = sys.argv[1] if len(sys.argv) > 1 else "build/bin/eddy"
    methods = (sys.argv[2] if len(sys.argv) > 2 else "dfsph").split(",")
    models = (sys.argv[3] if len(sys.argv) > 3 else "smooth,particles").split(",")
    mref = RHO * math.pi * A_RADIUS ** 2 / 2
    stiffness = RHO * G * 2 * A_RADIUS
    for method in methods:
        for model in models:
            with tempfile.TemporaryDirectory() as tmp:
                t, f = run(eddy, method, model, pathlib.Path(tmp))
            for lo, hi in ((2.0, 3.25), (3.25, 4.5)):
                m = (t >= lo) & (t <= hi)
                phase = OMEGA * (t[m] - START)
                x = np.stack([np.ones(m.sum()), np.sin(phase), np.cos(phase)], 1)
                c, *_ = np.linalg.lstsq(x, f[m], rcond=None)
                added = (c[1] / AMPLITUDE + stiffness) / OMEGA ** 2
                damping = -c[2] / (OMEGA * AMPLITUDE)
                print(f"{method} {model} {lo}-{hi} s: added mass {added / mref:.3f} (theory 0.596), "
                      f"damping {damping / (mref * OMEGA):.3f} (theory 0.522)", flush=True)


if __name__ == "__main__":
    main()
