#!/bin/bash
# Benchmark of the passes (issue 3): load + insert-clip + save against the
# same rewrite in python onnx, every pass at 10k and 100k nodes (the ratio
# shows whether it scales linearly), and batch mode -j 1 against -j 2.
# The two sides of each ratio run in alternation (pair.py). Not a test. Usage: tools/bench/bench_passes.sh [WORKDIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-/tmp/surgeon-bench}
reps=${REPS:-5} # best of 5: a run on this kind of VM can take 1.5x its best
# Times have four decimals: a ratio of times of a few milliseconds rounded
# to three would move by up to 20%.
mkdir -p "$work/out"
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DSG_BUILD_TESTS=OFF >/dev/null
cmake --build build-rel -j"$(nproc)" >/dev/null
S=build-rel/surgeon
py=/usr/bin/python3
/usr/bin/python3 tools/bench/gen_models.py "$work" --nodes 2000 10000 100000
P=tools/bench/pair.py # two commands timed in alternation: their ratio is what counts
# Before every timed run the outputs of earlier runs are moved aside (not
# replaced, not deleted) and written back: ext4 flushes a file replaced by
# rename, and when it makes a file it skips the inodes freed in the last
# minutes, reading their inode blocks (after 200 files were deleted, a
# fifth of a batch run went there). So every run meets the same state; the
# files set aside go at the end.
aside="$work/aside"
rm -rf "$aside" && mkdir -p "$aside"
fresh="for f in $work/out/*.onnx $work/out/*.data $work/batch_out; do [ -e \"\$f\" ] || continue; \
mv \"\$f\" \"$aside/\$(basename \"\$f\").\$(date +%s%N)\"; done; sync"
t() { echo "$1" | awk '{print $(NF-3)}'; }
line() { sed -n "${1}p" <<<"$2"; }
ratio() { awk -v x="$1" -v y="$2" 'BEGIN { printf "%.1f", y / x }'; }

echo "== load + insert Clip after every Exp + save"
for m in chain_100000.onnx ext/model.onnx; do
    [ -f "$work/$m" ] || continue
    mkdir -p "$work/out/$(dirname "$m")"
    ab=$($py $P "surgeon ($m)" "python onnx ($m)" $reps --before "$fresh" -- $S optimize "$work/$m" \
        -o "$work/out/s.onnx" -q --pass insert-clip:position=after \
        -- $py tools/bench/pyonnx_insert_clip.py "$work/$m" "$work/out/p.onnx")
    a=$(line 1 "$ab") b=$(line 2 "$ab")
    printf '%s\n%s\n' "$a" "$b"
    echo "  surgeon is $(ratio "$(t "$a")" "$(t "$b")")x faster"
done

echo
echo "== every pass at 10k and 100k nodes (time ratio; linear is ~10)"
printf '%-34s %9s %9s %7s\n' pass 10k 100k ratio
for p in insert-clip:position=after cast-around set-input-shape:shapes=x:4,16 set-batch:batch=8 \
         remove-identity eliminate-dead merge-casts unique-names toposort rename:prefix=p_ to-fp16 \
         fold-constants fold-bn; do
    ab=$($py $P "$p" "$p" $reps --before "$fresh" -- $S optimize "$work/chain_10000.onnx" \
        -o "$work/out/a.onnx" -q \
        --pass "$p" -- $S optimize "$work/chain_100000.onnx" -o "$work/out/b.onnx" -q --pass "$p")
    a=$(line 1 "$ab") b=$(line 2 "$ab")
    printf '%-34s %8.4fs %8.4fs %7s\n' "$p" "$(t "$a")" "$(t "$b")" "$(ratio "$(t "$a")" "$(t "$b")")"
done
# The runtime passes on models where they find work: half the nodes fold,
# every other node is a BatchNormalization to fold.
for pm in fold-constants:fold fold-bn:bn; do
    p=${pm%%:*} m=${pm##*:}
    ab=$($py $P "$p" "$p" $reps --before "$fresh" -- $S optimize "$work/${m}_10000.onnx" \
        -o "$work/out/a.onnx" -q \
        --pass "$p" -- $S optimize "$work/${m}_100000.onnx" -o "$work/out/b.onnx" -q --pass "$p")
    a=$(line 1 "$ab") b=$(line 2 "$ab")
    printf '%-34s %8.4fs %8.4fs %7s\n' "$p ($m)" "$(t "$a")" "$(t "$b")" "$(ratio "$(t "$a")" "$(t "$b")")"
done

echo
echo "== batch: 200 copies of a 2,000-node model, -j 1 against -j 2"
rm -rf "$work/batch" "$work/batch_out"
mkdir -p "$work/batch"
for i in $(seq 1 200); do cp "$work/chain_2000.onnx" "$work/batch/m$i.onnx"; done
# Each run writes a new output folder (see $fresh above).
ab=$($py $P "optimize -j 1" "optimize -j 2" $reps --before "$fresh" \
    -- $S optimize "$work/batch" -o "$work/batch_out" -q -j 1 --pass insert-clip:position=after \
    --pass eliminate-dead \
    -- $S optimize "$work/batch" -o "$work/batch_out" -q -j 2 --pass insert-clip:position=after \
    --pass eliminate-dead)
a=$(line 1 "$ab") b=$(line 2 "$ab")
printf '%s\n%s\n' "$a" "$b"
echo "  -j 2 is $(ratio "$(t "$b")" "$(t "$a")")x faster than -j 1"
rm -rf "$work/batch_out" "$work"/out/* "$aside"
