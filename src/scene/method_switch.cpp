#include "scene/method_switch.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "eddy/clavet.hpp"
#include "eddy/dfsph.hpp"
#include "eddy/pbf.hpp"
#include "eddy/settings.hpp"
#include "eddy/wcsph.hpp"

namespace eddy::detail {

namespace {

template <class S>
std::map<std::string, std::string> units_of(std::span<const Field<S>> table) {
    std::map<std::string, std::string> out;
    for (const auto& f : table) out.emplace(f.key, f.unit);
    return out;
}

// Key -> unit of each particle method's settings table (the tables make_method reads them with).
std::optional<std::map<std::string, std::string>> setting_units(const std::string& method) {
    if (method == "wcsph") return units_of(wcsph_fields());
    if (method == "dfsph") return units_of(dfsph_fields());
    if (method == "pbf") return units_of(pbf_fields());
    if (method == "clavet") return units_of(clavet_fields());
    return std::nullopt;
}

std::string method_of(const nlohmann::json& j) {
    if (j.is_object() && j.contains("method") && j["method"].is_string()) return j["method"].get<std::string>();
    return "wcsph";  // the scene's default (parse_scene)
}

std::string list(const std::vector<std::string>& keys) {
    std::string s;
    for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k;
    return s;
}

}  // namespace

SceneMethodOrigin method_origin(const nlohmann::json& document) {
    SceneMethodOrigin o;
    o.method = method_of(document);
    if (document.is_object() && document.contains("settings") && document["settings"].is_object())
        for (auto it = document["settings"].begin(); it != document["settings"].end(); ++it) o.settings_keys.push_back(it.key());
    return o;
}

std::string drop_foreign_settings(nlohmann::json& document, const SceneMethodOrigin& origin,
                                  const std::vector<std::string>& overrides, const std::string& where) {
    const std::string method = method_of(document);
    if (method == origin.method || origin.settings_keys.empty()) return {};
    const auto before = setting_units(origin.method), after = setting_units(method);
    if (!before || !after) return {};  // not two particle methods: the scene's validation answers
    if (!document.contains("settings") || !document["settings"].is_object()) return {};
    // Keys the command line set: they are meant for the new method.
    std::vector<std::string> given;
    for (const auto& ov : overrides) {
        const std::string path = ov.substr(0, ov.find('='));
        if (path == "settings") return {};  // the whole object replaced: none of the file's is left
        if (path.rfind("settings.", 0) == 0) given.push_back(path.substr(9, path.find('.', 9) - 9));
    }
    std::vector<std::string> dropped, kept;
    for (const auto& key : origin.settings_keys) {
        if (std::find(given.begin(), given.end(), key) != given.end()) continue;
        const auto a = before->find(key), b = after->find(key);
        // Same key, same unit: the same quantity (cfl, support_ratio, sort_interval, ...).
        if (a != before->end() && b != after->end() && a->second == b->second) {
            kept.push_back(key);
            continue;
        }
        document["settings"].erase(key);
        dropped.push_back(key);
    }
    if (dropped.empty()) return {};
    std::string msg = fmt::format("{}: method {} instead of the scene's {}: dropped the scene's {} setting(s) {} "
                                  "(another meaning or unit, or no such key, in {}; its defaults apply)",
                                  where, method, origin.method, origin.method, list(dropped), method);
    if (!kept.empty()) msg += fmt::format("; kept {} (the same key and unit)", list(kept));
    return msg;
}

}  // namespace eddy::detail
