#!/bin/sh
# Runs the viewer headless under Xvfb with Mesa's software OpenGL (llvmpipe) and checks its screenshot.
# Usage: view_test.sh EDDY_CLI PNG_CHECK OUT.png MIN_FRACTION [view arguments...]
# Exit 77 (ctest: skipped) when xvfb-run is not installed. $EXPECT_FILES: files that must exist after.
# $MIN_GREY: the fraction of light-grey pixels (the scene's models) the picture must hold too.
set -u
cli=$1 check=$2 out=$3 min=$4
shift 4
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run is not installed (Debian: xvfb xauth libgl1-mesa-dri, see scripts/install-deps.sh);"
  echo "      the viewer tests need a virtual X display"
  exit 77
fi
rm -f "$out"
LIBGL_ALWAYS_SOFTWARE=1 xvfb-run -a -s "-screen 0 1280x1024x24" "$cli" view "$@" --size 640x400 --screenshot "$out"
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: eddy view exited with $rc"; exit 1; fi
[ -f "$out" ] || { echo "FAIL: no screenshot $out"; exit 1; }
for f in ${EXPECT_FILES:-}; do  # further files the run must have written (e.g. recorded frames)
  [ -s "$f" ] || { echo "FAIL: $f was not written"; exit 1; }
done
exec "$check" "$out" "$min" 640 400 ${MIN_GREY:-}
