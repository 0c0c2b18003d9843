#!/usr/bin/env python3
"""A --pieces particle frame against the same frame written whole (tests/distributed/ranks_test.sh): the
.pvtp's pieces, read as eddy writes them (raw appended arrays, UInt64 headers), hold every particle of the
.vtp once, with the same bytes.      pvtp_equals_vtp.py WHOLE.vtp PIECES.pvtp"""
import os, re, struct, sys


def read_vtp(path):
    data = open(path, "rb").read()
    head_end = data.index(b"<AppendedData")
    head = data[:head_end].decode()
    raw = data[data.index(b"_", head_end) + 1:]
    n = int(re.search(r'NumberOfPoints="(\d+)"', head).group(1))
    arrays = {}
    for m in re.finditer(r'<DataArray type="(\w+)" Name="(\w+)" NumberOfComponents="(\d+)" format="appended" offset="(\d+)"', head):
        kind, name, comps, off = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
        size = struct.unpack_from("<Q", raw, off)[0]
        arrays[name] = raw[off + 8: off + 8 + size]
    width = {"Points": 12, "velocity": 12, "density": 4, "pressure": 4, "id": 4}
    ids = struct.unpack(f"<{n}I", arrays["id"]) if n else ()
    return {ids[i]: tuple(arrays[a][i * w:(i + 1) * w] for a, w in width.items()) for i in range(n)}


whole, pvtp = sys.argv[1], sys.argv[2]
a = read_vtp(whole)
text = open(pvtp).read()
sources = re.findall(r'<Piece Source="([^"]+)"', text)
b, counts = {}, []
for s in sources:
    part = read_vtp(os.path.join(os.path.dirname(pvtp), s))
    counts.append(len(part))
    for k, v in part.items():
        if k in b:
            sys.exit(f"FAIL: {pvtp}: particle {k} in two pieces")
        b[k] = v
if a.keys() != b.keys():
    sys.exit(f"FAIL: {pvtp}: {len(b)} particles in {len(sources)} pieces, the whole frame {len(a)}")
bad = [k for k in a if a[k] != b[k]]
if bad:
    sys.exit(f"FAIL: {pvtp}: {len(bad)} particles differ from {whole}")
print(f"{pvtp}: {len(sources)} pieces {counts} = {whole} ({len(a)} particles), byte for byte")
