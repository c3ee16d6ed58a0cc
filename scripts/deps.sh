#!/usr/bin/env bash
# Installs what splatc needs to build and run on Debian/Ubuntu (only what is missing). --test adds
# what the suite needs besides: the real tools it checks against (COLMAP, for
# io_distortion_vs_colmap; a headless Chromium for the viewer's view_browser_* tests; node and npm, which install splat-transform for the interop_* tests;
# ffmpeg, for cli_orbit_video's video: on bookworm 77 packages, 50 MiB to download, 146 MiB
# installed), clang with libFuzzer's runtime for the fuzz build (fuzz/), numpy for the Python
# module's tests (python_*, run with Debian's /usr/bin/python3) and dpkg-dev for dpkg-shlibdeps,
# which `cpack -G DEB` runs (install_deb).
set -euo pipefail
pkgs=(cmake make gcc pkg-config glslc libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers
      libpng-dev libjpeg-dev libcjson-dev zlib1g-dev libwebp-dev libzstd-dev
      libwebsockets-dev)
test_tools=0
[ "${1:-}" = "--test" ] && test_tools=1 && pkgs+=(colmap ffmpeg clang nodejs python3-numpy dpkg-dev)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
updated=0

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

install_missing() {
  local missing=() p
  for p in "$@"; do
    installed "$p" || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "installing: ${missing[*]}"
  if [ "$updated" -eq 0 ]; then
    $sudo apt-get update -qq
    updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install_missing "${pkgs[@]}"

[ "$test_tools" -eq 1 ] || exit 0
# npm: Debian's package, unless the nodejs installed brings its own (NodeSource's does, and
# conflicts with Debian's npm).
command -v npm >/dev/null || install_missing npm
# libFuzzer's runtime (libclang_rt.fuzzer) comes apart from clang on Debian, named after clang's
# major version: libclang-rt-14-dev on bookworm. Where no such package exists (older releases
# ship it in libclang-common-N-dev, which clang depends on), there is nothing to add.
rt=libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev
if ! installed "$rt"; then
  if ! apt-cache show "$rt" >/dev/null 2>&1 && [ "$updated" -eq 0 ]; then
    $sudo apt-get update -qq
    updated=1
  fi
  if apt-cache show "$rt" >/dev/null 2>&1; then install_missing "$rt"; fi
fi
# The browser of the viewer's tests: Debian's headless-only build where the release has one
# (bookworm's security updates do), else the full chromium.
if ! installed chromium-headless-shell && ! installed chromium; then
  if [ "$updated" -eq 0 ]; then
    $sudo apt-get update -qq
    updated=1
  fi
  if apt-cache show chromium-headless-shell >/dev/null 2>&1; then install_missing chromium-headless-shell
  else install_missing chromium; fi
fi
