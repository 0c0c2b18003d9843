"""The fluid at points from Python (issue 41's probes): sim.probe() between steps, and run()'s probes.csv
from the scene's "probes" key, which reads the same numbers (one function behind both)."""
import csv

import numpy as np
import pytest

import eddy

R = 0.005  # particle radius (m)


def tank(probes=True):
    """A 2D WCSPH tank 0.2 m wide with 0.1 m of water; probes 5 cm deep and in the air."""
    doc = {
        "name": "probe_tank", "dimension": 2, "method": "wcsph", "particle_radius": R, "duration": 0.2,
        "output": {"fps": 20, "formats": ["csv"]},
        "boundaries": [{"shape": "box", "min": [0, 0], "max": [0.2, 0.2]}],
        "fluids": [{"shape": "box", "min": [0, 0], "max": [0.2, 0.1]}],
    }
    if probes:
        doc["probes"] = [{"name": "middle", "position": [0.1, 0.05]}, {"name": "air", "position": [0.1, 0.17]}]
    return eddy.load_scene(doc)


def test_probe_reads_hydrostatic_pressure_and_zeros_in_the_air():
    sim = eddy.Simulation(tank(), threads=2)
    sim.step(50)
    r = sim.probe()
    assert r["pressure"].shape == (2,) and r["velocity"].shape == (2, 2)
    assert r["pressure"].dtype == np.float32
    assert r["pressure"][0] == pytest.approx(1000 * 9.81 * 0.05, rel=0.15)
    assert r["pressure"][1] == 0.0 and np.all(r["velocity"][1] == 0.0)
    same = sim.probe(np.array([[0.1, 0.05], [0.1, 0.17]], dtype=np.float32))
    assert np.array_equal(same["pressure"], r["pressure"])


def test_probe_checks_its_points():
    sim = eddy.Simulation(tank(probes=False), threads=1)
    assert sim.probe()["pressure"].shape == (0,)
    with pytest.raises(ValueError, match="probe: points"):
        sim.probe(np.zeros((3, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="not finite"):
        sim.probe(np.array([[np.nan, 0.0]], dtype=np.float32))


def test_run_writes_probes_csv_as_probe_reads(tmp_path):
    sim = eddy.Simulation(tank(), threads=2)
    sim.run(out=tmp_path)
    with open(tmp_path / "probes.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 5 * 2  # frames at 0, 0.05, ..., 0.2 s
    last = [r for r in rows if float(r["time"]) == pytest.approx(0.2)]
    assert [r["name"] for r in last] == ["middle", "air"]
    now = sim.probe()
    assert float(last[0]["pressure"]) == pytest.approx(float(now["pressure"][0]), rel=1e-6)
    assert float(last[0]["vx"]) == pytest.approx(float(now["velocity"][0][0]), abs=1e-9)
