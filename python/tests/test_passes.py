"""Per-pass timings (issue 41): every step reports the wall-clock seconds of its named passes, in the order it
runs them (StepStats::passes): Python's step()["passes"] for the last step, summary.json's "passes" (and
run()'s result) summed over the run, with milliseconds per step and each pass's share; the same for the
shallow-water grid (ShallowWater.step()["passes"], its summary.json "passes").

Run by ctest (label python) with PYTHONPATH set to BUILD/python (/usr/bin/python3: Debian's, with numpy).
"""
import pytest

import eddy

PASSES = {
    "dam_break_2d": ["neighbours", "density", "accelerations", "advance", "bodies", "outflow"],
    "dfsph_dam_break_2d": ["neighbours", "densities_and_factors", "divergence_solve", "non_pressure_forces",
                           "density_solve", "positions", "bodies", "outflow"],
    "pbf_dam_break_2d": ["predict", "neighbours", "density_solve", "velocities", "bodies", "outflow"],
    "clavet_dam_break_2d": ["predict", "neighbours", "viscosity", "relaxation", "walls", "velocities", "bodies",
                            "outflow"],
}

# The shallow-water grid's passes (src/shallow/passes/): the lake's default step, and a river carrying bodies.
GRID_PASSES = {
    "shallow_lake_at_rest": ["sources", "advect", "height", "overshooting", "velocity"],
    "river_logs": ["body_motion", "sources", "advect", "height", "overshooting", "body_displacement", "velocity"],
}


def check_step_and_run(stepper, expected, out):
    """stepper (a Simulation or a ShallowWater) reports `expected` passes from step() and from run()."""
    last = stepper.step(3)
    assert list(last["passes"]) == expected
    assert all(s >= 0.0 for s in last["passes"].values())
    result = stepper.run(out=out, steps=5, formats=["csv"])
    passes = result["summary"]["passes"]
    assert [p["name"] for p in passes] == expected
    assert abs(sum(p["share"] for p in passes) - 1.0) < 1e-9
    for p in passes:
        assert p["seconds"] >= 0.0 and p["ms_per_step"] == pytest.approx(1e3 * p["seconds"] / 5)


@pytest.mark.parametrize("scene", sorted(PASSES))
def test_step_and_run_report_the_passes(tmp_path, scene):
    check_step_and_run(eddy.Simulation(eddy.load_scene(scene), threads=1), PASSES[scene], tmp_path / "run")


@pytest.mark.parametrize("scene", sorted(GRID_PASSES))
def test_grid_step_and_run_report_the_passes(tmp_path, scene):
    check_step_and_run(eddy.ShallowWater(eddy.load_scene(scene), threads=1), GRID_PASSES[scene], tmp_path / "run")
