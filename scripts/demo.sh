#!/usr/bin/env bash
# The main job on a fresh machine: installs dependencies, builds, and runs splatc.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build
build/splatc info
