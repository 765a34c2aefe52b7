#!/bin/bash
# Build the loader fuzzer with clang (libFuzzer + ASan + UBSan) and run it.
# Usage: tools/fuzz/run.sh [SECONDS] [extra libFuzzer args]   (default 1800 s)
# The seed corpus is every model.onnx of Debian's libonnx-testdata; findings
# land in build-fuzz/findings. Run by hand, not in CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-1800}
shift || true
out=build-fuzz
mkdir -p "$out/gen" "$out/corpus" "$out/findings"
protoc-c --c_out="$out/gen" -I/usr/include/onnx /usr/include/onnx/onnx.proto
srcs=$(ls graph/*.c)
clang -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=all -Igraph -I"$out/gen" \
    tools/fuzz/fuzz_load.c $srcs "$out/gen/onnx.pb-c.c" \
    $(pkg-config --cflags --libs libprotobuf-c) -lm -lpthread -o "$out/fuzz_load"
if [ -z "$(ls -A "$out/corpus")" ]; then
    i=0
    for f in /usr/share/libonnx-testdata/data/*/*/model.onnx; do
        cp "$f" "$out/corpus/seed_$i.onnx"
        i=$((i + 1))
    done
fi
exec "$out/fuzz_load" "$out/corpus" -artifact_prefix="$out/findings/" \
    -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 "$@"
