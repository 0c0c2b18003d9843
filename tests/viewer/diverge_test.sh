#!/bin/sh
# A run that blows up: `eddy view --frames` must stop the simulation, say so and exit with 3, as
# `eddy run` does. Usage: diverge_test.sh EDDY_CLI [view args...]; exit 77 without xvfb-run.
set -u
cli=$1
shift
command -v xvfb-run >/dev/null 2>&1 || { echo "SKIP: xvfb-run is not installed"; exit 77; }
err=$(LIBGL_ALWAYS_SOFTWARE=1 xvfb-run -a -s "-screen 0 1280x1024x24" "$cli" view "$@" --size 320x200 2>&1)
rc=$?
echo "$err"
[ $rc -eq 3 ] || { echo "FAIL: exit code $rc, expected 3"; exit 1; }
printf '%s\n' "$err" | grep -q "diverged at step" || { echo "FAIL: no 'diverged at step' message"; exit 1; }
