#!/usr/bin/env bash
# Installs what eddy needs to build and test, from Debian 12 packages only.
# Idempotent and quiet when everything is already there.
set -euo pipefail

# Build and library dependencies (see docs/dependencies.md for why each one is here).
PKGS=(
  build-essential cmake ninja-build pkg-config
  libtbb-dev            # oneTBB: task arenas, parallel_for, deterministic reduce
  nlohmann-json3-dev    # scene files and summary.json
  libcli11-dev          # the command line
  libfmt-dev            # formatting of messages and file names
  libstb-dev            # stb_image_write: PNG pictures
  libgtest-dev libgmock-dev  # unit, validation and regression tests
  libbenchmark-dev      # bench/
  libnanoflann-dev      # bench/: a k-d tree peer for the neighbour-search benchmark (header only)
  libmuparser-dev       # shallow water: terrain and initial surface given as expressions of x and y
  libassimp-dev         # geometry: users' models (OBJ, STL, PLY, glTF, FBX) as walls and fluid volumes
  libopenvdb-dev libboost-iostreams-dev  # surface: .vdb level sets, and the OpenVDB cross-check and peer
  libmeshoptimizer-dev  # surface: edge-collapse decimation of the meshes (decimate_error, decimate_ratio)
  libbullet-dev libbox2d-dev  # bodies: contacts between rigid bodies and with the walls (Bullet in 3D, Box2D in 2D)
  libglfw3-dev libepoxy-dev libimgui-dev # the optional viewer (eddy view): window, OpenGL loader, UI
  xvfb xauth libgl1-mesa-dri             # headless viewer tests under Mesa's software OpenGL
  python3-dev python3-numpy pybind11-dev python3-pytest python3-setuptools python3-pip  # the Python module (python/)
  python3-matplotlib    # examples/python: the dam-break front plotted against Martin & Moyce
  libopenmpi-dev openmpi-bin  # src/distributed: one simulation over many processes (mpirun)
  python3-vtk9          # tests: VTK's own readers open our .vtp files (walls with their pressure)
  python3-scipy         # tests: the linear-theory reference of the floating body's heave (tests/validation/data/ursell_heave.py)
  emscripten curl xz-utils  # make web: the library compiled to WebAssembly (muparser's source fetched from Debian's pool)
  libutfcpp-dev         # make web: the UTF-8 headers assimp compiled to WebAssembly includes (Debian's assimp source leaves its copy out)
  chromium              # tests/web: the page in a real browser, headless (puppeteer-core from npm drives it)
  blender               # tests/blender: the add-on headless, and docs/blender.md's documented path rendered (about 200 MB)
)
PKGS+=("$@")

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
