#!/bin/sh
# Usage: measure_models.sh MODEL... (in a scratch folder; EDDY=path/to/eddy)
# For each generated model: eddy's estimate (refused under --max-memory 1) and the peak RSS of a run that
# reads it (an obstacle in a small scene, one step), less the same scene with a sphere obstacle.
EDDY=${EDDY:-eddy}
python3 "$(dirname "$0")"/model_scene.py none base.json
base=$( { /usr/bin/time -f %M $EDDY run base.json --steps 1 --threads 1 --out out_m --quiet --max-memory 8G; } 2>&1 | tail -1)
echo "base ${base} kB"
for f in "$@"; do
  ext=${f##*.}
  python3 "$(dirname "$0")"/model_scene.py $f s.json
  est=$($EDDY run s.json --steps 1 --threads 1 --out out_m --quiet --max-memory 1 2>&1 | sed -n 's/.*needs about \([0-9.]* [kMG]B\).*/\1/p')
  peak=$( { /usr/bin/time -f %M $EDDY run s.json --steps 1 --threads 1 --out out_m --quiet --max-memory 8G; } 2>&1 | tail -1)
  echo "$f size $(stat -c %s $f) estimate $est peak-base $(( (peak - base) / 1000 )) MB"
done
