// eddy: a scene switched to another method (`--set method=X`, the viewer's method picker). A method's
// settings are its own: `rest_density: 1000` is kg/m^3 to WCSPH and a neighbour count to Clavet, so
// the settings the scene file wrote for its method are dropped when another method runs it, except
// those the new method has under the same key with the same unit (its field table says). Settings
// given with --set are the new method's and stay (its table rejects a key it does not have).
//
// Also the check of a scene's settings against its method's table at load time (check_method_settings):
// an unknown key, with the closest key as a "did you mean", or a bad value is refused when the scene is
// read, not when the simulation is built.
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace eddy::detail {

/// The method and settings keys of a scene document as its file wrote them (before --set).
struct SceneMethodOrigin {
    std::string method;                      ///< "wcsph" when the file names none
    std::vector<std::string> settings_keys;  ///< Keys of its "settings" object
};

SceneMethodOrigin method_origin(const nlohmann::json& document);

/// After the overrides were applied to `document`: when its method is no longer `origin.method`, removes
/// the file's settings keys that the new method does not have with the same unit, keeping those set by
/// `overrides` ("settings.K=V", or "settings={...}" which replaces them all). Returns a warning naming
/// what was dropped and kept, or "" when nothing changed. Both methods must be particle methods
/// (anything else is left to the scene's validation).
std::string drop_foreign_settings(nlohmann::json& document, const SceneMethodOrigin& origin,
                                  const std::vector<std::string>& overrides, const std::string& where);

/// Levenshtein distance (insertions, deletions, substitutions), for "did you mean".
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `key` by edit_distance when it is close enough to be a typo (at most
/// max(2, |key| / 3) edits: "visocsity" -> "viscosity", not "foo" -> "cfl"), else "". Ties: the first.
std::string closest_key(std::string_view key, std::span<const std::string> candidates);

/// The settings of a scene whose method is `method` (any of the scene's methods: wcsph, dfsph, pbf,
/// clavet, shallow_water), checked against that method's settings table as make_simulation (or
/// make_shallow_water) will read them: `settings` must be an object (or null: none), every key one of
/// the table's, every value of the key's type and range. InputError otherwise, one line naming `where`
/// (e.g. "scenes/dam.json: settings", as make_method names it) and the key; an unknown key gets
///   "<where>: unknown key 'visocsity'; did you mean 'viscosity'? allowed keys: cfl, ..."
/// (the suggestion only when a key is close: closest_key). A method it does not know is left alone (the
/// scene's own check of `method` answers).
void check_method_settings(const std::string& method, const nlohmann::json& settings, const std::string& where);

}  // namespace eddy::detail
