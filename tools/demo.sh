#!/bin/bash
# Install what is missing, build surgeon and run the demo: the seed's Exp
# overflow diagnosed and fixed end to end (tools/demo_loop.sh). README's
# first command. Exits non-zero when any step does not behave as expected.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
exec bash tools/demo_loop.sh build/surgeon build/demo
