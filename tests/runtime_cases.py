#!/usr/bin/python3
"""Models, inputs and expected outputs for tests/check_runtime.c.

Run: runtime_cases.py OUTDIR. For every case NAME it writes NAME.onnx,
NAME.in<i>.npy and NAME.out<i>.npy, and lists "NAME n_inputs n_outputs" in
OUTDIR/cases.txt. Expected outputs come from numpy written out here (not
from any ONNX runtime), so the runtime is checked against an independent
formula. Values are seeded, so the files are the same on every run.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

OPSET = 13
rng = np.random.default_rng(1234)
CASES = []


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def vi(name, arr):
    return helper.make_tensor_value_info(
        name, helper.np_dtype_to_tensor_dtype(arr.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype")
        else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype], list(arr.shape))


def case(name, nodes, inputs, outputs, opset=OPSET, inits=()):
    """inputs/outputs: lists of (name, array)."""
    graph = helper.make_graph(nodes, name, [vi(n, a) for n, a in inputs],
                              [vi(n, a) for n, a in outputs], list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    CASES.append((name, model, [a for _, a in inputs], [a for _, a in outputs]))


def kernels():
    a, b, c = f32(3, 4), f32(5, 4), f32(5)
    case("gemm_trans_bcast",
         [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
         [("a", a), ("b", b), ("c", c)], [("y", 0.5 * a @ b.T + 2.0 * c)])
    # One row: the GEMV path, every transpose, with and without C.
    for ta in (0, 1):
        for tb in (0, 1):
            a, b, c = f32(1, 37), f32(37, 23), f32(1, 23)
            at, bt = (a.T.copy() if ta else a), (b.T.copy() if tb else b)
            case("gemm_row_t%d%d" % (ta, tb),
                 [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=ta, transB=tb,
                                   alpha=0.75, beta=-1.5)],
                 [("a", at), ("b", bt), ("c", c)], [("y", 0.75 * a @ b - 1.5 * c)])
    a, b = f32(1, 9), f32(9, 4)
    case("gemm_row_no_c", [helper.make_node("Gemm", ["a", "b"], ["y"])],
         [("a", a), ("b", b)], [("y", a @ b)])
    a, b = f32(2, 1, 3, 4), f32(3, 4, 5)
    case("matmul_batch_bcast", [helper.make_node("MatMul", ["a", "b"], ["y"])],
         [("a", a), ("b", b)], [("y", np.matmul(a, b))])
    v, m = f32(4), f32(2, 4, 3)
    case("matmul_vec_left", [helper.make_node("MatMul", ["v", "m"], ["y"])],
         [("v", v), ("m", m)], [("y", np.matmul(v, m))])
    x = f32(2, 3, 4)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    case("softmax_axis1", [helper.make_node("Softmax", ["x"], ["y"], axis=1)],
         [("x", x)], [("y", e / e.sum(axis=1, keepdims=True))])
    x2 = x.reshape(2, 12)
    e2 = np.exp(x2 - x2.max(axis=1, keepdims=True))
    case("softmax_v11_coerce", [helper.make_node("Softmax", ["x"], ["y"], axis=1)],
         [("x", x)], [("y", (e2 / e2.sum(axis=1, keepdims=True)).reshape(2, 3, 4))], opset=11)
    x = f32(5, 6)
    st = np.array([4, -1], np.int64)
    en = np.array([0, -7], np.int64)
    ax = np.array([0, 1], np.int64)
    sp = np.array([-2, -2], np.int64)
    case("slice_negative_steps", [helper.make_node("Slice", ["x", "s", "e", "a", "p"], ["y"])],
         [("x", x), ("s", st), ("e", en), ("a", ax), ("p", sp)], [("y", x[4:0:-2, -1::-2])])
    x = f32(2, 3)
    pads = np.array([1, 2, 1, 2], np.int64)
    case("pad_reflect", [helper.make_node("Pad", ["x", "p"], ["y"], mode="reflect")],
         [("x", x), ("p", pads)], [("y", np.pad(x, ((1, 1), (2, 2)), mode="reflect"))])
    case("pad_edge", [helper.make_node("Pad", ["x", "p"], ["y"], mode="edge")],
         [("x", x), ("p", pads)], [("y", np.pad(x, ((1, 1), (2, 2)), mode="edge"))])
    x = f32(2, 3, 4, 5)
    case("reduce_mean_02", [helper.make_node("ReduceMean", ["x"], ["y"], axes=[0, 2], keepdims=0)],
         [("x", x)], [("y", x.mean(axis=(0, 2)))])
    case("reduce_logsumexp_last", [helper.make_node("ReduceLogSumExp", ["x"], ["y"], axes=[-1])],
         [("x", x)], [("y", np.log(np.exp(x).sum(axis=-1, keepdims=True)))])
    case("transpose_perm", [helper.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 3, 1])],
         [("x", x)], [("y", x.transpose(2, 0, 3, 1))])
    x = f32(3, 1)
    shp = np.array([2, 1, 4], np.int64)
    case("expand", [helper.make_node("Expand", ["x", "s"], ["y"])],
         [("x", x), ("s", shp)], [("y", x * np.ones((2, 1, 4), np.float32))])
    x = f32(2, 3)
    rep = np.array([2, 3], np.int64)
    case("tile", [helper.make_node("Tile", ["x", "r"], ["y"])],
         [("x", x), ("r", rep)], [("y", np.tile(x, (2, 3)))])
    cond = rng.random((2, 1, 4)) > 0.5
    x, y = f32(3, 1), f32(1, 4)
    case("where_bcast", [helper.make_node("Where", ["c", "x", "y"], ["z"])],
         [("c", cond), ("x", x), ("y", y)], [("z", np.where(cond, x, y))])
    x = np.array([-2.7, -0.5, 0.5, 2.7, 300.0], np.float32)
    case("cast_f32_i32", [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT32)],
         [("x", x)], [("y", np.trunc(x).astype(np.int32))])
    a = np.array([[7, -7], [7, -7]], np.int32)
    b = np.array([[3, 3], [-3, -3]], np.int32)
    case("mod_int_python", [helper.make_node("Mod", ["a", "b"], ["y"])],
         [("a", a), ("b", b)], [("y", np.mod(a, b))])
    case("mod_int_fmod", [helper.make_node("Mod", ["a", "b"], ["y"], fmod=1)],
         [("a", a), ("b", b)], [("y", np.fmod(a, b))])
    x = f32(4, 6)
    case("gather_neg", [helper.make_node("Gather", ["x", "i"], ["y"], axis=1)],
         [("x", x), ("i", np.array([[-1, 0], [2, -3]], np.int64))],
         [("y", x[:, np.array([[-1, 0], [2, -3]])])])
    x = f32(3, 5)
    case("topk_smallest", [helper.make_node("TopK", ["x", "k"], ["v", "i"], largest=0)],
         [("x", x), ("k", np.array([2], np.int64))],
         [("v", np.sort(x, axis=1)[:, :2]), ("i", np.argsort(x, axis=1, kind="stable")[:, :2])])
    x = f32(2, 3, 4)
    case("cumsum_rev_excl", [helper.make_node("CumSum", ["x", "a"], ["y"], reverse=1, exclusive=1)],
         [("x", x), ("a", np.array(1, np.int32))],
         [("y", np.flip(np.cumsum(np.flip(x, 1), 1) - np.flip(x, 1), 1))])
    x = f32(2, 8)
    case("split_uneven_v13", [helper.make_node("Split", ["x", "s"], ["y0", "y1"], axis=1)],
         [("x", x), ("s", np.array([3, 5], np.int64))], [("y0", x[:, :3]), ("y1", x[:, 3:])])
    x = f32(2, 3, 2)
    y = f32(2, 2)
    case("concat_neg_axis", [helper.make_node("Concat", ["x", "y"], ["z"], axis=-2)],
         [("x", x), ("y", y.reshape(2, 1, 2))],
         [("z", np.concatenate([x, y.reshape(2, 1, 2)], axis=-2))])
    a, b, c = f32(2, 1), f32(3), f32(1, 1)
    case("sum_variadic_bcast", [helper.make_node("Sum", ["a", "b", "c"], ["y"])],
         [("a", a), ("b", b), ("c", c)], [("y", a + b + c)])


def captures():
    """If and Loop bodies that read values of enclosing graphs, one of them
    two levels up (Loop body -> If branch -> main graph)."""
    x = f32(3)
    w = f32(3)
    # main: t = x * w; out_if = If(cond, then: t + x, else: t - x)
    then_g = helper.make_graph(
        [helper.make_node("Add", ["t", "x"], ["r"])], "then", [],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, [3])])
    else_g = helper.make_graph(
        [helper.make_node("Sub", ["t", "x"], ["r2"])], "else", [],
        [helper.make_tensor_value_info("r2", TensorProto.FLOAT, [3])])
    # Loop body: acc' = acc + If(i even, then: t, else: w) ; scan out acc'
    inner_then = helper.make_graph(
        [helper.make_node("Identity", ["t"], ["p"])], "inner_then", [],
        [helper.make_tensor_value_info("p", TensorProto.FLOAT, [3])])
    inner_else = helper.make_graph(
        [helper.make_node("Identity", ["w"], ["q"])], "inner_else", [],
        [helper.make_tensor_value_info("q", TensorProto.FLOAT, [3])])
    body = helper.make_graph(
        [
            helper.make_node("Mod", ["i", "two"], ["m"]),
            helper.make_node("Equal", ["m", "zero"], ["even"]),
            helper.make_node("If", ["even"], ["sel"], then_branch=inner_then,
                             else_branch=inner_else),
            helper.make_node("Add", ["acc", "sel"], ["acc_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Identity", ["acc_out"], ["scan"]),
        ],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("scan", TensorProto.FLOAT, [3])],
        [helper.make_tensor("two", TensorProto.INT64, [], [2]),
         helper.make_tensor("zero", TensorProto.INT64, [], [0])])
    nodes = [
        helper.make_node("Mul", ["x", "w"], ["t"]),
        helper.make_node("If", ["c"], ["y_if"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["n", "", "acc0"], ["y_acc", "y_scan"], body=body),
    ]
    t = x * w
    for cond in (True, False):
        n = np.array(5, np.int64)
        acc = np.zeros(3, np.float32)
        scans = []
        for i in range(5):
            acc = acc + (t if i % 2 == 0 else w)
            scans.append(acc)
        case("captures_%s" % ("then" if cond else "else"), nodes,
             [("x", x), ("w", w), ("c", np.array(cond)), ("n", n),
              ("acc0", np.zeros(3, np.float32))],
             [("y_if", t + x if cond else t - x), ("y_acc", acc), ("y_scan", np.stack(scans))])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    kernels()
    captures()
    with open(os.path.join(out, "cases.txt"), "w") as f:
        for name, model, ins, outs in CASES:
            onnx.save(model, os.path.join(out, name + ".onnx"))
            for i, a in enumerate(ins):
                np.save(os.path.join(out, "%s.in%d.npy" % (name, i)), a)
            for i, a in enumerate(outs):
                np.save(os.path.join(out, "%s.out%d.npy" % (name, i)), a)
            f.write("%s %d %d\n" % (name, len(ins), len(outs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
