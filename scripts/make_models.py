#!/usr/bin/env python3
"""Writes eddy's bundled model files and its malformed-mesh test fixtures.

Usage: python3 scripts/make_models.py   (from anywhere; paths are relative to the repository)

Pure Python 3, standard library only. Deterministic: every run writes the same bytes (no time stamps,
no randomness beyond a fixed hash stream), so re-running it leaves `git status` clean. After writing,
it reads every file back, checks it (closed models: every edge used by exactly two triangles in
opposite directions, no degenerate triangle, positive signed volume) and prints a table.

scenes/models/  (bundled with the scenes; y is up in every model)
  cup.obj      OBJ, MILLIMETRES (scenes use "scale": 0.001). A cup as a solid of revolution about the
               y axis (x = z = 0): outer radius 40, inner radius 34 (6 mm wall), height 80, base at
               y = 0, floor 6 thick (inner floor at y = 6), open at the top: the rim is a flat annulus
               at y = 80 joining the walls, so the solid is closed. 48 segments around; `v` lines and
               1-based triangle `f` lines.
  bowl.stl     Binary STL, metres. A hemispherical bowl: outer radius 0.06, inner radius 0.052, both
               spheres centred at (0, 0.06, 0), so the lowest outer point is at y = 0 and the flat
               annular rim at y = 0.06. Closed solid. 32 segments around, 8 bands from the pole to the
               rim (32 x 16 on a full sphere).
  plate.stl    ASCII STL ("solid plate" ... "endsolid plate"), metres. A thin obstacle: the box
               x in [0.40, 0.42], y in [0, 0.25], z in [0.05, 0.25]; each face is a 4 x 4 grid of
               quads (2 triangles each): 192 triangles.
  paddle.ply   ASCII PLY, metres. A mixer paddle: two crossing blades, each its own closed box (12
               triangles), overlapping at the centre and NOT merged (a self-intersecting union):
               blade A x in [-0.06, 0.06], z in [-0.006, 0.006]; blade B x in [-0.006, 0.006],
               z in [-0.06, 0.06]; both y in [0.02, 0.10]. Faces are triangles ("3 i j k").
  box.obj      OBJ, unitless (scenes scale it to metres): the unit cube [0, 1]^3, each face a 4 x 4 grid
               of quads (2 triangles each), shared vertices: 98 vertices, 192 triangles.
  sphere.obj   OBJ, unit radius about the origin (scenes scale it to metres): an icosahedron subdivided
               4 times (midpoints pushed to the sphere): 2562 shared vertices, 5120 triangles.

tests/data/meshes/  (malformed or awkward inputs for the mesh reader and cleaner; metres unless said)
  empty.obj          0 bytes.
  no_triangles.obj   4 `v` lines, no `f`.
  nan_vertex.obj     one triangle whose third vertex has x = nan.
  truncated.stl      binary STL whose count says 1000 triangles but which holds only 2 (184 bytes).
  huge_count.ply     binary_little_endian PLY: `element vertex 3`, `element face 1000000000000`, then
                     the 3 vertices and one face (13 bytes), far less than the header claims.
  garbage.stl        200 pseudo-random bytes (SHA-256 stream): neither ASCII ("solid") nor a binary STL
                     (84 + 50 n bytes never equals 200).
  open_box.obj       the unit cube without its top face (y = 1), 2 triangles per face: 10 triangles,
                     exactly 4 boundary edges.
  flipped_box.obj    the unit cube, 2 triangles per face, with 3 of the 12 triangles (one on each of
                     three faces) wound backwards: inconsistent orientation (9 edges whose two
                     triangles run them the same way).
  mm_far_box.stl     ASCII STL, MILLIMETRES: a 100 mm cube with its min corner at (100000, 100000,
                     100000) mm (100 m from the origin once scaled by 0.001), 12 triangles, closed.
"""

import hashlib
import math
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "scenes", "models")
FIXTURES = os.path.join(ROOT, "tests", "data", "meshes")


# ---------------------------------------------------------------------------------------------------
# Geometry builders. A mesh is (vertices: list of (x, y, z) floats, triangles: list of (i, j, k)),
# triangles wound counter-clockwise seen from outside (right-hand normal points out).


def fmt(v):
    """A short, exact-enough decimal: 6 significant digits, no '-0'."""
    v = round(v, 12)
    if v == 0.0:
        return "0"
    return "%.6g" % v


def unit_circle(n):
    """cos and sin of 2 pi j / n, with the quarter turns exact (no 6e-17 for cos(pi/2))."""
    return [(round(math.cos(2.0 * math.pi * j / n), 15), round(math.sin(2.0 * math.pi * j / n), 15)) for j in range(n)]


def revolve(profile, n):
    """A closed solid of revolution about the y axis. `profile` is a closed loop of (r, y) points
    (the last joins the first); points with r == 0 are poles (one vertex). Consecutive rings are
    joined by quads split into two triangles; pole-to-ring segments by fans; pole-to-pole (the axis)
    by nothing. The profile runs so that the solid lies to its left in the (r, y) half-plane, which
    with x = r cos t, z = -r sin t makes the triangles face outwards (checked by the caller)."""
    circle = unit_circle(n)
    verts, rings = [], []
    for r, y in profile:
        if r == 0.0:
            rings.append([len(verts)] * n)
            verts.append((0.0, y, 0.0))
        else:
            rings.append(list(range(len(verts), len(verts) + n)))
            verts.extend((r * c, y, -r * s) for c, s in circle)
    tris = []
    m = len(profile)
    for i in range(m):
        a, b = rings[i], rings[(i + 1) % m]
        pa, pb = profile[i][0] == 0.0, profile[(i + 1) % m][0] == 0.0
        if pa and pb:
            continue
        for j in range(n):
            j2 = (j + 1) % n
            if not pa:
                tris.append((a[j], a[j2], b[j2]))  # b[j2] == b[j] when b is a pole
            if not pb:
                tris.append((a[j], b[j2], b[j]))  # a[j] == a[j2] when a is a pole
    return verts, tris


def grid_box(lo, hi, n):
    """The box [lo, hi] with each face an n x n grid of quads (2 triangles each), shared vertices,
    outward. Vertices are keyed by their integer lattice position, so shared corners are exact."""
    index, verts, tris = {}, [], []

    def coord(axis, k):
        return hi[axis] if k == n else lo[axis] + (hi[axis] - lo[axis]) * k / n

    def vid(key):
        if key not in index:
            index[key] = len(verts)
            verts.append(tuple(coord(a, key[a]) for a in range(3)))
        return index[key]

    for a in range(3):
        u, v = (a + 1) % 3, (a + 2) % 3  # e_u x e_v = e_a
        for side in (0, n):
            for i in range(n):
                for j in range(n):
                    q = []
                    for di, dj in ((0, 0), (1, 0), (1, 1), (0, 1)):  # counter-clockwise seen from +a
                        key = [0, 0, 0]
                        key[a], key[u], key[v] = side, i + di, j + dj
                        q.append(vid(tuple(key)))
                    if side == 0:
                        q.reverse()  # the min face looks along -a
                    tris.append((q[0], q[1], q[2]))
                    tris.append((q[0], q[2], q[3]))
    return verts, tris


def icosphere(levels):
    t = (1.0 + math.sqrt(5.0)) / 2.0
    verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
             (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]

    def normalise(p):
        s = math.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2])
        return (p[0] / s, p[1] / s, p[2] / s)

    verts = [normalise(p) for p in verts]
    tris = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
            (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5),
            (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]
    for _ in range(levels):
        cache, out = {}, []

        def mid(i, j):
            key = (min(i, j), max(i, j))
            if key not in cache:
                a, b = verts[i], verts[j]
                cache[key] = len(verts)
                verts.append(normalise(((a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2)))
            return cache[key]

        for a, b, c in tris:
            ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
            out += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
        tris = out
    return verts, tris


def normal(p, q, r):
    u = (q[0] - p[0], q[1] - p[1], q[2] - p[2])
    v = (r[0] - p[0], r[1] - p[1], r[2] - p[2])
    n = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
    s = math.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
    return (n[0] / s, n[1] / s, n[2] / s) if s > 0 else (0.0, 0.0, 0.0)


# ---------------------------------------------------------------------------------------------------
# Writers (all return bytes; '\n' line ends).


def obj_bytes(verts, tris, comment):
    lines = ["# " + c for c in comment]
    lines += ["v %s %s %s" % tuple(fmt(x) for x in p) for p in verts]
    lines += ["f %d %d %d" % (a + 1, b + 1, c + 1) for a, b, c in tris]
    return ("\n".join(lines) + "\n").encode("ascii")


def ascii_stl_bytes(name, verts, tris):
    out = ["solid " + name]
    for t in tris:
        p = [verts[i] for i in t]
        out.append("  facet normal %s %s %s" % tuple(fmt(x) for x in normal(*p)))
        out.append("    outer loop")
        out += ["      vertex %s %s %s" % tuple(fmt(x) for x in q) for q in p]
        out.append("    endloop")
        out.append("  endfacet")
    out.append("endsolid " + name)
    return ("\n".join(out) + "\n").encode("ascii")


def binary_stl_bytes(header, verts, tris, count=None):
    h = header.encode("ascii")
    assert len(h) <= 80 and not h.startswith(b"solid")
    out = [h.ljust(80, b" "), struct.pack("<I", len(tris) if count is None else count)]
    for t in tris:
        p = [verts[i] for i in t]
        out.append(struct.pack("<12fH", *normal(*p), *p[0], *p[1], *p[2], 0))
    return b"".join(out)


def ascii_ply_bytes(verts, tris):
    head = ["ply", "format ascii 1.0", "element vertex %d" % len(verts), "property float x", "property float y",
            "property float z", "element face %d" % len(tris), "property list uchar int vertex_indices", "end_header"]
    body = ["%s %s %s" % tuple(fmt(x) for x in p) for p in verts] + ["3 %d %d %d" % t for t in tris]
    return ("\n".join(head + body) + "\n").encode("ascii")


# ---------------------------------------------------------------------------------------------------
# Readers for the self-check (only what this script writes). Each returns (verts, tris); STL
# vertices are joined when their coordinates are identical.


def weld(points):
    index, verts, tris = {}, [], []
    for k in range(0, len(points), 3):
        t = []
        for p in points[k:k + 3]:
            if p not in index:
                index[p] = len(verts)
                verts.append(p)
            t.append(index[p])
        tris.append(tuple(t))
    return verts, tris


def read_obj(data):
    verts, tris = [], []
    for line in data.decode("ascii").splitlines():
        w = line.split()
        if not w or w[0].startswith("#"):
            continue
        if w[0] == "v":
            verts.append(tuple(float(x) for x in w[1:4]))
        elif w[0] == "f":
            tris.append(tuple(int(x.split("/")[0]) - 1 for x in w[1:4]))
    return verts, tris


def read_ascii_stl(data):
    pts = [tuple(float(x) for x in line.split()[1:4]) for line in data.decode("ascii").splitlines()
           if line.split()[:1] == ["vertex"]]
    return weld(pts)


def read_binary_stl(data):
    (n,) = struct.unpack_from("<I", data, 80)
    assert len(data) == 84 + 50 * n, "binary STL size does not match its count"
    pts = []
    for k in range(n):
        f = struct.unpack_from("<12f", data, 84 + 50 * k)
        pts += [f[3:6], f[6:9], f[9:12]]
    return weld(pts)


def read_ascii_ply(data):
    lines = data.decode("ascii").splitlines()
    end = lines.index("end_header")
    nv = int(next(l for l in lines[:end] if l.startswith("element vertex")).split()[2])
    nf = int(next(l for l in lines[:end] if l.startswith("element face")).split()[2])
    verts = [tuple(float(x) for x in l.split()) for l in lines[end + 1:end + 1 + nv]]
    tris = []
    for l in lines[end + 1 + nv:end + 1 + nv + nf]:
        w = [int(x) for x in l.split()]
        assert w[0] == 3
        tris.append(tuple(w[1:4]))
    return verts, tris


def edge_stats(tris):
    """(boundary edges, non-manifold edges, edges whose two triangles run them the same way)."""
    directed = {}
    for a, b, c in tris:
        for e in ((a, b), (b, c), (c, a)):
            directed[e] = directed.get(e, 0) + 1
    undirected = {}
    for (a, b), k in directed.items():
        key = (min(a, b), max(a, b))
        undirected[key] = undirected.get(key, 0) + k
    boundary = sum(1 for k in undirected.values() if k == 1)
    nonmanifold = sum(1 for k in undirected.values() if k > 2)
    same_way = sum(1 for (a, b) in undirected if undirected[(a, b)] == 2 and
                   (directed.get((a, b), 0) == 2 or directed.get((b, a), 0) == 2))
    return boundary, nonmanifold, same_way


def signed_volume(verts, tris):
    v = 0.0
    for a, b, c in tris:
        p, q, r = verts[a], verts[b], verts[c]
        v += (p[0] * (q[1] * r[2] - q[2] * r[1]) - p[1] * (q[0] * r[2] - q[2] * r[0]) +
              p[2] * (q[0] * r[1] - q[1] * r[0]))
    return v / 6.0


def degenerate(verts, tris):
    n = 0
    for a, b, c in tris:
        if len({a, b, c}) < 3 or normal(verts[a], verts[b], verts[c]) == (0.0, 0.0, 0.0):
            n += 1
    return n


# ---------------------------------------------------------------------------------------------------


def models():
    """[(file name, bytes, reader, expected volume or None, closed?)]"""
    out = []

    # Cup (mm): profile loop with the solid on its left: bottom pole, out along the base, up the
    # outer wall, in across the rim, down the inner wall, in across the inner floor to its pole.
    ro, ri, h, floor, n = 40.0, 34.0, 80.0, 6.0, 48
    profile = [(0.0, 0.0), (20.0, 0.0), (ro, 0.0), (ro, 20.0), (ro, 40.0), (ro, 60.0), (ro, h), (ri, h), (ri, 60.0),
               (ri, 40.0), (ri, 20.0), (ri, floor), (17.0, floor), (0.0, floor)]
    verts, tris = revolve(profile, n)
    polygon = n / (2 * math.pi) * math.sin(2 * math.pi / n)  # area of the 48-gon / area of the circle
    cup_volume = polygon * math.pi * (ro * ro * h - ri * ri * (h - floor))
    out.append(("cup.obj", obj_bytes(verts, tris, [
        "eddy model: a cup (solid of revolution about the y axis), MILLIMETRES, y up, base at y = 0",
        "outer radius 40, inner radius 34, height 80, inner floor at y = 6, flat rim annulus at y = 80",
        "written by scripts/make_models.py"]), read_obj, cup_volume, True))

    # Bowl (m): spheres centred at (0, 0.06, 0); phi from the bottom pole (0) to the rim (pi / 2).
    R, Ri, cy, bands = 0.06, 0.052, 0.06, 8
    phis = [(round(math.sin(0.5 * math.pi * k / bands), 15), round(math.cos(0.5 * math.pi * k / bands), 15))
            for k in range(bands + 1)]
    outer = [(R * s, cy - R * c) for s, c in phis]
    inner = [(Ri * s, cy - Ri * c) for s, c in reversed(phis)]
    verts, tris = revolve(outer + inner, 32)
    out.append(("bowl.stl", binary_stl_bytes("eddy model: hemispherical bowl, metres, y up (scripts/make_models.py)",
                                             verts, tris), read_binary_stl,
                None, True))

    verts, tris = grid_box((0.40, 0.0, 0.05), (0.42, 0.25, 0.25), 4)
    out.append(("plate.stl", ascii_stl_bytes("plate", verts, tris), read_ascii_stl, 0.02 * 0.25 * 0.20, True))

    va, ta = grid_box((-0.06, 0.02, -0.006), (0.06, 0.10, 0.006), 1)
    vb, tb = grid_box((-0.006, 0.02, -0.06), (0.006, 0.10, 0.06), 1)
    tb = [(a + len(va), b + len(va), c + len(va)) for a, b, c in tb]
    out.append(("paddle.ply", ascii_ply_bytes(va + vb, ta + tb), read_ascii_ply, 2 * 0.12 * 0.08 * 0.012, True))

    verts, tris = grid_box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0), 4)
    out.append(("box.obj", obj_bytes(verts, tris, [
        "eddy model: the unit cube [0, 1]^3, each face a 4 x 4 grid of quads, outward (scripts/make_models.py)"]),
        read_obj, 1.0, True))

    verts, tris = icosphere(4)
    out.append(("sphere.obj", obj_bytes(verts, tris, [
        "eddy model: unit sphere about the origin, icosahedron subdivided 4 times (scripts/make_models.py)"]),
        read_obj, None, True))
    return out


def fixtures():
    """[(file name, bytes, check(data) -> description)]"""
    out = []
    out.append(("empty.obj", b"", lambda d: "0 bytes"))
    out.append(("no_triangles.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n", lambda d: "%d v, %d f" % (
        d.count(b"\nv ") + d.startswith(b"v "), d.count(b"\nf "))))
    out.append(("nan_vertex.obj", b"v 0 0 0\nv 1 0 0\nv nan 1 0\nf 1 2 3\n", lambda d: "1 triangle, a nan vertex"))

    verts, tris = grid_box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0), 1)
    out.append(("truncated.stl", binary_stl_bytes("eddy fixture: binary STL claiming 1000 triangles, holding 2",
                                                  verts, tris[:2], count=1000),
                lambda d: "count %d, holds %d" % (struct.unpack_from("<I", d, 80)[0], (len(d) - 84) // 50)))

    head = ("ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
            "property float z\nelement face 1000000000000\nproperty list uchar int vertex_indices\nend_header\n")
    body = struct.pack("<9f", 0, 0, 0, 1, 0, 0, 0, 1, 0) + struct.pack("<B3i", 3, 0, 1, 2)
    out.append(("huge_count.ply", head.encode("ascii") + body, lambda d: "claims 1e12 faces"))

    stream, k = b"", 0
    while len(stream) < 200:
        stream += hashlib.sha256(b"eddy garbage.stl %d" % k).digest()
        k += 1
    garbage = stream[:200]
    assert not garbage.startswith(b"solid") and (len(garbage) - 84) % 50 != 0
    out.append(("garbage.stl", garbage, lambda d: "not STL"))

    def box_check(d):
        v, t = read_obj(d)
        b, nm, same = edge_stats(t)
        return "%d tris, %d boundary edges, %d same-way edges" % (len(t), b, same)

    top = [t for t in tris if not all(verts[i][1] == 1.0 for i in t)]
    out.append(("open_box.obj", obj_bytes(verts, top, ["eddy fixture: unit cube without its top face (open)"]),
                box_check))
    flipped = [(a, c, b) if i in (0, 5, 10) else (a, b, c) for i, (a, b, c) in enumerate(tris)]
    out.append(("flipped_box.obj", obj_bytes(verts, flipped, [
        "eddy fixture: unit cube, triangles 1, 6 and 11 wound backwards (inconsistent orientation)"]), box_check))

    fv, ft = grid_box((100000.0, 100000.0, 100000.0), (100100.0, 100100.0, 100100.0), 1)

    def far_check(d):
        v, t = read_ascii_stl(d)
        b, nm, same = edge_stats(t)
        return "%d tris, closed %s, volume %.6g mm^3" % (len(t), b == nm == same == 0, signed_volume(v, t))

    out.append(("mm_far_box.stl", ascii_stl_bytes("mm_far_box", fv, ft), far_check))
    return out


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    old = None
    if os.path.exists(path):
        with open(path, "rb") as f:
            old = f.read()
    if old != data:
        with open(path, "wb") as f:
            f.write(data)
    return "written" if old != data else "unchanged"


def main():
    ok = True
    rows = []
    total = 0
    for name, data, reader, expected, closed in models():
        state = write(os.path.join(MODELS, name), data)
        verts, tris = reader(data)
        b, nm, same = edge_stats(tris)
        deg = degenerate(verts, tris)
        vol = signed_volume(verts, tris)
        good = b == 0 and nm == 0 and same == 0 and deg == 0 and vol > 0
        if expected is not None:
            good = good and abs(vol - expected) <= 1e-5 * expected
        ok = ok and good
        total += len(data)
        rows.append(("scenes/models/" + name, len(verts), len(tris), len(data),
                     "closed, volume %.6g%s" % (vol, "" if expected is None else " (expected %.6g)" % expected),
                     "ok" if good else "FAILED", state))
    for name, data, check in fixtures():
        state = write(os.path.join(FIXTURES, name), data)
        rows.append(("tests/data/meshes/" + name, "", "", len(data), check(data), "", state))
    w = max(len(r[0]) for r in rows)
    print("%-*s %6s %6s %7s  %s" % (w, "file", "verts", "tris", "bytes", "check"))
    for r in rows:
        print("%-*s %6s %6s %7d  %s %s [%s]" % (w, r[0], r[1], r[2], r[3], r[4], r[5], r[6]))
    print("scenes/models total: %d bytes" % total)
    if not ok:
        print("SELF-CHECK FAILED", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
