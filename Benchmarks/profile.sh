#!/usr/bin/env bash
# Instructions per operation (valgrind callgrind) and live memory per chain (valgrind memcheck)
# of the harness-free loops in Profile/ (a package of its own, depending only on ChainBind).
# Repeatable to the instruction, unlike wall-clock time; see Docs/Performance.md.
#
# Usage: Benchmarks/profile.sh [--ratios] [mode ...]
#   modes: chainbind mainactor floor scale string floorstring double filter sink twoway floortwoway
#          boundread floorread churn memory   (default: all)
#   --ratios: after the counts, ChainBind over its hand-written floor, for each pair measured:
#          chainbind/floor string/floorstring twoway/floortwoway boundread/floorread
# Each mode but memory runs twice, with N = 10 000 and 20 000 operations; the difference divided
# by 10 000 is the cost of one operation (setup and teardown cancel out; deterministic hashing
# keeps them identical). memory binds 1 000 and 2 000 chains and divides what stays allocated.
# Builds into Profile/.build, or $BENCH_SCRATCH_PATH (relative to Profile/). The functions are
# in hotpath-lib.sh, shared with check-hotpath.sh.
set -euo pipefail
shopt -s inherit_errexit
# shellcheck source=hotpath-lib.sh
source "$(dirname "$0")/hotpath-lib.sh"

ratios=false
modes=()
for argument in "$@"; do
  case "$argument" in
    --ratios) ratios=true ;;
    -*)
      echo "usage: $0 [--ratios] [mode ...]" >&2
      exit 2
      ;;
    *) modes+=("$argument") ;;
  esac
done
[ ${#modes[@]} -eq 0 ] && modes=(chainbind mainactor floor scale string floorstring double filter sink twoway
  floortwoway boundread floorread nested computed floorcomputed churn memory)

hotpath_build
declare -A costs=()
for mode in "${modes[@]}"; do
  if [ "$mode" = memory ]; then
    read -r bytes1 blocks1 <<<"$(hotpath_reachable 1000)"
    read -r bytes2 blocks2 <<<"$(hotpath_reachable 2000)"
    # Includes the two objects of each chain (56 bytes, 2 blocks) and the arrays holding them.
    echo "memory: $(((bytes2 - bytes1) / 1000)) bytes and $(((blocks2 - blocks1) / 1000)) blocks" \
      "stay allocated per chain, its 2 objects and 24 bytes of arrays included"
  else
    costs[$mode]=$(hotpath_cost "$mode")
    echo "$mode: $(hotpath_per_op "${costs[$mode]}") instructions per operation"
  fi
done

if $ratios; then
  # From the exact counts of 10 000 operations, not from the rounded counts per operation.
  for pair in "${hotpath_ratio_pairs[@]}"; do
    mode=${pair%%:*}
    floor=${pair#*:}
    if [ -n "${costs[$mode]:-}" ] && [ -n "${costs[$floor]:-}" ]; then
      echo "$mode/$floor: $(hotpath_ratio "${costs[$mode]}" "${costs[$floor]}")"
    fi
  done
fi
