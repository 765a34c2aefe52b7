#!/bin/bash
# demo_loop.sh [SURGEON [WORK_DIR]] - the diagnose-and-fix loop of the seed's
# Exp overflow (models/exp_overflow.onnx), without an Ascend machine: compare
# against the mock ATC in force_fp16, switch off the fusion that hides the
# culprit, find Exp, clip its input, compile and compare again. Exits 0 only
# when every step behaves as expected. tools/demo.sh runs it after building;
# ctest runs it as the test `demo`. Defaults: build/surgeon, build/demo.
set -u
cd "$(dirname "$0")/.." || exit 1
S=${1:-build/surgeon}
W=${2:-build/demo}
M=models/exp_overflow.onnx
SOC=Ascend910B1 # an Ascend910 overflows to inf/NaN; a 310 would saturate
IN=(--random 1 --range 0,5)

[ -x "$S" ] || {
    echo "demo: $S not found (build first, or give the surgeon binary)" >&2
    exit 1
}
rm -rf "$W"
mkdir -p "$W"

step=0
say() {
    step=$((step + 1))
    printf '\n== %d. %s\n' "$step" "$*"
}

# show CMD...: print the command, run it with its output in $W/step<N>.log,
# show the lines that matter, and leave its exit code in $rc.
show() {
    printf '$ surgeon %s\n' "${*:2}"
    "$@" >"$W/step$step.log" 2>&1
    rc=$?
    grep -E '^(verdict|first failing operator|advice|reports):|Clip inserted|^made by|^wrote|^  (UB|Graph)Fusion' \
        "$W/step$step.log" | sed 's/^/  /'
}

# expect RC TEXT: the last command exited with RC and printed TEXT.
expect() {
    if [ "$rc" != "$1" ] || ! grep -qF -- "$2" "$W/step$step.log"; then
        echo "demo: step $step did not behave as expected (exit code $rc, want $1; want the" \
            "output to say: $2). Its output:" >&2
        sed 's/^/    /' "$W/step$step.log" >&2
        exit 1
    fi
    echo "  -> exit code $rc, as expected"
}

say "Compare the model with its compiled form: the mock ATC for an $SOC in force_fp16," \
    "on inputs in [0,5)"
show "$S" compare "$M" --target mock --soc "$SOC" --precision force_fp16 "${IN[@]}" -o "$W/1-fp16"
expect 3 "first failing operator: Exp_3Mul_6Add_9 (Add), cause: overflow"
echo "  The network output is wrong (NaN). The first failing operator is a fused op that"
echo "  overflows; its inner nodes are hidden, so the advice is to switch that fusion off."

say "Switch that fusion off, from the compiled model's map"
show "$S" fusion-switch -o "$W/fusion_switch.cfg" --from-map "$W/1-fp16/exp_overflow.json" \
    --nodes Add_9 --model "$M"
expect 0 "AutomaticUbFusion"

say "Compile with that switch file and compare again, on the same inputs"
show "$S" compare "$M" --target mock --soc "$SOC" --precision force_fp16 \
    --fusion "$W/fusion_switch.cfg" -i "x=$W/1-fp16/inputs/x.npy" -o "$W/2-unfused"
expect 3 "first failing operator: Exp_3 (Exp), cause: overflow"
echo "  Exp is the culprit: its input reaches 19, exp(19) is past float16's 65504; the inf"
echo "  times the mask's 0 gives NaN. (Keeping only Exp in float32 is not enough: its"
echo "  float16 reader overflows instead.)"

say "Fix the graph: clip Exp's input to ln(65504) (insert-clip's defaults)"
show "$S" optimize "$M" -o "$W/exp_overflow.fixed.onnx" --pass insert-clip
expect 0 "Exp_3 input 0 in [-inf, 11.0859375]"

say "Compile the fixed model as before (fusion on, force_fp16) and compare, same inputs"
show "$S" compare "$W/exp_overflow.fixed.onnx" --target mock --soc "$SOC" --precision force_fp16 \
    -i "x=$W/1-fp16/inputs/x.npy" -o "$W/3-fixed"
expect 0 "verdict: PASS"

echo
echo "The network output now matches the float32 run within msit's thresholds."
echo "Reports: $W/1-fp16/report.html (before), $W/3-fixed/report.html (after)."
