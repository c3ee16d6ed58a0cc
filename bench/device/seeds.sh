#!/usr/bin/env bash
# Trains one dataset for several seeds, PARALLEL runs at a time on one GPU, and prints one line a
# run from its metrics.json:
#   RES TAG SEED psnr ssim gaussians train_s peak_GB [view PSNRs...]
# The runs' folders go to $OUT/TAG-SEED (metrics.json, the log; no renders). A run is not started
# when it could not end before the deadline: DEADLINE seconds after $T0 (bench/device/env.sh)
# minus EST, the seconds a run is expected to take, when both are given.
#
#   bench/device/seeds.sh TAG DATA STEPS PARALLEL SEED... [-- splatc train options]
#   env: GPU (Vulkan device, default 0), DEADLINE, EST, BIN (the splatc binary, default
#   build/splatc; it runs with env.sh's SPLATC_LIBS first on LD_LIBRARY_PATH)
set -uo pipefail
if [ $# -lt 5 ]; then
  echo "usage: $0 TAG DATA STEPS PARALLEL SEED... [-- splatc train options]" >&2
  exit 2
fi
tag=$1 data=$2 steps=$3 par=$4
shift 4
seeds=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do seeds+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
out=${OUT:-/tmp/seeds-out}
bin=${BIN:-build/splatc}
libs=${SPLATC_LIBS:-}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$out"
one() {
  local seed=$1 dir="$out/$tag-$1"
  if [ -n "${DEADLINE:-}" ] && [ -n "${EST:-}" ] && [ $(( $(date +%s) - ${T0:-0} + EST )) -gt "$DEADLINE" ]; then
    echo "SKIP $tag $seed: no time left for a run of about $EST s"
    return
  fi
  if ! LD_LIBRARY_PATH=$libs "$bin" train "$data" -o "$dir" --eval --steps "$steps" --seed "$seed" --no-renders -q --device "${GPU:-0}" "${@:2}" \
      >"$dir.log" 2>&1; then
    echo "FAIL $tag $seed: $(tail -n 1 "$dir.log")"
    return
  fi
  python3 - "$tag" "$seed" "$dir/metrics.json" <<'PY'
import json, sys
tag, seed, path = sys.argv[1:]
m = json.load(open(path))
views = " ".join(f"{v['psnr']:.3f}" for v in m.get("views", []))
print(f"RES {tag} {seed} {m['psnr']:.3f} {m['ssim']:.4f} {m['n_gaussians']} {m['train_seconds']:.1f} "
      f"{m['peak_gpu_memory_bytes'] / 1e9:.2f} {views}")
PY
}
running=0
for s in "${seeds[@]}"; do
  one "$s" "$@" &
  running=$((running + 1))
  if [ "$running" -ge "$par" ]; then wait -n; running=$((running - 1)); fi
done
wait
