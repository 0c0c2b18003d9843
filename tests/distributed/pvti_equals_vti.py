#!/usr/bin/env python3
"""pvti_equals_vti.py A.vti B.pvti: the pieces B lists, put together by their extents, hold every cell
array of A with the same bytes (eddy's .vti: cell data, raw appended, UInt64 size headers)."""
import os
import re
import sys


def read_vti(path):
    data = open(path, "rb").read()
    head, raw = data.split(b"<AppendedData encoding=\"raw\">", 1)
    raw = raw[raw.index(b"_") + 1:]
    text = head.decode()
    extent = [int(v) for v in re.search(r'<Piece Extent="([^"]+)"', text).group(1).split()]
    arrays = {}
    for m in re.finditer(r'<DataArray type="(\w+)" Name="(\w+)" NumberOfComponents="(\d)" format="appended" offset="(\d+)"', text):
        kind, name, comps, off = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
        size = int.from_bytes(raw[off:off + 8], "little")
        arrays[name] = (kind, comps, raw[off + 8:off + 8 + size])
    return extent, arrays


def main(vti, pvti):
    extent, whole = read_vti(vti)
    nx, ny = extent[1] - extent[0], extent[3] - extent[2]
    text = open(pvti).read()
    assert f'WholeExtent="0 {nx} 0 {ny} 0 0"' in text, "WholeExtent differs"
    pieces = re.findall(r'<Piece Extent="([^"]+)" Source="([^"]+)"/>', text)
    covered = 0
    for ext, source in pieces:
        e = [int(v) for v in ext.split()]
        pe, arrays = read_vti(os.path.join(os.path.dirname(pvti), source))
        assert pe == e, f"{source}: extent {pe}, the .pvti says {e}"
        for name, (kind, comps, buf) in whole.items():
            k2, c2, b2 = arrays[name]
            assert (k2, c2) == (kind, comps), name
            item = len(buf) // (nx * ny)
            w = e[1] - e[0]
            for j in range(e[2], e[3]):
                row = buf[(j * nx + e[0]) * item:(j * nx + e[1]) * item]
                got = b2[((j - e[2]) * w) * item:((j - e[2]) * w + w) * item]
                assert row == got, f"{source}: array {name}, row {j} differs"
        covered += (e[1] - e[0]) * (e[3] - e[2])
    assert covered == nx * ny, f"the pieces cover {covered} of {nx * ny} cells"
    print(f"{pvti}: {len(pieces)} pieces = {vti} ({nx} x {ny} cells, {len(whole)} arrays)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
