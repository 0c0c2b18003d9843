#!/bin/sh
# Lockstep (--steps-per-frame): the same scene on 1 and on 2 threads shows the same state, so the two
# screenshots are the same bytes; the picture is not blank; and the state the viewer stepped to is eddy
# run's: the state_hash eddy-view prints after its last frame is summary.json's after as many steps
# (issue 41: one clock for every front end).
# Usage: lockstep_test.sh EDDY_CLI PNG_CHECK OUT_PREFIX SCENE [FRAMES STEPS_PER_FRAME]. Exit 77 (skipped)
# without xvfb-run.
set -u
cli=$1 check=$2 out=$3 scene=$4 frames=${5:-4} per=${6:-6}
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "SKIP: xvfb-run is not installed (Debian: xvfb xauth libgl1-mesa-dri, see scripts/install-deps.sh)"
  exit 77
fi
for t in 1 2; do
  rm -f "${out}_$t.png"
  LIBGL_ALWAYS_SOFTWARE=1 xvfb-run -a -s "-screen 0 1280x1024x24" "$cli" view "$scene" --frames "$frames" \
    --steps-per-frame "$per" --threads $t --size 640x400 --screenshot "${out}_$t.png" 2>"${out}_$t.log" \
    || { cat "${out}_$t.log"; echo "FAIL: eddy view exited with $? ($t threads)"; exit 1; }
done
cmp "${out}_1.png" "${out}_2.png" || { echo "FAIL: the pictures on 1 and 2 threads differ"; exit 1; }
view_hash=$(sed -n 's/^eddy-view: state_hash \([0-9a-f]*\)$/\1/p' "${out}_1.log")
[ -n "$view_hash" ] || { cat "${out}_1.log"; echo "FAIL: eddy view printed no state_hash"; exit 1; }
view_hash2=$(sed -n 's/^eddy-view: state_hash \([0-9a-f]*\)$/\1/p' "${out}_2.log")
[ "$view_hash" = "$view_hash2" ] || { echo "FAIL: state_hash $view_hash on 1 thread, $view_hash2 on 2"; exit 1; }
rm -rf "${out}_run"
"$cli" run "$scene" --steps $((frames * per)) --out "${out}_run" -q || { echo "FAIL: eddy run exited with $?"; exit 1; }
run_hash=$(sed -n 's/.*"state_hash": *"\([0-9a-f]*\)".*/\1/p' "${out}_run/summary.json")
[ "$view_hash" = "$run_hash" ] || { echo "FAIL: eddy view's state_hash $view_hash after $((frames * per)) steps, eddy run's $run_hash"; exit 1; }
echo "state_hash $view_hash: eddy view (1 and 2 threads) and eddy run after $((frames * per)) steps"
# A scene with probes: the readings eddy-view printed are the last frame's rows of eddy run's probes.csv.
if [ -f "${out}_run/probes.csv" ]; then
  sed -n 's/^eddy-view: probe \(.*\)$/\1/p' "${out}_1.log" | tr -d ':' > "${out}_view_probes.txt"
  n=$(wc -l < "${out}_view_probes.txt")
  [ "$n" -gt 0 ] || { echo "FAIL: the scene has probes, eddy view printed none"; exit 1; }
  tail -n "$n" "${out}_run/probes.csv" | awk -F, '{print $2","$3" "$7","$8","$9","$10}' > "${out}_run_probes.txt"
  cmp "${out}_view_probes.txt" "${out}_run_probes.txt" || { echo "FAIL: eddy view's probes:"; cat "${out}_view_probes.txt"; echo "eddy run's last frame:"; cat "${out}_run_probes.txt"; exit 1; }
  echo "probes: eddy view's $n readings are eddy run's last frame's:"; cat "${out}_view_probes.txt"
fi
exec "$check" "${out}_1.png" 0.01 640 400
