#!/bin/bash
# Benchmark of shape inference and simplify (issue 15): sg_graph_infer_shapes
# alone against onnx.shape_inference.infer_shapes (strict) on the same
# models in the same run, at 10k and 100k nodes (the ratio shows it is
# linear); `surgeon optimize --pass infer-shapes` end to end; and simplify
# on the 1.5 GB external-data model, whose peak memory shows the weights are
# not read (the output beside the model keeps pointing at weights.bin).
# Not a test. Usage: tools/bench/bench_shapes.sh [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-/tmp/surgeon-bench}
reps=${REPS:-5}
mkdir -p "$work/out"
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DSG_BUILD_TESTS=OFF >/dev/null
cmake --build build-rel -j"$(nproc)" >/dev/null
S=build-rel/surgeon
py=/usr/bin/python3
$py tools/bench/gen_models.py "$work" --nodes 10000 100000 >/dev/null
best() { sed -E 's/.*best ([0-9.]+) s.*/\1/'; }

echo "== shape inference alone (best of $reps)"
for m in chain_10000.onnx chain_100000.onnx; do
    a=$(build-rel/sg_bench_shapes "$work/$m" "$reps")
    b=$($py tools/bench/pyonnx_shapes.py "$work/$m" "$reps")
    echo "$a"
    echo "$b"
    awk -v x="$(echo "$a" | best)" -v y="$(echo "$b" | best)" \
        'BEGIN { printf "  surgeon is %.1fx faster\n", y / x }'
done

echo
echo "== surgeon optimize --pass infer-shapes (load, infer, value_info, save)"
/usr/bin/time -f "  %e s, %M KB peak" $S optimize "$work/chain_100000.onnx" -o "$work/out/shaped.onnx" -q \
    --pass infer-shapes

echo
echo "== simplify on the 1.5 GB external-data model (output beside it)"
du -sh "$work/ext/weights.bin" | awk '{print "  weights: " $1}'
/usr/bin/time -f "  %e s, %M KB peak" $S optimize "$work/ext/model.onnx" -o "$work/ext/simplified.onnx" -q \
    --pass simplify
rm -f "$work/ext/simplified.onnx"
