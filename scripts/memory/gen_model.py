# Models of about T triangles in the formats eddy reads, for the model memory factors of
# src/geometry/model_memory.cpp (docs/scenes.md, "Memory"; issue 29, item 5).
# Usage: gen_model.py FORMAT T STYLE OUT
#   FORMAT: stlb (binary STL), stla (ASCII STL), obj, plya (ASCII PLY), plyb (binary PLY), glb, gltf (+ OUT.bin)
#   STYLE:  typical (a UV sphere of radius 1, shared corners, %.6f), split (the same sphere, every
#           triangle its own three corners), dense (a flat integer grid: the shortest text)
import sys, math, struct, json
fmt, T, style, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
n = max(2, int(math.sqrt(T / 2)))
verts = []
if style == 'dense':
    for j in range(n + 1):
        for i in range(n + 1):
            verts.append((i, j, (i * j) % 7))
    vs = lambda v: '%d %d %d' % v
else:
    for j in range(n + 1):
        th = math.pi * j / n
        for i in range(n + 1):
            ph = 2 * math.pi * i / n
            verts.append((math.sin(th) * math.cos(ph), math.cos(th), math.sin(th) * math.sin(ph)))
    vs = lambda v: '%.6f %.6f %.6f' % v
if style == 'split': vs = lambda v: '%.6f %.6f %.6f' % v
tris = []
if style == 'split':
    n = max(2, int(math.sqrt(T / 2)))
for j in range(n):
    for i in range(n):
        a = j * (n + 1) + i; b = a + 1; c = a + n + 1; d = c + 1
        tris.append((a, b, d)); tris.append((a, d, c))
if style == 'split':  # every triangle its own three vertices (V = 3T)
    nv = []
    for t in tris: nv += [verts[k] for k in t]
    verts = nv; tris = [(3 * i, 3 * i + 1, 3 * i + 2) for i in range(len(tris))]
if fmt == 'stlb':
    with open(out, 'wb') as f:
        f.write(b'\0' * 80 + struct.pack('<I', len(tris)))
        for t in tris:
            f.write(struct.pack('<3f', 0, 0, 0))
            for k in t: f.write(struct.pack('<3f', *verts[k]))
            f.write(b'\0\0')
elif fmt == 'stla':
    with open(out, 'w') as f:
        f.write('solid m\n')
        for t in tris:
            f.write('facet normal 0 0 0\nouter loop\n')
            for k in t: f.write('vertex %s\n' % vs(verts[k]))
            f.write('endloop\nendfacet\n')
        f.write('endsolid m\n')
elif fmt == 'obj':
    with open(out, 'w') as f:
        for v in verts: f.write('v %s\n' % vs(v))
        for t in tris: f.write('f %d %d %d\n' % (t[0] + 1, t[1] + 1, t[2] + 1))
elif fmt == 'plya':
    with open(out, 'w') as f:
        f.write('ply\nformat ascii 1.0\nelement vertex %d\nproperty float x\nproperty float y\nproperty float z\n'
                'element face %d\nproperty list uchar int vertex_indices\nend_header\n' % (len(verts), len(tris)))
        for v in verts: f.write('%s\n' % vs(v))
        for t in tris: f.write('3 %d %d %d\n' % t)
elif fmt == 'plyb':
    with open(out, 'wb') as f:
        f.write(('ply\nformat binary_little_endian 1.0\nelement vertex %d\nproperty float x\nproperty float y\nproperty float z\n'
                'element face %d\nproperty list uchar int vertex_indices\nend_header\n' % (len(verts), len(tris))).encode())
        f.write(b''.join(struct.pack('<3f', *v) for v in verts))
        f.write(b''.join(struct.pack('<B3i', 3, *t) for t in tris))
elif fmt in ('glb', 'gltf'):
    vb = b''.join(struct.pack('<3f', *v) for v in verts)
    ib = b''.join(struct.pack('<3I', *t) for t in tris)
    buf = vb + ib
    lo = [min(v[a] for v in verts) for a in range(3)]; hi = [max(v[a] for v in verts) for a in range(3)]
    doc = {"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
           "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
           "buffers": [{"byteLength": len(buf)}],
           "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": len(vb)},
                           {"buffer": 0, "byteOffset": len(vb), "byteLength": len(ib)}],
           "accessors": [{"bufferView": 0, "componentType": 5126, "count": len(verts), "type": "VEC3", "min": lo, "max": hi},
                         {"bufferView": 1, "componentType": 5125, "count": 3 * len(tris), "type": "SCALAR"}]}
    if fmt == 'gltf':
        binname = out.rsplit('/', 1)[-1] + '.bin'
        doc["buffers"][0]["uri"] = binname
        open(out + '.bin', 'wb').write(buf)
        open(out, 'w').write(json.dumps(doc))
    else:
        js = json.dumps(doc).encode(); js += b' ' * ((4 - len(js) % 4) % 4)
        buf += b'\0' * ((4 - len(buf) % 4) % 4)
        with open(out, 'wb') as f:
            f.write(struct.pack('<4sII', b'glTF', 2, 12 + 8 + len(js) + 8 + len(buf)))
            f.write(struct.pack('<I4s', len(js), b'JSON') + js)
            f.write(struct.pack('<I4s', len(buf), b'BIN\0') + buf)
print(len(verts), len(tris))
