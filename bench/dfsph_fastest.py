#!/usr/bin/env python3
"""What sets DFSPH's step on bench_dam_break_3d: every step's dt and fastest particles, and where the fastest
one is (its distance from the nearest tank wall), every 10th step printed. docs/methods.md, "What sets the
step". Run with Debian's Python and the built module:

    PYTHONPATH=build/python /usr/bin/python3 bench/dfsph_fastest.py [overrides, e.g. settings.viscosity=0.01]
"""
import sys

import numpy as np

import eddy

scene = eddy.load_scene("scenes/bench_dam_break_3d.json", ["method=dfsph"] + sys.argv[1:])
sim = eddy.Simulation(scene, threads=2)
rows, last = [], 0.0
while sim.time < 0.5:
    sim.step(1)
    speed = np.linalg.norm(sim.velocities, axis=1)
    i = int(np.argmax(speed))
    p = sim.positions[i]
    wall = min(p[0] + 2, 2 - p[0], p[1], p[2] + 0.75, 0.75 - p[2])  # the tank [-2, 2] x [0, 3] x [-0.75, 0.75]
    top = np.sort(speed)[::-1]
    dense = speed[sim.density > 900.0]  # particles at 90% of rest density or more: not spray
    rows.append((sim.steps, sim.time, sim.time - last, speed[i], top[10], top[100], dense.max(), p, wall))
    last = sim.time
for r in rows[::10]:
    print("%4d t=%.4f dt=%.5f vmax=%.3f v10=%.3f v100=%.3f dense=%.3f x=(%.2f %.2f %.2f) wall=%.3f"
          % (r[0], r[1], r[2], r[3], r[4], r[5], r[6], *r[7], r[8]))
print("steps", sim.steps)
