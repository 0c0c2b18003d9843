// Untrusted input files (include/eddy/input_file.hpp): open non-blocking, fstat, then read.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/input_file.hpp"

namespace eddy::io {

namespace fs = std::filesystem;

namespace {

// A name from a file, for a one-line message: control bytes (a NUL would end the message) shown as '?'.
std::string shown(std::string_view name) {
    std::string s(name.substr(0, 400));
    for (char& c : s)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return name.size() > 400 ? s + "..." : s;
}

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
    throw InputError(fmt::format("{}: {}", shown(path.native()), what));
}

std::string open_error(int err) {
    switch (err) {
        case ENOENT: return "cannot open file: No such file or directory";
        case ELOOP: return "cannot open file: a loop of symbolic links";
        case EACCES: return "cannot open file: permission denied";
        case ENOTDIR: return "cannot open file: a part of the path is not a folder";
        case ENAMETOOLONG: return "cannot open file: the name is too long";
        default: return fmt::format("cannot open file: {}", std::strerror(err));
    }
}

const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    return "not a regular file";
}

}  // namespace

InputFile::InputFile(const fs::path& path) : InputFile(path, false) {}

InputFile::InputFile(const fs::path& path, bool missing_ok) : m_path(path) {
    const std::string& name = path.native();
    if (name.empty()) fail(path, "an empty file name; allowed: the path of a file");
    if (name.find('\0') != std::string::npos)
        fail(fs::path(name.substr(0, name.find('\0'))), "the file name holds a NUL byte; allowed: a plain path");
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
    int fd;
    do fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    while (fd < 0 && errno == EINTR);
    if (fd < 0 && missing_ok && errno == ENOENT) return;  // open_existing: m_fd stays -1
    if (fd < 0) fail(path, open_error(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        fail(path, fmt::format("cannot read file: {}", std::strerror(err)));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        if (S_ISDIR(st.st_mode)) fail(path, "is a folder, not a regular file");
        fail(path, fmt::format("not a regular file: it is {}; allowed: a regular file", kind_of(st.st_mode)));
    }
    // A regular file never blocks, but clear the flag so reads behave as usual everywhere.
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    m_fd = fd;
    m_size = static_cast<std::uint64_t>(st.st_size);
}

InputFile::~InputFile() {
    if (m_fd >= 0) ::close(m_fd);
}

InputFile::InputFile(InputFile&& o) noexcept : m_path(std::move(o.m_path)), m_fd(o.m_fd), m_size(o.m_size) {
    o.m_fd = -1;
}

std::optional<InputFile> InputFile::open_existing(const fs::path& path) {
    InputFile f(path, true);
    if (f.m_fd < 0) return std::nullopt;
    return std::optional<InputFile>(std::move(f));
}

std::size_t InputFile::read(void* buffer, std::size_t n) {
    for (;;) {
        const ssize_t got = ::read(m_fd, buffer, n);
        if (got >= 0) return static_cast<std::size_t>(got);
        if (errno == EINTR) continue;
        fail(m_path, fmt::format("cannot read file: {}", std::strerror(errno)));
    }
}

std::string InputFile::read_all(std::uint64_t max_bytes, std::string_view what) {
    auto too_large = [&](std::uint64_t size) {
        fail(m_path, fmt::format("{} is {} bytes, more than the {} bytes allowed here", what, size, max_bytes));
    };
    if (m_size > max_bytes) too_large(m_size);
    std::string bytes;
    bytes.resize(static_cast<std::size_t>(m_size));
    std::size_t have = 0;
    for (;;) {
        if (have == bytes.size()) {
            // The size said this much: a byte more (appended since) is probed for before the buffer grows, so
            // a file is held in a buffer of its size, not of twice it (the doubling's zeros are written).
            char probe;
            if (read(&probe, 1) == 0) break;
            if (bytes.size() >= max_bytes) too_large(bytes.size() + 1);
            bytes.resize(std::min<std::uint64_t>(max_bytes, std::max<std::uint64_t>(4096, bytes.size() * 2)));
            bytes[have++] = probe;
        }
        const std::size_t got = read(bytes.data() + have, bytes.size() - have);
        if (got == 0) break;
        have += got;
    }
    bytes.resize(have);
    return bytes;
}

std::string read_regular_file(const fs::path& path, std::uint64_t max_bytes, std::string_view what) {
    InputFile f(path);
    return f.read_all(max_bytes, what);
}

std::uint64_t check_regular_file(const fs::path& path) { return InputFile(path).size(); }

fs::path referenced_path(const fs::path& referencing_file, std::string_view reference, bool allow_outside) {
    auto refuse = [&](const std::string& why) {
        throw InputError(fmt::format("{}: the referenced file '{}' {}; allowed: a file in the same folder or below "
                                     "(relative, without '..')",
                                     referencing_file.string(), shown(reference), why));
    };
    if (reference.empty()) refuse("is an empty name");
    if (reference.find('\0') != std::string_view::npos) refuse("holds a NUL byte");
    const fs::path ref{std::string(reference)};
    const fs::path folder = referencing_file.has_parent_path() ? referencing_file.parent_path() : fs::path(".");
    if (allow_outside) return ref.is_absolute() ? ref : folder / ref;
    if (ref.is_absolute() || ref.has_root_name() || ref.has_root_directory()) refuse("is an absolute path");
    for (const auto& part : ref)
        if (part == "..") refuse("leaves the folder ('..')");
    const fs::path joined = folder / ref;
    // A symbolic link inside the folder may still lead out: compare the resolved paths.
    std::error_code ec;
    const fs::path real_folder = fs::weakly_canonical(folder, ec);
    if (ec) return joined;
    const fs::path real = fs::weakly_canonical(joined, ec);
    if (ec) return joined;  // opening it reports what is wrong
    const auto [end, _] = std::mismatch(real_folder.begin(), real_folder.end(), real.begin(), real.end());
    if (end != real_folder.end()) refuse("leads out of the folder through a symbolic link");
    return joined;
}

std::filesystem::path scene_relative_path(const std::filesystem::path& file, const std::filesystem::path& scene_file) {
    std::error_code ec;
    if (file.is_relative() && std::filesystem::is_regular_file(scene_file, ec)) return (scene_file.parent_path() / file).lexically_normal();
    return file.lexically_normal();
}

}  // namespace eddy::io
