"""Issue 29 (items 11 and 13): the Python module checks what it is given as the command line does.

threads=100000 or 10**9 crashed in the thread arena's teardown and -5 was taken as "every core";
run(until=-1 or nan) ran the scene's duration, run(formats=['bogus']) wrote no frame and said
"completed", run(until=t) before the simulation's time did nothing. Each is now a ValueError naming
the argument and what is allowed, raised before anything is written.
"""
import math

import numpy as np
import pytest

import eddy


def small_scene():
    return eddy.load_scene({
        "name": "small", "dimension": 2, "particle_radius": 0.02, "duration": 0.05,
        "boundaries": [{"shape": "box", "min": [0, 0], "max": [0.5, 0.5]}],
        "fluids": [{"shape": "box", "min": [0, 0], "max": [0.2, 0.2]}],
    })


@pytest.mark.parametrize("threads", [100000, 10**9, 10**12, 10**20, -10**30, 4097, -5, -1])
def test_threads_out_of_range_are_value_errors(threads):
    with pytest.raises(ValueError, match=rf"Simulation: threads = {threads}: allowed: 0 \(every core\) or 1 to 4096"):
        eddy.Simulation(small_scene(), threads=threads)
    with pytest.raises(ValueError, match=rf"ShallowWater: threads = {threads}: allowed: 0 \(every core\) or 1 to 4096"):
        eddy.ShallowWater(eddy.load_scene("shallow_lake_at_rest"), threads=threads)
    points = np.random.default_rng(1).random((50, 3)).astype(np.float32)
    with pytest.raises(ValueError, match=rf"reconstruct_surface: threads = {threads}: allowed"):
        eddy.reconstruct_surface(points, 0.05, threads=threads)


def test_threads_in_range_work():
    assert eddy.Simulation(small_scene(), threads=0).threads >= 1
    assert eddy.Simulation(small_scene(), threads=3).threads == 3
    points = np.random.default_rng(1).random((50, 3)).astype(np.float32)
    vertices, faces = eddy.reconstruct_surface(points, 0.05, threads=4096)
    assert len(vertices) > 0 and len(faces) > 0


@pytest.mark.parametrize("until", [-1.0, math.nan, math.inf, -math.inf, 2e9])
def test_run_until_must_be_a_time(tmp_path, until):
    sim = eddy.Simulation(small_scene(), threads=1)
    with pytest.raises(ValueError, match=r"run: until = .*: allowed: 0 \(the scene's duration\) or a time > 0 and <= 1e9 \(s\)"):
        sim.run(out=tmp_path / "run", until=until)
    assert not (tmp_path / "run").exists()
    assert sim.steps == 0


def test_run_formats_must_be_known(tmp_path):
    sim = eddy.Simulation(small_scene(), threads=1)
    with pytest.raises(ValueError, match=r"run: formats: 'bogus' is not a particle format; allowed: vtk, csv, ply"):
        sim.run(out=tmp_path / "run", steps=1, formats=["csv", "bogus"])
    with pytest.raises(ValueError, match=r"'vti' is not a particle format"):
        sim.run(out=tmp_path / "run", steps=1, formats=["vti"])
    assert not (tmp_path / "run").exists()
    w = eddy.ShallowWater(eddy.load_scene("shallow_lake_at_rest"), threads=1)
    with pytest.raises(ValueError, match=r"run: formats: 'vtk' is not a grid format; allowed: vti, csv, obj, ply"):
        w.run(out=tmp_path / "grid", steps=1, formats=["vtk"])
    with pytest.raises(ValueError, match=r"run: until = -1"):
        w.run(out=tmp_path / "grid", until=-1)
    assert not (tmp_path / "grid").exists()
    # What is allowed still runs.
    assert sim.run(out=tmp_path / "ok", steps=1, formats=["csv", "ply"])["status"] == "completed"


def test_run_fps_and_checkpoint_every_are_checked(tmp_path):
    sim = eddy.Simulation(small_scene(), threads=1)
    with pytest.raises(ValueError, match=r"run: fps = -1: allowed: 0 \(the scene's output.fps\)"):
        sim.run(out=tmp_path / "run", steps=1, fps=-1)
    with pytest.raises(ValueError, match=r"run: fps = nan"):
        sim.run(out=tmp_path / "run", steps=1, fps=math.nan)
    with pytest.raises(ValueError, match=r"run: checkpoint_every = nan: allowed: 0 \(at the end only\)"):
        sim.run(out=tmp_path / "run", steps=1, checkpoint_every=math.nan)
    assert not (tmp_path / "run").exists()


def test_run_to_a_time_already_past_is_an_error(tmp_path):
    """The command line's --resume --until before the checkpoint's time says so; so does run()."""
    sim = eddy.Simulation(small_scene(), threads=1)
    sim.run(out=tmp_path / "a", until=0.02, formats=["csv"])
    t = sim.time
    assert t == pytest.approx(0.02)
    with pytest.raises(ValueError, match=r"run: until = 0.01 s: the simulation is at t = 0.02 s already; allowed: a later time"):
        sim.run(out=tmp_path / "b", until=0.01)
    assert not (tmp_path / "b").exists()
    sim.run(out=tmp_path / "c", until=0.05, formats=["csv"])  # to the scene's duration
    sim.step(1)
    assert sim.time > 0.05
    with pytest.raises(ValueError, match=r"until = 0 \(the scene's duration, 0.05 s\): the simulation is at t = 0.05"):
        sim.run(out=tmp_path / "d")
    w = eddy.ShallowWater(eddy.load_scene("shallow_lake_at_rest"), threads=1)
    w.step(5)
    with pytest.raises(ValueError, match=r"the simulation is at t = .* already"):
        w.run(out=tmp_path / "g", until=w.time / 2)
