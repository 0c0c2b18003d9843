"""One clock for every front end (issue 41): the same scene stepped to the same time by `eddy run` and by
Python's step loop gives the same state_hash.

`eddy run` lands a step on every frame time k / fps (and on the end); `sim.step(until=T)` lands its steps on
the same times (eddy.FrameLanding's rule, the scene's output.fps or `fps=`), so a loop of single steps, one
call of many, and the command line agree bit for bit, for every particle method, with bodies and emitters,
and for shallow-water grids (ShallowWater.step).

Run by ctest (label python) with PYTHONPATH set to BUILD/python and EDDY_CLI to the built `eddy`.
"""
import json
import math
import os
import subprocess

import pytest

import eddy

EDDY_CLI = os.environ.get("EDDY_CLI", "eddy")

CASES = [  # scene, --set overrides, until (s), fps (None: the scene's)
    ("dam_break_2d", [], 0.3, None),                     # WCSPH; 0.3 = 6 frames at 20 fps: 6 * (1/20) != 0.3
    ("dfsph_dam_break_2d", [], 0.13, None),              # DFSPH, an end between frames
    ("pbf_dam_break_2d", [], 0.25, 50.0),                # PBF, --fps 50
    ("clavet_dam_break_2d", [], 0.1, None),              # Clavet
    ("floating_boxes_2d", [], 0.15, None),               # Box2D bodies
    ("river_channel_2d", [], 0.2, None),                 # an emitter and the outflow
    ("dam_break_3d", ["particle_radius=0.01"], 0.12, 30.0),  # 3D
]


def cli_hash(tmp_path, scene, sets, until, fps):
    out = tmp_path / "cli"
    cmd = [EDDY_CLI, "run", scene, "--until", repr(until), "--format", "csv", "-q", "--threads", "2", "--out", str(out)]
    for s in sets:
        cmd += ["--set", s]
    if fps:
        cmd += ["--fps", repr(fps)]
    subprocess.run(cmd, check=True)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed"
    return summary["state_hash"], summary["steps"], summary["simulated_time"]


def check_steps_to(make, expected, until, fps):
    """make(threads) stepped to `until` by single steps (1 thread) and by one call (2 threads) reaches eddy
    run's `expected` (state_hash, steps, time); a further call takes no step."""
    expect, steps, time = expected
    kw = {"fps": fps} if fps else {}
    # One step per call, as a script that looks at every step does.
    a = make(1)
    calls = 0
    while a.time < until:
        assert a.step(until=until, **kw)["dt"] > 0
        calls += 1
        assert calls <= steps, "more steps than eddy run took"
    assert a.steps == steps and a.time == time
    assert format(a.state_hash(), "016x") == expect
    # Many steps in one call stop at `until`; a further call takes none.
    b = make(2)
    b.step(10**9, until=until, **kw)
    assert b.steps == steps and format(b.state_hash(), "016x") == expect
    assert b.step(until=until, **kw) == {} and b.steps == steps


@pytest.mark.parametrize("scene,sets,until,fps", CASES, ids=[c[0] for c in CASES])
def test_step_until_gives_eddy_runs_state(tmp_path, scene, sets, until, fps):
    check_steps_to(lambda threads: eddy.Simulation(eddy.load_scene(scene, sets), threads=threads),
                   cli_hash(tmp_path, scene, sets, until, fps), until, fps)


def test_step_until_lands_on_the_frame_times():
    sim = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2)
    fps = sim.scene.document.get("output", {}).get("fps", 25.0)
    times = []
    while sim.time < 0.2:
        sim.step(until=0.2)
        times.append(sim.time)
    frames = [k / fps for k in range(1, round(0.2 * fps) + 1)]
    assert all(t in times for t in frames), (frames, times)


# Particles and a grid take the same arguments, with the same checks.
MAKERS = {
    "particles": lambda: eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=1),
    "grid": lambda: eddy.ShallowWater(eddy.load_scene("shallow_lake_at_rest"), threads=1),
}


@pytest.mark.parametrize("kind", list(MAKERS))
@pytest.mark.parametrize("until", [-1.0, 0.0, math.nan, math.inf, "1"])
def test_step_until_refuses_a_bad_time(kind, until):
    sim = MAKERS[kind]()
    with pytest.raises((ValueError, TypeError)):
        sim.step(until=until)
    assert sim.steps == 0


@pytest.mark.parametrize("kind", list(MAKERS))
@pytest.mark.parametrize("fps", [-1.0, 0.0, math.nan, 1e7])
def test_step_until_refuses_a_bad_fps(kind, fps):
    sim = MAKERS[kind]()
    with pytest.raises(ValueError):
        sim.step(until=0.1, fps=fps)
    assert sim.steps == 0


GRID_CASES = [  # shallow water: the grid's steps land on the same frame times (landing_dt)
    ("shallow_dam_break_wet", 0.35, None),  # 10 fps, an end between frames
    ("shallow_river_ink", 0.6, 7.0),        # sources and ink, --fps 7
    ("shallow_drops", 0.25, None),          # drops
]


@pytest.mark.parametrize("scene,until,fps", GRID_CASES, ids=[c[0] for c in GRID_CASES])
def test_grid_step_until_gives_eddy_runs_state(tmp_path, scene, until, fps):
    check_steps_to(lambda threads: eddy.ShallowWater(eddy.load_scene(scene), threads=threads),
                   cli_hash(tmp_path, scene, [], until, fps), until, fps)
