#!/bin/bash
# Install what is missing, build surgeon and run the demo. README's first command.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
echo
echo "== surgeon inspect models/exp_overflow.onnx"
./build/surgeon inspect models/exp_overflow.onnx --nodes
