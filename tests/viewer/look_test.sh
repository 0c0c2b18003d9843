#!/bin/sh
# The viewer's look under Xvfb (issue 31, item 3): screenshots differ as they should. Paused runs of a few
# frames (no step: the pictures differ only by what the controls change).
# Usage: look_test.sh MODE EDDY_CLI PNG_CHECK PNG_COLOR PNG_BBOX OUT_DIR
#   size      cube_3d drawn at 0.5, 1 and 2 particle radii: more fluid-coloured pixels each time
#   colormap  cube_3d (at rest: the low end of the map) in viridis: viridis's dark purple, none in classic
#   legend    the legend's bar shows viridis's yellow end (the fluid at rest has none); --no-legend: none
#   recolor   dam_break_2d paused, C pressed at frame 2 (--test-keys): the picture changes and equals
#             the one started with --color density (recoloured without a step)
#   camera    dam_break_3d and dam_break_2d in 1280x720 with the panel: the walls' grey spans the part
#             right of the panel (360 px) to within 10% on the tighter side, without touching a border;
#             with H pressed (the panel hidden), centred in the whole window (2D also refitted to it)
#   replay    square_2d, a scripted drag in lockstep on 1 and 2 threads: the same picture, fluid moved
# Exit 77 (skipped) without xvfb-run.
set -u
mode=$1 cli=$2 check=$3 color=$4 bbox=$5 out=$6
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run is not installed (Debian: xvfb xauth libgl1-mesa-dri, see scripts/install-deps.sh)"
  exit 77
fi
mkdir -p "$out"
view() {  # view OUT.png ARGS...: $FRAMES (4) frames on $THREADS (1) threads in $SIZE (640x400)
  png=$1
  shift
  rm -f "$png"
  LIBGL_ALWAYS_SOFTWARE=1 xvfb-run -a -s "-screen 0 1280x1024x24" "$cli" view --size "${SIZE:-640x400}" --frames "${FRAMES:-4}" \
    --threads "${THREADS:-1}" --screenshot "$png" "$@" >"$png.log" 2>&1 || { cat "$png.log"; echo "FAIL: eddy view $* exited with an error"; exit 1; }
  [ -f "$png" ] || { echo "FAIL: no screenshot $png"; exit 1; }
}
fluid() { "$check" "$1" 0 | sed -n 's/.*, \([0-9.]*\)% fluid-coloured.*/\1/p'; }
frac() { "$color" "$@" | sed -n 's/.*: [0-9]*x[0-9]*, \([0-9.]*\)% pixels.*/\1/p'; }
differ() { if cmp -s "$1" "$2"; then echo "FAIL: $1 and $2 are the same picture"; exit 1; fi; }
case $mode in
size)
  for s in 0.5 1 3; do view "$out/size_$s.png" cube_3d --paused --hide-ui --particle-size $s; done
  a=$(fluid "$out/size_0.5.png") b=$(fluid "$out/size_1.png") c=$(fluid "$out/size_3.png")
  echo "fluid-coloured pixels: $a% at 0.5 r, $b% at 1 r, $c% at 3 r"
  awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { exit !(a > 0.5 && b > 1.1 * a && c > 1.1 * b) }' || { echo FAIL; exit 1; }
  ;;
colormap)
  view "$out/classic.png" cube_3d --paused --hide-ui
  view "$out/viridis.png" cube_3d --paused --hide-ui --colormap viridis
  differ "$out/classic.png" "$out/viridis.png"
  a=$(frac "$out/viridis.png" 0.267 0.005 0.329 0) b=$(frac "$out/classic.png" 0.267 0.005 0.329 0)
  echo "viridis's purple: $a% of the viridis picture, $b% of the classic one"
  awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 5 && b < 0.01) }' || { echo FAIL; exit 1; }
  ;;
legend)
  view "$out/legend.png" cube_3d --paused --hide-ui --colormap viridis
  view "$out/no_legend.png" cube_3d --paused --hide-ui --colormap viridis --no-legend
  a=$(frac "$out/legend.png" 0.993 0.906 0.144 0) b=$(frac "$out/no_legend.png" 0.993 0.906 0.144 0)
  echo "viridis's yellow: $a% with the legend, $b% without"
  awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0.03 && b < 0.005) }' || { echo FAIL; exit 1; }
  ;;
recolor)
  export FRAMES=10
  view "$out/speed.png" dam_break_2d --paused --hide-ui
  view "$out/recolored.png" dam_break_2d --paused --hide-ui --test-keys 2:c
  view "$out/density.png" dam_break_2d --paused --hide-ui --color density
  differ "$out/speed.png" "$out/recolored.png"
  cmp "$out/recolored.png" "$out/density.png" || { echo "FAIL: C while paused does not show the density picture"; exit 1; }
  grep -q " 0 steps" "$out/recolored.png.log" || { echo "FAIL: the paused run stepped"; exit 1; }
  echo "C while paused: the density picture, 0 steps"
  ;;
camera)
  for s in dam_break_3d dam_break_2d; do
    SIZE=1280x720 view "$out/camera_$s.png" $s --paused --no-legend
    set -- $("$bbox" "$out/camera_$s.png" 90 20)
    echo "$s: walls' grey from ($1, $2) to ($3, $4) in $5 x $6 ($7 pixels)"
    awk -v x0="$1" -v y0="$2" -v x1="$3" -v y1="$4" -v w="$5" -v h="$6" 'BEGIN {
      free = w - 360; fx = (x1 - x0 + 1) / free; fy = (y1 - y0 + 1) / h
      printf "spans %.1f%% of the width right of the panel, %.1f%% of the height\n", 100 * fx, 100 * fy
      exit !(x0 >= 360 && y0 >= 1 && x1 <= w - 2 && y1 <= h - 2 && (fx >= 0.9 || fy >= 0.9)) }' || { echo FAIL; exit 1; }
    # H (the panel hidden) at frame 1: the scene centred in the whole window at once (3D keeps its zoom)
    SIZE=1280x720 view "$out/camera_${s}_h.png" $s --paused --no-legend --test-keys 1:h
    set -- $("$bbox" "$out/camera_${s}_h.png" 90 20)
    echo "$s, panel hidden: walls' grey from ($1, $2) to ($3, $4)"
    awk -v s="$s" -v x0="$1" -v y0="$2" -v x1="$3" -v y1="$4" -v w="$5" -v h="$6" 'BEGIN {
      fill = (x1 - x0 + 1) / w >= 0.85 || (y1 - y0 + 1) / h >= 0.85
      exit !(x0 >= 1 && y0 >= 1 && x1 <= w - 2 && y1 <= h - 2 && (x0 - (w - 1 - x1)) ^ 2 <= (0.03 * w) ^ 2 &&
             (fill || s == "dam_break_3d")) }' || { echo FAIL; exit 1; }
  done
  ;;
replay)
  for t in 1 2; do
    FRAMES=20 THREADS=$t view "$out/replay_$t.png" square_2d --hide-ui --set gravity=[0,0] --set settings.speed_of_sound=20 \
      --steps-per-frame 5 --test-drag 0.2,0.6,0.6,0.4
  done
  cmp "$out/replay_1.png" "$out/replay_2.png" || { echo "FAIL: the drag's pictures on 1 and 2 threads differ"; exit 1; }
  grep "max speed" "$out/replay_1.png.log" "$out/replay_2.png.log"
  a=$(sed -n 's/.*max speed \([^ ]*\) m\/s.*/\1/p' "$out/replay_1.png.log")
  b=$(sed -n 's/.*max speed \([^ ]*\) m\/s.*/\1/p' "$out/replay_2.png.log")
  [ "$a" = "$b" ] && awk -v a="$a" 'BEGIN { exit !(a > 0.1) }' || { echo "FAIL: max speed $a and $b m/s"; exit 1; }
  ;;
*) echo "look_test.sh: unknown mode $mode"; exit 2 ;;
esac
echo ok
