# Renders one frame of an eddy run with Blender, headless (docs/blender.md):
#
#   eddy run dam_break_3d --until 0.6 --fps 10 --mesh --mesh-format ply --interpolate-attributes velocity --up z --out out
#   blender -b --factory-startup --python examples/blender/render_frame.py -- out 5 frame.png [width height samples]
#       [--engine cycles|eevee] [--particles] [--blend scene.blend]
#
# Imports the folder with the eddy add-on (blender/eddy_blender.py): the surface (or, with --particles or
# when the run wrote no surface, the particles as spheres) in the add-on's water material, the tank and
# wall models in its neutral material, the rigid bodies. Where the surface carries velocity, its colour
# whitens where it moves fast (foam). A floor under the scene, a sky, a sun, and a camera framing the whole
# scene at frame N, tank and walls included, with its near clip from the scene's size (a 24 cm bowl is not
# cut). Renders with Cycles on the CPU (default) or EEVEE.
# --blend FILE also saves the scene as FILE, baked (eddy_blender.bake: particles as a point cache in
# FILE's folder, surfaces as one object per frame), so that `blender -b --factory-startup FILE -f N`
# renders any frame without the add-on.
import os
import sys

import bpy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "blender"))
import eddy_blender  # noqa: E402

args = sys.argv[sys.argv.index("--") + 1:]
flags = {"--particles": False}
options = {"--engine": "cycles", "--blend": None}
positional = []
i = 0
while i < len(args):
    if args[i] in flags:
        flags[args[i]] = True
    elif args[i] in options and i + 1 < len(args):
        options[args[i]] = args[i + 1]
        i += 1
    else:
        positional.append(args[i])
    i += 1
if len(positional) not in (3, 6) or options["--engine"] not in ("cycles", "eevee"):
    sys.exit("usage: render_frame.py -- FOLDER FRAME PICTURE [WIDTH HEIGHT SAMPLES] [--engine cycles|eevee] "
             "[--particles] [--blend FILE]")
folder, frame, picture = positional[0], int(positional[1]), os.path.abspath(positional[2])
width, height, samples = (int(a) for a in (positional[3:6] if len(positional) == 6 else (640, 360, 32)))

bpy.ops.wm.read_factory_settings(use_empty=True)
eddy_blender.register()
scene = bpy.context.scene
scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = width, height, 100
run = eddy_blender.Run(folder)
with_particles = flags["--particles"] or not run.frames["surface"]
objs = eddy_blender.load(folder, particles=with_particles, surface=not with_particles, stage=False)  # its own light and camera below
if options["--blend"]:
    bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(options["--blend"]))
    eddy_blender.bake(scene)
scene.frame_set(scene.frame_start + frame)

# Foam: where the surface carries the particles' velocity, the water whitens above about 2.5 m/s.
surface = objs.get("surface")
if surface is not None and "velocity" in surface.data.attributes:
    foam = eddy_blender.water_material().copy()
    foam.name = "eddy water foam"
    nodes, links = foam.node_tree.nodes, foam.node_tree.links
    attr = nodes.new("ShaderNodeAttribute")
    attr.attribute_name = "velocity"
    length = nodes.new("ShaderNodeVectorMath")
    length.operation = "LENGTH"
    scale = nodes.new("ShaderNodeMath")
    scale.operation = "DIVIDE"
    scale.inputs[1].default_value = 2.5  # m/s that counts as foam
    ramp = nodes.new("ShaderNodeValToRGB")
    ramp.color_ramp.elements[0].color = (0.8, 0.92, 1.0, 1)
    ramp.color_ramp.elements[1].color = (1.0, 1.0, 1.0, 1)
    rough = nodes.new("ShaderNodeMapRange")  # foam is rough and less clear
    rough.inputs["To Min"].default_value, rough.inputs["To Max"].default_value = 0.05, 0.6
    links.new(attr.outputs["Vector"], length.inputs[0])
    links.new(length.outputs["Value"], scale.inputs[0])
    links.new(scale.outputs[0], ramp.inputs["Fac"])
    links.new(scale.outputs[0], rough.inputs["Value"])
    links.new(ramp.outputs["Color"], nodes["Principled BSDF"].inputs["Base Color"])
    links.new(rough.outputs["Result"], nodes["Principled BSDF"].inputs["Roughness"])
    for obj in [o for o in scene.objects if o.get("eddy_folder") and o.type == "MESH" and o.data.materials
                and o.data.materials[0].name == "eddy water"]:
        obj.data.materials[0] = foam

# The camera frames everything eddy imported at this frame (fluid, tank, walls, bodies), its near clip from
# the scene's size; a floor just under it, a sky and a sun.
lo, hi = eddy_blender.scene_bounds(scene)
centre, size = (lo + hi) / 2, float((hi - lo).max())
scene.render.resolution_x, scene.render.resolution_y = width, height
cam = eddy_blender.frame_camera(scene)
floor = bpy.data.objects.new("floor", bpy.data.meshes.new("floor"))
s, z = 4 * size, lo[2] - 1e-3 * size
floor.data.from_pydata([(centre[0] - s, centre[1] - s, z), (centre[0] + s, centre[1] - s, z),
                        (centre[0] + s, centre[1] + s, z), (centre[0] - s, centre[1] + s, z)], [], [(0, 1, 2, 3)])
scene.collection.objects.link(floor)
stone = bpy.data.materials.new("floor")
stone.use_nodes = True
stone.node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value = (0.55, 0.52, 0.48, 1)
floor.data.materials.append(stone)
sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
sun.data.energy = 4.0
sun.rotation_euler = (0.7, 0.2, 0.6)
scene.collection.objects.link(sun)
world = bpy.data.worlds.new("sky")
world.use_nodes = True
world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.6, 0.7, 0.85, 1)
world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.8
scene.world = world

if options["--engine"] == "cycles":
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.use_denoising = False  # Debian's Blender is built without OpenImageDenoise
else:
    scene.render.engine = "BLENDER_EEVEE"
    scene.eevee.taa_render_samples = samples
scene.render.filepath = picture
if options["--blend"]:
    bpy.ops.wm.save_mainfile()
bpy.ops.render.render(write_still=True)
print(f"render_frame: {picture} (frame {frame}, scene {lo.round(3).tolist()} to {hi.round(3).tolist()} m, "
      f"camera at {[round(c, 3) for c in cam.location]}, clip {cam.data.clip_start:.4g} to {cam.data.clip_end:.4g} m)")
