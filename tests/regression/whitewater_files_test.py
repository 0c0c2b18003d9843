"""The whitewater files (issue 32) opened by VTK's own readers (python3-vtk9, what ParaView uses).

    /usr/bin/python3 whitewater_files_test.py EDDY_CLI      (ctest: files.whitewater)

Runs the bundled dam_break_3d coarse (r = 1 cm) to 0.5 s with --whitewater (and again with --up z), then checks
every frames/whitewater_NNNNN.vtp (vtkXMLPolyDataReader: points = vertices = the row of whitewater.csv summed,
point arrays type (unsigned char, values 0/1/2 counted as the CSV's spray/foam/bubbles), velocity (3), lifetime,
id (unique)), every .ply (vtkPLYReader: the same points; header properties x y z vx vy vz lifetime type id),
whitewater.pvd (every DataSet a .vtp of the run at the summary's frame times). Exit 77 without VTK.
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np

try:
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy
except ImportError:
    print("files.whitewater: skipped: VTK's Python module is not installed (apt install python3-vtk9)")
    sys.exit(77)

EDDY = sys.argv[1]


def fail(msg):
    print("files.whitewater: FAIL: " + msg)
    sys.exit(1)


def check_run(out, up):
    rows = list(csv.DictReader(open(os.path.join(out, "whitewater.csv"))))
    if not rows:
        fail("whitewater.csv has no rows")
    if sum(int(r["spray"]) + int(r["foam"]) + int(r["bubbles"]) for r in rows) == 0:
        fail("no whitewater at all in " + out)
    pvd = ET.parse(os.path.join(out, "whitewater.pvd")).getroot()
    sets = pvd.findall(".//DataSet")
    if len(sets) != len(rows):
        fail("whitewater.pvd lists %d files, whitewater.csv %d frames" % (len(sets), len(rows)))
    for ds, row in zip(sets, rows):
        if abs(float(ds.get("timestep")) - float(row["time"])) > 1e-9:
            fail("pvd time %s != csv time %s" % (ds.get("timestep"), row["time"]))
        path = os.path.join(out, ds.get("file"))
        want = [int(row["spray"]), int(row["foam"]), int(row["bubbles"])]
        r = vtk.vtkXMLPolyDataReader()
        r.SetFileName(path)
        r.Update()
        pd = r.GetOutput()
        n = pd.GetNumberOfPoints()
        if n != sum(want) or pd.GetNumberOfVerts() != n:
            fail("%s: %d points, %d vertices; whitewater.csv says %d" % (path, n, pd.GetNumberOfVerts(), sum(want)))
        arrays = pd.GetPointData()
        t = arrays.GetArray("type")
        if t is None or t.GetDataType() != vtk.VTK_UNSIGNED_CHAR or t.GetNumberOfComponents() != 1:
            fail(path + ": no unsigned char array 'type'")
        for name, comps in (("velocity", 3), ("lifetime", 1), ("id", 1)):
            a = arrays.GetArray(name)
            if a is None or a.GetNumberOfComponents() != comps or a.GetNumberOfTuples() != n:
                fail("%s: array %s missing or not %d components" % (path, name, comps))
        if n:
            types = vtk_to_numpy(t)
            got = [int((types == k).sum()) for k in range(3)]
            if got != want:
                fail("%s: types %s, whitewater.csv %s" % (path, got, want))
            ids = vtk_to_numpy(arrays.GetArray("id"))
            if len(np.unique(ids)) != n:
                fail(path + ": ids not unique")
            if not np.isfinite(vtk_to_numpy(pd.GetPoints().GetData())).all():
                fail(path + ": non-finite positions")
        ply_path = path[:-4] + ".ply"
        header = open(ply_path, "rb").read(600).split(b"end_header")[0].decode()
        props = [line.split()[-1] for line in header.splitlines() if line.startswith("property")]
        if props != ["x", "y", "z", "vx", "vy", "vz", "lifetime", "type", "id"]:
            fail(ply_path + ": properties " + str(props))
        if n:
            p = vtk.vtkPLYReader()
            p.SetFileName(ply_path)
            p.Update()
            if p.GetOutput().GetNumberOfPoints() != n:
                fail("%s: %d points, the .vtp %d" % (ply_path, p.GetOutput().GetNumberOfPoints(), n))
            a = vtk_to_numpy(p.GetOutput().GetPoints().GetData())
            b = vtk_to_numpy(pd.GetPoints().GetData())
            if not np.array_equal(a, b):
                fail(ply_path + ": positions differ from the .vtp's")
    print("files.whitewater: %s (up %s): %d frames, last %s" % (out, up, len(rows), dict(rows[-1])))


def main():
    tmp = tempfile.mkdtemp(prefix="eddy_whitewater_")
    try:
        for up in ("y", "z"):
            out = os.path.join(tmp, "run_" + up)
            cmd = [EDDY, "run", "dam_break_3d", "--set", "particle_radius=0.01", "--until", "0.5", "--fps", "10",
                   "--whitewater", "--up", up, "--quiet", "--threads", "2", "-o", out]
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                fail(" ".join(cmd) + ": " + res.stderr)
            check_run(out, up)
            res = subprocess.run([EDDY, "whitewater", out, "--threads", "2"], capture_output=True, text=True)
            if res.returncode != 0:
                fail("eddy whitewater: " + res.stderr)
            check_run(out, up + ", post-process")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
