#!/usr/bin/env bash
# Installs what splatc needs to build and run on Debian/Ubuntu (only what is missing).
# --test adds the real tools the suite checks against: COLMAP (io_distortion_vs_colmap).
set -euo pipefail
pkgs=(cmake make gcc pkg-config glslc libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers
      libpng-dev libjpeg-dev libcjson-dev zlib1g-dev)
[ "${1:-}" = "--test" ] && pkgs+=(colmap)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
