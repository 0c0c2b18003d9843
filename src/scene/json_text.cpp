// JSON text from users, parsed with its depth bounded first; JSON values echoed in messages, cut short.
#include "eddy/json_text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/input_file.hpp"

namespace eddy {

namespace {

// 1-based line and column of byte `at` of `text`.
std::pair<std::size_t, std::size_t> line_column(std::string_view text, std::size_t at) {
    at = std::min(at, text.size());
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < at; ++i) {
        if (text[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return {line, col};
}

// Appends v's compact JSON to out, giving up (returning false) once out holds more than `limit`
// characters: the whole of a huge value is never built. Containers deeper than kMaxJsonDepth are
// shown as "..." (values built in code are not depth-checked like parsed text).
bool append_json(std::string& out, const nlohmann::json& v, std::size_t limit, int depth) {
    if (out.size() > limit) return false;
    if (depth > kMaxJsonDepth) {
        out += "...";
        return false;
    }
    using handler = nlohmann::json::error_handler_t;
    if (v.is_object()) {
        out += '{';
        bool first = true;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!first) out += ',';
            first = false;
            out += nlohmann::json(text_excerpt(it.key(), limit)).dump(-1, ' ', false, handler::replace);
            out += ':';
            if (!append_json(out, it.value(), limit, depth + 1)) return false;
        }
        out += '}';
    } else if (v.is_array()) {
        out += '[';
        bool first = true;
        for (const auto& e : v) {
            if (!first) out += ',';
            first = false;
            if (!append_json(out, e, limit, depth + 1)) return false;
        }
        out += ']';
    } else if (v.is_string()) {
        // Only the start of a long string is escaped and kept.
        out += nlohmann::json(text_excerpt(v.get_ref<const std::string&>(), limit + 1))
                   .dump(-1, ' ', false, handler::replace);
    } else {
        out += v.dump(-1, ' ', false, handler::replace);
    }
    return out.size() <= limit;
}

// Cuts s to at most max_chars characters ending in "...", not splitting a UTF-8 sequence.
std::string cut(std::string s, std::size_t max_chars) {
    if (s.size() <= max_chars) return s;
    std::size_t keep = max_chars > 3 ? max_chars - 3 : 0;
    while (keep > 0 && (static_cast<unsigned char>(s[keep]) & 0xC0) == 0x80) --keep;
    s.resize(keep);
    return s + "...";
}

}  // namespace

int json_text_depth(std::string_view text, int stop_above, std::size_t* at) {
    int depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (in_string) {
            if (escaped) escaped = false;
            else if (ch == '\\') escaped = true;
            else if (ch == '"') in_string = false;
            continue;
        }
        if (ch == '"') {
            in_string = true;
        } else if (ch == '[' || ch == '{') {
            deepest = std::max(deepest, ++depth);
            if (depth > stop_above) {
                if (at) *at = i;
                return depth;
            }
        } else if (ch == ']' || ch == '}') {
            depth = std::max(0, depth - 1);  // unbalanced text is the parser's to report
        }
    }
    return deepest;
}

nlohmann::json parse_json_text(std::string_view text, const std::string& where) {
    std::size_t at = 0;
    if (json_text_depth(text, kMaxJsonDepth, &at) > kMaxJsonDepth) {
        const auto [line, col] = line_column(text, at);
        throw InputError(fmt::format("{}: line {} column {}: JSON nested deeper than {} levels; allowed: at most {} "
                                     "levels of [ and {{",
                                     where, line, col, kMaxJsonDepth, kMaxJsonDepth));
    }
    try {
        return nlohmann::json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::parse_error& e) {
        const auto [line, col] = line_column(text, e.byte ? e.byte - 1 : 0);
        // nlohmann's text is "[json.exception.parse_error.101] parse error at line L, column C: what";
        // keep only `what` (the position is given above, from the same byte offset).
        std::string msg = e.what();
        if (const auto p = msg.find("parse error"); p != std::string::npos)
            if (const auto q = msg.find(": ", p); q != std::string::npos) msg = msg.substr(q + 2);
        if (msg.rfind("syntax error ", 0) == 0) msg = msg.substr(13);
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        throw InputError(
            fmt::format("{}: line {} column {}: JSON syntax error: {}", where, line, col, text_excerpt(msg, 200)));
    } catch (const nlohmann::json::out_of_range& e) {
        // 406: "number overflow parsing '-1e309'": a number beyond a double. nlohmann gives no
        // position for it; the number's first occurrence in the text is where it is.
        const std::string msg = e.what();
        const auto q0 = msg.find('\''), q1 = msg.rfind('\'');
        const std::string token = q0 != std::string::npos && q1 > q0 ? msg.substr(q0 + 1, q1 - q0 - 1) : std::string();
        const std::size_t pos = token.empty() ? std::string_view::npos : text.find(token);
        const std::string place =
            pos == std::string_view::npos
                ? std::string()
                : fmt::format(" line {} column {}:", line_column(text, pos).first, line_column(text, pos).second);
        throw InputError(fmt::format("{}:{} number {} is out of range; allowed: numbers within +-1.7e308", where, place,
                                     token.empty() ? "" : text_excerpt(token, 40)));
    } catch (const nlohmann::json::exception& e) {
        std::string msg = e.what();
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        throw InputError(fmt::format("{}: JSON error: {}", where, text_excerpt(msg, 200)));
    }
}

nlohmann::json read_json_file(const std::filesystem::path& file) {
    // Opened without blocking (eddy/input_file.hpp): a FIFO, a device (/dev/null, /dev/zero) or a
    // folder is refused before a byte is read, instead of a confusing parse error or a read that never
    // ends.
    // 256 MB, as summary.json: a 100 GB sparse scene file was an allocation of 100 GB (std::bad_alloc, exit 1).
    return parse_json_text(io::read_regular_file(file, std::uint64_t(1) << 28, "the scene file"), file.string());
}

std::string json_excerpt(const nlohmann::json& v, std::size_t max_chars) {
    std::string out;
    append_json(out, v, max_chars, 0);
    return cut(std::move(out), max_chars);
}

std::string text_excerpt(std::string_view s, std::size_t max_chars) {
    std::string t(s.substr(0, max_chars + 1));
    // A newline or another control character would break the message's one line.
    for (char& ch : t)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
    return cut(std::move(t), max_chars);
}

}  // namespace eddy
