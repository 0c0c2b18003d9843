"""Emitters and outflow from Python (issue 31): sim.emitters, sim.removed, add_emitter, stop_emitter."""
import pathlib

import pytest

import eddy

SCENES = pathlib.Path(__file__).resolve().parents[2] / "scenes"


def load(name, **sets):
    return eddy.load_scene(str(SCENES / f"{name}.json"), [f"{k}={v}" for k, v in sets.items()])


def test_emitters_report_what_they_put_in():
    sim = eddy.Simulation(load("river_channel_2d", duration=1))
    assert len(sim.positions) == 0
    sim.step(200)
    (e,) = sim.emitters
    assert e["width"] == pytest.approx(0.06)
    assert e["speed"] == pytest.approx(0.5)
    assert e["emitted"] == len(sim.positions) + sim.removed["total"]
    # The volume put in: speed x width x time, within one particle (the rate is particles per second).
    assert abs(e["emitted"] - e["rate"] * sim.time) <= 1.0 + 1e-9
    assert e["volume_rate"] == pytest.approx(0.03)
    assert e["blocked"] == 0


def test_outflow_is_counted(tmp_path):
    sim = eddy.Simulation(load("river_channel_2d", duration=3, **{"domain.max": "[0.4, 0.6]"}))
    sim.run(out=str(tmp_path), until=2.0, progress=False)
    removed = sim.removed
    assert removed["outflow"] > 50
    assert removed["escaped"] == 0
    assert sim.emitters[0]["emitted"] == len(sim.positions) + removed["total"]


def test_add_and_stop_an_emitter():
    sim = eddy.Simulation(load("river_channel_2d", duration=2))
    sim.step(50)
    t0 = sim.time
    k = sim.add_emitter({"center": [0.3, 0.15], "direction": [1, 0], "speed": 1.0, "width": 0.03})
    assert k == 1
    assert sim.emitters[1]["start"] == pytest.approx(t0)
    sim.step(100)
    n = sim.emitters[1]["emitted"]
    assert n > 0
    assert abs(n - sim.emitters[1]["rate"] * (sim.time - t0)) <= 1.0 + 1e-6
    sim.stop_emitter(1)
    sim.step(50)
    assert sim.emitters[1]["emitted"] == n
    with pytest.raises(ValueError, match=r"emitters\[2\]"):
        sim.add_emitter({"center": [0.3, 0.15], "direction": [0, 0], "speed": 1.0, "width": 0.03})
    with pytest.raises(ValueError, match="emitters"):
        sim.add_emitter({"center": [0.3, -0.02], "direction": [1, 0], "speed": 1.0, "width": 0.03})  # in the floor
    with pytest.raises(ValueError):
        sim.stop_emitter(7)
    assert len(sim.emitters) == 2


def test_sinks_are_counted_by_name(tmp_path):
    sim = eddy.Simulation(load("draining_tank_2d", duration=1))
    n0 = len(sim.positions)
    sim.run(out=str(tmp_path), until=0.5, progress=False)
    removed = sim.removed
    assert removed["drained"] > 20
    assert removed["sinks"] == {"drain": removed["drained"]}
    assert removed["total"] == removed["drained"] + removed["outflow"] + removed["escaped"]
    assert len(sim.positions) + removed["total"] == n0
    import json
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["sinks"][0]["name"] == "drain"
    assert summary["sinks"][0]["drained"] == removed["drained"]
    assert summary["removed"]["drained"] == removed["drained"]
    assert summary["frames"][-1]["drained"] == removed["drained"]
