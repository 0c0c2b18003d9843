// Atomic writes: a temporary file in the same folder, fsync, then rename over the target. The
// temporary must live in the target's folder: rename() is only atomic within one file system.
//
// The output folder may be shared (a path under /tmp) with users who can plant files in it, so the
// temporary's name is not predictable (random letters, like mkstemp) and it is created with
// O_CREAT|O_EXCL|O_NOFOLLOW: a file or symbolic link already at that name makes the open fail (we pick
// another name) instead of writing through it. The rename then replaces the target's directory entry:
// a symbolic link planted at the target is replaced, never followed (rename(2) does not resolve its
// last component). Temporaries are named ".NAME.eddy-tmp-XXXXXX" so that those a killed run leaves
// behind can be recognised and removed (remove_stale_temporaries) without touching anything else.
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eddy/io.hpp"

namespace eddy::io {

void random_bytes(unsigned char* out, std::size_t n) {
    std::size_t got = 0;
#ifdef __EMSCRIPTEN__
    // The browser's crypto.getRandomValues, 256 bytes at most per call.
    while (got < n) {
        const std::size_t k = std::min<std::size_t>(256, n - got);
        if (::getentropy(out + got, k) != 0) break;
        got += k;
    }
#else
    while (got < n) {
        const ssize_t k = ::getrandom(out + got, n - got, 0);
        if (k < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (k == 0) break;
        got += static_cast<std::size_t>(k);
    }
#endif
    if (got < n) {
        std::random_device rd;
        for (std::size_t i = got; i < n; ++i) out[i] = static_cast<unsigned char>(rd());
    }
}

namespace {

constexpr std::string_view kTempTag = ".eddy-tmp-";
constexpr std::size_t kTempLetters = 6;
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

[[noreturn]] void fail(const std::filesystem::path& path, const char* what, int err) {
    throw std::runtime_error(fmt::format("{}: {}: {}", path.string(), what, std::strerror(err)));
}

// Six letters from the kernel's random source (random_bytes): the name must not be guessable from the
// pid or the clock.
std::string random_letters() {
    std::array<unsigned char, kTempLetters> raw{};
    random_bytes(raw.data(), raw.size());
    std::string s;
    for (unsigned char c : raw) s += kAlphabet[c % (sizeof kAlphabet - 1)];
    return s;
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

// Every byte to fd (a short write or EINTR goes on), or an error naming `path`.
void write_all(int fd, std::string_view bytes, const std::filesystem::path& path) {
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail(path, "cannot write", errno);
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
}

}  // namespace

bool is_temporary_name(std::string_view name) {
    // ".NAME.eddy-tmp-XXXXXX": a dot, a non-empty NAME, the tag, six letters of kAlphabet.
    if (name.size() < 1 + 1 + kTempTag.size() + kTempLetters || name[0] != '.') return false;
    const std::size_t tag = name.size() - kTempLetters - kTempTag.size();
    if (name.substr(tag, kTempTag.size()) != kTempTag) return false;
    for (char c : name.substr(name.size() - kTempLetters))
        if (std::strchr(kAlphabet, c) == nullptr || c == '\0') return false;
    return true;
}

std::size_t remove_stale_temporaries(const std::filesystem::path& folder) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // The folder itself must be a folder, not a link to one: a link planted at out/frames would make
    // us delete in someone else's folder.
    const fs::file_status fst = fs::symlink_status(folder, ec);
    if (ec || !fs::is_directory(fst)) return 0;
    std::size_t removed = 0;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!is_temporary_name(name)) continue;
        std::error_code e2;
        // symlink_status: a link with a temporary's name is not ours (O_EXCL never makes one); leave it.
        if (!fs::is_regular_file(it->symlink_status(e2)) || e2) continue;
        if (::unlink(it->path().c_str()) == 0) ++removed;
    }
    return removed;
}

void write_atomic(const std::filesystem::path& path, std::string_view bytes) {
    const std::string_view parts[] = {bytes};
    write_atomic_parts(path, parts);
}

void write_atomic_parts(const std::filesystem::path& path, std::span<const std::string_view> parts) {
    if (path.empty() || !path.has_filename()) fail(path, "cannot write: not a file name", EINVAL);
    if (path.has_parent_path()) {
        std::error_code ec;
        std::filesystem::create_directories(path.parent_path(), ec);
        if (ec)
            throw std::runtime_error(fmt::format("{}: cannot create the folder {}: {}", path.string(),
                                                 path.parent_path().string(), ec.message()));
    }
    const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    const std::string stem = "." + path.filename().string() + std::string(kTempTag);
    std::string tmp_name;
    int fd = -1;
    // EEXIST: a file or link (planted or not) holds that name; another random name. 100 collisions in
    // a row among 62^6 names means someone is filling the folder: give up rather than loop.
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        tmp_name = (folder / (stem + random_letters())).string();
        fd = ::open(tmp_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST && errno != EINTR) fail(path, "cannot write", errno);
    }
    if (fd < 0) fail(path, "cannot create a temporary file beside it", EEXIST);
    TempFile tmp(tmp_name, fd);
    for (const std::string_view bytes : parts) write_all(tmp.fd(), bytes, path);
    // Without fsync a crash soon after the rename could leave the new name pointing at empty data.
    if (::fsync(tmp.fd()) != 0) fail(path, "cannot flush", errno);
    if (const int err = tmp.close(); err != 0) fail(path, "cannot close", err);
    // rename(2) replaces the directory entry `path`: if it is a symbolic link, the link goes, its
    // target is untouched. A folder at `path` makes it fail (EISDIR), which is reported.
    if (std::rename(tmp.name().c_str(), path.c_str()) != 0) fail(path, "cannot rename into place", errno);
    tmp.done();
    // Make the rename itself durable; the file is complete either way, so a failure here is not an error.
    if (const int dfd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

void write_json(const std::filesystem::path& path, const nlohmann::json& j) { write_atomic(path, j.dump(2) + "\n"); }

}  // namespace eddy::io
