// The library's precompiled header (CMakeLists.txt, target_precompile_headers of eddy): the standard, fmt and
// JSON headers and eddy's public headers that most source files include, parsed once per build instead of
// once per file (eddy/simulation.hpp alone takes about 4.5 s to parse). Every source file still includes what
// it uses; this header only saves the compiler work and changes no generated code.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "eddy/error.hpp"
#include "eddy/io.hpp"
#include "eddy/shallow_water.hpp"
#include "eddy/simulation.hpp"
#include "eddy/surface.hpp"
#include "eddy/whitewater.hpp"
