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
# Every bundled scene runs from the prefix alone (its heightmaps and models installed beside it): two
# steps each, from another directory, the source tree out of reach.
count=0
for name in $(awk '{print $1}' <<< "$scenes"); do
  (cd "$work" && env -u EDDY_SCENES_DIR "$work/prefix/bin/eddy" run "$name" --steps 2 --threads 1 -q \
     --out "$work/runs/$name") || { echo "installed eddy cannot run the bundled scene $name" >&2; exit 1; }
  test -f "$work/runs/$name/summary.json"
  count=$((count + 1))
done
# The exported package names imported targets, never a library path of the machine that built it.
if grep -n '/usr/lib\|/usr/local/lib' "$work/prefix/lib/cmake/eddy/"*.cmake; then
  echo "the installed CMake package hard-codes library paths (above)" >&2; exit 1
fi
echo "install + find_package(eddy) + $count bundled scenes from the prefix: ok"
