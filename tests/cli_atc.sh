#!/bin/bash
# cli_atc.sh SURGEON SOURCE_DIR WORK_DIR - `surgeon atc` end to end, with the
# stand-in tests/fake_atc/atc first on PATH: the exact arguments atc gets,
# its output streamed, its exit code returned, the files surgeon writes for
# it, and bad input that must stop everything before anything is written.
set -u
S=$(realpath "$1")
SRC=$(realpath "$2")
. "$SRC/tests/cli_common.sh"
enter_work_dir "$3"
FAKE=$SRC/tests/fake_atc
M=$SRC/models/exp_overflow.onnx
LOG=$W/atc.log
export FAKE_ATC_LOG=$LOG
BASE_PATH=$PATH
export PATH="$FAKE:$BASE_PATH"
unset ASCEND_TOOLKIT_HOME FAKE_ATC_EXIT FAKE_ATC_JSON

ALL_OFF='{
  "Switch": {
    "GraphFusion": {
      "ALL": "off"
    },
    "UBFusion": {
      "ALL": "off"
    }
  }
}
'

# --- every option, run through the stand-in atc --------------------------
mkdir o1
: >"$LOG"
run 0 "$S" atc "$M" -o "$W/o1/enc" --soc Ascend310P3 --input-shape 'x:1,4,16' \
    --precision allow_mix_precision --keep Exp --fusion off --log error \
    -- --op_select_implmode=high_precision
same "$LOG" "--framework=5
--model=$M
--output=$W/o1/enc
--soc_version=Ascend310P3
--input_shape=x:1,4,16
--precision_mode=allow_mix_precision
--keep_dtype=$W/o1/enc.keep_dtype.cfg
--fusion_switch_file=$W/o1/enc.fusion_switch.cfg
--log=error
--op_select_implmode=high_precision

"
has out "ATC run success, welcome to the next use." # atc's own output came through
has err "surgeon: running $FAKE/atc: atc --framework=5"
same o1/enc.keep_dtype.cfg "OpType::Exp
"
same o1/enc.fusion_switch.cfg "$ALL_OFF"
[ -f o1/enc.om ] || fail "the stand-in atc did not get to write o1/enc.om"

# --- atc's exit code is ours ---------------------------------------------
: >"$LOG"
FAKE_ATC_EXIT=3 run 3 "$S" atc "$M" -o "$W/o1/bad" --soc Ascend910B1
has err "ATC run failed"
has err "surgeon: error: atc failed with exit code 3"

# --- user files, precision_mode_v2, ONNX type names ATC renames ----------
printf 'Exp_3\nOpType::Exp\n' >keep.cfg
printf 'Exp_3::InputDtype:float32,OutputDtype:float32\n' >cust.cfg
printf '[ByOpType]\nExp=high_precision\n' >prec.ini
printf 'SoftmaxFusionPass:off\n' >fs.cfg
: >"$LOG"
run 0 "$S" atc "$M" -o o1/v2 --soc Ascend310P3 --precision fp16 --keep-dtype keep.cfg \
    --customize-dtypes cust.cfg --op-precision-mode prec.ini --fusion fs.cfg
same "$LOG" "--framework=5
--model=$M
--output=o1/v2
--soc_version=Ascend310P3
--precision_mode_v2=fp16
--keep_dtype=keep.cfg
--customize_dtypes=cust.cfg
--op_precision_mode=prec.ini
--fusion_switch_file=fs.cfg

"
run 0 "$S" atc "$M" -o o1/sm --soc Ascend310P3 --keep Softmax,Exp --keep-nodes Exp_3 --print
has out "keep_dtype: OpType::SoftmaxV2 (ATC's name for ONNX Softmax)"
same o1/sm.keep_dtype.cfg "OpType::SoftmaxV2
OpType::Exp
Exp_3
"
has err "surgeon: warning: --keep: OpType::SoftmaxV2 names no op type of the model"

# --- --print: the exact command, nothing run -----------------------------
: >"$LOG"
run 0 "$S" atc "$M" -o o1/p --soc Ascend310P3 --input-shape 'x:-1,4,1~32' --precision force_fp16 \
    --fusion off --print
same out "atc --framework=5 --model=$M --output=o1/p --soc_version=Ascend310P3 --input_shape=\"x:-1,4,1~32\" --precision_mode=force_fp16 --fusion_switch_file=o1/p.fusion_switch.cfg
"
same "$LOG" ""
same o1/p.fusion_switch.cfg "$ALL_OFF"
run 0 "$S" atc "$M" -o "o1/with space" --soc Ascend310P3 --print -- '--input_format=ND;x'
same out "atc --framework=5 --model=$M --output=\"o1/with space\" --soc_version=Ascend310P3 --input_format=\"ND;x\"
"

# --- --to-json, then switch off what produced a node ---------------------
cat >map_in.json <<'JSON'
{"graph": [{"name": "g", "op": [
  {"name": "x", "type": "Data", "attr": []},
  {"name": "Mul_0Sub_1Sub_2", "type": "Sub", "attr": [
    {"key": "_datadump_original_op_names", "value": {"list": {"s": ["Mul_0", "Sub_1", "Sub_2"]}}},
    {"key": "pass_name_ub", "value": {"s": "AutomaticUbFusion"}}]},
  {"name": "Exp_3", "type": "Exp", "attr": []}
]}]}
JSON
: >"$LOG"
FAKE_ATC_JSON=$W/map_in.json run 0 "$S" atc --to-json o1/enc.om -o map.json
same "$LOG" "--mode=1
--om=o1/enc.om
--json=map.json

"
run 0 "$S" fusion-switch -o from_map.cfg --from-map map.json --nodes Sub_1,Exp_3 --model "$M"
same from_map.cfg '{
  "Switch": {
    "UBFusion": {
      "AutomaticUbFusion": "off"
    }
  }
}
'
has out "Sub_1: compiled as Sub 'Mul_0Sub_1Sub_2', made by AutomaticUbFusion (UB)"
has out "Exp_3: compiled as Exp 'Exp_3', not made by a fusion pass"
run 1 "$S" fusion-switch -o none.cfg --from-map map.json --nodes Exp_3
has err "nothing to switch off; nothing written"
absent none.cfg
run 1 "$S" fusion-switch -o none.cfg --from-map map.json --nodes Exp_33 --model "$M"
has err "no node named 'Exp_33'"
absent none.cfg
run 0 "$S" atc --to-json o1/enc.om -o map2.json --print
same out "atc --mode=1 --om=o1/enc.om --json=map2.json
"
run 1 "$S" atc --to-json o1/missing.om -o map3.json
has err "o1/missing.om: no such compiled model"

# --- atc found under $ASCEND_TOOLKIT_HOME when not on PATH -----------------
if PATH=/usr/bin:/bin command -v atc >/dev/null 2>&1; then
    echo "SKIP: a real atc is on /usr/bin:/bin, so the 'not on PATH' cases cannot be set up"
else
    mkdir -p tk/compiler/bin empty_tk
    cp "$FAKE/atc" tk/compiler/bin/atc
    : >"$LOG"
    PATH=/usr/bin:/bin ASCEND_TOOLKIT_HOME=$W/tk run 0 "$S" atc "$M" -o o1/tk --soc Ascend310P3
    has err "surgeon: running $W/tk/compiler/bin/atc:"
    has "$LOG" "--output=o1/tk"

    # --- atc absent: exit 1 saying so and how to get the mock; nothing written.
    # A build script must never take a mock OM for a compiled one.
    mkdir o2
    PATH=/usr/bin:/bin ASCEND_TOOLKIT_HOME=$W/empty_tk run 1 "$S" atc "$M" -o o2/enc \
        --soc Ascend310P3 --keep Exp --fusion off
    has err "surgeon: error: atc not found: not on PATH, nor under $W/empty_tk"
    has err "nothing was compiled (--mock compiles with surgeon's mock compiler"
    lacks err "compiling with the mock compiler instead"
    absent o2/enc.om
    absent o2/enc.json
    absent o2/enc.keep_dtype.cfg
    absent o2/enc.fusion_switch.cfg
    # --mock, asked for, compiles without atc
    PATH=/usr/bin:/bin ASCEND_TOOLKIT_HOME=$W/empty_tk run 0 "$S" atc "$M" -o o2/enc \
        --soc Ascend310P3 --keep Exp --fusion off --mock
    has out "mock compiler: o2/enc.om and o2/enc.json for Ascend310P3, precision force_fp16, overflow saturation"
    same o2/enc.keep_dtype.cfg "OpType::Exp
"
    same o2/enc.fusion_switch.cfg "$ALL_OFF"
    [ -s o2/enc.om ] && [ -s o2/enc.json ] || fail "the mock compiler wrote no o2/enc.om and o2/enc.json"
    # the mock's map without atc
    PATH=/usr/bin:/bin ASCEND_TOOLKIT_HOME=$W/empty_tk run 0 "$S" atc --to-json o2/enc.om -o o2/map.json
    has err "o2/enc.om is a mock OM; wrote its map o2/map.json"
    cmp -s o2/map.json o2/enc.json || fail "--to-json on a mock OM differs from the map written with it"
    # --print still only prints
    PATH=/usr/bin:/bin ASCEND_TOOLKIT_HOME=$W/empty_tk run 0 "$S" atc "$M" -o o2/p --soc Ascend310P3 --print
    absent o2/p.om
fi

# --- bad input: clear message, nothing written, nothing run ---------------
mkdir -p o3
: >"$LOG"
run 2 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --precision fp32 --keep Exp --fusion off
has err "unknown precision mode 'fp32' (valid: force_fp16, allow_fp32_to_fp16, must_keep_origin_dtype, force_fp32, cube_fp16in_fp32out, allow_mix_precision, allow_mix_precision_fp16, fp16, origin, mixed_float16)"
run 1 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --input-shape 'y:1,4,16' --keep Exp --fusion off
has err "the input shape names 'y', which is not an input of the model (inputs: x)"
run 1 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --input-shape 'x:1,64' --fusion off
has err "the input shape gives input 'x' 2 dimensions, the model 3"
run 2 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --input-shape 'x:1,,3' --fusion off
has err "input shape, column 5: bad dimension ''"
printf 'Exp_3\nOpType:Exp\n' >bad_keep.cfg
run 1 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --keep-dtype bad_keep.cfg --fusion off
has err "bad_keep.cfg:2:1: \"OpType:\" takes two colons: OpType::Exp"
printf '{"Switch": {"GraphFusion": {"ALL": "of"}}}' >bad_fs.cfg
run 1 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --fusion bad_fs.cfg --keep Exp
has err "bad_fs.cfg:1:36: the value of \"ALL\" must be \"on\" or \"off\""
printf '[ByOpType]\nExp=fast\n' >bad_prec.ini
run 1 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --op-precision-mode bad_prec.ini --keep Exp
has err "bad_prec.ini:2:5: unknown mode \"fast\""
run 2 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --log verbose --keep Exp
has err "unknown --log level 'verbose'"
run 2 "$S" atc "$M" -o o3/enc --soc 'Ascend 310' --keep Exp
has err "bad --soc 'Ascend 310'"
run 2 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --keep Exp -- --soc_version=Ascend910B1
has err "'--soc_version=Ascend910B1' sets --soc_version, which the SoC version sets already"
run 2 "$S" atc "$M" -o o3/enc --soc Ascend310P3 --keep-dtype keep.cfg --keep Exp
has err "--keep-dtype FILE and --keep/--keep-nodes exclude each other"
run 1 "$S" atc "$M" -o o3/nofolder/enc --soc Ascend310P3 --keep Exp
has err "-o o3/nofolder/enc: its folder does not exist"
run 1 "$S" atc "$W/nomodel.onnx" -o o3/enc --soc Ascend310P3 --keep Exp
has err "nomodel.onnx"
run 2 "$S" atc "$M" --soc Ascend310P3
has err "missing -o OUT_PREFIX"
run 2 "$S" atc "$M" "$M" -o o3/enc --soc Ascend310P3
has err "one MODEL only"
absent o3/enc.keep_dtype.cfg
absent o3/enc.fusion_switch.cfg
same "$LOG" ""

# --- warnings that do not stop the job -------------------------------------
run 0 "$S" atc "$M" -o o3/w --soc Ascend310P3 --keep-nodes Exp_3,Nope --precision origin --print
has err "surgeon: warning: --keep: Nope names no node of the model"
has err "--precision origin keeps every op's dtype already: keep_dtype has no effect"
printf 'OpType::Softmax\nOpType::LayerNorm\n' >onnx_names.cfg
run 0 "$S" atc "$M" -o o3/w2 --soc Ascend310P3 --keep-dtype onnx_names.cfg --print
has err "onnx_names.cfg:1: ATC calls ONNX Softmax 'SoftmaxV2': OpType::Softmax matches nothing there"
has err "onnx_names.cfg:2: OpType::LayerNorm names no op type of the model"

finish
