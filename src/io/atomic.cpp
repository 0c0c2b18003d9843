// Atomic writes: a temporary file in the same folder, fsync, then rename over the target. The
// temporary must live in the target's folder: rename() is only atomic within one file system.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eddy/io.hpp"

namespace eddy::io {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* what, int err) {
    throw std::runtime_error(fmt::format("{}: {}: {}", path.string(), what, std::strerror(err)));
}

// Closes the descriptor and removes the temporary file unless the write got all the way through.
class TempFile {
public:
    TempFile(std::string name, int fd) : m_name(std::move(name)), m_fd(fd) {}
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() {
        if (m_fd >= 0) ::close(m_fd);
        if (!m_done) ::unlink(m_name.c_str());
    }
    int fd() const { return m_fd; }
    const std::string& name() const { return m_name; }
    // Returns 0 or errno.
    int close() {
        const int r = ::close(m_fd);
        m_fd = -1;
        return r == 0 ? 0 : errno;
    }
    void done() { m_done = true; }

private:
    std::string m_name;
    int m_fd;
    bool m_done = false;
};

}  // namespace

void write_atomic(const std::filesystem::path& path, std::string_view bytes) {
    if (path.empty() || !path.has_filename()) fail(path, "cannot write: not a file name", EINVAL);
    if (path.has_parent_path()) {
        std::error_code ec;
        std::filesystem::create_directories(path.parent_path(), ec);
        if (ec)
            throw std::runtime_error(fmt::format("{}: cannot create the folder {}: {}", path.string(),
                                                 path.parent_path().string(), ec.message()));
    }
    const std::string tmp_name = fmt::format("{}.tmp-{}", path.string(), static_cast<long>(::getpid()));
    const int fd = ::open(tmp_name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fail(path, "cannot write", errno);
    TempFile tmp(tmp_name, fd);
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(tmp.fd(), p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail(path, "cannot write", errno);
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    // Without fsync a crash soon after the rename could leave the new name pointing at empty data.
    if (::fsync(tmp.fd()) != 0) fail(path, "cannot flush", errno);
    if (const int err = tmp.close(); err != 0) fail(path, "cannot close", err);
    if (std::rename(tmp.name().c_str(), path.c_str()) != 0) fail(path, "cannot rename into place", errno);
    tmp.done();
    // Make the rename itself durable; the file is complete either way, so a failure here is not an error.
    const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    if (const int dfd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

void write_json(const std::filesystem::path& path, const nlohmann::json& j) { write_atomic(path, j.dump(2) + "\n"); }

}  // namespace eddy::io
