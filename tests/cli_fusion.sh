#!/bin/bash
# cli_fusion.sh SURGEON SOURCE_DIR WORK_DIR - `surgeon fusion-switch` and
# `surgeon keep-dtype` end to end: the files they write, the errors (with
# line and column) they give on malformed files, warnings about entries that
# name nothing in a model, exit codes, and nothing written on failure.
set -u
S=$(realpath "$1")
SRC=$(realpath "$2")
. "$SRC/tests/cli_common.sh"
enter_work_dir "$3"
M=$SRC/models/exp_overflow.onnx

# --- fusion-switch: writing -----------------------------------------------
run 0 "$S" fusion-switch -o all_off.cfg --off all
same all_off.cfg '{
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
run 0 "$S" fusion-switch -o some.cfg --off all --on SoftmaxFusionPass,TbePool2dQuantFusionPass
same some.cfg '{
  "Switch": {
    "GraphFusion": {
      "ALL": "off",
      "SoftmaxFusionPass": "on"
    },
    "UBFusion": {
      "ALL": "off",
      "TbePool2dQuantFusionPass": "on"
    }
  }
}
'
run 0 "$S" fusion-switch -o named.cfg --off AutomaticUbFusion --off ConvBatchnormFusionPass
same named.cfg '{
  "Switch": {
    "GraphFusion": {
      "ConvBatchnormFusionPass": "off"
    },
    "UBFusion": {
      "AutomaticUbFusion": "off"
    }
  }
}
'
run 0 "$S" fusion-switch -o ub.cfg --off all --ub-only
same ub.cfg '{
  "Switch": {
    "UBFusion": {
      "ALL": "off"
    }
  }
}
'
run 0 "$S" fusion-switch -o new.cfg --off NewerPass --graph-only
has err "'NewerPass' is not in surgeon's pass catalogue; writing it under GraphFusion"
has new.cfg '"NewerPass": "off"'

# usage errors write nothing
run 2 "$S" fusion-switch -o x.cfg --off NewerPass
has err "'NewerPass' is not in the pass catalogue (see --list); add --graph-only or --ub-only"
run 2 "$S" fusion-switch -o x.cfg --off AutomaticUbFusion --graph-only
has err "'AutomaticUbFusion' is a UB fusion pass, not allowed with --graph-only"
run 2 "$S" fusion-switch -o x.cfg --off 'Bad Name' --graph-only
has err "'Bad Name' is not a fusion pass name"
run 2 "$S" fusion-switch -o x.cfg --off SoftmaxFusionPass --on SoftmaxFusionPass
has err "'SoftmaxFusionPass' is both in --off and in --on"
run 2 "$S" fusion-switch -o x.cfg
has err "nothing to switch"
run 2 "$S" fusion-switch -o x.cfg --off a,,b --graph-only
has err "bad list 'a,,b'"
run 2 "$S" fusion-switch -o x.cfg --from-map m.json
has err "--from-map and --nodes go together"
run 1 "$S" fusion-switch -o x.cfg --from-map missing.json --nodes a
has err "missing.json: cannot open"
absent x.cfg

# --- fusion-switch: checking ----------------------------------------------
run 0 "$S" fusion-switch --check some.cfg
has out "some.cfg: valid fusion switch file (JSON), 4 entries"
printf 'RequantFusionPass:off\nTbeCommonRules0FusionPass:off\nMyPass:off\n' >lines.cfg
run 0 "$S" fusion-switch --check lines.cfg
has out "valid fusion switch file (PassName:on|off lines), 3 entries"
has err "surgeon: warning: lines.cfg:3:1: 'MyPass' is not in surgeon's pass catalogue"
printf '{"Switch": {"GraphFusion": {"AutomaticUbFusion": "off"}}}\n' >wrong.cfg
run 0 "$S" fusion-switch --check wrong.cfg
has err "wrong.cfg:1:29: 'AutomaticUbFusion' is a UB fusion pass but is listed under GraphFusion"
printf '{\n  "Switch": {\n    "GraphFusion": {"ALL": "off",}\n  }\n}\n' >trailing.cfg
run 1 "$S" fusion-switch --check trailing.cfg
has err "surgeon: error: trailing.cfg:3:34: trailing comma before '}'"
printf '{"Switch": {"GraphFusion": {"ALL": "no"}}}\n' >value.cfg
run 1 "$S" fusion-switch --check value.cfg
has err "value.cfg:1:36: the value of \"ALL\" must be \"on\" or \"off\""
printf '{"Switch": {"UB": {}}}\n' >section.cfg
run 1 "$S" fusion-switch --check section.cfg
has err "section.cfg:1:13: unknown section \"UB\" (expected GraphFusion or UBFusion)"
printf 'SoftmaxFusionPass:off\nRequantFusionPass\n' >badline.cfg
run 1 "$S" fusion-switch --check badline.cfg
has err "badline.cfg:2:1: expected PassName:on or PassName:off"
run 1 "$S" fusion-switch --check absent.cfg
has err "absent.cfg: cannot open"
run 2 "$S" fusion-switch --check some.cfg -o y.cfg
absent y.cfg

# --- fusion-switch: the catalogue -----------------------------------------
run 0 "$S" fusion-switch --list
for p in ConvBatchnormFusionPass ConvToFullyConnectionFusionPass SoftmaxFusionPass \
    ConvConcatFusionPass MatMulBiasAddFusionPass PoolingFusionPass ConvScaleFusionPass \
    BatchMatMul2MulFusionPass GroupConv2DFusionPass RequantFusionPass TbePool2dQuantFusionPass \
    LayerNormONNXFusionPass AutomaticUbFusion TbeCommonRules0FusionPass; do
    has out "$p"
done
run 0 "$S" fusion-switch --list --json
checks=$((checks + 1))
/usr/bin/python3 -c '
import json, sys
passes = json.load(open("out"))
assert len(passes) >= 20, len(passes)
names = {p["name"]: p for p in passes}
assert names["SoftmaxFusionPass"]["section"] == "GraphFusion"
assert names["AutomaticUbFusion"]["section"] == "UBFusion"
assert all(p["fuses"] and p["result"] for p in passes)
' || fail "--list --json is not the catalogue as JSON"

# --- keep-dtype: writing --------------------------------------------------
run 0 "$S" keep-dtype -o keep.cfg --ops Exp,LayerNormalization --nodes Exp_3,Exp_12 --model "$M"
same keep.cfg 'OpType::Exp
OpType::LayerNorm
Exp_3
Exp_12
'
has out "OpType::LayerNorm: ATC's name for ONNX LayerNormalization"
has err "surgeon: warning: keep.cfg: 2 entries name nothing in $M: OpType::LayerNorm, Exp_12"
run 0 "$S" keep-dtype -o cust.cfg --format customize --nodes Exp_3 --ops Softmax \
    --input-dtypes float32 --output-dtypes float32 --add 'Mul_0::OutputDtype:float16'
same cust.cfg 'OpType::SoftmaxV2:InputDtype:float32,OutputDtype:float32
Exp_3::InputDtype:float32,OutputDtype:float32
Mul_0::OutputDtype:float16
'
run 0 "$S" keep-dtype -o prec.ini --format precision-mode --ops Exp=high_precision,Pow \
    --nodes Mul_0 --mode keep_fp16
same prec.ini '[ByOpType]
Exp=high_precision
Pow=keep_fp16
[ByNodeName]
Mul_0=keep_fp16
'
run 0 "$S" keep-dtype -o lit.cfg --add OpType::Softmax
has err "ATC calls ONNX Softmax 'SoftmaxV2': OpType::Softmax matches nothing there"

# --- keep-dtype: reading --------------------------------------------------
run 0 "$S" keep-dtype --check keep.cfg --model "$M"
has out "keep.cfg: valid keep_dtype file (format from its lines), 4 entries"
has err "keep.cfg: 2 entries name nothing in $M: OpType::LayerNorm (line 2), Exp_12 (line 4)"
run 0 "$S" keep-dtype --check cust.cfg --format customize_dtypes
has out "cust.cfg: valid customize_dtypes file, "
run 0 "$S" keep-dtype --check prec.ini --format op_precision_mode
# Without --format, the format comes from the lines.
run 0 "$S" keep-dtype --check cust.cfg
has out "cust.cfg: valid customize_dtypes file (format from its lines)"
run 0 "$S" keep-dtype --check prec.ini
has out "prec.ini: valid op_precision_mode file (format from its lines)"
printf 'Exp=high_precision\n' >bare.ini
run 0 "$S" keep-dtype --check bare.ini
has out "bare.ini: valid op_precision_mode file (format from its lines), 1 entry"
printf 'Exp_3\n  OpType::\n' >k1.cfg
run 1 "$S" keep-dtype --check k1.cfg
has err "surgeon: error: k1.cfg:2:11: no op type after \"OpType::\""
printf 'Exp_3::InputDtype:float32\n' >k2.cfg
run 1 "$S" keep-dtype --check k2.cfg --format keep
has err "k2.cfg:1:1: not a keep_dtype entry (this is customize_dtypes syntax)"
# A keep_dtype file with one customize_dtypes line: read as customize_dtypes,
# whose parser then names the keep_dtype line.
printf 'Exp_3\nMul_1::InputDtype:float32\n' >mixed.cfg
run 1 "$S" keep-dtype --check mixed.cfg
has err "mixed.cfg:1:"
printf 'a::InputDtype:float32\nb::InputDtype:float64\n' >c1.cfg
run 1 "$S" keep-dtype --check c1.cfg --format customize
has err "c1.cfg:2:15: unknown dtype \"float64\""
printf '[ByOpType]\nExp=precise\n' >p1.ini
run 1 "$S" keep-dtype --check p1.ini --format precision-mode
has err "p1.ini:2:5: unknown mode \"precise\""

# --- keep-dtype: nothing written on failure, an old file left as it was ----
printf 'OLD\n' >keep_old.cfg
run 2 "$S" keep-dtype -o keep_old.cfg --ops 'Layer Norm'
has err "'Layer Norm': an op type that is not an identifier"
same keep_old.cfg 'OLD
'
run 2 "$S" keep-dtype -o none.ini --format precision-mode --ops Exp
has err "'Exp' has no mode: give --mode or Exp=MODE"
run 2 "$S" keep-dtype -o none.ini --format precision-mode --ops Exp --mode fast
has err "unknown op precision mode 'fast'"
run 2 "$S" keep-dtype -o none.cfg --format customize --nodes Exp_3
has err "customize entries need --input-dtypes and/or --output-dtypes"
run 2 "$S" keep-dtype -o none.cfg --format customize --nodes Exp_3 --input-dtypes float33
has err "bad dtype list 'float33'"
run 2 "$S" keep-dtype -o none.cfg --add 'a::InputDtype:float32'
has err "--add #1:1:1: not a keep_dtype entry (this is customize_dtypes syntax)"
run 2 "$S" keep-dtype -o none.cfg --format cfg --ops Exp
has err "unknown --format 'cfg'"
run 1 "$S" keep-dtype -o none.cfg --ops Exp --model "$W/nomodel.onnx"
absent none.cfg
absent none.ini
ls ./*.tmp.* >/dev/null 2>&1 && fail "a temporary file was left behind"

finish
