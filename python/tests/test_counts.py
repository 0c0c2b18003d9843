"""Issue 31 (item 5): counts from Python are whole numbers in range, refused with ValueError naming the
argument and what is allowed: step(-1) returned {} having done nothing, step(2.5) and run(steps=-1) were
pybind's TypeError, Simulation(max_particles=-1) too."""
import numpy as np
import pytest

import eddy


def small():
    return eddy.load_scene({
        "name": "small", "dimension": 2, "particle_radius": 0.02, "duration": 0.05,
        "boundaries": [{"shape": "box", "min": [0, 0], "max": [0.5, 0.5]}],
        "fluids": [{"shape": "box", "min": [0, 0], "max": [0.2, 0.2]}],
    })


@pytest.mark.parametrize("n", [-1, -10**30, 2.5, 2.0, float("nan"), True, "3", None, 10**30])
def test_step_refuses_what_is_not_a_count(n):
    sim = eddy.Simulation(small(), threads=1)
    with pytest.raises(ValueError, match=r"^step: n = .*: allowed: a whole number of steps >= 0$"):
        sim.step(n)
    assert sim.steps == 0
    grid = eddy.ShallowWater(eddy.load_scene("shallow_lake_at_rest"), threads=1)
    with pytest.raises(ValueError, match=r"^step: n = .*: allowed: a whole number of steps >= 0$"):
        grid.step(n)
    assert grid.steps == 0


def test_step_takes_ints_and_numpy_integers():
    sim = eddy.Simulation(small(), threads=1)
    assert sim.step(0) == {} and sim.steps == 0
    assert "dt" in sim.step(np.int64(3)) and sim.steps == 3
    sim.step(np.uint8(2))
    assert sim.steps == 5
    grid = eddy.ShallowWater(eddy.load_scene("shallow_lake_at_rest"), threads=1)
    grid.step(np.int32(2))
    assert grid.steps == 2


def test_run_steps_and_max_particles_are_counts(tmp_path):
    sim = eddy.Simulation(small(), threads=1)
    for steps in (-1, 1.5, True):
        with pytest.raises(ValueError, match=r"^run: steps = .*: allowed: 0 \(no limit\) or a whole number of steps$"):
            sim.run(out=tmp_path / "r", steps=steps)
    assert not (tmp_path / "r").exists()
    assert sim.run(out=tmp_path / "r", steps=np.int64(2), progress=False)["summary"]["steps"] == 2
    for m in (-1, 0, 2**32, 1e6):
        with pytest.raises(ValueError, match=r"^Simulation: max_particles = .*: allowed: a whole number from 1 to 4294967295"):
            eddy.Simulation(small(), max_particles=m)
    assert eddy.Simulation(small(), max_particles=np.int64(1000)).max_particles == 1000


def test_set_body_force_index_is_a_count():
    scene = eddy.load_scene({
        "name": "b", "dimension": 2, "method": "dfsph", "particle_radius": 0.01,
        "boundaries": [{"shape": "box", "min": [0, 0], "max": [0.4, 0.4]}],
        "fluids": [{"shape": "box", "min": [0, 0], "max": [0.4, 0.1]}],
        "bodies": [{"shape": "box", "min": [0.15, 0.2], "max": [0.25, 0.25], "density": 500}]})
    sim = eddy.Simulation(scene, threads=1)
    for k in (-1, 0.5, True):
        with pytest.raises(ValueError, match=r"^set_body_force: k = .*: allowed: 0 to 0 \(the simulation has 1 body\)$"):
            sim.set_body_force(k, [1.0, 0.0])
    with pytest.raises(ValueError, match=r"^set_body_force: body 1: allowed: 0 to 0"):
        sim.set_body_force(1, [1.0, 0.0])
    sim.set_body_force(np.int64(0), [1.0, 0.0])
