// eddy: checkpoints. The complete state of a run in one file, written atomically, from which
// `eddy run --resume DIR` continues bit for bit as if the run had never stopped (issue 12).
//
// File layout (little-endian, as the machine writes it; a checkpoint is for resuming on the same kind
// of machine, not an interchange format):
//   "EDDYCKPT"                 8 bytes
//   format version             u32 (kCheckpointFormat)
//   eddy version               u32 length + text (e.g. "0.1.0"): another version refuses to resume
//   meta                       u64 length + JSON text: kind, dimension, method, the scene as run
//                              (after --set), the clock, and the run's record (frames so far, stats)
//   state                      u64 length + bytes: the particles (every field), the method's own
//                              state between steps (warm starts live in the particles; Clavet's
//                              springs, the last step's speeds, the neighbour search's sort phase)
//   FNV-1a 64 of all the above u64: a torn or corrupted file is refused, never half-read. A checksum,
//                              not a signature: anyone can recompute it. What protects against a
//                              crafted checkpoint is that every field is validated when it is read
//                              back (meta, run record, particles) and that no path or file name is
//                              ever taken from it (docs/checkpoints.md, "Untrusted checkpoints").
// Moving walls need no state: their pose is a function of the clock.
#pragma once
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "eddy/error.hpp"

namespace eddy {

// Format 2 (issue 29): the run record carries the run's id (checked against the folder's run.json) and
// the particle checkpoint the models its scene needs.
inline constexpr std::uint32_t kCheckpointFormat = 2;
inline constexpr const char* kCheckpointFile = "checkpoint.eddy";

/// Appends plain values and arrays to a byte string.
class StateWriter {
public:
    template <class T>
    void put(const T& v) {
        static_assert(std::is_trivially_copyable_v<T>);
        m_bytes.append(reinterpret_cast<const char*>(&v), sizeof(T));
    }
    template <class T>
    void put_vector(const std::vector<T>& v) {
        static_assert(std::is_trivially_copyable_v<T>);
        put<std::uint64_t>(v.size());
        if (!v.empty()) m_bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    }
    void put_string(std::string_view s) {
        put<std::uint64_t>(s.size());
        m_bytes.append(s.data(), s.size());
    }
    const std::string& bytes() const { return m_bytes; }
    /// Room for `more` bytes beyond those written: a large state grows once, not by doubling (a copy each time).
    void reserve_more(std::size_t more) { m_bytes.reserve(m_bytes.size() + more); }

private:
    std::string m_bytes;
};

/// Reads what a StateWriter wrote. Every read is bounds-checked: a short or inconsistent state throws
/// InputError naming `where` ("corrupt checkpoint").
class StateReader {
public:
    StateReader(std::string_view bytes, std::string where) : m_bytes(bytes), m_where(std::move(where)) {}
    template <class T>
    T get() {
        static_assert(std::is_trivially_copyable_v<T>);
        need(sizeof(T));
        T v;
        std::memcpy(&v, m_bytes.data() + m_pos, sizeof(T));
        m_pos += sizeof(T);
        return v;
    }
    /// An array's bytes, unread, and the reader moved past them (a process keeping some of its rows); its
    /// length must be `expect` unless expect is SIZE_MAX, and at most `max`.
    template <class T>
    std::string_view get_array_bytes(std::size_t expect = SIZE_MAX, std::size_t max = SIZE_MAX) {
        static_assert(std::is_trivially_copyable_v<T>);
        const auto n = get<std::uint64_t>();
        if (expect != SIZE_MAX && n != expect) fail("an array has the wrong length");
        if (n > max) fail("an array is longer than allowed");
        if (n > (m_bytes.size() - m_pos) / sizeof(T)) fail("an array runs past the end");
        return take(n * sizeof(T));
    }
    /// Reads an array, checked as get_array_bytes checks it.
    template <class T>
    void get_vector(std::vector<T>& v, std::size_t expect = SIZE_MAX, std::size_t max = SIZE_MAX) {
        const std::string_view bytes = get_array_bytes<T>(expect, max);
        v.resize(bytes.size() / sizeof(T));
        if (v.empty()) return;  // an empty vector's data() may be null, which memcpy must not get (UBSan)
        std::memcpy(v.data(), bytes.data(), bytes.size());
    }
    std::string get_string() { return std::string(take(get<std::uint64_t>())); }
    /// The next `n` bytes, unread, and the reader moved past them.
    std::string_view take(std::uint64_t n) {
        need(n);
        const std::string_view s = m_bytes.substr(m_pos, n);
        m_pos += n;
        return s;
    }
    bool done() const { return m_pos == m_bytes.size(); }
    std::size_t remaining() const { return m_bytes.size() - m_pos; }
    std::size_t position() const { return m_pos; }
    [[noreturn]] void fail(std::string_view what) const;

private:
    void need(std::uint64_t n) const {
        if (n > m_bytes.size() - m_pos) fail("it ends early");
    }
    std::string_view m_bytes;
    std::size_t m_pos = 0;
    std::string m_where;
};

/// A checkpoint as read back: the meta JSON and the binary state, checked (magic, format, version,
/// hash). `file` names it in messages.
struct CheckpointFile {
    std::filesystem::path file;
    nlohmann::json meta;
    std::string state;
};

/// The bytes of a checkpoint file (header, meta, state, checksum).
std::string encode_checkpoint(const nlohmann::json& meta, std::string_view state);

/// Writes a checkpoint atomically (temporary file, fsync, rename).
void write_checkpoint_file(const std::filesystem::path& file, const nlohmann::json& meta, const std::string& state);

/// Reads and checks a checkpoint. InputError (exit 2), one line naming the file, when it is missing,
/// from another eddy version or format, torn or corrupt.
CheckpointFile read_checkpoint_file(const std::filesystem::path& file);
/// The same checks on bytes already in memory; `file` names them in messages (the fuzz target).
CheckpointFile read_checkpoint_bytes(std::string_view bytes, const std::filesystem::path& file);

/// Checks the meta keys every checkpoint has (scene, scene_source, time, steps, run: present, of their
/// type, in range), throwing InputError "WHERE: corrupt checkpoint: meta key 'K' ..." naming the first
/// bad one. The kind-specific keys are checked by each kind's restore.
void check_common_meta(const nlohmann::json& meta, const std::string& where);

/// The eddy version written into checkpoints (the CMake project version).
const char* eddy_version();

}  // namespace eddy
