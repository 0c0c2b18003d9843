// eddy: a scene switched to another method (`--set method=X`, the viewer's method picker). A method's
// settings are its own: `rest_density: 1000` is kg/m^3 to WCSPH and a neighbour count to Clavet, so
// the settings the scene file wrote for its method are dropped when another method runs it, except
// those the new method has under the same key with the same unit (its field table says). Settings
// given with --set are the new method's and stay (its table rejects a key it does not have).
#pragma once
#include <string>
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

}  // namespace eddy::detail
