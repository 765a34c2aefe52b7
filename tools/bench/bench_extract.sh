#!/bin/bash
# Benchmark of surgeon extract (issue 14, part 9) against
# onnx.utils.extract_model, in one run: the 100,000-node chain (10 nodes and
# half of it) and the 1.5 GB external-data model (its last two of 24
# weights, and half). Prints times, ratios and peak memory. Not a test.
# Usage: tools/bench/bench_extract.sh [WORKDIR]   (needs ~3.5 GB free; env REPS)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-/tmp/surgeon-bench}
reps=${REPS:-3}
mkdir -p "$work/xout"
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DSG_BUILD_TESTS=OFF >/dev/null
cmake --build build-rel -j"$(nproc)" >/dev/null
S=build-rel/surgeon
py=/usr/bin/python3
echo "generating models in $work (first run only)"
$py tools/bench/gen_models.py "$work" --nodes 100000
P=tools/bench/pair.py
clean="rm -rf $work/xout; mkdir -p $work/xout"
t() { echo "$1" | awk '{print $(NF-3)}'; }
m() { echo "$1" | awk '{print $(NF-1)}'; }
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.1f", y / x }'; }

target() { # peak_MB file: the issue's memory target, under 2x the file's size
    awk -v m="$1" -v b="$(stat -c %s "$2")" 'BEGIN {
        t = 2 * b / 1048576; printf "  memory target (under 2x the file, %.1f MB): %s\n", t, m < t ? "met" : "NOT met" }'
}

pair() { # label model inputs outputs reps
    local label=$1 model=$2 ins=$3 outs=$4 n=$5
    local r
    r=$($py $P "surgeon extract" "onnx extract_model" "$n" --before "$clean" \
        -- $S extract "$model" -o "$work/xout/s.onnx" --inputs "$ins" --outputs "$outs" \
        -- $py tools/bench/pyonnx_extract.py "$model" "$work/xout/p.onnx" "$ins" "$outs")
    echo "$r"
    local a b
    a=$(echo "$r" | sed -n 1p)
    b=$(echo "$r" | sed -n 2p)
    echo "  $label: surgeon $(ratio "$(t "$a")" "$(t "$b")")x faster; peak $(m "$a") MB (python $(m "$b") MB)"
    target "$(m "$a")" "$model"
}

# surgeon alone (best of n, and the loaded path for comparison), python
# once under a time limit: onnx.utils.extract_model on half the chain ran
# for over 19 minutes here.
alone() { # label model inputs outputs reps
    local label=$1 model=$2 ins=$3 outs=$4 n=$5 a
    a=$($py tools/bench/measure.py "surgeon extract" "$n" --before "$clean" \
        -- $S extract "$model" -o "$work/xout/s.onnx" --inputs "$ins" --outputs "$outs")
    echo "$a"
    $py tools/bench/measure.py "surgeon extract --in-memory" "$n" --before "$clean" \
        -- $S extract "$model" -o "$work/xout/s.onnx" --inputs "$ins" --outputs "$outs" --in-memory
    local limit=${PY_LIMIT:-300} t0 t1
    t0=$(date +%s.%N)
    if timeout "$limit" $py tools/bench/pyonnx_extract.py "$model" "$work/xout/p.onnx" "$ins" "$outs" \
        >/dev/null 2>&1; then
        t1=$(date +%s.%N)
        echo "  onnx extract_model: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
    else
        echo "  onnx extract_model: unfinished after $limit s"
    fi
    target "$(m "$a")" "$model"
}

chain=$work/chain_100000.onnx
echo
echo "== 100,000-node chain ($(du -h "$chain" | cut -f1))"
pair "10 nodes" "$chain" t49990 t50000 "$reps"
$py tools/bench/measure.py "surgeon extract --in-memory" "$reps" --before "$clean" \
    -- $S extract "$chain" -o "$work/xout/s.onnx" --inputs t49990 --outputs t50000 --in-memory
echo "-- half (50,000 nodes)"
alone "half" "$chain" t49999 t99999 "$reps"

ext=$work/ext/model.onnx
echo
echo "== 1.5 GB external-data model (output beside it: weights referenced, not copied)"
clean="rm -f $work/ext/cut_s.onnx $work/ext/cut_p.onnx* $work/ext/*.onnx.data"
r=$($py $P "surgeon extract" "onnx extract_model" 1 --before "$clean" \
    -- $S extract "$ext" -o "$work/ext/cut_s.onnx" --inputs s21 --outputs s23 \
    -- $py tools/bench/pyonnx_extract.py "$ext" "$work/ext/cut_p.onnx" s21 s23)
echo "$r"
a=$(echo "$r" | sed -n 1p)
b=$(echo "$r" | sed -n 2p)
echo "  last 2 of 24 weights: surgeon $(ratio "$(t "$a")" "$(t "$b")")x faster; peak $(m "$a") MB (python $(m "$b") MB)"
# (the pair's --before removed surgeon's output before python's run)
$S extract "$ext" -o "$work/ext/cut_s.onnx" --inputs s21 --outputs s23 >/dev/null
echo "  surgeon's output: $(du -h "$work/ext/cut_s.onnx" | cut -f1) (references weights.bin)"
eval "$clean"
r=$($py tools/bench/measure.py "surgeon extract, copied to another folder" 1 --before "$clean" \
    -- $S extract "$ext" -o "$work/xout/half.onnx" --inputs s11 --outputs s23)
echo "$r"
echo "  its data file: $(du -h "$work/xout/half.onnx.data" | cut -f1) (12 of 24 weights)"
eval "$clean"
rm -rf "$work/xout"
