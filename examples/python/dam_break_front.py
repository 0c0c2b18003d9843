"""A 2D dam break from Python, its front against Martin & Moyce (1952), plotted.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/dam_break_front.py [--quick] [--out front.png]

A water column a wide and 2a high collapses (the bundled dam_break_2d: a = 0.2 m); the front Z = x/a
against T = t sqrt(2 g / a), beside Martin & Moyce's measurements (their Table 2, square column, n^2 = 2).
"""
import argparse
import math

import numpy as np

import eddy

# Martin & Moyce (1952), n^2 = 2: (T, Z)
MARTIN_MOYCE = [(0.849, 1.245), (1.212, 1.443), (1.602, 1.884), (2.283, 2.689), (2.950, 3.728)]


def front_curve(scene, T_end, samples):
    a = 0.2  # the column's width (m) in dam_break_2d
    g = -scene.document["gravity"][1]
    sim = eddy.Simulation(scene, threads=2)
    T, Z = [0.0], [1.0]
    for T_next in np.linspace(0.0, T_end, samples + 1)[1:]:
        t_next = T_next / math.sqrt(2 * g / a)
        while sim.time < t_next:
            sim.step()
        T.append(sim.time * math.sqrt(2 * g / a))
        Z.append((sim.positions[:, 0].max() + scene.particle_radius) / a)
    return np.array(T), np.array(Z)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a coarse run (r = 5 mm) to T = 1.3, for the tests")
    p.add_argument("--out", default="dam_break_front.png", help="the plot (needs matplotlib)")
    args = p.parse_args()
    overrides = ["particle_radius=0.005"] if args.quick else []
    scene = eddy.load_scene("dam_break_2d", overrides)
    T, Z = front_curve(scene, 1.3 if args.quick else 3.0, 6 if args.quick else 30)
    for t_mm, z_mm in MARTIN_MOYCE:
        if t_mm <= T[-1]:
            z = float(np.interp(t_mm, T, Z))
            print(f"T = {t_mm:.3f}: Z = {z:.3f}, Martin & Moyce {z_mm:.3f} ({100 * (z - z_mm) / z_mm:+.1f}%)")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (Debian: python3-matplotlib): no plot")
        return
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(T, Z, label=f"eddy {scene.method}, r = {scene.particle_radius * 1000:g} mm")
    ax.plot(*zip(*MARTIN_MOYCE), "o", label="Martin & Moyce (1952)")
    ax.set_xlabel("T = t sqrt(2g/a)")
    ax.set_ylabel("Z = x / a")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"plot: {args.out}")


if __name__ == "__main__":
    main()
