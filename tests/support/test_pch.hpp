// The precompiled header of the test executables (tests/CMakeLists.txt, eddy_test_build): GoogleTest and the
// headers most test files include, parsed once per executable instead of once per file. Every test file still
// includes what it uses: this header only saves the compiler work.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "eddy/error.hpp"
#include "eddy/scene.hpp"
#include "eddy/simulation.hpp"
