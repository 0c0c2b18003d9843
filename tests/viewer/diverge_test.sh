#!/bin/sh
# A run that blows up: `eddy view --frames` must stop the simulation, say so and exit with 3, as
# `eddy run` does. Usage: diverge_test.sh EDDY_CLI [view args...]; exit 77 without xvfb-run.
set -u
cli=$1
shift
command -v xvfb-run >/dev/null 2>&1 || { echo "SKIP: xvfb-run is not installed"; exit 77; }
# The viewer's own exit code, written by a shell inside xvfb-run: the viewer stops within a third of a
# second here, and xvfb-run then sometimes fails to remove its temporary folder and exits 5 on its own
# ("problem while cleaning up temporary directory"), which says nothing about the viewer.
code=$(mktemp)
trap 'rm -f "$code"' EXIT
err=$(LIBGL_ALWAYS_SOFTWARE=1 xvfb-run -a -s "-screen 0 1280x1024x24" sh -c '"$@"; echo $? > "$0"' "$code" \
      "$cli" view "$@" --size 320x200 2>&1)
xrc=$?
echo "$err"
rc=$(cat "$code")
[ -n "$rc" ] || { echo "FAIL: the viewer did not run (xvfb-run exit code $xrc)"; exit 1; }
[ "$rc" -eq 3 ] || { echo "FAIL: exit code $rc, expected 3"; exit 1; }
printf '%s\n' "$err" | grep -q "diverged at step" || { echo "FAIL: no 'diverged at step' message"; exit 1; }
