#!/usr/bin/env bash
# The hot-path gate of CI (.ci/run), on Profile/'s HotPathProfile under valgrind:
#  1. No allocation per operation: every mode but churn, memory and scale, run with N = 1 000 and
#     N = 2 000 under memcheck, allocates the same number of blocks (Docs/Semantics.md, "Threading").
#  2. No instruction regression: the callgrind instructions per operation of the main modes,
#     measured as profile.sh does, are at most 10 % (or 3 instructions, whichever is more) above
#     Benchmarks/hotpath-baseline.txt; binding and releasing a chain (the churn modes), at most
#     3 %.
#  3. Memory: a live two-member chain keeps at most 400 bytes (memcheck, `memory` with 1 000 and
#     2 000 chains, less the two objects and the test's arrays; Docs/Performance.md, "Memory"),
#     from a `@Bound` property. From an `@Observable` object's property (`memoryobservable`, less
#     what `objectsobservable` keeps: the same objects and arrays, unbound) at most 1 600 bytes:
#     Observation's own watch of one property keeps 832 (Docs/Performance.md, "Memory"). From a
#     two-link `@Bound` path or a computed property (`memorynested`, `memorycomputed`) at most
#     1 000 bytes.
#  4. Tracked sources against their hand-written floors, as ratios of one run's counts
#     (Docs/Performance.md, "Tracked sources"): each at most its limit below.
#  5. The uncontended path costs what it cost in 0.3: 0.3's own sources (taken from git, a
#     release build beside this one) measured on the modes of 0.3's gate, each within 3 % (or 3
#     instructions) of 0.3 (Docs/Performance.md, "Fair delivery (0.4)"). Skipped, and said so,
#     when 0.3's commit is not in this clone (a shallow one).
# Every check prints one line; the script exits 1 at the end if any failed. Without valgrind it
# prints so and exits 0.
#
# Usage: Benchmarks/check-hotpath.sh            the checks
#        Benchmarks/check-hotpath.sh --update   measures the main modes and rewrites the baseline
#                                               (no checks); commit it with the intended change
#        Benchmarks/check-hotpath.sh --update MODE...
#                                               measures only these modes and rewrites only their
#                                               lines (a new mode is added); the others keep their
#                                               recorded counts, and so stay a gate for a change
#                                               that adds a mode
# Builds into Profile/.build, or $BENCH_SCRATCH_PATH (relative to Profile/).
set -euo pipefail
shopt -s inherit_errexit

update=false
update_modes=()
case "${1:-}" in
  "") ;;
  --update)
    update=true
    update_modes=("${@:2}")
    ;;
  *)
    echo "usage: $0 [--update [MODE...]]" >&2
    exit 2
    ;;
esac

if ! command -v valgrind >/dev/null; then
  echo "check-hotpath: valgrind not found: allocation and instruction checks skipped"
  exit 0
fi

# shellcheck source=hotpath-lib.sh
source "$(dirname "$0")/hotpath-lib.sh"
baseline="$hotpath_dir/hotpath-baseline.txt"
allocation_modes=(chainbind mainactor floor string stringback floorstring double filter sink twoway
  floortwoway boundread floorread nested computed relink)
# traced: a chain with a tracer (Docs/Semantics.md, "Tracing"); it describes every value, so it
# allocates per operation and is not among the allocation modes. chainbind is the same chain
# without one: tracing costs an untraced chain nothing measurable.
# stringback: a text member's sets through the automatic `back:` conversion into an Int chain.
# batch: chainbind's sets in batches of 100 (Docs/Semantics.md, "Batches").
# addmember: one more member for a chain of 10 000 to 20 000: a cost that grows with the chain
# shows as thousands of instructions more.
instruction_modes=(chainbind mainactor string stringback double filter sink twoway boundread nested
  computed relink observable traced batch churn churnnested churncomputed churnobservable addmember)
# The most a mode may cost above its baseline, in percent, when not 10: a churn cycle is
# thousands of instructions in which a 6.7 % regression (a generic call per member removal)
# once passed the 10 % gate.
declare -A tolerances=([churn]=3 [churnnested]=3 [churncomputed]=3 [churnobservable]=3)
# The ratio checks: mode, floor, the most the ratio may be. Docs/Performance.md, "Tracked sources",
# gives the targets (nested 3, relink 10, computed 4, observable 1) and what bounds each: nested,
# relink and observable, which meet their targets, are held to them; computed to about 10 % above
# its measured ratio.
ratio_limits=(nested:floornested:3.0 relink:floornested:10.0 computed:floorcomputed:6.4
  observable:floorobservable:1.0)
# Instruction counts depend on the toolchain, the C library and valgrind: the baseline records
# them, and a different setup gets a warning (not a failure).
setup="$(swift --version 2>/dev/null | head -n 1); $(uname -m); $(valgrind --version)"
failures=()
instructions_failed=false

hotpath_build

if $update && [ ${#update_modes[@]} -gt 0 ]; then
  # Only the modes named: their lines replaced (or added), every other line kept as it is.
  cp "$baseline" "$hotpath_out/baseline"
  for mode in "${update_modes[@]}"; do
    count=$(hotpath_per_op "$(hotpath_cost "$mode")")
    grep -v "^$mode " "$hotpath_out/baseline" >"$hotpath_out/kept" || true
    echo "$mode $count" >>"$hotpath_out/kept"
    mv "$hotpath_out/kept" "$hotpath_out/baseline"
    echo "$mode: $count instructions/op"
  done
  mv "$hotpath_out/baseline" "$baseline"
  echo "check-hotpath: updated ${update_modes[*]} in $baseline"
  exit 0
fi

if $update; then
  {
    echo "# HotPathProfile: callgrind instructions per operation, the baseline of"
    echo "# Benchmarks/check-hotpath.sh, which fails when a mode costs more than 10 % above it (churn 3 %)."
    echo "# Update it in the same commit as an intended change of these costs:"
    echo "#   Benchmarks/check-hotpath.sh --update"
    echo "# Format: one \`mode instructions\` pair per line; \`#\` starts a comment."
    echo "# setup: $setup"
    for mode in "${instruction_modes[@]}"; do
      echo "$mode $(hotpath_per_op "$(hotpath_cost "$mode")")"
    done
  } >"$hotpath_out/baseline"
  mv "$hotpath_out/baseline" "$baseline"
  grep -v '^#' "$baseline" | sed 's/^\([^ ]*\) \(.*\)/\1: \2 instructions\/op/'
  echo "check-hotpath: wrote $baseline"
  exit 0
fi

echo "== no allocation per operation (memcheck, N = 1 000 and 2 000)"
for mode in "${allocation_modes[@]}"; do
  fewer=$(hotpath_allocations "$mode" 1000)
  more=$(hotpath_allocations "$mode" 2000)
  if [ "$fewer" = "$more" ]; then
    echo "$mode: $fewer allocations for N = 1 000 and N = 2 000: none per operation"
  else
    echo "$mode: $fewer allocations for N = 1 000, $more for N = 2 000: FAILED," \
      "$(hotpath_ratio $((more - fewer)) 1000) per operation"
    failures+=("$mode allocates per operation")
  fi
done

echo "== instructions per operation (callgrind) against $(basename "$baseline")" \
  "(+10 % at most, churn +3 %)"
declare -A baselines=()
if [ -f "$baseline" ]; then
  while read -r mode count _; do
    [ -n "$mode" ] && baselines[$mode]=$count
  done < <(sed -e 's/#.*//' "$baseline")
  recorded=$(sed -n 's/^# setup: //p' "$baseline")
  if [ -n "$recorded" ] && [ "$recorded" != "$setup" ]; then
    echo "warning: the baseline was measured with: $recorded"
    echo "warning: this is: $setup (counts may differ for that reason alone)"
  fi
else
  echo "no baseline file; make one with: Benchmarks/check-hotpath.sh --update"
fi
declare -A costs=()
for mode in "${instruction_modes[@]}"; do
  costs[$mode]=$(hotpath_cost "$mode")
  count=$(hotpath_per_op "${costs[$mode]}")
  reference=${baselines[$mode]:-}
  if [ -z "$reference" ]; then
    echo "$mode: $count instructions/op (no baseline): FAILED"
    failures+=("$mode has no baseline")
    continue
  fi
  change=$(awk -v c="$count" -v b="$reference" \
    'BEGIN { p = sprintf("%+.1f", (c - b) * 100 / b); print (p == "-0.0" ? "+0.0" : p) }')
  # Counts move by an instruction or two between builds: a mode of a dozen instructions (a read)
  # fails only when it also grew by more than 3.
  tolerance=${tolerances[$mode]:-10}
  if [ $((count * 100)) -gt $((reference * (100 + tolerance))) ] \
    && [ $((count - reference)) -gt 3 ]; then
    echo "$mode: $count instructions/op (baseline $reference, $change %): FAILED"
    failures+=("$mode costs $change % instructions")
    instructions_failed=true
  else
    echo "$mode: $count instructions/op (baseline $reference, $change %)"
  fi
done

echo "== memory kept per live two-member chain (memcheck, 1 000 and 2 000 chains; 400 bytes at most)"
read -r bytes1 _ <<<"$(hotpath_reachable 1000)"
read -r bytes2 _ <<<"$(hotpath_reachable 2000)"
# The mode's two objects (56 bytes) and its arrays of them (24) are the test's, not the chain's.
kept=$(((bytes2 - bytes1) / 1000 - 80))
if [ "$kept" -le 400 ]; then
  echo "memory: $kept bytes kept per chain"
else
  echo "memory: $kept bytes kept per chain: FAILED"
  failures+=("a chain keeps $kept bytes, more than 400")
fi
read -r bytes1 _ <<<"$(hotpath_reachable 1000 memoryobservable)"
read -r bytes2 _ <<<"$(hotpath_reachable 2000 memoryobservable)"
read -r objects1 _ <<<"$(hotpath_reachable 1000 objectsobservable)"
read -r objects2 _ <<<"$(hotpath_reachable 2000 objectsobservable)"
kept=$((((bytes2 - bytes1) - (objects2 - objects1)) / 1000))
if [ "$kept" -le 1600 ]; then
  echo "memory: $kept bytes kept per chain from an @Observable property"
else
  echo "memory: $kept bytes kept per chain from an @Observable property: FAILED"
  failures+=("a chain from an @Observable property keeps $kept bytes, more than 1 600")
fi

for kind in nested computed; do
  kept=$(hotpath_kept "$kind")
  if [ "$kept" -le 1000 ]; then
    echo "memory: $kept bytes kept per chain from a $kind source"
  else
    echo "memory: $kept bytes kept per chain from a $kind source: FAILED"
    failures+=("a chain from a $kind source keeps $kept bytes, more than 1 000")
  fi
done

echo "== tracked sources against their hand-written floors (callgrind, one run)"
for limit in "${ratio_limits[@]}"; do
  IFS=: read -r mode floor most <<<"$limit"
  [ -n "${costs[$mode]:-}" ] || costs[$mode]=$(hotpath_cost "$mode")
  [ -n "${costs[$floor]:-}" ] || costs[$floor]=$(hotpath_cost "$floor")
  ratio=$(hotpath_ratio "${costs[$mode]}" "${costs[$floor]}")
  if awk -v r="$ratio" -v m="$most" 'BEGIN { exit !(r <= m) }'; then
    echo "$mode/$floor: $ratio (at most $most)"
  else
    echo "$mode/$floor: $ratio (at most $most): FAILED"
    failures+=("$mode costs $ratio × $floor, more than $most")
  fi
done

echo "== the uncontended path against 0.3 (callgrind, 0.3 built beside this; +3 % at most)"
# 0.3's release; its gate's modes, which its HotPathProfile has.
v03=b78bf3e607935cf8a932596d012dd227840f4df7
v03_modes=(chainbind mainactor string double filter sink twoway boundread nested computed traced
  batch)
repository="$hotpath_dir/.."
if ! git -C "$repository" cat-file -e "$v03^{commit}" 2>/dev/null; then
  echo "warning: skipped: 0.3 ($v03) is not in this clone (a shallow one?)"
else
  mkdir "$hotpath_out/v03"
  current_binary=$hotpath_binary
  if ! git -C "$repository" archive "$v03" Package.swift Sources Benchmarks/Profile \
    | tar -x -C "$hotpath_out/v03"; then
    failures+=("0.3's sources could not be taken from git")
  elif ! (cd "$hotpath_out/v03/Benchmarks/Profile" \
    && swift build -c release --scratch-path .build --product HotPathProfile) \
    >"$hotpath_out/v03-build.log" 2>&1; then
    cat "$hotpath_out/v03-build.log" >&2
    failures+=("0.3's HotPathProfile did not build")
  else
    for mode in "${v03_modes[@]}"; do
      hotpath_binary=$current_binary
      [ -n "${costs[$mode]:-}" ] || costs[$mode]=$(hotpath_cost "$mode")
      hotpath_binary="$hotpath_out/v03/Benchmarks/Profile/.build/release/HotPathProfile"
      count=$(hotpath_per_op "${costs[$mode]}")
      reference=$(hotpath_per_op "$(hotpath_cost "$mode")")
      ratio=$(hotpath_ratio "$count" "$reference")
      if [ $((count * 100)) -gt $((reference * 103)) ] && [ $((count - reference)) -gt 3 ]; then
        echo "$mode: $count instructions/op, 0.3 $reference ($ratio ×): FAILED"
        failures+=("$mode costs $ratio × 0.3, more than 1.03")
      else
        echo "$mode: $count instructions/op, 0.3 $reference ($ratio ×)"
      fi
    done
  fi
  hotpath_binary=$current_binary
fi

if [ ${#failures[@]} -gt 0 ]; then
  echo "check-hotpath: ${#failures[@]} failed:" >&2
  printf '  %s\n' "${failures[@]}" >&2
  if $instructions_failed; then
    echo "An intended change of the instruction counts: Benchmarks/check-hotpath.sh --update," \
      "in the same commit." >&2
  fi
  exit 1
fi
echo "check-hotpath: all passed"
