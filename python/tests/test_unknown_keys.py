"""Issue 31 (item 5): a scene's settings are checked when the scene is loaded (eddy.load_scene, Scene.set,
sim.settings), not first when the Simulation is built: an unknown key names the closest one ("did you
mean"), a bad value gets the message Simulation() would have raised."""
import json

import pytest

import eddy


def tank(method="wcsph", **settings):
    return {
        "name": "tank", "dimension": 2, "method": method, "particle_radius": 0.02, "duration": 0.05,
        "settings": settings,
        "boundaries": [{"shape": "box", "min": [0, 0], "max": [0.5, 0.5]}],
        "fluids": [{"shape": "box", "min": [0, 0], "max": [0.2, 0.2]}],
    }


@pytest.mark.parametrize("method, typo, meant", [("wcsph", "seed_visocsity", "seed_viscosity"), ("dfsph", "visocsity", "viscosity"),
                                                ("pbf", "vorticty", "vorticity"), ("clavet", "stifness", "stiffness")])
def test_an_unknown_setting_is_refused_at_load_scene_with_the_closest_key(method, typo, meant):
    with pytest.raises(ValueError, match=rf"^tank: settings: unknown key '{typo}'; did you mean '{meant}'\? "
                                         r"allowed keys: \w+, \w+"):
        eddy.load_scene(tank(method, **{typo: 0.1}))


def test_a_scene_file_and_a_bundled_scene_with_overrides(tmp_path):
    f = tmp_path / "t.json"
    f.write_text(json.dumps(tank(cfl=0.3, rest_densty=1000)))
    with pytest.raises(ValueError, match=rf"^{f}: settings: unknown key 'rest_densty'; did you mean 'rest_density'\?"):
        eddy.load_scene(f)
    with pytest.raises(ValueError, match=r"dam_break_2d.json: settings: unknown key 'seed_viscosty'; did you mean 'seed_viscosity'\?"):
        eddy.load_scene("dam_break_2d", ["settings.seed_viscosty=0.1"])
    # A key far from every key: no guess, the list of allowed keys.
    with pytest.raises(ValueError) as e:
        eddy.load_scene(tank(foo=1))
    assert "unknown key 'foo'; allowed keys: " in str(e.value) and "did you mean" not in str(e.value)


def test_scene_set_refuses_an_unknown_setting():
    scene = eddy.load_scene("dam_break_2d")
    with pytest.raises(ValueError, match=r"unknown key 'cfll'; did you mean 'cfl'\?"):
        scene.set("settings.cfll=0.3")
    # The method's own table: speed_of_sound is WCSPH's, not PBF's.
    with pytest.raises(ValueError, match=r"unknown key 'speed_of_sound'"):
        scene.set("method=pbf", "settings.speed_of_sound=20")
    assert scene.set("settings.cfl=0.3").settings["cfl"] == 0.3


def test_bad_values_are_refused_at_load_with_simulations_message():
    with pytest.raises(ValueError, match=r"^tank: settings: key 'seed_viscosity' = -1 is out of range"):
        eddy.load_scene(tank(seed_viscosity=-1))
    with pytest.raises(ValueError, match=r"^tank: settings: key 'cfl' must be a number"):
        eddy.load_scene(tank(cfl="fast"))


def test_shallow_water_settings_are_checked_too():
    with pytest.raises(ValueError, match=r"unknown key 'vorticty'; did you mean 'vorticity'\?"):
        eddy.load_scene("shallow_lake_at_rest", ["settings.vorticty=1"])


def test_live_settings_get_the_suggestion_too():
    sim = eddy.Simulation(eddy.load_scene(tank()), threads=1)
    with pytest.raises(ValueError, match=r"unknown key 'seed_viscosty'; did you mean 'seed_viscosity'\?"):
        sim.settings["seed_viscosty"] = 0.1
    with pytest.raises(ValueError, match=r"did you mean 'cfl'\?"):
        sim.settings.update(cfll=0.3)
    assert "seed_viscosty" not in sim.scene.settings and sim.settings["seed_viscosity"] == 0.0


def test_every_bundled_scene_still_loads():
    for name in eddy.scenes():
        assert eddy.load_scene(name).name == name


def test_one_key_one_quantity():
    """WCSPH's 'viscosity' (the seed's velocity smoothing, 1/s) is now 'seed_viscosity'; the old key is
    refused naming the new one, in scenes, overrides and live settings; DFSPH's 'viscosity' (m^2/s) stays."""
    with pytest.raises(ValueError, match=r"^tank: settings: key 'viscosity' is now 'seed_viscosity' \(1/s: .*allowed: 'seed_viscosity'"):
        eddy.load_scene(tank(viscosity=0.1))
    with pytest.raises(ValueError, match=r"key 'viscosity' is now 'seed_viscosity'"):
        eddy.load_scene("dam_break_2d", ["settings.viscosity=0.1"])
    sim = eddy.Simulation(eddy.load_scene(tank()), threads=1)
    with pytest.raises(ValueError, match=r"key 'viscosity' is now 'seed_viscosity'"):
        sim.settings["viscosity"] = 0.1
    assert eddy.load_scene(tank("dfsph", viscosity=1e-6)).settings["viscosity"] == 1e-6
