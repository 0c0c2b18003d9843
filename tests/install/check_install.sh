#!/usr/bin/env bash
# Installs the built tree into a temporary prefix and builds a consumer with find_package(eddy).
set -euo pipefail
build_dir=$1; source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
test -x "$work/prefix/bin/eddy"
# The viewer, when built, is installed beside eddy (`eddy view` looks for it there).
if [ -x "$build_dir/bin/eddy-view" ]; then test -x "$work/prefix/bin/eddy-view"; fi
test -f "$work/prefix/share/eddy/scenes/dam_break_3d.json"
cmake -S "$source_dir/tests/install/consumer" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer"
# The installed CLI finds its bundled scenes without the source tree.
# Captured first: `grep -q` stops reading at the first match, and under pipefail the writer's SIGPIPE
# would fail the check whenever the listing outgrows what grep has read.
scenes=$(env -u EDDY_SCENES_DIR "$work/prefix/bin/eddy" scenes)
grep -q dam_break_3d <<< "$scenes"
echo "install + find_package(eddy): ok"
