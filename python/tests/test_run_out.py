"""Issue 29 (item 8): run(out='') wrote and cleared run files in the working directory. An empty
output folder is refused (ValueError naming it) before anything is written, for particles and grids;
every run's folder gets a run.json whose id its checkpoints carry."""
import json

import pytest

import eddy


def small_scene():
    return eddy.load_scene({
        "name": "small", "dimension": 2, "particle_radius": 0.02, "duration": 0.05,
        "boundaries": [{"shape": "box", "min": [0, 0], "max": [0.5, 0.5]}],
        "fluids": [{"shape": "box", "min": [0, 0], "max": [0.2, 0.2]}],
    })


def test_empty_out_is_refused_and_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("mine")
    sim = eddy.Simulation(small_scene(), threads=1)
    with pytest.raises(ValueError, match="''"):
        sim.run(out="", steps=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_run_folder_has_a_run_id(tmp_path):
    sim = eddy.Simulation(small_scene(), threads=1)
    sim.run(out=tmp_path / "run", steps=2, formats=["csv"])
    run_id = json.loads((tmp_path / "run" / "run.json").read_text())["run_id"]
    assert len(run_id) == 32
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["run_id"] == run_id
