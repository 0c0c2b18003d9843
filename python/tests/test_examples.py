"""The examples in examples/python/ run (quick mode) and say what they should."""
import os
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"


def run(name, *args, cwd):
    r = subprocess.run([sys.executable, str(EXAMPLES / name), "--quick", *args], cwd=cwd, capture_output=True,
                       text=True, env=dict(os.environ), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_dam_break_front(tmp_path):
    out = run("dam_break_front.py", "--out", str(tmp_path / "front.png"), cwd=tmp_path)
    assert "Martin & Moyce" in out
    assert "plot:" in out or "no plot" in out


def test_viscosity_sweep(tmp_path):
    lines = run("viscosity_sweep.py", cwd=tmp_path).strip().splitlines()
    rows = [list(map(float, line.split())) for line in lines[1:]]
    assert len(rows) == 2
    # More viscosity, less kinetic energy at the same time.
    assert rows[1][2] < rows[0][2]


def test_surfaces_per_frame(tmp_path):
    out = run("surfaces_per_frame.py", "--out", str(tmp_path / "run"), cwd=tmp_path)
    meshes = sorted((tmp_path / "run" / "frames").glob("surface_*.obj"))
    assert len(meshes) >= 2 and "triangles" in out
