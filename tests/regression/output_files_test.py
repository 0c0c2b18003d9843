"""Every output file of every bundled scene, opened by VTK's own readers (python3-vtk9, what ParaView uses), so that
a file ParaView cannot read (issue 31: walls.vtp whose two pieces carried different point arrays read as 0 points)
cannot come back unseen.

    /usr/bin/python3 output_files_test.py EDDY_CLI [SCENES_DIR]      (ctest: files.vtk_readers)

Runs every scenes/*.json for three steps (frames 0 and 1: the first and the last), particle scenes with
--format vtk,csv,ply and again with --wall-pressure, shallow-water scenes with --format vti,csv,obj,ply; then a few
runs with --mesh (OBJ, and PLY with --interpolate-attributes), --render, --pieces and --up z. Every file of every
run folder is opened; a file of a kind the test does not know fails it (extend the test with the new kind):
- particles_NNNNN.vtp (vtkXMLPolyDataReader), .pvtp (vtkXMLPPolyDataReader) and their _pRRRR.vtp pieces: as many
  points and vertices as the frame's CSV has rows (the summary's particle count when there is no CSV), point
  arrays velocity (3), density, pressure, id; the positions and ids the CSV's; not empty unless the scene has
  emitters;
- particles_NNNNN.ply (vtkPLYReader, and the header's properties x y z vx vy vz density pressure id): the CSV's
  count and positions; particles_NNNNN.csv: header id,x,y[,z],vx,vy[,vz],density,pressure, finite values;
- walls.vtp / walls_NNNNN.vtp: every piece read (points = the sum of the pieces' NumberOfPoints, the first piece
  the summary's boundary_particles as vertices), point arrays velocity, psi, object (and pressure with
  --wall-pressure) on every point; a scene with a mesh or polygon wall has its cells; the models' velocities
  are zero when nothing moves and a rigid motion with their object's particles when it moves;
- walls*.obj, bodies/body_KK.obj, surface_NNNNN.obj (vtkOBJReader), surface_NNNNN.ply (vtkPLYReader): points
  and cells (triangles in 3D, lines in 2D; a 2D PLY contour's "edge" elements, which vtkPLYReader skips, counted
  from its header: ParaView shows it as points, the OBJ as lines); a PLY surface has the attributes asked for;
- bodies_NNNNN.vtp: points, triangles, point array velocity, cell array body; one body_KK.obj per body;
- grid_NNNNN.vti (vtkXMLImageDataReader), .pvti (vtkXMLPImageDataReader) and their pieces: the summary's cells,
  cell arrays terrain, depth, eta, velocity, ink (and displaced with bodies), a .pvti naming every array of its
  pieces; grid_NNNNN.csv: one row a cell;
- every .pvd: XML whose DataSet files all open as above, one per frame, at the summary's frame times (so
  increasing);
- forces.csv, bodies.csv: their headers, finite values at frame times (bodies.csv: one row per body and frame);
- PNGs (vtkPNGReader): not empty; summary.json and run.json: JSON; every file the summary lists exists.
Any error or warning VTK's readers report fails the test. A defect found and reported but not yet fixed is listed
in KNOWN (its check passes over it; the test fails once it is gone, to have the entry removed). About 40 s on
2 cores. Exit code 1 on the first failure; 77 (skipped) without VTK's Python module.
"""
import csv
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

import numpy as np

try:
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy
except ImportError:
    print("files.vtk_readers: skipped: VTK's Python module is not installed (apt install python3-vtk9)")
    sys.exit(77)

EDDY = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
SCENES = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.dirname(HERE)), "scenes")
# Three steps at the scene's own fps: frame 0 and the last. (Not --fps 1e6 for a frame every step: its 1 us steps
# make ducks_3d diverge, the first PBF step's push off a body divided by the step.)
BRIEF = ["--steps", "3", "-q", "--threads", "1"]

# Defects found by this test and reported, not yet fixed, by run label: the check that finds one passes over it
# while it is there, and the test fails once it is gone, so that the entry is removed and the check holds again.
KNOWN = {}


def check(cond, *what):
    if not cond:
        raise AssertionError(" ".join(str(w) for w in what))


# VTK reports a file it cannot read (an array too short, a piece it skips) as an error and returns what it could:
# every message counts, not only the point counts.
vtk.vtkLogger.SetStderrVerbosity(vtk.vtkLogger.VERBOSITY_OFF)


def read(reader, path):
    window = vtk.vtkStringOutputWindow()
    vtk.vtkOutputWindow.SetInstance(window)
    r = reader()
    r.SetFileName(path)
    r.Update()
    said = window.GetOutput().strip()
    check(not said, path, ":", type(r).__name__, "says:", said[:600])
    return r.GetOutput()


def point_arrays(o):
    pd = o.GetPointData()
    return {pd.GetArrayName(i): pd.GetArray(i) for i in range(pd.GetNumberOfArrays())}


def cell_arrays(o):
    cd = o.GetCellData()
    return {cd.GetArrayName(i): cd.GetArray(i) for i in range(cd.GetNumberOfArrays())}


def has_arrays(path, arrays, n, wanted):
    """Every wanted array (name: components) with n tuples."""
    for name, comps in wanted.items():
        a = arrays.get(name)
        check(a is not None, path, "has no array", name, "(has", sorted(arrays), ")")
        check(a.GetNumberOfComponents() == comps, path, name, "has", a.GetNumberOfComponents(), "components, not", comps)
        check(a.GetNumberOfTuples() == n, path, name, "has", a.GetNumberOfTuples(), "tuples, not", n)
        v = vtk_to_numpy(a)
        check(v.dtype.kind in "iu" or np.all(np.isfinite(v)), path, name, "is not finite")


def ply_header(path):
    head = open(path, "rb").read(4096).split(b"end_header")[0].decode("ascii").split("\n")
    elements, current = {}, None
    for line in head:
        w = line.split()
        if w[:1] == ["element"]:
            current = w[1]
            elements[current] = [int(w[2]), []]
        elif w[:1] == ["property"] and current:
            elements[current][1].append(w[-1])
    return elements


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    check(rows, path, "is empty")
    header, body = rows[0], rows[1:]
    values = np.array(body, dtype=np.float64).reshape(len(body), len(header))
    check(np.all(np.isfinite(values)), path, "has values that are not finite")
    return header, values


class Run:
    """One run's folder against its summary and scene."""

    def __init__(self, scene_path, label, out, flags):
        self.out, self.flags, self.label = out, flags, label
        self.known_seen = False
        self.scene = json.load(open(scene_path))
        self.summary = json.load(open(os.path.join(out, "summary.json")))
        self.dim = self.scene["dimension"]
        self.shallow = self.scene.get("method") == "shallow_water"
        self.times = [f["time"] for f in self.summary["frames"]]
        check(len(self.times) == 2, out, "frames", len(self.times), "(expected the first and the last)")
        self.opened = {}  # relative path -> kind
        self.moving = False

    def path(self, rel):
        return os.path.join(self.out, rel)

    # ---- particles
    def frame_csv(self, index):
        p = self.path(f"frames/particles_{index:05d}.csv")
        if not os.path.exists(p):
            return None
        header, values = read_csv(p)
        axes = "xyz"[:self.dim]
        want = ["id", *axes, *("v" + a for a in axes), "density", "pressure"]
        check(header == want, p, "header", header, "expected", want)
        self.opened[os.path.relpath(p, self.out)] = "particles csv"
        return values

    def particle_count(self, index):
        rows = self.frame_csv(index)
        if rows is not None:
            return len(rows), rows
        return self.summary["particles"], None

    def check_particles_vtp(self, rel, index, reader=vtk.vtkXMLPolyDataReader):
        p = self.path(rel)
        o = read(reader, p)
        n, rows = self.particle_count(index)
        check(n > 0 or self.scene.get("emitters"), rel, "the frame has no particles")  # emitters may start empty
        check(o.GetNumberOfPoints() == n, rel, "has", o.GetNumberOfPoints(), "points; the frame has", n, "particles")
        check(o.GetNumberOfVerts() == n, rel, "has", o.GetNumberOfVerts(), "vertices for", n, "points")
        a = point_arrays(o)
        has_arrays(rel, a, n, {"velocity": 3, "density": 1, "pressure": 1, "id": 1})
        ids = vtk_to_numpy(a["id"])
        check(len(np.unique(ids)) == n, rel, "ids are not unique")
        if rows is not None and n > 0:
            x = vtk_to_numpy(o.GetPoints().GetData()).astype(np.float64)
            order = np.argsort(ids)
            csv_order = np.argsort(rows[:, 0])
            check(np.array_equal(ids[order], rows[csv_order, 0]), rel, "ids differ from the CSV's")
            err = np.abs(x[order, :self.dim] - rows[csv_order, 1:1 + self.dim]).max()
            check(err <= 1e-6 * (1 + np.abs(x).max()), rel, "positions differ from the CSV's by", err)
        return n

    def check_particles_ply(self, rel, index):
        p = self.path(rel)
        o = read(vtk.vtkPLYReader, p)
        n, rows = self.particle_count(index)
        check(o.GetNumberOfPoints() == n, rel, "has", o.GetNumberOfPoints(), "points; the frame has", n, "particles")
        h = ply_header(p)
        check(h.get("vertex", [0, []])[1] == ["x", "y", "z", "vx", "vy", "vz", "density", "pressure", "id"], rel,
              "properties", h)
        if rows is not None and n > 0:  # the PLY has no id the reader keeps: compare as sorted point sets
            x = vtk_to_numpy(o.GetPoints().GetData()).astype(np.float64)[:, :self.dim]
            a = x[np.lexsort(x.T[::-1])]
            c = rows[:, 1:1 + self.dim]
            b = c[np.lexsort(c.T[::-1])]
            check(np.abs(a - b).max() <= 1e-6 * (1 + np.abs(a).max()), rel, "positions differ from the CSV's")

    # ---- walls
    def has_models(self):
        return any(b.get("shape") in ("mesh", "polygon") for b in self.scene.get("boundaries", []))

    def check_walls_vtp(self, rel):
        p = self.path(rel)
        o = read(vtk.vtkXMLPolyDataReader, p)
        head = open(p, "rb").read().split(b"<AppendedData")[0].decode("ascii")  # the raw data is no XML
        counts = [int(c) for c in re.findall(r'<Piece NumberOfPoints="(\d+)"', head)]
        nb = self.summary["boundary_particles"]
        check(counts and counts[0] == nb, rel, "piece 0 has", counts, "points; the summary", nb, "wall particles")
        n = sum(counts)
        check(o.GetNumberOfPoints() == n and n > 0, rel, "reads as", o.GetNumberOfPoints(), "points; its pieces hold",
              counts)
        check(o.GetNumberOfVerts() == nb, rel, "has", o.GetNumberOfVerts(), "vertices for", nb, "wall particles")
        cells = o.GetNumberOfLines() if self.dim == 2 else o.GetNumberOfPolys()
        if self.has_models():
            check(cells > 0 and n > nb, rel, "the scene's models are missing")
        a = point_arrays(o)
        want = {"velocity": 3, "psi": 1, "object": 1}
        if "--wall-pressure" in self.flags:
            want["pressure"] = 1
        has_arrays(rel, a, n, want)
        x = vtk_to_numpy(o.GetPoints().GetData()).astype(np.float64)
        v = vtk_to_numpy(a["velocity"]).astype(np.float64)
        obj = vtk_to_numpy(a["object"])
        psi = vtk_to_numpy(a["psi"])
        check(np.all(psi >= 0), rel, "psi < 0")
        # The models' vertices move with their object's particles: (v_m - v_p) . (x_m - x_p) = 0 for a rigid motion.
        for k in np.unique(obj[nb:]):
            m = nb + np.nonzero(obj[nb:] == k)[0]
            parts = np.nonzero(obj[:nb] == k)[0]
            if len(parts) == 0:
                continue
            if not np.any(v[parts]):
                check(not np.any(v[m]), rel, "object", k, "is at rest but its model's vertices move")
                continue
            self.moving = True
            pick = parts[np.linspace(0, len(parts) - 1, min(len(parts), 200)).astype(int)]
            d = x[m][:, None, :] - x[pick][None, :, :]
            dv = v[m][:, None, :] - v[pick][None, :, :]
            # The particles' velocities are central differences of float positions over 0.2 ms: noise up to
            # 6e-4 m/s at 1 m from the origin, all there is for a body barely moving yet.
            tol = np.linalg.norm(d, axis=-1) * (2e-3 * np.abs(v[parts]).max() + 2e-3) + 1e-12
            err = (np.abs((d * dv).sum(-1)) / tol).max()
            check(err < 1, rel, "object", k, "model velocities are not its particles' rigid motion:", err)
            check(np.any(v[m]), rel, "object", k, "moves but its model's vertices have zero velocity")

    # ---- meshes
    def check_mesh(self, rel, kind):
        p = self.path(rel)
        reader = vtk.vtkPLYReader if rel.endswith(".ply") else vtk.vtkXMLPolyDataReader if rel.endswith(".vtp") else vtk.vtkOBJReader
        o = read(reader, p)
        cells = o.GetNumberOfPolys() + o.GetNumberOfLines()
        if rel.endswith(".ply") and "face" not in ply_header(p):  # 2D contours: "edge" elements, which vtkPLYReader skips
            cells = ply_header(p).get("edge", [0])[0]
        check(o.GetNumberOfPoints() > 0 and cells > 0, rel, "is empty:", o.GetNumberOfPoints(), "points", cells, "cells")
        if self.dim == 3 or self.shallow:
            check(o.GetNumberOfPolys() > 0, rel, "has no triangles")
        if rel.endswith(".vtp"):  # surface.pvd's copy of an OBJ or PLY surface: the same points and cells
            for ext, twin_reader in ((".obj", vtk.vtkOBJReader), (".ply", vtk.vtkPLYReader)):
                twin = rel[:-4] + ext
                if os.path.exists(self.path(twin)):
                    t = read(twin_reader, self.path(twin))
                    check(t.GetNumberOfPoints() == o.GetNumberOfPoints(), rel, "has", o.GetNumberOfPoints(),
                          "points,", twin, t.GetNumberOfPoints())
            check("Normals" in point_arrays(o), rel, "has no Normals")
        if rel.endswith(".ply"):
            h = ply_header(p)
            check(h["vertex"][0] == o.GetNumberOfPoints(), rel, "header and reader disagree")
            if "--interpolate-attributes" in self.flags:
                asked = self.flags[self.flags.index("--interpolate-attributes") + 1].split(",")
                names = {"velocity": ["vx", "vy", "vz"], "density": ["density"], "pressure": ["pressure"]}
                for a in asked:
                    check(all(q in h["vertex"][1] for q in names[a]), rel, "lacks", a, h["vertex"][1])

    def check_bodies_vtp(self, rel):
        o = read(vtk.vtkXMLPolyDataReader, self.path(rel))
        n = o.GetNumberOfPoints()
        check(n > 0 and o.GetNumberOfPolys() > 0, rel, "has no points or triangles")
        has_arrays(rel, point_arrays(o), n, {"velocity": 3})
        check("body" in cell_arrays(o), rel, "has no cell array body")

    # ---- shallow water
    def cell_count(self):
        c = self.summary["cells"]
        return int(np.prod(c))

    def check_grid(self, rel, reader):
        o = read(reader, self.path(rel))
        n = self.cell_count()
        check(o.GetNumberOfCells() == n, rel, "has", o.GetNumberOfCells(), "cells; the summary", self.summary["cells"])
        want = {"terrain": 1, "depth": 1, "eta": 1, "velocity": 3, "ink": 1}
        if self.scene.get("bodies"):
            want["displaced"] = 1
        has_arrays(rel, cell_arrays(o), n, want)

    def check_grid_csv(self, rel):
        header, values = read_csv(self.path(rel))
        check(header == ["i", "j", "x", "y", "terrain", "depth", "u", "v", "ink"], rel, "header", header)
        check(len(values) == self.cell_count(), rel, "has", len(values), "rows for", self.cell_count(), "cells")

    # ---- collections and tables
    def check_pvd(self, rel):
        sets = list(ET.parse(self.path(rel)).getroot().iter("DataSet"))
        times = [float(d.get("timestep")) for d in sets]
        check(len(times) == len(self.times) and np.allclose(times, self.times, rtol=1e-12, atol=0), rel,
              "times", times, "are not the frames'", self.times)
        check(all(b > a for a, b in zip(times, times[1:])), rel, "times do not increase", times)
        for d in sets:
            f = d.get("file")
            check(os.path.exists(self.path(f)), rel, "lists", f, "which does not exist")
            self.check_file(f)

    def check_table(self, rel, header_want, per_frame=None):
        header, values = read_csv(self.path(rel))
        check(header == header_want, rel, "header", header)
        check(len(values) > 0, rel, "has no rows")
        check(all(np.isclose(t, self.times, rtol=1e-9, atol=1e-15).any() for t in values[:, 0]), rel,
              "has times not a frame's")
        if per_frame is not None:
            check(len(values) == per_frame * len(self.times), rel, "has", len(values), "rows, not", per_frame,
                  "per frame")

    # ---- dispatch
    def check_file(self, rel):
        if rel in self.opened:
            return
        name = os.path.basename(rel)
        kind = None
        if m := re.fullmatch(r"frames/particles_(\d+)\.vtp", rel):
            kind = "particles vtp"
            self.check_particles_vtp(rel, int(m[1]))
        elif m := re.fullmatch(r"frames/particles_(\d+)\.pvtp", rel):
            kind = "particles pvtp"
            n = self.check_particles_vtp(rel, int(m[1]), vtk.vtkXMLPPolyDataReader)
            pieces = [pc.get("Source") for pc in ET.parse(self.path(rel)).getroot().iter("Piece")]
            total = 0
            for src in pieces:
                piece = os.path.join(os.path.dirname(rel), src)
                o = read(vtk.vtkXMLPolyDataReader, self.path(piece))
                has_arrays(piece, point_arrays(o), o.GetNumberOfPoints(), {"velocity": 3, "density": 1, "pressure": 1,
                                                                           "id": 1})
                total += o.GetNumberOfPoints()
                self.opened[piece] = "particles vtp piece"
            check(total == n, rel, "pieces hold", total, "points, not", n)
        elif re.fullmatch(r"frames/particles_\d+_p\d+\.vtp", rel):
            pvtp = re.sub(r"_p\d+\.vtp$", ".pvtp", rel)
            check(os.path.exists(self.path(pvtp)), rel, "is a piece no .pvtp lists")
            self.check_file(pvtp)
            check(rel in self.opened, rel, "is not listed by", pvtp)
            return
        elif m := re.fullmatch(r"frames/particles_(\d+)\.ply", rel):
            kind = "particles ply"
            self.check_particles_ply(rel, int(m[1]))
        elif m := re.fullmatch(r"frames/particles_(\d+)\.csv", rel):
            kind = "particles csv"
            self.frame_csv(int(m[1]))
        elif re.fullmatch(r"frames/walls(_\d+)?\.vtp", rel):
            kind = "walls vtp"
            self.check_walls_vtp(rel)
        elif re.fullmatch(r"frames/walls(_\d+)?\.obj", rel):
            kind = "walls obj"
            check(self.has_models(), rel, "written for a scene without models")
            self.check_mesh(rel, "walls")
        elif re.fullmatch(r"frames/surface_\d+\.(obj|ply|vtp)", rel):
            kind = "surface " + rel[-3:]
            self.check_mesh(rel, "surface")
        elif re.fullmatch(r"frames/bodies_\d+\.vtp", rel):
            kind = "bodies vtp"
            self.check_bodies_vtp(rel)
        elif re.fullmatch(r"bodies/body_\d+\.obj", rel):
            kind = "body obj"
            self.check_mesh(rel, "body")
        elif re.fullmatch(r"frames/grid_\d+\.vti", rel):
            kind = "grid vti"
            self.check_grid(rel, vtk.vtkXMLImageDataReader)
        elif re.fullmatch(r"frames/grid_\d+\.pvti", rel):
            kind = "grid pvti"
            cells = 0
            for pc in ET.parse(self.path(rel)).getroot().iter("Piece"):
                piece = os.path.join(os.path.dirname(rel), pc.get("Source"))
                o = read(vtk.vtkXMLImageDataReader, self.path(piece))
                cells += o.GetNumberOfCells()
                self.opened[piece] = "grid vti piece"
            check(cells == self.cell_count(), rel, "pieces hold", cells, "cells")
            # The parallel file must name every array of its pieces, or ParaView drops the ones it does not.
            whole = sorted(cell_arrays(read(vtk.vtkXMLPImageDataReader, self.path(rel))))
            if whole != sorted(cell_arrays(o)) and self.label in KNOWN:
                self.known_seen = True
            else:
                check(whole == sorted(cell_arrays(o)), rel, "has the arrays", whole, "its pieces",
                      sorted(cell_arrays(o)))
                self.check_grid(rel, vtk.vtkXMLPImageDataReader)
        elif re.fullmatch(r"frames/grid_\d+_p\d+\.vti", rel):
            pvti = re.sub(r"_p\d+\.vti$", ".pvti", rel)
            check(os.path.exists(self.path(pvti)), rel, "is a piece no .pvti lists")
            self.check_file(pvti)
            check(rel in self.opened, rel, "is not listed by", pvti)
            return
        elif re.fullmatch(r"frames/grid_\d+\.csv", rel):
            kind = "grid csv"
            self.check_grid_csv(rel)
        elif rel.endswith(".pvd") and "/" not in rel:
            kind = "pvd"
            self.opened[rel] = kind  # before its data sets, which are opened through it
            self.check_pvd(rel)
        elif rel == "forces.csv":
            kind = "forces csv"
            self.check_table(rel, ["time", "object", "fx", "fy", "fz", "tx", "ty", "tz"])
        elif rel == "bodies.csv":
            kind = "bodies csv"
            self.check_table(rel, "time,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,fx,fy,fz,tx,ty,tz".split(","),
                             len(self.scene.get("bodies", [])))
        elif name.endswith(".png"):
            kind = "png"
            o = read(vtk.vtkPNGReader, self.path(rel))
            d = o.GetDimensions()
            check(d[0] > 1 and d[1] > 1, rel, "is an empty picture", d)
        elif rel in ("summary.json", "run.json"):
            kind = "json"
            json.load(open(self.path(rel)))
        elif rel == "checkpoint.eddy":
            kind = "checkpoint"  # eddy's own format (tests/regression/checkpoint_test.cpp)
            check(os.path.getsize(self.path(rel)) > 0, rel, "is empty")
        else:
            raise AssertionError(f"{self.out}: {rel}: an output file of a kind this test does not know; "
                                 "teach tests/regression/output_files_test.py to open it")
        self.opened[rel] = kind

    def check_all(self):
        for f in self.summary["frames"]:
            for rel in f.get("files", []):
                check(os.path.exists(self.path(rel)), self.out, "summary lists", rel, "which does not exist")
        files = sorted(os.path.relpath(os.path.join(d, f), self.out) for d, _, fs in os.walk(self.out) for f in fs)
        for rel in files:  # the collections first: their data sets are opened through them
            if rel.endswith(".pvd"):
                self.check_file(rel)
        for rel in files:
            self.check_file(rel)
        if self.scene.get("bodies") and not self.shallow:
            objs = [r for r in files if r.startswith("bodies/body_")]
            check(len(objs) == len(self.scene["bodies"]), self.out, "has", len(objs), "body meshes for",
                  len(self.scene["bodies"]), "bodies")
        for must in ("particles.pvd",) if not self.shallow and "vtk" in self.formats() else ():
            check(os.path.exists(self.path(must)), self.out, "has no", must)
        return self.opened

    def formats(self):
        if "--format" in self.flags:
            return self.flags[self.flags.index("--format") + 1].split(",")
        return self.scene.get("output", {}).get("formats", ["vtk"])


def runs():
    """(scene path, label, flags) of every run."""
    out = []
    for path in sorted(glob.glob(os.path.join(SCENES, "*.json"))):
        scene = json.load(open(path))
        name = os.path.splitext(os.path.basename(path))[0]
        if scene.get("method") == "shallow_water":
            out.append((path, name, ["--format", "vti,csv,obj,ply"]))
        else:
            out.append((path, name, ["--format", "vtk,csv,ply"]))
            out.append((path, name + "-wall_pressure", ["--format", "vtk,csv", "--wall-pressure"]))
    extra = [
        ("dam_break_2d", "mesh-render", ["--format", "vtk,csv", "--mesh", "--render"]),
        ("hourglass_2d", "mesh_ply", ["--format", "csv", "--mesh", "--mesh-format", "ply",
                                      "--interpolate-attributes", "velocity,density,pressure"]),
        ("cup_pour_3d", "mesh_ply", ["--format", "vtk,csv", "--mesh", "--mesh-format", "ply",
                                     "--interpolate-attributes", "velocity,density,pressure"]),
        ("mixer_3d", "mesh-up_z-wall_pressure-render", ["--format", "vtk,csv,ply", "--mesh", "--up", "z",
                                                        "--wall-pressure", "--render"]),
        ("boat_in_waves_3d", "up_z", ["--format", "vtk,csv,ply", "--up", "z"]),
        ("dam_break_3d", "pieces", ["--format", "vtk,csv", "--pieces"]),
        ("shallow_drops", "pieces-render", ["--format", "vti,csv", "--pieces", "--render"]),
        ("river_logs", "pieces", ["--format", "vti,obj", "--pieces"]),
    ]
    for name, label, flags in extra:
        out.append((os.path.join(SCENES, name + ".json"), f"{name}-{label}", flags))
    return out


def run_one(tmp, job):
    scene, label, flags = job
    out = os.path.join(tmp, label)
    t = time.monotonic()
    r = subprocess.run([EDDY, "run", scene, *BRIEF, *flags, "--out", out], capture_output=True, text=True)
    check(r.returncode == 0, label, "exit", r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    return out, time.monotonic() - t


def main():
    start = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="eddy-output-files-")
    jobs = runs()
    check(len(jobs) > 40, "found only", len(jobs), "runs in", SCENES)
    kinds, files, moving = {}, 0, 0
    with ThreadPoolExecutor(max_workers=2) as pool:  # two runs at a time, one thread each; VTK reads here
        futures = [(job, pool.submit(run_one, tmp, job)) for job in jobs]
        for job, fut in futures:
            out, _ = fut.result()
            r = Run(job[0], job[1], out, job[2])
            try:
                opened = r.check_all()
                if job[1] in KNOWN:
                    check(r.known_seen, "the known defect is gone (", KNOWN[job[1]], "): remove it from KNOWN")
                    print(f"files.vtk_readers: {job[1]}: known defect, reported: {KNOWN[job[1]]}")
            except AssertionError as e:
                raise AssertionError(f"{job[1]}: {e}") from None
            moving += r.moving
            files += len(opened)
            for k in opened.values():
                kinds[k] = kinds.get(k, 0) + 1
    check(moving > 0, "no run had a moving model: the models' velocities were not checked")
    for k in ("particles vtp", "particles pvtp", "particles ply", "walls vtp", "walls obj", "surface obj",
              "surface ply", "bodies vtp", "body obj", "grid vti", "grid pvti", "pvd", "png"):
        check(kinds.get(k), "no file of kind", k, "was opened")
    print(f"files.vtk_readers: OK: {len(jobs)} runs, {files} files "
          f"({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}) in {time.monotonic() - start:.1f} s")
    shutil.rmtree(tmp)  # kept when something failed


try:
    main()
except AssertionError as e:
    print(f"files.vtk_readers: FAILED: {e}")
    sys.exit(1)
