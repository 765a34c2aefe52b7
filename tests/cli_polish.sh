#!/bin/bash
# cli_polish.sh SURGEON SOURCE_DIR WORK_DIR - the command line's manners end
# to end: "did you mean" for unknown commands, options, passes, pass options
# and fusion pass names; optimize --in-place; errors that name a path once;
# atc -q; keep-dtype --check without --format (in cli_fusion.sh); inspect's
# count of tensors held in Constant nodes; pipeline variables (--set).
set -u
S=$(realpath "$1")
SRC=$(realpath "$2")
. "$SRC/tests/cli_common.sh"
enter_work_dir "$3"
M=$SRC/models/exp_overflow.onnx
PY=/usr/bin/python3

# --- did you mean ----------------------------------------------------------
run 2 "$S" inspekt "$M"
has err "unknown command 'inspekt' (did you mean 'inspect'?)"
run 2 "$S" help optimise
has err "unknown command 'optimise' (did you mean 'optimize'?)"
run 2 "$S" frobnicate
has err "unknown command 'frobnicate'; see 'surgeon --help'"
lacks err "did you mean"
run 2 "$S" optimize "$M" -o o.onnx --pass insert-clip --evalute
has err "unknown option '--evalute' (did you mean '--evaluate'?)"
run 2 "$S" run "$M" -o r --dumb all
has err "unknown option '--dumb' (did you mean '--dump'?)"
run 2 "$S" atc "$M" -o p --soc Ascend910B1 --mock --overflw=inf
has err "unknown option '--overflw=inf' (did you mean '--overflow'?)"
run 2 "$S" passes insert-clp
has err "unknown pass 'insert-clp' (did you mean 'insert-clip'?)"
run 2 "$S" optimize "$M" -o o.onnx --pass insert_clip
has err "unknown pass 'insert_clip' (did you mean 'insert-clip'?)"
run 2 "$S" optimize "$M" -o o.onnx --pass insert-clip:opss=Exp
has err "pass 'insert-clip' has no option 'opss' (did you mean 'ops'?)"
printf 'passes:\n  - remove-identiy\n' >typo_pass.yaml
run 2 "$S" optimize "$M" -o o.onnx -c typo_pass.yaml
has err "typo_pass.yaml:2:5: unknown pass 'remove-identiy' (did you mean 'remove-identity'?)"
printf 'passes:\n  - insert-clip:\n      postion: after\n' >typo_opt.yaml
run 2 "$S" optimize "$M" -o o.onnx -c typo_opt.yaml
has err "typo_opt.yaml:3:7: pass 'insert-clip' has no option 'postion' (did you mean 'position'?)"
absent o.onnx
run 2 "$S" fusion-switch -o fs.cfg --off AutomaticUBFusion
has err "'AutomaticUBFusion' is not in the pass catalogue: did you mean 'AutomaticUbFusion'?"
absent fs.cfg
run 0 "$S" fusion-switch -o fs.cfg --off AutomaticUBFusion --ub-only
has err "'AutomaticUBFusion' is not in surgeon's pass catalogue (did you mean 'AutomaticUbFusion'?)"
printf 'AutomaticUBFusion:off\n' >fs_lines.cfg
run 0 "$S" fusion-switch --check fs_lines.cfg
has err "fs_lines.cfg:1:1: 'AutomaticUBFusion' is not in surgeon's pass catalogue (did you mean 'AutomaticUbFusion'?)"
run 0 "$S" atc "$M" -o fsp --soc Ascend910B1 --mock --fusion fs_lines.cfg
has err "fs_lines.cfg:1:1: 'AutomaticUBFusion' is not a pass of surgeon's catalogue (did you mean 'AutomaticUbFusion'?)"

# --- optimize --in-place ---------------------------------------------------
cp "$M" own.onnx
before=$(md5sum <own.onnx)
run 1 "$S" optimize own.onnx -o own.onnx --pass insert-clip
has err "own.onnx: refusing to overwrite the input model (use --in-place)"
[ "$(md5sum <own.onnx)" = "$before" ] || fail "a refused optimize changed its input"
run 0 "$S" optimize own.onnx --in-place --pass insert-clip
has out "own.onnx -> own.onnx: 1 change"
[ "$(md5sum <own.onnx)" != "$before" ] || fail "optimize --in-place left the model as it was"
run 0 "$S" inspect own.onnx
has out "Clip "
run 0 "$S" optimize own.onnx --in-place --pass insert-clip # twice changes nothing
has out "own.onnx -> own.onnx: 0 changes"
cp "$M" own2.onnx
run 0 "$S" optimize own2.onnx -o own2.onnx --in-place --pass insert-clip
has out "1 change"
mkdir -p tree/sub
cp "$M" tree/a.onnx
cp "$M" tree/sub/b.onnx
run 0 "$S" optimize tree -r --in-place --pass insert-clip -q
has out "2 models: 2 ok, 0 failed"
run 0 "$S" inspect tree/sub/b.onnx
has out "Clip "
run 2 "$S" optimize own.onnx --in-place --evaluate --pass insert-clip
has err "--evaluate writes nothing: --in-place does not apply"
run 2 "$S" optimize own.onnx --pass insert-clip
has err "missing -o OUT (or --in-place)"
find . -name '*.tmp*' | grep -q . && fail "a temporary file was left behind"

# --- an error names its path once -----------------------------------------
echo garbage >bad.onnx
run 1 "$S" optimize bad.onnx -o o.onnx --pass toposort
has err "surgeon: error: bad.onnx: not a valid ONNX protobuf"
lacks err "bad.onnx: bad.onnx"
run 1 "$S" optimize "$M" -o o.onnx --pass rename:map=nomap.txt
has err "surgeon: error: $M: pass 'rename': map file: nomap.txt: cannot open"
lacks err "nomap.txt: nomap.txt"

# --- atc -q -----------------------------------------------------------------
run 0 "$S" atc "$M" -o quiet --soc Ascend910B1 --mock --keep Exp -q
same out ''
[ -s quiet.om ] && [ -s quiet.json ] && [ -s quiet.keep_dtype.cfg ] || fail "atc -q wrote nothing"
lacks err "wrote"
run 0 "$S" atc "$M" -o loud --soc Ascend910B1 --mock
has out "mock compiler: loud.om and loud.json"

# --- inspect: weights in Constant nodes ------------------------------------
$PY - <<'PY' || fail "could not make const_weights.onnx"
import numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto as T
w = numpy_helper.from_array(np.ones((16, 16), np.float32), "w")   # 1 KiB
b = numpy_helper.from_array(np.ones((16,), np.float32), "b")      # 64 B
nodes = [helper.make_node("Constant", [], ["w"], value=w, name="cw"),
         helper.make_node("Constant", [], ["b"], value=b, name="cb"),
         helper.make_node("Constant", [], ["s"], value_float=2.0, name="cs"),
         helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
         helper.make_node("Add", ["m", "b"], ["y"], name="add")]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [1, 16])],
                      [helper.make_tensor_value_info("y", T.FLOAT, [1, 16])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(m)
onnx.save(m, "const_weights.onnx")
PY
run 0 "$S" inspect const_weights.onnx
has out "initializers: 0, 0 B"
has out "constants:    2 Constant node tensors, 1.1 KB"
run 0 "$S" inspect const_weights.onnx --json
has out '"constant_nodes": 2,'
has out '"constant_bytes": 1088,'

# --- pipeline variables -----------------------------------------------------
run 0 "$S" optimize "$M" -o b8.onnx -c "$SRC/configs/rebatch.yaml" --set batch=8
has out "x: float32[1,4,16] -> float32[8,4,16]"
run 0 "$S" optimize "$M" -o b16.onnx -c "$SRC/configs/rebatch.yaml"
has out "x: float32[1,4,16] -> float32[16,4,16]"
run 0 "$S" optimize "$M" -o bn.onnx --set batch=N -c "$SRC/configs/rebatch.yaml" # --set before -c
has out "x: float32[1,4,16] -> float32[N,4,16]"
run 2 "$S" optimize "$M" -o bx.onnx -c "$SRC/configs/rebatch.yaml" --set bach=8
has err "--set: variable 'bach' is set, but no pipeline read refers to \${bach}"
absent bx.onnx
run 2 "$S" optimize "$M" -o bx.onnx -c "$SRC/configs/rebatch.yaml" --set batch=8 --set batch=4
has err "variable 'batch' is set twice"
run 2 "$S" optimize "$M" -o bx.onnx -c "$SRC/configs/rebatch.yaml" --set 8batch=8
has err "'8batch' is not a variable name"
printf 'passes:\n  - insert-clip:\n      max: ${max}\n' >need.yaml
run 2 "$S" optimize "$M" -o bx.onnx -c need.yaml
has err "need.yaml:3:12: \${max} is not set and has no default: give --set max=VALUE"
run 0 "$S" optimize "$M" -o clipped.onnx -c need.yaml --set max=3.5
has out "in [-inf, 3.5]"
run 2 "$S" optimize "$M" -o bx.onnx -c need.yaml --set max=lots
has err "need.yaml:3:12: insert-clip: option 'max' (number)"
printf 'passes:\n  - insert-clip:\n      ops: ["${op:-Exp}", Log]\n      max: ${max\n' >open.yaml
run 2 "$S" optimize "$M" -o bx.onnx -c open.yaml
has err "open.yaml:4:12: '\${' without a closing '}'"
printf 'passes:\n  - insert-clip:\n      ops: ["${op:-Exp}", Log]\n' >list.yaml
run 0 "$S" optimize "$M" -o list.onnx -c list.yaml
has out "Clip inserted: 1 (Exp_3 input 0"
run 0 "$S" optimize "$M" -o list2.onnx -c list.yaml --set op=Mul
has out "Clip inserted: 3 (Mul_0 input 0 in [-65504, 65504]"
printf 'passes:\n  - rename:\n      prefix: "$${v}_"\n' >literal.yaml
run 0 "$S" optimize "$M" -o lit.onnx -c literal.yaml
run 0 "$S" inspect lit.onnx --nodes
has out '${v}_Exp_3'
absent bx.onnx

finish
