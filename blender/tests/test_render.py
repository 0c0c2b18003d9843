# The README's Blender picture, made the way docs/blender.md says, at a low resolution:
#   blender -b --factory-startup --python-exit-code 1 --python test_render.py -- EDDY_CLI
#
# Runs `eddy run dam_break_3d --mesh --anisotropic --whitewater` (r = 0.01 m instead of 0.005, 3,375 particles:
# about 4 s) to 0.6 s, renders frame 6 with examples/blender/render_dam_break.py (Cycles, 320 x 180, 16 samples)
# three times: the whole picture, without the whitewater, without the surface, each in its own Blender (as a
# user types it). The picture is not trivial: water-coloured pixels (blue over red by 0.1) cover at least 2% of
# it and vanish without the surface; white pixels (every channel above 0.75, grey within 0.12) number at least
# 40, at most a fifth of them remain without the whitewater, and at least half of them are pixels the
# whitewater changes. Exit code 1 on the first failure (ctest: blender.render).
import os
import subprocess
import sys
import tempfile
import time
import traceback

import bpy
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "examples", "blender", "render_dam_break.py")
EDDY = sys.argv[sys.argv.index("--") + 1]


def picture(path):
    img = bpy.data.images.load(path)
    w, h = img.size
    px = np.array(img.pixels[:], np.float32).reshape(h, w, 4)[..., :3]
    bpy.data.images.remove(img)
    return px


def water(px):
    return px[..., 2] - px[..., 0] > 0.1


def white(px):
    return (px.min(axis=2) > 0.75) & (px.max(axis=2) - px.min(axis=2) < 0.12)


def main():
    tmp = tempfile.mkdtemp(prefix="eddy-render-")
    run = os.path.join(tmp, "out")
    t = time.time()
    r = subprocess.run([EDDY, "run", "dam_break_3d", "--set", "particle_radius=0.01", "--until", "0.6", "--fps", "10",
                        "--mesh", "--anisotropic", "--mesh-format", "ply", "--whitewater", "-q", "--threads", "2",
                        "--out", run], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ran = time.time() - t
    pictures = {}
    for name, extra in (("full", []), ("no_whitewater", ["--without", "whitewater"]),
                        ("no_surface", ["--without", "surface"])):
        path = os.path.join(tmp, f"{name}.png")
        t = time.time()
        r = subprocess.run([bpy.app.binary_path, "-b", "--factory-startup", "--python-exit-code", "1", "--python", SCRIPT,
                            "--", run, "6", path, "320", "180", "16", *extra], capture_output=True, text=True)
        assert r.returncode == 0 and os.path.isfile(path), r.stdout[-3000:] + r.stderr[-3000:]
        print(f"blender.render: {name} {time.time() - t:.1f} s")
        pictures[name] = picture(path)
    full, no_ww, no_surface = pictures["full"], pictures["no_whitewater"], pictures["no_surface"]
    blue, blue_without = water(full).mean(), water(no_surface).mean()
    assert blue > 0.02, f"water-coloured pixels: {blue:.2%} of the picture (at least 2% expected)"
    assert blue_without < 0.2 * blue, f"without the surface {blue_without:.2%} are still water-coloured ({blue:.2%})"
    lit = white(full)
    changed = np.abs(full - no_ww).max(axis=2) > 0.1
    assert lit.sum() >= 40, f"white pixels: {lit.sum()} (at least 40 expected: the whitewater)"
    assert white(no_ww).sum() <= 0.2 * lit.sum(), f"without the whitewater {white(no_ww).sum()} white pixels remain"
    assert (lit & changed).sum() >= 0.5 * lit.sum(), f"only {(lit & changed).sum()} of {lit.sum()} white pixels are whitewater"
    print(f"blender.render: OK (run {ran:.1f} s; water-coloured {blue:.1%} of the pixels, {blue_without:.1%} without "
          f"the surface; {lit.sum()} white pixels, {white(no_ww).sum()} without the whitewater; {tmp})")


try:
    main()
except Exception:  # noqa: BLE001 - report and fail the ctest
    traceback.print_exc()
    sys.exit(1)
