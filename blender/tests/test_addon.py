# The Blender add-on, headless: blender -b --factory-startup --python-exit-code 1 --python test_addon.py -- EDDY_CLI
#
# Runs eddy twice on the same scene (y-up files: VTK particles and OBJ surfaces; z-up files: PLY particles
# and PLY surfaces with velocity on their vertices), imports both folders and checks, in Blender's own
# frame: both land on the same coordinates (one up-axis convention, whatever the format); the fluid
# stands upright (the world's height is Blender's z, and it falls along -z); every attribute survives
# with the file's values; the surface's velocity is a weighted average of the particles'; frame
# changes load the right files (moving walls included); a shallow-water surface lies flat; Cycles
# renders a frame; and rigid bodies come in as one keyed object per body (check_bodies). The bake
# (check_bake, check_emitted): a saved, baked .blend rendered by a Blender without the add-on
# (--factory-startup) at frames 1 and 20 in EEVEE gives two different pictures, its particles show (against
# the same scene without them, EEVEE and Cycles), its point cache plays the files' particles by id; the
# water material, the tank, the camera's framing and clips; moving tank walls (check_moving_tank); the
# one-line refusals and --pieces runs (check_messages); whitewater (check_whitewater): the type attribute, one
# material per type, instances per type, the bake. Exit code 1 on the first failure (ctest: blender.addon).
import json
import os
import subprocess
import sys
import tempfile
import time
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
    assert set(a) == {"particles", "surface", "walls", "tank"} == set(b), (a, b)
    assert len(a["tank"]) == 1 and a["tank"][0].data.materials[0].name == "eddy tank"  # the cylinder container
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
    baked = check_bake(tmp)
    check_emitted(tmp)
    check_moving_tank(tmp)
    check_still_and_moving_models(tmp)
    check_messages(tmp)
    whitewater = check_whitewater(tmp)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bodies = check_bodies(tmp)  # last: it reopens a saved .blend
    print(f"blender.addon: OK ({counts}, {bodies} bodies; {baked}; {whitewater}; {tmp})")


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


# ---- The bake: a saved .blend that plays and renders without the add-on (issue 31, item 4) ----------------

# Run inside `blender -b --factory-startup FILE.blend --python CHECK -- SPEC` (no add-on, no handler): at each
# frame, the particle system's living particles (ids and locations) and the surface objects shown, written to
# SPEC["out"] (.npz); with SPEC["cycles"], Cycles pictures of the last frame with and without the particles.
FACTORY_CHECK = r"""
import json, sys
import bpy
import numpy as np
spec = json.loads(sys.argv[sys.argv.index("--") + 1])
scene = bpy.context.scene
handlers = [getattr(h, "__name__", "") for h in bpy.app.handlers.frame_change_pre]
out = {"addon": np.array("eddy_blender" in sys.modules or "eddy_frame_change" in handlers)}
emitter = bpy.data.objects[spec["particles"]]
for f in spec["frames"]:
    scene.frame_set(f)
    ps = emitter.evaluated_get(bpy.context.evaluated_depsgraph_get()).particle_systems[0]
    alive = np.array([p.alive_state == "ALIVE" for p in ps.particles])
    loc = np.zeros(len(ps.particles) * 3, np.float32)
    ps.particles.foreach_get("location", loc)
    out[f"ids_{f}"] = np.nonzero(alive)[0]
    out[f"loc_{f}"] = loc.reshape(-1, 3)[alive]
    # Where the renderer puts them: the instances of the sphere, in particle order.
    out[f"drawn_{f}"] = np.array([np.array(i.matrix_world)[:3, 3] for i in
                                  bpy.context.evaluated_depsgraph_get().object_instances
                                  if i.is_instance and i.parent and i.parent.original == emitter]).reshape(-1, 3)
    out[f"shown_{f}"] = np.array([o.name for o in scene.objects if o.name.startswith(spec["surface"])
                                  and not o.hide_render] or [""])
if spec.get("cycles"):
    scene.frame_set(spec["frames"][-1])
    scene.render.engine = "CYCLES"
    scene.cycles.samples, scene.cycles.device, scene.cycles.use_denoising = 4, "CPU", False
    for name, hide in (("with", False), ("without", True)):
        emitter.hide_render = hide
        scene.render.filepath = spec["cycles"] + f"_{name}.png"
        bpy.ops.render.render(write_still=True)
np.savez(spec["out"], **out)
"""


def factory(blend, *args):
    """blender -b --factory-startup BLEND ARGS: a Blender without the add-on (a render farm)."""
    r = subprocess.run([bpy.app.binary_path, "-b", "--factory-startup", blend, *args], capture_output=True, text=True)
    assert r.returncode == 0 and "Error: Python" not in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
    return r


def factory_check(tmp, blend, spec):
    script = os.path.join(tmp, "factory_check.py")
    with open(script, "w") as f:
        f.write(FACTORY_CHECK)
    spec = dict(spec, out=os.path.join(tmp, os.path.basename(blend) + ".npz"))
    factory(blend, "--python-exit-code", "1", "--python", script, "--", json.dumps(spec))
    got = dict(np.load(spec["out"]))
    assert not got["addon"], "the factory Blender had the add-on"
    return got


def picture(path):
    img = bpy.data.images.load(path)
    w, h = img.size
    px = np.array(img.pixels[:], np.float32).reshape(h, w, 4)[..., :3]
    bpy.data.images.remove(img)
    return px


def differ(a, b, by=0.05):
    """The share of pixels whose colour differs by more than `by` in some channel."""
    return float((np.abs(a - b).max(axis=2) > by).mean())


def timed(f):
    def run(*args):
        t = time.time()
        r = f(*args)
        print(f"blender.addon: {f.__name__} {time.time() - t:.1f} s")
        return r
    return run


@timed
def check_bake(tmp):
    """cube_3d for 0.2 s at 100 fps (21 frames, 15,625 particles, a box tank): imported, baked next to a saved
    .blend, rendered by a Blender without the add-on at frames 1 and 20 (EEVEE, 64 x 48): the two pictures
    differ, the particles show (the last frame without them differs), the point cache plays every particle of
    the files at every frame, one surface object shows per frame; Cycles draws the particles too."""
    run = os.path.join(tmp, "cube")
    eddy("run", "cube_3d", "--until", "0.2", "--fps", "100", "-q", "--threads", "2", "--format", "ply",
         "--mesh", "--mesh-format", "ply", "--out", run)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start = 1
    objs = eddy_blender.load(run)
    assert set(objs) == {"particles", "surface", "tank"}, objs
    # Materials: water (IOR 1.33, full transmission, blue absorption) on particles and surface; the tank.
    water = bpy.data.materials["eddy water"]
    bsdf = water.node_tree.nodes["Principled BSDF"]
    assert abs(bsdf.inputs["IOR"].default_value - 1.33) < 1e-6 and bsdf.inputs["Transmission"].default_value == 1.0
    outputs = {n.target: n for n in water.node_tree.nodes if n.bl_idname == "ShaderNodeOutputMaterial"}
    assert set(outputs) == {"CYCLES", "EEVEE"}
    assert all(n.inputs["Surface"].links[0].from_node == bsdf for n in outputs.values())
    volume = outputs["CYCLES"].inputs["Volume"]
    assert volume.is_linked and volume.links[0].from_node.bl_idname == "ShaderNodeVolumeAbsorption"
    color = volume.links[0].from_node.inputs["Color"].default_value
    assert color[2] > color[1] > color[0], tuple(color)  # keeps blue, absorbs red
    assert objs["surface"].data.materials[0] == water
    group = objs["particles"].modifiers["eddy particles"].node_group
    assert any(n.bl_idname == "GeometryNodeSetMaterial" and n.inputs["Material"].default_value == water
               for n in group.nodes)
    assert any(n.bl_idname == "GeometryNodeInstanceOnPoints" for n in group.nodes)  # EEVEE draws no point clouds
    tank = objs["tank"]
    assert len(tank) == 1 and tank[0].name == "cube_3d tank 0 (box)", tank
    assert tank[0].data.materials[0].name == "eddy tank"
    co = np.array([v.co[:] for v in tank[0].data.vertices])
    # The box [0, 0.6] x [0, 0.8] x [0, 0.6] of y-up cube_3d, in Blender's z-up axes; its faces face inwards.
    assert np.allclose(co.min(axis=0), [0, -0.6, 0], atol=1e-6) and np.allclose(co.max(axis=0), [0.6, 0, 0.8], atol=1e-6)
    assert eddy_blender._outward_volume(co, np.array([p.vertices[:] for p in tank[0].data.polygons])) < 0

    # Framing: the camera sees the tank whole (not just the fluid), nothing clipped near or far.
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector
    scene.render.resolution_x, scene.render.resolution_y = 64, 48
    cam = eddy_blender.frame_camera(scene)
    lo, hi = eddy_blender.scene_bounds(scene)
    assert np.allclose(lo, [0, -0.6, 0], atol=0.03) and np.allclose(hi, [0.6, 0, 0.8], atol=0.03), (lo, hi)
    for corner in np.array(np.meshgrid(*zip(lo, hi))).T.reshape(-1, 3):
        u, v, depth = world_to_camera_view(scene, cam, Vector(corner.tolist()))
        assert 0 <= u <= 1 and 0 <= v <= 1 and cam.data.clip_start < depth < cam.data.clip_end, (corner, u, v, depth)
    # A 24 cm bowl: the near clip stays short of it (Blender's default 0.1 m cut it from the old script's camera).
    loc, forward, near, far = eddy_blender.camera_framing([0, 0, 0], [0.24, 0.24, 0.1])
    nearest = min(float(np.dot(np.array(c) - loc, forward)) for c in np.array(np.meshgrid(
        [0, 0.24], [0, 0.24], [0, 0.1])).T.reshape(-1, 3))
    assert 0 < near < nearest and far > nearest + 0.35, (near, nearest, far)

    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    sun.rotation_euler = (0.6, 0.2, 0.5)
    scene.collection.objects.link(sun)
    world = bpy.data.worlds.new("sky")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.6, 0.7, 0.85, 1)
    scene.world = world
    scene.render.engine = "BLENDER_EEVEE"
    scene.eevee.taa_render_samples = 4
    scene.render.resolution_percentage = 100
    blend = os.path.join(tmp, "bake", "cube.blend")
    os.makedirs(os.path.dirname(blend))
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    baked = eddy_blender.bake(scene)
    bpy.ops.wm.save_mainfile()
    cache = os.path.join(tmp, "bake", "cube_3d_bake")
    files = sorted(os.listdir(cache))
    assert files[0] == "cube_3d_particles_000000_00.bphys" and len(files) == 22, files  # info + 21 frames
    assert len(baked["surface"]) == 21 and baked["particles"].particle_systems[0].point_cache.filepath == "//cube_3d_bake"
    # The particles alone (the surface covers them), and the scene without either: what an invisible point
    # cloud would render.
    for o in baked["surface"]:
        bpy.data.objects.remove(o)
    alone = os.path.join(tmp, "bake", "particles.blend")
    bpy.ops.wm.save_as_mainfile(filepath=alone, copy=True)
    bpy.data.objects.remove(baked["particles"])
    empty = os.path.join(tmp, "bake", "empty.blend")
    bpy.ops.wm.save_as_mainfile(filepath=empty, copy=True)

    # A Blender without the add-on renders frames 1 and 20 (the render farm's command line).
    factory(blend, "-o", "//cube_###", "-f", "1", "-f", "20")
    factory(alone, "-o", "//alone_###", "-f", "20")
    factory(empty, "-o", "//empty_###", "-f", "20")
    first, last, particles, bare = (picture(os.path.join(tmp, "bake", n)) for n in
                                    ("cube_001.png", "cube_020.png", "alone_020.png", "empty_020.png"))
    moved, shown, surface = differ(first, last), differ(particles, bare), differ(last, bare)
    assert moved > 0.03, f"frames 1 and 20 look the same ({moved:.1%} of the pixels differ)"
    assert shown > 0.03, f"the particles do not show ({shown:.1%} of the pixels differ from the scene without them)"
    assert surface > 0.03, f"the surface does not show ({surface:.1%} of the pixels differ from the scene without it)"

    # The cache plays the files' particles, by id, at the files' positions (Blender's axes); one surface per frame.
    got = factory_check(tmp, blend, {"particles": "cube_3d particles", "surface": "cube_3d surface",
                                     "frames": [1, 11, 20]})
    for f in (1, 11, 20):
        d = eddy_blender.read_particles(os.path.join(run, "frames", f"particles_{f - 1:05d}.ply"))
        order = np.argsort(d["id"])
        assert np.array_equal(got[f"ids_{f}"], d["id"][order]), f
        want = eddy_blender.to_blender_axes(d["position"], "y")[order]
        assert np.abs(got[f"loc_{f}"] - want).max() < 1e-6, (f, np.abs(got[f"loc_{f}"] - want).max())
        assert np.abs(got[f"drawn_{f}"] - want).max() < 1e-6, (f, np.abs(got[f"drawn_{f}"] - want).max())
        assert list(got[f"shown_{f}"]) == [f"cube_3d surface {f - 1:05d}"], got[f"shown_{f}"]
    factory_check(tmp, alone, {"particles": "cube_3d particles", "surface": "-", "frames": [20],
                               "cycles": os.path.join(tmp, "bake", "cycles")})
    cycles = differ(*(picture(os.path.join(tmp, "bake", f"cycles_{n}.png")) for n in ("with", "without")))
    assert cycles > 0.03, f"Cycles does not draw the particles ({cycles:.1%})"
    return (f"baked 21 frames, factory-startup renders: frames 1/20 differ in {moved:.0%} of the pixels, particles "
            f"change {shown:.0%} of the empty scene's (EEVEE), {cycles:.0%} (Cycles), the surface {surface:.0%}")


@timed
def check_emitted(tmp):
    """tap_into_bowl_3d (an emitter: the particle count grows from 0; a bowl model and a plate): the baked cache
    shows exactly the particles of each frame's file; the bowl (walls.obj) and the plate come in."""
    run = os.path.join(tmp, "bowl")
    eddy("run", "tap_into_bowl_3d", "--until", "0.3", "--fps", "50", "-q", "--threads", "2", "--out", run)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start = 1
    objs = eddy_blender.load(run, surface=False)
    assert [o.name for o in objs["tank"]] == ["tap_into_bowl_3d wall 0 (box)"], objs["tank"]
    assert objs["tank"][0].data.materials[0].name == "eddy walls"  # a solid plate: opaque both ways
    assert objs["walls"].data.materials[0].name == "eddy walls" and len(objs["walls"].data.polygons) > 100
    blend = os.path.join(tmp, "bake", "bowl.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    eddy_blender.bake(scene)
    bpy.ops.wm.save_mainfile()
    frames = [8, 16, 15, 5]  # jumps forth and back, as a render farm does
    got = factory_check(tmp, blend, {"particles": "tap_into_bowl_3d particles", "surface": "-", "frames": frames})
    counts = []
    for f in frames:
        d = eddy_blender.read_particles(os.path.join(run, "frames", f"particles_{f - 1:05d}.vtp"))
        assert np.array_equal(got[f"ids_{f}"], np.sort(d["id"])), (f, len(got[f"ids_{f}"]), len(d["id"]))
        want = eddy_blender.to_blender_axes(d["position"], "y")[np.argsort(d["id"])]
        # Drawn where the file has them (a particle's first frame included), not only listed there.
        assert got[f"drawn_{f}"].shape == want.shape and np.abs(got[f"drawn_{f}"] - want).max() < 1e-6, f
        counts.append(len(d["id"]))
    assert counts[3] < counts[0] < counts[2] < counts[1], counts


@timed
def check_moving_tank(tmp):
    """wave_maker_3d: its paddle (a solid box with keyframed motion) is keyed from its wall particles
    (walls_NNNNN.vtp): at frame 5 it has moved as they have, about 0.016 m along x (the scene's keys: 0.08 m
    in 0.5 s), without turning."""
    run = os.path.join(tmp, "wave")
    eddy("run", "wave_maker_3d", "--until", "0.1", "--fps", "50", "-q", "--threads", "2", "--out", run)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start = 1
    objs = eddy_blender.load(run, particles=False)
    paddle = [o for o in objs["tank"] if o.name.endswith("wall 1 (box)")][0]
    assert paddle.animation_data and paddle.animation_data.action
    scene.frame_set(6)
    w0, w5 = (eddy_blender.read_walls_vtp(os.path.join(run, "frames", f"walls_{k:05d}.vtp"))[0] for k in (0, 5))
    mine = w0["object"] == 1
    moved = eddy_blender.to_blender_axes(w5["position"][mine] - w0["position"][mine], "y").mean(axis=0)
    assert np.abs(np.array(paddle.location) - moved).max() < 1e-6, (tuple(paddle.location), moved)
    # The scene's keys (linear, 0.08 m in 0.5 s), at the frame's time (the step nearest 0.1 s).
    where = tuple(paddle.location)
    assert abs(where[0] - 0.016) < 5e-4 and np.abs(np.array(where)[1:]).max() < 1e-6, where
    assert abs(paddle.rotation_quaternion[0]) > 1 - 1e-6
    # --pieces: walls_NNNNN.vtp holds the moving walls alone (walls.vtp the others, once); the paddle is keyed alike.
    pieces = os.path.join(tmp, "wave_pieces")
    eddy("run", "wave_maker_3d", "--until", "0.1", "--fps", "50", "-q", "--threads", "2", "--out", pieces, "--pieces")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.frame_start = 1
    objs = eddy_blender.load(pieces, particles=False)
    other = [o for o in objs["tank"] if o.name.endswith("wall 1 (box)")][0]
    bpy.context.scene.frame_set(6)
    assert np.abs(np.array(other.location) - np.array(where)).max() < 1e-6, (tuple(other.location), where)


@timed
def check_still_and_moving_models(tmp):
    """mixer_3d with a second, still paddle above the water, run with --pieces: the still model comes from
    walls.obj (objs["walls_still"]), the turning one from walls_NNNNN.obj (objs["walls"]), and together they
    are the models a run without --pieces writes every frame."""
    scene_file = os.path.join(tmp, "two_paddles.json")
    paddle = os.path.join(HERE, "..", "..", "scenes", "models", "paddle.ply")
    doc = json.load(open(os.path.join(HERE, "..", "..", "scenes", "mixer_3d.json")))
    doc["boundaries"][1]["file"] = paddle
    doc["boundaries"].append({"shape": "mesh", "file": paddle, "scale": 0.5, "translate": [0, 0.09, 0], "solid": True})
    json.dump(doc, open(scene_file, "w"))
    runs = {}
    for label, extra in (("pieces", ["--pieces"]), ("whole", [])):
        runs[label] = os.path.join(tmp, f"paddles_{label}")
        eddy("run", scene_file, "--until", "0.1", "--fps", "30", "-q", "--threads", "2", "--out", runs[label], *extra)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start = 1
    a = eddy_blender.load(runs["pieces"], particles=False, tank=False)
    b = eddy_blender.load(runs["whole"], particles=False, tank=False)
    assert "walls_still" not in b and a["walls_still"]["eddy_file"].endswith("walls.obj"), a["walls_still"]["eddy_file"]
    still, turning, both = (verts(o) for o in (a["walls_still"], a["walls"], b["walls"]))
    assert len(still) == len(turning) and len(still) + len(turning) == len(both), (len(still), len(turning), len(both))
    assert still[:, 2].min() > 0.095, still[:, 2].min()  # above the water (Blender's z up), where it was put
    first = turning.copy()
    scene.frame_set(4)
    assert a["walls"]["eddy_file"].endswith("walls_00003.obj") and np.abs(verts(a["walls"]) - first).max() > 1e-3
    assert np.abs(verts(a["walls_still"]) - still).max() == 0


@timed
def check_messages(tmp):
    """What the add-on cannot import is said in one line naming the file and what it reads; --pieces runs import."""
    pieces, whole = os.path.join(tmp, "pieces"), os.path.join(tmp, "whole")
    for out, extra in ((pieces, ["--pieces"]), (whole, [])):
        eddy("run", "cube_3d", "--steps", "3", "-q", "--threads", "2", "--out", out, *extra)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    a = eddy_blender.load(pieces, tank=False)
    b = eddy_blender.load(whole, tank=False)
    assert a["particles"]["eddy_file"].endswith(".pvtp"), a["particles"]["eddy_file"]
    pa, pb = attribute(a["particles"], "id"), attribute(b["particles"], "id")
    assert len(pa) == 15625 and np.array_equal(np.sort(pa), np.sort(pb))
    assert np.array_equal(verts(a["particles"])[np.argsort(pa)], verts(b["particles"])[np.argsort(pb)])

    def refused(folder, *words):
        try:
            eddy_blender.load(folder)
        except ValueError as e:
            assert all(w in str(e) for w in words), (str(e), words)
        else:
            raise AssertionError(f"{folder}: imported")
        try:  # the operator reports it as an ERROR (which a script calling it gets as a RuntimeError)
            bpy.ops.import_scene.eddy(filepath=os.path.join(folder, "summary.json"))
        except RuntimeError as e:
            assert str(e).startswith("Error: ") and all(w in str(e) for w in words), str(e)
        else:
            raise AssertionError(f"{folder}: the operator did not report an error")

    grid = os.path.join(tmp, "grid")
    eddy("run", "shallow_lake_at_rest", "--steps", "2", "-q", "--out", grid)  # .vti grids only
    refused(grid, "frames", ".vti", "--format obj")
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty)
    refused(empty, "summary.json", "eddy run --out")
    nothing = os.path.join(tmp, "nothing")
    os.makedirs(nothing)
    with open(os.path.join(nothing, "summary.json"), "w") as f:
        f.write('{"scene": "x", "method": "wcsph"}')
    refused(nothing, "no particle or surface frames", "--format")
    # Not saved yet: the bake says where it writes.
    bpy.ops.wm.read_factory_settings(use_empty=True)
    eddy_blender.load(whole, tank=False)
    try:
        eddy_blender.bake()
    except ValueError as e:
        assert "save the .blend first" in str(e), str(e)
    else:
        raise AssertionError("baked an unsaved .blend")


@timed
def check_whitewater(tmp):
    """eddy run --whitewater (dam_break_3d at r = 0.01 m, 0.6 s, 10 fps): the whitewater object holds each frame's
    points with the files' type (0 spray, 1 foam, 2 bubble), id and positions (Blender's axes); all three types
    occur in this run and come in; three materials (spray, foam, bubbles), one per type, drawn as one icosphere
    instance per point in its type's material and size (foam flattened along z); baked, one object per frame
    shown on its frame, with the same types."""
    run = os.path.join(tmp, "whitewater")
    eddy("run", "dam_break_3d", "--set", "particle_radius=0.01", "--until", "0.6", "--fps", "10", "-q", "--threads", "2",
         "--whitewater", "--mesh", "--mesh-format", "ply", "--up", "z", "--out", run)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start = 1
    objs = eddy_blender.load(run, particles=False)
    assert "whitewater" in objs and "surface" in objs, objs
    ww = objs["whitewater"]
    names = ["eddy spray", "eddy foam", "eddy bubbles"]
    assert [m.name for m in ww.data.materials] == names, [m.name for m in ww.data.materials]
    group = ww.modifiers["eddy whitewater"].node_group
    assert sorted(n.inputs["Material"].default_value.name for n in group.nodes
                  if n.bl_idname == "GeometryNodeSetMaterial") == sorted(names)
    bubbles = bpy.data.materials["eddy bubbles"].node_tree.nodes["Principled BSDF"]
    assert 0 < bubbles.inputs["Alpha"].default_value < 1  # slightly transparent
    r = eddy_blender.Run(run).radius
    seen, frames = set(), sorted(eddy_blender.Run(run).frames["whitewater"])
    assert frames == list(range(7)), frames
    for k in frames:
        scene.frame_set(scene.frame_start + k)
        path = os.path.join(run, "frames", f"whitewater_{k:05d}.ply")
        assert ww["eddy_file"] == path, ww["eddy_file"]
        d = eddy_blender.read_whitewater(path)
        assert np.array_equal(attribute(ww, "type"), d["type"]) and np.array_equal(attribute(ww, "id"), d["id"]), k
        assert np.array_equal(verts(ww), d["position"]), k  # --up z: as in the file
        assert np.array_equal(attribute(ww, "velocity"), d["velocity"])
        seen |= set(attribute(ww, "type").tolist())
        # One instance per point, in its type's material and size.
        got = {}
        for inst in bpy.context.evaluated_depsgraph_get().object_instances:
            if inst.is_instance and inst.parent and inst.parent.original == ww:
                mat = [m.name for m in inst.object.data.materials if m]
                assert len(mat) == 1, mat
                got.setdefault(mat[0], []).append(tuple(inst.matrix_world.to_scale()))
        for t, name in enumerate(names):
            n = int((d["type"] == t).sum())
            assert len(got.get(name, [])) == n, (k, name, len(got.get(name, [])), n)
            size, flat = eddy_blender.WHITEWATER_LOOK[eddy_blender.WHITEWATER_TYPES[t]]
            if n:
                assert np.allclose(got[name], [(size * r, size * r, size * flat * r)], rtol=1e-5), (name, got[name][0])
    assert seen == {0, 1, 2}, f"the run's whitewater has only the types {sorted(seen)}"
    # Baked: one object per frame, shown on its frame, with the frame's types and the three materials.
    blend = os.path.join(tmp, "bake", "whitewater.blend")
    os.makedirs(os.path.dirname(blend), exist_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    baked = eddy_blender.bake(scene)["whitewater"]
    assert len(baked) == len(frames), baked
    for k in (6, 2):
        scene.frame_set(scene.frame_start + k)
        shown = [o for o in baked if not o.hide_render]
        assert [o.name for o in shown] == [f"dam_break_3d whitewater {k:05d}"], [o.name for o in shown]
        d = eddy_blender.read_whitewater(os.path.join(run, "frames", f"whitewater_{k:05d}.ply"))
        assert np.array_equal(attribute(shown[0], "type"), d["type"]), k
        assert [m.name for m in shown[0].data.materials] == names
        assert shown[0].modifiers["eddy whitewater"].node_group == group
    counts = np.bincount(d["type"], minlength=3)
    return f"whitewater: 3 types, 3 materials (frame 2: {counts[0]} spray, {counts[1]} foam, {counts[2]} bubbles)"


try:
    main()
except Exception:  # noqa: BLE001 - report and fail the ctest
    traceback.print_exc()
    sys.exit(1)
