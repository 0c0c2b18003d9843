#!/usr/bin/env bash
# make web (issue 33; docs/web.md): the WebAssembly build of eddy and its page, into BUILD (build-web).
#   1. Emscripten (Debian's emscripten package, installed by scripts/install-deps.sh); without it the web
#      build is skipped with this script's message, and so are the browser tests (ctest label web).
#   2. muparser's, Box2D's, Bullet's, meshoptimizer's and assimp's sources from Debian
#      (scripts/debian-source.sh): the shallow-water scenes' expressions, the 2D and 3D bodies' contacts, the
#      surfaces' decimation, users' models.
#   3. emcmake cmake + the build: build-web/index.html, eddy.js, eddy.wasm, eddy.data (the bundled scenes), and
#      again with threads in build-web/mt: build-web/eddy-mt.js and its files (the page loads it when isolated).
#   4. puppeteer-core from npm (tests/web/package.json, its lock) into build-web/npm/node_modules, for the
#      tests (a folder of its own: a package.json beside eddy.js would change how Node.js loads it).
#
#   scripts/web.sh [BUILD=build-web] [JOBS=nproc]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-web}
JOBS=${2:-$(nproc)}
if ! command -v emcc >/dev/null 2>&1 || ! command -v emcmake >/dev/null 2>&1; then
  echo "make web: skipped: Emscripten (emcc) not found; Debian package emscripten (scripts/install-deps.sh installs it)"
  exit 0
fi
# Debian's emscripten runs its JavaScript tools with the node on PATH; Debian's own JavaScript modules
# (acorn, for the final minification) live in /usr/share/nodejs, which a node not from Debian does not search.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
bash scripts/debian-source.sh muparser 2.3.3 "$BUILD/deps/muparser"
bash scripts/debian-source.sh box2d 2.4.1 "$BUILD/deps/box2d"
bash scripts/debian-source.sh bullet 3.24 "$BUILD/deps/bullet"
bash scripts/debian-source.sh meshoptimizer 0.18 "$BUILD/deps/meshoptimizer"
bash scripts/debian-source.sh assimp 5.2.5 "$BUILD/deps/assimp"
# The configuration both builds share: Release, Ninja, the dependencies' sources.
configure=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
for dep in muparser box2d bullet meshoptimizer assimp; do
  configure+=("-DEDDY_WEB_${dep^^}_SOURCE=$BUILD/deps/$dep")
done
if [ ! -f "$BUILD/CMakeCache.txt" ] || ! grep -q EDDY_WEB_ASSIMP_SOURCE:PATH=. "$BUILD/CMakeCache.txt"; then
  emcmake cmake -S . -B "$BUILD" "${configure[@]}" >/dev/null
else
  emcmake cmake -S . -B "$BUILD" >/dev/null  # copies the page again
fi
cmake --build "$BUILD" -j "$JOBS"
# 3b. The same with threads (docs/web.md, "Threads"): eddy-mt.js, .wasm, .data and .worker.js beside eddy.js, the
#     module a cross-origin isolated page loads. Every object again with -pthread, in a build folder of its own.
if [ ! -f "$BUILD/mt/CMakeCache.txt" ]; then
  emcmake cmake -S . -B "$BUILD/mt" "${configure[@]}" -DEDDY_WEB_THREADS=ON -DEDDY_WEB_OUTPUT_DIR="$BUILD" >/dev/null
fi
cmake --build "$BUILD/mt" -j "$JOBS"
if command -v npm >/dev/null 2>&1; then
  if [ ! -f "$BUILD/npm/node_modules/puppeteer-core/package.json" ] || ! cmp -s tests/web/package-lock.json "$BUILD/npm/package-lock.json"; then
    mkdir -p "$BUILD/npm"
    cp tests/web/package.json tests/web/package-lock.json "$BUILD/npm/"
    (cd "$BUILD/npm" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
else
  echo "make web: npm not found: the browser tests (ctest -L web) need puppeteer-core from npm and are skipped"
fi
gz=$(gzip -9 -c "$BUILD/eddy.wasm" | wc -c)
gz_mt=$(gzip -9 -c "$BUILD/eddy-mt.wasm" | wc -c)
echo "make web: $BUILD/index.html ($(( $(stat -c %s "$BUILD/eddy.wasm") / 1024 )) KiB of wasm, $(( gz / 1024 )) KiB gzipped;" \
  "with threads $(( $(stat -c %s "$BUILD/eddy-mt.wasm") / 1024 )) KiB, $(( gz_mt / 1024 )) KiB gzipped); make serve-web serves it"
