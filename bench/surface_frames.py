#!/usr/bin/python3
"""Synthetic particle frames for timing `eddy mesh` on a whole run (issue 32 part 4): N particles of
radius R on a lattice of spacing 2R (as eddy's scenes lay out fluid), jittered by 0.2 R, filling a
travelling wave in a 1 m x 0.5 m tank plus a ring of falling drops, one binary PLY per frame
(frames/particles_NNNNN.ply), with summary.json (particle_radius, fps) and particles.pvd beside them.

    /usr/bin/python3 bench/surface_frames.py OUT [--particles 1000000] [--frames 10] [--fps 25]

(Debian's /usr/bin/python3: it has numpy.) Then: eddy mesh OUT/frames --out OUT/meshes --format ply.
"""
import argparse
import json
import math
import os

import numpy as np


def frame(n_target, r, t, rng):
    s = 2.0 * r
    # The wave's mean depth is chosen so that the tank holds about n_target lattice points.
    depth = n_target * s ** 3 / (1.0 * 0.5)
    xs = np.arange(s / 2, 1.0, s, dtype=np.float32)
    zs = np.arange(s / 2, 0.5, s, dtype=np.float32)
    X, Z = np.meshgrid(xs, zs, indexing="ij")
    H = depth * (1.0 + 0.35 * np.sin(2 * math.pi * (X / 0.6 - 0.8 * t)) * np.cos(2 * math.pi * Z / 0.5))
    ny = int(math.ceil(H.max() / s))
    pts = []
    for j in range(ny):
        y = s / 2 + j * s
        m = H > y
        pts.append(np.stack([X[m], np.full(m.sum(), y, np.float32), Z[m]], axis=1))
    # Drops: balls of radius 6 R on a ring, falling.
    k = np.arange(-3, 4)
    B = np.stack(np.meshgrid(k, k, k, indexing="ij"), axis=-1).reshape(-1, 3).astype(np.float32) * s
    B = B[(B ** 2).sum(axis=1) < (6 * r) ** 2]
    for i in range(12):
        a = 2 * math.pi * i / 12
        c = np.array([0.5 + 0.3 * math.cos(a), depth * 2.2 - 0.3 * t * t, 0.25 + 0.15 * math.sin(a)], np.float32)
        pts.append(B + c)
    p = np.concatenate(pts)
    p += rng.uniform(-0.2 * r, 0.2 * r, p.shape).astype(np.float32)
    return p.astype("<f4")


def write_ply(path, p):
    header = ("ply\nformat binary_little_endian 1.0\nelement vertex %d\n"
              "property float x\nproperty float y\nproperty float z\nend_header\n" % len(p)).encode()
    with open(path + ".tmp", "wb") as f:
        f.write(header)
        f.write(np.ascontiguousarray(p).tobytes())
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--particles", type=int, default=1000000)
    ap.add_argument("--frames", type=int, default=10)
    ap.add_argument("--fps", type=float, default=25.0)
    ap.add_argument("--radius", type=float, default=0.0025)
    a = ap.parse_args()
    os.makedirs(os.path.join(a.out, "frames"), exist_ok=True)
    rng = np.random.default_rng(1)
    entries = []
    for i in range(a.frames):
        t = i / a.fps
        p = frame(a.particles, a.radius, t, rng)
        name = "frames/particles_%05d.ply" % i
        write_ply(os.path.join(a.out, name), p)
        entries.append((t, name))
        print("%s: %d particles" % (name, len(p)))
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump({"particle_radius": a.radius, "fps": a.fps}, f)
    with open(os.path.join(a.out, "particles.pvd"), "w") as f:
        f.write('<?xml version="1.0"?>\n<VTKFile type="Collection" version="1.0" byte_order="LittleEndian">\n  <Collection>\n')
        for t, name in entries:
            f.write('    <DataSet timestep="%r" group="" part="0" file="%s"/>\n' % (t, name))
        f.write("  </Collection>\n</VTKFile>\n")


if __name__ == "__main__":
    main()
