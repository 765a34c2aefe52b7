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


MODELS = {
    "ppocr_like.onnx": ppocr_like,
    "collide.onnx": collide,
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
