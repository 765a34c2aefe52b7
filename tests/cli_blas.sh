#!/bin/bash
# cli_blas.sh SURGEON SOURCE_DIR TEST_MODELS WORK_DIR - OpenBLAS is loaded
# only by commands that run the model (runtime/blas.c): `--version` and
# `optimize` with a pass that evaluates nothing never open it; `run` opens
# it and computes; two `optimize -j 2` workers folding constants load it at
# the same time. The dynamic loader's own log (LD_DEBUG=files, on stderr)
# tells which libraries a process opened; `run` showing libopenblas there
# proves the log would show it.
set -u
S=$(realpath "$1")
SRC=$(realpath "$2")
T=$(realpath "$3")
. "$SRC/tests/cli_common.sh"
enter_work_dir "$4"

run 0 env LD_DEBUG=files "$S" --version
lacks err libopenblas

run 0 env LD_DEBUG=files "$S" optimize "$T/exp_opset13.onnx" -o clip.onnx \
    --pass insert-clip:position=after
has out "Clip inserted: 1"
[ -s clip.onnx ] || fail "clip.onnx not written"
lacks err libopenblas

# The control, and a Conv and a Gemm computed through the loaded library.
run 0 env LD_DEBUG=files "$S" run "$T/conv_bn_act.onnx" --random 1 -o conv
has err libopenblas
has out "1 tensor written"
run 0 "$S" run "$T/matmul_bias.onnx" --random 1 --threads 2 -o gemm
has out "written"

# Both workers fold constants, each loading OpenBLAS on its first node.
mkdir in
cp "$T/fold_consts.onnx" in/a.onnx
cp "$T/fold_consts.onnx" in/b.onnx
run 0 env LD_DEBUG=files "$S" optimize in -j 2 -o folded --pass fold-constants
has out "2 models: 2 ok, 0 failed"
has err libopenblas

finish
