// eddy: JSON text from users (scene files, --set values) read safely, and JSON values echoed in error
// messages safely. nlohmann's parser, dump() and destructor recurse once per level of nesting, so a
// file nested 100,000 levels deep overflows the stack (a segfault, not an error): the depth is bounded
// by a cheap scan of the text before anything is parsed. Every value a message echoes goes through
// json_excerpt(), so a bad value is shown in a line of at most ~80 characters, whatever its size.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace eddy {

/// Deepest nesting of [ and { a scene, a --set value or a JSON file eddy reads may have. Scenes need
/// about 5; 64 leaves room for anything a person writes and keeps every recursion shallow.
inline constexpr int kMaxJsonDepth = 64;

/// Deepest nesting of [ and { in JSON text, counted outside strings (a cheap scan, no parsing).
/// Stops counting at `stop_above` (returns that depth) and sets `*at` to the byte where it was reached.
int json_text_depth(std::string_view text, int stop_above = kMaxJsonDepth, std::size_t* at = nullptr);

/// JSON text -> value. Throws InputError naming `where` (with line and column) for text nested deeper
/// than kMaxJsonDepth, syntax errors and numbers out of a double's range (-1e309).
nlohmann::json parse_json_text(std::string_view text, const std::string& where);

/// Reads and parses a JSON file (parse_json_text). Throws InputError for a missing file, a folder or
/// a device (/dev/null, /dev/zero: "not a regular file"), unreadable or bad text.
nlohmann::json read_json_file(const std::filesystem::path& file);

/// The value as compact JSON for a message: at most `max_chars` characters, cut with "..." (never
/// recursing deeper than kMaxJsonDepth; invalid UTF-8 replaced, not thrown).
std::string json_excerpt(const nlohmann::json& v, std::size_t max_chars = 80);

/// Text a user gave (a key, a --set argument, a name) for a message: cut to `max_chars` with "...",
/// at a UTF-8 character boundary.
std::string text_excerpt(std::string_view s, std::size_t max_chars = 80);

}  // namespace eddy
