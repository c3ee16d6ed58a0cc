#!/usr/bin/env bash
# Readies this checkout for training runs on the device machine (docs/PERFORMANCE.md's runs):
# ../shared/tools/device-prep (the Vulkan loader, the dispatch libraries the NVIDIA driver needs,
# cJSON, libpng, libjpeg into .gl/), then the rest of what splatc links that the device lacks
# (libwebsockets, libwebp, zstd and theirs) into .gl/extra/, apart: device-prep's prefix unpacks
# .gl/*.deb into the device's /, and these go to a private folder (bench/device/env.sh) so that
# other programs there (the gsplat kit's torch) keep their own.
#
#   bench/device/prep.sh          then carry [".gl", "build", ...] and start each command with
#                                 `. bench/device/env.sh && ...`
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
../shared/tools/device-prep >/dev/null
mkdir -p .gl/extra
o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/device-prep-lists"
extra="libwebsockets17 libwebp7 libzstd1 libcap2 libssl3 libuv1 libev4"
if ! ls .gl/extra/libwebsockets17_*.deb >/dev/null 2>&1; then
  (cd .gl/extra && apt-get $o download $extra >/dev/null 2>&1)
  ls .gl/extra/libwebsockets17_*.deb >/dev/null
fi
echo "ready: .gl/ $(ls .gl/*.deb | wc -l) packages, .gl/extra/ $(ls .gl/extra | wc -l); $(du -sh .gl | cut -f1) to carry"
