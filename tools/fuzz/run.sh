#!/bin/bash
# Build a libFuzzer harness of tools/fuzz (clang, libFuzzer + ASan + UBSan,
# through CMake's -DSG_FUZZ=ON in build-fuzz/) and run it.
# Usage: tools/fuzz/run.sh [NAME] [SECONDS] [extra libFuzzer args]
#   NAME: load (default), tensorfile, json, pipeline, precision, ... (the
#   fuzz_NAME.c files); SECONDS default 1800. A bare number as the first
#   argument is the time for the loader, as before.
# Corpus: build-fuzz/corpus/NAME, seeded from tools/fuzz/seeds/NAME (the
# loader: every model.onnx of Debian's libonnx-testdata). Findings land in
# build-fuzz/findings/NAME; put a fixed one in tests/io/fuzz_regressions/NAME/
# (the loader's: that folder itself), where the tests replay it.
# Run by hand, not in CI; one worker (the machine is shared).
set -euo pipefail
cd "$(dirname "$0")/../.."
name=load
if [ $# -gt 0 ] && ! [[ $1 =~ ^[0-9]+$ ]]; then
    name=$1
    shift
fi
secs=${1:-1800}
shift || true
[ -f "tools/fuzz/fuzz_$name.c" ] || { echo "no harness tools/fuzz/fuzz_$name.c" >&2; exit 2; }
out=build-fuzz
cmake -S . -B "$out" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSG_FUZZ=ON -DSG_BUILD_TESTS=OFF >/dev/null
cmake --build "$out" --target "sg_fuzz_$name" -j2 >/dev/null
corpus=$out/corpus/$name
mkdir -p "$corpus" "$out/findings/$name"
if [ -z "$(ls -A "$corpus")" ]; then
    if [ "$name" = load ]; then
        i=0
        for f in /usr/share/libonnx-testdata/data/*/*/model.onnx; do
            cp "$f" "$corpus/seed_$i.onnx"
            i=$((i + 1))
        done
    elif [ -d "tools/fuzz/seeds/$name" ]; then
        cp "tools/fuzz/seeds/$name"/* "$corpus"/
    fi
fi
max_len=65536
[ "$name" = load ] || max_len=16384
exec "$out/sg_fuzz_$name" "$corpus" -artifact_prefix="$out/findings/$name/" \
    -max_total_time="$secs" -max_len="$max_len" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 "$@"
