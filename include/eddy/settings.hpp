// eddy: settings tables. Each settings struct is described once, as a table of fields (key, member,
// unit, range, doc). The one table drives the scene loader, `--set key=value`, `--help` and (later)
// the viewer's sliders, so a new parameter is one line, not five calls.
#pragma once
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace eddy {

/// One field of a settings struct S.
template <class S>
struct Field {
    const char* key;   ///< JSON key, snake_case
    std::variant<float S::*, int S::*, bool S::*, std::string S::*> member;
    const char* unit;  ///< Unit, "" when dimensionless
    double min;        ///< Smallest allowed value (numbers)
    double max;        ///< Largest allowed value (numbers)
    const char* doc;   ///< One line
    std::vector<std::string_view> choices = {};  ///< Allowed values (strings); empty: any
    bool min_exclusive = false;                  ///< min itself is not allowed (e.g. a radius > 0)
    /// The key this one had before it was renamed (one key, one quantity): the old key is refused with
    /// a message naming this one. nullptr: none.
    const char* renamed_from = nullptr;
};

/// "where: key 'old' is now 'new' (unit: doc)" when `key` is a field's renamed_from, else "".
template <class S>
std::string renamed_key_message(std::span<const Field<S>> table, std::string_view key, const std::string& where);

inline constexpr double kInf = std::numeric_limits<double>::infinity();

/// Reads `obj` (a JSON object) into s through the table. Unknown keys, wrong types and values out of
/// range throw InputError naming `where` (e.g. "scenes/dam.json: settings") and the key.
template <class S>
void apply_json(S& s, std::span<const Field<S>> table, const nlohmann::json& obj, const std::string& where);

/// Checks every field of s against the table's ranges; throws InputError naming `where` and the key.
template <class S>
void validate(const S& s, std::span<const Field<S>> table, const std::string& where);

/// The settings as a JSON object, every field of the table.
template <class S>
nlohmann::json to_json(const S& s, std::span<const Field<S>> table);

/// Help text: one line per field, "key (unit, range; default X): doc".
template <class S>
std::string describe(std::span<const Field<S>> table, const S& defaults, std::string_view indent = "  ");

}  // namespace eddy

#include "eddy/detail/settings_impl.hpp"
