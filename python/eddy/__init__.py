"""eddy: particle fluids (WCSPH, DFSPH, PBF, Clavet), heightfield shallow water and fluid surfaces.

    import eddy
    scene = eddy.load_scene("dam_break_2d", overrides=["settings.viscosity=0.02"])
    sim = eddy.Simulation(scene, threads=2)
    sim.step(100)
    x = sim.positions          # (n, 2) float32, a view into the simulation (no copy)
    sim.settings["viscosity"] = 0.05   # checked by the scene files' table; the method is rebuilt
    sim.run(out="out", until=1.0, formats=["vtk"])

See docs/python.md. Bad input raises ValueError with the same one-line message as the command line.
"""
from ._eddy import (  # noqa: F401
    DivergenceError,
    Scene,
    Settings,
    ShallowWater,
    Simulation,
    __version__,
    load_scene,
    read_particles,
    reconstruct_surface,
    scenes,
    write_mesh,
)

__all__ = [
    "DivergenceError",
    "Scene",
    "Settings",
    "ShallowWater",
    "Simulation",
    "load_scene",
    "read_particles",
    "reconstruct_surface",
    "scenes",
    "write_mesh",
]
