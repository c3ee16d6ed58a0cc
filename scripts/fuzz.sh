#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ with clang into $1 (default build-fuzz/) and runs each
# for $2 seconds (default 20), one after the other, on its corpus (<dir>/fuzz/corpus/<harness>/,
# kept between runs) and the seeds the build writes. A crash, leak, undefined behaviour, an input
# slower than 10 s or a broken reader contract fails: the input is saved in <dir>/fuzz/artifacts/
# and the end of the harness's log is printed (fuzz/README.md says how to replay it).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-fuzz}
secs=${2:-20}
CC=clang scripts/build.sh "$dir" -DSPLAT_FUZZ=ON -DSPLAT_WERROR=ON
out=$dir/fuzz
# the harnesses' scratch folders go here (a crash leaves its folder behind)
TMPDIR=$(cd "$out" && pwd)/tmp
export TMPDIR
rm -rf "$TMPDIR"
mkdir -p "$out/artifacts" "$out/logs" "$TMPDIR"
start=$SECONDS
n=0
for bin in "$out"/fuzz_*; do
  h=${bin##*/fuzz_}
  [ "$h" != seeds ] && [ -x "$bin" ] || continue
  mkdir -p "$out/corpus/$h"
  log=$out/logs/$h.log
  case $h in nerf | transforms | cameras | sog_folder) dict=fuzz/json.dict ;; *) dict=fuzz/$h.dict ;; esac
  opts=(-max_total_time="$secs" -timeout=10 -print_final_stats=1 -artifact_prefix="$out/artifacts/$h-")
  [ -f "$dict" ] && opts+=(-dict="$dict")
  if ! "$bin" "${opts[@]}" "$out/corpus/$h" "$out/seeds/$h" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz: fuzz_$h failed; the input is in $out/artifacts/, the log $log" >&2
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "fuzz: fuzz_$h: ${runs:-?} runs in $secs s, corpus $(ls "$out/corpus/$h" | wc -l) files"
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "fuzz: no harness built in $out" >&2; exit 1; }
echo "fuzz: $n harnesses, $secs s each, $((SECONDS - start)) s in all"
