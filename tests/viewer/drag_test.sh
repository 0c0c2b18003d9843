#!/bin/sh
# A scripted mouse drag through the real window code (under Xvfb): the fluid, at rest without gravity,
# must move faster than MIN_SPEED (m/s) afterwards. Usage: drag_test.sh EDDY_CLI MIN_SPEED [view args...]
# Exit 77 (ctest: skipped) when xvfb-run is not installed.
set -u
cli=$1 min=$2
shift 2
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run is not installed (Debian: xvfb xauth libgl1-mesa-dri); the viewer tests need a virtual X display"
  exit 77
fi
err=$(LIBGL_ALWAYS_SOFTWARE=1 xvfb-run -a -s "-screen 0 1280x1024x24" "$cli" view "$@" --size 640x400 --hide-ui 2>&1)
rc=$?
echo "$err"
[ $rc -eq 0 ] || { echo "FAIL: eddy view exited with $rc"; exit 1; }
speed=$(printf '%s\n' "$err" | sed -n 's/.*max speed \([^ ]*\) m\/s.*/\1/p' | tail -1)
[ -n "$speed" ] || { echo "FAIL: no 'max speed' line"; exit 1; }
awk -v s="$speed" -v m="$min" 'BEGIN { exit !(s + 0 > m + 0) }' || { echo "FAIL: max speed $speed m/s <= $min m/s"; exit 1; }
echo "ok: max speed $speed m/s > $min m/s"
