#!/usr/bin/python3
"""Small models that have what real models made the comparison get wrong.

Usage: lookalikes.py OUTDIR

Each model is a miniature of a model a user compared (PaddleOCR, Silero VAD,
openWakeWord, torchvision), built with python3-onnx from fixed values so
that it has the same property, in a few nodes:

  ppocr_like.onnx   PaddleOCR as Paddle2ONNX exports it: Constant nodes
                    without names whose outputs are named like weights
                    (conv2d_0.w_0), node names holding '.', and a named
                    node "Constant_1" that msit's name for an unnamed node
                    would take
  collide.onnx      node names that file names spell alike: a.b, a_b, a/b
                    (all "a_b") and a_b_1, each computing something else
  fp16_exp.onnx     a model with a float16 part of its own, where Exp
                    overflows in the golden run too: y = (t - t) + x with
                    t = exp(4x) in float16 is NaN wherever 4x > ln(65504)
  masked_softmax.onnx   a Softmax over a row that an all -inf mask hides
                    (attention with nothing to attend to): NaN in float32
  melspec_like.onnx openWakeWord's melspectrogram: audio samples near
                    +-16000 are unsqueezed (float16 rounds them by up to 8:
                    RMSE past 1 with nothing wrong) and go through an STFT
                    written as a Conv with cos/sin kernels, whose sums of
                    128 samples overflow float16 (65504)
  cancel_like.onnx  PP-OCR rec's mean relative error: y = 1.0003 x - c, with
                    inputs made (by the test) so that 5% of the golden values
                    are near 0, where float16's 1.0 for 1.0003 leaves an
                    error of ~3e-4: relative errors of 30 there, cosine
                    0.9999999
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _model(nodes, name, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph, producer_name="surgeon-lookalikes",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def _constant(out, array, name=None):
    node = helper.make_node("Constant", [], [out],
                            value=numpy_helper.from_array(array, out))
    if name:
        node.name = name
    return node


def ppocr_like():
    rng = np.random.default_rng(0)
    nodes = [
        _constant("conv2d_0.w_0", rng.uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(np.float32)),
        _constant("conv2d_0.b_0", rng.uniform(-0.5, 0.5, (4,)).astype(np.float32)),
        helper.make_node("Conv", ["x", "conv2d_0.w_0", "conv2d_0.b_0"], ["conv2d_0.tmp_0"],
                         name="p2o.Conv.0", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv2d_0.tmp_0"], ["relu_0.tmp_0"]),
        _constant("shape_0", np.array([1, 4, -1], np.int64), name="Constant_1"),
        helper.make_node("Reshape", ["relu_0.tmp_0", "shape_0"], ["reshape2_0.tmp_0"],
                         name="p2o.Reshape.0"),
        helper.make_node("Softmax", ["reshape2_0.tmp_0"], ["y"], name="p2o.Softmax.0", axis=-1),
    ]
    return _model(nodes, "ppocr_like", [_vi("x", [1, 3, 8, 16])], [_vi("y", [1, 4, 128])])


def collide():
    c = lambda n, v: numpy_helper.from_array(np.array(v, np.float32), n)
    nodes = [helper.make_node("Add", ["x", "one"], ["t1"], name="a.b"),
             helper.make_node("Mul", ["t1", "two"], ["t2"], name="a_b"),
             helper.make_node("Sub", ["t2", "three"], ["t3"], name="a/b"),
             helper.make_node("Abs", ["t3"], ["y"], name="a_b_1")]
    return _model(nodes, "collide", [_vi("x", [2, 3])], [_vi("y", [2, 3])],
                  [c("one", 1), c("two", 2), c("three", 3)])


def fp16_exp():
    h = lambda n, v: numpy_helper.from_array(np.array(v, np.float16), n)
    nodes = [helper.make_node("Cast", ["x"], ["xh"], name="Cast_0", to=TensorProto.FLOAT16),
             helper.make_node("Mul", ["xh", "four"], ["s"], name="Mul_1"),
             helper.make_node("Exp", ["s"], ["t"], name="Exp_2"),
             helper.make_node("Sub", ["t", "t"], ["z"], name="Sub_3"),
             helper.make_node("Add", ["z", "xh"], ["yh"], name="Add_4"),
             helper.make_node("Cast", ["yh"], ["y"], name="Cast_5", to=TensorProto.FLOAT)]
    return _model(nodes, "fp16_exp", [_vi("x", [1, 8])], [_vi("y", [1, 8])], [h("four", 4)])


def masked_softmax():
    mask = np.array([[0, 0, -np.inf, -np.inf], [-np.inf] * 4], np.float32)
    nodes = [helper.make_node("Add", ["x", "mask"], ["scores"], name="Add_0"),
             helper.make_node("Softmax", ["scores"], ["p"], name="Softmax_1", axis=-1),
             helper.make_node("Mul", ["p", "x"], ["y"], name="Mul_2")]
    return _model(nodes, "masked_softmax", [_vi("x", [2, 4])], [_vi("y", [2, 4])],
                  [numpy_helper.from_array(mask, "mask")])


def melspec_like():
    n_fft, hop, bins = 128, 64, 16
    t = np.arange(n_fft)
    k = np.arange(bins)[:, None]
    basis = np.concatenate([np.cos(2 * np.pi * k * t / n_fft), np.sin(2 * np.pi * k * t / n_fft)])
    w = basis[:, None, :].astype(np.float32)  # [32, 1, 128]
    nodes = [helper.make_node("Unsqueeze", ["x", "axes"], ["xu"], name="Unsqueeze_1"),
             helper.make_node("Conv", ["xu", "stft_basis"], ["spec"], name="Conv_2",
                              strides=[hop]),
             helper.make_node("Mul", ["spec", "spec"], ["power"], name="Mul_3"),
             helper.make_node("ReduceMean", ["power"], ["y"], name="ReduceMean_4", axes=[1],
                              keepdims=0)]
    return _model(nodes, "melspec_like", [_vi("x", [1, 4096])], [_vi("y", [1, 63])],
                  [numpy_helper.from_array(np.array([1], np.int64), "axes"),
                   numpy_helper.from_array(w, "stft_basis")])


def cancel_like():
    # c is float16-exact; the scale 1.0003 is not (float16 makes it 1.0).
    c = np.random.default_rng(5).uniform(0.5, 1.5, (1, 4096)).astype(np.float16).astype(np.float32)
    nodes = [helper.make_node("Mul", ["x", "scale"], ["xs"], name="Mul_0"),
             helper.make_node("Sub", ["xs", "c"], ["y"], name="Sub_1")]
    return _model(nodes, "cancel_like", [_vi("x", [1, 4096])], [_vi("y", [1, 4096])],
                  [numpy_helper.from_array(np.array(1.0003, np.float32), "scale"),
                   numpy_helper.from_array(c, "c")])


MODELS = {
    "ppocr_like.onnx": ppocr_like,
    "collide.onnx": collide,
    "fp16_exp.onnx": fp16_exp,
    "masked_softmax.onnx": masked_softmax,
    "melspec_like.onnx": melspec_like,
    "cancel_like.onnx": cancel_like,
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in MODELS.items():
        model = make()
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, name))


if __name__ == "__main__":
    main()
