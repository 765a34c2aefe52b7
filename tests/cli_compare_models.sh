#!/bin/bash
# cli_compare_models.sh SURGEON SOURCE_DIR WORK_DIR - `surgeon compare` on
# look-alikes of the real models it got wrong (tests/lookalikes.py), each
# checked against an independent oracle (numpy formulas, msit's naming
# rule written out in python).
set -u
S=$(realpath "$1")
NETS=$(dirname "$S")/nets
SRC=$(realpath "$2")
. "$SRC/tests/cli_common.sh"
enter_work_dir "$3"
PY=/usr/bin/python3
$PY "$SRC/tests/lookalikes.py" models || exit 1
MOCK=(--target mock --soc Ascend910B1)
FP32=(--target mock --soc Ascend910B1 --precision must_keep_origin_dtype --fusion off)

# check DIR PYTHON: a python check with `d` the folder, `r` its result.json
# (when there is one), `rows`, and numpy as np; fails with its text.
check() {
    checks=$((checks + 1))
    if ! $PY - "$1" "$2" <<'EOF'; then
import csv, glob, json, os, sys
import numpy as np
import onnx
d, expr = sys.argv[1], sys.argv[2]
r = json.load(open(os.path.join(d, "result.json"))) if os.path.exists(os.path.join(d, "result.json")) else None
rows = r["rows"] if r else []
outs = [x for x in rows if x["IsOutputNode"]]
def mapping(folder):
    path = os.path.join(folder, "mapping.csv")
    return dict(csv.reader(open(path))) if os.path.exists(path) else {}
def node_files(folder):
    """node name -> .npy file of its output 0, as mapping.csv says."""
    m, out = mapping(folder), {}
    for f in os.listdir(folder):
        parts = f.split(".")
        if len(parts) == 4 and parts[1] == "0" and parts[3] == "npy":
            out[m.get(f, f.split(".")[0])] = np.load(os.path.join(folder, f))
    return out
def msit_names(model):
    """msit's names for a graph's nodes (msprobe's onnx_dump_data.py)."""
    names = set(n.name for n in model.graph.node)
    k, out = 999, []
    for i, n in enumerate(model.graph.node):
        if n.name:
            out.append(n.name)
            continue
        name = "%s_%d" % (n.op_type, i)
        if name in names:
            while "%s_%d" % (name, k) in names:
                k += 1
            name, k = "%s_%d" % (name, k), k + 1
        names.add(name)
        out.append(name)
    return out
ok = eval(expr)
if not ok:
    print("  not true in %s: %s" % (d, expr))
sys.exit(0 if ok else 1)
EOF
        fail "$1: $2"
    fi
}

# --- 1. PaddleOCR: unnamed Constant nodes, names with '.' ------------------
# Before: the mock's map named unnamed nodes by their outputs
# ('conv2d_0.w_0'), the golden run by nothing the model knows: "op
# 'conv2d_0.w_0' (Constant) names ONNX node 'conv2d_0.w_0', which is not in".
M=models/ppocr_like.onnx
run 0 "$S" compare $M "${MOCK[@]}" --random 1 -o pp
lacks err "which is not in"
has out "verdict: PASS"
# Both sides name the unnamed nodes as msit does: <OpType>_<index>, and
# Constant_1_999 where a node is called Constant_1 already.
check pp 'msit_names(onnx.load("models/ppocr_like.onnx"))[:2] == ["Constant_0", "Constant_1_999"]'
check pp 'set(t["node"] for t in json.load(open(d + "/golden/manifest.json"))["tensors"]) == set(msit_names(onnx.load("models/ppocr_like.onnx")))'
check pp 'set(s for op in json.load(open(d + "/ppocr_like.json"))["graph"][0]["op"] for a in op.get("attr", []) if a["key"] == "_datadump_original_op_names" for s in a["value"]["list"]["s"]) <= set(msit_names(onnx.load("models/ppocr_like.onnx")))'
check pp 'all(x["status"] in ("compared", "fused away") for x in rows) and len(rows) == 7'
check pp '[x for x in rows if x["GroundTruth"] == "Constant_1_999"][0]["status"] == "compared"'
# The dump-folder form reads the same names with --model and the map.
run 0 "$S" compare -g pp/golden -t pp/target -m pp/ppocr_like.json --model $M -o pp_dirs
has out "verdict: PASS"
# `surgeon run` names them so too.
run 0 "$S" run $M --random 1 --dump all -o pp_run
check pp_run 'set(t["node"] for t in json.load(open(d + "/manifest.json"))["tensors"]) == set(msit_names(onnx.load("models/ppocr_like.onnx")))'

# --- 2. names that file names spell alike: a.b, a_b, a/b -------------------
# Before: "output 0 of 'a_b' is dumped twice". Each node's file holds its
# own tensor (numpy: x+1, 2(x+1), 2(x+1)-3, |2(x+1)-3|) and mapping.csv
# names it; every row compares a node with itself.
M=models/collide.onnx
run 0 "$S" compare $M "${FP32[@]}" --random 1 -o co
lacks err "dumped twice"
check co 'len(rows) == 4 and all(x["status"] == "compared" and x["MaxAbsoluteError"] == 0 for x in rows)'
check co '[x["GroundTruth"] for x in rows] == ["a.b", "a_b", "a/b", "a_b_1"]'
check co 'mapping(d + "/golden") and sorted(mapping(d + "/golden").values()) == ["a.b", "a/b", "a_b"]'
ORACLE='(lambda x, f: np.allclose(f["a.b"], x + 1) and np.allclose(f["a_b"], 2 * (x + 1)) and np.allclose(f["a/b"], 2 * (x + 1) - 3) and np.allclose(f["a_b_1"], abs(2 * (x + 1) - 3)))(np.load(d + "/inputs/x.npy"), node_files(d + "/golden"))'
check co "$ORACLE"
# The float16 run is compared node by node too (no row matched to a
# neighbour: each is within float16 rounding of its own golden value).
run 0 "$S" compare $M "${MOCK[@]}" --fusion off --random 1 -o co16
check co16 'len(rows) == 4 and all(x["status"] == "compared" and x["MaxAbsoluteError"] < 0.01 for x in rows)'
# Two runs of `surgeon run`, compared as folders without a model.
run 0 "$S" run $M --random 2 --dump all -o co_g
run 0 "$S" run $M --random 2 --dump all -o co_t
run 0 "$S" compare -g co_g -t co_t -o co_dirs
check co_dirs 'len(rows) == 4 and all(x["status"] == "compared" and x["MaxAbsoluteError"] == 0 for x in rows)'
check co_g "${ORACLE//d + \"\/golden\"/d}"

# --- 3. a golden run that is not finite is never PASS ----------------------
# Before: "verdict: PASS", exit 0, a green page; only CompareFailReason said
# the golden side held NaN. The oracle: numpy's float16 exp(4x) is inf
# exactly where the golden output is NaN.
M=models/fp16_exp.onnx
run 4 "$S" compare $M "${MOCK[@]}" --random 1 --range 0,5 -o g16
has out "verdict: GOLDEN_NOT_FINITE"
lacks out "verdict: PASS"
has out "NaN/Inf begin in the golden run at Exp_2 (Exp), position 2 (4 values, from finite inputs)"
has out "Exp_2 makes NaN/Inf in the golden run itself (it computes in float16 there)"
has err "the golden run is not finite: 1 network output(s) hold NaN/Inf"
has err "golden run: output 'y' holds"
check g16 'r["verdict"] == "GOLDEN_NOT_FINITE" and r["analysis"]["golden_not_finite"]["golden_node"] == "Exp_2"'
check g16 'r["counts"]["network_outputs_golden_not_finite"] == 1'
check g16 '(lambda x, y: (np.isnan(y) == np.isinf(np.exp(np.float16(4) * x.astype(np.float16)))).all() and np.isnan(y).any())(np.load(d + "/inputs/x.npy"), node_files(d + "/golden")["Cast_5"])'
check g16 '"GOLDEN_NOT_FINITE" in open(d + "/report.html").read() and "The golden run is not finite" in open(d + "/report.html").read()'
# A softmax over a row an all -inf mask hides: NaN begins at the Softmax,
# not at the Add that made the (intended) -inf.
M=models/masked_softmax.onnx
run 4 "$S" compare $M "${MOCK[@]}" --random 1 -o gsm
has out "NaN begins in the golden run at Softmax_1 (Softmax), position 1 (4 NaN, from inputs without NaN)"
has out "a softmax over a row whose every value is -inf"
check gsm 'r["analysis"]["golden_not_finite"]["golden_node"] == "Softmax_1"'
# The dump-folder form says it too, with and without the model.
run 4 "$S" compare -g gsm/golden -t gsm/target -m gsm/masked_softmax.json --model $M -o gsm_dirs
run 4 "$S" compare -g gsm/golden -t gsm/golden -o gsm_nomodel
has out "verdict: GOLDEN_NOT_FINITE"
# `surgeon run` warns, naming the node with --dump all, the output without.
run 0 "$S" run models/fp16_exp.onnx --random 1 --range 0,5 --dump all -o r16
has err "warning: output 'y' holds"
has err "NaN/Inf begin at 'Exp_2' (Exp, output 0: 4 values, from finite inputs)"
check r16 '[t["nan"] + t["inf"] > 0 for t in json.load(open(d + "/manifest.json"))["tensors"]] == [False, False, True, True, True, True]'
run 0 "$S" run models/fp16_exp.onnx --random 1 --range 0,5 -o r16o
has err "warning: output 'y' holds"
has err "(--dump all names the node that made it)"
run 0 "$S" run models/fp16_exp.onnx --random 1 --range 0,1 --dump all -o r16ok
lacks err "warning"

# --- 4. the culprit is the cause ------------------------------------------
# openWakeWord: before, "first failing operator: Unsqueeze_1, cause: jump"
# (float16 rounding of samples near 16000: RMSE 1.7, cosine 1); the overflow
# of the STFT Conv outranks it, and the Unsqueeze is marked as rounding.
M=models/melspec_like.onnx
run 3 "$S" compare $M "${MOCK[@]}" --random 1 --range -16000,16000 -o mel
has out "first failing operator: Conv_2 (Conv2D), cause: overflow"
has out "  crossed: OverFlow"
has out "  input xu: within the target's rounding"
has out "  input stft_basis: constant (initializer or Constant)"
check mel '[x for x in rows if x["NPUDump"] == "Unsqueeze_1"][0]["within_rounding"] and [x for x in rows if x["NPUDump"] == "Unsqueeze_1"][0]["IsPrecisionError"]'
check mel '[x for x in rows if x["NPUDump"] == "Unsqueeze_1"][0]["crossed"].startswith("RootMeanSquareError ")'
check mel '[x for x in rows if x["NPUDump"] == "Unsqueeze_1"][0]["rounding"]["dtype"] == "float16"'
# The oracle of "rounding": numpy's float16 rounding of the very golden
# tensor has an RMSE of the same size as the target's.
check mel '(lambda g, x: 0.5 < x["RootMeanSquareError"] / np.sqrt(((g.astype(np.float16).astype(np.float64) - g) ** 2).mean()) < 2)(node_files(d + "/golden")["Unsqueeze_1"].astype(np.float64), [x for x in rows if x["NPUDump"] == "Unsqueeze_1"][0])'
# Every row in error says which test it failed: CSV CompareFailReason too.
check mel 'all(x["crossed"] for x in rows if x["IsPrecisionError"]) and all(x["crossed"].split(";")[0] in x["CompareFailReason"] or x["OverFlow"] for x in rows if x["IsPrecisionError"])'
check mel 'any("RootMeanSquareError 1." in l and "within float16 rounding" in l for l in open(glob.glob(d + "/result_*.csv")[0]))'
check mel 'r["rows"][0]["NPUDumpDataType"] == "float16" and r["rows"][0]["target_file_dtype"] == "float32"'
# The HTML row's tooltip names the test.
check mel '"title=\"RootMeanSquareError 1." in open(d + "/report.html").read()'
# The HTML table fits 1400 pixels (chromium, as the unit tests render it):
# no horizontal scrolling to reach the deciding metrics.
fits() {
    checks=$((checks + 1))
    sed 's|</body>|<script>var w=document.querySelector(".tableWrap");document.title="W="+w.scrollWidth+",C="+w.clientWidth;</script></body>|' "$1" >"$1.measure.html"
    local t
    t=$(timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu \
        --disable-background-networking --disable-component-update --disable-sync --no-first-run \
        --window-size=1400,1000 --user-data-dir="$W/chromium-profile" --dump-dom \
        "file://$W/$1.measure.html" 2>/dev/null | grep -o '<title>W=[0-9]*,C=[0-9]*</title>')
    local w c
    w=$(echo "$t" | sed 's/.*W=\([0-9]*\),.*/\1/')
    c=$(echo "$t" | sed 's/.*C=\([0-9]*\)<.*/\1/')
    [ -n "$w" ] && [ "$w" -le "$c" ] || fail "$1: the table needs horizontal scrolling at 1400 px ($t)"
}
if [ -x /usr/bin/chromium ]; then
    fits mel/report.html
else
    echo "SKIP: the 1400 px check: /usr/bin/chromium is missing (tools/install-deps.sh --test)"
fi
# The RMSE of large values judged by their scale: the Unsqueeze passes.
run 3 "$S" compare $M "${MOCK[@]}" --random 1 --range -16000,16000 --rmse-relative 0.05 -o mel_rel
check mel_rel 'not [x for x in rows if x["NPUDump"] == "Unsqueeze_1"][0]["IsPrecisionError"]'
has out "--rmse-relative 0.05"

# PP-OCR rec: only the mean relative error crosses (values near 0), cosine
# 0.9999999; the advice says so and --mre-floor judges it by scale.
M=models/cancel_like.onnx
$PY - <<'PYEOF'
import numpy as np, onnx
from onnx import numpy_helper
m = onnx.load("models/cancel_like.onnx")
c = numpy_helper.to_array([t for t in m.graph.initializer if t.name == "c"][0])
rng = np.random.default_rng(2)
d = np.where(rng.uniform(0, 1, c.size) < 0.05, rng.uniform(-1e-5, 1e-5, c.size),
             rng.uniform(0.5, 1, c.size)).reshape(c.shape)
np.save("cancel_x.npy", ((c + d) / np.float32(1.0003)).astype(np.float32))
PYEOF
run 3 "$S" compare $M "${MOCK[@]}" --fusion off -i cancel_x.npy -o mre
has out "first failing operator: Sub_1 (Sub), cause: jump"
has out "  crossed: MeanRelativeError "
has out "--mre-floor F judge it by the tensor's scale"
check mre '(lambda x: x["crossed"].startswith("MeanRelativeError") and ";" not in x["crossed"] and x["CosineSimilarity"] > 0.9999 and not x["within_rounding"])(outs[0])'
run 0 "$S" compare $M "${MOCK[@]}" --fusion off -i cancel_x.npy --mre-floor 0.01 -o mre_floor
has out "verdict: PASS"
run 0 "$S" compare $M "${MOCK[@]}" --fusion off -i cancel_x.npy --mre off -o mre_off
has out "verdict: PASS"
has out "--mre off"

# mobilenet_v2 (the torch export of the nets test): rows in error on KL
# alone say so, and nothing else.
if [ -f "$NETS/mobilenet_v2_op17/model.onnx" ]; then
    N=$NETS/mobilenet_v2_op17
    run 0 "$S" compare $N/model.onnx "${MOCK[@]}" -i $N/test_data_set_0/input_0.pb -o mbv2
    check mbv2 'any(x["crossed"].startswith("KullbackLeiblerDivergence") and ";" not in x["crossed"] and x["CosineSimilarity"] > 0.99 for x in rows)'
    check mbv2 'all(x["crossed"] for x in rows if x["IsPrecisionError"])'
    [ -x /usr/bin/chromium ] && fits mbv2/report.html
else
    echo "SKIP: mobilenet_v2: $NETS/mobilenet_v2_op17 is not there (ctest -R nets makes it)"
fi

finish
