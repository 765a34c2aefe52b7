#!/usr/bin/python3
"""Shape inference rules on hand-made models (ctest `shapes_cases`).

    cases_test.py SURGEON

Each case is a small model built with onnx.helper and the shapes that
`surgeon inspect --shapes --json` must infer for some values (symbolic
dims by name, "?" unknown, "unk" a fresh symbol). The bad-input cases must
be a warning naming the node and the shapes by default (exit 3 from
`optimize --pass infer-shapes`, the model written) and an error with
strict=true (exit 1, nothing written). Exit 1 on any failure.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def const(name, arr):
    return numpy_helper.from_array(np.array(arr, dtype=np.int64 if isinstance(arr, list) else arr.dtype), name)


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def out(name):
    return helper.make_empty_tensor_value_info(name)


N = helper.make_node
CASES = []


def case(name, m, want):
    CASES.append((name, m, want))


# Shape arithmetic: Concat of `batch` and constants, into a Reshape.
case("reshape_from_shape_ops", model(
    [N("Shape", ["x"], ["s"]), N("Gather", ["s", "zero"], ["b"], axis=0),
     N("Unsqueeze", ["b", "ax0"], ["b1"]), N("Concat", ["b1", "tail"], ["target"], axis=0),
     N("Reshape", ["x", "target"], ["y"])],
    [vi("x", F, ["batch", 6])], [out("y")],
    [const("zero", np.array(0, np.int64)), const("ax0", [0]), const("tail", [2, 3])]),
    {"target": [3], "y": ["batch", 2, 3]})
case("reshape_minus_one_symbolic", model(
    [N("Reshape", ["x", "t"], ["y"])], [vi("x", F, ["n", 4, 6])], [out("y")], [const("t", [0, -1])]),
    {"y": ["n", 24]})
case("broadcast", model(
    [N("Add", ["a", "b"], ["y"]), N("Mul", ["y", "c"], ["z"])],
    [vi("a", F, ["batch", 1, 4]), vi("b", F, [3, 1]), vi("c", F, ["batch", 3, 1])],
    [out("z")]), {"y": ["batch", 3, 4], "z": ["batch", 3, 4]})
case("conv_pool", model(
    [N("Conv", ["x", "w"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1]),
     N("MaxPool", ["c"], ["p"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
     N("GlobalAveragePool", ["p"], ["g"]), N("Flatten", ["g"], ["f"])],
    [vi("x", F, ["N", 3, 32, 32]), vi("w", F, [8, 3, 3, 3])], [out("f")]),
    {"c": ["N", 8, 16, 16], "p": ["N", 8, 8, 8], "g": ["N", 8, 1, 1], "f": ["N", 8]})
case("conv_same_upper", model(
    [N("Conv", ["x", "w"], ["c"], strides=[2, 2], auto_pad="SAME_UPPER")],
    [vi("x", F, [1, 3, 33, 20]), vi("w", F, [4, 3, 3, 3])], [out("c")]), {"c": [1, 4, 17, 10]})
case("matmul_gemm", model(
    [N("MatMul", ["a", "b"], ["m"]), N("Gemm", ["p", "q"], ["g"], transB=1)],
    [vi("a", F, ["B", 1, 5, 7]), vi("b", F, [3, 7, 2]), vi("p", F, [4, 6]), vi("q", F, [9, 6])],
    [out("m"), out("g")]), {"m": ["B", 3, 5, 2], "g": [4, 9]})
# Opset 18 forms: axes as inputs, Split num_outputs, Pad axes.
case("opset18_axes_inputs", model(
    [N("ReduceMean", ["x", "ax"], ["r"], keepdims=0), N("Squeeze", ["r1", "ax0"], ["s"]),
     N("Unsqueeze", ["x", "ax0"], ["u"]), N("ReduceMax", ["x"], ["r1"], keepdims=1),
     N("Split", ["x"], ["s0", "s1", "s2"], axis=1, num_outputs=3),
     N("Pad", ["x", "pads", "", "pax"], ["pd"])],
    [vi("x", F, [2, 10, 5])], [out("r"), out("s"), out("u"), out("s0"), out("s1"), out("s2"), out("pd")],
    [const("ax", [1]), const("ax0", [0]), const("pads", [1, 2]), const("pax", [2])], opset=18),
    {"r": [2, 5], "r1": [1, 1, 1], "s": [1, 1], "u": [1, 2, 10, 5], "s0": [2, 4, 5],
     "s1": [2, 4, 5], "s2": [2, 2, 5], "pd": [2, 10, 8]})
case("split_input_slice", model(
    [N("Split", ["x", "sp"], ["a", "b"], axis=0),
     N("Slice", ["x", "st", "en", "axs", "stp"], ["sl"])],
    [vi("x", F, [10, "t"])], [out("a"), out("b"), out("sl")],
    [const("sp", [3, 7]), const("st", [-1, 0]), const("en", [-100, 9223372036854775807]),
     const("axs", [0, 1]), const("stp", [-2, 1])]),
    {"a": [3, "t"], "b": [7, "t"], "sl": [5, "t"]})
case("data_dependent_fresh", model(
    [N("NonZero", ["x"], ["nz"]), N("Transpose", ["nz"], ["t"])],
    [vi("x", F, [3, 4])], [out("t")]), {"nz": [2, "unk"], "t": ["unk", 2]})
case("constant_of_shape_expand_tile", model(
    [N("Shape", ["x"], ["s"]), N("ConstantOfShape", ["s"], ["z"]),
     N("Expand", ["y", "s"], ["e"]), N("Tile", ["x", "rep"], ["tl"])],
    [vi("x", F, ["a", 3]), vi("y", F, [1, 3])], [out("z"), out("e"), out("tl")],
    [const("rep", [1, 2])]), {"z": ["a", 3], "e": ["a", 3], "tl": ["a", 6]})
case("resize_scales_and_sizes", model(
    [N("Resize", ["x", "", "sc"], ["r"]), N("Resize", ["x", "", "", "sz"], ["q"])],
    [vi("x", F, [1, 3, 32, 30])], [out("r"), out("q")],
    [numpy_helper.from_array(np.array([1, 1, 2, 0.5], np.float32), "sc"), const("sz", [1, 3, 7, 9])]),
    {"r": [1, 3, 64, 15], "q": [1, 3, 7, 9]})
then_g = helper.make_graph([N("Identity", ["a"], ["ta"])], "then", [], [vi("ta", F, None)])
else_g = helper.make_graph([N("Identity", ["b"], ["eb"])], "else", [], [vi("eb", F, None)])
case("if_branches_disagree", model(
    [N("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
    [vi("c", TensorProto.BOOL, []), vi("a", F, [2, 3]), vi("b", F, [2, 4])], [out("y")]),
    {"y": [2, "?"], "ta": [2, 3], "eb": [2, 4]})
case("range_topk", model(
    [N("Range", ["s", "l", "d"], ["r"]), N("TopK", ["x", "k"], ["v", "i"], axis=1)],
    [vi("x", F, [2, 9])], [out("r"), out("v"), out("i")],
    [const("s", np.array(1, np.int64)), const("l", np.array(10, np.int64)),
     const("d", np.array(3, np.int64)), const("k", [4])]),
    {"r": [3], "v": [2, 4], "i": [2, 4]})
case("einsum", model(
    [N("Einsum", ["a", "b"], ["m"], equation="bij,bjk->bik"),
     N("Einsum", ["c"], ["t"], equation="...ij->...ji"),
     N("Einsum", ["p", "q"], ["o"], equation="ij,jk"),
     N("Det", ["d"], ["dt"])],
    [vi("a", F, ["B", 3, 4]), vi("b", F, ["B", 4, 5]), vi("c", F, [7, 6, 2, 3]),
     vi("p", F, [2, 3]), vi("q", F, [3, 9]), vi("d", F, [5, 4, 4])],
    [out("m"), out("t"), out("o"), out("dt")]),
    {"m": ["B", 3, 5], "t": [7, 6, 3, 2], "o": [2, 9], "dt": [5]})
# A Loop-carried value that grows each iteration: its dim is not the first.
body = helper.make_graph(
    [N("Concat", ["v_in", "one"], ["v_out"], axis=0), N("Identity", ["c_in"], ["c_out"]),
     N("ReduceSum", ["v_in"], ["s_out"], keepdims=1)],
    "body", [vi("it", I64, []), vi("c_in", TensorProto.BOOL, []), vi("v_in", F, None)],
    [vi("c_out", TensorProto.BOOL, []), vi("v_out", F, None), vi("s_out", F, None)],
    initializer=[numpy_helper.from_array(np.ones([1], np.float32), "one")])
case("loop_growing_carried", model(
    [N("Loop", ["m", "", "v0"], ["v", "s"], body=body)],
    [vi("v0", F, [2])], [out("v"), out("s")], [const("m", np.array(3, np.int64))]),
    {"v": ["?"], "v_out": ["?"], "s_out": [1], "s": ["unk", 1]})

# Bad input: the finding names the node and the shapes.
BAD = [
    ("reshape_does_not_fit", model([N("Reshape", ["x", "t"], ["y"], name="R")], [vi("x", F, [4])],
                                   [out("y")], [const("t", [2, 3])]),
     "node 'R' (Reshape): input [4] does not reshape to [2,3]"),
    ("broadcast_mismatch", model([N("Add", ["a", "b"], ["y"], name="A")],
                                 [vi("a", F, [2, 3]), vi("b", F, [4, 3])], [out("y")]),
     "node 'A' (Add): shapes do not broadcast: [2,3] and [4,3]"),
    ("concat_ranks", model([N("Concat", ["a", "b"], ["y"], axis=0, name="C")],
                           [vi("a", F, [2, 3]), vi("b", F, [3])], [out("y")]),
     "node 'C' (Concat): inputs of different ranks: [2,3] and [3]"),
    ("negative_dim", model([N("ConstantOfShape", ["s"], ["y"], name="K")], [], [out("y")],
                           [const("s", [2, -3])]),
     "node 'K' (ConstantOfShape): negative dim -3"),
    ("overflowing_dim", model([N("Tile", ["x", "r"], ["y"], name="T")],
                              [vi("x", F, [4611686018427387904])], [out("y")], [const("r", [4])]),
     "node 'T' (Tile): tiled dim 0 overflows"),
    ("recorded_conflict", model([N("Relu", ["x"], ["y"], name="Z")], [vi("x", F, [2, 3])],
                                [vi("y", F, [2, 4])]),
     "node 'Z' (Relu): output 'y': recorded [2,4], inferred [2,3]"),
]


def dims_of(t):
    """'float32[1,'batch',?]' -> [1, 'batch', '?'] (None: rank unknown)."""
    if t is None or "[" not in t:
        return None
    body = t[t.index("[") + 1:t.rindex("]")]
    if not body:
        return []
    return [int(d) if d.lstrip("-").isdigit() else d.strip("'") for d in body.split(",")]


def main():
    surgeon = sys.argv[1]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, m, want in CASES:
            path = os.path.join(tmp, name + ".onnx")
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
            r = subprocess.run([surgeon, "inspect", path, "--shapes", "--json"], capture_output=True, text=True)
            if r.returncode:
                print("FAIL %s: inspect exit %d: %s" % (name, r.returncode, r.stderr.strip()))
                failed += 1
                continue
            got = {v["name"]: dims_of(v["type"]) for v in json.loads(r.stdout)["values"]}
            bad = []
            fresh = {}
            for v, w in want.items():
                g = got.get(v)
                ok = g is not None and len(g) == len(w)
                for a, b in zip(g or [], w):
                    if b == "unk":
                        ok = ok and isinstance(a, str) and a.startswith("unk__sg") and fresh.setdefault(b, a) == a
                    else:
                        ok = ok and a == b
                if not ok:
                    bad.append("%s: got %s, want %s" % (v, g, w))
            failed += bool(bad)
            print("%s %s%s" % ("FAIL" if bad else "ok", name, "".join("\n    " + b for b in bad)))
        for name, m, msg in BAD:
            path = os.path.join(tmp, name + ".onnx")
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
            o1, o2 = os.path.join(tmp, name + "_1.onnx"), os.path.join(tmp, name + "_2.onnx")
            r1 = subprocess.run([surgeon, "optimize", path, "-o", o1, "--pass", "infer-shapes"],
                                capture_output=True, text=True)
            r2 = subprocess.run([surgeon, "optimize", path, "-o", o2, "--pass", "infer-shapes:strict=true"],
                                capture_output=True, text=True)
            bad = []
            if r1.returncode != 3 or msg not in r1.stdout or not os.path.exists(o1):
                bad.append("default: exit %d, want 3 and a warning with %r: %s %s" % (
                    r1.returncode, msg, r1.stdout[-400:], r1.stderr[-200:]))
            if r2.returncode != 1 or msg not in r2.stderr + r2.stdout or os.path.exists(o2):
                bad.append("strict: exit %d, want 1, the error %r and nothing written: %s" % (
                    r2.returncode, msg, (r2.stderr + r2.stdout)[-400:]))
            if any(k in r1.stderr + r2.stderr for k in ("Sanitizer", "runtime error:")):
                bad.append("sanitizer report")
            failed += bool(bad)
            print("%s bad input %s%s" % ("FAIL" if bad else "ok", name, "".join("\n    " + b for b in bad)))
        # No input shapes: what can be inferred is, the rest is listed.
        m = model([N("Relu", ["x"], ["y"], name="U"), N("Shape", ["y"], ["s"], name="S")],
                  [helper.make_tensor_value_info("x", F, None)], [out("s")])
        path = os.path.join(tmp, "no_shapes.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        r = subprocess.run([surgeon, "inspect", path, "--shapes"], capture_output=True, text=True)
        ok = r.returncode == 0 and "node 'U' (Relu): output shape unknown" in r.stdout and "int64[?]" in r.stdout
        failed += not ok
        print("%s no input shapes%s" % ("ok" if ok else "FAIL", "" if ok else "\n    " + r.stdout[-500:]))
    print("%d cases, %d bad inputs, %d failed" % (len(CASES), len(BAD), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
