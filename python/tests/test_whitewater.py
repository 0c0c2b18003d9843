"""eddy.Whitewater and eddy.whitewater (issue 32): spray, foam and bubbles beside a fluid stepped from
Python, and from a finished run's frames. Fluid at rest makes nothing; spray flies on the exact parabola;
bad settings and arguments raise ValueError naming the key; 1 and 2 threads give the same bits; the files
written carry the 'type' array."""
import csv
import re
import struct
from pathlib import Path

import numpy as np
import pytest

import eddy

R = 0.01  # particle radius (m)


def lattice(n, dim=3, r=R):
    """n^dim fluid particles at rest spacing 2 r."""
    g = np.arange(n, dtype=np.float32) * 2 * r
    return np.stack(np.meshgrid(*[g] * dim, indexing="ij"), -1).reshape(-1, dim).astype(np.float32)


def splash(threads=1, dim=3):
    """A block whose particles fly apart at random (3 m/s): one step makes every type of diffuse particle."""
    x = lattice(8 if dim == 3 else 20, dim)
    v = np.random.default_rng(1).normal(0.0, 3.0, x.shape).astype(np.float32)
    ww = eddy.Whitewater(dimension=dim, radius=R, max_particles=100000, seed=3)
    ww.step(x, v, 0.02, step_index=1, threads=threads)
    return ww, x


def read_vtp_arrays(path):
    """{name: numpy array} of a raw-appended VTK PolyData file (UInt64 headers), as eddy writes it."""
    data = Path(path).read_bytes()
    head, _, tail = data.partition(b"<AppendedData encoding=\"raw\">")
    blob = tail[tail.index(b"_") + 1:]
    types = {"Float32": np.float32, "UInt8": np.uint8, "UInt32": np.uint32, "Int64": np.int64}
    out = {}
    for m in re.finditer(rb'<DataArray type="(\w+)" Name="(\w+)" NumberOfComponents="(\d+)"[^>]*offset="(\d+)"', head):
        kind, name, comps, offset = m.group(1).decode(), m.group(2).decode(), int(m.group(3)), int(m.group(4))
        (nbytes,) = struct.unpack_from("<Q", blob, offset)
        a = np.frombuffer(blob, dtype=types[kind], count=nbytes // np.dtype(types[kind]).itemsize, offset=offset + 8)
        out[name] = a.reshape(-1, comps) if comps > 1 else a
    points = int(re.search(rb'NumberOfPoints="(\d+)"', head).group(1))
    return points, out


def read_ply(path):
    """(header lines, structured numpy array) of a binary little-endian PLY vertex list."""
    data = Path(path).read_bytes()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode().splitlines()
    kinds = {"float": "<f4", "uchar": "u1", "uint": "<u4", "int": "<i4", "double": "<f8"}
    fields = [(line.split()[2], kinds[line.split()[1]]) for line in header if line.startswith("property")]
    count = int(next(line.split()[2] for line in header if line.startswith("element vertex")))
    return header, np.frombuffer(data, dtype=np.dtype(fields), count=count, offset=end)


@pytest.mark.parametrize("dim", [2, 3])
def test_fluid_at_rest_makes_nothing(dim):
    x = lattice(10 if dim == 3 else 30, dim)
    ww = eddy.Whitewater(dimension=dim, radius=R)
    g = (0.0, -9.81, 0.0)[:dim]
    for k in range(20):
        ww.step(x, np.zeros_like(x), 0.002, gravity=g, step_index=k, threads=1)
    assert len(ww) == 0
    assert ww.counts == {"spray": 0, "foam": 0, "bubbles": 0, "generated": 0, "expired": 0, "escaped": 0, "capped": 0}
    assert ww.positions.shape == (0, dim) and ww.types.dtype == np.uint8
    assert ww.steps == 20


def test_spray_flies_on_the_parabola_and_still_fluid_makes_no_more():
    ww, x = splash()
    assert ww.counts["spray"] > 50 and ww.counts["foam"] > 0 and ww.counts["bubbles"] > 0
    generated = ww.counts["generated"]
    still = np.zeros_like(x)
    g = np.array([0.0, -9.81, 0.0], np.float32)
    dt = 0.005
    for k in range(5):
        x0, u0, ids0 = ww.positions, ww.velocities, ww.ids
        ww.step(x, still, dt, gravity=g, step_index=2 + k, threads=1)
        assert ww.counts["generated"] == generated  # no kinetic energy: no new particles
        where = {int(i): j for j, i in enumerate(ids0)}
        spray = np.flatnonzero(ww.types == 0)
        assert len(spray) > 50
        before = np.array([where[int(i)] for i in ww.ids[spray]])
        # Ballistic (eq. 9, exact for constant gravity): x += dt u + dt^2 g / 2, u += dt g.
        np.testing.assert_allclose(ww.positions[spray], x0[before] + dt * u0[before] + 0.5 * dt * dt * g, atol=2e-6)
        np.testing.assert_allclose(ww.velocities[spray], u0[before] + dt * g, atol=2e-6)
    # The counts are the types' tallies.
    c = np.bincount(ww.types, minlength=3)
    assert (c[0], c[1], c[2]) == (ww.counts["spray"], ww.counts["foam"], ww.counts["bubbles"])
    assert len(ww.ids) == len(set(ww.ids.tolist())) == len(ww)
    assert np.all(ww.lifetimes > 0)
    # An empty fluid drops them all (escaped).
    n = len(ww)
    ww.step(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32), dt)
    assert len(ww) == 0 and ww.counts["escaped"] >= n


@pytest.mark.parametrize("dim", [2, 3])
def test_same_bits_on_1_and_2_threads(dim):
    runs = []
    for threads in (1, 2):
        ww, x = splash(threads, dim)
        v = np.random.default_rng(2).normal(0.0, 1.5, x.shape).astype(np.float32)
        for k in range(3):
            ww.step(x + 0.001 * k, v, 0.01, step_index=2 + k, threads=threads)
        runs.append(ww)
    a, b = runs
    assert len(a) > 100
    for name in ("positions", "velocities", "types", "lifetimes", "ids"):
        assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name
    assert a.counts == b.counts


@pytest.mark.parametrize(
    "kwargs, key",
    [
        ({"foo": 1}, "foo"),
        ({"drag": 2.0}, "drag"),
        ({"trapped_air_min": 9.0}, "trapped_air_min"),
        ({"lifetime_min": 6.0}, "lifetime_min"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"buoyancy": "high"}, "buoyancy"),
        ({"kernel_radius": float("nan")}, "kernel_radius"),
    ],
)
def test_bad_settings_name_the_key(kwargs, key):
    with pytest.raises(ValueError, match=f"'{key}'") as e:
        eddy.Whitewater(dimension=3, radius=R, **kwargs)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match=f"'{key}'"):  # the post-process checks them first
        eddy.whitewater("no_such_run", **kwargs)


def test_bad_arguments_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="dimension"):
        eddy.Whitewater(dimension=4, radius=R)
    for r in (0.0, -1.0, float("nan"), "big"):
        with pytest.raises(ValueError, match="radius"):
            eddy.Whitewater(dimension=3, radius=r)
    ww = eddy.Whitewater(dimension=3, radius=R)
    x = lattice(3)
    v = np.zeros_like(x)
    with pytest.raises(ValueError, match="threads"):
        ww.step(x, v, 0.01, threads=-1)
    with pytest.raises(ValueError, match="threads"):
        ww.step(x, v, 0.01, threads=10**20)
    with pytest.raises(ValueError, match="positions"):
        ww.step(x[:, :2], v, 0.01)
    with pytest.raises(ValueError, match="velocities"):
        ww.step(x, v[:-1], 0.01)
    bad = x.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="positions: row 1"):
        ww.step(bad, v, 0.01)
    for dt in (-0.01, float("inf")):
        with pytest.raises(ValueError, match="dt"):
            ww.step(x, v, dt)
    with pytest.raises(ValueError, match="gravity"):
        ww.step(x, v, 0.01, gravity=(0, -9.81))
    with pytest.raises(ValueError, match="step_index"):
        ww.step(x, v, 0.01, step_index=-1)
    with pytest.raises(ValueError, match="allowed: .vtp, .ply"):
        ww.write(tmp_path / "foam.obj")
    with pytest.raises(ValueError, match="threads"):
        eddy.whitewater(tmp_path, threads=-2)
    with pytest.raises(ValueError, match="substeps"):
        eddy.whitewater(tmp_path, substeps=0)
    with pytest.raises(ValueError, match="summary.json"):
        eddy.whitewater(tmp_path)
    assert ww.steps == 0  # refused calls did not step


@pytest.mark.parametrize("dim", [2, 3])
def test_files_carry_the_type_array(tmp_path, dim):
    ww, _ = splash(1, dim)
    n = len(ww)
    ww.write(tmp_path / "ww.vtp")
    ww.write(tmp_path / "ww.ply")
    points, arrays = read_vtp_arrays(tmp_path / "ww.vtp")
    assert points == n
    assert arrays["type"].dtype == np.uint8
    np.testing.assert_array_equal(arrays["type"], ww.types)
    np.testing.assert_array_equal(arrays["id"], ww.ids)
    np.testing.assert_array_equal(arrays["Points"][:, :dim], ww.positions)
    if dim == 2:
        assert np.all(arrays["Points"][:, 2] == 0)
    header, ply = read_ply(tmp_path / "ww.ply")
    assert "property uchar type" in header and len(ply) == n
    np.testing.assert_array_equal(ply["type"], ww.types)
    np.testing.assert_array_equal(ply["id"], ww.ids)
    np.testing.assert_array_equal(ply["x"], ww.positions[:, 0])


def test_post_process_of_a_run(tmp_path):
    sim = eddy.Simulation(eddy.load_scene("dam_break_3d", overrides=["particle_radius=0.01"]), threads=2)
    sim.run(out=tmp_path / "run", until=0.25, fps=20, formats=["vtk"])
    rows = eddy.whitewater(tmp_path / "run", substeps=4, threads=1, seed=2)
    assert [r["frame"] for r in rows] == list(range(len(rows))) and len(rows) >= 5
    assert rows[0]["spray"] + rows[0]["foam"] + rows[0]["bubbles"] == 0  # the first frame: nothing yet
    last = rows[-1]
    assert last["foam"] + last["bubbles"] + last["spray"] > 0
    assert last["time"] == pytest.approx(0.25, abs=0.051)
    with open(tmp_path / "run" / "whitewater.csv") as f:
        table = list(csv.DictReader(f))
    assert [int(t["foam"]) for t in table] == [r["foam"] for r in rows]
    points, arrays = read_vtp_arrays(tmp_path / "run" / "frames" / f"whitewater_{last['frame']:05d}.vtp")
    c = np.bincount(arrays["type"], minlength=3)
    assert points == sum(c) and (c[0], c[1], c[2]) == (last["spray"], last["foam"], last["bubbles"])
    first = (tmp_path / "run" / "frames" / f"whitewater_{last['frame']:05d}.vtp").read_bytes()
    # The same files on 2 threads.
    rows2 = eddy.whitewater(tmp_path / "run", substeps=4, threads=2, seed=2)
    assert rows2 == rows
    assert (tmp_path / "run" / "frames" / f"whitewater_{last['frame']:05d}.vtp").read_bytes() == first
