"""`eddy run --render` shows the water behind solid walls and draws bodies in their own colours (issue 45).

    /usr/bin/python3 render_walls_test.py EDDY_CLI      (ctest: render.walls)

(a) 3D: a tank built of five solid boxes (the floor and four walls, `"solid": true`), water 0.3 m deep in it
and a box body floating on the water, seen by the default camera from the front-right-above, so that the
front and right walls stand between the camera and the water. The first frame's picture must show the
water: at least 4% of the 1280 x 720 pixels water-coloured (the colour map runs blue -> yellow -> red;
walls are grey, solids warm grey), where opaque walls leave a strip of the water's surface (0.27%) and
walls veiling the water leave about 8.7%. The walls must still be drawn (at least 3% warm grey pixels, so
that the test does not pass by dropping them), and the body in its colour (body 0: the viewer's green),
not as a warm grey solid.

(b) 2D: a box body above the water of a tank, centred on the view: the picture's centre and points inside
the body's outline must be the body's green, where particles drawn as an outline leave the background.

About 5 s on one thread. Decodes the PNGs with zlib (no imaging library needed). Exit 1 on a failure, after
all checks are listed.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

EDDY = os.path.abspath(sys.argv[1])
FAILURES = []


def check(ok, what):
    print(('ok    ' if ok else 'FAIL  ') + what)
    if not ok:
        FAILURES.append(what)


def read_png(path):
    """(width, height, rows): 8-bit RGB rows as bytes, the PNG's filters undone."""
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', path
    pos, idat, w, h = 8, b'', 0, 0
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', body)
            assert depth == 8 and ctype == 2 and interlace == 0, (path, depth, ctype, interlace)
        elif kind == b'IDAT':
            idat += body
    raw, stride = zlib.decompress(idat), 3 * w
    rows, prev = [], bytearray(stride)
    for y in range(h):
        start = y * (stride + 1)
        f, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if f == 1:
            for i in range(3, stride):
                line[i] = (line[i] + line[i - 3]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - 3] if i >= 3 else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a, b, c = (line[i - 3], prev[i], prev[i - 3]) if i >= 3 else (0, prev[i], 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows


def pixel(rows, x, y):
    return tuple(rows[y][3 * x:3 * x + 3])


def count(w, h, rows, pred):
    return sum(1 for y in range(h) for x in range(w) if pred(pixel(rows, x, y)))


def water(p):  # blue to red through yellow: blue well above red and green, or red well above blue
    r, g, b = p
    return (b > r + 40 and b > g + 25) or r > b + 80


def warm_grey(p):  # the solids' warm grey (0.78, 0.72, 0.62), shaded
    r, g, b = p
    return r > 60 and 10 <= r - b <= 60 and r >= g >= b


def green(p):  # body 0's colour (0.20, 0.80, 0.30), shaded
    r, g, b = p
    return g > r + 40 and g > b + 30


def run(scene, folder):
    path = os.path.join(folder, scene['name'] + '.json')
    with open(path, 'w') as f:
        json.dump(scene, f, indent=1)
    out = os.path.join(folder, 'out_' + scene['name'])
    cmd = [EDDY, 'run', path, '-o', out, '--render', '--steps', '2', '--format', 'csv', '-j', '1', '-q']
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, f"{scene['name']}: eddy run exits 0 ({p.returncode}: {p.stderr.strip()[-300:]})")
    return os.path.join(out, 'frames', 'particles_00000.png')


SOLID_TANK_3D = {
    'name': 'solid_tank_3d',
    'dimension': 3,
    'method': 'dfsph',
    'particle_radius': 0.015,
    'output': {'fps': 50},
    'boundaries': [
        {'shape': 'box', 'solid': True, 'min': [-0.06, -0.06, -0.06], 'max': [0.66, 0.0, 0.46]},  # floor
        {'shape': 'box', 'solid': True, 'min': [-0.06, 0.0, -0.06], 'max': [0.0, 0.4, 0.46]},    # left
        {'shape': 'box', 'solid': True, 'min': [0.6, 0.0, -0.06], 'max': [0.66, 0.4, 0.46]},     # right
        {'shape': 'box', 'solid': True, 'min': [0.0, 0.0, -0.06], 'max': [0.6, 0.4, 0.0]},       # back
        {'shape': 'box', 'solid': True, 'min': [0.0, 0.0, 0.4], 'max': [0.6, 0.4, 0.46]},        # front
    ],
    'bodies': [{'shape': 'box', 'min': [0.2, 0.3, 0.15], 'max': [0.4, 0.38, 0.3], 'density': 500}],
    'fluids': [{'shape': 'box', 'min': [0.0, 0.0, 0.0], 'max': [0.6, 0.3, 0.4]}],
}

# The view's box is the tank, [0, 1] x [0, 0.6]; the body's centre (0.5, 0.3) is the picture's centre.
BODY_2D = {
    'name': 'body_2d',
    'dimension': 2,
    'method': 'dfsph',
    'particle_radius': 0.005,
    'output': {'fps': 50},
    'boundaries': [{'shape': 'box', 'min': [0.0, 0.0], 'max': [1.0, 0.6]}],
    'bodies': [{'shape': 'box', 'min': [0.4, 0.25], 'max': [0.6, 0.35], 'density': 500}],
    'fluids': [{'shape': 'box', 'min': [0.0, 0.0], 'max': [1.0, 0.2]}],
}


def main():
    with tempfile.TemporaryDirectory(prefix='eddy_render_walls_') as tmp:
        png = run(SOLID_TANK_3D, tmp)
        if os.path.exists(png):
            w, h, rows = read_png(png)
            n = w * h
            wet, solid, body = count(w, h, rows, water), count(w, h, rows, warm_grey), count(w, h, rows, green)
            check(wet >= 0.04 * n, f'3D solid tank: the water shows through its walls ({wet} water pixels, {wet / n:.2%}; '
                                   f'at least 4%)')
            check(solid >= 0.03 * n, f'3D solid tank: the walls are drawn ({solid} warm grey pixels, {solid / n:.2%}; '
                                     f'at least 3%)')
            check(body >= 1000, f'3D solid tank: the body is drawn in its colour ({body} green pixels; at least 1000)')
        else:
            check(False, f'3D solid tank: {png} written')

        png = run(BODY_2D, tmp)
        if os.path.exists(png):
            w, h, rows = read_png(png)
            # 1104 px/m (0.92 of 1200): the body is 221 x 110 px about the centre (640, 360).
            cx, cy = w // 2, h // 2
            inside = [(cx + dx, cy + dy) for dx in (-66, -33, 0, 33, 66) for dy in (-33, 0, 33)]
            bad = [(x, y, pixel(rows, x, y)) for x, y in inside if not green(pixel(rows, x, y))]
            check(not bad, f'2D body: filled in its colour inside its outline (not green: {bad[:4]})')
            check(count(w, h, rows, water) >= 0.1 * w * h, '2D body: the water is drawn')
        else:
            check(False, f'2D body: {png} written')
    if FAILURES:
        print(f'{len(FAILURES)} check(s) failed')
        return 1
    print('all checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
