"""The rigid bodies in files (issue 30; eddy/bodies_io.hpp): bodies/body_KK.obj (rest surfaces about the centre
of mass), frames/bodies_NNNNN.vtp (the bodies at their pose, cell array "body", point array "velocity") and
bodies.pvd, read back by VTK's own reader (python3-vtk9, what ParaView uses) and by the Blender add-on's readers
(blender/eddy_blender.py, no Blender needed).

    /usr/bin/python3 bodies_files_test.py EDDY_CLI      (ctest: bodies.files)

Checks, for a 3D tank with a box, a sphere and a cylinder (y up and --up z) and a 2D tank with a box, a circle
and a polygon:
- every rest mesh is closed, oriented outward (positive volume) and centred on the body's centre of mass
  (the volume's centroid at the origin), with the shape's volume (box exact, sphere and cylinder within their
  tessellation's error); 2D bodies are prisms 4 particle radii deep about z = 0;
- every frame's .vtp has points and triangles; each body's points are its rest mesh moved to the pose
  bodies.csv gives (x = p + R(q) r), in the run's up axis; "velocity" is v + w x r; "body" names the body;
- bodies.pvd lists every frame with bodies.csv's times, also after a resume (the same bits as the run that
  carried on), and a new run without bodies leaves no body files behind;
- the add-on's keys (location, rotation_quaternion in Blender's z up) put the rest meshes where the .vtp is.
Exit code 1 on the first failure; 77 (skipped) without VTK's Python module.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "blender"))
import eddy_blender as eb  # noqa: E402

try:
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy
except ImportError:
    print("bodies.files: skipped: VTK's Python module is not installed (apt install python3-vtk9)")
    sys.exit(77)

EDDY = sys.argv[1]
R = 0.02  # particle radius of the scenes

SCENE_3D = {
    "name": "bodies_files_3d", "dimension": 3, "method": "dfsph", "particle_radius": R,
    "gravity": [0, -9.81, 0], "duration": 0.2, "output": {"fps": 20, "formats": ["csv"]},
    "boundaries": [{"shape": "box", "min": [0, 0, 0], "max": [0.6, 0.5, 0.6]}],
    "bodies": [
        {"shape": "box", "min": [0.15, 0.2, 0.15], "max": [0.35, 0.3, 0.3], "density": 500, "angular_velocity": [0, 2, 1]},
        {"shape": "sphere", "center": [0.45, 0.35, 0.45], "radius": 0.07, "density": 300, "velocity": [0.2, 0, 0]},
        {"shape": "cylinder", "center": [0.45, 0.3, 0.15], "radius": 0.05, "height": 0.12, "axis": [1, 0, 0],
         "density": 400}],
    "fluids": [{"shape": "box", "min": [0, 0, 0], "max": [0.6, 0.16, 0.6]}],
}
SCENE_2D = {
    "name": "bodies_files_2d", "dimension": 2, "method": "wcsph", "particle_radius": R / 2,
    "gravity": [0, -9.81], "duration": 0.2, "output": {"fps": 20, "formats": ["vtk"]},
    "boundaries": [{"shape": "box", "min": [0, 0], "max": [1.0, 0.6]}],
    "bodies": [
        {"shape": "box", "min": [0.1, 0.3], "max": [0.3, 0.4], "density": 500, "angular_velocity": 3},
        {"shape": "circle", "center": [0.5, 0.4], "radius": 0.06, "density": 400},
        {"shape": "polygon", "points": [[0.7, 0.3], [0.9, 0.3], [0.9, 0.45], [0.8, 0.38], [0.7, 0.45]],
         "density": 600}],
    "fluids": [{"shape": "box", "min": [0, 0], "max": [1.0, 0.2]}],
}


def eddy(*args):
    r = subprocess.run([EDDY, *args], capture_output=True, text=True)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


def check(cond, *what):
    if not cond:
        raise AssertionError(" ".join(str(w) for w in what))


def rotation(q):
    """Rotation matrix of unit quaternions (..., 4) (w, x, y, z)."""
    w, x, y, z = (q[..., i] for i in range(4))
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                     np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                     np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)


def y_to_z(v):
    return np.stack([v[:, 0], -v[:, 2], v[:, 1]], axis=1)


def z_to_y(v):
    return np.stack([v[:, 0], v[:, 2], -v[:, 1]], axis=1)


def volume_and_centroid(p, f):
    """Signed volume and volume centroid of a closed triangle mesh (divergence theorem)."""
    a, b, c = p[f[:, 0]].astype(np.float64), p[f[:, 1]].astype(np.float64), p[f[:, 2]].astype(np.float64)
    v6 = np.einsum("ij,ij->i", a, np.cross(b, c))
    vol = v6.sum() / 6.0
    return vol, ((a + b + c) * v6[:, None]).sum(axis=0) / (24.0 * vol)


def closed_and_oriented(f):
    """Every directed edge once, and its reverse once: closed, consistently oriented."""
    edges = {}
    for t in f:
        for i in range(3):
            e = (int(t[i]), int(t[(i + 1) % 3]))
            edges[e] = edges.get(e, 0) + 1
    return all(n == 1 for n in edges.values()) and all((b, a) in edges for a, b in edges)


def read_vtp(path):
    r = vtk.vtkXMLPolyDataReader()
    r.SetFileName(path)
    r.Update()
    o = r.GetOutput()
    check(o.GetNumberOfPoints() > 0 and o.GetNumberOfPolys() > 0, path, "has no points or no triangles")
    pts = vtk_to_numpy(o.GetPoints().GetData()).astype(np.float64)
    vel = o.GetPointData().GetArray("velocity")
    body = o.GetCellData().GetArray("body")
    check(vel is not None and vel.GetNumberOfComponents() == 3, path, "has no point array velocity")
    check(body is not None, path, "has no cell array body")
    conn = vtk_to_numpy(o.GetPolys().GetConnectivityArray()).reshape(-1, 3)
    return pts, vtk_to_numpy(vel).astype(np.float64), vtk_to_numpy(body), conn


def check_run(out, scene, up):
    """The files of one run against each other and the scene; returns the rest meshes."""
    n = len(scene["bodies"])
    summary = json.load(open(os.path.join(out, "summary.json")))
    check(summary.get("up_axis", "y") == up, "up_axis", summary.get("up_axis"))
    run = eb.Run(out)
    check(len(run.bodies) == n and run.bodies_csv, out, "bodies", run.bodies)
    poses = eb.read_bodies_csv(run.bodies_csv)
    frames = len(poses["time"])
    check(frames == 5 and poses["position"].shape == (frames, n, 3), "bodies.csv frames", poses["position"].shape)
    rest = []
    for k, path in run.bodies:
        m = eb.read_mesh(path)
        p = m["position"].astype(np.float64)
        p = z_to_y(p) if up == "z" else p  # the world's axes (y up)
        f = m["faces"]
        check(len(p) > 0 and len(f) > 0 and closed_and_oriented(f), path, "is not a closed oriented mesh")
        vol, centroid = volume_and_centroid(p, f)
        b = scene["bodies"][k]
        if scene["dimension"] == 2:
            depth = p[:, 2].max() - p[:, 2].min()
            check(abs(depth - 4 * scene["particle_radius"]) < 1e-6 and abs(p[:, 2].mean()) < 1e-6, path, "depth", depth)
            vol /= depth  # the area
            exact = {"box": lambda: np.prod(np.subtract(b.get("max", [0, 0]), b.get("min", [0, 0]))),
                     "circle": lambda: np.pi * b["radius"] ** 2,
                     "polygon": lambda: 0.5 * abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1)
                                                     in zip(b["points"], b["points"][1:] + b["points"][:1])))}[b["shape"]]()
            tol = {"box": 1e-6, "circle": 0.005, "polygon": 1e-6}[b["shape"]]
        else:
            exact = {"box": lambda: np.prod(np.subtract(b.get("max", [0] * 3), b.get("min", [0] * 3))),
                     "sphere": lambda: 4 / 3 * np.pi * b["radius"] ** 3,
                     "cylinder": lambda: np.pi * b["radius"] ** 2 * b["height"]}[b["shape"]]()
            tol = {"box": 1e-6, "sphere": 0.02, "cylinder": 0.01}[b["shape"]]
        check(vol > 0 and abs(vol / exact - 1) < tol, path, b["shape"], "volume", vol, "expected", exact)
        check(np.abs(centroid).max() < 2e-3 * np.cbrt(abs(vol)) + 1e-6, path, "centroid", centroid, "is not the origin")
        rest.append((p, f))
    # Every frame: the .vtp at the pose bodies.csv gives.
    for i in range(frames):
        name = f"frames/bodies_{i:05d}.vtp"
        pts, vel, body, conn = read_vtp(os.path.join(out, name))
        if up == "z":
            pts, vel = z_to_y(pts), z_to_y(vel)
        check(sorted(set(body.tolist())) == list(range(n)), name, "body ids", set(body.tolist()))
        start = 0
        for k, (p, f) in enumerate(rest):
            cells = np.nonzero(body == k)[0]
            check(len(cells) == len(f), name, "body", k, "has", len(cells), "triangles, its rest mesh", len(f))
            ids = np.arange(start, start + len(p))
            check(np.array_equal(conn[cells] - start, f), name, "body", k, "triangles differ from its rest mesh's")
            Rk = rotation(poses["orientation"][i, k])
            r = p @ Rk.T
            want = poses["position"][i, k] + r
            err = np.abs(pts[ids] - want).max()
            check(err < 2e-6, name, "body", k, "off its pose by", err)
            v = poses["velocity"][i, k] + np.cross(poses["angular_velocity"][i, k], r)
            check(np.abs(vel[ids] - v).max() < 1e-5 * (1 + np.abs(v).max()), name, "body", k, "velocity")
            start += len(p)
        check(start == len(pts), name, "has", len(pts), "points; the rest meshes", start)
    # The timesteps of bodies.pvd are bodies.csv's times, in order.
    import xml.etree.ElementTree as ET
    sets = ET.parse(os.path.join(out, "bodies.pvd")).getroot().iter("DataSet")
    listed = [(float(d.get("timestep")), d.get("file")) for d in sets]
    check([f for _, f in listed] == [f"frames/bodies_{i:05d}.vtp" for i in range(frames)], "bodies.pvd", listed)
    check(np.allclose([t for t, _ in listed], poses["time"], rtol=0, atol=1e-12), "bodies.pvd times", listed)
    # The add-on's keys, applied to the rest meshes in Blender's axes, land on the .vtp's points.
    loc, quat = eb.body_keys(poses, run.up_axis)
    check(np.all(np.sum(quat[1:] * quat[:-1], axis=2) >= 0), "the keys' quaternions flip sign between frames")
    for i in (0, frames - 1):
        pts, _, _, _ = read_vtp(os.path.join(out, f"frames/bodies_{i:05d}.vtp"))
        blender_pts = eb.to_blender_axes(pts.astype(np.float32), up)
        start = 0
        for k, path_k in run.bodies:
            m = eb.read_mesh(path_k)["position"]
            local = eb.to_blender_axes(m, up).astype(np.float64)
            placed = loc[i, k] + local @ rotation(quat[i, k]).T
            err = np.abs(placed - blender_pts[start:start + len(m)]).max()
            check(err < 2e-6, "add-on keys: body", k, "frame", i, "off by", err)
            start += len(m)
    return rest


def main():
    tmp = tempfile.mkdtemp(prefix="eddy-bodies-files-")
    s3, s2 = os.path.join(tmp, "s3.json"), os.path.join(tmp, "s2.json")
    json.dump(SCENE_3D, open(s3, "w"))
    json.dump(SCENE_2D, open(s2, "w"))
    y, z, two = (os.path.join(tmp, d) for d in ("y", "z", "two"))
    eddy("run", s3, "-q", "--threads", "1", "--out", y)
    eddy("run", s3, "-q", "--threads", "1", "--out", z, "--up", "z")
    eddy("run", s2, "-q", "--threads", "1", "--out", two)
    ry = check_run(y, SCENE_3D, "y")
    rz = check_run(z, SCENE_3D, "z")
    for (py, fy), (pz, fz) in zip(ry, rz):  # the same rest meshes, turned (OBJ keeps 7 digits)
        check(np.array_equal(fy, fz) and np.abs(py - pz).max() < 1e-6, "--up z rest meshes differ")
    check_run(two, SCENE_2D, "y")
    # The cylinder is a model, but a body's: Blender gets it as its own keyed object, not in the walls' OBJ.
    walls_obj = [n for n in os.listdir(os.path.join(y, "frames")) if n.startswith("walls") and n.endswith(".obj")]
    check(not walls_obj, "the walls' OBJ holds the bodies' models", walls_obj)
    # Something moved: the box spins, the sphere drifts.
    poses = eb.read_bodies_csv(os.path.join(y, "bodies.csv"))
    check(abs(poses["orientation"][-1, 0, 0]) < 0.9999 and poses["position"][-1, 1, 0] > 0.45 + 0.01,
          "the bodies did not move", poses["orientation"][-1, 0], poses["position"][-1, 1])

    # A resumed run lists every frame in bodies.pvd and writes the same bits as the run that carried on.
    res = os.path.join(tmp, "resumed")
    eddy("run", s3, "-q", "--threads", "1", "--out", res, "--until", "0.1")
    eddy("run", "--resume", res, "-q", "--threads", "1", "--until", "0.2")
    check_run(res, SCENE_3D, "y")
    for i in range(5):
        a = open(os.path.join(y, f"frames/bodies_{i:05d}.vtp"), "rb").read()
        b = open(os.path.join(res, f"frames/bodies_{i:05d}.vtp"), "rb").read()
        check(a == b, f"frames/bodies_{i:05d}.vtp differs after a resume")
    check(open(os.path.join(y, "bodies.pvd")).read() == open(os.path.join(res, "bodies.pvd")).read(),
          "bodies.pvd differs after a resume")

    # A new run without bodies in the same folder leaves none of the old ones' files.
    no_bodies = dict(SCENE_3D, bodies=[])
    s0 = os.path.join(tmp, "s0.json")
    json.dump(no_bodies, open(s0, "w"))
    eddy("run", s0, "-q", "--threads", "1", "--out", y, "--until", "0.05")
    left = [n for n in os.listdir(os.path.join(y, "frames")) if n.startswith("bodies_")]
    left += [n for n in os.listdir(os.path.join(y, "bodies")) if n.startswith("body_")]
    left += [n for n in ("bodies.pvd", "bodies.csv") if os.path.exists(os.path.join(y, n))]
    check(not left, "stale body files", left)
    check(eb.Run(y).bodies == [], "the add-on still sees bodies")
    print(f"bodies.files: OK ({tmp})")


try:
    main()
except AssertionError as e:
    print(f"bodies.files: FAILED: {e}")
    sys.exit(1)
