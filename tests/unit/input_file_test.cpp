// eddy::io::InputFile, read_regular_file, check_regular_file and referenced_path (include/eddy/input_file.hpp):
// files from users are opened without ever blocking, refused when they are not regular files or too
// large (from their size, before reading), and the files they name are confined to their folder.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "eddy/error.hpp"
#include "eddy/input_file.hpp"
#include "test_support.hpp"

using namespace eddy;
using eddy::test::expect_input_error;
namespace fs = std::filesystem;

namespace {

// A FIFO opened for reading blocks until a writer comes, forever in a test: SIGALRM ends the test
// binary instead (a failure, not a hang).
using eddy::test::HangGuard;

class InputFileTest : public eddy::test::TempDirTest {};

}  // namespace

TEST_F(InputFileTest, ReadsARegularFileWholeAndKnowsItsSize) {
    const fs::path f = dir / "a.txt";
    std::ofstream(f, std::ios::binary) << std::string(10000, 'x') << "end";
    io::InputFile in(f);
    EXPECT_EQ(in.size(), 10003u);
    const std::string all = in.read_all();
    EXPECT_EQ(all.size(), 10003u);
    EXPECT_EQ(all.substr(10000), "end");
    EXPECT_EQ(io::read_regular_file(f, 10003), all);  // a limit equal to the size is fine
    EXPECT_EQ(io::check_regular_file(f), 10003u);
    std::ofstream(dir / "empty", std::ios::binary);
    EXPECT_EQ(io::read_regular_file(dir / "empty"), "");
}

TEST_F(InputFileTest, AFifoIsRefusedWithoutBlocking) {
    const fs::path fifo = dir / "pipe.obj";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    HangGuard guard;  // a blocking open would wait for a writer forever: the guard fails the test instead
    expect_input_error([&] { io::InputFile f(fifo); }, {"pipe.obj", "not a regular file", "FIFO"});
    expect_input_error([&] { (void)io::read_regular_file(fifo); }, {"FIFO"});
    expect_input_error([&] { (void)io::check_regular_file(fifo); }, {"FIFO"});
    expect_input_error([&] { (void)io::InputFile::open_existing(fifo); }, {"FIFO"});
}

TEST_F(InputFileTest, FoldersDevicesLoopsNulAndEmptyNamesAreOneLineErrors) {
    expect_input_error([&] { io::InputFile f(dir); }, {dir.string(), "is a folder"});
    expect_input_error([&] { io::InputFile f("/dev/null"); }, {"/dev/null: not a regular file", "character device"});
    expect_input_error([&] { io::InputFile f("/dev/zero"); }, {"/dev/zero: not a regular file"});
    fs::create_symlink(dir / "b", dir / "a");
    fs::create_symlink(dir / "a", dir / "b");
    expect_input_error([&] { io::InputFile f(dir / "a"); }, {"loop of symbolic links"});
    expect_input_error([&] { io::InputFile f(std::string("x.obj\0/etc/passwd", 17)); }, {"x.obj", "NUL byte"});
    expect_input_error([&] { io::InputFile f(""); }, {"empty file name"});
    expect_input_error([&] { io::InputFile f(dir / "missing.obj"); }, {"missing.obj", "No such file"});
    EXPECT_FALSE(io::InputFile::open_existing(dir / "missing.obj").has_value());
    // A missing folder on the way is missing too; a file used as a folder is not.
    EXPECT_FALSE(io::InputFile::open_existing(dir / "nowhere" / "x").has_value());
    std::ofstream(dir / "file") << "x";
    expect_input_error([&] { (void)io::InputFile::open_existing(dir / "file" / "x"); }, {"not a folder"});
}

TEST_F(InputFileTest, ALargeFileIsRefusedFromItsSizeBeforeReading) {
    // 8 GB, sparse: costs no disk. Reading it would take seconds and gigabytes.
    const fs::path big = dir / "big.vtp";
    {
        const int fd = ::open(big.c_str(), O_CREAT | O_WRONLY, 0600);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::ftruncate(fd, off_t(8) << 30), 0);
        ::close(fd);
    }
    const std::uint64_t read0 = eddy::test::bytes_read();
    expect_input_error([&] { (void)io::read_regular_file(big, 200u << 20, "the piece"); },
                       {"big.vtp", "the piece is 8589934592 bytes, more than the 209715200 bytes allowed"});
    EXPECT_LT(eddy::test::bytes_read() - read0, 1u << 20);  // not one byte of it (the count, not the clock)
    EXPECT_EQ(io::check_regular_file(big), std::uint64_t(8) << 30);
    const fs::path small = dir / "small";
    std::ofstream(small) << "12345";
    expect_input_error([&] { (void)io::read_regular_file(small, 4); }, {"5 bytes, more than the 4 bytes"});
}

TEST_F(InputFileTest, ReferencedFilesAreConfinedToTheReferencingFilesFolder) {
    fs::create_directories(dir / "m" / "sub");
    const fs::path model = dir / "m" / "model.obj";
    std::ofstream(model) << "v 0 0 0\n";
    EXPECT_EQ(io::referenced_path(model, "cup.mtl"), dir / "m" / "cup.mtl");
    EXPECT_EQ(io::referenced_path(model, "sub/cup.mtl"), dir / "m" / "sub" / "cup.mtl");
    EXPECT_EQ(io::referenced_path("model.obj", "cup.mtl"), fs::path(".") / "cup.mtl");
    expect_input_error([&] { (void)io::referenced_path(model, "../x.mtl"); }, {"model.obj", "'../x.mtl'", "'..'"});
    expect_input_error([&] { (void)io::referenced_path(model, "sub/../../x.mtl"); }, {"'..'"});
    expect_input_error([&] { (void)io::referenced_path(model, "/etc/passwd"); }, {"'/etc/passwd'", "absolute path"});
    expect_input_error([&] { (void)io::referenced_path(model, ""); }, {"empty name"});
    expect_input_error([&] { (void)io::referenced_path(model, std::string_view("a\0b", 3)); }, {"NUL byte"});
    // A link inside the folder that leads out is refused; one that stays inside is fine.
    std::ofstream(dir / "outside.mtl") << "x";
    fs::create_symlink(dir / "outside.mtl", dir / "m" / "out.mtl");
    expect_input_error([&] { (void)io::referenced_path(model, "out.mtl"); }, {"'out.mtl'", "symbolic link"});
    fs::create_symlink("sub", dir / "m" / "in");
    EXPECT_EQ(io::referenced_path(model, "in/x.mtl"), dir / "m" / "in" / "x.mtl");
    // Allowed: resolved as written.
    EXPECT_EQ(io::referenced_path(model, "../x.mtl", true), dir / "m" / ".." / "x.mtl");
    EXPECT_EQ(io::referenced_path(model, "/etc/passwd", true), fs::path("/etc/passwd"));
}
