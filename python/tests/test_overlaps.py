"""Issue 31 (item 5): add_particles skips particles that overlap the fluid, the walls or each other
(closer than 1.8 r; docs/python.md says why), with a warning giving the count, or refuses them all
(on_overlap='error'). A block dropped into water at rest used to be accepted and the run diverged."""
import warnings

import numpy as np
import pytest

import eddy

R = 0.01


def tank(method="wcsph"):
    return eddy.load_scene({
        "name": "tank", "dimension": 2, "method": method, "particle_radius": R, "duration": 1.0,
        "boundaries": [{"shape": "box", "min": [0, 0], "max": [0.6, 0.6]}],
        "fluids": [{"shape": "box", "min": [0, 0], "max": [0.6, 0.2]}],  # at rest
    })


def block(x0, y0, x1, y1, r=R):
    xs = np.arange(x0 + r, x1 - r / 2, 2 * r)
    ys = np.arange(y0 + r, y1 - r / 2, 2 * r)
    X, Y = np.meshgrid(xs, ys)
    return np.stack([X.ravel(), Y.ravel()], axis=1).astype(np.float32)


def add(sim, positions, velocities=None, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ids = sim.add_particles(positions, velocities, **kw)
    return ids, [str(x.message) for x in w if issubclass(x.category, UserWarning)]


def test_a_block_inside_the_water_is_skipped_whole_and_the_run_goes_on():
    sim = eddy.Simulation(tank(), threads=2)
    sim.step(20)
    n = len(sim)
    inside = block(0.05, 0.03, 0.55, 0.17) + np.float32(0.37 * R)  # off the fluid's lattice, inside it
    ids, w = add(sim, inside)
    assert len(ids) == 0 and len(sim) == n
    assert len(w) == 1 and w[0].startswith(f"add_particles: skipped {len(inside)} of {len(inside)} particle(s) lie closer "
                                           f"than 0.018 m (1.8 r) to the fluid, a wall or each other"), w
    for _ in range(10):
        stats = sim.step(20)
    assert stats["max_speed"] < 1.0  # the water stays at rest


def test_what_is_skipped_is_exactly_what_lies_too_close():
    """Against numpy: a block half in the water, half in the air (away from the walls), keeps exactly the
    rows at least 1.8 r from every fluid particle, with their velocities, in their order."""
    sim = eddy.Simulation(tank(), threads=2)
    sim.step(5)
    fluid = sim.positions.copy()
    new = block(0.2, 0.1, 0.34, 0.34) + np.float32([0.3 * R, 0.55 * R])
    vel = np.stack([np.arange(len(new)), -np.ones(len(new))], axis=1).astype(np.float32)
    d = np.sqrt(((new[:, None, :].astype(np.float64) - fluid[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    expect = d >= 1.8 * R
    assert 0 < expect.sum() < len(new)
    n = len(sim)
    ids, w = add(sim, new, vel)
    assert len(ids) == expect.sum() and len(sim) == n + expect.sum()
    assert len(w) == 1 and f"skipped {len(new) - expect.sum()} of {len(new)}" in w[0]
    by_id = {int(i): k for k, i in enumerate(sim.ids)}
    got = np.array([sim.positions[by_id[int(i)]] for i in ids])
    np.testing.assert_array_equal(got, new[expect])
    np.testing.assert_array_equal(np.array([sim.velocities[by_id[int(i)]] for i in ids]), vel[expect])


def test_particles_overlapping_each_other_or_a_wall():
    sim = eddy.Simulation(tank(), threads=1)
    n = len(sim)
    air = block(0.3, 0.35, 0.4, 0.45)
    twice = np.concatenate([air, air + np.float32(0.2 * R)])  # the second copy overlaps the first
    ids, w = add(sim, twice)
    assert len(ids) == len(air) and len(w) == 1 and "an earlier particle of these" in w[0]
    assert len(sim) == n + len(air)
    # Against the right wall (x = 0.6; its first layer of wall particles at x = 0.6 + r): a particle
    # resting there (centre r inside) is kept, one 0.2 r inside is not.
    ids, w = add(sim, [[0.6 - R, 0.5], [0.6 - 0.2 * R, 0.45]])
    assert len(ids) == 1 and len(w) == 1 and "a wall particle" in w[0]


def test_on_overlap_error_adds_nothing_and_says_which():
    sim = eddy.Simulation(tank(), threads=1)
    n = len(sim)
    new = np.concatenate([block(0.3, 0.35, 0.4, 0.45), [[0.1 + 0.3 * R, 0.1]]]).astype(np.float32)
    with pytest.raises(ValueError, match=rf"^add_particles: 1 of {len(new)} particle\(s\) lie closer than 0.018 m \(1.8 r\) "
                                         rf"to the fluid, a wall or each other \(particle {len(new) - 1} is .* m from a "
                                         r"fluid particle\); nothing was added"):
        sim.add_particles(new, on_overlap="error")
    assert len(sim) == n
    with pytest.raises(ValueError, match=r"on_overlap = 'allow': allowed: 'skip', 'error'"):
        sim.add_particles(new, on_overlap="allow")
    ids = sim.add_particles(new[:-1], on_overlap="error")  # none overlaps: all added, no warning
    assert len(ids) == len(new) - 1


def test_a_block_on_the_lattice_next_to_the_water_is_kept():
    """The threshold leaves room for fluid at rest: a block laid on the scene's lattice right above the
    surface of water settled for 200 steps (WCSPH compresses it by about 1%) is kept whole."""
    for method in ("wcsph", "dfsph"):
        sim = eddy.Simulation(tank(method), threads=2)
        sim.step(200)
        top = float(sim.positions[:, 1].max())
        above = block(0.0, 0.0, 0.6, 0.06) + np.float32([0.0, top + R])  # lowest row 2 r above the top one
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a skip would raise here
            ids = sim.add_particles(above)
        assert len(ids) == len(above), method
