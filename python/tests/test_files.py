"""The files eddy writes for Blender, Houdini and other tools (issue 13, part 2): one up axis for every
geometry file (--up y|z), particle fields interpolated onto surface vertices, no sliver triangles, the
.vdb grids, and the Blender add-on's readers (blender/eddy_blender.py, usable without Blender).

Run by ctest (label python) with EDDY_CLI set to the built `eddy`.
"""
import importlib.util
import json
import os
import subprocess

import numpy as np
import pytest

EDDY = os.environ.get("EDDY_CLI", "eddy")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("eddy_blender", os.path.join(ROOT, "blender", "eddy_blender.py"))
eb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(eb)


def eddy(*args, code=0):
    r = subprocess.run([EDDY, *args], capture_output=True, text=True)
    assert r.returncode == code, r.stderr
    return r


def y_to_z(v):
    """(x, y, z) of a y-up file as a z-up file holds it: (x, -z, y)."""
    return np.stack([v[:, 0], -v[:, 2], v[:, 1]], axis=1)


def farthest(a, b):
    """The largest distance from a point of `a` to its nearest point of `b` and back (m)."""
    def one_way(p, q):
        return max(np.sqrt(((p[i:i + 512, None, :] - q[None, :, :]) ** 2).sum(axis=2).min(axis=1)).max()
                   for i in range(0, len(p), 512))
    return max(one_way(a, b), one_way(b, a))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """mixer_3d (moving walls) for 0.1 s at 30 fps, written y up (VTK, OBJ) and z up (PLY with velocity)."""
    d = tmp_path_factory.mktemp("runs")
    common = ["run", "mixer_3d", "--until", "0.1", "--fps", "30", "-q", "--threads", "2", "--mesh"]
    eddy(*common, "--out", str(d / "y"), "--format", "vtk,ply")
    eddy(*common, "--out", str(d / "z"), "--format", "ply", "--mesh-format", "ply", "--interpolate-attributes",
         "velocity,density", "--up", "z")
    return d / "y", d / "z"


def test_up_z_rotates_every_geometry_file_and_nothing_else(runs):
    y, z = runs
    sy, sz = (json.load(open(r / "summary.json")) for r in runs)
    assert sy["up_axis"] == "y" and sz["up_axis"] == "z"
    assert sy["steps"] == sz["steps"] and sy["max_speed"] == sz["max_speed"]  # the physics is the same
    for k in range(4):
        a = eb.read_particles(str(y / "frames" / f"particles_{k:05d}.vtp"))
        ply = eb.read_particles(str(y / "frames" / f"particles_{k:05d}.ply"))
        b = eb.read_particles(str(z / "frames" / f"particles_{k:05d}.ply"))
        for name in ("position", "velocity", "density", "pressure", "id"):
            assert np.array_equal(a[name], ply[name]), name  # the reader: VTK and PLY agree
        assert np.array_equal(y_to_z(a["position"]), b["position"])
        assert np.array_equal(y_to_z(a["velocity"]), b["velocity"])
        assert np.array_equal(a["id"], b["id"]) and np.array_equal(a["density"], b["density"])
        sa = eb.read_mesh(str(y / "frames" / f"surface_{k:05d}.obj"))
        sb = eb.read_mesh(str(z / "frames" / f"surface_{k:05d}.ply"))
        assert np.array_equal(sa["faces"], sb["faces"])
        assert np.abs(y_to_z(sa["position"]) - sb["position"]).max() < 1e-6  # OBJ keeps 7 digits
        wa = eb.read_mesh(str(y / "frames" / f"walls_{k:05d}.obj"))
        wb = eb.read_mesh(str(z / "frames" / f"walls_{k:05d}.obj"))
        assert np.abs(y_to_z(wa["position"]) - wb["position"]).max() < 1e-6


def test_surface_vertices_carry_the_particles_fields(runs):
    _, z = runs
    for k in range(4):
        p = eb.read_particles(str(z / "frames" / f"particles_{k:05d}.ply"))
        s = eb.read_mesh(str(z / "frames" / f"surface_{k:05d}.ply"))
        assert s["velocity"].shape == s["position"].shape and s["density"].shape == (len(s["position"]),)
        # A normalised average: inside the particles' range, component by component.
        lo, hi = p["velocity"].min(axis=0), p["velocity"].max(axis=0)
        assert np.all(s["velocity"] >= lo - 1e-6) and np.all(s["velocity"] <= hi + 1e-6)
        assert p["density"].min() - 1e-3 <= s["density"].min() and s["density"].max() <= p["density"].max() + 1e-3
        # Each vertex moves as the particles next to it: compare with the nearest particle's velocity.
        d2 = ((s["position"][:, None, :] - p["position"][None, :, :]) ** 2).sum(axis=2)
        nearest = p["velocity"][d2.argmin(axis=1)]
        scale = np.abs(p["velocity"]).max() + 1e-9
        assert np.median(np.abs(s["velocity"] - nearest).max(axis=1)) < 0.5 * scale


def test_mesh_of_a_z_up_run_stays_z_up_or_turns_with_up(runs, tmp_path):
    y, z = runs
    eddy("mesh", str(z / "frames"), "--out", str(tmp_path / "z"), "--format", "ply")
    eddy("mesh", str(z / "frames"), "--out", str(tmp_path / "y"), "--format", "obj", "--up", "y")
    ref = eb.read_mesh(str(y / "frames" / "surface_00002.obj"))
    same = eb.read_mesh(str(tmp_path / "z" / "surface_00002.ply"))
    back = eb.read_mesh(str(tmp_path / "y" / "surface_00002.obj"))
    # Meshed in the z-up frame: the same surface up to rounding, its vertices in another order.
    assert len(same["faces"]) == len(ref["faces"]) == len(back["faces"])
    assert farthest(y_to_z(ref["position"]), same["position"]) < 1e-5
    assert farthest(ref["position"], back["position"]) < 1e-5


def test_shallow_water_surface_is_y_up_by_default(tmp_path):
    eddy("run", "shallow_lake_at_rest", "--steps", "1", "--format", "obj,ply", "-q", "--out", str(tmp_path / "y"))
    eddy("run", "shallow_lake_at_rest", "--steps", "1", "--format", "ply", "-q", "--up", "z", "--out", str(tmp_path / "z"))
    a = eb.read_mesh(str(tmp_path / "y" / "frames" / "surface_00001.obj"))
    p = eb.read_mesh(str(tmp_path / "y" / "frames" / "surface_00001.ply"))
    b = eb.read_mesh(str(tmp_path / "z" / "frames" / "surface_00001.ply"))
    assert np.allclose(a["position"], p["position"], rtol=1e-6, atol=1e-6)  # OBJ keeps 7 digits
    assert np.array_equal(y_to_z(p["position"]), b["position"])
    ext = b["position"].max(axis=0) - b["position"].min(axis=0)
    assert ext[2] < 0.2 * min(ext[0], ext[1])  # the lake lies flat with z up
    assert json.load(open(tmp_path / "y" / "summary.json"))["up_axis"] == "y"


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "dam_break_2d", "--up", "z"], "a 2D scene is written in the x-y plane"),
        (["run", "dam_break_3d", "--mesh", "--interpolate-attributes", "velocity"], "needs --mesh with --mesh-format ply"),
        (["run", "dam_break_3d", "--mesh", "--interpolate-attributes", "speed"], "--interpolate-attributes"),
        (["run", "dam_break_3d", "--up", "x"], "--up"),
        (["run", "shallow_lake_at_rest", "--interpolate-attributes", "velocity"], "is a grid"),
    ],
)
def test_bad_output_options_are_one_line_errors(tmp_path, args, message):
    r = eddy(*args, "--steps", "1", "-q", "--out", str(tmp_path / "o"), code=2)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr


def test_mesh_attributes_need_ply(runs, tmp_path):
    y, _ = runs
    r = eddy("mesh", str(y / "frames" / "particles_00001.vtp"), "--out", str(tmp_path / "s.obj"),
             "--interpolate-attributes", "velocity", code=2)
    assert "OBJ has no per-vertex fields" in r.stderr
    eddy("mesh", str(y / "frames" / "particles_00001.vtp"), "--out", str(tmp_path / "s.ply"),
         "--interpolate-attributes", "velocity,pressure")
    s = eb.read_mesh(str(tmp_path / "s.ply"))
    assert set(s) >= {"position", "faces", "velocity", "pressure"}


def test_default_meshes_pass_open3d_is_watertight(tmp_path):
    """Open3D's strict check (edge- and vertex-manifold, no self-intersecting triangles) on the default
    mesh of dam_break_3d's first frame; plain marching cubes (vertex_margin 0) fails it there: two of its
    slivers' near-coincident vertices make triangles that Open3D finds intersecting. Skipped where Open3D
    is not installed."""
    o3d = pytest.importorskip("open3d", reason="Open3D not installed (apt-get install python3-open3d)")
    eddy("run", "dam_break_3d", "--steps", "1", "--format", "ply", "-q", "--out", str(tmp_path / "run"))
    frame = str(tmp_path / "run" / "frames" / "particles_00000.ply")
    results = {}
    for margin in ("0", "0.01"):
        out = str(tmp_path / f"s{margin}.ply")
        eddy("mesh", frame, "--out", out, "--vertex-margin", margin)
        m = o3d.io.read_triangle_mesh(out)
        results[margin] = (m.is_edge_manifold(), m.is_vertex_manifold(), m.is_watertight())
    assert results == {"0": (True, True, False), "0.01": (True, True, True)}, results


def test_mesh_of_a_run_folder_skips_the_walls(runs, tmp_path):
    """A VTK run folder holds walls_NNNNN.vtp beside the particles: eddy mesh meshes the particles only."""
    y, _ = runs
    assert list((y / "frames").glob("walls_*.vtp"))
    eddy("mesh", str(y / "frames"), "--out", str(tmp_path), "--format", "ply")
    assert sorted(p.name for p in tmp_path.glob("*.ply")) == [f"surface_{k:05d}.ply" for k in range(4)]


def test_own_scene_keeps_its_tank_from_any_folder(tmp_path):
    """Issue 45: a user's scene run by a relative path lost its tank in Blender (summary.json stored the
    relative scene_file and the add-on resolved it against Blender's folder). scene_file is absolute now,
    and the add-on builds the tank from scene_document (the scene as run, --set applied)."""
    scene = {"name": "mine", "dimension": 3, "method": "dfsph", "particle_radius": 0.02, "duration": 0.02,
             "boundaries": [{"shape": "box", "min": [0, 0, 0], "max": [0.4, 0.4, 0.4]}],
             "fluids": [{"shape": "box", "min": [0, 0, 0], "max": [0.2, 0.2, 0.2]}]}
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "mine.json").write_text(json.dumps(scene))
    r = subprocess.run([EDDY, "run", "mine.json", "--out", "out", "-q", "--threads", "2", "--set",
                        "boundaries.0.max=[0.5,0.4,0.4]"], cwd=tmp_path / "work", capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "work" / "out" / "summary.json").read_text())
    assert summary["scene_file"] == str(tmp_path / "work" / "mine.json")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    old = os.getcwd()
    try:
        os.chdir(elsewhere)
        boundaries, why = eb.Run(str(tmp_path / "work" / "out")).scene_boundaries()
        assert why is None and boundaries[0]["max"] == [0.5, 0.4, 0.4]  # as run, --set applied
        meshes = eb.tank_meshes(boundaries)
        assert len(meshes) == 1 and meshes[0][4]  # one container
        # An older summary: a relative scene_file and no scene_document, tried against the run's parent.
        summary.pop("scene_document")
        summary["scene_file"] = "mine.json"
        (tmp_path / "work" / "out" / "summary.json").write_text(json.dumps(summary))
        boundaries, why = eb.Run(str(tmp_path / "work" / "out")).scene_boundaries()
        assert why is None and boundaries[0]["max"] == [0.4, 0.4, 0.4]
    finally:
        os.chdir(old)
