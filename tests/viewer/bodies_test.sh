#!/bin/sh
# The viewer's rigid bodies (issue 30) under Xvfb with Mesa's software OpenGL (llvmpipe).
# Usage:
#   bodies_test.sh draw EDDY_CLI COLOR_CHECK OUT.png "R G B MIN" ["R G B MIN" ...] -- [view arguments...]
#     the screenshot must hold at least MIN (fraction) pixels of each body colour R G B.
#   bodies_test.sh drag EDDY_CLI BODY MIN_RISE -- [view arguments...]
#     runs the view arguments twice, without and with --bodies-mode (its --test-drag then grabs a body
#     instead of pushing the fluid); body BODY must end at least MIN_RISE metres higher with it.
# Exit 77 (ctest: skipped) when xvfb-run is not installed.
set -u
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run is not installed (Debian: xvfb xauth libgl1-mesa-dri, see scripts/install-deps.sh)"
  exit 77
fi
mode=$1
shift
view() {
  LIBGL_ALWAYS_SOFTWARE=1 xvfb-run -a -s "-screen 0 1280x1024x24" "$cli" view "$@" --size 640x400
}
if [ "$mode" = draw ]; then
  cli=$1 check=$2 out=$3
  shift 3
  colors=""
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do colors="$colors|$1"; shift; done
  shift
  rm -f "$out"
  view "$@" --screenshot "$out" || { echo "FAIL: eddy view exited with $?"; exit 1; }
  [ -f "$out" ] || { echo "FAIL: no screenshot $out"; exit 1; }
  rc=0
  IFS='|'
  for c in $colors; do
    [ -n "$c" ] || continue
    IFS=' '
    # shellcheck disable=SC2086
    "$check" "$out" $c || rc=1
    IFS='|'
  done
  exit $rc
fi
if [ "$mode" = drag ]; then
  cli=$1 body=$2 rise=$3
  shift 4  # and the --
  y_of() { sed -n "s/^eddy-view: body $body: position [^ ]* \([^ ]*\) .*/\1/p" | tail -1; }
  free=$(view "$@" 2>&1 | y_of)
  dragged=$(view "$@" --bodies-mode 2>&1 | y_of)
  echo "body $body ends at y = $free m without the drag, $dragged m with it (need at least $rise m higher)"
  [ -n "$free" ] && [ -n "$dragged" ] || { echo "FAIL: no body line in the output"; exit 1; }
  awk -v a="$free" -v b="$dragged" -v r="$rise" 'BEGIN { exit !(b - a >= r) }' || { echo "FAIL"; exit 1; }
  exit 0
fi
echo "usage: bodies_test.sh draw|drag ..."
exit 2
