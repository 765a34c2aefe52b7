#!/bin/bash
# Runtime benchmark (issue 4, part 6): surgeon's runtime against ONNX Runtime
# (the npm package onnxruntime-node) and torch on resnet50, mobilenet_v2 and
# vit_b_16 at batch 1, 1 and 2 threads, in one run, printing ratios; then the
# cost of --dump all and the peak memory. Not a test: timings on a shared
# machine are not pass/fail (the best of several interleaved rounds is kept).
# Usage: tools/bench/bench_runtime.sh [WORKDIR]   (env: ROUNDS, REPS, NETS, THREADS)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mkdir -p "${1:-/tmp/surgeon-bench-runtime}" && cd "${1:-/tmp/surgeon-bench-runtime}" && pwd)
nets=${NETS:-resnet50,mobilenet_v2,vit_b_16}

bash tools/install-deps.sh --nets
command -v node >/dev/null && command -v npm >/dev/null ||
    { echo "bench_runtime.sh needs node and npm (for onnxruntime-node)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench_runtime.sh needs GNU time (apt-get install time)" >&2; exit 1; }

cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DSG_BUILD_TESTS=OFF >/dev/null
cmake --build build-rel -j"$(nproc)" >/dev/null

echo "exporting the networks into $work/nets (first run only)"
/usr/bin/python3 tools/export_nets.py "$work/nets" --nets "$nets" --opsets 17

# onnxruntime-node from the npm registry, into the work folder only: no
# install scripts (they would download more), the prebuilt linux-x64 binary
# ships inside the package.
ort_version=1.30.0
if [ ! -f "$work/ort/node_modules/onnxruntime-node/package.json" ] ||
   ! grep -q "\"version\": \"$ort_version\"" "$work/ort/node_modules/onnxruntime-node/package.json"; then
    echo "installing onnxruntime-node $ort_version into $work/ort"
    mkdir -p "$work/ort"
    (cd "$work/ort" && echo '{"private": true}' >package.json &&
     ONNXRUNTIME_NODE_INSTALL=skip npm install --ignore-scripts --no-audit --no-fund --silent \
         "onnxruntime-node@$ort_version")
fi

# OPENBLAS_CORETYPE forces one OpenBLAS kernel family whatever the CPU
# (some environments set it to Haswell, AVX2 only); surgeon and torch then
# run slower than this machine allows. It is dropped here unless
# KEEP_BLAS_ENV=1; the report names the kernels in use either way.
if [ -z "${KEEP_BLAS_ENV:-}" ] && [ -n "${OPENBLAS_CORETYPE:-}" ]; then
    echo "note: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE unset for this run (KEEP_BLAS_ENV=1 keeps it)"
    unset OPENBLAS_CORETYPE
fi

exec /usr/bin/python3 tools/bench/bench_runtime.py --work "$work" --bin build-rel \
    --ort "$work/ort/node_modules" --nets "$nets" --threads "${THREADS:-1,2}" \
    --rounds "${ROUNDS:-3}" --reps "${REPS:-10}"
