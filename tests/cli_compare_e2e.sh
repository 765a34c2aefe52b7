#!/bin/bash
# cli_compare_e2e.sh SURGEON SOURCE_DIR WORK_DIR - `surgeon compare MODEL
# --target ...` end to end on the seed's Exp overflow (models/exp_overflow.onnx,
# inputs in [0,5)): the fused op found first with fusion on, Exp with fusion
# off, float32 and identical runs passing, insert-clip fixing float16, the
# saved inputs repeating the run, a given mock OM, a real OM's device dumps
# (-t), real atc (the stand-in tests/fake_atc/atc), and bad input or usage
# that must leave OUT as it was.
set -u
S=$(realpath "$1")
SRC=$(realpath "$2")
. "$SRC/tests/cli_common.sh"
enter_work_dir "$3"
PY=/usr/bin/python3
M=$SRC/models/exp_overflow.onnx
FAKE=$SRC/tests/fake_atc
unset ASCEND_TOOLKIT_HOME FAKE_ATC_EXIT FAKE_ATC_JSON FAKE_ATC_LOG
BASE_PATH=$PATH
IN=(--random 1 --range 0,5)
FP16=(--target mock --soc Ascend910B1 --precision force_fp16)

# py EXPR...: a python check over result.json `r` (and run.json `run`) of
# the folder $DIR; fails with the expression's text.
py() {
    checks=$((checks + 1))
    if ! $PY - "$DIR" "$1" <<'EOF'; then
import json, os, sys, glob
import numpy as np
d, expr = sys.argv[1], sys.argv[2]
r = json.load(open(os.path.join(d, "result.json")))
run = json.load(open(os.path.join(d, "run.json")))
rows = r["rows"]
fa = r["analysis"].get("first_failing")
ff = rows[fa["row"]] if fa else None
outs = [x for x in rows if x["IsOutputNode"]]
ok = eval(expr)
if not ok:
    print("  not true in %s: %s" % (d, expr))
    if ff: print("  first failing row:", ff["NPUDump"], ff["OverFlow"], ff["IsPrecisionError"])
sys.exit(0 if ok else 1)
EOF
        fail "$DIR: $1"
    fi
}

# nothing_left: no temporary or moved-aside folder remains in $W.
nothing_left() {
    checks=$((checks + 1))
    local left
    left=$(ls -a "$W" | grep -E '\.tmp\.|\.old\.')
    [ -z "$left" ] || fail "left behind: $left"
}

# --- 1. the seed's case: force_fp16, fusion on --------------------------
run 3 "$S" compare "$M" "${FP16[@]}" "${IN[@]}" -o fp16
has out "golden run: $M in float32, 10 tensors -> fp16/golden (inputs in fp16/inputs)"
has out "mock compiler: fp16/exp_overflow.om and fp16/exp_overflow.json for Ascend910B1, precision force_fp16, overflow inf"
has out "target run: fp16/exp_overflow.om (force_fp16, overflow inf) with float16 emulation, 5 tensors -> fp16/target"
has out "verdict: FAIL"
has out "first failing operator: Exp_3Mul_6Add_9 (Add), cause: overflow"
has out "surgeon fusion-switch -o fusion_switch.cfg --from-map fp16/exp_overflow.json --nodes Add_9"
has out "repeat: surgeon compare $M --target mock --soc Ascend910B1 --precision force_fp16 -i x=fp16/inputs/x.npy -o fp16"
lacks err "comparing" # not a terminal: no progress line
for f in golden/manifest.json target/manifest.json inputs/x.npy exp_overflow.om \
    exp_overflow.json report.html result.json run.json; do
    checks=$((checks + 1))
    [ -f "fp16/$f" ] || fail "fp16/$f was not written"
done
checks=$((checks + 1))
ls fp16/result_*.csv >/dev/null 2>&1 || fail "fp16: no result_<timestamp>.csv"
DIR=fp16
py 'ff["NPUDump"] == "Exp_3Mul_6Add_9" and ff["OverFlow"] and ff["fused"]'
py 'r["verdict"] == "FAIL" and len(outs) == 1 and outs[0]["IsPrecisionError"]'
py 'fa["cause"] == "overflow" and fa["ub_fusion_pass"] == "AutomaticUbFusion"'
# The inputs: uniform in [0,5), the same file in OUT/inputs and both runs.
py 'np.load(d + "/inputs/x.npy").min() >= 0 and np.load(d + "/inputs/x.npy").max() < 5'
py '(np.load(d + "/inputs/x.npy") == np.load(d + "/golden/inputs/x.npy")).all()'
py '(np.load(d + "/inputs/x.npy") == np.load(d + "/target/inputs/x.npy")).all()'
py 'run["target"] == "mock" and run["map"] == "fp16/exp_overflow.json"'
nothing_left

# --- 2. the fusion switch the advice gives: Exp shows -------------------
run 0 "$S" fusion-switch -o fs.cfg --from-map fp16/exp_overflow.json --nodes Add_9 --model "$M"
run 3 "$S" compare "$M" "${FP16[@]}" --fusion fs.cfg -i x=fp16/inputs/x.npy -o nofuse
has out "first failing operator: Exp_3 (Exp), cause: overflow"
DIR=nofuse
py 'ff["NPUDump"] == "Exp_3" and ff["OverFlow"] and not ff["fused"]'
py 'outs[0]["IsPrecisionError"] and outs[0]["OverFlow"]'
run 3 "$S" compare "$M" "${FP16[@]}" --fusion off "${IN[@]}" -o off
has out "first failing operator: Exp_3 (Exp), cause: overflow"
has err "wrote off/exp_overflow.fusion_switch.cfg"
checks=$((checks + 1))
[ -f off/exp_overflow.fusion_switch.cfg ] || fail "off/exp_overflow.fusion_switch.cfg missing"

# --- 3. float32 passes; identical runs agree everywhere ------------------
run 0 "$S" compare "$M" --target mock --soc Ascend910B1 --precision force_fp32 "${IN[@]}" -o fp32
has out "verdict: PASS"
DIR=fp32
py 'all(x["CosineSimilarity"] == 1.0 for x in rows if x["status"] == "compared")'
run 0 "$S" compare "$M" --target mock --soc Ascend910B1 --precision must_keep_origin_dtype \
    --fusion off "${IN[@]}" -o same
DIR=same
py 'len(rows) == 10 and all(x["status"] == "compared" for x in rows)'
py 'all(x["CosineSimilarity"] == 1.0 and x["RelativeEuclideanDistance"] == 0 for x in rows)'
py 'all(x["MaxAbsoluteError"] == 0 for x in rows if x["NPUDumpDataType"] != "bool")'
py 'not any(x["IsPrecisionError"] for x in rows)'

# --- 4. the fix: insert-clip before Exp (the defaults) -------------------
run 0 "$S" optimize "$M" -o fixed.onnx --pass insert-clip
has out "Exp_3 input 0 in [-inf, 11.0859375]"
run 0 "$S" compare fixed.onnx "${FP16[@]}" "${IN[@]}" -o fixed
has out "verdict: PASS"
DIR=fixed
py 'r["verdict"] == "PASS" and not any(x["IsPrecisionError"] or x["OverFlow"] for x in rows)'
py '(np.load(d + "/inputs/x.npy") == np.load("fp16/inputs/x.npy")).all()'
# Clip after Exp (to +-65504) also saves the output, but Exp still overflows.
run 0 "$S" optimize "$M" -o after.onnx --pass insert-clip:position=after
run 0 "$S" compare after.onnx "${FP16[@]}" "${IN[@]}" -o after
has out "first failing operator: Exp_3 (Exp), cause: overflow"
DIR=after
py 'r["verdict"] == "PASS" and ff["NPUDump"] == "Exp_3" and ff["OverFlow"]'
# Keeping only Exp in float32 is not enough (README: its float16 reader).
run 3 "$S" compare "$M" "${FP16[@]}" --keep Exp "${IN[@]}" -o keep
has err "wrote keep/exp_overflow.keep_dtype.cfg"
DIR=keep
py 'not [x for x in rows if x["NPUDump"] == "Exp_3"][0]["OverFlow"] and outs[0]["OverFlow"]'
# An Ascend310 saturates at 65504 instead: 65504 * 0 is 0, the output holds.
run 0 "$S" compare "$M" --target mock --soc Ascend310P3 --precision force_fp16 "${IN[@]}" -o sat
has out "overflow saturation"

# --- 5. the run repeats from OUT/inputs ----------------------------------
cp fp16/result.json first.json
REPEAT=$($PY -c 'import json; print(json.load(open("fp16/run.json"))["repeat"])')
run 3 bash -c "surgeon() { \"$S\" \"\$@\"; }; ${REPEAT}"
has out "first failing operator: Exp_3Mul_6Add_9 (Add), cause: overflow"
checks=$((checks + 1))
$PY - <<'EOF' || fail "the repeated run's rows differ from the first run's"
import json
strip = lambda r: [{k: v for k, v in x.items() if k not in ("target_file", "golden_file")}
                   for x in r["rows"]]
a, b = json.load(open("first.json")), json.load(open("fp16/result.json"))
assert json.dumps(strip(a), sort_keys=True) == json.dumps(strip(b), sort_keys=True)
EOF
nothing_left
# Input names that sanitize alike ('.' and '/' become '_') get files of
# their own, and the repeat command reads them back.
$PY - <<'EOF'
import onnx
from onnx import TensorProto, helper
vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3])
g = helper.make_graph([helper.make_node("Sub", ["a.b", "a/b"], ["y"], name="Sub_0")], "two",
                      [vi("a.b"), vi("a/b")], [vi("y")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, "two.onnx")
EOF
run 0 "$S" compare two.onnx --target mock --soc Ascend910B1 --random 3 -o two
has out "-i a.b=two/inputs/a_b.npy -i a/b=two/inputs/a_b_1.npy"
DIR=two
py '(np.load(d + "/inputs/a_b.npy") == np.load(d + "/golden/inputs/a_b.npy")).all()'
py 'not (np.load(d + "/inputs/a_b.npy") == np.load(d + "/inputs/a_b_1.npy")).all()'
REPEAT=$($PY -c 'import json; print(json.load(open("two/run.json"))["repeat"])')
run 0 bash -c "surgeon() { \"$S\" \"\$@\"; }; ${REPEAT}"
has out "verdict: PASS"
# (the dump writer of `surgeon run` keeps them apart the same way)
run 0 "$S" run two.onnx --random 3 -o tworun
checks=$((checks + 1))
$PY - <<'EOF' || fail "tworun: the inputs a.b and a/b share a file"
import json, numpy as np
m = json.load(open("tworun/manifest.json"))
files = {i["name"]: i["file"] for i in m["inputs"]}
assert files == {"a.b": "inputs/a_b.npy", "a/b": "inputs/a_b_1.npy"}, files
assert not (np.load("tworun/inputs/a_b.npy") == np.load("tworun/inputs/a_b_1.npy")).all()
EOF

# --- 6. a given mock OM ---------------------------------------------------
cp off/exp_overflow.om off.om
run 3 "$S" compare "$M" --target off.om -i x=fp16/inputs/x.npy -o given
has out "target run: off.om (force_fp16, overflow inf)"
has out "first failing operator: Exp_3 (Exp), cause: overflow"
checks=$((checks + 1))
[ -f given/off.json ] || fail "given/off.json (the map of off.om) was not written"
run 1 "$S" compare "$M" --target given/../off/exp_overflow.om "${IN[@]}" -o off
has err "lies inside -o off, which this run replaces"
run 2 "$S" compare "$M" --target off.om --precision force_fp16 "${IN[@]}" -o g2
has err "--precision is a compile option; --target off.om is compiled already"
run 2 "$S" compare "$M" --target off.om -t fp16/target "${IN[@]}" -o g2
has err "off.om is a mock OM, which runs here"
absent g2

# --- 7. a real OM: its dumps come from the device (-t) --------------------
head -c 4096 /dev/urandom >real.om
run 2 "$S" compare "$M" --target real.om "${IN[@]}" -o r1
has err "real.om is not a mock OM (it does not read as ONNX); a real OM runs only on an Ascend device"
has err "give them with -t DIR"
absent r1
run 1 "$S" compare "$M" --target real.om -t fp16/target "${IN[@]}" -o r1
has err "mapping the real OM real.om needs atc --mode=1"
absent r1
mkdir dev && cp -r fp16/target dev/dumps && cp fp16/exp_overflow.json dev/map.json
run 3 "$S" compare "$M" --target real.om -t dev/dumps -m dev/map.json -i x=fp16/inputs/x.npy -o r1
has out "target dumps: dev/dumps (from the device)"
has out "first failing operator: Exp_3Mul_6Add_9 (Add), cause: overflow"
checks=$((checks + 1))
[ -e r1/target ] && fail "r1/target: the device's dumps are read where they are, not copied"
DIR=r1
py 'run["target_dumps"] == "dev/dumps" and run["map"] == "dev/map.json"'

# --- 8. real atc (the stand-in): compile, atc --mode=1, device dumps ------
export PATH="$FAKE:$BASE_PATH" FAKE_ATC_LOG=$W/atc.log FAKE_ATC_JSON=$W/dev/map.json
: >atc.log
run 3 "$S" compare "$M" --target atc --soc Ascend910B1 --precision force_fp16 -t dev/dumps \
    -i x=fp16/inputs/x.npy --input-shape x:1,4,16 -o a1
has out "first failing operator: Exp_3Mul_6Add_9 (Add), cause: overflow"
has atc.log "--model=$M"
has atc.log "--soc_version=Ascend910B1"
has atc.log "--precision_mode=force_fp16"
has atc.log "--input_shape=x:1,4,16"
has atc.log "--mode=1"
has out "--from-map a1/exp_overflow.json"
checks=$((checks + 1))
[ -f a1/exp_overflow.om ] && [ -f a1/exp_overflow.json ] || fail "a1: the OM or its map is missing"
run 2 "$S" compare "$M" --target atc --soc Ascend910B1 "${IN[@]}" -o a2
has err "runs only on an Ascend device"
export FAKE_ATC_EXIT=3
run 1 "$S" compare "$M" --target atc --soc Ascend910B1 -t dev/dumps "${IN[@]}" -o a2
unset FAKE_ATC_EXIT
has err "atc failed with exit code 3"
has err "nothing was written to a2"
absent a2
export PATH=$BASE_PATH
unset FAKE_ATC_LOG FAKE_ATC_JSON
run 1 "$S" compare "$M" --target atc --soc Ascend910B1 -t dev/dumps "${IN[@]}" -o a2
has err "--target atc needs the CANN toolkit's atc; --target mock emulates it on the CPU"
absent a2
nothing_left

# --- 9. bad input: clear messages, OUT as it was -------------------------
run 1 "$S" compare "$W/missing.onnx" "${FP16[@]}" "${IN[@]}" -o b1
has err "missing.onnx"
absent b1
run 1 "$S" compare "$M" --target bogus "${IN[@]}" -o b1
has err "--target bogus: no such compiled model (the targets are mock, atc or an OM file)"
run 1 "$S" compare "$M" --target "$M" "${IN[@]}" -o b1
has err "is an ONNX model, not a compiled one"
run 1 "$S" compare "$M" "${FP16[@]}" -i nope.npy -o b1
has err "input 'x': nope.npy"
has err "nothing was written to b1"
absent b1
$PY -c "import numpy as np; np.save('short.npy', np.zeros((1, 4, 8), np.float32))"
run 1 "$S" compare "$M" "${FP16[@]}" -i short.npy -o b1
has err "input 'x': got shape [1,4,8], the model expects float32[1,4,16]"
absent b1
head -c 100 fp16/inputs/x.npy >trunc.npy
run 1 "$S" compare "$M" "${FP16[@]}" -i trunc.npy -o b1
has err "trunc.npy"
absent b1
run 1 "$S" compare "$M" "${FP16[@]}" -o b1
has err "input 'x' (float32[1,4,16]) was not given; use -i or --random"
absent b1
run 1 "$S" compare "$M" "${FP16[@]}" --input-shape nope:1 "${IN[@]}" -o b1
has err "--input-shape names 'nope', which is not an input of the model"
absent b1
# A failed run over an earlier one leaves the earlier one untouched.
cp fp16/run.json before.json
run 1 "$S" compare "$M" "${FP16[@]}" -i nope.npy -o fp16
checks=$((checks + 1))
cmp -s before.json fp16/run.json && [ -f fp16/golden/manifest.json ] ||
    fail "a failed run changed the earlier run in fp16"
# A folder that is not an earlier compare is refused, not replaced.
mkdir mine && echo keep >mine/notes.txt
run 1 "$S" compare "$M" "${FP16[@]}" "${IN[@]}" -o mine
has err "'mine' exists and is not an earlier surgeon compare folder"
same mine/notes.txt "keep
"
# A map that does not fit MODEL: found by the comparison, OUT rolled back.
$PY -c "
import json
m = json.load(open('dev/map.json'))
m['graph'][0]['op'][1]['attr'][0]['value']['list']['s'] = ['NoSuchNode']
json.dump(m, open('badmap.json', 'w'))"
run 1 "$S" compare "$M" --target real.om -t dev/dumps -m badmap.json "${IN[@]}" -o b2
has err "NoSuchNode"
has err "nothing was written to b2"
absent b2
nothing_left

# --- 10. bad usage --------------------------------------------------------
run 2 "$S" compare "$M" --target mock "${IN[@]}" -o u
has err "--target mock needs --soc SOC"
run 2 "$S" compare "$M" "${FP16[@]}" --range 0,5 -o u
has err "--range needs --random"
run 2 "$S" compare "$M" "${FP16[@]}" "${IN[@]}" -t fp16/target -o u
has err "-t gives a device's dumps of a real OM; --target mock runs the mock OM itself"
run 2 "$S" compare "$M" "${FP16[@]}" --precision fp99 "${IN[@]}" -o u
has err "unknown precision mode 'fp99'"
run 2 "$S" compare "$M" "${FP16[@]}" --overflow maybe "${IN[@]}" -o u
has err "--overflow takes inf or saturation"
run 2 "$S" compare "$M" "${FP16[@]}" --keep-dtype k.cfg --keep Exp "${IN[@]}" -o u
has err "exclude each other"
run 2 "$S" compare "$M" "${FP16[@]}" "${IN[@]}"
has err "missing -o OUT"
run 2 "$S" compare "$M" other.onnx "${FP16[@]}" "${IN[@]}" -o u
has err "one MODEL only"
run 2 "$S" compare -g fp16/golden -t fp16/target -o u --random 1
has err "--random belongs to the end-to-end form"
absent u

# --- 11. the demo's loop notices a step that goes wrong -------------------
# (ctest's `demo` runs it as it is; here compare is made to pass in float32,
# so the demo's first step, which must find the overflow, does not.)
printf '#!/bin/bash\nif [ "$1" = compare ]; then exec "%s" "$@" --precision force_fp32; fi\nexec "%s" "$@"\n' \
    "$S" "$S" >wrapped
chmod +x wrapped
run 1 bash "$SRC/tools/demo_loop.sh" "$W/wrapped" "$W/demo"
has err "demo: step 1 did not behave as expected (exit code 0, want 3"

# --- 12. quiet ------------------------------------------------------------
run 3 "$S" compare "$M" "${FP16[@]}" "${IN[@]}" -o quiet -q
same out ""
same err ""
nothing_left

finish
