#!/usr/bin/env bash
# One browser check of tests/web/page_test.mjs (ctest web.CHECK): skips (77) with the reason when the web
# build or puppeteer-core is missing, else runs the check with NODE_PATH at the web build's node_modules.
#   run_check.sh NODE WEB_BUILD CHECK ARGS...
set -euo pipefail
node=$1 web=$2 check=$3
shift 3
if [ ! -f "$web/eddy.wasm" ] || [ ! -f "$web/index.html" ]; then
  echo "web.$check skipped: no web build in $web (make web builds it; it needs Emscripten)"; exit 77
fi
if [ ! -f "$web/npm/node_modules/puppeteer-core/package.json" ]; then
  echo "web.$check skipped: puppeteer-core is not in $web/npm/node_modules (make web installs it with npm)"; exit 77
fi
NODE_PATH="$web/npm/node_modules" exec "$node" "$(dirname "$0")/page_test.mjs" "$@"
