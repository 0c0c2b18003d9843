"""A parameter sweep: the same dam break at several viscosities (WCSPH's nu, 1/s), the front and the kinetic energy
after a fixed time, one table.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/viscosity_sweep.py [--quick]
"""
import argparse

import numpy as np

import eddy


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="coarse particles and a short run, for the tests")
    args = p.parse_args()
    base = eddy.load_scene("dam_break_2d", ["particle_radius=0.005"] if args.quick else [])
    until = 0.15 if args.quick else 0.5
    print(f"{'seed_viscosity':>14} {'front (m)':>10} {'kinetic energy (J/m)':>22}")
    rows = []
    for nu in ([0.0, 100.0] if args.quick else [0.0, 10.0, 30.0, 100.0, 300.0]):
        scene = base.set(f"settings.seed_viscosity={nu}")
        sim = eddy.Simulation(scene, threads=2)
        while sim.time < until:
            sim.step()
        m = 1000.0 * (2 * scene.particle_radius) ** 2  # kg per metre of depth in 2D
        ke = 0.5 * m * float(np.sum(sim.velocities.astype(np.float64) ** 2))
        front = float(sim.positions[:, 0].max())
        rows.append((nu, front, ke))
        print(f"{nu:>14g} {front:>10.3f} {ke:>22.4f}")
    return rows


if __name__ == "__main__":
    main()
