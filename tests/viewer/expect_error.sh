#!/bin/sh
# Usage: expect_error.sh PATTERN CMD [ARGS...]: CMD must exit with 2 (bad input) and print one line
# on stderr that matches PATTERN (grep -E).
pattern=$1
shift
err=$("$@" 2>&1 >/dev/null)
rc=$?
echo "$err"
[ $rc -eq 2 ] || { echo "FAIL: exit code $rc, expected 2"; exit 1; }
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || { echo "FAIL: expected one line"; exit 1; }
printf '%s\n' "$err" | grep -Eq -- "$pattern" || { echo "FAIL: message does not match $pattern"; exit 1; }
