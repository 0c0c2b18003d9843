"""A run, then a surface mesh for every frame it wrote: eddy.read_particles + eddy.reconstruct_surface
+ eddy.write_mesh (what `eddy mesh OUT/frames` does, from Python).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/surfaces_per_frame.py [--quick] [--out runs/cube]
"""
import argparse
from pathlib import Path

import eddy


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a short run, for the tests")
    p.add_argument("--out", default="surfaces_run", help="output folder")
    args = p.parse_args()
    out = Path(args.out)
    scene = eddy.load_scene("dam_break_3d", ["particle_radius=0.02"] if args.quick else [])
    sim = eddy.Simulation(scene, threads=2)
    sim.run(out=out, until=0.1 if args.quick else 1.0, fps=20 if args.quick else 0, formats=["vtk"])
    meshes = []
    for frame in sorted((out / "frames").glob("particles_*.vtp")):
        particles = eddy.read_particles(frame)
        vertices, faces = eddy.reconstruct_surface(particles["positions"], radius=scene.particle_radius, smooth=2)
        mesh = frame.with_name(frame.name.replace("particles_", "surface_")).with_suffix(".obj")
        eddy.write_mesh(mesh, vertices, faces)
        meshes.append(mesh)
        print(f"{frame.name}: {len(particles['ids'])} particles -> {mesh.name}: {len(faces)} triangles")
    return meshes


if __name__ == "__main__":
    main()
