"""Issue 31 (item 5): run() takes the command line's surface and axis options (mesh, mesh_format,
interpolate_attributes, up) and draws the command line's progress line on a terminal by default,
quiet when piped (progress=True/False force it).

Run by ctest (label python) with PYTHONPATH=BUILD/python and EDDY_CLI set to the built `eddy`.
"""
import json
import os
import pty
import re
import select
import subprocess
import sys

import numpy as np
import pytest

import eddy

EDDY_CLI = os.environ.get("EDDY_CLI", "eddy")

CUBE = {
    "name": "cube", "dimension": 3, "particle_radius": 0.02, "duration": 0.04,
    "output": {"fps": 50, "formats": ["csv"]},
    "boundaries": [{"shape": "box", "min": [0, 0, 0], "max": [0.4, 0.4, 0.4]}],
    "fluids": [{"shape": "box", "min": [0, 0, 0], "max": [0.2, 0.2, 0.2]}],
}
SQUARE = {
    "name": "square", "dimension": 2, "particle_radius": 0.02, "duration": 0.04,
    "boundaries": [{"shape": "box", "min": [0, 0], "max": [0.5, 0.5]}],
    "fluids": [{"shape": "box", "min": [0, 0], "max": [0.2, 0.2]}],
}


def frames(out, pattern):
    return sorted((out / "frames").glob(pattern))


def test_mesh_and_up_write_what_the_command_line_writes(tmp_path):
    """The same scene through run(mesh=True, mesh_format='ply', interpolate_attributes=['velocity'],
    up='z') and `eddy run --mesh --mesh-format ply --interpolate-attributes velocity --up z`: the same
    files, byte for byte (particles and surfaces), and summary.json says up_axis z."""
    scene_file = tmp_path / "cube.json"
    scene_file.write_text(json.dumps(CUBE))
    sim = eddy.Simulation(eddy.load_scene(scene_file), threads=2)
    r = sim.run(out=tmp_path / "py", mesh=True, mesh_format="ply", interpolate_attributes=["velocity"], up="z",
                progress=False)
    assert r["status"] == "completed" and r["summary"]["up_axis"] == "z"
    subprocess.run([EDDY_CLI, "run", str(scene_file), "--out", str(tmp_path / "cli"), "--threads", "2", "-q",
                    "--mesh", "--mesh-format", "ply", "--interpolate-attributes", "velocity", "--up", "z"], check=True)
    py_surfaces = frames(tmp_path / "py", "surface_*.ply")
    assert len(py_surfaces) == 3  # t = 0, 0.02, 0.04
    assert [p.name for p in py_surfaces] == [p.name for p in frames(tmp_path / "cli", "surface_*.ply")]
    for name in [p.name for p in py_surfaces] + [p.name for p in frames(tmp_path / "py", "particles_*.csv")]:
        assert (tmp_path / "py" / "frames" / name).read_bytes() == (tmp_path / "cli" / "frames" / name).read_bytes(), name
    header = py_surfaces[-1].read_bytes().split(b"end_header")[0]
    assert b"property float vx" in header


def test_up_z_turns_the_particle_files(tmp_path):
    """A y-up world written z up: (x, y, z) -> (x, -z, y) in the frames; the default stays y up."""
    scene = eddy.load_scene(CUBE)
    a = eddy.Simulation(scene, threads=1)
    a.run(out=tmp_path / "y", progress=False)
    b = eddy.Simulation(scene, threads=1)
    b.run(out=tmp_path / "z", up="z", progress=False)
    ya = eddy.read_particles(frames(tmp_path / "y", "particles_*.csv")[-1])
    zb = eddy.read_particles(frames(tmp_path / "z", "particles_*.csv")[-1])
    order_a, order_b = np.argsort(ya["ids"]), np.argsort(zb["ids"])
    pa, pb = ya["positions"][order_a], zb["positions"][order_b]
    assert np.ptp(pa[:, 1]) > 0.1  # a real column of water, not a flat sheet
    np.testing.assert_array_equal(pb, np.stack([pa[:, 0], -pa[:, 2], pa[:, 1]], axis=1))
    assert json.loads((tmp_path / "y" / "summary.json").read_text())["up_axis"] == "y"


def test_obj_surfaces_by_default(tmp_path):
    sim = eddy.Simulation(eddy.load_scene(CUBE), threads=2)
    sim.run(out=tmp_path / "o", steps=3, mesh=True, progress=False)
    objs = frames(tmp_path / "o", "surface_*.obj")
    assert objs and objs[-1].read_text().count("\nf ") > 100


def test_bad_mesh_and_up_options_are_refused_before_anything_is_written(tmp_path):
    sim = eddy.Simulation(eddy.load_scene(CUBE), threads=1)
    cases = [
        (dict(mesh=True, mesh_format="stl"), r"run: mesh_format = 'stl': allowed: 'obj', 'ply', 'vtp'"),
        (dict(mesh=True, interpolate_attributes=["velocity"]), r"needs mesh=True with mesh_format='ply'"),
        (dict(interpolate_attributes=["velocity"], mesh_format="ply"), r"needs mesh=True"),
        (dict(mesh=True, mesh_format="ply", interpolate_attributes=["speed"]),
         r"run: interpolate_attributes: 'speed': allowed: 'velocity', 'density', 'pressure'"),
        (dict(up="x"), r"run: up = 'x': allowed: 'y', 'z'"),
        (dict(up="Z"), r"run: up = 'Z'"),
        (dict(progress="yes"), r"run: progress = 'yes': allowed: None"),
        (dict(progress=1), r"run: progress = 1: allowed: None"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            sim.run(out=tmp_path / "bad", steps=1, **kwargs)
    flat = eddy.Simulation(eddy.load_scene(SQUARE), threads=1)
    with pytest.raises(ValueError, match=r"run: up = 'z': a 2D scene is written in the x-y plane \(z = 0\); allowed: 'y'"):
        flat.run(out=tmp_path / "bad", steps=1, up="z")
    grid = eddy.ShallowWater(eddy.load_scene("shallow_lake_at_rest"), threads=1)
    with pytest.raises(ValueError, match=r"run: mesh = True: .* is a grid; its water surface is written with formats"):
        grid.run(out=tmp_path / "bad", steps=1, mesh=True)
    assert not (tmp_path / "bad").exists()
    assert sim.steps == 0 and flat.steps == 0 and grid.steps == 0
    # A grid may be written z up (its natural axis): allowed, as `eddy run --up z`.
    grid.run(out=tmp_path / "grid", steps=2, up="z", progress=False)
    assert json.loads((tmp_path / "grid" / "summary.json").read_text())["up_axis"] == "z"


# ---- progress ----------------------------------------------------------------------------------------

RUN = """
import sys, eddy
scene = eddy.load_scene({scene!r})
sim = eddy.Simulation(scene, threads=1)
sim.run(out={out!r}, until=0.6, formats=["csv"]{extra})
print("done", file=sys.stderr)
"""

BAR = re.compile(r"\r\x1b\[2K\[[#.]{24}\] +\d+% t = [\d.]+/0\.6 s  step \d+  \d+ steps/s  \d+ particles  \d+ frames  ETA \S+")


def run_script(tmp_path, extra="", terminal=False):
    """Runs a short run in a fresh python with stderr on a pseudo-terminal (terminal) or a pipe; its stderr."""
    code = RUN.format(scene=SQUARE, out=str(tmp_path / "out"), extra=extra)
    env = dict(os.environ)
    if not terminal:
        r = subprocess.run([sys.executable, "-c", code], stderr=subprocess.PIPE, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stderr.decode()
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-c", code], stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            p.kill()
            raise AssertionError("no output from the run for 120 s")
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert p.wait(timeout=60) == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_progress_bar_on_a_terminal_by_default(tmp_path):
    err = run_script(tmp_path, terminal=True)
    bars = BAR.findall(err)
    assert bars, err
    final = bars[-1]
    assert "100% t = 0.6000/0.6 s" in final and "ETA 0s" in final, err
    # The finished line is ended before whatever comes next.
    assert re.search(r"ETA 0s\ndone", err), err


def test_progress_is_quiet_when_piped_unless_asked(tmp_path):
    err = run_script(tmp_path)
    assert err.strip() == "done", err  # nothing but the script's own line
    forced = run_script(tmp_path, extra=", progress=True")
    lines = [x for x in forced.splitlines() if x.startswith("progress ")]
    # A line every tenth of the run at most (the command line's piped form), the last at 100%.
    assert 1 <= len(lines) <= 11 and lines[-1].startswith("progress 100%: t = 0.6000/0.6 s"), forced
    assert "\x1b" not in forced and "\r" not in forced
    off = run_script(tmp_path, extra=", progress=False", terminal=True)
    assert off.strip() == "done", repr(off)


def test_a_callback_replaces_the_bar(tmp_path):
    seen = []
    err = run_script(tmp_path, extra=", progress=lambda d: print('cb', d['finished'], file=sys.stderr)",
                     terminal=True)
    assert not BAR.search(err), err
    assert "cb True" in err
    sim = eddy.Simulation(eddy.load_scene(SQUARE), threads=1)
    sim.run(out=tmp_path / "cb", steps=5, progress=seen.append)
    assert seen and seen[-1]["finished"] and seen[-1]["steps"] == 5


def test_the_command_line_draws_the_same_line(tmp_path):
    """The bar is the library's (eddy/progress.hpp): `eddy run` on a terminal draws the same line."""
    scene_file = tmp_path / "square.json"
    scene_file.write_text(json.dumps(SQUARE))
    master, slave = pty.openpty()
    p = subprocess.Popen([EDDY_CLI, "run", str(scene_file), "--until", "0.6", "--out", str(tmp_path / "cli"),
                          "--threads", "1", "--format", "csv"], stderr=slave, stdout=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert p.wait(timeout=120) == 0
    err = b"".join(chunks).decode()
    assert BAR.search(err), err
