#!/usr/bin/env bash
# Installs the reference tool the interop tests (tests/test_interop.c) compare splatc with:
# @playcanvas/splat-transform 2.7.1 from the npm registry, into $1 (the build folder's npm/), once.
# It needs node and npm (scripts/deps.sh --test installs them). Without the registry it fails, and
# says so: the interop tests are part of the suite and never skip.
set -euo pipefail
dir=$1
version=2.7.1
bin=$dir/node_modules/.bin/splat-transform
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "v$version"; then
  echo "interop: splat-transform $version is installed in $dir"
  exit 0
fi
for tool in node npm; do
  command -v $tool >/dev/null || { echo "interop: $tool is missing (scripts/deps.sh --test installs it)" >&2; exit 1; }
done
mkdir -p "$dir"
if ! timeout 600 npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
     "@playcanvas/splat-transform@$version" >"$dir/install.log" 2>&1; then
  tail -n 20 "$dir/install.log" >&2
  echo "interop: could not install @playcanvas/splat-transform@$version from the npm registry (is it" \
       "reachable?); the interop tests need it" >&2
  exit 1
fi
"$bin" --version
