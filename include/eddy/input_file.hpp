// eddy: reading files that come from users (models, particle files, scenes, checkpoints, pieces they
// reference). Every such file is untrusted: it is opened without ever blocking (O_NONBLOCK, then fstat:
// a FIFO, device, socket or folder is refused before a byte is read), its size is checked against the
// caller's limit before it is read, and files it references are confined to its own folder.
#pragma once
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace eddy::io {

inline constexpr std::uint64_t kNoSizeLimit = std::numeric_limits<std::uint64_t>::max();

/// An open regular file (read-only, close-on-exec, blocking cleared after the check). Throws
/// InputError "PATH: WHAT" (one line) when the path is empty or holds a NUL byte, cannot be opened (the
/// reason: no such file, permission, a symbolic link loop, ...), or is not a regular file.
class InputFile {
public:
    explicit InputFile(const std::filesystem::path& path);
    /// As the constructor, but a file that does not exist (ENOENT) is no error: nullopt. For optional
    /// side files (an OBJ's material library) whose absence the reader tolerates.
    static std::optional<InputFile> open_existing(const std::filesystem::path& path);
    ~InputFile();
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;
    InputFile(InputFile&& o) noexcept;
    InputFile& operator=(InputFile&&) = delete;

    int fd() const { return m_fd; }
    std::uint64_t size() const { return m_size; }
    const std::filesystem::path& path() const { return m_path; }
    /// Reads up to n bytes at the current offset; returns the count (0 at the end). Throws on an error.
    std::size_t read(void* buffer, std::size_t n);
    /// The whole rest of the file. Throws InputError when the file is larger than max_bytes (decided from
    /// its size before anything is read, and again while reading, since a file may grow).
    std::string read_all(std::uint64_t max_bytes = kNoSizeLimit, std::string_view what = "the file");

private:
    InputFile(const std::filesystem::path& path, bool missing_ok);
    std::filesystem::path m_path;
    int m_fd = -1;
    std::uint64_t m_size = 0;
};

/// The whole file as bytes: InputFile(path).read_all(max_bytes, what).
std::string read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes = kNoSizeLimit,
                              std::string_view what = "the file");

/// Checks that path names a regular file that can be opened without blocking (InputFile's checks) and
/// returns its size. For code that must hand a path to a library that opens it itself.
std::uint64_t check_regular_file(const std::filesystem::path& path);

/// A file named inside another file (a .pvtp piece, an OBJ mtllib, a glTF buffer uri): resolved against
/// the referencing file's folder and, unless allow_outside, confined to that folder and below (no
/// absolute path, no "..", no symbolic link leading out). Throws InputError naming the referencing file,
/// the reference and what is allowed.
std::filesystem::path referenced_path(const std::filesystem::path& referencing_file, std::string_view reference,
                                      bool allow_outside = false);

/// A file a scene names (a model, a particle file, a model dropped into a running scene): a relative path is
/// relative to the scene file's folder when scene_file is a regular file (a scene built in code, or pasted:
/// the working directory); normalised. Scenes may name files anywhere (unlike referenced_path).
std::filesystem::path scene_relative_path(const std::filesystem::path& file, const std::filesystem::path& scene_file);

}  // namespace eddy::io
