"""The fluid's load on each boundary object from Python (issue 28): sim.boundary_forces() after a step and
run()'s per-frame means, checked against physics (a tank at rest carries the fluid's weight) and against
the run's own out/forces.csv."""
import csv

import numpy as np
import pytest

import eddy

G = 9.81
R = 0.005  # particle radius (m)


def tank(method="wcsph", boundaries=True):
    """A 2D tank 0.4 m wide, filled to 0.2 m: 800 particles of water at rest."""
    doc = {
        "name": "tank_at_rest", "dimension": 2, "method": method, "particle_radius": R, "duration": 1.0,
        "fluids": [{"shape": "box", "min": [0, 0], "max": [0.4, 0.2]}],
    }
    if boundaries:
        doc["boundaries"] = [{"shape": "box", "min": [0, 0], "max": [0.4, 0.4]}]
    return eddy.load_scene(doc)


def weight(sim, result):
    """The fluid's weight (N per metre of depth in 2D): n particles of the method's own mass (about
    rho0 (2 r)^2: WCSPH sets it so that the lattice has rho0 exactly), from a run()'s summary."""
    mass = result["summary"]["settings"]["derived_particle_mass"]
    assert mass == pytest.approx(1000 * (2 * R) ** 2, rel=0.01)
    return len(sim) * mass * G


def test_a_tank_at_rest_carries_the_fluids_weight(tmp_path):
    sim = eddy.Simulation(tank(), threads=2)
    f = sim.boundary_forces()
    assert f.shape == (1, 6) and f.dtype == np.float64
    assert np.all(np.isnan(f))  # no step yet: unknown, not zero
    w = weight(sim, sim.run(out=tmp_path, steps=1))  # the first step, as step() would take it
    assert len(sim) == 800
    rows, dts = [], []
    while sim.time < 1.0:
        dt = sim.step()["dt"]
        if sim.time > 0.7:  # the last 0.3 s of steps
            rows.append(sim.boundary_forces()[0])
            dts.append(dt)
    rows, dts = np.array(rows), np.array(dts)
    assert len(rows) > 100
    mean = (rows * dts[:, None]).sum(axis=0) / dts.sum()
    # fy pushes the tank down by the water's weight; the side walls' pressures cancel in x, and the
    # weight acts on the tank's vertical centre line, through its pivot (the box's centre).
    assert mean[1] == pytest.approx(-w, rel=0.005)
    assert abs(mean[0]) < 0.005 * w
    assert abs(mean[5]) < 0.005 * w * 0.2
    # 2D: no fz, torque about z only, exactly
    assert np.all(rows[:, [2, 3, 4]] == 0.0)


def test_boundary_forces_is_a_fresh_copy_of_the_last_step():
    sim = eddy.Simulation(tank(), threads=2)
    sim.step(5)
    a = sim.boundary_forces()
    a[:] = 0.0
    b = sim.boundary_forces()
    assert np.all(np.isfinite(b)) and b[0, 1] < 0.0
    sim.step()
    c = sim.boundary_forces()
    assert not np.array_equal(b, c)  # a new step, a new load


def test_no_boundaries_gives_no_rows():
    sim = eddy.Simulation(tank(boundaries=False), threads=2)
    assert sim.boundary_forces().shape == (0, 6)
    sim.step(3)
    f = sim.boundary_forces()
    assert f.shape == (0, 6) and f.dtype == np.float64


def test_same_loads_whatever_the_threads():
    a = eddy.Simulation(tank(), threads=1)
    b = eddy.Simulation(tank(), threads=2)
    a.step(20)
    b.step(20)
    assert np.array_equal(a.boundary_forces(), b.boundary_forces())


def test_run_returns_each_frames_mean_load_as_forces_csv(tmp_path):
    sim = eddy.Simulation(tank(), threads=2)
    result = sim.run(out=tmp_path / "run", until=0.3, fps=20, formats=["csv"])
    loads, times = result["loads"], result["frame_times"]
    frames = result["frames"]
    assert loads.shape == (frames, 1, 6) and loads.dtype == np.float64
    assert times.shape == (frames,) and times[0] == 0.0 and times[-1] == pytest.approx(0.3)
    assert np.all(np.isnan(loads[0]))  # no step before the first frame
    with open(tmp_path / "run" / "forces.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == frames - 1
    for k, row in enumerate(rows, start=1):
        assert float(row["time"]) == times[k] and int(row["object"]) == 0
        got = [float(row[c]) for c in ("fx", "fy", "fz", "tx", "ty", "tz")]
        assert got == pytest.approx(loads[k, 0], rel=1e-8, abs=1e-9)
    # the water, settled from its hydrostatic start, already weighs on the floor
    assert loads[-1, 0, 1] == pytest.approx(-weight(sim, result), rel=0.02)


def test_shallow_water_run_has_no_loads(tmp_path):
    grid = eddy.ShallowWater(eddy.load_scene("shallow_valley"), threads=2)
    result = grid.run(out=tmp_path / "sw", steps=2)
    assert "loads" not in result
