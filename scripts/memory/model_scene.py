# A scene holding MODEL as a solid obstacle (scale 0.5) in a 2 m box, r = 5 cm (few wall particles):
# its peak RSS less that of `model_scene.py none base.json` (a sphere instead) is the model's cost.
# Usage: model_scene.py MODEL|none OUT.json
import json, sys
model = sys.argv[1]; out = sys.argv[2]
b = {"shape": "mesh", "file": model, "solid": True, "scale": 0.5, "translate": [0, 0, 0]} if model != 'none' else {"shape": "sphere", "center": [0, 0, 0], "radius": 0.5, "solid": True}
s = {"name": "m", "dimension": 3, "particle_radius": 0.05, "duration": 0.01,
     "boundaries": [{"shape": "box", "min": [-1, -1, -1], "max": [1, 1, 1]}, b],
     "fluids": [{"shape": "box", "min": [-0.9, 0.6, -0.9], "max": [0.9, 0.9, 0.9]}]}
json.dump(s, open(out, 'w'))
