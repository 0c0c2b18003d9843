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
import os as _os

# A pip-installed eddy carries the bundled scenes beside it (setup.py copies them): point the library
# there unless the user chose a folder. In the build tree (PYTHONPATH=build/python) there is none and
# the library finds the source tree's scenes itself.
_scenes = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "scenes")
if _os.path.isdir(_scenes) and not _os.environ.get("EDDY_SCENES_DIR"):
    _os.environ["EDDY_SCENES_DIR"] = _scenes

from ._eddy import (  # noqa: E402, F401
    DivergenceError,
    Scene,
    Settings,
    ShallowWater,
    Simulation,
    Whitewater,
    __version__,
    load_scene,
    read_particles,
    reconstruct_surface,
    scenes,
    whitewater,
    write_mesh,
)

__all__ = [
    "DivergenceError",
    "Scene",
    "Settings",
    "ShallowWater",
    "Simulation",
    "Whitewater",
    "load_scene",
    "read_particles",
    "reconstruct_surface",
    "scenes",
    "whitewater",
    "write_mesh",
]
