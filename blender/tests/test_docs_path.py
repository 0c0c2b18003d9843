# docs/blender.md's section 2, as a user types it (issue 45: the documented path rendered Blender's startup
# cube, which encloses the tank, with the camera not framed):
#   blender -b --factory-startup --python-exit-code 1 --python test_docs_path.py -- EDDY_CLI
#
# Runs `eddy run dam_break_2d --until 0.3`, takes the section's Python block from docs/blender.md (only its
# three paths replaced: the add-on's folder, "out" and "/renders/shot.blend"), runs it in a Blender started
# from the factory settings, then renders frame 6 with the section's own render command (its frames replaced
# by -f 6, and the picture at 20% of its size: the one addition), and once more with the fluid's object hidden.
# The water must show: at least 2% of the pixels differ by more than 0.02 between the two (the startup cube, which
# hid everything, gave none). Exit code 1 on the first failure (ctest: blender.docs_path).
import os
import re
import shlex
import subprocess
import sys
import tempfile
import traceback

import bpy
import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
EDDY = sys.argv[sys.argv.index("--") + 1]


def section_two():
    text = open(os.path.join(ROOT, "docs", "blender.md"), encoding="utf-8").read()
    start = text.index("## 2. Import into Blender")
    section = text[start:text.index("\n## 3.", start)]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    render = re.search(r"```\n(blender -b --factory-startup shot\.blend[^\n]*)\n```", section).group(1)
    return code, re.split(r"\s{2,}#", render)[0].strip()  # the command without its trailing comment


def replaced(code, pairs):
    for old, new in pairs:
        assert old in code, f"docs/blender.md section 2 no longer holds {old!r}: update this test with it"
        code = code.replace(old, new)
    return code


def main():
    tmp = tempfile.mkdtemp(prefix="eddy-docs-path-")
    run, blend = os.path.join(tmp, "out"), os.path.join(tmp, "renders", "shot.blend")
    os.makedirs(os.path.dirname(blend))
    r = subprocess.run([EDDY, "run", "dam_break_2d", "--until", "0.3", "-q", "--threads", "2", "--out", run],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    code, render = section_two()
    code = replaced(code, [('"/path/to/eddy/blender"', repr(os.path.join(ROOT, "blender"))),
                           ('load("out")', f"load({run!r})"), ('"/renders/shot.blend"', repr(blend))])
    script = os.path.join(tmp, "import.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(code)
    r = subprocess.run([bpy.app.binary_path, "-b", "--factory-startup", "--python-exit-code", "1", "--python", script],
                       capture_output=True, text=True, cwd=tmp)
    assert r.returncode == 0 and os.path.isfile(blend), r.stdout[-3000:] + r.stderr[-3000:]
    args = shlex.split(render)
    assert args[:4] == ["blender", "-b", "--factory-startup", "shot.blend"] and "-f" in args, render
    frames_at = args.index("-f")
    small = "import bpy; bpy.context.scene.render.resolution_percentage = 20"
    hidden = "; [setattr(o, 'hide_render', True) for o in bpy.data.objects if o.name.endswith(' particles')]"
    with_water = picture(args, frames_at, blend, small, "with")
    without = picture(args, frames_at, blend, small + hidden, "without")
    water = (np.abs(with_water - without).max(axis=2) > 0.02).mean()
    assert water > 0.02, f"the water changes {water:.2%} of the picture (at least 2% expected)"
    print(f"blender.docs_path: OK (the water changes {water:.1%} of the picture; without it the picture is the "
          f"same to 0.02 elsewhere; {tmp})")


def picture(args, frames_at, blend, expr, name):
    """Renders frame 6 with the section's command (its -o, the frames replaced) plus `expr`; the pixels."""
    folder = os.path.join(os.path.dirname(blend), name)
    os.makedirs(folder)
    out = [a.replace("//", "//" + name + "/") if a.startswith("//") else a for a in args[4:frames_at]]
    cmd = [bpy.app.binary_path, *args[1:3], blend, "--python-expr", expr, *out, "-f", "6"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=os.path.dirname(blend))
    pictures = [f for f in os.listdir(folder) if f.endswith(".png")]
    assert r.returncode == 0 and len(pictures) == 1, f"{cmd}: {pictures}\n" + r.stdout[-3000:] + r.stderr[-3000:]
    img = bpy.data.images.load(os.path.join(folder, pictures[0]))
    w, h = img.size
    px = np.array(img.pixels[:], np.float32).reshape(h, w, 4)[..., :3]
    bpy.data.images.remove(img)
    return px


try:
    main()
except Exception:  # noqa: BLE001 - report and fail the ctest
    traceback.print_exc()
    sys.exit(1)
