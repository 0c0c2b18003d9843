# The Blender add-on, headless: blender -b --factory-startup --python-exit-code 1 --python test_addon.py -- EDDY_CLI
#
# Runs eddy twice on the same scene (y-up files: VTK particles and OBJ surfaces; z-up files: PLY particles
# and PLY surfaces with velocity on their vertices), imports both folders and checks, in Blender's own
# frame: both land on the same coordinates (one up-axis convention, whatever the format); the fluid
# stands upright (the world's height is Blender's z, and it falls along -z); every attribute survives
# with the file's values; the surface's velocity is a weighted average of the particles'; frame
# changes load the right files (moving walls included); a shallow-water surface lies flat; and Cycles
# renders a frame. Exit code 1 on the first failure (ctest: blender.addon).
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
    print(f"blender.addon: OK ({frames} frames, {len(p)} particles, {len(verts(a['surface']))} surface vertices; {tmp})")


try:
    main()
except Exception:  # noqa: BLE001 - report and fail the ctest
    traceback.print_exc()
    sys.exit(1)
