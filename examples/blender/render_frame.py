# Renders one frame of an eddy run with Blender's Cycles, headless (docs/blender.md):
#
#   eddy run dam_break_3d --until 0.6 --fps 10 --mesh --mesh-format ply --interpolate-attributes velocity --up z --out out
#   blender -b --factory-startup --python examples/blender/render_frame.py -- out 5 frame.png [width height samples]
#
# Imports the folder with the eddy add-on (blender/eddy_blender.py), gives the surface a water material
# (its velocity attribute drives a foam-white tint where it moves fast), puts a floor under it, frames it
# with a camera and renders frame N on the CPU. Wall models (walls.obj) are imported but get no material.
import os
import sys

import bpy
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "blender"))
import eddy_blender  # noqa: E402

args = sys.argv[sys.argv.index("--") + 1:]
folder, frame, picture = args[0], int(args[1]), os.path.abspath(args[2])
width, height, samples = (int(a) for a in (args[3:6] if len(args) >= 6 else (640, 360, 32)))

bpy.ops.wm.read_factory_settings(use_empty=True)
eddy_blender.register()
scene = bpy.context.scene
objs = eddy_blender.load(folder, particles=False)
scene.frame_set(scene.frame_start + frame)
surface = objs["surface"]

# Water: glassy, tinted blue, whiter where the surface moves fast (the interpolated velocity).
water = bpy.data.materials.new("eddy water")
water.use_nodes = True
nodes, links = water.node_tree.nodes, water.node_tree.links
bsdf = nodes["Principled BSDF"]
bsdf.inputs["Roughness"].default_value = 0.05
bsdf.inputs["IOR"].default_value = 1.33
bsdf.inputs["Transmission"].default_value = 0.85
if "velocity" in surface.data.attributes:
    attr = nodes.new("ShaderNodeAttribute")
    attr.attribute_name = "velocity"
    length = nodes.new("ShaderNodeVectorMath")
    length.operation = "LENGTH"
    ramp = nodes.new("ShaderNodeValToRGB")
    ramp.color_ramp.elements[0].position, ramp.color_ramp.elements[0].color = 0.0, (0.05, 0.25, 0.55, 1)
    ramp.color_ramp.elements[1].position, ramp.color_ramp.elements[1].color = 1.0, (0.9, 0.95, 1.0, 1)
    scale = nodes.new("ShaderNodeMath")
    scale.operation = "DIVIDE"
    scale.inputs[1].default_value = 2.5  # m/s that counts as foam
    links.new(attr.outputs["Vector"], length.inputs[0])
    links.new(length.outputs["Value"], scale.inputs[0])
    links.new(scale.outputs[0], ramp.inputs["Fac"])
    links.new(ramp.outputs["Color"], bsdf.inputs["Base Color"])
else:
    bsdf.inputs["Base Color"].default_value = (0.05, 0.25, 0.55, 1)
surface.data.materials.append(water)

# A floor under the fluid's lowest point and a camera framing the fluid of this frame.
co = np.zeros(len(surface.data.vertices) * 3, np.float32)
surface.data.vertices.foreach_get("co", co)
co = co.reshape(-1, 3)
lo, hi = co.min(axis=0), co.max(axis=0)
centre, size = (lo + hi) / 2, float((hi - lo).max())

floor = bpy.data.objects.new("floor", bpy.data.meshes.new("floor"))
s = 4 * size
floor.data.from_pydata([(centre[0] - s, centre[1] - s, lo[2]), (centre[0] + s, centre[1] - s, lo[2]),
                        (centre[0] + s, centre[1] + s, lo[2]), (centre[0] - s, centre[1] + s, lo[2])], [], [(0, 1, 2, 3)])
scene.collection.objects.link(floor)
stone = bpy.data.materials.new("floor")
stone.use_nodes = True
stone.node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value = (0.55, 0.52, 0.48, 1)
floor.data.materials.append(stone)

cam = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
scene.collection.objects.link(cam)
cam.location = (centre[0] + 0.45 * size, centre[1] - 0.95 * size, centre[2] + 0.55 * size)
direction = centre - np.array(cam.location)
cam.rotation_euler = (float(np.arctan2(np.hypot(direction[0], direction[1]), -direction[2])), 0.0,
                      float(np.arctan2(direction[0], -direction[1]) + np.pi))
cam.data.lens = 30
scene.camera = cam
sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
sun.data.energy = 4.0
sun.rotation_euler = (0.7, 0.2, 0.6)
scene.collection.objects.link(sun)
world = bpy.data.worlds.new("sky")
world.use_nodes = True
world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.6, 0.7, 0.85, 1)
world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.8
scene.world = world

scene.render.engine = "CYCLES"
scene.cycles.device = "CPU"
scene.cycles.samples = samples
scene.cycles.use_denoising = False  # Debian's Blender is built without OpenImageDenoise
scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = width, height, 100
scene.render.filepath = picture
bpy.ops.render.render(write_still=True)
print(f"render_frame: {picture} (frame {frame}, {len(co)} surface vertices)")
