// Implementation of the settings-table templates (header-only: tables are generic over the struct).
#pragma once
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eddy/error.hpp"
#include "eddy/json_text.hpp"

namespace eddy {
namespace detail {

inline std::string range_text(double lo, double hi, bool lo_exclusive) {
    auto num = [](double v) { return fmt::format("{:g}", v); };
    if (lo == -kInf && hi == kInf) return "any number";
    if (hi == kInf) return fmt::format("{} {}", lo_exclusive ? ">" : ">=", num(lo));
    if (lo == -kInf) return fmt::format("<= {}", num(hi));
    return fmt::format("{}{}, {}]", lo_exclusive ? "(" : "[", num(lo), num(hi));
}

inline std::string json_type_name(const nlohmann::json& v) { return v.type_name(); }

template <class S>
void check_range(const Field<S>& f, double v, const std::string& where) {
    const bool below = f.min_exclusive ? !(v > f.min) : !(v >= f.min);
    if (below || !(v <= f.max) || std::isnan(v))
        throw InputError(fmt::format("{}: key '{}' = {:g} is out of range; allowed: {} ({})", where, f.key, v,
                                     range_text(f.min, f.max, f.min_exclusive), f.doc));
}

template <class S>
void check_choice(const Field<S>& f, const std::string& v, const std::string& where) {
    if (f.choices.empty()) return;
    for (auto c : f.choices)
        if (c == v) return;
    std::string allowed;
    for (auto c : f.choices) allowed += (allowed.empty() ? "" : ", ") + std::string(c);
    throw InputError(fmt::format("{}: key '{}' = \"{}\" is not allowed; allowed: {}", where, f.key, text_excerpt(v), allowed));
}

}  // namespace detail

template <class S>
std::string renamed_key_message(std::span<const Field<S>> table, std::string_view key, const std::string& where) {
    for (const auto& f : table)
        if (f.renamed_from && key == f.renamed_from)
            return fmt::format("{}: key '{}' is now '{}' ({}{}{}): one key, one quantity; allowed: '{}'", where, key, f.key,
                               f.unit, *f.unit ? ": " : "", f.doc, f.key);
    return {};
}

template <class S>
void apply_json(S& s, std::span<const Field<S>> table, const nlohmann::json& obj, const std::string& where) {
    if (!obj.is_object()) throw InputError(fmt::format("{}: expected an object, got {}", where, obj.type_name()));
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        const Field<S>* f = nullptr;
        for (const auto& cand : table)
            if (it.key() == cand.key) f = &cand;
        if (!f) {
            if (std::string renamed = renamed_key_message(table, it.key(), where); !renamed.empty()) throw InputError(renamed);
            std::string keys;
            for (const auto& cand : table) keys += (keys.empty() ? "" : ", ") + std::string(cand.key);
            throw InputError(fmt::format("{}: unknown key '{}'; allowed keys: {}", where, text_excerpt(it.key()), keys));
        }
        const nlohmann::json& v = it.value();
        std::visit(
            [&](auto member) {
                using T = std::remove_cvref_t<decltype(s.*member)>;
                if constexpr (std::is_same_v<T, bool>) {
                    if (!v.is_boolean())
                        throw InputError(fmt::format("{}: key '{}' must be true or false, got {}", where, f->key, json_excerpt(v)));
                    s.*member = v.get<bool>();
                } else if constexpr (std::is_same_v<T, std::string>) {
                    if (!v.is_string())
                        throw InputError(fmt::format("{}: key '{}' must be a string, got {}", where, f->key, json_excerpt(v)));
                    detail::check_choice(*f, v.get<std::string>(), where);
                    s.*member = v.get<std::string>();
                } else if constexpr (std::is_same_v<T, int>) {
                    if (!v.is_number_integer() && !(v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()))
                        throw InputError(fmt::format("{}: key '{}' must be a whole number, got {}", where, f->key, json_excerpt(v)));
                    const double d = v.get<double>();
                    detail::check_range(*f, d, where);
                    // A table's open range (kInf) must not let a cast overflow: the int's range.
                    if (!(std::fabs(d) <= 2147483647.0))
                        throw InputError(fmt::format("{}: key '{}' = {:g} is out of range; allowed: whole numbers within "
                                                     "+-2147483647",
                                                     where, f->key, d));
                    s.*member = static_cast<int>(d);
                } else {
                    if (!v.is_number())
                        throw InputError(fmt::format("{}: key '{}' must be a number, got {}", where, f->key, json_excerpt(v)));
                    const double d = v.get<double>();
                    detail::check_range(*f, d, where);
                    // A float setting beyond a float's range would become infinite.
                    if (std::is_same_v<T, float> && !(std::fabs(d) <= 3.4028234663852886e38))
                        throw InputError(fmt::format("{}: key '{}' = {:g} is out of range; allowed: numbers within "
                                                     "+-3.4e38 (a float)",
                                                     where, f->key, d));
                    s.*member = static_cast<T>(d);
                }
            },
            f->member);
    }
}

template <class S>
void validate(const S& s, std::span<const Field<S>> table, const std::string& where) {
    for (const auto& f : table) {
        std::visit(
            [&](auto member) {
                using T = std::remove_cvref_t<decltype(s.*member)>;
                if constexpr (std::is_same_v<T, std::string>) detail::check_choice(f, s.*member, where);
                else if constexpr (!std::is_same_v<T, bool>) detail::check_range(f, static_cast<double>(s.*member), where);
            },
            f.member);
    }
}

template <class S>
nlohmann::json to_json(const S& s, std::span<const Field<S>> table) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& f : table) std::visit([&](auto member) { j[f.key] = s.*member; }, f.member);
    return j;
}

template <class S>
std::string describe(std::span<const Field<S>> table, const S& defaults, std::string_view indent) {
    std::string out;
    for (const auto& f : table) {
        std::string def, range;
        std::visit(
            [&](auto member) {
                using T = std::remove_cvref_t<decltype(defaults.*member)>;
                if constexpr (std::is_same_v<T, bool>) {
                    def = defaults.*member ? "true" : "false";
                    range = "true|false";
                } else if constexpr (std::is_same_v<T, std::string>) {
                    def = "\"" + defaults.*member + "\"";
                    for (auto c : f.choices) range += (range.empty() ? "" : "|") + std::string(c);
                    if (range.empty()) range = "text";
                } else {
                    def = fmt::format("{:g}", static_cast<double>(defaults.*member));
                    range = detail::range_text(f.min, f.max, f.min_exclusive);
                }
            },
            f.member);
        out += fmt::format("{}{} ({}{}{}; default {}): {}\n", indent, f.key, f.unit, *f.unit ? ", " : "", range, def, f.doc);
    }
    return out;
}

}  // namespace eddy
