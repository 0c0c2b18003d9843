# eddy for Blender: imports an `eddy run` output folder as animated objects (docs/blender.md).
#
#   particles  a point cloud (vertices only) with the attributes velocity, density, pressure and id,
#              shown as icospheres of the particle radius (Geometry Nodes Instance on Points: EEVEE and
#              Cycles draw them), water material; --pieces runs' .pvtp files are read piece by piece;
#   surface    the reconstructed surface (eddy run --mesh), water material, with velocity on its vertices
#              when the run wrote it (--mesh-format ply --interpolate-attributes velocity: motion blur, foam);
#   whitewater spray, foam and bubbles (eddy run --whitewater: frames/whitewater_NNNNN.ply|vtp), a point cloud
#              with the attributes type (0 spray, 1 foam, 2 bubble), velocity, lifetime and id, drawn as
#              small icospheres of a fraction of the particle radius, one material per type ("eddy spray",
#              "eddy foam": flattened, "eddy bubbles": slightly transparent), Geometry Nodes;
#   walls      the scene's wall models (walls.obj, or walls_NNNNN.obj when they move), neutral material;
#   walls_still  with --pieces and moving walls, the models that do not move (walls.obj beside the moving
#              ones' walls_NNNNN.obj), neutral material;
#   tank       the scene's box, sphere and cylinder boundaries (summary.json's scene_document) as
#              meshes: containers face inwards and drop their near walls ("eddy tank"), moving ones are
#              keyed from their wall particles (walls_NNNNN.vtp);
#   bodies     one object per rigid body (bodies/body_KK.obj, its surface about its centre of mass),
#              animated by keyframes on location and rotation_quaternion from bodies.csv.
#
# Live, each object shows the frame of the current Blender frame: a frame-change handler loads the file
# (Blender frame scene.frame_start + k shows eddy frame k; the import sets the scene's fps to the run's).
# bake() makes a saved .blend play and render without the add-on (blender -b --factory-startup): the
# particles as Blender's own point cache on disk next to the .blend (one .bphys file per frame, a
# relative path), surfaces, whitewater and moving walls as one object per frame shown on its frame.
# Files are read here, not by Blender's importers, so every attribute survives and the up axis is the
# run's (summary.json "up_axis": y-up files are turned to Blender's z up, as its OBJ importer does).
# What it cannot import (grid-only shallow-water runs, folders without summary.json or frames) is refused
# with one line naming the file and what it reads (an ERROR report in Blender).
#
# Install: Edit > Preferences > Add-ons > Install... > blender/eddy_blender.py, enable "eddy", then
# File > Import > eddy output folder. From a script (also `blender -b --python`):
#     import eddy_blender; eddy_blender.register(); eddy_blender.load("/path/to/out")
#     (save the .blend) eddy_blender.bake(); (save it again)
# Needs only Blender's own Python and numpy (bundled with Blender). Tested with Blender 3.4.
bl_info = {
    "name": "eddy fluid output",
    "author": "eddy developers",
    "version": (0, 3, 0),
    "blender": (3, 4, 0),
    "location": "File > Import > eddy output folder",
    "description": "Animated particles (velocity, density, pressure, id), surfaces, whitewater, walls, tank and rigid bodies "
                   "of an eddy run, baked to play without the add-on",
    "category": "Import-Export",
}

import json
import os
import re
import xml.etree.ElementTree as ET

import numpy as np

try:  # the readers work without Blender (tests, other tools)
    import bpy
    from bpy.app.handlers import persistent
except ImportError:  # pragma: no cover
    bpy = None

    def persistent(f):
        return f


# ---- readers (no bpy) -------------------------------------------------------------------------

_PLY_TYPES = {
    "char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1", "short": "i2", "int16": "i2",
    "ushort": "u2", "uint16": "u2", "int": "i4", "int32": "i4", "uint": "u4", "uint32": "u4",
    "float": "f4", "float32": "f4", "double": "f8", "float64": "f8",
}


def read_ply(path):
    """A binary little-endian PLY (what eddy writes): (vertex fields as a dict of arrays, faces (m, 3) or None)."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.find(b"end_header")
    if not data.startswith(b"ply") or end < 0:
        raise ValueError(f"{path}: not a PLY file")
    body = data.index(b"\n", end) + 1
    header = data[:end].decode("ascii", "replace").splitlines()
    if not any(line.strip() == "format binary_little_endian 1.0" for line in header):
        raise ValueError(f"{path}: only binary little-endian PLY is read (eddy writes that)")
    elements = []  # (name, count, [(prop, dtype)] or ('list', count type, item type))
    for line in header:
        w = line.split()
        if not w:
            continue
        if w[0] == "element":
            elements.append([w[1], int(w[2]), []])
        elif w[0] == "property" and elements:
            if w[1] == "list":
                elements[-1][2].append(("list", _PLY_TYPES[w[2]], _PLY_TYPES[w[3]], w[4]))
            else:
                elements[-1][2].append((w[2], _PLY_TYPES[w[1]]))
    vertex, faces, offset = {}, None, body
    for name, count, props in elements:
        if props and props[0][0] == "list":
            if len(props) != 1:
                raise ValueError(f"{path}: element {name}: a list beside other properties is not read")
            _, ctype, itype, _ = props[0]
            dt = np.dtype([("n", "<" + ctype), ("i", "<" + itype, 3)])
            rec = np.frombuffer(data, dtype=dt, count=count, offset=offset)
            if count and not np.all(rec["n"] == 3):
                raise ValueError(f"{path}: element {name}: only triangles are read")
            offset += dt.itemsize * count
            if name == "face":
                faces = rec["i"].astype(np.int32)
            continue
        dt = np.dtype([(p, "<" + t) for p, t in props])
        rec = np.frombuffer(data, dtype=dt, count=count, offset=offset)
        offset += dt.itemsize * count
        if name == "vertex":
            vertex = {p: rec[p] for p, _ in props}
    return vertex, faces


_VTK_TYPES = {"Float32": "<f4", "Float64": "<f8", "Int64": "<i8", "UInt64": "<u8", "UInt32": "<u4", "Int32": "<i4",
              "UInt8": "u1", "Int8": "i1", "UInt16": "<u2", "Int16": "<i2"}


def read_vtp_pieces(path):
    """eddy's VTK XML PolyData (.vtp, appended raw, UInt64 headers): one dict per <Piece>, {name: array
    (n, comps)}, with "Points" and, for polygon pieces, "connectivity" and "offsets" of the Polys."""
    with open(path, "rb") as f:
        data = f.read()
    start = data.find(b"<AppendedData")
    if start < 0:
        raise ValueError(f"{path}: not a .vtp with appended data (eddy writes that)")
    underscore = data.index(b"_", data.index(b">", start)) + 1
    root = ET.fromstring(data[:start].decode("utf-8") + "</VTKFile>" if b"</PolyData>" in data[:start]
                         else data[:start].decode("utf-8") + "</PolyData></VTKFile>")
    if root.get("header_type", "UInt32") != "UInt64":
        raise ValueError(f"{path}: header_type must be UInt64 (eddy writes that)")
    pieces = []
    for piece in root.iter("Piece"):
        arrays = {}
        for section in piece:
            for da in section.iter("DataArray"):
                off = underscore + int(da.get("offset"))
                t = _VTK_TYPES[da.get("type")]
                nbytes = int(np.frombuffer(data, "<u8", 1, off)[0])
                a = np.frombuffer(data, t, nbytes // np.dtype(t).itemsize, off + 8)
                comps = int(da.get("NumberOfComponents", "1"))
                name = da.get("Name")
                if section.tag == "Polys":
                    name = "polys_" + name
                elif section.tag in ("Verts", "Lines", "Strips"):
                    continue
                arrays[name] = a.reshape(-1, comps) if comps > 1 else a
        pieces.append(arrays)
    return pieces


def _vtp_arrays(path):
    """The first piece of a .vtp (eddy's particle and body files have one): {name: array (n, comps)}."""
    pieces = read_vtp_pieces(path)
    if not pieces:
        raise ValueError(f"{path}: no <Piece>")
    return pieces[0]


def pvtp_pieces(path):
    """The piece files a parallel .pvtp lists (<Piece Source=...>), as paths next to it."""
    root = ET.parse(path).getroot()
    sources = [p.get("Source") for p in root.iter("Piece") if p.get("Source")]
    if not sources:
        raise ValueError(f"{path}: a .pvtp that lists no <Piece Source=...>")
    folder = os.path.realpath(os.path.dirname(path))
    out = []
    for s in sources:  # next to the .pvtp, as eddy writes them (and as eddy mesh reads them)
        full = os.path.realpath(os.path.join(folder, s))
        if os.path.isabs(s) or os.path.dirname(full) != folder:
            raise ValueError(f"{path}: piece {s}: not a file next to the .pvtp (eddy writes its pieces there)")
        out.append(full)
    return out


def read_walls_vtp(path):
    """walls.vtp / walls_NNNNN.vtp: (wall particles {position (n, 3), object (n,)}, models {position (m, 3),
    faces (k, 3), object (m,)}); eddy writes the wall particles as piece 0 and the models' triangles as piece 1."""
    pieces = read_vtp_pieces(path)
    out = []
    for i in range(2):
        a = pieces[i] if i < len(pieces) else {}
        pts = np.asarray(a.get("Points", np.zeros((0, 3), np.float32)), np.float32).reshape(-1, 3)
        obj = np.asarray(a.get("object", np.zeros(len(pts))), np.int32).reshape(-1)
        d = {"position": pts, "object": obj}
        if i == 1:
            conn = np.asarray(a.get("polys_connectivity", np.zeros(0)), np.int64)
            d["faces"] = conn.reshape(-1, 3).astype(np.int32) if len(conn) % 3 == 0 else np.zeros((0, 3), np.int32)
        out.append(d)
    return out[0], out[1]


def read_particles(path):
    """A particle frame (.ply, .vtp or .csv as eddy writes them): dict with position (n, 3) and, when
    present, velocity (n, 3), density, pressure (n,) float32 and id (n,) int."""
    ext = os.path.splitext(path)[1].lower()
    out = {}
    if ext == ".ply":
        v, _ = read_ply(path)
        out["position"] = np.stack([v["x"], v["y"], v["z"]], axis=1)
        if "vx" in v:
            out["velocity"] = np.stack([v["vx"], v["vy"], v["vz"]], axis=1)
        for k in ("density", "pressure", "id"):
            if k in v:
                out[k] = v[k]
    elif ext == ".vtp":
        a = _vtp_arrays(path)
        out["position"] = a["Points"].reshape(-1, 3)
        for k in ("velocity", "density", "pressure", "id"):
            if k in a:
                out[k] = a[k]
    elif ext == ".pvtp":  # eddy run --pieces: one .vtp per process, read in the listed order
        parts = [read_particles(p) for p in pvtp_pieces(path)]
        keys = set.intersection(*(set(q) for q in parts))
        out = {k: np.concatenate([q[k] for q in parts]) for k in keys}
    elif ext == ".csv":
        with open(path) as f:
            names = f.readline().strip().split(",")
        table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2, dtype=np.float64)
        col = {n: table[:, i] for i, n in enumerate(names)}
        out["position"] = np.stack([col["x"], col["y"], col.get("z", np.zeros(len(table)))], axis=1)
        if "vx" in col:
            out["velocity"] = np.stack([col["vx"], col["vy"], col.get("vz", np.zeros(len(table)))], axis=1)
        for k in ("density", "pressure", "id"):
            if k in col:
                out[k] = col[k]
    else:
        raise ValueError(f"{path}: not a particle file (.ply, .vtp, .pvtp, .csv)")
    out = {k: np.ascontiguousarray(v, dtype=np.int32 if k == "id" else np.float32) for k, v in out.items()}
    return out


WHITEWATER_TYPES = ("spray", "foam", "bubbles")  # the files' type 0, 1, 2


def read_whitewater(path):
    """A whitewater frame (eddy run --whitewater, eddy whitewater: frames/whitewater_NNNNN.ply or .vtp): dict
    with position (n, 3), velocity (n, 3), lifetime (n,) float32, type (n,) int32 (0 spray, 1 foam,
    2 bubble) and id (n,) int32."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".ply":
        v, _ = read_ply(path)
        out = {"position": np.stack([v["x"], v["y"], v["z"]], axis=1)}
        if "vx" in v:
            out["velocity"] = np.stack([v["vx"], v["vy"], v["vz"]], axis=1)
    elif ext == ".vtp":
        v = _vtp_arrays(path)
        out = {"position": v["Points"].reshape(-1, 3)}
        if "velocity" in v:
            out["velocity"] = v["velocity"].reshape(-1, 3)
    else:
        raise ValueError(f"{path}: not a whitewater file (.ply, .vtp)")
    if "type" not in v:
        raise ValueError(f"{path}: no 'type' (0 spray, 1 foam, 2 bubble): not an eddy whitewater file")
    for k in ("lifetime", "type", "id"):
        if k in v:
            out[k] = v[k]
    return {k: np.ascontiguousarray(a, dtype=np.int32 if k in ("type", "id") else np.float32) for k, a in out.items()}


def read_mesh(path):
    """A triangle mesh (.ply or .obj as eddy writes them): dict with position (n, 3), faces (m, 3) and
    any vertex attributes (velocity (n, 3) from vx vy vz; scalars by name)."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".ply":
        v, faces = read_ply(path)
        out = {"position": np.stack([v["x"], v["y"], v["z"]], axis=1), "faces": faces}
        if "vx" in v:
            out["velocity"] = np.stack([v["vx"], v["vy"], v["vz"]], axis=1)
        for k, a in v.items():
            if k not in ("x", "y", "z", "nx", "ny", "nz", "vx", "vy", "vz"):
                out[k] = a
    elif ext == ".obj":
        verts, faces = [], []
        with open(path) as f:
            for line in f:
                if line.startswith("v "):
                    verts.append(line.split()[1:4])
                elif line.startswith("f "):
                    faces.append([int(w.split("/")[0]) - 1 for w in line.split()[1:4]])
        out = {"position": np.array(verts, dtype=np.float32).reshape(-1, 3),
               "faces": np.array(faces, dtype=np.int32).reshape(-1, 3)}
    else:
        raise ValueError(f"{path}: not a mesh file (.ply, .obj)")
    if out["faces"] is None:
        out["faces"] = np.zeros((0, 3), np.int32)
    return {k: np.ascontiguousarray(a, dtype=np.int32 if k == "faces" else np.float32) for k, a in out.items()}


def read_bodies_csv(path):
    """bodies.csv (time,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,fx,fy,fz,tx,ty,tz; one row per body per
    frame, frames in order): dict of float64 arrays time (f,), position (f, b, 3), orientation (f, b, 4)
    (w, x, y, z), velocity, angular_velocity, force, torque (f, b, 3), in the world's axes."""
    with open(path) as f:
        names = f.readline().strip().split(",")
    want = ["time", "body", "x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"]
    if names[:len(want)] != want:
        raise ValueError(f"{path}: not an eddy bodies.csv (its header starts {','.join(names[:4])})")
    table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2, dtype=np.float64)
    if table.size == 0:
        raise ValueError(f"{path}: no rows")
    bodies = int(table[:, 1].max()) + 1
    frames = len(table) // bodies
    if frames * bodies != len(table) or not np.array_equal(table[:, 1], np.tile(np.arange(bodies), frames)):
        raise ValueError(f"{path}: rows are not every body (0 to {bodies - 1}) at every frame, in order")
    t = table.reshape(frames, bodies, -1)
    col = {n: i for i, n in enumerate(names)}

    def cols(*n):
        return np.ascontiguousarray(t[:, :, [col[c] for c in n]])

    out = {"time": t[:, 0, 0].copy(), "position": cols("x", "y", "z"), "orientation": cols("qw", "qx", "qy", "qz"),
           "velocity": cols("vx", "vy", "vz"), "angular_velocity": cols("wx", "wy", "wz")}
    if "tz" in col:
        out["force"], out["torque"] = cols("fx", "fy", "fz"), cols("tx", "ty", "tz")
    return out


def body_keys(bodies, up_axis):
    """Per frame and body, the location (f, b, 3) and rotation_quaternion (f, b, 4) of Blender objects
    holding the bodies' rest meshes (bodies/body_KK.obj in a file whose up axis is `up_axis`, turned by
    to_blender_axes): bodies.csv's pose, in the world's y-up axes, turned into Blender's z up. The turn T
    is a rotation, so a rotation q becomes T q T^-1: its axis (x, y, z) turns like a vector. Each
    quaternion keeps the sign nearest the previous frame's, so that keys interpolate the short way."""
    loc = to_blender_axes(bodies["position"].reshape(-1, 3), "y").reshape(bodies["position"].shape)
    q = bodies["orientation"].copy()
    q[:, :, 1:] = to_blender_axes(q[:, :, 1:].reshape(-1, 3), "y").reshape(q[:, :, 1:].shape)
    for f in range(1, len(q)):
        flip = np.sum(q[f] * q[f - 1], axis=1) < 0
        q[f][flip] *= -1
    return loc, q


def to_blender_axes(vectors, up_axis):
    """(n, 3) vectors of a file whose up axis is `up_axis` in Blender's z-up frame: y up -> (x, -z, y),
    as Blender's OBJ importer does; z up as they are."""
    if up_axis == "z":
        return vectors
    return np.ascontiguousarray(np.stack([vectors[:, 0], -vectors[:, 2], vectors[:, 1]], axis=1))


class Run:
    """An eddy output folder: its summary and its frames, per kind ('particles', 'surface', 'walls').
    Raises ValueError naming the folder or file and what is supported when there is nothing to import."""

    def __init__(self, folder):
        self.folder = os.path.abspath(folder)
        if not os.path.isdir(self.folder):
            raise ValueError(f"{self.folder}: no such folder (pick the folder `eddy run --out FOLDER` wrote, "
                             "or its summary.json)")
        summary = os.path.join(self.folder, "summary.json")
        if not os.path.isfile(summary):
            raise ValueError(f"{summary}: missing: not an eddy run folder (the add-on imports the folder of "
                             "`eddy run --out FOLDER`: summary.json and frames/)")
        with open(summary) as f:
            self.summary = json.load(f)
        if self.summary.get("method") == "shallow_water":
            self.up_axis = self.summary.get("up_axis", "z")
        else:
            self.up_axis = self.summary.get("up_axis", "y")  # runs before up_axis existed wrote y up
        self.radius = float(self.summary.get("particle_radius", 0.01))
        self.fps = float(self.summary.get("fps", 0) or 0)
        self.frames = {"particles": {}, "surface": {}, "walls": {}, "whitewater": {}}
        self.wall_frames = {}  # walls_NNNNN.vtp: moving walls' particles (and models' triangles)
        self.grids = 0  # shallow-water grids (.vti, .pvti), which are not imported
        frames = os.path.join(self.folder, "frames")
        rank = {".ply": 0, ".vtp": 1, ".pvtp": 2, ".csv": 3, ".obj": 1}
        names = sorted(os.listdir(frames)) if os.path.isdir(frames) else []
        for name in names:
            if re.fullmatch(r"grid_\d+(_p\d+)?\.p?vti", name):
                self.grids += 1
            m = re.fullmatch(r"walls_(\d+)\.vtp", name)
            if m:
                self.wall_frames[int(m.group(1))] = os.path.join(frames, name)
            m = re.fullmatch(r"(particles|surface|walls|whitewater)_(\d+)\.(ply|vtp|pvtp|csv|obj)", name)
            if m:
                kind, k = m.group(1), int(m.group(2))
                if kind == "walls" and m.group(3) != "obj":
                    continue
                if kind == "whitewater" and m.group(3) not in ("ply", "vtp"):
                    continue
                if kind == "surface" and m.group(3) == "vtp":  # ParaView's copy (surface.pvd) of the OBJ/PLY
                    continue
                best = self.frames[kind].get(k)
                if best is None or rank[os.path.splitext(name)[1]] < rank[os.path.splitext(best)[1]]:
                    self.frames[kind][k] = os.path.join(frames, name)
        static_walls = os.path.join(frames, "walls.obj")
        self.static_walls = static_walls if os.path.isfile(static_walls) else None
        walls_vtp = os.path.join(frames, "walls.vtp")
        self.walls_vtp = walls_vtp if os.path.isfile(walls_vtp) else (
            self.wall_frames[min(self.wall_frames)] if self.wall_frames else None)
        # Rigid bodies (particle runs): bodies/body_KK.obj at rest and their poses in bodies.csv.
        self.bodies = []
        folder = os.path.join(self.folder, "bodies")
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            m = re.fullmatch(r"body_(\d+)\.obj", name)
            if m:
                self.bodies.append((int(m.group(1)), os.path.join(folder, name)))
        self.bodies.sort()
        if [k for k, _ in self.bodies] != list(range(len(self.bodies))):
            raise ValueError(f"{folder}: body files are not body_00.obj to body_{len(self.bodies) - 1:02d}.obj")
        csv = os.path.join(self.folder, "bodies.csv")
        self.bodies_csv = csv if self.bodies and os.path.isfile(csv) else None
        if not self.frames["particles"] and not self.frames["surface"]:
            if self.grids or self.summary.get("method") == "shallow_water":
                raise ValueError(
                    f"{frames}: a shallow-water (grid) run with only .vti grids ({self.grids} files), which the add-on "
                    "does not read: run it with --format obj (or ply) to write the water surface as "
                    "frames/surface_NNNNN.obj|ply, which it imports")
            raise ValueError(f"{frames}: no particle or surface frames (particles_NNNNN.ply|vtp|pvtp|csv, "
                             f"surface_NNNNN.ply|obj){'' if names else ': the folder is empty or missing'}; the "
                             "add-on imports what `eddy run` writes (--format vtk|ply|csv, --pieces, --mesh)")

    def count(self):
        return max([max(v) + 1 for v in self.frames.values() if v] or [0])

    def file(self, kind, k):
        """The file of `kind` showing eddy frame k: the last one at or before k (walls that stop moving)."""
        files = self.frames.get(kind)
        if kind == "walls_still":  # --pieces: walls.obj holds the models that do not move, walls_NNNNN.obj the others
            return self.static_walls if self.frames["walls"] else None
        if not files:
            return self.static_walls if kind == "walls" else None
        earlier = [i for i in files if i <= k]
        return files[max(earlier)] if earlier else files[min(files)]

    def scene_boundaries(self):
        """The scene's boundaries, or (None, why not): from summary.json's "scene_document" (the scene as
        run, --set applied), else from its "scene_file" (absolute since issue 45; an older relative one is
        tried against the working folder, then the run folder's parent)."""
        doc = self.summary.get("scene_document")
        if isinstance(doc, dict) and isinstance(doc.get("boundaries", []), list):
            return doc.get("boundaries", []), None
        path = self.summary.get("scene_file")
        if not path:
            return None, "summary.json names neither scene_document nor scene_file"
        if not os.path.isabs(path) and not os.path.isfile(path):
            path = os.path.join(os.path.dirname(self.folder), path)
        if not os.path.isfile(path):
            return None, f"{path} (summary.json scene_file) not found"
        try:
            with open(path) as f:
                return json.load(f).get("boundaries", []), None
        except (OSError, ValueError) as e:
            return None, f"{path}: {e}"


def tank_meshes(boundaries, segments=48):
    """Triangle meshes of a scene's box, sphere and cylinder boundaries (3D; models come from walls.obj):
    [(boundary index, name, position (n, 3) in Blender's axes, faces (m, 3), container)], the scene's y-up
    world turned to z up. A container's triangles face inwards (towards the fluid), an obstacle's outwards;
    a container box or cylinder has a lid unless open_top. Motion keys (pivot, motion, angular_velocity)
    are not applied here: moving walls are posed per frame from their wall particles (rigid_pose)."""
    out = []
    for i, b in enumerate(boundaries or []):
        shape, container = b.get("shape"), not b.get("solid", False)
        lid = not b.get("open_top", False) if container else True
        if shape == "box" and len(b.get("min", [])) == 3:
            lo, hi = np.array(b["min"], float), np.array(b["max"], float)
            v = np.array([[lo[0] if j & 1 == 0 else hi[0], lo[1] if j & 2 == 0 else hi[1],
                           lo[2] if j & 4 == 0 else hi[2]] for j in range(8)])
            quads = [(0, 2, 6, 4), (1, 5, 7, 3), (0, 4, 5, 1), (2, 3, 7, 6), (0, 1, 3, 2), (4, 6, 7, 5)]  # outward
            if not lid:
                quads = [q for q in quads if q != (2, 3, 7, 6)]  # y max
            f = [(a, b_, c) for a, b_, c, d in quads] + [(a, c, d) for a, b_, c, d in quads]
        elif shape == "cylinder":
            c, r, h = np.array(b["center"], float), float(b["radius"]), float(b["height"])
            t = np.linspace(0, 2 * np.pi, segments, endpoint=False)
            ring = np.stack([c[0] + r * np.cos(t), np.zeros_like(t), c[2] + r * np.sin(t)], axis=1)
            bottom, top = ring + [0, c[1], 0], ring + [0, c[1] + h, 0]
            v = np.concatenate([bottom, top, [[c[0], c[1], c[2]], [c[0], c[1] + h, c[2]]]])
            n = segments
            f = []
            for k in range(n):
                k2 = (k + 1) % n
                f += [(k, n + k, n + k2), (k, n + k2, k2), (2 * n, k, k2)]
                if lid:
                    f.append((2 * n + 1, n + k2, n + k))
        elif shape == "sphere":
            c, r = np.array(b["center"], float), float(b["radius"])
            rows, cols = segments // 2, segments
            th = np.linspace(0, np.pi, rows + 1)[1:-1]
            ph = np.linspace(0, 2 * np.pi, cols, endpoint=False)
            v = [c + [0, r, 0]] + [c + r * np.array([np.sin(a) * np.cos(p), np.cos(a), np.sin(a) * np.sin(p)])
                                   for a in th for p in ph] + [c - [0, r, 0]]
            v = np.array(v)
            f = []
            for j in range(cols):
                j2 = (j + 1) % cols
                f.append((0, 1 + j2, 1 + j))
                f.append((len(v) - 1, 1 + (rows - 2) * cols + j, 1 + (rows - 2) * cols + j2))
            for i_ in range(rows - 2):
                for j in range(cols):
                    j2 = (j + 1) % cols
                    a, b_, c_, d = 1 + i_ * cols + j, 1 + i_ * cols + j2, 1 + (i_ + 1) * cols + j2, 1 + (i_ + 1) * cols + j
                    f += [(a, b_, c_), (a, c_, d)]
        else:
            continue
        f = np.array(f, np.int32)
        pos = np.asarray(v, np.float64)
        # Outward for obstacles; the winding above is outward for the y-up world (x, y, z) right-handed.
        if _outward_volume(pos, f) < 0:
            f = f[:, ::-1]
        if container:
            f = f[:, ::-1]
        out.append((i, f"{'tank' if container else 'wall'} {i} ({shape})",
                    to_blender_axes(pos.astype(np.float32), "y"), np.ascontiguousarray(f)))
        out[-1] = out[-1] + (container,)
    return out


def _outward_volume(pos, faces):
    a, b, c = pos[faces[:, 0]], pos[faces[:, 1]], pos[faces[:, 2]]
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def rigid_pose(rest, now):
    """The rotation R (3, 3) and translation t (3,) with now ~ rest @ R.T + t (least squares, Kabsch)."""
    ca, cb = rest.mean(axis=0), now.mean(axis=0)
    h = (rest - ca).T @ (now - cb)
    u, _, vt = np.linalg.svd(h)
    d = np.sign(np.linalg.det(vt.T @ u.T)) or 1.0
    r = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    return r, cb - ca @ r.T


def camera_framing(lo, hi, direction=(0.45, -0.95, 0.55), fov=np.radians(39.6), aspect=16 / 9, margin=1.05):
    """A camera that sees the whole box lo..hi (Blender's axes, m): (location (3,), forward unit vector (3,),
    clip_start, clip_end). It looks along -direction at the box's centre from the distance at which the
    box's bounding sphere fills the narrower field of view (fov: the wider one, Blender's sensor fit AUTO);
    clip_start is half the distance to that sphere, so that nothing of the scene is clipped, whatever its
    size (a 24 cm bowl, a 4 m tank), and clip_end twice its far side."""
    lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    centre, radius = (lo + hi) / 2, max(float(np.linalg.norm(hi - lo)) / 2, 1e-6)
    d = np.asarray(direction, np.float64)
    d = d / np.linalg.norm(d)
    half = fov / 2
    narrow = np.arctan(np.tan(half) / aspect) if aspect > 1 else np.arctan(np.tan(half) * aspect)
    distance = margin * radius / np.sin(narrow)
    clip_start = max(0.5 * (distance - radius), 1e-4 * distance)
    return centre + d * distance, -d, clip_start, 2.0 * (distance + radius)


def write_bphys(path, index, position, velocity, alive_from, alive_to):
    """One frame of a Blender particle point cache (.bphys, uncompressed, PTCACHE_TYPE_PARTICLES): per
    particle its index, location, velocity (Blender's axes) and times (birth, death, lifetime, in Blender
    frames). Blender reads these from disk (point_cache.use_external) without any add-on."""
    dt = np.dtype([("i", "<u4"), ("p", "<f4", 3), ("v", "<f4", 3), ("t", "<f4", 3)])
    rec = np.zeros(len(index), dt)
    rec["i"], rec["p"], rec["v"] = index, position, velocity
    rec["t"][:, 0], rec["t"][:, 1] = alive_from, alive_to
    rec["t"][:, 2] = np.asarray(alive_to, np.float32) - np.asarray(alive_from, np.float32)
    types = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 6)  # BPHYS_DATA_INDEX, LOCATION, VELOCITY, TIMES
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(b"BPHYSICS" + np.array([1, len(rec), types], "<u4").tobytes())  # type 1: particles
        f.write(rec.tobytes())
    os.replace(tmp, path)


# ---- Blender side ---------------------------------------------------------------------------------

def _fill_mesh(mesh, positions, faces=None):
    mesh.clear_geometry()
    n = len(positions)
    mesh.vertices.add(n)
    mesh.vertices.foreach_set("co", positions.ravel())
    if faces is not None and len(faces):
        m = len(faces)
        mesh.loops.add(3 * m)
        mesh.loops.foreach_set("vertex_index", faces.ravel())
        mesh.polygons.add(m)
        mesh.polygons.foreach_set("loop_start", np.arange(0, 3 * m, 3, dtype=np.int32))
        try:
            mesh.polygons.foreach_set("loop_total", np.full(m, 3, dtype=np.int32))
        except (AttributeError, TypeError, RuntimeError):  # read-only in newer Blender: derived
            pass
        mesh.polygons.foreach_set("use_smooth", np.ones(m, dtype=bool))
    mesh.update(calc_edges=True)


def _set_attribute(mesh, name, values):
    if name in mesh.attributes:
        mesh.attributes.remove(mesh.attributes[name])
    if values.ndim == 2:
        a = mesh.attributes.new(name, "FLOAT_VECTOR", "POINT")
        a.data.foreach_set("vector", np.ascontiguousarray(values, np.float32).ravel())
    elif values.dtype.kind in "iu":
        a = mesh.attributes.new(name, "INT", "POINT")
        a.data.foreach_set("value", values.astype(np.int32))
    else:
        a = mesh.attributes.new(name, "FLOAT", "POINT")
        a.data.foreach_set("value", values.astype(np.float32))


def _read(kind, path):
    return {"particles": read_particles, "whitewater": read_whitewater}.get(kind, read_mesh)(path)


def _show(obj, run, kind, k):
    path = run.file(kind, k)
    if path is None or obj.get("eddy_file") == path:
        return
    data = _read(kind, path)
    up = run.up_axis
    _fill_mesh(obj.data, to_blender_axes(data["position"], up), data.get("faces"))
    for name, values in data.items():
        if name in ("position", "faces"):
            continue
        _set_attribute(obj.data, name, to_blender_axes(values, up) if values.ndim == 2 else values)
    obj["eddy_file"] = path


def water_material():
    """"eddy water": Principled BSDF, full transmission, IOR 1.33, a faint blue tint and a blue volume
    absorption (Cycles' output; EEVEE's has the surface only); EEVEE refracts it through screen-space
    refraction (load() turns that on)."""
    mat = bpy.data.materials.get("eddy water")
    if mat is not None:
        return mat
    mat = bpy.data.materials.new("eddy water")
    mat.use_nodes = True
    nodes, links = mat.node_tree.nodes, mat.node_tree.links
    bsdf = nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = (0.8, 0.92, 1.0, 1.0)
    bsdf.inputs["Roughness"].default_value = 0.05
    bsdf.inputs["IOR"].default_value = 1.33
    bsdf.inputs["Transmission"].default_value = 1.0
    absorb = nodes.new("ShaderNodeVolumeAbsorption")
    absorb.inputs["Color"].default_value = (0.55, 0.8, 0.95, 1.0)
    absorb.inputs["Density"].default_value = 2.0  # per metre: a 0.5 m column keeps about a third of the red
    # The absorption in Cycles only: EEVEE would march a volume through each particle's bounding box (30 s
    # for a 64 x 48 frame of 15,625 particles on a software GL), for a tint it hardly shows.
    cycles_out = nodes["Material Output"]
    cycles_out.target = "CYCLES"
    eevee_out = nodes.new("ShaderNodeOutputMaterial")
    eevee_out.target = "EEVEE"
    links.new(bsdf.outputs["BSDF"], cycles_out.inputs["Surface"])
    links.new(bsdf.outputs["BSDF"], eevee_out.inputs["Surface"])
    links.new(absorb.outputs["Volume"], cycles_out.inputs["Volume"])
    mat.diffuse_color = (0.3, 0.55, 0.9, 1.0)  # solid viewport
    mat.use_screen_refraction = True
    mat.blend_method = "OPAQUE"
    return mat


def neutral_material(see_through_back=False):
    """"eddy walls": light grey, rough. "eddy tank" (see_through_back): the same, but faces seen from
    behind are transparent to the camera, so that a container's near walls (facing inwards, away from the
    camera) do not hide the fluid, while its floor and far walls stay (EEVEE and Cycles alike: a Backfacing
    mix); it casts no shadows, so that light reaches into a closed tank."""
    name = "eddy tank" if see_through_back else "eddy walls"
    mat = bpy.data.materials.get(name)
    if mat is not None:
        return mat
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    nodes, links = mat.node_tree.nodes, mat.node_tree.links
    bsdf = nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = (0.55, 0.55, 0.53, 1.0)
    bsdf.inputs["Roughness"].default_value = 0.6
    mat.diffuse_color = (0.55, 0.55, 0.53, 1.0)
    if see_through_back:
        geo, mix = nodes.new("ShaderNodeNewGeometry"), nodes.new("ShaderNodeMixShader")
        clear = nodes.new("ShaderNodeBsdfTransparent")
        # Transparent to the camera from behind, and to shadow rays: a closed tank would keep every light out.
        path, behind, either = nodes.new("ShaderNodeLightPath"), nodes.new("ShaderNodeMath"), nodes.new("ShaderNodeMath")
        behind.operation, either.operation = "MULTIPLY", "MAXIMUM"
        links.new(geo.outputs["Backfacing"], behind.inputs[0])
        links.new(path.outputs["Is Camera Ray"], behind.inputs[1])
        links.new(behind.outputs[0], either.inputs[0])
        links.new(path.outputs["Is Shadow Ray"], either.inputs[1])
        links.new(either.outputs[0], mix.inputs["Fac"])
        links.new(bsdf.outputs["BSDF"], mix.inputs[1])
        links.new(clear.outputs["BSDF"], mix.inputs[2])
        links.new(mix.outputs["Shader"], nodes["Material Output"].inputs["Surface"])
        mat.blend_method, mat.shadow_method = "HASHED", "HASHED"
        mat.use_backface_culling = True
    return mat


def _set_material(obj, mat):
    obj.data.materials.clear()
    obj.data.materials.append(mat)


def _points_modifier(obj, radius, subdivisions=1):
    """Geometry Nodes: an icosphere of the particle radius instanced on every point, water material: the
    particles render as spheres in EEVEE (which draws no point clouds in 3.x) and Cycles."""
    group = bpy.data.node_groups.new("eddy particles", "GeometryNodeTree")
    if hasattr(group, "interface"):  # Blender 4
        group.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
        group.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    else:
        group.inputs.new("NodeSocketGeometry", "Geometry")
        group.outputs.new("NodeSocketGeometry", "Geometry")
    nodes, links = group.nodes, group.links
    gin, gout = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
    ico = nodes.new("GeometryNodeMeshIcoSphere")
    ico.inputs["Radius"].default_value = radius
    ico.inputs["Subdivisions"].default_value = subdivisions
    smooth = nodes.new("GeometryNodeSetShadeSmooth")
    material = nodes.new("GeometryNodeSetMaterial")
    material.inputs["Material"].default_value = water_material()
    inst = nodes.new("GeometryNodeInstanceOnPoints")
    links.new(ico.outputs["Mesh"], smooth.inputs["Geometry"])
    links.new(smooth.outputs["Geometry"], material.inputs["Geometry"])
    links.new(gin.outputs[0], inst.inputs["Points"])
    links.new(material.outputs["Geometry"], inst.inputs["Instance"])
    links.new(inst.outputs["Instances"], gout.inputs[0])
    mod = obj.modifiers.new("eddy particles", "NODES")
    mod.node_group = group
    return mod


def whitewater_materials():
    """The whitewater's materials, by type: "eddy spray" (white, a little glossy: droplets), "eddy foam"
    (white, diffuse), "eddy bubbles" (white-blue, slightly transparent: alpha 0.5, partly transmissive)."""
    mats = []
    for name, colour, rough, transmission, alpha in (("eddy spray", (0.95, 0.97, 1.0), 0.25, 0.0, 1.0),
                                                      ("eddy foam", (0.9, 0.9, 0.9), 1.0, 0.0, 1.0),
                                                      ("eddy bubbles", (0.85, 0.93, 1.0), 0.1, 0.5, 0.5)):
        mat = bpy.data.materials.get(name)
        if mat is None:
            mat = bpy.data.materials.new(name)
            mat.use_nodes = True
            bsdf = mat.node_tree.nodes["Principled BSDF"]
            bsdf.inputs["Base Color"].default_value = colour + (1.0,)
            bsdf.inputs["Roughness"].default_value = rough
            bsdf.inputs["Transmission"].default_value = transmission
            bsdf.inputs["Alpha"].default_value = alpha
            if "Specular" in bsdf.inputs:  # Blender 3.x; foam: hardly a highlight
                bsdf.inputs["Specular"].default_value = 0.1 if rough >= 1.0 else 0.5
            mat.diffuse_color = colour + (alpha,)
            if alpha < 1.0:  # EEVEE: stochastic transparency (Cycles reads Alpha as it is)
                mat.blend_method, mat.shadow_method = "HASHED", "HASHED"
        mats.append(mat)
    return mats


# Whitewater drawn per type: (size in particle radii, its height as a share of its width).
WHITEWATER_LOOK = {"spray": (0.5, 1.0), "foam": (0.8, 0.35), "bubbles": (0.5, 1.0)}


def _group_input(group, socket_type, name):
    if hasattr(group, "interface"):  # Blender 4
        return group.interface.new_socket(name, in_out="INPUT", socket_type=socket_type)
    return group.inputs.new(socket_type, name)


def _whitewater_modifier(obj, radius):
    """Geometry Nodes: per type (the point attribute 'type', 0 spray, 1 foam, 2 bubble) an icosphere instanced
    on that type's points, in its material (whitewater_materials), of WHITEWATER_LOOK's size times the group
    input "Radius" (default: the run's particle radius; foam flattened along z, Blender's up); the three
    joined. The modifier's Radius field scales them all."""
    group = bpy.data.node_groups.get("eddy whitewater")
    if group is None:
        group = bpy.data.node_groups.new("eddy whitewater", "GeometryNodeTree")
        _group_input(group, "NodeSocketGeometry", "Geometry")
        radius_in = _group_input(group, "NodeSocketFloat", "Radius")
        radius_in.min_value, radius_in.default_value = 0.0, radius
        if hasattr(group, "interface"):
            group.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
        else:
            group.outputs.new("NodeSocketGeometry", "Geometry")
        nodes, links = group.nodes, group.links
        gin, gout = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
        kind = nodes.new("GeometryNodeInputNamedAttribute")
        kind.data_type = "INT"
        kind.inputs["Name"].default_value = "type"
        kind_out = [o for o in kind.outputs if o.enabled and o.type == "INT"][0]
        ico = nodes.new("GeometryNodeMeshIcoSphere")
        ico.inputs["Radius"].default_value, ico.inputs["Subdivisions"].default_value = 1.0, 1
        smooth = nodes.new("GeometryNodeSetShadeSmooth")
        links.new(ico.outputs["Mesh"], smooth.inputs["Geometry"])
        join = nodes.new("GeometryNodeJoinGeometry")
        for t, mat in enumerate(whitewater_materials()):
            size, flat = WHITEWATER_LOOK[WHITEWATER_TYPES[t]]
            same = nodes.new("FunctionNodeCompare")
            same.data_type, same.operation = "INT", "EQUAL"
            a, b = [i for i in same.inputs if i.enabled and i.type == "INT"][:2]
            links.new(kind_out, a)
            b.default_value = t
            scale = nodes.new("ShaderNodeVectorMath")
            scale.operation = "SCALE"
            scale.inputs[0].default_value = (size, size, size * flat)
            links.new(gin.outputs["Radius"], scale.inputs["Scale"])
            material = nodes.new("GeometryNodeSetMaterial")
            material.name = material.label = f"eddy {WHITEWATER_TYPES[t]}"
            material.inputs["Material"].default_value = mat
            inst = nodes.new("GeometryNodeInstanceOnPoints")
            links.new(smooth.outputs["Geometry"], material.inputs["Geometry"])
            links.new(gin.outputs["Geometry"], inst.inputs["Points"])
            links.new(same.outputs["Result"], inst.inputs["Selection"])
            links.new(material.outputs["Geometry"], inst.inputs["Instance"])
            links.new(scale.outputs["Vector"], inst.inputs["Scale"])
            links.new(inst.outputs["Instances"], join.inputs["Geometry"])
        links.new(join.outputs["Geometry"], gout.inputs[0])
    mod = obj.modifiers.new("eddy whitewater", "NODES")
    mod.node_group = group
    set_whitewater_radius(obj, radius)
    for mat in whitewater_materials():  # in the object's slots too: the Material tab lists and edits them
        obj.data.materials.append(mat)
    return mod


def set_whitewater_radius(obj, radius):
    """The whitewater's drawn size: WHITEWATER_LOOK's radii times `radius` (m; the import puts the particle
    radius)."""
    mod = obj.modifiers["eddy whitewater"]
    group = mod.node_group
    if hasattr(group, "interface"):
        ident = [i for i in group.interface.items_tree if getattr(i, "name", "") == "Radius"][0].identifier
    else:
        ident = group.inputs["Radius"].identifier
    mod[ident] = float(radius)
    obj.update_tag()


def _update(scene, _depsgraph=None):
    for obj in scene.objects:
        folder, kind = obj.get("eddy_folder"), obj.get("eddy_kind")
        if not folder or not kind:
            continue
        run = _runs.get(folder)
        if run is None:
            try:
                run = _runs[folder] = Run(folder)
            except (OSError, ValueError):
                continue
        _show(obj, run, kind, max(0, scene.frame_current - obj.get("eddy_frame_start", scene.frame_start)))


_runs = {}


@persistent
def eddy_frame_change(scene, depsgraph=None):
    _update(scene, depsgraph)


def _key_pose(obj, frames, loc, quat, group):
    """Linear keys on location (f, 3) and rotation_quaternion (f, 4) at the given frames."""
    obj.rotation_mode = "QUATERNION"
    obj.location, obj.rotation_quaternion = loc[0], quat[0]
    action = bpy.data.actions.new(obj.name)
    obj.animation_data_create().action = action
    for path_, values in (("location", loc), ("rotation_quaternion", quat)):
        for i in range(values.shape[1]):
            fc = action.fcurves.new(path_, index=i, action_group=group)
            fc.keyframe_points.add(len(frames))
            fc.keyframe_points.foreach_set("co", np.stack([frames, values[:, i]], axis=1).ravel())
            for kp in fc.keyframe_points:  # frames are samples: no overshoot between them
                kp.interpolation = "LINEAR"
            fc.update()


def _key_visible(obj, first, last):
    """Constant keys on hide_render and hide_viewport: the object shows on frames first..last only."""
    obj.hide_render = obj.hide_viewport = first > bpy.context.scene.frame_current or last < bpy.context.scene.frame_current
    action = bpy.data.actions.new(obj.name)
    obj.animation_data_create().action = action
    for attr in ("hide_render", "hide_viewport"):
        fc = action.fcurves.new(attr)
        keys = [(first - 1, 1.0), (first, 0.0), (last + 1, 1.0)]
        fc.keyframe_points.add(len(keys))
        fc.keyframe_points.foreach_set("co", np.array(keys, np.float64).ravel())
        for kp in fc.keyframe_points:
            kp.interpolation = "CONSTANT"
        fc.update()


def _body_objects(run, coll, name, frame_start):
    """One mesh object per body, its rest mesh about the centre of mass, keyed at every frame (linear)."""
    poses = read_bodies_csv(run.bodies_csv)
    if poses["position"].shape[1] != len(run.bodies):
        raise ValueError(f"{run.bodies_csv}: {poses['position'].shape[1]} bodies, but {len(run.bodies)} body files")
    loc, quat = body_keys(poses, run.up_axis)
    frames = frame_start + np.arange(len(loc), dtype=np.float64)
    objs = []
    for k, path in run.bodies:
        mesh = read_mesh(path)
        data = bpy.data.meshes.new(f"{name} body {k}")
        _fill_mesh(data, to_blender_axes(mesh["position"], run.up_axis), mesh["faces"])
        # Smooth within 30 degrees: a sphere looks round, a box keeps its edges.
        if hasattr(data, "use_auto_smooth"):  # Blender < 4.1
            data.use_auto_smooth, data.auto_smooth_angle = True, np.radians(30.0)
        elif hasattr(data, "set_sharp_from_angle"):  # Blender 4.1+
            data.set_sharp_from_angle(angle=np.radians(30.0))
        else:
            data.polygons.foreach_set("use_smooth", np.zeros(len(data.polygons), dtype=bool))
        obj = bpy.data.objects.new(f"{name} body {k}", data)
        coll.objects.link(obj)
        _set_material(obj, neutral_material())
        obj["eddy_folder"], obj["eddy_body"] = run.folder, k
        _key_pose(obj, frames, loc[:, k], quat[:, k], f"body {k}")
        objs.append(obj)
    return objs


def _tank_objects(run, coll, name, frame_start, report):
    """The scene's box, sphere and cylinder walls as meshes (tank_meshes), containers with the see-through
    "eddy tank" material, obstacles with "eddy walls"; walls that move are keyed per frame from their wall
    particles (frames/walls_NNNNN.vtp, a least-squares rigid pose)."""
    from mathutils import Matrix
    if int(run.summary.get("dimension", 3)) != 3:
        return []
    boundaries, why = run.scene_boundaries()
    if boundaries is None:
        report({"WARNING"}, f"eddy: no tank: {why}; the walls' particles are in frames/walls.vtp")
        return []
    objs = []
    poses = {}
    if run.wall_frames:
        first = read_walls_vtp(run.wall_frames[min(run.wall_frames)])[0]
        rest = to_blender_axes(first["position"], run.up_axis).astype(np.float64)
        for k in sorted(run.wall_frames):
            now = to_blender_axes(read_walls_vtp(run.wall_frames[k])[0]["position"], run.up_axis).astype(np.float64)
            poses[k] = now if len(now) == len(rest) else None
    for index, label, pos, faces, container in tank_meshes(boundaries):
        data = bpy.data.meshes.new(f"{name} {label}")
        _fill_mesh(data, pos, faces)
        data.polygons.foreach_set("use_smooth", np.zeros(len(data.polygons), dtype=bool))
        obj = bpy.data.objects.new(f"{name} {label}", data)
        coll.objects.link(obj)
        obj["eddy_folder"], obj["eddy_boundary"] = run.folder, index
        _set_material(obj, neutral_material(see_through_back=container))
        b = boundaries[index]
        moving = "motion" in b or b.get("angular_velocity")
        if moving and not (poses and all(p is not None for p in poses.values())):
            report({"WARNING"}, f"eddy: {obj.name} moves in the run but is shown at rest: its motion is read from "
                                f"{os.path.join(run.folder, 'frames', 'walls_NNNNN.vtp')}, which --format vtk writes")
        elif moving:
            mine = first["object"] == index
            ks = sorted(poses)
            loc, quat = [], []
            for k in ks:
                r, t = rigid_pose(rest[mine], poses[k][mine])
                loc.append(t)
                quat.append(tuple(Matrix(r.tolist()).to_quaternion()))
            quat = np.array(quat)
            for f in range(1, len(quat)):
                if np.dot(quat[f], quat[f - 1]) < 0:
                    quat[f] *= -1
            _key_pose(obj, frame_start + np.array(ks, np.float64), np.array(loc), quat, label)
        objs.append(obj)
    return objs


def load(folder, particles=True, surface=True, walls=True, scene=None, bodies=True, tank=True, report=None,
         whitewater=True, stage=True):
    """Imports the eddy run in `folder` into `scene` (default: the current one): one object per kind that
    the run wrote, in a collection named after the run, animated from scene.frame_start by the add-on's
    frame-change handler (bake() makes it play without the add-on). Sets the scene's fps to the run's
    (when it is a whole number) and frame_end to its last frame, and turns on EEVEE's screen-space
    refraction (the water material). Returns {kind: object}, "bodies": [one object per rigid body] and
    "tank": [the scene's box/sphere/cylinder walls]. report(level set, text) gets warnings (default: print).
    stage: the file renders as it is (stage_for_render: no startup cube, the camera framed, a light, no
    denoiser where the build lacks it); False leaves the rest of the scene alone.
    Raises ValueError naming the file and what is supported when the folder has nothing to import."""
    scene = scene or bpy.context.scene
    report = report or (lambda level, text: print(f"{'/'.join(sorted(level))}: {text}"))
    run = Run(folder)
    _runs[run.folder] = run
    name = run.summary.get("scene", "eddy")
    coll = bpy.data.collections.new(f"eddy {name}")
    scene.collection.children.link(coll)
    objects = {}
    wanted = {"particles": particles, "surface": surface, "walls": walls, "walls_still": walls, "whitewater": whitewater}
    for kind, want in wanted.items():
        if not want or run.file(kind, 0) is None:
            continue
        obj = bpy.data.objects.new(f"{name} {kind}", bpy.data.meshes.new(f"{name} {kind}"))
        coll.objects.link(obj)
        obj["eddy_folder"], obj["eddy_kind"], obj["eddy_frame_start"] = run.folder, kind, scene.frame_start
        if kind == "particles":
            _points_modifier(obj, run.radius)
        elif kind == "surface":
            _set_material(obj, water_material())
        elif kind == "whitewater":
            _whitewater_modifier(obj, run.radius)
        else:
            _set_material(obj, neutral_material())
        objects[kind] = obj
    if bodies and run.bodies_csv:
        objects["bodies"] = _body_objects(run, coll, name, scene.frame_start)
    if tank:
        objects["tank"] = _tank_objects(run, coll, name, scene.frame_start, report)
    if run.fps > 0 and abs(run.fps - round(run.fps)) < 1e-9:
        scene.render.fps, scene.render.fps_base = int(round(run.fps)), 1.0
    count = run.count()
    if "bodies" in objects:
        count = max(count, len(read_bodies_csv(run.bodies_csv)["time"]))
    scene.frame_end = scene.frame_start + max(0, count - 1)
    scene.eevee.use_ssr = scene.eevee.use_ssr_refraction = True
    if eddy_frame_change not in bpy.app.handlers.frame_change_pre:
        bpy.app.handlers.frame_change_pre.append(eddy_frame_change)
    _update(scene)
    if stage:
        stage_for_render(scene)
    return objects


def _factory_cube(obj):
    """True for the untouched cube of Blender's startup file (2 m, at the origin, no modifiers): it encloses a
    tank of a metre, and a render shows only the cube."""
    m = obj.data if obj.type == "MESH" else None
    return (m is not None and obj.name.startswith("Cube") and m.name.startswith("Cube") and len(m.vertices) == 8
            and not obj.modifiers and obj.parent is None and tuple(obj.location) == (0.0, 0.0, 0.0)
            and tuple(obj.scale) == (1.0, 1.0, 1.0) and max(abs(c) for v in m.vertices for c in v.co) == 1.0)


def _factory_world(world):
    """True for the startup file's world: a uniform dark grey background (0.05)."""
    nodes = world.node_tree.nodes if world.use_nodes and world.node_tree else None
    bg = nodes.get("Background") if nodes else None
    colour = tuple(bg.inputs["Color"].default_value)[:3] if bg else tuple(world.color)
    return world.name.startswith("World") and max(abs(c - 0.0508) for c in colour) < 0.01


def stage_for_render(scene):
    """Makes `scene` render the import as it is (issue 45: the documented path rendered the startup cube): the
    startup file's cube removed, the camera framed on the eddy objects (frame_camera), a sun when the scene has
    none, a light sky instead of the startup's dark grey world, and Cycles' denoiser off where Blender was built without OpenImageDenoise (Debian's: rendering
    stopped with "Build without OpenImageDenoiser")."""
    for obj in [o for o in scene.objects if _factory_cube(o)]:
        bpy.data.objects.remove(obj, do_unlink=True)
    frame_camera(scene)
    if not any(o.type == "LIGHT" and o.data.type == "SUN" for o in scene.objects):
        sun = bpy.data.objects.new("eddy sun", bpy.data.lights.new("eddy sun", "SUN"))
        sun.data.energy = 4.0
        sun.rotation_euler = (0.7, 0.2, 0.6)
        scene.collection.objects.link(sun)
    if scene.world is None or _factory_world(scene.world):  # clear water over the startup's dark grey is grey
        world = bpy.data.worlds.new("eddy sky")
        world.use_nodes = True
        world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.6, 0.7, 0.85, 1)
        world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.8
        scene.world = world
    if not getattr(bpy.app.build_options, "openimagedenoise", True) and hasattr(scene, "cycles"):
        scene.cycles.use_denoising = False
        scene.cycles.use_preview_denoising = False


def _particle_sphere():
    """The object a baked particle system instances: an icosphere of radius 1 (scaled by the particle
    size), water material, kept out of renders itself."""
    obj = bpy.data.objects.get("eddy particle")
    if obj is not None:
        return obj
    import bmesh
    mesh = bpy.data.meshes.new("eddy particle")
    bm = bmesh.new()
    bmesh.ops.create_icosphere(bm, subdivisions=1, radius=1.0)
    bm.to_mesh(mesh)
    bm.free()
    mesh.polygons.foreach_set("use_smooth", np.ones(len(mesh.polygons), dtype=bool))
    obj = bpy.data.objects.new("eddy particle", mesh)
    _set_material(obj, water_material())
    obj.hide_render = True  # its instances still render
    return obj


def bake(scene=None, directory=None):
    """Makes the scene's eddy objects play without the add-on (a render farm, blender --factory-startup):
    - particles: a Blender point cache on disk, one .bphys file per frame (index = eddy id, location,
      velocity), read by a particle system (point_cache.use_external) that instances a water icosphere of the
      particle radius; memory holds one frame, whatever the run's length;
    - surface, whitewater and moving walls: one mesh object per frame, shown on its frame only (constant keys on
      hide_render/hide_viewport), kept in the .blend;
    - static walls, tank and bodies: already plain meshes and keys.
    directory: where the caches go, default "//<scene>_bake" next to the .blend (which must be saved: the
    path stays relative, so the .blend and that folder move together). Returns {kind: object(s)}."""
    scene = scene or bpy.context.scene
    if not bpy.data.filepath and (directory is None or directory.startswith("//")):
        raise ValueError("bake: save the .blend first (the caches go next to it, as //<scene>_bake)")
    live = [o for o in scene.objects if o.get("eddy_kind") and o.get("eddy_folder")]
    if not live:
        raise ValueError("bake: no eddy objects to bake in this scene (import an eddy output folder first)")
    baked = {}
    for obj in live:
        run = _runs.get(obj["eddy_folder"]) or Run(obj["eddy_folder"])
        name = run.summary.get("scene", "eddy")
        kind, start = obj["eddy_kind"], int(obj.get("eddy_frame_start", scene.frame_start))
        coll = obj.users_collection[0] if obj.users_collection else scene.collection
        if kind == "particles":
            rel = directory or f"//{bpy.path.clean_name(name)}_bake"
            bpy.data.objects.remove(obj)  # its name goes to the particle system's object
            baked["particles"] = _bake_particles(run, name, coll, start, rel)
        elif kind == "surface" or run.frames.get(kind):
            frames = bpy.data.collections.new(f"{name} {kind} frames")
            coll.children.link(frames)
            objs, files = [], sorted(run.frames[kind].items())
            for j, (k, path) in enumerate(files):
                last = files[j + 1][0] - 1 if j + 1 < len(files) else k
                data = _read(kind, path)
                mesh = bpy.data.meshes.new(f"{name} {kind} {k:05d}")
                _fill_mesh(mesh, to_blender_axes(data["position"], run.up_axis), data.get("faces"))
                for a, values in data.items():
                    if a not in ("position", "faces"):
                        _set_attribute(mesh, a, to_blender_axes(values, run.up_axis) if values.ndim == 2 else values)
                o = bpy.data.objects.new(f"{name} {kind} {k:05d}", mesh)
                o["eddy_folder"] = run.folder
                frames.objects.link(o)
                if kind == "whitewater":  # the same node group and size, the three materials
                    for mat in obj.data.materials:
                        mesh.materials.append(mat)
                    o.modifiers.new("eddy whitewater", "NODES").node_group = obj.modifiers["eddy whitewater"].node_group
                    for key in obj.modifiers["eddy whitewater"].keys():
                        o.modifiers["eddy whitewater"][key] = obj.modifiers["eddy whitewater"][key]
                else:
                    _set_material(o, obj.data.materials[0] if obj.data.materials else water_material())
                _key_visible(o, start + k, start + last if j + 1 < len(files) else 10 ** 6)
                objs.append(o)
            baked[kind] = objs
            bpy.data.objects.remove(obj)
        else:  # static walls: the mesh the handler filled stays, as a plain mesh
            for key in ("eddy_kind", "eddy_file"):
                if key in obj:
                    del obj[key]
            baked[kind] = obj
    scene["eddy_baked"] = True
    return baked


def _bake_particles(run, name, coll, start, directory):
    folder = bpy.path.abspath(directory)
    os.makedirs(folder, exist_ok=True)
    cache = f"{bpy.path.clean_name(name)}_particles"
    for old in os.listdir(folder):  # a previous bake of this run
        if old.startswith(cache + "_") and old.endswith(".bphys"):
            os.remove(os.path.join(folder, old))
    files = sorted(run.frames["particles"].items())
    # First pass: every id's first and last frame. Blender keeps a particle's birth and death times from one
    # frame to the next (it clamps the time of a state it reads to the times it read before), so each id gets
    # constant times: born on the first frame it is in, dead after the last (emitters add ids, outflow
    # removes them); a frame's file lists every id, those not alive at it hidden by these times.
    first, last = np.zeros(0, np.int64), np.zeros(0, np.int64)
    for k, path in files:
        d = read_particles(path)
        index = d["id"].astype(np.int64) if "id" in d else np.arange(len(d["position"]))
        if len(index) and index.max() >= len(first):
            grow = int(index.max()) + 1 - len(first)
            first = np.concatenate([first, np.full(grow, -1, np.int64)])
            last = np.concatenate([last, np.full(grow, -1, np.int64)])
        first[index] = np.where(first[index] < 0, k, first[index])
        last[index] = k
    total = max(len(first), 1)
    never = 1.0e9
    final = files[-1][0] if files else 0
    t0 = np.where(first >= 0, start + first, never).astype(np.float32)
    t1 = np.where((last >= 0) & (last < final), start + last + 1, never + 1).astype(np.float32)
    t0, t1 = np.resize(t0, total), np.resize(t1, total)
    everyone = np.arange(total, dtype=np.uint32)
    for j, (k, path) in enumerate(files):
        d = read_particles(path)
        index = d["id"].astype(np.int64) if "id" in d else np.arange(len(d["position"]))
        pos = np.zeros((total, 3), np.float32)
        vel = np.zeros((total, 3), np.float32)
        pos[index] = to_blender_axes(d["position"], run.up_axis)
        if "velocity" in d:
            vel[index] = to_blender_axes(d["velocity"], run.up_axis)
        write_bphys(os.path.join(folder, f"{cache}_{start + k:06d}_00.bphys"), everyone, pos, vel, t0, t1)
        if j == 0 and start + k != 0:  # frame 0: Blender's info file, which gives the particle count
            write_bphys(os.path.join(folder, f"{cache}_{0:06d}_00.bphys"), everyone, pos, vel, t0, t1)
    emitter = bpy.data.objects.new(f"{name} particles", bpy.data.meshes.new(f"{name} particles"))
    emitter.data.vertices.add(1)
    coll.objects.link(emitter)
    emitter["eddy_folder"] = run.folder
    psys = emitter.modifiers.new("eddy particles", "PARTICLE_SYSTEM").particle_system
    st = psys.settings
    st.name = f"{name} particles"
    st.count, st.frame_start, st.frame_end, st.lifetime = total, start, start, 10 ** 6
    st.emit_from, st.physics_type = "VERT", "NEWTON"  # a point cache needs physics; the cache replaces it
    sphere = _particle_sphere()
    if coll not in sphere.users_collection:  # an object in no collection is not saved with the .blend
        coll.objects.link(sphere)
    try:  # hidden in the viewport but evaluated (hide_viewport would hide its instances there too)
        sphere.hide_set(True)
    except RuntimeError:  # not in the current view layer
        pass
    st.render_type, st.instance_object = "OBJECT", sphere
    st.particle_size, st.size_random = run.radius, 0.0
    st.show_unborn = st.use_dead = False
    st.display_method = "RENDER"
    pc = psys.point_cache
    pc.use_external = True
    pc.filepath = directory
    pc.index = 0
    pc.name = cache  # last: loads the cache
    emitter.modifiers["eddy particles"].show_viewport = True
    emitter.show_instancer_for_render = emitter.show_instancer_for_viewport = False
    return emitter


def scene_bounds(scene, depsgraph=None):
    """The world-space box (lo, hi) of every evaluated object of the eddy collections that renders at the
    current frame (fluid, surface, walls, tank, bodies), particle systems and instances included."""
    depsgraph = depsgraph or bpy.context.evaluated_depsgraph_get()
    los, his = [], []
    for inst in depsgraph.object_instances:
        owner = inst.parent if inst.is_instance and inst.parent else inst.object
        if not owner.original.get("eddy_folder") or inst.object.type != "MESH":
            continue
        m = np.array(inst.matrix_world)
        box = np.array([c[:] for c in inst.object.bound_box])
        w = box @ m[:3, :3].T + m[:3, 3]
        los.append(w.min(axis=0))
        his.append(w.max(axis=0))
    if not los:
        raise ValueError("scene_bounds: no eddy object renders at this frame")
    return np.min(los, axis=0), np.max(his, axis=0)


def frame_camera(scene, camera=None, direction=(0.45, -0.95, 0.55)):
    """Points `camera` (default: the scene's, or a new one) at the eddy objects of the current frame, the
    tank and walls included, with clip_start and clip_end from their size (camera_framing)."""
    from mathutils import Vector
    if camera is None:
        camera = scene.camera
    if camera is None:
        camera = bpy.data.objects.new("eddy camera", bpy.data.cameras.new("eddy camera"))
        scene.collection.objects.link(camera)
        scene.camera = camera
    lo, hi = scene_bounds(scene)
    aspect = scene.render.resolution_x * scene.render.pixel_aspect_x / max(
        1, scene.render.resolution_y * scene.render.pixel_aspect_y)
    loc, forward, near, far = camera_framing(lo, hi, direction, camera.data.angle, aspect)
    camera.location = Vector(loc.tolist())
    camera.rotation_mode = "XYZ"
    camera.rotation_euler = Vector(forward.tolist()).to_track_quat("-Z", "Y").to_euler()
    camera.data.clip_start, camera.data.clip_end = near, far
    return camera


if bpy is not None:
    from bpy_extras.io_utils import ImportHelper

    class ImportEddy(bpy.types.Operator, ImportHelper):
        """Import an eddy output folder (summary.json and frames/) as animated objects"""

        bl_idname = "import_scene.eddy"
        bl_label = "Import eddy output"
        bl_options = {"REGISTER", "UNDO"}
        filename_ext = ".json"
        filter_glob: bpy.props.StringProperty(default="summary.json", options={"HIDDEN"})
        particles: bpy.props.BoolProperty(name="Particles", default=True)
        surface: bpy.props.BoolProperty(name="Surface", default=True)
        walls: bpy.props.BoolProperty(name="Walls", default=True)
        whitewater: bpy.props.BoolProperty(name="Whitewater", description="Spray, foam and bubbles (eddy run "
                                           "--whitewater), one material per type", default=True)
        bodies: bpy.props.BoolProperty(name="Bodies", default=True)
        tank: bpy.props.BoolProperty(name="Tank", description="The scene's box, sphere and cylinder walls", default=True)
        bake: bpy.props.BoolProperty(
            name="Bake", default=True,
            description="Write the particles as a point cache next to the saved .blend and the surfaces as one "
                        "object per frame, so that the .blend plays and renders without the add-on")

        def execute(self, context):
            folder = self.filepath if os.path.isdir(self.filepath) else os.path.dirname(self.filepath)
            try:
                objs = load(folder, self.particles, self.surface, self.walls, context.scene, self.bodies, self.tank,
                            report=self.report, whitewater=self.whitewater)
                if self.bake:
                    if bpy.data.filepath:
                        bake(context.scene)
                    else:
                        self.report({"WARNING"}, "eddy: not baked: save the .blend, then run eddy_blender.bake() "
                                                 "(until then it plays only with the add-on)")
            except (OSError, ValueError) as e:
                self.report({"ERROR"}, str(e))
                return {"CANCELLED"}
            self.report({"INFO"}, f"eddy: {', '.join(k for k, v in objs.items() if v) or 'nothing'} from {folder}")
            return {"FINISHED"}

    def _menu(self, _context):
        self.layout.operator(ImportEddy.bl_idname, text="eddy output folder (summary.json)")


def register():
    bpy.utils.register_class(ImportEddy)
    bpy.types.TOPBAR_MT_file_import.append(_menu)
    if eddy_frame_change not in bpy.app.handlers.frame_change_pre:
        bpy.app.handlers.frame_change_pre.append(eddy_frame_change)


def unregister():
    bpy.types.TOPBAR_MT_file_import.remove(_menu)
    bpy.utils.unregister_class(ImportEddy)
    if eddy_frame_change in bpy.app.handlers.frame_change_pre:
        bpy.app.handlers.frame_change_pre.remove(eddy_frame_change)
