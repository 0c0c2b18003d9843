// The heightmap PNG's header, read without decoding it (stb_image is compiled into solver.cpp only).
#pragma once
#include <filesystem>

namespace eddy::detail {

/// Width, height, channels and bits per sample of a PNG, from its header (stbi_info): false when the
/// file is not a PNG stb_image reads. Nothing is decoded: a 400 kB file may claim gigabytes of pixels.
bool png_header(const std::filesystem::path& file, int& width, int& height, int& channels, int& bits);

}  // namespace eddy::detail
