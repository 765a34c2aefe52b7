#!/bin/bash
# Install what is missing, build with AddressSanitizer + UBSan, run every test.
# Exits non-zero when any test fails. This is README's test command and what
# .ci/run calls.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh --test --nets
cmake -S . -B build-test -DSG_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSG_BUILD_TESTS=ON
cmake --build build-test -j"$(nproc)"
ctest --test-dir build-test --output-on-failure -j"$(nproc)"
