# The Blender add-on, headless: blender -b --factory-startup --python-exit-code 1 --python test_addon.py -- EDDY_CLI
#
# Runs eddy twice on the same scene (y-up files: VTK particles and OBJ surfaces; z-up files: PLY particles
# and PLY surfaces with velocity on their vertices), imports both folders and checks, in Blender's own
# frame: both land on the same coordinates (one up-axis convention, whatever the format); the fluid
# stands upright (the world's height is Blender's z, and it falls along -z); every attribute survives
# with the file's values; the surface's velocity is a weighted average of the particles'; frame
# changes load the right files (moving walls included); a shallow-water surface lies flat; Cycles
# renders a frame; and rigid bodies come in as one keyed object per body (check_bodies). Exit code 1 on the first failure (ctest: blender.addon).
import os
import subprocess
import sys
import tempfile
import traceback

import bpy
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import eddy_blender  # noqa: E402

EDDY = sys.argv[sys.argv.index("--") + 1]


def eddy(*args):
    r = subprocess.run([EDDY, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


def verts(obj):
    a = np.zeros(len(obj.data.vertices) * 3, np.float32)
    obj.data.vertices.foreach_get("co", a)
    return a.reshape(-1, 3)


def attribute(obj, name):
    at = obj.data.attributes[name]
    if at.data_type == "FLOAT_VECTOR":
        a = np.zeros(len(at.data) * 3, np.float32)
        at.data.foreach_get("vector", a)
        return a.reshape(-1, 3)
    a = np.zeros(len(at.data), np.int32 if at.data_type == "INT" else np.float32)
    at.data.foreach_get("value", a)
    return a


def main():
    tmp = tempfile.mkdtemp(prefix="eddy-blender-")
    y_run, z_run, lake = (os.path.join(tmp, n) for n in ("y", "z", "lake"))
    common = ["run", "mixer_3d", "--until", "0.1", "--fps", "30", "-q", "--threads", "2", "--mesh"]
    eddy(*common, "--out", y_run, "--format", "vtk")
    eddy(*common, "--out", z_run, "--format", "ply", "--mesh-format", "ply", "--interpolate-attributes", "velocity",
         "--up", "z")

    bpy.ops.wm.read_factory_settings(use_empty=True)
    eddy_blender.register()
    scene = bpy.context.scene
    scene.frame_start = 1
    a = eddy_blender.load(y_run)
    b = eddy_blender.load(z_run)
    assert set(a) == {"particles", "surface", "walls"} == set(b), (a, b)
    run = eddy_blender.Run(y_run)
    assert run.up_axis == "y" and eddy_blender.Run(z_run).up_axis == "z"
    frames = run.count()
    assert frames == 4 and scene.frame_end == 4 and scene.render.fps == 30, (frames, scene.frame_end, scene.render.fps)

    for k in range(frames):
        scene.frame_set(scene.frame_start + k)
        # The same particles in the same place, from VTK y-up and PLY z-up files.
        assert a["particles"]["eddy_file"].endswith(f"particles_{k:05d}.vtp"), a["particles"]["eddy_file"]
        assert b["particles"]["eddy_file"].endswith(f"particles_{k:05d}.ply")
        pa, pb = verts(a["particles"]), verts(b["particles"])
        assert pa.shape == pb.shape and np.array_equal(pa, pb), k
        for name in ("velocity", "density", "pressure", "id"):
            assert np.array_equal(attribute(a["particles"], name), attribute(b["particles"], name)), name
        # In Blender the world's height (file y of the y-up run) is z.
        raw = eddy_blender.read_particles(a["particles"]["eddy_file"])
        assert np.array_equal(pa[:, 2], raw["position"][:, 1]) and np.array_equal(pa[:, 1], -raw["position"][:, 2])
        assert np.array_equal(attribute(a["particles"], "id"), raw["id"])
        # The same surface (OBJ keeps 7 digits); only the z-up PLY carries velocity.
        sa, sb = verts(a["surface"]), verts(b["surface"])
        assert sa.shape == sb.shape and np.abs(sa - sb).max() < 1e-6, k
        assert len(a["surface"].data.polygons) == len(b["surface"].data.polygons) > 100
        assert "velocity" in b["surface"].data.attributes and "velocity" not in a["surface"].data.attributes
        # A Shepard average of particle velocities: inside their range, component by component.
        vs, vp = attribute(b["surface"], "velocity"), attribute(b["particles"], "velocity")
        assert np.all(vs.min(axis=0) >= vp.min(axis=0) - 1e-6) and np.all(vs.max(axis=0) <= vp.max(axis=0) + 1e-6)
        # The stirrer moves: its walls follow the frames.
        assert a["walls"]["eddy_file"].endswith(f"walls_{k:05d}.obj"), a["walls"]["eddy_file"]
        assert np.abs(verts(a["walls"]) - verts(b["walls"])).max() < 1e-6
    # Upright: the fluid rests on the floor at Blender z ~ 0 and falls along -z.
    scene.frame_set(scene.frame_start + frames - 1)
    p, v = verts(a["particles"]), attribute(a["particles"], "velocity")
    zmin = p[:, 2].min()
    assert abs(zmin - run.radius) < 2 * run.radius, zmin
    assert v[:, 2].mean() < 0 and abs(v[:, 2].mean()) > abs(v[:, 1].mean()), v.mean(axis=0)
    vs = attribute(b["surface"], "velocity")
    assert vs[:, 2].mean() < 0, vs.mean(axis=0)

    # A shallow-water surface (z-up world, y-up OBJ by default) lies flat in Blender.
    eddy("run", "shallow_lake_at_rest", "--steps", "2", "--format", "obj", "-q", "--out", lake)
    c = eddy_blender.load(lake, particles=False, walls=False)
    s = verts(c["surface"])
    ext = s.max(axis=0) - s.min(axis=0)
    assert ext[2] < 0.2 * min(ext[0], ext[1]), ext

    # The .vdb of `eddy mesh --sdf`: Blender's Volume to Mesh modifier finds its default grid, "density",
    # and at threshold 0.5 (eddy's iso) gives eddy's surface (bounding boxes within a particle radius).
    frame = os.path.join(y_run, "frames", "particles_00002.vtp")
    vdb, ply = os.path.join(tmp, "s.vdb"), os.path.join(tmp, "s.ply")
    eddy("mesh", frame, "--out", ply, "--sdf", vdb)
    bpy.ops.object.volume_import(filepath=vdb)
    volume = bpy.context.active_object
    holder = bpy.data.objects.new("from vdb", bpy.data.meshes.new("from vdb"))
    scene.collection.objects.link(holder)
    mod = holder.modifiers.new("volume to mesh", "VOLUME_TO_MESH")
    mod.object = volume
    assert mod.grid_name == "density"  # Blender's default: no step needed
    mod.threshold = 0.5
    evaluated = holder.evaluated_get(bpy.context.evaluated_depsgraph_get()).to_mesh()
    got = np.array([v.co[:] for v in evaluated.vertices], np.float32)
    # Blender reads a .vdb's coordinates as they are (z up): this one has the particles' axes (y up).
    ref = eddy_blender.read_mesh(ply)["position"]
    assert len(got) > 100, len(got)
    assert np.abs(got.min(axis=0) - ref.min(axis=0)).max() < run.radius and \
        np.abs(got.max(axis=0) - ref.max(axis=0)).max() < run.radius, (got.min(axis=0), ref.min(axis=0))

    # Cycles renders the imported frame (a camera looking at the mixer, a sun, a 64 x 48 picture).
    bpy.data.collections.remove(bpy.data.collections[-1])
    scene.frame_set(scene.frame_start + 2)
    cam = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    scene.collection.objects.link(cam)
    centre = verts(a["particles"]).mean(axis=0)
    cam.location = (centre[0], centre[1] - 1.2, centre[2] + 0.6)
    direction = centre - np.array(cam.location)
    cam.rotation_euler = (np.arctan2(np.hypot(direction[0], direction[1]), -direction[2]), 0.0,
                          np.arctan2(direction[0], -direction[1]) + np.pi)
    scene.camera = cam
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    scene.collection.objects.link(sun)
    scene.render.engine = "CYCLES"
    scene.cycles.samples = 4
    scene.cycles.device = "CPU"
    scene.cycles.use_denoising = False  # Debian's Blender is built without OpenImageDenoise
    scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 64, 48, 100
    scene.render.filepath = os.path.join(tmp, "frame.png")
    bpy.ops.render.render(write_still=True)
    img = bpy.data.images.load(scene.render.filepath)
    px = np.array(img.pixels[:]).reshape(48, 64, 4)
    assert px[..., :3].std() > 0.01, "the picture is uniform"
    counts = f"{frames} frames, {len(p)} particles, {len(verts(a['surface']))} surface vertices"
    bodies = check_bodies(tmp)  # last: it reopens a saved .blend
    print(f"blender.addon: OK ({counts}, {bodies} bodies; {tmp})")


# A tank with a spinning box, a sphere and a cylinder (issue 30), 0.2 s at 20 fps.
BODIES_SCENE = """{"name": "addon_bodies", "dimension": 3, "method": "dfsph", "particle_radius": 0.02,
  "gravity": [0, -9.81, 0], "duration": 0.2, "output": {"fps": 20, "formats": ["ply"]},
  "boundaries": [{"shape": "box", "min": [0, 0, 0], "max": [0.6, 0.5, 0.6]}],
  "bodies": [{"shape": "box", "min": [0.15, 0.2, 0.15], "max": [0.35, 0.3, 0.3], "density": 500,
              "angular_velocity": [0, 2, 1]},
             {"shape": "sphere", "center": [0.45, 0.35, 0.45], "radius": 0.07, "density": 300, "velocity": [0.2, 0, 0]},
             {"shape": "cylinder", "center": [0.45, 0.3, 0.15], "radius": 0.05, "height": 0.12, "axis": [1, 0, 0],
              "density": 400}],
  "fluids": [{"shape": "box", "min": [0, 0, 0], "max": [0.6, 0.16, 0.6]}]}"""


def world_verts(obj):
    m = np.array(obj.matrix_world)
    v = verts(obj).astype(np.float64)
    return v @ m[:3, :3].T + m[:3, 3]


def check_bodies(tmp):
    """Rigid bodies: one object per body from bodies/body_KK.obj, keyed (location, rotation_quaternion) at every
    frame, y-up and --up z runs alike; at every frame the posed mesh is the run's frames/bodies_NNNNN.vtp in
    Blender's axes; saved and reopened with the add-on's handler gone, the .blend still plays them."""
    scene_file = os.path.join(tmp, "bodies.json")
    with open(scene_file, "w") as f:
        f.write(BODIES_SCENE)
    runs = {up: os.path.join(tmp, f"bodies_{up}") for up in ("y", "z")}
    for up, out in runs.items():
        eddy("run", scene_file, "-q", "--threads", "2", "--out", out, "--up", up)
    scene = bpy.context.scene  # (a scene made here would not be evaluated by frame_set in the background)
    scene.frame_start = 11
    got = {up: eddy_blender.load(out, particles=False, walls=False, scene=scene) for up, out in runs.items()}
    n = 3
    for up in runs:
        objs = got[up]["bodies"]
        assert len(objs) == n, (up, objs)
        for k, obj in enumerate(objs):
            assert obj.rotation_mode == "QUATERNION" and obj.animation_data and obj.animation_data.action
            curves = {(c.data_path, c.array_index): c for c in obj.animation_data.action.fcurves}
            assert set(curves) == {("location", i) for i in range(3)} | {("rotation_quaternion", i) for i in range(4)}
            for c in curves.values():
                assert len(c.keyframe_points) == 5 and c.keyframe_points[0].co[0] == 11, (k, len(c.keyframe_points))
    assert scene.frame_end == 15, scene.frame_end
    apart = 0.0
    for i in range(5):
        scene.frame_set(11 + i)
        for up, out in runs.items():
            vtp = eddy_blender._vtp_arrays(os.path.join(out, "frames", f"bodies_{i:05d}.vtp"))
            want = eddy_blender.to_blender_axes(vtp["Points"].reshape(-1, 3), up).astype(np.float64)
            placed = np.concatenate([world_verts(o) for o in got[up]["bodies"]])
            assert placed.shape == want.shape and np.abs(placed - want).max() < 2e-5, (up, i, np.abs(placed - want).max())
        apart = max(apart, np.abs(world_verts(got["y"]["bodies"][0]) - world_verts(got["z"]["bodies"][0])).max())
        assert apart < 2e-5, apart  # y-up and z-up files: the same bodies in Blender
    # Upright: the spinning box's centre of mass (world y = 0.25) is Blender's z.
    scene.frame_set(11)
    box = got["y"]["bodies"][0]
    assert abs(box.location[2] - 0.25) < 1e-6 and abs(box.location[1] + 0.225) < 1e-6, tuple(box.location)
    first = world_verts(box)
    scene.frame_set(15)
    last = world_verts(box)
    assert np.abs(last - first).max() > 0.005, "the box did not move"

    # Saved, reopened without the add-on's handler: the keys alone play the bodies.
    box_name = box.name
    blend = os.path.join(tmp, "bodies.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    eddy_blender.unregister()  # the handler and the importer gone: only the keys remain
    bpy.ops.wm.open_mainfile(filepath=blend)
    assert not any(getattr(h, "__name__", "") == "eddy_frame_change" for h in bpy.app.handlers.frame_change_pre)
    scene = bpy.context.scene
    box = bpy.data.objects[box_name]
    scene.frame_set(11)
    assert np.abs(world_verts(box) - first).max() < 1e-6, "the reopened .blend plays another pose"
    scene.frame_set(15)
    assert np.abs(world_verts(box) - last).max() < 1e-6, "the reopened .blend plays another pose"
    return n


try:
    main()
except Exception:  # noqa: BLE001 - report and fail the ctest
    traceback.print_exc()
    sys.exit(1)
