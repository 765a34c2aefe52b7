#!/usr/bin/python3
"""Make the small ONNX models of models/ (run: models/make_models.py [OUTDIR]).

Each model is built with python3-onnx from fixed values, so running this
again gives the same files. The demo and the tests use them.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def exp_overflow():
    """The seed's Zipformer case in miniature.

    A Mul-Sub-Sub chain feeds an Exp whose result is selected away by an
    arithmetic mask where its input is large: y = exp(t)*m + t*(1-m) with
    m = (t < 10). In float32 the unselected exp(t) is large but finite and
    multiplies by 0; in float16 it overflows to inf and inf*0 = NaN reaches
    the output. Clipping Exp's input to ln(65504) fixes it without changing
    any selected value. Inputs in [0, 1) are safe; inputs up to 5 overflow.
    """
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16])
    inits = [
        numpy_helper.from_array(np.array(4.0, dtype=np.float32), "scale"),
        numpy_helper.from_array(np.array(0.5, dtype=np.float32), "bias1"),
        numpy_helper.from_array(np.array(0.25, dtype=np.float32), "bias2"),
        numpy_helper.from_array(np.array(10.0, dtype=np.float32), "limit"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
    ]
    nodes = [
        helper.make_node("Mul", ["x", "scale"], ["scaled"], name="Mul_0"),
        helper.make_node("Sub", ["scaled", "bias1"], ["sub1"], name="Sub_1"),
        helper.make_node("Sub", ["sub1", "bias2"], ["t"], name="Sub_2"),
        helper.make_node("Exp", ["t"], ["e"], name="Exp_3"),
        helper.make_node("Less", ["t", "limit"], ["m"], name="Less_4"),
        helper.make_node("Cast", ["m"], ["mf"], name="Cast_5", to=TensorProto.FLOAT),
        helper.make_node("Mul", ["e", "mf"], ["a"], name="Mul_6"),
        helper.make_node("Sub", ["one", "mf"], ["inv"], name="Sub_7"),
        helper.make_node("Mul", ["t", "inv"], ["b"], name="Mul_8"),
        helper.make_node("Add", ["a", "b"], ["y"], name="Add_9"),
    ]
    graph = helper.make_graph(nodes, "exp_overflow", [x], [y], inits)
    model = helper.make_model(graph, producer_name="surgeon-models",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


MODELS = {
    "exp_overflow.onnx": exp_overflow,
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, make in MODELS.items():
        model = make()
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, name))


if __name__ == "__main__":
    main()
