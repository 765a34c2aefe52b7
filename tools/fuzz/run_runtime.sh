#!/bin/bash
# Build the runtime fuzzer with clang (libFuzzer + ASan + UBSan) and run it.
# Usage: tools/fuzz/run_runtime.sh [SECONDS] [extra libFuzzer args]   (default 1800 s)
# The seed corpus is every model of Debian's libonnx-testdata, the tests'
# models (models/make_models.py --tests, tests/runtime_cases.py: made with
# python3-onnx) and the fuzz regressions; findings land in
# build-fuzz/runtime-findings. One worker (the machine may be shared): add
# -jobs=N -workers=N for more. Run by hand, not in CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-1800}
shift || true
out=build-fuzz
corpus=$out/runtime-corpus
mkdir -p "$out/gen" "$corpus" "$out/runtime-findings"
protoc-c --c_out="$out/gen" -I/usr/include/onnx /usr/include/onnx/onnx.proto
blas_dir=$(pkg-config --variable=libdir openblas)
# One file per compiler run (clang does not take -o with several sources
# and -c): objects in build-fuzz/obj, rebuilt when their source changes.
mkdir -p "$out/obj"
objs=()
for src in graph/*.c runtime/*.c runtime/kernels/*.c tools/fuzz/fuzz_runtime.c "$out/gen/onnx.pb-c.c"; do
    obj=$out/obj/$(echo "$src" | tr / _).o
    if [ ! -e "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find graph runtime -name '*.h' -newer "$obj" | head -1)" ]; then
        clang -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer-no-link,address,undefined \
            -fno-sanitize-recover=all -fno-trapping-math -Igraph -Iruntime -I"$out/gen" \
            $(pkg-config --cflags libprotobuf-c openblas) \
            -DSG_OPENBLAS_PATH="\"$blas_dir/libopenblas.so.0\"" -c "$src" -o "$obj"
    fi
    objs+=("$obj")
done
clang -fsanitize=fuzzer,address,undefined "${objs[@]}" \
    $(pkg-config --libs libprotobuf-c zlib) -ldl -lm -lpthread -o "$out/fuzz_runtime"
if [ -z "$(ls -A "$corpus")" ]; then
    /usr/bin/python3 models/make_models.py --tests "$out/seeds/models" >/dev/null
    /usr/bin/python3 tests/runtime_cases.py "$out/seeds/cases" >/dev/null
    i=0
    for f in /usr/share/libonnx-testdata/data/*/*/model.onnx models/*.onnx \
             "$out"/seeds/models/*.onnx "$out"/seeds/cases/*.onnx \
             tests/io/fuzz_regressions/*.onnx tests/io/fuzz_regressions/runtime/*; do
        [ -f "$f" ] || continue
        cp "$f" "$corpus/seed_$i.onnx"
        i=$((i + 1))
    done
fi
# Huge requests must fail as the runtime's errors, not as the allocator's.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1}
exec "$out/fuzz_runtime" "$corpus" -artifact_prefix="$out/runtime-findings/" \
    -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -timeout=20 -print_final_stats=1 "$@"
