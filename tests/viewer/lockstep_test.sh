#!/bin/sh
# Lockstep (--steps-per-frame): the same scene on 1 and on 2 threads shows the same state, so the two
# screenshots are the same bytes; and the picture is not blank.
# Usage: lockstep_test.sh EDDY_CLI PNG_CHECK OUT_PREFIX SCENE. Exit 77 (skipped) without xvfb-run.
set -u
cli=$1 check=$2 out=$3 scene=$4
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run is not installed (Debian: xvfb xauth libgl1-mesa-dri, see scripts/install-deps.sh)"
  exit 77
fi
for t in 1 2; do
  rm -f "${out}_$t.png"
  LIBGL_ALWAYS_SOFTWARE=1 xvfb-run -a -s "-screen 0 1280x1024x24" "$cli" view "$scene" --frames 4 --steps-per-frame 6 \
    --threads $t --size 640x400 --screenshot "${out}_$t.png" || { echo "FAIL: eddy view exited with $? ($t threads)"; exit 1; }
done
cmp "${out}_1.png" "${out}_2.png" || { echo "FAIL: the pictures on 1 and 2 threads differ"; exit 1; }
exec "$check" "${out}_1.png" 0.01 640 400
