#!/usr/bin/env python3
"""Moving walls in pieces (tests/distributed/ranks_test.sh particles_walls_pieces, issue 44): with --pieces the
walls that do not move are written once (frames/walls.vtp, .obj) and those that move every frame
(frames/walls_NNNNN.vtp, .obj). Each of WHOLE's walls_NNNNN.vtp (a run without --pieces: every wall in every
frame) must hold the same wall particles and model vertices, row for row (position, velocity, psi, object: the
same bytes), as PIECES' walls.vtp and walls_NNNNN.vtp together, the moving ones only in the frame's file, and
the model triangles as many; walls.pvd lists the frames' files.      walls_split_equal.py WHOLE PIECES"""
import os, re, struct, sys
from collections import Counter


def read_walls(path):
    """[(rows, cells)] per piece (0: wall particles, 1: model vertices): rows a Counter of each point's bytes
    (Points, velocity, psi, object), cells the triangles' (lines' in 2D) count."""
    data = open(path, "rb").read()
    head_end = data.index(b"<AppendedData")
    head = data[:head_end].decode()
    raw = data[data.index(b"_", head_end) + 1:]
    out = []
    for piece in re.findall(r"<Piece (.*?)</Piece>", head, re.S):
        n = int(re.search(r'NumberOfPoints="(\d+)"', piece).group(1))
        cells = int(re.search(r'NumberOfPolys="(\d+)"', piece).group(1)) + int(re.search(r'NumberOfLines="(\d+)"', piece).group(1))
        arrays = {}
        for m in re.finditer(r'Name="(\w+)" NumberOfComponents="\d+" format="appended" offset="(\d+)"', piece):
            off = int(m.group(2))
            size = struct.unpack_from("<Q", raw, off)[0]
            arrays[m.group(1)] = raw[off + 8: off + 8 + size]
        width = {"Points": 12, "velocity": 12, "psi": 4, "object": 2}
        rows = Counter(tuple(arrays[a][i * w:(i + 1) * w] for a, w in width.items()) for i in range(n))
        out.append((rows, cells))
    return out


def objects(rows):
    return {struct.unpack("<H", r[3])[0] for r in rows}


whole, pieces = sys.argv[1], sys.argv[2]
frames = sorted(f for f in os.listdir(os.path.join(whole, "frames")) if re.fullmatch(r"walls_\d+\.vtp", f))
if not frames:
    sys.exit(f"FAIL: {whole}/frames: no walls_NNNNN.vtp (the scene has no moving wall?)")
still = read_walls(os.path.join(pieces, "frames", "walls.vtp"))
pvd = open(os.path.join(pieces, "walls.pvd")).read()
for name in frames:
    a = read_walls(os.path.join(whole, "frames", name))
    b = read_walls(os.path.join(pieces, "frames", name))
    if f'file="frames/{name}"' not in pvd:
        sys.exit(f"FAIL: {pieces}/walls.pvd does not list frames/{name}")
    for k, what in enumerate(("wall particles", "model vertices")):
        if objects(b[k][0]) & objects(still[k][0]):
            sys.exit(f"FAIL: {pieces}/frames/{name}: {what} of objects also in walls.vtp: "
                     f"{sorted(objects(b[k][0]) & objects(still[k][0]))}")
        if a[k][0] != still[k][0] + b[k][0] or a[k][1] != still[k][1] + b[k][1]:
            sys.exit(f"FAIL: {pieces}/frames/{name}: {what}: {sum(b[k][0].values())} moving and "
                     f"{sum(still[k][0].values())} still ({b[k][1]} + {still[k][1]} cells) are not {whole}'s "
                     f"{sum(a[k][0].values())} ({a[k][1]} cells) row for row")
print(f"{len(frames)} frames: walls.vtp holds {sum(still[0][0].values())} still wall particles and "
      f"{sum(still[1][0].values())} model vertices, each walls_NNNNN.vtp {sum(b[0][0].values())} and "
      f"{sum(b[1][0].values())} moving: together {whole}'s, row for row")
