// eddy fuzz targets: shared pieces. Each target is a libFuzzer entry point (LLVMFuzzerTestOneInput)
// that feeds bytes to one reader. Bad input must end in eddy::InputError (the one-line message the CLI
// prints, exit 2); any other exception, a crash, a hang or a sanitizer report is a finding.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "eddy/error.hpp"

namespace eddy::fuzz {

/// The input as a file (readers take paths): one per process, rewritten for each input.
inline std::filesystem::path as_file(const std::uint8_t* data, std::size_t size, const char* extension) {
    static const std::filesystem::path dir = [] {
        auto d = std::filesystem::temp_directory_path() / ("eddy_fuzz_" + std::to_string(::getpid()));
        std::filesystem::create_directories(d);
        return d;
    }();
    const auto path = dir / (std::string("input") + extension);
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), std::streamsize(size));
    return path;
}

/// Runs f; InputError is the expected answer to bad input, anything else a finding (abort, so that
/// libFuzzer keeps the input and the replay test fails).
template <class F>
int expect_clean(F&& f) {
    try {
        f();
    } catch (const InputError&) {
    } catch (const std::exception& e) {
        std::fprintf(stderr, "eddy fuzz: an exception other than InputError escaped: %s\n", e.what());
        std::abort();
    }
    return 0;
}

}  // namespace eddy::fuzz
