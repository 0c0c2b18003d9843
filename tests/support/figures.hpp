// The figures README.md's "Validation" table quotes, as the tests measure them (issue 45): a test
// reports each one by a key, and tests/regression/readme_figures_test.py checks the README against them.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace eddy::test {

/// Prints "[figure] KEY = VALUE" (VALUE with %.17g) and, when EDDY_FIGURES_DIR is set, writes VALUE to the
/// file $EDDY_FIGURES_DIR/KEY (the folder created; a temporary file in it renamed over KEY, so a reader never
/// sees half a number). KEY: lowercase dotted, [a-z0-9_.], e.g. "wcsph.hydrostatic_3d.dpdy_percent".
inline void report_figure(std::string_view key, double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", value);
    std::printf("[figure] %.*s = %s\n", int(key.size()), key.data(), text);
    std::fflush(stdout);
    const char* dir = std::getenv("EDDY_FIGURES_DIR");
    if (!dir || !*dir) return;
    const bool good_key = !key.empty() && key.front() != '.' &&
                          key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.") == std::string_view::npos;
    namespace fs = std::filesystem;
    const fs::path target = fs::path(dir) / std::string(key);
    const fs::path tmp = fs::path(dir) / (std::string(key) + ".tmp." + std::to_string(::getpid()));
    std::error_code ec;
    bool written = false;
    if (good_key) fs::create_directories(dir, ec);
    if (good_key && !ec) {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text << '\n';
        out.close();
        if (out) fs::rename(tmp, target, ec);
        written = out && !ec;
    }
    if (!written) {
        fs::remove(tmp, ec);
        std::fprintf(stderr, "[figure] %.*s not written to %s (%s)\n", int(key.size()), key.data(), dir,
                     good_key ? "cannot write there" : "a key is [a-z0-9_.] and does not start with '.'");
    }
}

}  // namespace eddy::test
