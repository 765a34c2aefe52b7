#!/bin/bash
# cli_mock.sh SURGEON SOURCE_DIR TEST_MODELS WORK_DIR - the mock compiler end
# to end: `surgeon atc --mock` on the seed's Exp overflow, `surgeon run` on
# the mock OM (float16 emulation, device dump names, fused ops dumped by
# their final output only), `surgeon compare` with the mock's map, switching
# the fusion off from the map and seeing the Exp, overflow modes, the other
# fusion rules, and bad input that must stop everything before anything is
# written.
set -u
S=$(realpath "$1")
SRC=$(realpath "$2")
T=$(realpath "$3")
. "$SRC/tests/cli_common.sh"
enter_work_dir "$4"
PY=/usr/bin/python3
M=$SRC/models/exp_overflow.onnx
unset ASCEND_TOOLKIT_HOME
mkdir o
$PY -c "import numpy as np; np.save('x.npy', np.linspace(0, 5, 64, dtype=np.float32).reshape(1, 4, 16))"

# npy_check DIR PATTERN EXPR: the one .npy of DIR matching PATTERN satisfies
# the numpy expression EXPR over `a`.
npy_check() {
    checks=$((checks + 1))
    local files=("$1"/$2)
    if [ ${#files[@]} != 1 ] || [ ! -f "${files[0]}" ]; then
        fail "$1: not exactly one file $2 (${files[*]})"
        return
    fi
    if ! $PY -c "import numpy as np, sys; a = np.load(sys.argv[1]); sys.exit(0 if ($3) else 1)" \
        "${files[0]}"; then
        fail "${files[0]}: not ($3)"
    fi
}

run 0 "$S" run "$M" -i x.npy -o gold --dump all

# --- the seed's case: force_fp16 on an Ascend910 (inf/NaN) ------------------
run 0 "$S" atc "$M" -o o/enc --soc Ascend910B1 --mock --precision force_fp16
has out "mock compiler: o/enc.om and o/enc.json for Ascend910B1, precision force_fp16, overflow inf"
has out "10 ONNX nodes -> 5 compiled ops"
has out "AutomaticUbFusion                    3 fused ops"
lacks err "atc not found" # --mock does not look for atc
run 0 "$S" run o/enc.om -i x.npy -o t1 --dump all
has err "o/enc.om is a mock OM (Ascend910B1, force_fp16): float16 emulation, overflow inf"
has out "5 tensors written to t1"
npy_check t1 "Add.Exp_3Mul_6Add_9.*.0.*.output.0.npy" "np.isnan(a).sum() > 0"
npy_check t1 "Sub.Mul_0Sub_1Sub_2.*.output.0.npy" "np.isfinite(a).all()"
checks=$((checks + 1))
ls t1 | grep -q '^Exp\.' && fail "t1: Exp_3 is inside a fused op, yet dumped"
run 3 "$S" compare -g gold -t t1 -m o/enc.json --model "$M" -o c1
has out "first failing operator: Exp_3Mul_6Add_9 (Add), cause: overflow"
has out "--from-map o/enc.json --nodes Add_9"

# --- switch that fusion off from the map: the Exp shows ---------------------
run 0 "$S" fusion-switch -o o/fs.cfg --from-map o/enc.json --nodes Add_9 --model "$M"
has out "made by AutomaticUbFusion (UB)"
run 0 "$S" atc "$M" -o o/enc2 --soc Ascend910B1 --mock --fusion o/fs.cfg
lacks out "fused op"
run 0 "$S" run o/enc2.om -i x.npy -o t2 --dump all
npy_check t2 "Exp.Exp_3.*.output.0.npy" "np.isinf(a).sum() > 0"
npy_check t2 "Mul.Mul_6.*.output.0.npy" "np.isnan(a).sum() > 0"
run 3 "$S" compare -g gold -t t2 -m o/enc2.json --model "$M" -o c2
has out "first failing operator: Exp_3 (Exp), cause: overflow"

# --- --fusion off does the same ----------------------------------------------
run 0 "$S" atc "$M" -o o/off --soc Ascend910B1 --mock --fusion off
has err "wrote o/off.fusion_switch.cfg"
run 0 "$S" run o/off.om -i x.npy -o t3 --dump all
npy_check t3 "Exp.Exp_3.*.output.0.npy" "np.isinf(a).sum() > 0"

# --- saturation: 65504 instead of inf (the 310P default) ------------------
run 0 "$S" atc "$M" -o o/sat --soc Ascend310P3 --mock --fusion off
has out "overflow saturation"
run 0 "$S" run o/sat.om -i x.npy -o t4 --dump all
npy_check t4 "Exp.Exp_3.*.output.0.npy" "a.max() == 65504 and np.isfinite(a).all()"
npy_check t4 "Add.Add_9.*.output.0.npy" "np.isfinite(a).all()"
run 0 "$S" atc "$M" -o o/inf310 --soc Ascend310P3 --mock --fusion off --overflow inf
has out "overflow inf"

# --- SoC names and their overflow modes (Ascend's INF_NAN_MODE_ENABLE docs) --
# Atlas A2/A3 default to INF/NaN; the first Ascend910 family (Atlas training
# series) and every Ascend310 saturate.
for soc_mode in Ascend910B4:inf Ascend910_9392:inf Ascend910:saturation \
    Ascend910ProA:saturation Ascend910PremiumA:saturation Ascend310B1:saturation; do
    run 0 "$S" atc "$M" -o o/soc --soc "${soc_mode%%:*}" --mock
    has out "for ${soc_mode%%:*}, precision force_fp16, overflow ${soc_mode#*:}"
done
# any case; recorded as ATC spells it
run 0 "$S" atc "$M" -o o/lower --soc ascend910b1 --mock
has err "--soc ascend910b1: ATC spells it Ascend910B1"
has out "for Ascend910B1, precision force_fp16, overflow inf"
$PY -c "import onnx, sys; m = onnx.load('o/lower.om'); d = {p.key: p.value for p in m.metadata_props}; sys.exit(0 if d['surgeon.soc'] == 'Ascend910B1' else 1)" ||
    fail "o/lower.om does not record the SoC as Ascend910B1"
# a typo is refused with a suggestion, and nothing is written
run 2 "$S" atc "$M" -o o/typo --soc Ascend91OB --mock
has err "unknown --soc 'Ascend91OB' (did you mean 'Ascend910B'?)"
has err "give its overflow mode with --overflow inf|saturation"
absent o/typo.om
# a SoC surgeon does not know compiles with an explicit overflow mode
run 0 "$S" atc "$M" -o o/other --soc Ascend950PR --mock --overflow inf
has err "--soc 'Ascend950PR' is not a SoC surgeon knows"
has out "for Ascend950PR, precision force_fp16, overflow inf"
# for the real atc a name surgeon does not know is a warning (atc checks it)
run 0 "$S" atc "$M" -o o/p --soc Ascend91OB --print
has err "--soc 'Ascend91OB' is not a SoC surgeon knows (did you mean 'Ascend910B'?); atc checks it itself"
has out "--soc_version=Ascend91OB"
run 0 "$S" atc "$M" -o o/p --soc ascend310p3 --print
has out "--soc_version=Ascend310P3"

# --- saturation mode: NaN becomes 0 (sqrt of a negative in float16) ---------
$PY - <<'PYEOF' || fail "could not make sqrt.onnx"
import onnx
from onnx import helper, TensorProto as T
g = helper.make_graph([helper.make_node("Sqrt", ["x"], ["y"], name="Sqrt_0")], "g",
                      [helper.make_tensor_value_info("x", T.FLOAT, [4])],
                      [helper.make_tensor_value_info("y", T.FLOAT, [4])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "sqrt.onnx")
PYEOF
$PY -c "import numpy as np; np.save('neg.npy', np.array([-1, 4, -9, 16], np.float32))"
run 0 "$S" atc sqrt.onnx -o o/sqrt_sat --soc Ascend310P3 --mock
run 0 "$S" run o/sqrt_sat.om -i neg.npy -o t_sqrt_sat
npy_check t_sqrt_sat "Sqrt.Sqrt_0.*.output.0.npy" "list(a) == [0, 2, 0, 4]"
run 0 "$S" atc sqrt.onnx -o o/sqrt_inf --soc Ascend910B1 --mock
run 0 "$S" run o/sqrt_inf.om -i neg.npy -o t_sqrt_inf
npy_check t_sqrt_inf "Sqrt.Sqrt_0.*.output.0.npy" "np.isnan(a[0]) and np.isnan(a[2]) and a[1] == 2"

# --- force_fp32, keep_dtype -------------------------------------------------
run 0 "$S" atc "$M" -o o/fp32 --soc Ascend910B1 --mock --fusion off --precision force_fp32
run 0 "$S" run o/fp32.om -i x.npy -o t5 --dump all
npy_check t5 "Exp.Exp_3.*.output.0.npy" "np.isfinite(a).all() and a.max() > 1e8"
npy_check t5 "Add.Add_9.*.output.0.npy" "np.isfinite(a).all()"
run 0 "$S" atc "$M" -o o/keep --soc Ascend910B1 --mock --fusion off --keep Exp
has out "float16 9, float16 in/float32 out 0, float32 1"
run 0 "$S" run o/keep.om -i x.npy -o t6 --dump all
npy_check t6 "Exp.Exp_3.*.output.0.npy" "np.isfinite(a).all() and a.max() > 1e8"

# --- the map without atc; the mock OM checks -----------------------------
run 0 "$S" atc --to-json o/enc.om -o o/map.json
has err "o/enc.om is a mock OM; wrote its map o/map.json"
cmp -s o/map.json o/enc.json || fail "--to-json of a mock OM differs from the map written with it"
run 2 "$S" atc --to-json o/enc.om -o o/map2.json --print
has err "is a mock OM: surgeon writes its map itself"
absent o/map2.json
run 0 "$S" run o/enc.om --check
has out "every node has a kernel"

# --- the other fusion rules ----------------------------------------------
run 0 "$S" atc "$T/conv_bn_act.onnx" -o o/conv --soc Ascend310P3 --mock
has out "ConvBatchnormFusionPass              1 fused op"
has out "TbeCommonRules0FusionPass            1 fused op"
has out "ConvClipByValueFusionPass            1 fused op"
run 0 "$S" run o/conv.om --random 1 -o t7 --dump all
npy_check t7 "Conv2D.Conv_0Relu_2.*.output.0.npy" "a.shape == (1, 4, 8, 8) and a.min() >= 0"
run 0 "$S" atc "$T/matmul_bias.onnx" -o o/mm --soc Ascend310P3 --mock
has out "MatMulBiasAddFusionPass              3 fused ops"
run 0 "$S" atc "$T/softmax_pattern.onnx" -o o/sm --soc Ascend310P3 --mock
has out "SoftmaxFusionPass                    1 fused op"
run 0 "$S" atc "$T/layernorm_pattern.onnx" -o o/ln --soc Ascend310P3 --mock --precision allow_mix_precision
has out "LayerNormONNXFusionPass              1 fused op"
has out "float16 0, float16 in/float32 out 0, float32 1"

# --- atc absent: the mock, said on stderr ----------------------------------
if PATH=/usr/bin:/bin command -v atc >/dev/null 2>&1; then
    echo "SKIP: a real atc is on /usr/bin:/bin, so 'atc absent' cannot be set up"
else
    # without atc and without --mock: exit 1, no mock OM named like a real one
    PATH=/usr/bin:/bin run 1 "$S" atc "$M" -o o/auto --soc Ascend310P3
    has err "atc not found"
    has err "--mock compiles with surgeon's mock compiler"
    absent o/auto.om
    absent o/auto.json
fi

# --- options that do not go together --------------------------------------
mkdir o3
run 2 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --mock --print
has err "--print shows the real atc command; --mock runs the mock compiler"
run 2 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --mock --overflow nan
has err "--overflow takes inf or saturation, not 'nan'"
PATH="$SRC/tests/fake_atc:$PATH" run 2 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --overflow inf
has err "--overflow sets the mock compiler's overflow mode (with --mock)"
run 2 "$S" atc --to-json o/enc.om -o o3/m.json --mock
has err "--to-json takes only -o JSON"

# --- bad input: a clear message, nothing written ---------------------------
printf 'Exp_3\nOpType:Exp\n' >bad_keep.cfg
run 1 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --mock --keep-dtype bad_keep.cfg --fusion off
has err "bad_keep.cfg:2:1: \"OpType:\" takes two colons: OpType::Exp"
printf '{"Switch": {"GraphFusion": {"ALL": "of"}}}' >bad_fs.cfg
run 1 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --mock --fusion bad_fs.cfg --keep Exp
has err "bad_fs.cfg:1:36: the value of \"ALL\" must be \"on\" or \"off\""
run 2 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --mock --precision fp32 --keep Exp
has err "unknown precision mode 'fp32'"
run 1 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --mock --input-shape 'y:1,4,16' --keep Exp
has err "the input shape names 'y', which is not an input of the model (inputs: x)"
printf 'Exp_3::InputDtype:float16,float32\n' >mixed.cfg
run 1 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --mock --customize-dtypes mixed.cfg --keep Exp
has err "mixed.cfg:1: Exp_3 lists both float16 and float32 on one side"
has err "nothing was written"
absent o3/enc.om
absent o3/enc.json
absent o3/enc.keep_dtype.cfg
absent o3/enc.fusion_switch.cfg

# --- insert-clip keeps a softmax fusable ------------------------------------
# A conformer's attention block: insert-clip leaves the softmax's Exp (its
# input x - ReduceMax(x) is at most 0) and those already bounded, clips the
# free one, and the mock's SoftmaxFusionPass still fuses the softmax: one
# more compiled op than the original (the Clip), not the five a broken
# pattern would give back.
run 0 "$S" atc "$T/conformer_attn.onnx" -o o/conf0 --soc Ascend910B1 --mock
has out "SoftmaxFusionPass                    1 fused op"
ops0=$(sed -n 's/.* nodes -> \([0-9]*\) compiled ops.*/\1/p' out)
run 0 "$S" optimize "$T/conformer_attn.onnx" -o conf_clip.onnx --pass insert-clip
has out "softmax_exp input 0 (its input is at most 0: x - ReduceMax(x), a softmax's max subtraction (softmax_sub))"
has out "Clip inserted: 1 (exp_free input 0 in [-inf, 11.0859375])"
run 0 "$S" atc conf_clip.onnx -o o/conf1 --soc Ascend910B1 --mock
has out "SoftmaxFusionPass                    1 fused op"
ops1=$(sed -n 's/.* nodes -> \([0-9]*\) compiled ops.*/\1/p' out)
checks=$((checks + 1))
[ -n "$ops0" ] && [ "$ops1" = "$((ops0 + 1))" ] ||
    fail "compiled ops after insert-clip: $ops1, want one more than $ops0"

# --- warnings that do not stop the job ------------------------------------
run 0 "$S" atc "$M" -o o3/w --soc Ascend310P3 --mock --keep-nodes Exp_3,Nope --keep Softmax
has out "keep_dtype: OpType::SoftmaxV2 (ATC's name for ONNX Softmax)"
has err "surgeon: warning: --keep: Nope names no node of the model; it changes nothing"
has err "surgeon: warning: --keep: OpType::SoftmaxV2 names no op type (as ATC names it) of the model"
printf 'Nope\n' >keep_nope.cfg
printf '[ByOpType]\nExp=high_precision\n' >prec.ini
run 0 "$S" atc "$M" -o o3/w2 --soc Ascend310P3 --mock --keep-dtype keep_nope.cfg \
    --op-precision-mode prec.ini -- --op_select_implmode=high_precision
has err "keep_nope.cfg:1: Nope names no node of the model; it changes nothing"
has err "prec.ini: op_precision_mode (implementation modes) is not emulated"
has err "the mock compiler ignores the atc argument '--op_select_implmode=high_precision'"
[ -s o3/w2.om ] || fail "no o3/w2.om"

finish
