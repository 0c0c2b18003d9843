"""Changing a simulation from Python between steps (issue 13): sim.settings, add_particles, velocities
given from Python, and views taken before a step.

Run by ctest (label python) with PYTHONPATH set to BUILD/python and EDDY_CLI to the built `eddy`.
"""
import gc
import os
import subprocess
import tempfile

import numpy as np
import pytest

import eddy

EDDY_CLI = os.environ.get("EDDY_CLI", "eddy")


def cli_error(*args):
    """The one line `eddy run` prints for bad input (exit code 2), without its "eddy: error: " prefix."""
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run([EDDY_CLI, "run", *args, "--steps", "1", "-q", "--out", out], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    line = [x for x in r.stderr.splitlines() if x.startswith("eddy: error: ")][-1]
    return line[len("eddy: error: "):]


def block(x0, y0, x1, y1, r):
    """Lattice points of spacing 2r in a box (2D), as the scene builders lay fluid out."""
    xs = np.arange(x0 + r, x1, 2 * r)
    ys = np.arange(y0 + r, y1, 2 * r)
    X, Y = np.meshgrid(xs, ys)
    return np.stack([X.ravel(), Y.ravel()], axis=1).astype(np.float32)


def test_settings_read_every_key_of_the_methods_table():
    sim = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2)
    s = sim.settings
    assert s["cfl"] == 0.4 and s["rest_density"] == 1000.0  # from the scene file
    assert s["seed_viscosity"] == 0.0  # a default
    assert "seed_viscosity" in s and "no_such_key" not in s
    assert dict(s) == s.to_dict() and len(s) == len(s.to_dict())
    assert "seed_viscosity" in s.help()
    with pytest.raises(KeyError):
        s["no_such_key"]


def test_settings_change_between_steps():
    scene = eddy.load_scene("dam_break_2d")
    sim = eddy.Simulation(scene, threads=2)
    sim.step(20)
    before = sim.state_hash()
    sim.settings["seed_viscosity"] = np.float32(0.05)  # numpy values are fine
    assert sim.state_hash() == before  # the particles are kept (moving: no hydrostatic start)
    assert sim.settings["seed_viscosity"] == 0.05
    assert sim.scene.settings["seed_viscosity"] == 0.05 and sim.scene.document["settings"]["seed_viscosity"] == 0.05
    sim.settings.update({"cfl": 0.3}, seed_viscosity=0.1)
    assert sim.settings["cfl"] == 0.3 and sim.settings["seed_viscosity"] == 0.1
    sim.step(10)
    # The same change made on a second simulation at the same step gives the same bits.
    twin = eddy.Simulation(scene, threads=1)
    twin.step(20)
    twin.settings["seed_viscosity"] = 0.05
    twin.settings.update(cfl=0.3, seed_viscosity=0.1)
    twin.step(10)
    assert twin.state_hash() == sim.state_hash()


def test_a_bad_setting_raises_the_command_lines_message_and_changes_nothing():
    sim = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2)
    for key, value in (("seed_viscosity", -1), ("viscosity", 0.1), ("foo", 1), ("cfl", "fast")):
        with pytest.raises(ValueError) as e:
            sim.settings[key] = value
        assert str(e.value) == cli_error("dam_break_2d", "--set", f"settings.{key}={value}")
    assert sim.settings["seed_viscosity"] == 0.0 and "foo" not in sim.scene.settings


def test_add_particles():
    sim = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2)
    r = sim.scene.particle_radius
    n = len(sim)
    p = block(1.0, 0.2, 1.2, 0.3, r)  # a block in the air on the right of the tank
    ids = sim.add_particles(p, np.tile([0.0, -1.0], (len(p), 1)))
    assert ids.dtype == np.uint32 and len(ids) == len(p) and len(sim) == n + len(p)
    assert ids[0] == n and ids[-1] == n + len(p) - 1
    mine = np.isin(sim.ids, ids)  # init() may have reordered the rows: by id
    order = np.argsort(sim.ids[mine])
    np.testing.assert_array_equal(sim.positions[mine][order], p)
    assert np.all(sim.velocities[mine, 1] == -1.0)
    sim.step(300)
    mine = np.isin(sim.ids, ids)
    assert np.all(np.isfinite(sim.positions)) and sim.positions[mine, 1].min() < 0.2  # it fell
    with pytest.raises(ValueError, match="shape"):
        sim.add_particles(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="not finite"):
        sim.add_particles(np.full((1, 2), np.nan))
    with pytest.raises(ValueError, match="outside the scene's bounds"):
        sim.add_particles([[50.0, 50.0]])
    small = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2, max_particles=n + 10)
    with pytest.raises(ValueError, match="max_particles"):
        small.add_particles(p)
    assert len(small) == n


def test_a_changed_simulation_resumes_in_the_command_line_bit_for_bit(tmp_path):
    """Particles added and a setting changed from Python: the checkpoint of sim.run() holds them, and
    `eddy run --resume` continues exactly as the Python simulation does."""
    sim = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2)
    sim.add_particles(block(1.0, 0.2, 1.2, 0.3, sim.scene.particle_radius))
    sim.settings["seed_viscosity"] = 0.01
    sim.run(out=tmp_path / "a", steps=20, formats=["csv"])
    subprocess.run([EDDY_CLI, "run", "--resume", str(tmp_path / "a"), "--until", "0.01", "-q", "--threads", "2"],
                   check=True)
    sim.run(out=tmp_path / "b", until=0.01, formats=["csv"])
    a = sorted((tmp_path / "a" / "frames").glob("particles_*.csv"))[-1]
    b = sorted((tmp_path / "b" / "frames").glob("particles_*.csv"))[-1]
    assert a.read_bytes() == b.read_bytes()


def test_speed_given_from_python_is_not_a_divergence():
    """PBF has no speed of sound: 45 m/s is above 10 times the dam break's free fall (39.6 m/s), yet it
    was put in from Python, so the scene's bound grows by as much (as for the viewer's mouse)."""
    sim = eddy.Simulation(eddy.load_scene("dam_break_2d", ["method=pbf"]), threads=2)
    sim.velocities[:, 1] = 45.0
    assert sim.step()["max_speed"] > 39.6


def test_a_view_taken_before_a_step_keeps_its_values():
    """A step reorders the particles (every sort_interval = 32 steps): the old buffers are freed by the
    library, so a view still alive must have been given a buffer of its own, with its old values."""
    sim = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2)
    sim.step(5)
    x, v, ids = sim.positions, sim.velocities, sim.ids
    column = sim.positions[:, 1]  # a view of a view
    saved = x.copy(), v.copy(), ids.copy()
    sim.step(40)
    junk = [np.ones(len(saved[0]) * 2, dtype=np.float32) * k for k in range(20)]  # reuse freed memory
    gc.collect()
    np.testing.assert_array_equal(x, saved[0])
    np.testing.assert_array_equal(v, saved[1])
    np.testing.assert_array_equal(ids, saved[2])
    np.testing.assert_array_equal(column, saved[0][:, 1])
    assert not np.array_equal(sim.positions, x)  # a new view sees the new state
    v[:, 0] = 99.0  # writing through a stale view changes nothing in the simulation
    assert not np.any(sim.velocities[:, 0] == 99.0)
    del junk


def test_a_fresh_view_writes_into_the_simulation():
    a = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2)
    b = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2)
    v = a.velocities
    v[:, 0] = 0.25  # through the view
    w = np.zeros((len(b), 2), dtype=np.float32)
    w[:, 0] = 0.25
    b.velocities = w  # a whole array
    a.step(10)
    b.step(10)
    assert a.state_hash() == b.state_hash()
    assert a.state_hash() != eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2).state_hash()


def test_shallow_water_views_keep_their_values():
    w = eddy.ShallowWater(eddy.load_scene("shallow_dam_break_wet"), threads=2)
    depth = w.depth
    saved = depth.copy()
    w.step(10)
    np.testing.assert_array_equal(depth, saved)
    assert not np.array_equal(w.depth, saved)


def test_a_scene_dict_may_hold_numpy_values():
    scene = eddy.load_scene({
        "name": "np", "dimension": 2, "method": "pbf", "particle_radius": np.float32(0.01),
        "boundaries": [{"shape": "box", "min": np.zeros(2), "max": np.array([0.5, 0.5])}],
        "fluids": [{"shape": "box", "min": [0.05, 0.01], "max": np.array([0.25, 0.21])}],
    })
    assert scene.document["boundaries"][0]["max"] == [0.5, 0.5]
    assert len(eddy.Simulation(scene, threads=1)) == 100


def test_the_simulation_cannot_be_touched_while_it_runs(tmp_path):
    """run()'s progress callback runs between two steps of the library's run loop: a view taken there
    would not be detached before the next step, so fields, steps and changes raise RuntimeError, which
    stops the run and reaches the caller."""
    sim = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2)

    def peek(progress):
        sim.positions

    with pytest.raises(RuntimeError, match="stepping"):
        sim.run(out=tmp_path / "run", steps=5, formats=["csv"], progress=peek)
    assert sim.steps >= 1 and sim.positions.shape == (len(sim), 2)  # usable again afterwards
    seen = []
    sim.run(out=tmp_path / "run2", steps=5, formats=["csv"], progress=lambda p: seen.append(p["steps"]))
    assert seen


def test_shallow_water_sources_and_drops_from_python(tmp_path):
    """A source added from Python pours in rate * area * time (the lake's border cells are walls, so
    nothing leaves), goes through the scene's own checks, and resumes in `eddy run --resume` bit for bit
    (the checkpoint keeps the scene with the source): extended to 0.6 s, the first run equals a straight one."""
    w = eddy.ShallowWater(eddy.load_scene("shallow_lake_at_rest"), threads=2)
    ny, nx = w.shape
    dx = w.dx
    v0 = w.volume
    # A square of 4 x 4 cell centres; a drain elsewhere would do the same with a negative rate.
    x0, y0 = 10 * dx, 0.0
    w.add_source((x0, y0), (x0 + 3 * dx, y0 + 3 * dx), rate=0.01, end=0.5)
    cells = sum(1 for j in range(ny) for i in range(nx)
                if x0 <= (i + 0.5) * dx <= x0 + 3 * dx and y0 <= (j + 0.5) * dx <= y0 + 3 * dx)
    assert cells > 0
    while w.time < 0.3:
        w.step()
    assert w.volume - v0 == pytest.approx(0.01 * cells * dx * dx * w.time, rel=1e-3)
    with pytest.raises(ValueError) as e:
        w.add_source((1.0, 1.0), (0.0, 0.0), rate=0.01)
    assert "sources[1]" in str(e.value) and "min must not exceed max" in str(e.value)
    with pytest.raises(ValueError):
        w.add_drop(1.0, 0.1, radius=-1.0, height=0.1)
    w.add_drop(2.0, 0.1, radius=0.3, height=0.05, ink=0.5)
    # The same water built again, run straight to 0.6 s: extending the first run (which ends off its
    # frame times) must give the straight run's bits (issue 29, item 9).
    w2 = eddy.ShallowWater(eddy.load_scene("shallow_lake_at_rest"), threads=2)
    w2.add_source((x0, y0), (x0 + 3 * dx, y0 + 3 * dx), rate=0.01, end=0.5)
    while w2.time < 0.3:
        w2.step()
    w2.add_drop(2.0, 0.1, radius=0.3, height=0.05, ink=0.5)
    w.run(out=tmp_path / "a", until=0.4, formats=["csv"])
    subprocess.run([EDDY_CLI, "run", "--resume", str(tmp_path / "a"), "--until", "0.6", "-q", "--threads", "2"],
                   check=True)
    w2.run(out=tmp_path / "b", until=0.6, formats=["csv"])
    a = sorted((tmp_path / "a" / "frames").glob("grid_*.csv"))[-1]
    b = sorted((tmp_path / "b" / "frames").glob("grid_*.csv"))[-1]
    assert a.read_bytes() == b.read_bytes()
