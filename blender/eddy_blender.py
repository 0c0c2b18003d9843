# eddy for Blender: imports an `eddy run` output folder as animated objects (docs/blender.md).
#
#   particles  a point cloud (vertices only) with the attributes velocity, density, pressure and id,
#              shown as spheres of the particle radius by a Geometry Nodes "Mesh to Points" modifier;
#   surface    the reconstructed surface (eddy run --mesh), with velocity on its vertices when the run
#              wrote it (--mesh-format ply --interpolate-attributes velocity: motion blur, foam);
#   walls      the scene's wall models (walls.obj, or walls_NNNNN.obj when they move);
#   bodies     one object per rigid body (bodies/body_KK.obj, its surface about its centre of mass),
#              animated by keyframes on location and rotation_quaternion from bodies.csv, so that a
#              saved .blend plays and renders them without the add-on.
#
# Each object shows the frame of the current Blender frame: a frame-change handler loads the file
# (Blender frame scene.frame_start + k shows eddy frame k; the import sets the scene's fps to the run's).
# Files are read here, not by Blender's importers, so every attribute survives and the up axis is the
# run's (summary.json "up_axis": y-up files are turned to Blender's z up, as its OBJ importer does).
#
# Install: Edit > Preferences > Add-ons > Install... > blender/eddy_blender.py, enable "eddy", then
# File > Import > eddy output folder. From a script (also `blender -b --python`):
#     import eddy_blender; eddy_blender.register(); eddy_blender.load("/path/to/out")
# Needs only Blender's own Python and numpy (bundled with Blender). Tested with Blender 3.4.
bl_info = {
    "name": "eddy fluid output",
    "author": "eddy developers",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "File > Import > eddy output folder",
    "description": "Animated particles (velocity, density, pressure, id), surfaces, walls and rigid bodies of an eddy run",
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


def _vtp_arrays(path):
    """eddy's VTK XML PolyData (.vtp, appended raw, UInt64 headers): {name: array (n, comps)}."""
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
    types = {"Float32": "<f4", "Float64": "<f8", "Int64": "<i8", "UInt32": "<u4", "Int32": "<i4",
             "UInt8": "u1", "UInt16": "<u2"}
    arrays = {}
    for da in root.iter("DataArray"):
        off = underscore + int(da.get("offset"))
        nbytes = int(np.frombuffer(data, "<u8", 1, off)[0])
        a = np.frombuffer(data, types[da.get("type")], nbytes // np.dtype(types[da.get("type")]).itemsize, off + 8)
        comps = int(da.get("NumberOfComponents", "1"))
        arrays[da.get("Name")] = a.reshape(-1, comps) if comps > 1 else a
    return arrays


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
        raise ValueError(f"{path}: not a particle file (.ply, .vtp, .csv)")
    out = {k: np.ascontiguousarray(v, dtype=np.int32 if k == "id" else np.float32) for k, v in out.items()}
    return out


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
    """An eddy output folder: its summary and its frames, per kind ('particles', 'surface', 'walls')."""

    def __init__(self, folder):
        self.folder = os.path.abspath(folder)
        summary = os.path.join(self.folder, "summary.json")
        if not os.path.isfile(summary):
            raise ValueError(f"{self.folder}: no summary.json: not an eddy run folder (eddy run --out FOLDER)")
        with open(summary) as f:
            self.summary = json.load(f)
        if self.summary.get("method") == "shallow_water":
            self.up_axis = self.summary.get("up_axis", "z")
        else:
            self.up_axis = self.summary.get("up_axis", "y")  # runs before up_axis existed wrote y up
        self.radius = float(self.summary.get("particle_radius", 0.01))
        self.fps = float(self.summary.get("fps", 0) or 0)
        self.frames = {"particles": {}, "surface": {}, "walls": {}}
        frames = os.path.join(self.folder, "frames")
        rank = {".ply": 0, ".vtp": 1, ".csv": 2, ".obj": 1}
        for name in sorted(os.listdir(frames)) if os.path.isdir(frames) else []:
            m = re.fullmatch(r"(particles|surface|walls)_(\d+)\.(ply|vtp|csv|obj)", name)
            if m:
                kind, k = m.group(1), int(m.group(2))
                if kind == "walls" and m.group(3) != "obj":
                    continue
                best = self.frames[kind].get(k)
                if best is None or rank[os.path.splitext(name)[1]] < rank[os.path.splitext(best)[1]]:
                    self.frames[kind][k] = os.path.join(frames, name)
        static_walls = os.path.join(frames, "walls.obj")
        self.static_walls = static_walls if os.path.isfile(static_walls) else None
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

    def count(self):
        return max([max(v) + 1 for v in self.frames.values() if v] or [0])

    def file(self, kind, k):
        """The file of `kind` showing eddy frame k: the last one at or before k (walls that stop moving)."""
        files = self.frames[kind]
        if not files:
            return self.static_walls if kind == "walls" else None
        earlier = [i for i in files if i <= k]
        return files[max(earlier)] if earlier else files[min(files)]


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


def _show(obj, run, kind, k):
    path = run.file(kind, k)
    if path is None or obj.get("eddy_file") == path:
        return
    data = read_particles(path) if kind == "particles" else read_mesh(path)
    up = run.up_axis
    _fill_mesh(obj.data, to_blender_axes(data["position"], up), data.get("faces"))
    for name, values in data.items():
        if name in ("position", "faces"):
            continue
        _set_attribute(obj.data, name, to_blender_axes(values, up) if values.ndim == 2 else values)
    obj["eddy_file"] = path


def _points_modifier(obj, radius):
    """Geometry Nodes: Mesh to Points with the particle radius, so that particles render as spheres."""
    group = bpy.data.node_groups.new("eddy particles", "GeometryNodeTree")
    if hasattr(group, "interface"):  # Blender 4
        group.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
        group.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    else:
        group.inputs.new("NodeSocketGeometry", "Geometry")
        group.outputs.new("NodeSocketGeometry", "Geometry")
    nodes, links = group.nodes, group.links
    gin, gout = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
    to_points = nodes.new("GeometryNodeMeshToPoints")
    to_points.inputs["Radius"].default_value = radius
    links.new(gin.outputs[0], to_points.inputs["Mesh"])
    links.new(to_points.outputs["Points"], gout.inputs[0])
    mod = obj.modifiers.new("eddy particles", "NODES")
    mod.node_group = group
    return mod


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
        obj["eddy_folder"], obj["eddy_body"] = run.folder, k
        obj.rotation_mode = "QUATERNION"
        obj.location, obj.rotation_quaternion = loc[0, k], quat[0, k]
        action = bpy.data.actions.new(f"{name} body {k}")
        obj.animation_data_create().action = action
        for path_, values in (("location", loc[:, k]), ("rotation_quaternion", quat[:, k])):
            for i in range(values.shape[1]):
                fc = action.fcurves.new(path_, index=i, action_group=f"body {k}")
                fc.keyframe_points.add(len(frames))
                fc.keyframe_points.foreach_set("co", np.stack([frames, values[:, i]], axis=1).ravel())
                for kp in fc.keyframe_points:  # frames are samples: no overshoot between them
                    kp.interpolation = "LINEAR"
                fc.update()
        objs.append(obj)
    return objs


def load(folder, particles=True, surface=True, walls=True, scene=None, bodies=True):
    """Imports the eddy run in `folder` into `scene` (default: the current one): one object per kind that
    the run wrote, in a collection named after the run, animated from scene.frame_start. Sets the scene's
    fps to the run's (when it is a whole number) and frame_end to its last frame. Returns {kind: object},
    and "bodies": [one object per rigid body] when the run has bodies."""
    scene = scene or bpy.context.scene
    run = Run(folder)
    _runs[run.folder] = run
    name = run.summary.get("scene", "eddy")
    coll = bpy.data.collections.new(f"eddy {name}")
    scene.collection.children.link(coll)
    objects = {}
    wanted = {"particles": particles, "surface": surface, "walls": walls}
    for kind, want in wanted.items():
        if not want or run.file(kind, 0) is None:
            continue
        obj = bpy.data.objects.new(f"{name} {kind}", bpy.data.meshes.new(f"{name} {kind}"))
        coll.objects.link(obj)
        obj["eddy_folder"], obj["eddy_kind"], obj["eddy_frame_start"] = run.folder, kind, scene.frame_start
        if kind == "particles":
            _points_modifier(obj, run.radius)
        objects[kind] = obj
    if bodies and run.bodies_csv:
        objects["bodies"] = _body_objects(run, coll, name, scene.frame_start)
    if run.fps > 0 and abs(run.fps - round(run.fps)) < 1e-9:
        scene.render.fps, scene.render.fps_base = int(round(run.fps)), 1.0
    count = run.count()
    if "bodies" in objects:
        count = max(count, len(read_bodies_csv(run.bodies_csv)["time"]))
    scene.frame_end = scene.frame_start + max(0, count - 1)
    if eddy_frame_change not in bpy.app.handlers.frame_change_pre:
        bpy.app.handlers.frame_change_pre.append(eddy_frame_change)
    _update(scene)
    return objects


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
        bodies: bpy.props.BoolProperty(name="Bodies", default=True)

        def execute(self, context):
            folder = self.filepath if os.path.isdir(self.filepath) else os.path.dirname(self.filepath)
            try:
                objs = load(folder, self.particles, self.surface, self.walls, context.scene, self.bodies)
            except (OSError, ValueError) as e:
                self.report({"ERROR"}, str(e))
                return {"CANCELLED"}
            self.report({"INFO"}, f"eddy: {', '.join(objs) or 'nothing'} from {folder}")
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
