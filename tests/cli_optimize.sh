#!/bin/bash
# End-to-end tests of `surgeon passes` and `surgeon optimize`: batch folders,
# parallel workers, failure isolation, evaluate mode, YAML errors, exit codes,
# and onnx.checker on every model written.
# Usage: cli_optimize.sh SURGEON SOURCE_DIR TEST_MODELS_DIR
set -u
S=$1
SRC=$2
MODELS=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
passed=0
check() { # check NAME CONDITION...
    local name=$1
    shift
    if "$@"; then passed=$((passed + 1)); else echo "FAIL: $name"; fails=$((fails + 1)); fi
}
has() { grep -q -- "$2" "$1"; }
not_has() { ! grep -q -- "$2" "$1"; }

# passes: every pass listed, none pending
"$S" passes > "$T/passes.txt"
check "passes exit 0" test $? -eq 0
for p in insert-clip cast-around set-input-shape set-batch remove-identity eliminate-dead \
         merge-casts unique-names toposort rename to-fp16 fold-constants fold-bn infer-shapes; do
    check "passes lists $p" has "$T/passes.txt" "^$p "
done
check "nothing pending" not_has "$T/passes.txt" "pending"
check "fold-constants options" has "$T/passes.txt" "max_bytes"
"$S" passes nope > /dev/null 2>&1
check "passes unknown -> 2" test $? -eq 2

# single model to a file
"$S" optimize "$MODELS/exp_opset13.onnx" -o "$T/one.onnx" --pass insert-clip > "$T/one.txt"
check "single exit 0" test $? -eq 0
check "single written" test -s "$T/one.onnx"
check "single report" has "$T/one.txt" "Clip inserted: 1"
check "summary line" has "$T/one.txt" "1 model: 1 ok, 0 failed"

# a folder, recursive, mirrored, two workers, one broken model in the batch
mkdir -p "$T/in/sub/deeper" "$T/in/other"
cp "$MODELS/exp_opset13.onnx" "$T/in/a.onnx"
cp "$MODELS/if_exp.onnx" "$T/in/sub/b.onnx"
cp "$MODELS/exp_overflow.onnx" "$T/in/sub/deeper/c.onnx"
cp "$MODELS/no_exp.onnx" "$T/in/other/d.onnx"
echo "not a model" > "$T/in/sub/broken.onnx"
echo "ignored" > "$T/in/readme.txt"
"$S" optimize "$T/in" -r -j 2 -o "$T/out" -c "$SRC/configs/fix-fp16-overflow.yaml" \
    > "$T/batch.txt" 2> "$T/batch.err"
check "batch with a broken model -> 1" test $? -eq 1
check "mirrored a" test -s "$T/out/a.onnx"
check "mirrored sub/b" test -s "$T/out/sub/b.onnx"
check "mirrored sub/deeper/c" test -s "$T/out/sub/deeper/c.onnx"
check "mirrored other/d (0 changes)" test -s "$T/out/other/d.onnx"
check "broken not written" test ! -e "$T/out/sub/broken.onnx"
check "no temp files left" test -z "$(find "$T/out" -name '*.tmp*' -o -name '.*' -type f)"
check "broken reported" has "$T/batch.err" "sub/broken.onnx"
check "summary counts" has "$T/batch.txt" "5 models: 4 ok, 1 failed"
check "summary FAILED row" has "$T/batch.txt" "sub/broken.onnx  *FAILED"
check "zero changes is ok" has "$T/batch.txt" "other/d.onnx  *ok  *0 "
check "no progress line off a tty" test -z "$(grep -c $'\r' "$T/batch.txt" | grep -v '^0$')"

# same output whatever -j (order of results is the input order)
"$S" optimize "$T/in" -r -j 1 -o "$T/out1" -c "$SRC/configs/fix-fp16-overflow.yaml" -q \
    > "$T/j1.txt" 2>&1
"$S" optimize "$T/in" -r -j 2 -o "$T/out2" -c "$SRC/configs/fix-fp16-overflow.yaml" -q \
    > "$T/j2.txt" 2>&1
check "-j 1 and -j 2 write the same files" cmp -s "$T/out1/sub/b.onnx" "$T/out2/sub/b.onnx"
check "-j 1 and -j 2 same models listed" \
    test "$(awk '{print $1, $2, $3}' "$T/j1.txt")" = "$(awk '{print $1, $2, $3}' "$T/j2.txt")"

# not recursive: only top-level models
"$S" optimize "$T/in" -o "$T/flat" --pass toposort -q > /dev/null 2>&1
check "non-recursive top level only" test -s "$T/flat/a.onnx" -a ! -e "$T/flat/sub"

# evaluate: nothing written, per-model report of would-be changes
"$S" optimize "$T/in/a.onnx" "$T/in/other/d.onnx" --evaluate -c "$SRC/configs/cleanup.yaml" \
    --pass insert-clip > "$T/eval.txt"
check "evaluate exit 0" test $? -eq 0
check "evaluate says would" has "$T/eval.txt" "1 change would be made"
check "evaluate lists the pass" has "$T/eval.txt" "insert-clip: 1 change"
check "evaluate wrote nothing" test -z "$(find "$T" -newer "$T/eval.txt" -name '*.onnx')"

# output folder not writable (a file is in the way): per-model failure, clear message
touch "$T/blocker"
"$S" optimize "$T/in/a.onnx" "$T/in/other/d.onnx" -o "$T/blocker/out" --pass toposort \
    > /dev/null 2> "$T/blocked.err"
check "unwritable output -> 1" test $? -eq 1
check "unwritable output message" has "$T/blocked.err" "cannot create folder"

# two inputs with the same name cannot share one output
"$S" optimize "$T/in/a.onnx" "$T/out/a.onnx" -o "$T/clash" --pass toposort 2> "$T/clash.err"
check "output clash -> 2" test $? -eq 2
check "output clash message" has "$T/clash.err" "would both be written"

# bad pipelines: exit 2 and a file:line:column
printf 'passes:\n  - insert-clip:\n      min: lots\n' > "$T/bad.yaml"
"$S" optimize "$T/in/a.onnx" -o "$T/x.onnx" -c "$T/bad.yaml" 2> "$T/bad.err"
check "bad yaml -> 2" test $? -eq 2
check "bad yaml line:column" has "$T/bad.err" "bad.yaml:3:12: insert-clip: option 'min'"
# the runtime passes end to end
"$S" optimize "$MODELS/fold_consts.onnx" -o "$T/folded.onnx" --pass fold-constants:shapes=true \
    --pass fold-bn -v > "$T/fold.txt"
check "fold exit 0" test $? -eq 0
check "fold report" has "$T/fold.txt" "folded: 6 (Gather_1 (Gather)"
check "fold not folded reason" has "$T/fold.txt" "not folded: random: 1 (Rand_13"
check "fold written" test -s "$T/folded.onnx"
"$S" optimize "$MODELS/fold_bn.onnx" -o "$T/bn.onnx" --pass fold-bn > "$T/bn.txt"
check "fold-bn exit 0" test $? -eq 0
check "fold-bn count" has "$T/bn.txt" "fold_bn.onnx  *ok  *31"
"$S" optimize "$T/in/a.onnx" -o "$T/x.onnx" 2> /dev/null
check "no passes -> 2" test $? -eq 2
check "nothing half-written" test ! -e "$T/x.onnx"
"$S" optimize "$T/in/a.onnx" -o "$T/x.onnx" --pass "insert-clip:min=3,max=1" \
    > /dev/null 2> "$T/range.err"
check "option out of range at run time -> 1" test $? -eq 1
check "range message" has "$T/range.err" "min (3) must be below max (1)"
check "failed model not written" test ! -e "$T/x.onnx"

# never overwrite the input
cp "$MODELS/exp_opset13.onnx" "$T/self.onnx"
"$S" optimize "$T/self.onnx" -o "$T/self.onnx" --pass insert-clip > /dev/null 2> "$T/self.err"
check "refuses to overwrite the input" test $? -eq 1
check "input unchanged" cmp -s "$T/self.onnx" "$MODELS/exp_opset13.onnx"

# every config runs on the demo model
for cfg in "$SRC"/configs/*.yaml; do
    "$S" optimize "$MODELS/exp_overflow.onnx" -o "$T/cfg/$(basename "$cfg" .yaml).onnx" \
        -c "$cfg" -q > /dev/null
    check "config $(basename "$cfg") runs" test $? -eq 0
done

# onnx.checker accepts every model written above
/usr/bin/python3 "$SRC/tests/check_outputs.py" "$T/out" "$T/cfg" "$T/flat" > "$T/checker.txt"
check "onnx.checker accepts the outputs" test $? -eq 0
cat "$T/checker.txt" | tail -1

echo "$passed passed, $fails failed"
test $fails -eq 0
