#!/bin/sh
# The walls' loads in the viewer (issue 28): a 2D tank of still water, run in lockstep, must report
# (on stderr, for the last frame) a load on the tank within 1% of minus the water's weight, and its
# screenshot must show the load arrow (magenta pixels, eddy_png_check's MIN_ARROW).
# Usage: loads_test.sh EDDY_CLI PNG_CHECK OUT.png. Exit 77 (skipped) without xvfb-run.
set -u
cli=$1 check=$2 out=$3
command -v xvfb-run >/dev/null 2>&1 || { echo "SKIP: xvfb-run is not installed"; exit 77; }
rm -f "$out"
err=$(LIBGL_ALWAYS_SOFTWARE=1 xvfb-run -a -s "-screen 0 1280x1024x24" "$cli" view hydrostatic_2d \
      --set particle_radius=0.005 --frames 12 --steps-per-frame 50 --threads 1 --size 640x400 --load-arrow \
      --screenshot "$out" 2>&1) || { echo "$err"; echo "FAIL: eddy view exited with an error"; exit 1; }
echo "$err"
line=$(printf '%s\n' "$err" | grep "^eddy-view: load on object 0: force ")
[ -n "$line" ] || { echo "FAIL: no 'load on object 0' line"; exit 1; }
# "... force FX FY FZ N/m, torque TX TY TZ N m/m, fluid weight W N/m"
printf '%s\n' "$line" | awk '{
  fy = $8; w = $(NF - 1); e = (fy + w) / w; if (e < 0) e = -e;
  printf "floor load %g N/m, water weight %g N/m: %.3f%% apart\n", -fy, w, 100 * e;
  exit !(w > 1000 && e < 0.01) }' || { echo "FAIL: the tank's load is not the water's weight within 1%"; exit 1; }
exec "$check" "$out" 0.05 640 400 0 0.0005
