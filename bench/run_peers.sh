#!/usr/bin/env bash
# Runs eddy's benchmarks and the peers side by side in one session, for docs/performance.md.
#   bash bench/run_peers.sh [build-dir]
# Peers: nanoflann (k-d tree, built into eddy-bench when libnanoflann-dev is installed) and PySPH
# (Debian's python3-pysph, optional: skipped when it is not installed), and SPlisHSPlasH's DFSPH when
# SPLISHSPLASH_DIR names a tree with its SPHSimulator built (not a Debian package: built by hand).
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F)"
"$build/bin/eddy-bench" --benchmark_counters_tabular=true \
  --benchmark_filter='NeighborSearch|PeerNanoflann|WcsphStep|PbfStep|ClavetStep|SceneBenchDamBreak3D' 2>&1 | grep -v WARNING
if /usr/bin/python3 -c 'import pysph' 2>/dev/null; then
  bash "$here/peers/pysph_dam_break.sh" 30 2
else
  echo "PySPH not installed (apt-get install python3-pysph): peer skipped"
fi
if [ -n "${SPLISHSPLASH_DIR:-}" ]; then
  bash "$here/peers/splishsplash_dam_break.sh" "$SPLISHSPLASH_DIR" 2 "$build/bin/eddy"
else
  echo "SPlisHSPlasH: set SPLISHSPLASH_DIR to a tree with SPHSimulator built (docs/performance.md): peer skipped"
fi
