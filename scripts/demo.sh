#!/usr/bin/env bash
# The main job on a fresh machine: installs dependencies, builds, checks the GPU, writes the
# bundled demo scene (a COLMAP scene splatc renders itself) and trains on it with every 8th view
# held out. Outputs: build/demo-out/point_cloud.ply, metrics.json (held-out PSNR/SSIM), renders/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build
build/splatc info
build/splatc demo build/demo
build/splatc train build/demo -o build/demo-out --steps ${SPLAT_DEMO_STEPS:-1000} --eval "$@"
