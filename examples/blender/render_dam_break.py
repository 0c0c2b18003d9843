# Renders a dam break's surface and whitewater with Blender's Cycles, headless (docs/blender.md, the picture
# docs/images/render_dam_break.png):
#
#   eddy run dam_break_3d --until 0.6 --fps 10 --mesh --anisotropic --mesh-format ply --whitewater --out out
#   blender -b --factory-startup --python examples/blender/render_dam_break.py -- out 6 dam.png [WIDTH HEIGHT SAMPLES]
#       [--without surface|whitewater] [--whitewater-size R]
#
# Imports the run with the eddy add-on (blender/eddy_blender.py): the surface (anisotropic kernels: flat where
# the water is flat, thin sheets kept) in a glass-like light-blue water (the add-on's water, a stronger blue
# absorption, transparent to shadow rays so that light reaches the floor under it without caustics' noise),
# the whitewater with the add-on's material per type (spray, foam, bubbles), the tank (its near walls drop
# away), a floor, a sun and a soft grey sky; a camera from the front and above the tank's open side.
# Cycles on the CPU (Debian's Blender has no denoiser, so the samples do the smoothing: 960 x 540 at 64
# samples by default). --without KIND leaves the surface or the whitewater out (the test blender.render
# compares the pictures to find each one's pixels). --whitewater-size R draws the whitewater R particle
# radii big (default 1: spray and bubbles 0.5 r, foam 0.8 r wide).
import os
import sys

import bpy
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "blender"))
import eddy_blender  # noqa: E402

USAGE = ("usage: render_dam_break.py -- FOLDER FRAME PICTURE [WIDTH HEIGHT SAMPLES] [--without surface|whitewater] "
         "[--whitewater-size R]")
args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
without, size, positional = set(), 1.0, []
i = 0
while i < len(args):
    if args[i] == "--without" and i + 1 < len(args) and args[i + 1] in ("surface", "whitewater"):
        without.add(args[i + 1])
        i += 1
    elif args[i] == "--whitewater-size" and i + 1 < len(args):
        size = float(args[i + 1])
        i += 1
    elif args[i].startswith("--"):
        sys.exit(f"render_dam_break.py: {args[i]}: not an option; {USAGE}")
    else:
        positional.append(args[i])
    i += 1
if len(positional) not in (3, 6):
    sys.exit(USAGE)
folder, frame, picture = positional[0], int(positional[1]), os.path.abspath(positional[2])
width, height, samples = (int(a) for a in (positional[3:6] if len(positional) == 6 else (960, 540, 64)))

bpy.ops.wm.read_factory_settings(use_empty=True)
eddy_blender.register()
scene = bpy.context.scene
scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = width, height, 100
run = eddy_blender.Run(folder)
for kind in ("surface", "whitewater"):
    if kind not in without and not run.frames[kind]:
        sys.exit(f"render_dam_break.py: {run.folder}/frames: no {kind}_NNNNN files (run eddy with "
                 f"{'--mesh' if kind == 'surface' else '--whitewater'})")
objs = eddy_blender.load(folder, particles=False, walls=True, surface="surface" not in without,
                         whitewater="whitewater" not in without, stage=False)  # its own light and camera below
scene.frame_set(scene.frame_start + frame)
if "whitewater" in objs:
    eddy_blender.set_whitewater_radius(objs["whitewater"], size * run.radius)

# Water: the add-on's (transmission 1, IOR 1.33), bluer, and transparent to shadow rays (the floor under it
# is lit without caustics, which Cycles would need thousands of samples for).
water = eddy_blender.water_material().copy()
water.name = "eddy water (render)"
nodes, links = water.node_tree.nodes, water.node_tree.links
bsdf = nodes["Principled BSDF"]
bsdf.inputs["Base Color"].default_value = (0.7, 0.88, 1.0, 1)
bsdf.inputs["Roughness"].default_value = 0.02
absorb = [n for n in nodes if n.bl_idname == "ShaderNodeVolumeAbsorption"][0]
absorb.inputs["Color"].default_value = (0.3, 0.65, 0.95, 1)
absorb.inputs["Density"].default_value = 6.0  # per metre: 10 cm of water keeps half of the red
path, clear, mix = (nodes.new(t) for t in ("ShaderNodeLightPath", "ShaderNodeBsdfTransparent", "ShaderNodeMixShader"))
links.new(path.outputs["Is Shadow Ray"], mix.inputs["Fac"])
links.new(bsdf.outputs["BSDF"], mix.inputs[1])
links.new(clear.outputs["BSDF"], mix.inputs[2])
for out in (n for n in nodes if n.bl_idname == "ShaderNodeOutputMaterial"):
    links.new(mix.outputs["Shader"], out.inputs["Surface"])
if "surface" in objs:
    objs["surface"].data.materials[0] = water

# The camera: in front of the tank's open side (Blender -y), above, looking at the tank's middle a little
# towards the far wall where the water climbs; the whole tank in the picture.
tank = [o for o in objs.get("tank", []) if o.name.endswith("(box)")]
if tank:
    co = np.array([v.co[:] for v in tank[0].data.vertices])
    lo, hi = co.min(axis=0), co.max(axis=0)
else:
    lo, hi = eddy_blender.scene_bounds(scene)
cam = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
scene.collection.objects.link(cam)
scene.camera = cam
cam.data.lens = 40
loc, forward, near, far = eddy_blender.camera_framing(lo, hi, (-0.3, -1.0, 0.6), cam.data.angle, width / height,
                                                      margin=0.9)
from mathutils import Vector  # noqa: E402
cam.location = Vector(loc.tolist())
cam.rotation_euler = Vector(forward.tolist()).to_track_quat("-Z", "Y").to_euler()
cam.data.clip_start, cam.data.clip_end = near, far

# A floor under the tank, a sun from the front left, a soft grey sky.
size_ = float((hi - lo).max())
centre = (lo + hi) / 2
floor = bpy.data.objects.new("floor", bpy.data.meshes.new("floor"))
s, z = 6 * size_, lo[2] - 1e-3 * size_
floor.data.from_pydata([(centre[0] - s, centre[1] - s, z), (centre[0] + s, centre[1] - s, z),
                        (centre[0] + s, centre[1] + s, z), (centre[0] - s, centre[1] + s, z)], [], [(0, 1, 2, 3)])
scene.collection.objects.link(floor)
stone = bpy.data.materials.new("floor")
stone.use_nodes = True
stone.node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value = (0.42, 0.4, 0.37, 1)
stone.node_tree.nodes["Principled BSDF"].inputs["Roughness"].default_value = 0.8
floor.data.materials.append(stone)
sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
sun.data.energy, sun.data.angle = 3.5, np.radians(3.0)
sun.rotation_euler = (np.radians(40), 0.0, np.radians(-25))
scene.collection.objects.link(sun)
world = bpy.data.worlds.new("sky")
world.use_nodes = True
world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.72, 0.74, 0.78, 1)
world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.7
scene.world = world

scene.render.engine = "CYCLES"
scene.cycles.device = "CPU"
scene.cycles.samples = samples
scene.cycles.use_denoising = False  # Debian's Blender is built without OpenImageDenoise
scene.cycles.caustics_reflective = scene.cycles.caustics_refractive = False
scene.cycles.blur_glossy = 1.0
scene.cycles.max_bounces, scene.cycles.transmission_bounces, scene.cycles.transparent_max_bounces = 12, 12, 16
scene.view_settings.view_transform = "Filmic"
scene.render.image_settings.file_format = "PNG"
scene.render.image_settings.color_mode = "RGB"
scene.render.image_settings.compression = 90
scene.render.filepath = picture
bpy.ops.render.render(write_still=True)
counts = ""
if "whitewater" in objs:
    t = np.zeros(len(objs["whitewater"].data.vertices), np.int32)
    objs["whitewater"].data.attributes["type"].data.foreach_get("value", t)
    counts = ", whitewater " + ", ".join(f"{n} {c}" for n, c in zip(eddy_blender.WHITEWATER_TYPES, np.bincount(t, minlength=3)))
print(f"render_dam_break: {picture} (frame {frame}, {width} x {height}, {samples} samples{counts})")
