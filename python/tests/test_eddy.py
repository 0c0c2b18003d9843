"""The Python module against the command line and against analytic shapes (issue 13).

Run by ctest (label python) with PYTHONPATH set to BUILD/python and EDDY_CLI to the built `eddy`.
"""
import gc
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import eddy

EDDY_CLI = os.environ.get("EDDY_CLI", "eddy")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read_csv(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return {name: data[:, k] for k, name in enumerate(header)}


def test_bundled_scenes_are_listed():
    names = eddy.scenes()
    assert "dam_break_2d" in names and "shallow_valley" in names
    assert list(names) == sorted(names)


def test_arrays_equal_the_command_lines_csv(tmp_path):
    """10 steps from Python and from `eddy run --steps 10 --format csv`: the same particles."""
    out = tmp_path / "cli"
    subprocess.run([EDDY_CLI, "run", "dam_break_2d", "--steps", "10", "--format", "csv", "-q", "--threads", "2",
                    "--out", str(out)], check=True)
    last = sorted((out / "frames").glob("particles_*.csv"))[-1]
    cli = read_csv(last)
    summary = json.loads((out / "summary.json").read_text())

    sim = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=1)
    sim.step(10)
    assert sim.steps == summary["steps"] == 10
    order = np.argsort(sim.ids)
    cli_order = np.argsort(cli["id"])
    assert np.array_equal(sim.ids[order], cli["id"][cli_order].astype(np.uint32))
    # csv holds 9 significant digits: float32 values round-trip exactly.
    np.testing.assert_array_equal(sim.positions[order, 0], cli["x"][cli_order].astype(np.float32))
    np.testing.assert_array_equal(sim.positions[order, 1], cli["y"][cli_order].astype(np.float32))
    np.testing.assert_array_equal(sim.velocities[order, 0], cli["vx"][cli_order].astype(np.float32))
    np.testing.assert_array_equal(sim.density[order], cli["density"][cli_order].astype(np.float32))
    np.testing.assert_array_equal(sim.pressure[order], cli["pressure"][cli_order].astype(np.float32))


def test_same_state_whatever_the_threads_and_run_equals_step(tmp_path):
    a = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=1)
    b = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2)
    a.step(20)
    b.step(20)
    assert a.state_hash() == b.state_hash()
    c = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2)
    seen = []
    result = c.run(out=tmp_path / "run", steps=20, formats=["csv"], progress=seen.append)
    assert result["status"] == "completed"
    assert c.state_hash() == a.state_hash()
    assert seen and seen[-1]["finished"] and seen[-1]["steps"] == 20
    assert (tmp_path / "run" / "summary.json").exists()


def test_a_scene_built_in_numpy_and_python():
    """A dict scene with a fluid from a numpy computation: a block whose side follows from a volume."""
    side = float(np.sqrt(0.02))  # 0.02 m^2 of water
    scene = eddy.load_scene({
        "name": "numpy_block", "dimension": 2, "method": "pbf", "particle_radius": 0.005,
        "boundaries": [{"shape": "box", "min": [0, 0], "max": [0.5, 0.5]}],
        "fluids": [{"shape": "box", "min": [0.05, 0.01], "max": [0.05 + side, 0.01 + side]}],
    })
    assert scene.method == "pbf" and scene.dimension == 2
    sim = eddy.Simulation(scene, threads=2)
    n = len(sim)
    assert n == pytest.approx(0.02 / (2 * 0.005) ** 2, rel=0.1)
    sim.step(50)
    assert len(sim) == n and np.all(np.isfinite(sim.positions))
    assert np.all(sim.positions[:, 1] > 0)


def test_velocities_are_writable():
    sim = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=2)
    sim.velocities[:, 0] = 0.5  # through the view
    assert np.all(sim.velocities[:, 0] == np.float32(0.5))
    v = np.zeros((len(sim), 2), dtype=np.float32)
    v[:, 1] = -1.0
    sim.velocities = v  # a whole array
    assert np.all(sim.velocities[:, 1] == np.float32(-1.0))
    with pytest.raises(ValueError, match="shape"):
        sim.velocities = np.zeros((3, 2))
    with pytest.raises(ValueError):
        sim.positions[0, 0] = 1.0  # read-only view


def test_errors_carry_the_command_lines_message(tmp_path):
    with pytest.raises(ValueError, match="no_such_scene"):
        eddy.load_scene("no_such_scene")
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "b", "dimension": 2, "particle_radius": -1}')
    with pytest.raises(ValueError, match="broken.json.*particle_radius"):
        eddy.load_scene(broken)
    with pytest.raises(ValueError, match="speed_of_sound"):
        eddy.Simulation(eddy.load_scene("dam_break_2d", ["method=pbf", "settings.speed_of_sound=20"]))
    with pytest.raises(ValueError, match="shallow"):
        eddy.Simulation(eddy.load_scene("shallow_dam_break_wet"))


def test_scene_set_is_the_command_lines_set():
    scene = eddy.load_scene("dam_break_2d")
    slow = scene.set("settings.cfl=0.2")
    assert slow.settings["cfl"] == 0.2 and scene.settings["cfl"] == 0.4
    assert slow.document["settings"]["cfl"] == 0.2


def test_a_view_outlives_its_simulation():
    sim = eddy.Simulation(eddy.load_scene("dam_break_2d"), threads=1)
    x = sim.positions
    expected = float(np.asarray(x, dtype=np.float64).sum())
    del sim
    gc.collect()
    assert float(np.asarray(x, dtype=np.float64).sum()) == expected  # the view keeps it alive


def test_divergence_raises():
    """Clavet at the seed's 1/60 s step throws its fluid at 53 m/s in a 1 m container (see
    tests/regression/method_switch_and_divergence_test.cpp)."""
    sim = eddy.Simulation(eddy.load_scene("clavet_circle_2d", ["settings.time_step=0.0166667"]), threads=2)
    with pytest.raises(eddy.DivergenceError, match="faster than any motion of the scene"):
        sim.step(5)


def test_reconstructed_sphere_is_closed_and_of_the_right_volume(tmp_path):
    r = 0.01
    g = np.arange(-0.2, 0.2 + 1e-9, 2 * r)
    x, y, z = np.meshgrid(g, g, g, indexing="ij")
    p = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    R = 0.15
    p = p[np.linalg.norm(p, axis=1) < R].astype(np.float32)
    vertices, faces = eddy.reconstruct_surface(p, radius=r)
    assert vertices.dtype == np.float32 and faces.dtype == np.int32 and faces.shape[1] == 3
    # Closed: every edge is shared by exactly two triangles.
    edges = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    assert np.all(counts == 2)
    # Volume by the divergence theorem against the particles' own volume (n (2r)^3).
    a, b, c = (vertices[faces[:, k]].astype(np.float64) for k in range(3))
    volume = np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0
    assert volume == pytest.approx(len(p) * (2 * r) ** 3, rel=0.03)
    path = tmp_path / "sphere.obj"
    eddy.write_mesh(path, vertices, faces)
    assert path.read_text().count("\nf ") == len(faces)


def test_reconstruct_surface_anisotropic_keeps_the_ball_closed_and_its_volume():
    r = 0.01
    g = np.arange(-0.2, 0.2 + 1e-9, 2 * r)
    x, y, z = np.meshgrid(g, g, g, indexing="ij")
    p = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    p = p[np.linalg.norm(p, axis=1) < 0.15].astype(np.float32)
    iso_v, iso_f = eddy.reconstruct_surface(p, radius=r)
    vertices, faces = eddy.reconstruct_surface(p, radius=r, anisotropic=True)
    assert len(faces) > 0 and not np.array_equal(faces, iso_f)  # the option reaches the library
    edges = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    assert np.all(counts == 2)
    a, b, c = (vertices[faces[:, k]].astype(np.float64) for k in range(3))
    volume = np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0
    assert volume == pytest.approx(len(p) * (2 * r) ** 3, rel=0.03)


def test_reconstruct_surface_carries_particle_fields(tmp_path):
    """attributes: a constant comes back exactly (a normalised average); a rigid rotation v = w x p comes
    back as w x (vertex) within the kernel's reach; a PLY written with them reads back."""
    r = 0.01
    g = np.arange(-0.2, 0.2 + 1e-9, 2 * r)
    x, y, z = np.meshgrid(g, g, g, indexing="ij")
    p = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    p = p[np.linalg.norm(p, axis=1) < 0.15].astype(np.float32)
    w = np.array([0.0, 2.0, 0.0], np.float32)
    v = np.cross(w, p).astype(np.float32)
    vertices, faces, attrs = eddy.reconstruct_surface(p, radius=r, attributes={"velocity": v, "one": np.ones(len(p))})
    assert set(attrs) == {"velocity", "one"} and attrs["velocity"].shape == vertices.shape
    assert np.abs(attrs["one"] - 1.0).max() < 1e-6
    exact = np.cross(w, vertices)
    # The kernel (radius 4 r) averages the particles behind the surface: about 2 r inward of the vertex.
    assert np.abs(attrs["velocity"] - exact).max() < np.linalg.norm(w) * 4 * r
    assert np.abs(attrs["velocity"] - exact).mean() < np.linalg.norm(w) * 2.5 * r
    path = tmp_path / "sphere.ply"
    eddy.write_mesh(path, vertices, faces, attributes={"velocity": attrs["velocity"]})
    head = path.read_bytes()[:400].decode("latin-1")
    assert "property float vx" in head and "property float vz" in head
    with pytest.raises(ValueError, match="need a .ply"):
        eddy.write_mesh(tmp_path / "sphere.obj", vertices, faces, attributes={"velocity": attrs["velocity"]})
    with pytest.raises(ValueError, match="attribute 'velocity'"):
        eddy.reconstruct_surface(p, radius=r, attributes={"velocity": v[:-1]})


def test_read_particles_reads_a_frame(tmp_path):
    sim = eddy.Simulation(eddy.load_scene("dam_break_3d"), threads=2)
    sim.run(out=tmp_path / "run", steps=2, formats=["vtk"])
    frame = sorted((tmp_path / "run" / "frames").glob("particles_*.vtp"))[-1]
    p = eddy.read_particles(frame)
    order, mine = np.argsort(p["ids"]), np.argsort(sim.ids)
    np.testing.assert_array_equal(p["positions"][order], sim.positions[mine])
    np.testing.assert_array_equal(p["density"][order], sim.density[mine])


def test_shallow_water_fields():
    w = eddy.ShallowWater(eddy.load_scene("shallow_lake_at_rest"), threads=2)
    ny, nx = w.shape
    assert w.depth.shape == w.terrain.shape == w.eta.shape == (ny, nx)
    assert w.velocity.shape == (ny, nx, 2)
    volume = w.volume
    w.step(20)
    assert w.steps == 20
    np.testing.assert_allclose(w.eta, w.terrain + w.depth)
    assert w.volume == pytest.approx(volume, rel=1e-9)  # a lake at rest stays at rest
    assert np.abs(w.velocity).max() < 1e-6


def test_ctrl_c_stops_a_run_cleanly(tmp_path):
    """SIGINT during sim.run(): KeyboardInterrupt in Python, and the folder holds the last frame and a
    summary saying "interrupted", as the command line's Ctrl-C."""
    import signal
    import sys
    import time

    script = tmp_path / "long_run.py"
    script.write_text(
        "import sys, eddy\n"
        "sim = eddy.Simulation(eddy.load_scene('dam_break_3d'), threads=1)\n"
        "print('running', flush=True)\n"
        "try:\n"
        f"    sim.run(out={str(tmp_path / 'out')!r}, until=100.0, formats=['csv'])\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted at step', sim.steps, flush=True)\n"
        "    sys.exit(130)\n")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ))
    assert proc.stdout.readline().strip() == "running"
    # Interrupted once it has written its second frame (it is inside run() and has stepped, however busy
    # the machine is); 120 s at most.
    second = tmp_path / "out" / "frames" / "particles_00001.csv"
    deadline = time.monotonic() + 120
    while not second.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert second.exists(), "the run wrote no second frame in 120 s"
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    assert "interrupted at step" in out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["status"] == "interrupted"


def test_an_installed_package_finds_its_own_scenes(tmp_path):
    """pip installs the bundled scenes inside the package (setup.py): the module reads them from there,
    not from the source tree it was built in."""
    import shutil
    import sys

    pkg = tmp_path / "site" / "eddy"
    shutil.copytree(os.path.dirname(eddy.__file__), pkg)
    shutil.copytree(os.path.join(ROOT, "scenes"), pkg / "scenes")
    code = ("import eddy, os; s = eddy.load_scene('shallow_valley'); "
            "print(os.environ['EDDY_SCENES_DIR']); print(s.source)")
    env = {k: v for k, v in os.environ.items() if k not in ("EDDY_SCENES_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(tmp_path / "site")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=tmp_path)
    scenes_dir, source = r.stdout.split()
    assert scenes_dir == str(pkg / "scenes") and source.startswith(scenes_dir)
