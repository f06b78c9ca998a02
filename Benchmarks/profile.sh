#!/usr/bin/env bash
# Instructions per operation (valgrind callgrind) and live memory per chain (valgrind memcheck)
# of the harness-free loops in Profile/ (a package of its own, depending only on ChainBind). Repeatable to the instruction, unlike
# wall-clock time; see Docs/Performance.md.
#
# Usage: Benchmarks/profile.sh [mode ...]
#   modes: chainbind floor scale string double filter sink twoway churn memory   (default: all)
# Each mode but memory runs twice, with N = 10 000 and 20 000 operations; the difference divided
# by 10 000 is the cost of one operation (setup and teardown cancel out; deterministic hashing
# keeps them identical). memory binds 1 000 and 2 000 chains and divides what stays allocated.
set -euo pipefail
cd "$(dirname "$0")/Profile"
scratch="${BENCH_SCRATCH_PATH:-.build}"
swift build -c release --scratch-path "$scratch" --product HotPathProfile >/dev/null
binary="$scratch/release/HotPathProfile"
export SWIFT_DETERMINISTIC_HASHING=1
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

instructions() { # mode n
  valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$binary" "$1" "$2" 2>&1 \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
reachable() { # n -> "bytes blocks"
  valgrind --leak-check=full --show-leak-kinds=all "$binary" memory "$1" 2>&1 \
    | sed -n 's/.*still reachable: \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 \2/p' | tr -d ,
}

modes=("$@")
[ ${#modes[@]} -eq 0 ] && modes=(chainbind floor scale string double filter sink twoway churn memory)
for mode in "${modes[@]}"; do
  if [ "$mode" = memory ]; then
    read -r bytes1 blocks1 <<<"$(reachable 1000)"
    read -r bytes2 blocks2 <<<"$(reachable 2000)"
    # Includes the two objects of each chain (56 bytes, 2 blocks) and the arrays holding them.
    echo "memory: $(((bytes2 - bytes1) / 1000)) bytes and $(((blocks2 - blocks1) / 1000)) blocks" \
      "stay allocated per chain, its 2 objects and 24 bytes of arrays included"
  else
    first=$(instructions "$mode" 10000)
    second=$(instructions "$mode" 20000)
    echo "$mode: $(((second - first) / 10000)) instructions per operation"
  fi
done
