#include "scene/method_switch.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "eddy/clavet.hpp"
#include "eddy/dfsph.hpp"
#include "eddy/error.hpp"
#include "eddy/json_text.hpp"
#include "eddy/pbf.hpp"
#include "eddy/settings.hpp"
#include "eddy/shallow_water.hpp"
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

// check_method_settings for one table: unknown keys (with a suggestion) first, then types and ranges
// through apply_json itself, the reader make_method uses, so the two cannot disagree.
template <class S>
void check_table(std::span<const Field<S>> table, const nlohmann::json& settings, const std::string& where) {
    if (settings.is_null()) return;
    if (!settings.is_object()) throw InputError(fmt::format("{}: expected an object, got {}", where, settings.type_name()));
    std::vector<std::string> keys;
    for (const auto& f : table) keys.emplace_back(f.key);
    for (auto it = settings.begin(); it != settings.end(); ++it) {
        if (std::find(keys.begin(), keys.end(), it.key()) != keys.end()) continue;
        if (std::string renamed = renamed_key_message(table, it.key(), where); !renamed.empty()) throw InputError(renamed);
        const std::string guess = closest_key(it.key(), keys);
        throw InputError(fmt::format("{}: unknown key '{}'; {}allowed keys: {}", where, text_excerpt(it.key()),
                                     guess.empty() ? "" : fmt::format("did you mean '{}'? ", guess), list(keys)));
    }
    S s{};
    apply_json(s, table, settings, where);
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

std::string closest_key(std::string_view key, std::span<const std::string> candidates) {
    if (key.size() > 100) return {};  // not a typo; and the distance would cost |key| x |candidate|
    std::size_t best = std::max<std::size_t>(2, key.size() / 3) + 1;
    std::string guess;
    for (const auto& c : candidates)
        if (const std::size_t d = edit_distance(key, c); d < best) {
            best = d;
            guess = c;
        }
    return guess;
}

void check_method_settings(const std::string& method, const nlohmann::json& settings, const std::string& where) {
    if (method == "wcsph") return check_table(wcsph_fields(), settings, where);
    if (method == "dfsph") return check_table(dfsph_fields(), settings, where);
    if (method == "pbf") return check_table(pbf_fields(), settings, where);
    if (method == "clavet") return check_table(clavet_fields(), settings, where);
    if (method == "shallow_water") return check_table(shallow_water_fields(), settings, where);
}

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
