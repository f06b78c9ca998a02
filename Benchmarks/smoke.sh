#!/usr/bin/env bash
# Smoke mode of the ChainBind benchmarks: every scenario for every peer, a few samples each.
# It checks that the suite builds and runs (and that churn auto-unbinds), not the numbers.
# Usage: Benchmarks/smoke.sh   (from anywhere; builds into Benchmarks/.build, or $BENCH_SCRATCH_PATH)
set -euo pipefail
cd "$(dirname "$0")"
CHAINBIND_BENCH_SMOKE=1 swift package --disable-sandbox --scratch-path "${BENCH_SCRATCH_PATH:-.build}" \
  benchmark --no-progress --scale "$@"
