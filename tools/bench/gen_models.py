#!/usr/bin/python3
"""Generate the benchmark models (python3-onnx, deterministic).

Usage: gen_models.py OUTDIR [--nodes N]
  ext/model.onnx + ext/weights.bin   ~1.5 GB of external weights (24 x 64 MB)
  inline.onnx                        ~300 MB of inline weights
  chain_<N>.onnx                     N nodes (default 100000): Exp every 4th node
  fold_<N>.onnx                      N nodes, half of them a constant chain
                                     that fold-constants folds
  bn_<N>.onnx                        N/2 Conv + BatchNormalization pairs for fold-bn
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def external_model(out):
    d = os.path.join(out, "ext")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    if os.path.exists(path):
        return
    n_w, elems = 24, 16 * 1024 * 1024  # 24 x 64 MB
    dim = 4096
    inits, nodes = [], []
    prev = "x"
    for i in range(n_w):
        w = (np.arange(elems, dtype=np.float32) * (1.0 / (i + 1))).reshape(dim, elems // dim)
        inits.append(numpy_helper.from_array(w[:, :dim] if False else w, "w%d" % i))
        nodes.append(helper.make_node("MatMul", [prev, "w%d" % i], ["m%d" % i], name="mm%d" % i))
        nodes.append(helper.make_node("Exp", ["m%d" % i], ["e%d" % i], name="exp%d" % i))
        nodes.append(helper.make_node("Slice", ["e%d" % i, "st", "en", "ax"], ["s%d" % i],
                                      name="sl%d" % i))
        prev = "s%d" % i
    inits += [numpy_helper.from_array(np.array([0], np.int64), "st"),
              numpy_helper.from_array(np.array([dim], np.int64), "en"),
              numpy_helper.from_array(np.array([1], np.int64), "ax")]
    g = helper.make_graph(nodes, "ext", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                       [1, dim])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, dim])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=1024)


def inline_model(out):
    path = os.path.join(out, "inline.onnx")
    if os.path.exists(path):
        return
    inits, nodes = [], []
    prev = "x"
    for i in range(75):  # 75 x 4 MB = 300 MB
        w = (np.arange(1024 * 1024, dtype=np.float32) * (i + 1)).reshape(1024, 1024)
        inits.append(numpy_helper.from_array(w, "w%d" % i))
        nodes.append(helper.make_node("MatMul", [prev, "w%d" % i], ["m%d" % i], name="mm%d" % i))
        nodes.append(helper.make_node("Exp", ["m%d" % i], ["e%d" % i], name="exp%d" % i))
        prev = "e%d" % i
    g = helper.make_graph(nodes, "inline", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                          [1, 1024])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 1024])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def chain_model(out, n):
    path = os.path.join(out, "chain_%d.onnx" % n)
    if os.path.exists(path):
        return
    ops = ["Add", "Mul", "Relu", "Exp"]
    nodes = []
    prev = "x"
    for i in range(n):
        op = ops[i % 4]
        ins = [prev, "c"] if op in ("Add", "Mul") else [prev]
        nodes.append(helper.make_node(op, ins, ["t%d" % i], name="%s_%d" % (op, i)))
        prev = "t%d" % i
    g = helper.make_graph(nodes, "chain",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, ["batch", 16])],
                          [numpy_helper.from_array(np.full(16, 0.5, np.float32), "c")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def fold_model(out, n):
    path = os.path.join(out, "fold_%d.onnx" % n)
    if os.path.exists(path):
        return
    nodes = []
    prev = "c"
    for i in range(n // 2):  # constant: folds
        nodes.append(helper.make_node("Add", [prev, "c"], ["k%d" % i], name="cAdd_%d" % i))
        prev = "k%d" % i
    nodes.append(helper.make_node("Mul", ["x", prev], ["t0"], name="Mul_0"))
    prev = "t0"
    for i in range(1, n - n // 2):  # reads the input: stays
        nodes.append(helper.make_node("Relu", [prev], ["t%d" % i], name="Relu_%d" % i))
        prev = "t%d" % i
    g = helper.make_graph(nodes, "fold",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, ["batch", 16])],
                          [numpy_helper.from_array(np.full(16, 0.5, np.float32), "c")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def bn_model(out, n):
    path = os.path.join(out, "bn_%d.onnx" % n)
    if os.path.exists(path):
        return
    nodes, inits = [], []
    prev = "x"
    rng = np.random.default_rng(0)
    for i in range(n // 2):
        p = "%d" % i
        inits += [numpy_helper.from_array(rng.uniform(-1, 1, [4, 4, 1, 1]).astype(np.float32),
                                          "W" + p)]
        inits += [numpy_helper.from_array(rng.uniform(0.5, 1.5, [4]).astype(np.float32), k + p)
                  for k in ("s", "b", "m", "v")]
        nodes.append(helper.make_node("Conv", [prev, "W" + p], ["c" + p], name="Conv_" + p))
        nodes.append(helper.make_node("BatchNormalization",
                                      ["c" + p, "s" + p, "b" + p, "m" + p, "v" + p],
                                      ["y" + p], name="BN_" + p))
        prev = "y" + p
    g = helper.make_graph(nodes, "bn",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 4, 4])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 4, 4, 4])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--nodes", type=int, nargs="*", default=[100000])
    ap.add_argument("--skip-big", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for n in a.nodes:
        chain_model(a.out, n)
        fold_model(a.out, n)
        bn_model(a.out, n)
    if not a.skip_big:
        inline_model(a.out)
        external_model(a.out)


if __name__ == "__main__":
    main()
