#!/bin/bash
# Benchmark of load + save (issue 2): surgeon convert against python onnx
# load+save and against cp, in one run, printing ratios. Not a test.
# Usage: tools/bench/bench_io.sh [WORKDIR]   (needs ~5 GB free)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-/tmp/surgeon-bench}
reps=${REPS:-3}
mkdir -p "$work/out" "$work/ext_out"
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DSG_BUILD_TESTS=OFF >/dev/null
cmake --build build-rel -j"$(nproc)" >/dev/null
S=build-rel/surgeon
echo "generating models in $work (first run only)"
/usr/bin/python3 tools/bench/gen_models.py "$work" --nodes 10000 100000
M=tools/bench/measure.py
py=/usr/bin/python3
drop() { sync; }

row() { # label reps cmd...
    /usr/bin/python3 $M "$@"
}

echo
echo "== 100,000-node model ($(du -h "$work/chain_100000.onnx" | cut -f1))"
a=$(row "surgeon convert" $reps -- $S convert "$work/chain_100000.onnx" -o "$work/out/c.onnx")
b=$(row "python onnx load+save" $reps -- $py tools/bench/pyonnx_roundtrip.py "$work/chain_100000.onnx" "$work/out/p.onnx")
c=$(row "cp" $reps -- cp "$work/chain_100000.onnx" "$work/out/cp.onnx")
printf '%s\n%s\n%s\n' "$a" "$b" "$c"
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.1f", y / x }'; }
t() { echo "$1" | awk '{print $(NF-3)}'; }
m() { echo "$1" | awk '{print $(NF-1)}'; }
echo "  surgeon is $(ratio "$(t "$a")" "$(t "$b")")x faster than python; $(ratio "$(t "$c")" "$(t "$a")")x the time of cp"

echo
echo "== 300 MB inline model"
size_mb=$(du -m "$work/inline.onnx" | cut -f1)
a=$(row "surgeon convert" $reps -- $S convert "$work/inline.onnx" -o "$work/out/i.onnx")
b=$(row "python onnx load+save" $reps -- $py tools/bench/pyonnx_roundtrip.py "$work/inline.onnx" "$work/out/pi.onnx")
c=$(row "cp" $reps -- cp "$work/inline.onnx" "$work/out/icp.onnx")
printf '%s\n%s\n%s\n' "$a" "$b" "$c"
echo "  surgeon: $(ratio "$(t "$c")" "$(t "$a")")x the time of cp, $(ratio "$(t "$a")" "$(t "$b")")x faster than python;" \
     "peak memory $(awk -v m="$(m "$a")" -v s="$size_mb" 'BEGIN{printf "%.2f", m/s}')x the file (python $(awk -v m="$(m "$b")" -v s="$size_mb" 'BEGIN{printf "%.2f", m/s}')x)"

echo
echo "== 1.5 GB external-data model"
a=$(row "surgeon convert (data kept in place)" $reps -- $S convert "$work/ext/model.onnx" -o "$work/ext/same.onnx")
a2=$(row "surgeon convert (data copied elsewhere)" 1 -- $S convert "$work/ext/model.onnx" -o "$work/ext_out/m.onnx")
b=$(row "python onnx load+save" 1 -- $py tools/bench/pyonnx_roundtrip.py "$work/ext/model.onnx" "$work/ext_out/p.onnx")
c=$(row "cp (model + data)" 1 -- cp "$work/ext/model.onnx" "$work/ext/weights.bin" "$work/ext_out/")
printf '%s\n%s\n%s\n%s\n' "$a" "$a2" "$b" "$c"
echo "  in place: $(ratio "$(t "$a")" "$(t "$b")")x faster than python, peak $(m "$a") MB (python $(m "$b") MB)"
echo "  copying:  $(ratio "$(t "$c")" "$(t "$a2")")x the time of cp"
rm -f "$work"/out/* "$work"/ext_out/* "$work/ext/same.onnx"
