#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs dependencies, builds with warnings as errors,
# runs every test with the Vulkan validation layers (synchronization validation included), then
# builds again with AddressSanitizer + UndefinedBehaviorSanitizer and runs the suite once more;
# then builds the libFuzzer harnesses of fuzz/ with clang and runs each for 20 s (scripts/fuzz.sh:
# a crash, leak or broken reader contract fails).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
jobs=$(nproc)
scripts/build.sh build -DSPLAT_WERROR=ON
ctest --test-dir build --output-on-failure -j"$jobs"
scripts/build.sh build-asan -DSPLAT_WERROR=ON -DSPLAT_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
scripts/fuzz.sh build-fuzz 20
