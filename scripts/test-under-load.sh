#!/usr/bin/env bash
# The whole suite with every core kept busy (docs/testing.md, "Under load"): LOAD busy processes (default:
# one a core; stress-ng --cpu when installed, else `yes > /dev/null`) beside `ctest -j JOBS`, RUNS times.
# Exits non-zero if any run failed a test. Each run's ctest log is kept in BUILD/Testing/under-load-STAMP-K.log.
#
#   bash scripts/test-under-load.sh [BUILD] [RUNS]        (make test-under-load: build, then 3 runs)
#   LOAD=4 JOBS=2 CTEST_ARGS="-L viewer" bash scripts/test-under-load.sh build 1
set -uo pipefail
build=${1:-build}
runs=${2:-3}
cores=$(nproc)
load=${LOAD:-$cores}
jobs=${JOBS:-$cores}
[ -f "$build/CTestTestfile.cmake" ] || { echo "test-under-load: $build is not a configured build (make build first)" >&2; exit 2; }

pids=()
stop_load() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap stop_load EXIT
if command -v stress-ng >/dev/null 2>&1; then
  stress-ng --cpu "$load" --quiet &
  pids+=($!)
  what="stress-ng --cpu $load"
else
  for _ in $(seq "$load"); do yes >/dev/null & pids+=($!); done
  what="$load x yes > /dev/null"
fi

failed=0
stamp=$(date -u +%Y%m%dT%H%M%SZ)  # one name per invocation: an earlier invocation's logs are kept
for k in $(seq "$runs"); do
  log="$build/Testing/under-load-$stamp-$k.log"
  mkdir -p "$build/Testing"
  start=$(date +%s)
  # shellcheck disable=SC2086
  (cd "$build" && ctest --output-on-failure -j "$jobs" ${CTEST_ARGS:-}) >"$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  summary=$(grep -E "tests passed|tests failed" "$log" | tail -1)
  echo "run $k of $runs beside $what (load average $(cut -d' ' -f1 /proc/loadavg)): ctest -j $jobs exit $rc in ${secs} s: $summary"
  if [ $rc -ne 0 ]; then
    failed=$((failed + 1))
    sed -n '/The following tests FAILED/,$p' "$log"
  fi
done
echo "test-under-load: $((runs - failed)) of $runs runs passed every test ($(uname -m), $cores cores)"
[ $failed -eq 0 ]
