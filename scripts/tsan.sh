#!/usr/bin/env bash
# ThreadSanitizer run of eddy's multi-threaded code (issue 12; `make tsan`, part of `make sanitize`).
#
# TSan only sees the synchronisation of code it instrumented: against Debian's prebuilt libtbb it
# reports hundreds of false races inside TBB's task scheduler. So this script builds oneTBB itself with
# -fsanitize=thread, from Debian's own source package of the libtbb-dev installed here (the
# .orig tarball in Debian's pool, checked against the archive's Sources index: scripts/debian-source.sh), installs it into
# BUILD/tbb, and builds eddy's tests against it (the instrumented libtbb.so.12 is the only one loaded:
# OpenVDB's dependency on the same soname resolves to it).
#
#   scripts/tsan.sh [BUILD=build-tsan] [JOBS=nproc] [TESTS=regex of ctest names]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-tsan}
JOBS=${2:-$(nproc)}
# The tests that run the solvers and the surface sweep on several threads (same bits on 1 and 2
# threads for every method, the wavefront sweep, the parallel neighbour search, Clavet's parallel mode).
TESTS=${3:-"Determinism|Wavefront|SameBits|ThreadCounts|Parallel|NeighborGrid"}
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
PREFIX="$BUILD/tbb"

if [ ! -f "$PREFIX/lib/cmake/TBB/TBBConfig.cmake" ]; then
  version=$(dpkg-query -W -f='${Version}' libtbb-dev)   # e.g. 2021.8.0-2+deb12u1
  upstream=${version%%-*}
  echo "tsan: building oneTBB $upstream with -fsanitize=thread from Debian's source"
  bash scripts/debian-source.sh onetbb "$upstream" "$BUILD/onetbb-src"
  cmake -S "$BUILD/onetbb-src" -B "$BUILD/onetbb-build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTBB_SANITIZE=thread -DTBB_TEST=OFF -DTBB_STRICT=OFF -DTBBMALLOC_BUILD=OFF \
    -DCMAKE_INSTALL_PREFIX="$PREFIX" > /dev/null
  cmake --build "$BUILD/onetbb-build" -j "$JOBS"
  cmake --install "$BUILD/onetbb-build" > /dev/null
fi

cmake -S . -B "$BUILD/eddy" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDDY_NATIVE=OFF \
  -DEDDY_BUILD_BENCH=OFF -DEDDY_BUILD_VIEWER=OFF -DEDDY_PYTHON=OFF -DTBB_DIR="$PREFIX/lib/cmake/TBB" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" > /dev/null
cmake --build "$BUILD/eddy" -j "$JOBS" --target eddy_unit_tests eddy_regression_tests
# halt_on_error: the first race fails its test; second_deadlock_stack: both stacks of a lock inversion.
cd "$BUILD/eddy"
LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 report_signal_unsafe=0" \
  ctest --output-on-failure -j "$JOBS" -R "$TESTS" -L "unit|regression"
