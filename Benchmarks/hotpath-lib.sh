# Shared by profile.sh and check-hotpath.sh (sourced, not run): builds Profile/'s HotPathProfile
# (release) and measures its modes under valgrind.
#
#   hotpath_build                 builds into $BENCH_SCRATCH_PATH (relative to Profile/; default
#                                 .build) and sets hotpath_binary
#   hotpath_cost MODE             callgrind instructions of 10 000 operations: the count with
#                                 N = 20 000 minus the count with N = 10 000 (setup and teardown
#                                 cancel out; deterministic hashing keeps them identical)
#   hotpath_allocations MODE N    memcheck's "total heap usage: N allocs" of one run
#   hotpath_reachable N [MODE]    "bytes blocks" still reachable at exit of `MODE N` (memory)
#   hotpath_per_op COST           COST / 10 000, an integer: instructions per operation
#   hotpath_ratio COST COST       COST / COST with two decimals
#
# Every function prints its result; on failure it prints why to stderr and returns 1.

hotpath_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
hotpath_binary=""
# The pairs that `profile.sh --ratios` divides: ChainBind's mode, then its hand-written floor.
hotpath_ratio_pairs=(chainbind:floor string:floorstring twoway:floortwoway twoway:leantwoway
  boundread:floorread
  mainactor:chainbind nested:floornested relink:floornested computed:floorcomputed
  observable:floorobservable)
# Without it, the random hash seed makes the setup of the two runs of hotpath_cost differ (by
# hundreds of instructions per operation in `scale`, which binds 100 000 chains first).
export SWIFT_DETERMINISTIC_HASHING=1
hotpath_out="$(mktemp -d)"
trap 'rm -rf "$hotpath_out"' EXIT

hotpath_build() {
  local scratch="${BENCH_SCRATCH_PATH:-.build}"
  case "$scratch" in
    /*) ;;
    *) scratch="$hotpath_dir/Profile/$scratch" ;;
  esac
  if ! (cd "$hotpath_dir/Profile" \
    && swift build -c release --scratch-path "$scratch" --product HotPathProfile) \
    >"$hotpath_out/build.log" 2>&1; then
    cat "$hotpath_out/build.log" >&2
    echo "hotpath: building HotPathProfile failed" >&2
    return 1
  fi
  # A warning here (an infinite recursion, say) can make a mode measure something else.
  grep -A3 "warning:" "$hotpath_out/build.log" >&2 || true
  hotpath_binary="$scratch/release/HotPathProfile"
}

hotpath_instructions() { # mode n
  local log="$hotpath_out/callgrind-$1-$2.log" count
  if ! valgrind --tool=callgrind --callgrind-out-file="$hotpath_out/cg" \
    "$hotpath_binary" "$1" "$2" >"$log" 2>&1; then
    cat "$log" >&2
    echo "hotpath: HotPathProfile $1 $2 failed under callgrind" >&2
    return 1
  fi
  count=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$log")
  if [ -z "$count" ]; then
    echo "hotpath: no instruction count in callgrind's output for $1 $2" >&2
    return 1
  fi
  echo "$count"
}

hotpath_cost() { # mode
  local first second
  first=$(hotpath_instructions "$1" 10000) || return 1
  second=$(hotpath_instructions "$1" 20000) || return 1
  echo $((second - first))
}

hotpath_per_op() { # cost
  echo $(($1 / 10000))
}

hotpath_ratio() { # cost floor-cost
  awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f\n", a / b }'
}

hotpath_allocations() { # mode n
  local log="$hotpath_out/memcheck-$1-$2.log" count
  if ! valgrind "$hotpath_binary" "$1" "$2" >"$log" 2>&1; then
    cat "$log" >&2
    echo "hotpath: HotPathProfile $1 $2 failed under memcheck" >&2
    return 1
  fi
  count=$(sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' "$log" | tr -d ,)
  if [ -z "$count" ]; then
    echo "hotpath: no heap usage in memcheck's output for $1 $2" >&2
    return 1
  fi
  echo "$count"
}

hotpath_reachable() { # n [mode] -> "bytes blocks"
  valgrind --leak-check=full --show-leak-kinds=all "$hotpath_binary" "${2:-memory}" "$1" 2>&1 \
    | sed -n 's/.*still reachable: \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 \2/p' | tr -d ,
}

hotpath_kept() { # kind (observable, nested or computed) -> bytes kept per chain
  # What `memoryKIND` keeps per chain less what `objectsKIND` keeps: the same objects and arrays,
  # unbound.
  local bytes1 bytes2 objects1 objects2
  read -r bytes1 _ <<<"$(hotpath_reachable 1000 "memory$1")"
  read -r bytes2 _ <<<"$(hotpath_reachable 2000 "memory$1")"
  read -r objects1 _ <<<"$(hotpath_reachable 1000 "objects$1")"
  read -r objects2 _ <<<"$(hotpath_reachable 2000 "objects$1")"
  echo $((((bytes2 - bytes1) - (objects2 - objects1)) / 1000))
}
