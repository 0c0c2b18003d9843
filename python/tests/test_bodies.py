"""Rigid bodies from Python (issue 30): sim.bodies, sim.add_body, sim.set_body_force and run()'s per-frame
bodies, checked against physics (a floating box is carried by its weight) and against the library's
own errors (an overlapping body is refused with one line naming bodies[i])."""
import numpy as np
import pytest

import eddy

G = 9.81
R = 0.005


def tank(method="dfsph"):
    """A 2D tank 0.6 m wide, water 0.2 m deep, a box body 0.1 x 0.1 m of density 500 at its draft."""
    return eddy.load_scene({
        "name": "bodies_py", "dimension": 2, "method": method, "particle_radius": R, "duration": 2.0,
        "boundaries": [{"shape": "box", "min": [0, 0], "max": [0.6, 0.6]}],
        "bodies": [{"shape": "box", "min": [0.25, 0.15], "max": [0.35, 0.25], "density": 500}],
        "fluids": [{"shape": "box", "min": [0, 0], "max": [0.6, 0.2]}],
    })


def test_a_floating_box_is_carried_by_its_weight():
    sim = eddy.Simulation(tank(), threads=2)
    b = sim.bodies
    assert set(b) == {"position", "orientation", "velocity", "angular_velocity", "force", "torque", "mass", "object"}
    assert b["position"].shape == (1, 3) and b["orientation"].shape == (1, 4)
    assert b["mass"][0] == pytest.approx(500 * 0.1 * 0.1)  # kg per metre of depth
    assert b["object"][0] == 1  # after the tank
    assert np.all(np.isnan(b["force"]))  # no step yet: unknown
    np.testing.assert_allclose(b["position"][0], [0.3, 0.2, 0.0])
    np.testing.assert_allclose(b["orientation"][0], [1, 0, 0, 0])
    lift, span = 0.0, 0.0
    while sim.time < 1.5:
        dt = sim.step()["dt"]
        if sim.time > 1.0:
            lift += sim.bodies["force"][0, 1] * dt
            span += dt
    weight = 500 * 0.1 * 0.1 * G
    assert lift / span == pytest.approx(weight, rel=0.05)
    # the force is the body's row of boundary_forces() (its boundary object)
    np.testing.assert_array_equal(sim.bodies["force"][0], sim.boundary_forces()[1, :3])
    np.testing.assert_array_equal(sim.bodies["torque"][0], sim.boundary_forces()[1, 3:])
    assert np.all(sim.bodies["force"][:, 2] == 0.0)  # 2D


def test_views_look_into_the_state_and_keep_their_values():
    sim = eddy.Simulation(tank(), threads=1)
    sim.step(5)
    b = sim.bodies
    pos = b["position"]
    assert not pos.flags.writeable and not pos.flags.owndata  # a view, not a copy
    with pytest.raises(ValueError):
        pos[0, 0] = 1.0
    before = pos.copy()
    sim.step(20)
    np.testing.assert_array_equal(pos, before)  # the old view keeps the values it had
    assert not np.array_equal(sim.bodies["position"], before)  # the body moved on


def test_add_body_removes_the_fluid_it_covers_and_refuses_an_overlap():
    sim = eddy.Simulation(tank(), threads=2)
    sim.step(20)
    first = {k: v.copy() for k, v in sim.bodies.items() if k in ("position", "velocity", "orientation")}
    n = len(sim)
    removed = sim.add_body({"shape": "circle", "center": [0.5, 0.2], "radius": 0.04, "density": 700})
    assert 15 < removed < 64
    assert len(sim) == n - removed
    b = sim.bodies
    assert len(b["mass"]) == 2 and b["object"][1] == 2
    for k, v in first.items():
        np.testing.assert_array_equal(b[k][0], v[0])  # the first body keeps its state
    np.testing.assert_allclose(b["position"][1], [0.5, 0.2, 0.0])
    x = sim.positions
    assert np.all(np.hypot(x[:, 0] - 0.5, x[:, 1] - 0.2) > 0.04 + 0.9 * R)
    # Over the first body where it is now: refused, one line naming the new index; nothing changes.
    n = len(sim)
    h = sim.state_hash()
    px, py = sim.bodies["position"][0, :2]
    with pytest.raises(ValueError) as e:
        sim.add_body({"shape": "circle", "center": [px, py + 0.06], "radius": 0.02, "density": 500})
    msg = str(e.value)
    assert "bodies[2]" in msg and "overlaps bodies[0]" in msg and "\n" not in msg
    with pytest.raises(ValueError, match=r"bodies\[2\].*density"):
        sim.add_body({"shape": "box", "min": [0.4, 0.4], "max": [0.45, 0.45], "density": -1})
    with pytest.raises(ValueError, match=r"bodies\[2\].*wheels"):
        sim.add_body({"shape": "box", "min": [0.4, 0.4], "max": [0.45, 0.45], "density": 500, "wheels": 4})
    assert len(sim) == n and sim.state_hash() == h and len(sim.bodies["mass"]) == 2
    # Dropped above the water, it falls in.
    assert sim.add_body({"shape": "box", "min": [0.08, 0.4], "max": [0.14, 0.45], "density": 500}) == 0
    y0 = sim.bodies["position"][2, 1]
    sim.step(150)
    assert sim.bodies["position"][2, 1] < y0 - 0.05


def test_set_body_force_pushes_a_body():
    pushed, still = eddy.Simulation(tank(), threads=1), eddy.Simulation(tank(), threads=1)
    for s in (pushed, still):
        s.step(10)
    pushed.set_body_force(0, [5.0, 0.0])  # N per metre: 1 m/s^2 on 5 kg/m, less what the water holds back
    while pushed.time < 0.4:
        pushed.step()
    while still.time < pushed.time:
        still.step()
    moved = pushed.bodies["position"][0, 0] - still.bodies["position"][0, 0]
    assert 0.005 < moved < 0.5 * 1.0 * 0.4**2
    pushed.set_body_force(0, [0, 0, 0], torque=0.5)  # a twist about z
    w0 = pushed.bodies["angular_velocity"][0, 2]
    pushed.step(40)
    assert pushed.bodies["angular_velocity"][0, 2] > w0
    with pytest.raises(ValueError, match="body 3"):
        pushed.set_body_force(3, [1, 0])
    with pytest.raises(ValueError, match="not finite"):
        pushed.set_body_force(0, [np.nan, 0])
    with pytest.raises(ValueError, match="no z"):
        pushed.set_body_force(0, [0, 0, 1])


def test_run_returns_the_bodies_of_every_frame(tmp_path):
    sim = eddy.Simulation(tank(), threads=2)
    r = sim.run(out=tmp_path, until=0.2, fps=20)
    bodies = r["bodies"]
    assert bodies.shape == (r["frames"], 1, 13)
    np.testing.assert_allclose(bodies[0, 0, :3], [0.3, 0.2, 0.0])
    b = sim.bodies
    np.testing.assert_array_equal(bodies[-1, 0], np.concatenate(
        [b["position"][0], b["orientation"][0], b["velocity"][0], b["angular_velocity"][0]]))
    rows = np.loadtxt(tmp_path / "bodies.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose(rows[:, 3], bodies[:, 0, 1], rtol=1e-8)  # y, as out/bodies.csv writes it
