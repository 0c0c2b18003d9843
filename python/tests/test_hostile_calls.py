"""Issue 45 ("Tests the new surfaces still lack"): the live-mutation methods of eddy.Simulation
(add_body, add_emitter, stop_emitter, set_body_force, and step/run around them) given hostile input:
bad values (NaN, inf, negative or zero sizes, 1e38, wrong types, unknown keys, bodies outside the tank,
a nozzle wider than max_particles), calls after the simulation is done with (a run finished, a run
stopped by its callback, a step that diverged, an object whose __init__ never ran) and calls from two
Python threads at once (step() releases the GIL).

What is required: a Python exception with a one-line message naming the key and what is allowed; never
a crash (a signal), never a hang, never a key or value silently ignored; a refused call leaves the
simulation as it was. Cases that could kill the interpreter run in a subprocess (`script`), which fails
the test on a signal and has a generous timeout as its hang guard (no wall-clock assertions otherwise).
Known bugs are strict xfails: they start failing (XPASS) when fixed, so the marker goes then.
"""
import inspect
import math
import re
import signal
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

import eddy

R = 0.01
NAN, INF = math.nan, math.inf

# ---------------------------------------------------------------------------------------------------
# Scenes: a 2D tank with one floating box (about 280 particles), the bundled river (an emitter, no fluid
# at the start) at a coarse radius, a small 3D tank. The subprocess scripts get them as source (SCENES).

def tank(bodies=True):
    return eddy.load_scene({
        "name": "hostile", "dimension": 2, "method": "dfsph", "particle_radius": 0.01, "duration": 1.0,
        "boundaries": [{"shape": "box", "min": [0, 0], "max": [0.6, 0.6]}],
        "bodies": [{"shape": "box", "min": [0.25, 0.15], "max": [0.35, 0.25], "density": 500}] if bodies else [],
        "fluids": [{"shape": "box", "min": [0, 0], "max": [0.6, 0.2]}],
    })


def river():
    return eddy.load_scene("river_channel_2d", ["duration=1", "particle_radius=0.01"])


def tank3(bodies=True):
    return eddy.load_scene({
        "name": "hostile3", "dimension": 3, "method": "dfsph", "particle_radius": 0.02, "duration": 1.0,
        "boundaries": [{"shape": "box", "min": [0, 0, 0], "max": [0.4, 0.4, 0.4]}],
        "bodies": [{"shape": "box", "min": [0.15, 0.1, 0.15], "max": [0.25, 0.2, 0.25], "density": 500}] if bodies else [],
        "fluids": [{"shape": "box", "min": [0, 0, 0], "max": [0.4, 0.12, 0.4]}],
    })


def outcome(label, f):
    """For the subprocess scripts: one line on stdout, label|ok|result or label|ExceptionType|message
    (a newline in the message written as backslash n)."""
    try:
        r = f()
        print(f"{label}|ok|{r!r}".replace("\n", " "), flush=True)
    except Exception as e:
        print(f"{label}|{type(e).__name__}|{str(e).replace(chr(10), chr(92) + 'n')}", flush=True)


SCENES = "import math, sys, threading\nimport numpy as np\nimport eddy\n\n" + "\n".join(
    inspect.getsource(f) for f in (tank, river, tank3, outcome))

BODY = {"shape": "circle", "center": [0.5, 0.45], "radius": 0.03, "density": 500}  # fits, above the water
EMITTER = {"center": [0.3, 0.15], "direction": [1, 0], "speed": 1.0, "width": 0.03}


def with_(base, **changes):
    d = dict(base)
    for k, v in changes.items():
        if v is ...:
            d.pop(k)
        else:
            d[k] = v
    return d


def script(*parts, timeout=120):
    """Runs SCENES and the parts in a fresh interpreter; fails on a signal (crash), a hang or an error
    outside `outcome`. Returns the `outcome` lines as {label: (kind, text)}."""
    code = SCENES + "".join(textwrap.dedent(p) for p in parts)
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"hung: no exit within {timeout} s; output so far: {e.stdout!r}")
    if r.returncode < 0:
        pytest.fail(f"killed by {signal.Signals(-r.returncode).name}; stdout: {r.stdout[-800:]!r}; "
                    f"stderr: {r.stderr[-800:]!r}")
    assert r.returncode == 0, r.stderr[-2000:]
    seen = {}
    for line in r.stdout.splitlines():
        if line.count("|") >= 2:
            label, kind, text = line.split("|", 2)
            seen[label] = (kind, text)
    return seen


def refused(f, exc=ValueError):
    """The message of the exception f() raises, checked to be one line."""
    with pytest.raises(exc) as e:
        f()
    msg = str(e.value)
    assert msg and "\n" not in msg, msg
    return msg


def snapshot(sim):
    return (sim.state_hash(), len(sim), len(sim.bodies["mass"]), len(sim.emitters), sim.time, sim.steps)


@pytest.fixture(scope="module")
def tank_sim():
    sim = eddy.Simulation(tank(), threads=1)
    sim.step(2)
    return sim


@pytest.fixture(scope="module")
def river_sim():
    sim = eddy.Simulation(river(), threads=1)
    sim.step(5)
    return sim


# ---------------------------------------------------------------------------------------------------
# add_body: bad values are refused naming bodies[1].<key>; the simulation is unchanged.

B = r"^hostile: bodies\[1\]"
ADD_BODY_REFUSED = [
    ("density -1", with_(BODY, density=-1), B + r"\.density = -1: must be > 0"),
    ("density 0", with_(BODY, density=0), B + r"\.density = 0: must be > 0"),
    ("density 1e38", with_(BODY, density=1e38), B + r"\.density = 1e\+38: allowed: a mean density of 0.001 to 1e\+06"),
    ("density 1e-38", with_(BODY, density=1e-38), B + r"\.density = 1e-38: allowed: a mean density"),
    ("density as text", with_(BODY, density="heavy"), B + r"\.density"),
    ("density True", with_(BODY, density=True), B + r"\.density"),
    ("radius 0", with_(BODY, radius=0), B + r"\.radius = 0: must be > 0"),
    ("radius negative", with_(BODY, radius=-0.03), B + r"\.radius = -0.03: must be > 0"),
    ("radius 1e38", with_(BODY, radius=1e38), B + r"\.radius: a circle wall of about .* allowed: at most"),
    ("box 1e38 wide", {"shape": "box", "min": [-1e38, -1e38], "max": [1e38, 1e38], "density": 500},
     B + r"\.min/max: a box wall of about .* allowed: at most"),
    ("box 1e8 wide", {"shape": "box", "min": [0.1, 0.3], "max": [1e8, 1e8], "density": 500}, B + r"\.min/max: .*allowed"),
    ("box min above max", {"shape": "box", "min": [0.5, 0.5], "max": [0.4, 0.4], "density": 500},
     B + r": min.x = 0.5 must be below max.x = 0.4"),
    ("box of no width", {"shape": "box", "min": [0.4, 0.4], "max": [0.4, 0.45], "density": 500}, B + r": min.x = 0.4 must be below"),
    ("outside the tank", with_(BODY, center=[5.0, 5.0]), B + r": reaches outside every container .*inside the walls"),
    ("at 1e38", with_(BODY, center=[1e38, 0.4]), B + r": reaches outside every container"),
    ("through a wall", {"shape": "box", "min": [0.55, 0.4], "max": [0.65, 0.45], "density": 500},
     B + r": reaches outside every container"),
    ("over bodies[0]", with_(BODY, center=[0.3, 0.2]), B + r": overlaps bodies\[0\]"),
    ("center of 3", with_(BODY, center=[0.5, 0.4, 0.0]), B + r"\.center: expected 2 numbers, got 3"),
    ("center of 1", with_(BODY, center=[0.5]), B + r"\.center: expected 2 numbers, got 1"),
    ("center as text", with_(BODY, center="middle"), B + r"\.center: expected a list of 2 numbers"),
    ("velocity 1e38", with_(BODY, velocity=[1e38, 0]), B + r"\.velocity: .*allowed: up to 1000 m/s"),
    ("friction -1", with_(BODY, friction=-1), B + r"\.friction = -1: must be >= 0"),
    ("unknown key", with_(BODY, wheels=4), B + r": unknown key 'wheels'; allowed: shape, "),
    ("misspelt key", with_(BODY, desity=3), B + r": unknown key 'desity'; did you mean 'density'\?"),
    ("unknown shape", with_(BODY, shape="blob"), B + r"\.shape: \"blob\" is not allowed for a body in 2D; allowed: box, circle, polygon"),
    ("a 3D shape", {"shape": "mesh", "file": "/nonexistent.obj", "density": 500}, B + r"\.shape: \"mesh\" is not allowed"),
    ("no shape", with_(BODY, shape=...), B + r"\.shape: missing"),
    ("polygon of 2 corners", {"shape": "polygon", "points": [[0.4, 0.4], [0.45, 0.4]], "density": 500}, B + r"\.points: "),
    ("self-crossing polygon", {"shape": "polygon", "points": [[0.4, 0.4], [0.45, 0.45], [0.45, 0.4], [0.4, 0.45]],
                               "density": 500}, B + r"\.shape: the polygon encloses no volume"),
    ("a string", "box", B + r": expected an object, got string"),
    ("None", None, B + r": expected an object, got null"),
    ("a list", [BODY], B + r": expected an object, got array"),
    ("a number", 3, B + r": expected an object, got number"),
]


@pytest.mark.parametrize("case, body, message", ADD_BODY_REFUSED, ids=[c[0] for c in ADD_BODY_REFUSED])
def test_add_body_refuses_a_bad_value_naming_it(tank_sim, case, body, message):
    before = snapshot(tank_sim)
    msg = refused(lambda: tank_sim.add_body(body))
    assert re.search(message, msg), msg
    assert snapshot(tank_sim) == before


def test_add_body_refuses_json_nested_too_deep(tank_sim):
    deep = []
    for _ in range(300):
        deep = [deep]
    before = snapshot(tank_sim)
    assert "nested deeper than 64" in refused(lambda: tank_sim.add_body(with_(BODY, extra=deep)))
    assert snapshot(tank_sim) == before


ADD_BODY_3D = [
    ("sphere 1e38", {"shape": "sphere", "center": [0.2, 0.3, 0.2], "radius": 1e38, "density": 500},
     r"bodies\[1\]\.radius: a sphere wall of about .* allowed: at most"),
    ("covers all the fluid", {"shape": "box", "min": [0, 0, 0], "max": [0.4, 0.2, 0.4], "density": 500},
     r"bodies\[1\]: (would remove every fluid particle|overlaps)"),
    ("mesh file missing", {"shape": "mesh", "file": "/nonexistent.obj", "density": 500},
     r"bodies\[1\]\.file: /nonexistent.obj: cannot open file"),
    ("mesh file a folder", {"shape": "mesh", "file": tempfile.gettempdir(), "density": 500}, r"bodies\[1\]\.file: .*folder"),
    ("a 2D shape", {"shape": "circle", "center": [0.2, 0.3, 0.2], "radius": 0.03, "density": 500},
     r"bodies\[1\]\.shape: \"circle\" is not allowed for a body in 3D"),
    ("axis of zero", {"shape": "cylinder", "center": [0.2, 0.3, 0.2], "radius": 0.03, "height": 0.05,
                      "axis": [0, 0, 0], "density": 500}, r"bodies\[1\]\.axis: must not be zero"),
    ("spin 1e9", {"shape": "sphere", "center": [0.2, 0.3, 0.2], "radius": 0.05, "density": 500,
                  "angular_velocity": [1e9, 0, 0]}, r"bodies\[1\]\.angular_velocity = 1e\+09 rad/s: allowed: up to"),
    ("negative inertia", {"shape": "sphere", "center": [0.2, 0.3, 0.2], "radius": 0.05, "density": 500,
                          "inertia": [-1, 1, 1]}, r"bodies\[1\]\.inertia: the moments must be > 0"),
    ("unknown axis", {"shape": "sphere", "center": [0.2, 0.3, 0.2], "radius": 0.05, "density": 500,
                      "fixed_axes": ["q"]}, r"bodies\[1\]\.fixed_axes: \"q\" is no axis of a 3D body; allowed: "),
]


def test_add_body_in_3d_refuses_bad_values_naming_them():
    sim = eddy.Simulation(tank3(), threads=1)
    sim.step(1)
    before = snapshot(sim)
    for case, body, message in ADD_BODY_3D:
        msg = refused(lambda: sim.add_body(body))
        assert re.search(message, msg), (case, msg)
    assert snapshot(sim) == before


@pytest.mark.parametrize("key, body", [("density", with_(BODY, density=NAN)), ("radius", with_(BODY, radius=INF)),
                                       ("center", with_(BODY, center=[NAN, 0.4])), ("velocity", with_(BODY, velocity=[INF, 0])),
                                       ("friction", with_(BODY, friction=NAN))])
def test_add_body_names_the_key_of_a_nan_or_inf(tank_sim, key, body):
    before = snapshot(tank_sim)
    msg = refused(lambda: tank_sim.add_body(body))
    assert snapshot(tank_sim) == before
    assert key in msg, msg


def test_add_body_names_the_key_of_a_value_that_is_no_json(tank_sim):
    msg = refused(lambda: tank_sim.add_body(with_(BODY, density=object())), (ValueError, TypeError))
    assert "density" in msg, msg


def test_add_body_refuses_a_huge_box_before_building_it():
    seen = script("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (2_500_000_000, 2_500_000_000))
        s = eddy.Simulation(tank(), threads=1)
        outcome("add", lambda: s.add_body({"shape": "box", "min": [0.1, 0.3], "max": [2e7, 2e7], "density": 500}))
    """)
    kind, text = seen["add"]
    assert kind == "ValueError" and "bodies[1].min/max: a box wall of about" in text, seen["add"]


def test_add_body_refuses_a_body_smaller_than_a_particle():
    sim = eddy.Simulation(tank(), threads=1)
    msg = refused(lambda: sim.add_body(with_(BODY, radius=1e-9)))
    assert "radius" in msg


# ---------------------------------------------------------------------------------------------------
# add_emitter

E = r"emitters\[1\]"
ADD_EMITTER_REFUSED = [
    ("speed -1", with_(EMITTER, speed=-1), E + r"\.speed = -1: must be > 0"),
    ("speed 0", with_(EMITTER, speed=0), E + r"\.speed = 0: must be > 0"),
    ("speed 1e38", with_(EMITTER, speed=1e38), E + r"\.speed: gives a jet of 1e\+38 m/s; allowed: up to 1e4 m/s"),
    ("speed True", with_(EMITTER, speed=True), E + r"\.speed: must be a number, got true"),
    ("flow_rate 1e38", with_(EMITTER, speed=..., flow_rate=1e38), E + r"\.flow_rate: gives a jet of .*allowed: up to 1e4"),
    ("flow_rate -1", with_(EMITTER, speed=..., flow_rate=-1), E + r"\.flow_rate = -1: must be > 0"),
    ("speed and flow_rate", with_(EMITTER, flow_rate=0.01), E + r": give one of speed .* not both"),
    ("neither", with_(EMITTER, speed=...), E + r": give one of speed .* not neither"),
    ("width 0", with_(EMITTER, width=0), E + r"\.width = 0: must be > 0"),
    ("width -1", with_(EMITTER, width=-1), E + r"\.width = -1: must be > 0"),
    ("width 1e-9", with_(EMITTER, width=1e-9), E + r"\.width = 1e-09: smaller than a particle; allowed: at least"),
    ("width 1e38", with_(EMITTER, width=1e38), E + r": width = 1e\+38 m makes a nozzle of about .*allowed: a nozzle whose"),
    ("width 1e15", with_(EMITTER, width=1e15), E + r": width = 1e\+15 m makes a nozzle of about .*allowed"),
    ("radius in 2D", with_(EMITTER, width=..., radius=0.03), E + r": unknown key 'radius'; allowed: center, direction"),
    ("direction zero", with_(EMITTER, direction=[0, 0]), E + r"\.direction: must not be zero; allowed"),
    ("direction 1e-320", with_(EMITTER, direction=[1e-320, 0]), E + r"\.direction: must not be zero"),
    ("direction 1e308", with_(EMITTER, direction=[1e308, 1e308]), E + r"\.direction\[0\] = 1e\+308: beyond .*allowed"),
    ("direction of 3", with_(EMITTER, direction=[1, 0, 0]), E + r"\.direction: expected 2 numbers, got 3"),
    ("outside the domain", with_(EMITTER, center=[50, 50]), E + r": the nozzle's point .* lies outside the domain; allowed"),
    ("at 1e38", with_(EMITTER, center=[1e38, 0.2]), E + r": the nozzle's point .* outside the domain"),
    ("in the floor", with_(EMITTER, center=[0.3, -0.02]), E + r": the nozzle's point .* lies in a wall .*allowed"),
    ("stop 0", with_(EMITTER, stop=0), E + r"\.stop = 0: must be after start"),
    ("stop -1", with_(EMITTER, stop=-1), E + r"\.stop = -1: must be after start"),
    ("unknown key", with_(EMITTER, nozzle=3), E + r": unknown key 'nozzle'; allowed: center, direction"),
    ("misspelt key", with_(EMITTER, widht=0.03), E + r": unknown key 'widht'; did you mean 'width'\?"),
    ("a string", "x", E + r": expected an object, got string"),
    ("None", None, E + r": expected an object, got null"),
    ("a list", [EMITTER], E + r": expected an object, got array"),
]


@pytest.mark.parametrize("case, emitter, message", ADD_EMITTER_REFUSED, ids=[c[0] for c in ADD_EMITTER_REFUSED])
def test_add_emitter_refuses_a_bad_value_naming_it(river_sim, case, emitter, message):
    before = snapshot(river_sim)
    msg = refused(lambda: river_sim.add_emitter(emitter))
    assert re.search(message, msg), msg
    assert snapshot(river_sim) == before


def test_an_emitter_wider_than_max_particles_is_refused():
    sim = eddy.Simulation(eddy.load_scene("river_channel_2d", ["duration=1", "particle_radius=0.01",
                                                               "domain.max=[100, 100]"]), threads=1, max_particles=50)
    sim.step(2)
    nozzle = {"center": [0.6, 0.7], "direction": [0, -1], "speed": 1.0, "width": 1.2}  # 60 particles across
    msg = refused(lambda: sim.add_emitter(nozzle))
    assert "emitters[1]: width = 1.2 m makes a nozzle of about 60 particles across" in msg and "50" in msg, msg
    assert len(sim.emitters) == 1
    # 40 across fits: it waits at max_particles (what falls due meanwhile counts as blocked)
    assert sim.add_emitter(with_(nozzle, width=0.8)) == 1
    sim.step(60)
    assert len(sim) <= 50 and sim.emitters[1]["blocked"] > 0
    msg = refused(lambda: sim.add_particles([[0.9, 0.9]]))
    assert "max_particles = 50" in msg


@pytest.mark.parametrize("key, emitter", [("speed", with_(EMITTER, speed=NAN)), ("width", with_(EMITTER, width=INF)),
                                          ("center", with_(EMITTER, center=[NAN, 0.2])),
                                          ("direction", with_(EMITTER, direction=[NAN, 0]))])
def test_add_emitter_names_the_key_of_a_nan_or_inf(river_sim, key, emitter):
    before = snapshot(river_sim)
    msg = refused(lambda: river_sim.add_emitter(emitter))
    assert snapshot(river_sim) == before
    assert key in msg, msg


@pytest.mark.parametrize("start", ["now", -5, 1e38], ids=["text", "negative", "1e38"])
def test_add_emitter_refuses_a_bad_start_naming_it(start):
    sim = eddy.Simulation(river(), threads=1)
    sim.step(2)
    msg = refused(lambda: sim.add_emitter(with_(EMITTER, start=start)))
    assert "emitters[1].start" in msg, msg
    assert len(sim.emitters) == 1


def test_stop_emitter_refuses_an_index_that_does_not_exist(river_sim):
    before = snapshot(river_sim)
    assert "stop_emitter: k = -1: allowed" in refused(lambda: river_sim.stop_emitter(-1))
    assert "stop_emitter(5): the simulation has 1 emitter(s)" in refused(lambda: river_sim.stop_emitter(5))
    assert snapshot(river_sim) == before


def test_stop_emitter_names_the_indices_allowed():
    sim = eddy.Simulation(river(), threads=1)
    assert "allowed: 0 to 0" in refused(lambda: sim.stop_emitter(1))  # one emitter: index 0 only
    none = eddy.Simulation(tank(), threads=1)
    assert "0 to 0" not in refused(lambda: none.stop_emitter(0))  # no emitter: no index


@pytest.mark.parametrize("k", [1.5, "0", None, 10**30, True, False], ids=repr)
def test_stop_emitter_refuses_an_index_that_is_no_whole_number(k):
    sim = eddy.Simulation(river(), threads=1)
    sim.step(2)
    msg = refused(lambda: sim.stop_emitter(k))
    assert msg.startswith("stop_emitter: k = ") and "allowed" in msg, msg
    assert sim.emitters[0]["stop"] == 1.0  # not stopped


def test_stopping_a_stopped_emitter_again_does_not_restart_it():
    sim = eddy.Simulation(river(), threads=1)
    while sim.time < 0.1:
        sim.step()
    sim.stop_emitter(0)
    stop = sim.emitters[0]["stop"]
    sim.step(20)
    n = sim.emitters[0]["emitted"]
    while sim.time < stop + 0.2:
        sim.step()
    sim.stop_emitter(0)
    sim.step(5)
    assert sim.emitters[0]["stop"] == stop
    assert sim.emitters[0]["emitted"] == n


# ---------------------------------------------------------------------------------------------------
# set_body_force

SET_BODY_FORCE_REFUSED = [
    ((0, [NAN, 0]), {}, r"^set_body_force: force: not finite"),
    ((0, [INF, 0]), {}, r"^set_body_force: force: not finite"),
    ((0, [0, 0]), {"torque": NAN}, r"^set_body_force: torque: not finite"),
    ((0, [0, 0]), {"torque": -INF}, r"^set_body_force: torque: not finite"),
    ((0, [0, 0, 1]), {}, r"^set_body_force: force: a 2D body has no z; allowed: fz = 0"),
    ((0, [0, 0]), {"torque": [1, 0, 0]}, r"^set_body_force: torque: a 2D body turns about z only; allowed"),
    ((0, [0, 0]), {"torque": [0, 0]}, r"^set_body_force: torque: expected 1 \(about z\) or 3 numbers, got 2"),
    ((0, [0, 0]), {"torque": "x"}, r"^set_body_force: torque: expected"),
    ((0, [1]), {}, r"^set_body_force: force: expected 2 or 3 numbers, got 1"),
    ((0, [1, 2, 3, 4]), {}, r"^set_body_force: force: expected 2 or 3 numbers, got 4"),
    ((0, "ab"), {}, r"^set_body_force: force: expected"),
    ((0, None), {}, r"^set_body_force: force: expected"),
    ((0, 5.0), {}, r"^set_body_force: force: expected"),
    ((0, {"x": 1}), {}, r"^set_body_force: force: expected"),
    ((0, ["1", "2"]), {}, r"^set_body_force: force: expected"),
    ((0, np.array([[1.0, 0.0]])), {}, r"^set_body_force: force: expected"),
    ((-1, [0, 0]), {}, r"^set_body_force: k = -1: allowed: 0 to 0 \(the simulation has 1 body\)"),
    ((1, [0, 0]), {}, r"^set_body_force: body 1: allowed: 0 to 0"),
    ((1.0, [0, 0]), {}, r"^set_body_force: k = 1.0: allowed"),
    ((True, [0, 0]), {}, r"^set_body_force: k = True: allowed"),
    ((10**30, [0, 0]), {}, r"^set_body_force: k = 10+: allowed"),
    ((None, [0, 0]), {}, r"^set_body_force: k = None: allowed"),
]


@pytest.mark.parametrize("args, kwargs, message", SET_BODY_FORCE_REFUSED, ids=[str(i) for i in range(len(SET_BODY_FORCE_REFUSED))])
def test_set_body_force_refuses_a_bad_value_naming_it(tank_sim, args, kwargs, message):
    msg = refused(lambda: tank_sim.set_body_force(*args, **kwargs))
    assert re.search(message, msg), msg


def test_set_body_force_refuses_an_unknown_keyword(tank_sim):
    with pytest.raises(TypeError, match="bogus"):
        tank_sim.set_body_force(0, [1, 0], bogus=1)


def test_set_body_force_takes_numpy_numbers(tank_sim):
    tank_sim.set_body_force(np.int32(0), np.array([1.0, 0.0]))
    tank_sim.set_body_force(np.int64(0), [0, 0, 0])


@pytest.mark.parametrize("torque", [np.float32(1.0), np.array(1.0)], ids=["float32", "0-d array"])
def test_set_body_force_takes_a_numpy_torque(torque):
    sim = eddy.Simulation(tank(), threads=1)
    sim.set_body_force(0, [0, 0], torque=torque)


def test_set_body_force_without_bodies_says_there_are_none():
    sim = eddy.Simulation(tank(bodies=False), threads=1)
    msg = refused(lambda: sim.set_body_force(0, [0, 0]))
    assert "0 to -1" not in msg and "0 bodies" in msg, msg


HUGE_PUSH = """
s = eddy.Simulation({scene}, threads=1)
s.step(2)
x0 = s.bodies["position"][0].copy()
outcome("set", lambda: s.set_body_force(0, {force}, torque={torque}))
for k in range(4):
    outcome(f"step{{k}}", lambda: s.step(3))
p = s.bodies["position"][0]
outcome("moved", lambda: float(np.hypot(*(p - x0)[:2])))
outcome("inside", lambda: bool(np.all(np.abs(p) < 1.0)))
"""


@pytest.mark.parametrize("scene, force, torque", [
    ("tank()", "[1e38, 0]", "None"),
    ("tank()", "[0, 0]", "1e308"),
    ("tank()", "[1e30, 0]", "None"),
    ("tank3()", "[1e38, 0, 0]", "None"),
], ids=["2D force 1e38", "2D torque 1e308", "2D force 1e30", "3D force 1e38"])
def test_a_huge_push_is_refused_or_diverges_and_never_crashes(scene, force, torque):
    seen = script(HUGE_PUSH.format(scene=scene, force=force, torque=torque))
    if seen["set"][0] == "ValueError":
        assert "set_body_force: " in seen["set"][1] and "\\n" not in seen["set"][1]
        return
    # Taken: then a step must say it diverged (the body must not just freeze, nor leave the tank unsaid).
    assert any(seen[f"step{k}"][0] in ("DivergenceError", "RuntimeError") for k in range(4)), seen


def test_a_large_push_diverges_with_a_clear_error_and_the_simulation_stays_usable():
    seen = script("""
        s = eddy.Simulation(tank(), threads=1)
        s.step(2)
        s.set_body_force(0, [1e12, 0])
        outcome("step", lambda: s.step(20))
        outcome("add_body", lambda: s.add_body({"shape": "circle", "center": [0.1, 0.45], "radius": 0.03, "density": 500}))
        outcome("add_emitter", lambda: s.add_emitter({"center": [0.1, 0.55], "direction": [1, 0], "speed": 1.0, "width": 0.03}))
        outcome("stop_emitter", lambda: s.stop_emitter(0))
        outcome("set_body_force", lambda: s.set_body_force(0, [0, 0]))
        outcome("bodies", lambda: len(s.bodies["mass"]))
    """)
    kind, text = seen["step"]
    assert kind == "DivergenceError" and text.startswith("diverged at step "), seen["step"]
    for label in ("add_body", "add_emitter", "stop_emitter", "set_body_force", "bodies"):
        assert seen[label][0] in ("ok", "ValueError", "RuntimeError", "DivergenceError"), (label, seen[label])


# ---------------------------------------------------------------------------------------------------
# After the simulation is done with: eddy.Simulation has no close(); what ends its use is a run that
# finished, a run stopped by its callback, a step that diverged, or an object never initialised.

def test_after_a_finished_run_the_methods_still_work_or_say_why_not(tmp_path):
    sim = eddy.Simulation(tank(), threads=1)
    sim.run(out=tmp_path / "a", until=0.05, fps=20, formats=["csv"], progress=False)
    assert "already" in refused(lambda: sim.run(out=tmp_path / "b", until=0.02))
    assert sim.add_body(BODY) == 0
    assert sim.add_emitter({"center": [0.1, 0.5], "direction": [0, -1], "speed": 0.5, "width": 0.03}) == 0
    sim.set_body_force(1, [0.5, 0])
    sim.stop_emitter(0)
    sim.run(out=tmp_path / "c", until=0.08, fps=20, formats=["csv"], progress=False)
    assert sim.time == pytest.approx(0.08) and len(sim.bodies["mass"]) == 2


def test_a_change_from_the_progress_callback_is_refused_and_changes_nothing(tmp_path):
    """run()'s callback runs between two of its steps: every change is a RuntimeError there, which
    stops the run and reaches the caller; the simulation is usable afterwards."""
    sim = eddy.Simulation(river(), threads=1)
    sim.step(2)
    calls = {
        "add_body": lambda: sim.add_body({"shape": "circle", "center": [0.5, 0.3], "radius": 0.03, "density": 500}),
        "add_emitter": lambda: sim.add_emitter(EMITTER),
        "stop_emitter": lambda: sim.stop_emitter(0),
        "set_body_force": lambda: sim.set_body_force(0, [1, 0]),
        "step": lambda: sim.step(),
        "settings": lambda: sim.settings.update(cfl=0.3),
        "add_particles": lambda: sim.add_particles([[0.5, 0.3]]),
        "run": lambda: sim.run(out=tmp_path / "inner", steps=1),
    }
    for name, call in calls.items():
        def progress(p, call=call):
            call()

        before = (len(sim.bodies["mass"]), len(sim.emitters), sim.emitters[0]["stop"], sim.settings["cfl"])
        with pytest.raises(RuntimeError, match=r"^the simulation is stepping \(in run\(\), its progress callback, or "
                                               r"another thread\): read or change it after that returns$"):
            sim.run(out=tmp_path / name, steps=3, formats=["csv"], progress=progress)
        assert (len(sim.bodies["mass"]), len(sim.emitters), sim.emitters[0]["stop"], sim.settings["cfl"]) == before, name
    assert not (tmp_path / "inner").exists()
    sim.step(2)
    assert sim.add_emitter(EMITTER) == 1


def test_after_a_step_that_diverged_to_nan_the_changes_do_not_crash():
    seen = script("""
        s = eddy.Simulation(tank(), threads=1)
        s.step(2)
        s.velocities[:] = 1e30
        outcome("diverge", lambda: s.step(5))
        outcome("add_body", lambda: s.add_body({"shape": "circle", "center": [0.5, 0.45], "radius": 0.03, "density": 500}))
        outcome("add_emitter", lambda: s.add_emitter({"center": [0.1, 0.45], "direction": [1, 0], "speed": 1.0, "width": 0.03}))
        outcome("set_body_force", lambda: s.set_body_force(0, [1, 0]))
        outcome("stop_emitter", lambda: s.stop_emitter(0))
        outcome("settings", lambda: s.settings.update(cfl=0.3))
        outcome("bodies", lambda: s.bodies["position"].shape)
        outcome("done", lambda: 1)
    """)
    assert seen["diverge"][0] == "DivergenceError" and "not finite" in seen["diverge"][1]
    assert seen["done"][0] == "ok"
    for label in ("add_body", "add_emitter", "set_body_force", "stop_emitter", "settings", "bodies"):
        assert seen[label][0] in ("ok", "ValueError", "RuntimeError", "DivergenceError"), (label, seen[label])


def test_without_bodies_a_step_after_a_nan_divergence_diverges_again():
    seen = script("""
        s = eddy.Simulation(tank(bodies=False), threads=1)
        s.velocities[:] = 1e30
        outcome("diverge", lambda: s.step(5))
        outcome("again", lambda: s.step(1))
    """)
    assert seen["diverge"][0] == "DivergenceError" and seen["again"][0] == "DivergenceError", seen


@pytest.mark.parametrize("call", ["s.step(1)", "s.run(out=out, steps=2, formats=['csv'], progress=False)"],
                         ids=["step", "run"])
def test_a_2d_body_simulation_that_diverged_to_nan_refuses_to_step_without_crashing(call):
    seen = script(f"""
        import tempfile
        out = tempfile.mkdtemp()
        s = eddy.Simulation(tank(), threads=1)
        s.step(2)
        s.velocities[:] = 1e30
        outcome("diverge", lambda: s.step(5))
        outcome("call", lambda: {call})
    """)
    assert seen["call"][0] in ("DivergenceError", "RuntimeError", "ValueError"), seen
    assert "\\n" not in seen["call"][1]


@pytest.mark.xfail(strict=True, reason="bug: pybind11 lazily allocates uninitialised storage for an instance made "
                   "by Simulation.__new__ without __init__, and no method checks (python/src/*.cpp): they read "
                   "garbage, varying per run: len and time give random numbers, add_body & co say 'stepping' or "
                   "raise MemoryError, positions / scene / state_hash may crash (SIGSEGV, SIGBUS)")
@pytest.mark.parametrize("call", [
    "u.add_body({'shape': 'circle', 'center': [0.5, 0.45], 'radius': 0.03, 'density': 500})",
    "u.add_emitter({'center': [0.3, 0.15], 'direction': [1, 0], 'speed': 1.0, 'width': 0.03})",
    "u.set_body_force(0, [0, 0])", "u.stop_emitter(0)", "u.step()", "len(u)", "u.positions", "u.scene",
])
def test_a_simulation_never_initialised_raises(call):
    seen = script(f"""
        u = eddy.Simulation.__new__(eddy.Simulation)
        outcome("call", lambda: {call})
    """, timeout=60)
    kind, text = seen["call"]
    assert kind in ("TypeError", "RuntimeError", "ValueError") and "init" in text, seen["call"]


# ---------------------------------------------------------------------------------------------------
# Two Python threads at once. step() and the changes hold the simulation busy and release the GIL while
# the library works: a second thread's call must then raise RuntimeError ("stepping") or wait its turn,
# never crash, hang or half-apply.

THREADS = """
import collections, time
outcomes = collections.Counter()
def worker(name, f, n, barrier, stop=None, pause=0.0005):
    barrier.wait()
    for i in range(n):
        if stop is not None and stop.is_set():
            break
        try:
            f(i)
            outcomes[(name, "ok")] += 1
        except RuntimeError as e:
            assert str(e).startswith("the simulation is stepping"), str(e)
            outcomes[(name, "busy")] += 1
        except ValueError as e:  # a refused value (an overlap): one line naming it
            assert "\\n" not in str(e)
            outcomes[(name, "refused")] += 1
        except BaseException as e:
            outcomes[(name, "other: " + type(e).__name__ + ": " + str(e)[:200])] += 1
        if pause:
            time.sleep(pause)  # let the other threads in between two calls (not a timing assertion)
    if stop is not None:
        stop.set()
def start(jobs, stop=None, pause=0.0005):
    barrier = threading.Barrier(len(jobs))
    ts = [threading.Thread(target=worker, args=(*job, barrier, stop, pause), daemon=True) for job in jobs]
    for t in ts:
        t.start()
    for t in ts:
        t.join(90)
    outcome("alive", lambda: [t.is_alive() for t in ts])
    outcome("outcomes", lambda: sorted(outcomes.items()))
    return outcomes
"""


def test_two_threads_stepping_one_simulation():
    seen = script(THREADS, """
        s = eddy.Simulation(tank(), threads=1)
        o = start([("a", lambda i: s.step(1), 60), ("b", lambda i: s.step(1), 60)])
        outcome("steps", lambda: s.steps == o[("a", "ok")] + o[("b", "ok")])
        outcome("after", lambda: s.step(1) is not None)
    """)
    assert seen["alive"] == ("ok", "[False, False]"), seen
    assert "other" not in seen["outcomes"][1], seen["outcomes"]
    assert seen["steps"] == ("ok", "True") and seen["after"] == ("ok", "True"), seen


def test_changes_from_one_thread_while_another_steps():
    seen = script(THREADS, """
        s = eddy.Simulation(river(), threads=1)
        s.step(2)
        em = lambda i: {"center": [0.1 + 0.02 * (i % 30), 0.5], "direction": [0, -1], "speed": 0.5, "width": 0.03}
        bd = lambda i: {"shape": "circle", "center": [0.1 + 0.1 * (i % 8), 0.35], "radius": 0.015, "density": 500}
        o = start([("step", lambda i: s.step(1), 80),
                   ("add_emitter", lambda i: s.add_emitter(em(i)), 20),
                   ("stop_emitter", lambda i: s.stop_emitter(0), 50),
                   ("add_body", lambda i: s.add_body(bd(i)), 8),
                   ("set_body_force", lambda i: s.set_body_force(0, [0.01, 0]) if len(s.bodies["mass"]) else None, 100),
                   ("reads", lambda i: (len(s), s.time, s.bodies, s.emitters, s.removed, s.boundary_forces()), 100)])
        outcome("emitters", lambda: len(s.emitters) == 1 + o[("add_emitter", "ok")])
        outcome("bodies", lambda: len(s.bodies["mass"]) == o[("add_body", "ok")])
        outcome("steps", lambda: s.steps == 2 + o[("step", "ok")])
        outcome("after", lambda: s.step(2) is not None)
    """)
    assert seen["alive"][1] == str([False] * 6), seen
    assert "other" not in seen["outcomes"][1], seen["outcomes"]
    for label in ("emitters", "bodies", "steps", "after"):
        assert seen[label] == ("ok", "True"), (label, seen)


def test_two_simulations_step_in_two_threads_as_they_do_alone():
    seen = script(THREADS, """
        alone = eddy.Simulation(tank(), threads=1)
        alone.step(40)
        a, b = eddy.Simulation(tank(), threads=1), eddy.Simulation(river(), threads=1)
        start([("a", lambda i: a.step(1), 40), ("b", lambda i: b.step(1), 40)])
        outcome("same", lambda: a.state_hash() == alone.state_hash() and b.steps == 40)
    """)
    assert seen["alive"] == ("ok", "[False, False]") and seen["same"] == ("ok", "True"), seen


@pytest.mark.parametrize("change", ["add_emitter", "add_body"])
def test_reading_the_scene_while_another_thread_changes_it(change):
    # The reader must meet the change in progress at least once for the test to mean anything, and whether a
    # round of calls does depends on how the threads are scheduled (a loaded machine: none in one CI run). So
    # up to 20 rounds, each on a fresh simulation, until one does; the outcomes of every round are checked.
    seen = script(THREADS, f"""
        em = lambda i: {{"center": [0.1 + 0.02 * (i % 30), 0.5], "direction": [0, -1], "speed": 0.5, "width": 0.03}}
        bd = lambda i: {{"shape": "circle", "center": [0.05 + 0.05 * (i % 11), 0.3 + 0.15 * (i // 11 % 2)], "radius": 0.01,
                        "density": 500}}
        for round in range(20):
            s = eddy.Simulation(river(), threads=1)
            s.step(2)
            job = ("add_emitter", lambda i: s.add_emitter(em(i)), 300) if "{change}" == "add_emitter" else \\
                  ("add_body", lambda i: s.add_body(bd(i)), 22)
            o = start([job, ("scene", lambda i: (s.scene.document, s.method, repr(s)), 10**7)], threading.Event(), pause=0)
            if o[("scene", "busy")] > 0:
                break
        outcome("refused", lambda: o[("scene", "busy")] > 0)
    """, timeout=600)
    assert seen["alive"] == ("ok", "[False, False]"), seen
    assert "other" not in seen["outcomes"][1], seen["outcomes"]
    assert seen["refused"] == ("ok", "True"), seen  # it saw the simulation busy at least once
