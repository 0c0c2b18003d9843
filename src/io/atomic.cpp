// Atomic writes: a temporary file in the same folder, fsync, then rename over the target.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eddy/io.hpp"

namespace eddy::io {

void write_atomic(const std::filesystem::path& path, std::string_view bytes) {
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    const std::string tmp = fmt::format("{}.tmp-{}", path.string(), static_cast<long>(getpid()));
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
    auto fail = [&](const char* what) {
        const int err = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        throw std::runtime_error(fmt::format("{}: {}: {}", path.string(), what, std::strerror(err)));
    };
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("cannot write");
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) fail("cannot flush");
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw std::runtime_error(fmt::format("{}: cannot close: {}", path.string(), std::strerror(err)));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw std::runtime_error(fmt::format("{}: cannot rename into place: {}", path.string(), std::strerror(err)));
    }
}

void write_json(const std::filesystem::path& path, const nlohmann::json& j) { write_atomic(path, j.dump(2) + "\n"); }

}  // namespace eddy::io
