# A 3D WCSPH scene (r = 1 cm, 1 m box) whose fluid is the particle file FILE.
# Usage: particle_scene.py FILE OUT.json
import json, sys
json.dump({"name": "file", "dimension": 3, "particle_radius": 0.01, "duration": 0.02,
           "boundaries": [{"shape": "box", "min": [0, 0, 0], "max": [1, 1, 1]}],
           "fluids": [{"shape": "file", "file": sys.argv[1]}]}, open(sys.argv[2], 'w'))
