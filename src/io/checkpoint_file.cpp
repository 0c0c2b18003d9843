// The checkpoint container (include/eddy/checkpoint.hpp): magic, format, version, meta JSON, state
// bytes and a hash, written atomically and checked field by field when read back.
#include <fmt/format.h>

#include <cmath>

#include "eddy/checkpoint.hpp"
#include "eddy/input_file.hpp"
#include "eddy/io.hpp"
#include "eddy/json_text.hpp"
#include "eddy/scene.hpp"

namespace eddy {

namespace {

constexpr char kMagic[8] = {'E', 'D', 'D', 'Y', 'C', 'K', 'P', 'T'};

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 1469598103934665603ull) {
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

}  // namespace

const char* eddy_version() { return EDDY_VERSION; }

void check_common_meta(const nlohmann::json& meta, const std::string& where) {
    auto bad = [&](const std::string& key, const std::string& what) {
        throw InputError(fmt::format("{}: corrupt checkpoint: meta key '{}' {}", where, key, what));
    };
    if (!meta.contains("scene") || !meta["scene"].is_object()) bad("scene", "is missing or not an object");
    if (!meta.contains("scene_source") || !meta["scene_source"].is_string() ||
        meta["scene_source"].get<std::string>().size() > 4096 ||
        meta["scene_source"].get<std::string>().find('\0') != std::string::npos)
        bad("scene_source", "is not a file name");
    if (!meta.contains("time") || !meta["time"].is_number() || !std::isfinite(meta["time"].get<double>()) ||
        meta["time"].get<double>() < 0.0 || meta["time"].get<double>() > kMaxDuration)
        bad("time", fmt::format("is not a time from 0 to {:g} s", kMaxDuration));
    if (!meta.contains("steps") || !meta["steps"].is_number_unsigned()) bad("steps", "is not a whole number >= 0");
    if (!meta.contains("run") || !meta["run"].is_object()) bad("run", "is missing or not an object");
}

void StateReader::fail(std::string_view what) const {
    throw InputError(fmt::format("{}: corrupt checkpoint: {}; allowed: a checkpoint.eddy written by eddy {}", m_where,
                                 what, eddy_version()));
}

namespace {

// Everything before the state's bytes: magic, format, version, meta, the state's length.
std::string checkpoint_head(const nlohmann::json& meta, std::string_view state) {
    StateWriter w;
    for (char c : kMagic) w.put(c);
    w.put<std::uint32_t>(kCheckpointFormat);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(std::strlen(eddy_version())));
    std::string bytes = w.bytes();
    bytes += eddy_version();
    StateWriter rest;
    rest.put_string(meta.dump());
    rest.put<std::uint64_t>(state.size());
    return bytes + rest.bytes();
}

}  // namespace

std::string encode_checkpoint(const nlohmann::json& meta, std::string_view state) {
    std::string bytes = checkpoint_head(meta, state);
    bytes += state;
    const std::uint64_t h = fnv1a(bytes);
    bytes.append(reinterpret_cast<const char*>(&h), sizeof h);
    return bytes;
}

// The same bytes as encode_checkpoint's, written in parts: the state (a process's particles, hundreds of
// MB) is never copied.
void write_checkpoint_file(const std::filesystem::path& file, const nlohmann::json& meta, const std::string& state) {
    const std::string head = checkpoint_head(meta, state);
    const std::uint64_t h = fnv1a(state, fnv1a(head));
    const std::string_view parts[] = {head, state, std::string_view(reinterpret_cast<const char*>(&h), sizeof h)};
    io::write_atomic_parts(file, parts);
}

namespace {

// A version text as read from a file: shown only if it looks like one (digits, dots, letters), so a
// damaged field is never echoed as "written by eddy 0".
bool plausible_version(std::string_view v) {
    if (v.empty() || v.size() > 32) return false;
    for (char c : v)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '-' || c == '+'))
            return false;
    return true;
}

// A checkpoint's bytes checked (header, version, checksum, layout) and its meta data parsed into `out`: returns
// where its state lies in `bytes`.
std::string_view check_checkpoint(std::string_view bytes, const std::filesystem::path& file, CheckpointFile& out) {
    const std::string where = file.string();
    if (bytes.size() < sizeof kMagic || bytes.compare(0, sizeof kMagic, std::string_view(kMagic, sizeof kMagic)) != 0)
        throw InputError(fmt::format("{}: not an eddy checkpoint (no EDDYCKPT header); allowed: a {} written by eddy run",
                                     where, kCheckpointFile));
    StateReader r(bytes, where);
    for (std::size_t i = 0; i < sizeof kMagic; ++i) r.get<char>();
    const auto format = r.get<std::uint32_t>();
    const auto vlen = r.get<std::uint32_t>();
    // The checksum first: a flipped bit anywhere (the version field included) is "corrupt", not a
    // message about another version. A checkpoint of another format still has the same header and
    // trailing FNV-1a, so a whole file of another version gets the version message below.
    if (bytes.size() < sizeof kMagic + 8 + sizeof(std::uint64_t)) r.fail("it ends early");
    std::uint64_t stored;
    std::memcpy(&stored, bytes.data() + bytes.size() - sizeof stored, sizeof stored);
    if (fnv1a(bytes.substr(0, bytes.size() - sizeof stored)) != stored)
        r.fail("its checksum does not match (torn or modified file)");
    if (vlen > 64) r.fail("the version field is too long");
    std::string version;
    for (std::uint32_t i = 0; i < vlen; ++i) version += r.get<char>();
    if (format != kCheckpointFormat || version != eddy_version())
        throw InputError(fmt::format("{}: checkpoint written by eddy {} (format {}); this is eddy {} (format {}): "
                                     "resume it with that version, or start the run again",
                                     where, plausible_version(version) ? version : "of an unknown version", format,
                                     eddy_version(), kCheckpointFormat));
    out.file = file;
    const std::string meta = r.get_string();
    const std::string_view state = r.take(r.get<std::uint64_t>());
    if (r.position() != bytes.size() - sizeof stored) r.fail("unexpected bytes after the state");
    out.meta = parse_json_text(meta, where + " (meta data)");  // depth-bounded, like every JSON eddy reads
    if (!out.meta.is_object()) r.fail("its meta data is not a JSON object");
    return state;
}

}  // namespace

CheckpointFile read_checkpoint_bytes(std::string_view bytes, const std::filesystem::path& file) {
    CheckpointFile out;
    out.state = std::string(check_checkpoint(bytes, file, out));
    return out;
}

CheckpointFile read_checkpoint_file(const std::filesystem::path& file) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec))
        throw InputError(fmt::format("{}: no checkpoint there; allowed: the output folder of an eddy run (it writes {})",
                                     file.string(), kCheckpointFile));
    // Opened without blocking and checked to be a regular file before a byte is read (a FIFO planted
    // as checkpoint.eddy must not hang eddy).
    std::string bytes = io::read_regular_file(file, io::kNoSizeLimit, "the checkpoint");
    CheckpointFile out;
    const std::string_view state = check_checkpoint(bytes, file, out);
    // The state kept in the file's own buffer (issue 44): a checkpoint of hundreds of MB is held once, not twice.
    const std::size_t at = std::size_t(state.data() - bytes.data()), size = state.size();
    bytes.erase(0, at);
    bytes.resize(size);
    out.state = std::move(bytes);
    return out;
}

}  // namespace eddy
