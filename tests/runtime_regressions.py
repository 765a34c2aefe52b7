#!/usr/bin/python3
"""One regression test per class of runtime failure issue 13 found.

Run: runtime_regressions.py SURGEON WORKDIR

Each case is the smallest model showing the class, run through the binary
under test with the exact exit code and error line it must give (or, for
the classes that gave wrong results with exit 0, the result numpy gives):

  missing inputs   a standard op and a mock OM fused op with '' for a
                   required input (run, run --check, fold-constants)
  memory errors    an If whose branch declares inputs; Conv and
                   ConvTranspose with a kernel of no element (the bias)
  overflow         Pad with INT64_MAX pads, Slice 9:INT64_MIN:INT64_MIN
                   (numpy's [x[9]]), Tile of [0, 2^62] by [2^62, 4], Conv
                   pads of 2^40, Range over all of int64, Expand to a huge
                   shape, Col2Im's block product
  loops            a Loop of trip count 2^62 (--max-loop-iterations) and its
                   scan output under fold-constants' max_bytes as it grows (a
                   growing carried sequence: tests/check_runtime.c, as
                   fold-constants never folds sequences)
  empty ArgMax     ArgMax over an axis of length 0

No run may leave a sanitizer report. Models are made with python3-onnx
(several are invalid on purpose, so onnx.checker is not run on them).
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

I64_MAX, I64_MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, inits=(), opset=13, extra_opsets=(), checker=False):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, v) for d, v in extra_opsets])
    m.ir_version = 8
    if checker:
        onnx.checker.check_model(m)
    return m


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def run(*args):
    p = subprocess.run([SURGEON] + [str(a) for a in args], capture_output=True, text=True,
                       errors="replace", timeout=600)
    bad = [l for l in p.stderr.splitlines() if "runtime error:" in l or "Sanitizer" in l]
    check(not bad, "%s: no sanitizer report%s" % (args[1] if len(args) > 1 else args[0],
                                                  (": " + bad[0]) if bad else ""))
    return p.returncode, p.stdout, p.stderr


def save(m, name):
    path = os.path.join(WORK, name + ".onnx")
    onnx.save(m, path)
    return path


def expect_error(m, name, line, *extra):
    """`surgeon run` exits 1 printing exactly `line` (after the model path)."""
    path = save(m, name)
    out = os.path.join(WORK, name + ".out")
    rc, _, err = run("run", path, "--random", "1", "-o", out, *extra)
    want = "surgeon: error: " + line
    check(rc == 1 and err.strip() == want,
          "%s: exit 1 with '%s' (got exit %d: %s)" % (name, want, rc, err.strip()))
    check(not os.path.exists(out), "%s: nothing written" % name)
    return path


def run_outputs(m, name, feeds=None):
    """Run m; returns {output name: array} from the manifest."""
    path = save(m, name)
    out = os.path.join(WORK, name + ".out")
    shutil.rmtree(out, ignore_errors=True)
    args = ["run", path, "-o", out]
    for k, v in (feeds or {}).items():
        f = os.path.join(WORK, "%s_%s.npy" % (name, k))
        np.save(f, v)
        args += ["-i", "%s=%s" % (k, f)]
    if not feeds:
        args += ["--random", "1"]
    rc, _, err = run(*args)
    check(rc == 0, "%s: runs (exit %d: %s)" % (name, rc, err.strip()))
    if rc:
        return {}
    with open(os.path.join(out, "manifest.json")) as f:
        man = json.load(f)
    return {o["name"]: np.load(os.path.join(out, o["file"])) for o in man["outputs"]}


def missing_inputs():
    m = model([helper.make_node("MatMul", ["", "b"], ["y"], name="mm")],
              [vi("b", TensorProto.FLOAT, [2, 2])], [vi("y", TensorProto.FLOAT, None)],
              checker=False)  # the checker refuses '' for a required input, as it should
    line = "node 'mm' (MatMul, ai.onnx v13): input 0 is required but omitted (empty name)"
    path = expect_error(m, "matmul_no_a", line)
    rc, out, _ = run("run", path, "--check")
    check(rc == 1 and out == line + "\n1 of 1 nodes have no kernel or lack a required input\n",
          "run --check names the omitted input (exit %d: %s)" % (rc, out.strip()))
    # fold-constants: the node is reported, the pass does not fail
    mc = model([helper.make_node("MatMul", ["", "b"], ["y"], name="mm")], [],
               [vi("y", TensorProto.FLOAT, None)], [init("b", np.ones((2, 2), np.float32))],
               checker=False)
    pc = save(mc, "matmul_no_a_const")
    rc, out, err = run("optimize", pc, "-o", os.path.join(WORK, "folded.onnx"), "--pass",
                       "fold-constants", "-v")
    check(rc == 0 and "input 0 is required" in out + err,
          "fold-constants reports the node (exit %d: %s)" % (rc, (out + err).strip()[-300:]))
    # A mock OM's fused Conv2D without its weight: refused before running,
    # not read past the input array.
    m = model([helper.make_node("Conv2D", ["x"], ["y"], name="c2d", domain="surgeon.mock")],
              [vi("x", TensorProto.FLOAT, [1, 1, 3, 3])], [vi("y", TensorProto.FLOAT, None)],
              extra_opsets=[("surgeon.mock", 1)], checker=False)
    expect_error(m, "conv2d_no_w",
                 "node 'c2d' (Conv2D, surgeon.mock v1): needs at least 2 inputs, got 1")


def memory_errors():
    # An If branch that declares an input: the arity error, no free of unset slots.
    branch = helper.make_graph([helper.make_node("Identity", ["bin"], ["bout"])], "then",
                               [vi("bin", TensorProto.FLOAT, [1])],
                               [vi("bout", TensorProto.FLOAT, [1])])
    m = model([helper.make_node("If", ["c"], ["y"], name="if0", then_branch=branch,
                                else_branch=branch)],
              [vi("c", TensorProto.BOOL, [])], [vi("y", TensorProto.FLOAT, [1])], checker=False)
    expect_error(m, "if_branch_inputs",
                 "node 'if0' (If, ai.onnx v13): subgraph 'then' takes 1 inputs, 0 given")
    # A kernel of no element: the bias (numpy: an empty sum is 0).
    x = np.random.default_rng(1).standard_normal((1, 1, 3, 3)).astype(np.float32)
    b = np.array([0.5, -2.0], np.float32)
    for op, wshape in (("Conv", (2, 1, 0, 0)), ("ConvTranspose", (1, 2, 0, 0))):
        for with_b in (True, False):
            ins = ["x", "w"] + (["b"] if with_b else [])
            inits = [init("w", np.zeros(wshape, np.float32))] + ([init("b", b)] if with_b else [])
            m = model([helper.make_node(op, ins, ["y"], name="c")],
                      [vi("x", TensorProto.FLOAT, [1, 1, 3, 3])],
                      [vi("y", TensorProto.FLOAT, None)], inits, checker=False)
            y = run_outputs(m, "%s_empty_kernel%s" % (op.lower(), "_b" if with_b else ""),
                            {"x": x}).get("y")
            want = (b if with_b else np.zeros(2, np.float32)).reshape(1, 2, 1, 1)
            check(y is not None and y.shape[:2] == (1, 2) and y.size > 0 and
                  np.array_equal(y, np.broadcast_to(want, y.shape)),
                  "%s with W %s%s gives %s everywhere (got %s)" %
                  (op, list(wshape), " and a bias" if with_b else "",
                   "the bias" if with_b else "0", None if y is None else y.ravel()[:4]))


def overflow():
    x = np.arange(10, dtype=np.float32)
    m = model([helper.make_node("Pad", ["x", "p"], ["y"], name="pad")],
              [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, None)],
              [init("p", np.array([I64_MAX, I64_MAX], np.int64))])
    expect_error(m, "pad_int64_max", "node 'pad' (Pad, ai.onnx v13): pads 9223372036854775807 and "
                 "9223372036854775807 overflow axis 0 of float32[2]")
    # Slice 9:INT64_MIN:INT64_MIN on 10 elements is numpy's x[9::-2^63] = [x[9]].
    m = model([helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="sl")],
              [vi("x", TensorProto.FLOAT, [10])], [vi("y", TensorProto.FLOAT, None)],
              [init("s", np.array([9], np.int64)), init("e", np.array([I64_MIN], np.int64)),
               init("a", np.array([0], np.int64)), init("st", np.array([I64_MIN], np.int64))])
    y = run_outputs(m, "slice_int64_min", {"x": x}).get("y")
    want = x[9:I64_MIN:I64_MIN]
    check(y is not None and np.array_equal(y, want), "Slice 9:INT64_MIN:INT64_MIN gives %s "
          "like numpy (got %s)" % (want, y))
    # Tile of [0, 2^62] by [2^62, 4]: [0, 2^64] does not exist.
    m = model([helper.make_node("ConstantOfShape", ["shape"], ["z"], name="zeros",
                                value=numpy_helper.from_array(np.zeros(1, np.int8))),
               helper.make_node("Tile", ["z", "r"], ["y"], name="tile")], [],
              [vi("y", TensorProto.INT8, None)],
              [init("shape", np.array([0, 2**62], np.int64)),
               init("r", np.array([2**62, 4], np.int64))])
    expect_error(m, "tile_overflow", "node 'tile' (Tile, ai.onnx v13): repeats [4611686018427387904,4] "
                 "make axis 1 of int8[0,4611686018427387904] overflow")
    # The same [0, 2^62] as float32 is no tensor at all (numpy refuses it too).
    m = model([helper.make_node("ConstantOfShape", ["shape"], ["z"], name="zeros")], [],
              [vi("z", TensorProto.FLOAT, None)], [init("shape", np.array([0, 2**62], np.int64))])
    expect_error(m, "empty_but_too_large", "node 'zeros' (ConstantOfShape, ai.onnx v13): output 0: "
                 "tensor shape [0,4611686018427387904] is too large (its non-zero dims span over "
                 "2^63 bytes)")
    m = model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[2**40] * 4)],
              [vi("x", TensorProto.FLOAT, [1, 1, 5, 5])], [vi("y", TensorProto.FLOAT, None)],
              [init("w", np.ones((1, 1, 3, 3), np.float32))])
    expect_error(m, "conv_pads_2_40", "node 'conv' (Conv, ai.onnx v13): window [3,3] over [5,5] "
                 "gives [2199023255555,2199023255555]: too many elements")
    m = model([helper.make_node("Range", ["s", "l", "d"], ["y"], name="range")], [],
              [vi("y", TensorProto.INT64, None)],
              [init("s", np.array(I64_MIN, np.int64)), init("l", np.array(I64_MAX, np.int64)),
               init("d", np.array(1, np.int64))])
    expect_error(m, "range_all_int64", "node 'range' (Range, ai.onnx v13): range(-9223372036854775808, "
                 "9223372036854775807, 1) has more than 2^63 elements")
    m = model([helper.make_node("Expand", ["x", "s"], ["y"], name="expand")],
              [vi("x", TensorProto.FLOAT, [1])], [vi("y", TensorProto.FLOAT, None)],
              [init("s", np.array([2**40, 2**40], np.int64))])
    expect_error(m, "expand_huge", "node 'expand' (Expand, ai.onnx v13): the broadcast shape "
                 "[1099511627776,1099511627776] has too many elements")
    m = model([helper.make_node("Col2Im", ["x", "img", "blk"], ["y"], name="col2im")],
              [vi("x", TensorProto.FLOAT, [1, 4, 1])], [vi("y", TensorProto.FLOAT, None)],
              [init("img", np.array([2, 2], np.int64)),
               init("blk", np.array([2**62, 4], np.int64))], opset=18, checker=False)
    expect_error(m, "col2im_block_overflow", "node 'col2im' (Col2Im, ai.onnx v18): block_shape "
                 "[4611686018427387904,4] has too many elements")


def loop_body(extra_nodes, carried, scans, inits=()):
    outs = [vi("c_out", TensorProto.BOOL, [])]
    ins = [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, [])]
    nodes = [helper.make_node("Identity", ["c_in"], ["c_out"])] + extra_nodes
    for name, t in carried:
        ins.append(helper.make_value_info(name + "_in", t))
        outs.append(helper.make_value_info(name + "_out", t))
    for name, t in scans:
        outs.append(helper.make_value_info(name, t))
    return helper.make_graph(nodes, "body", ins, outs, list(inits))


def loops():
    ft = helper.make_tensor_type_proto(TensorProto.FLOAT, [1])
    body = loop_body([helper.make_node("Add", ["x_in", "one"], ["x_out"]),
                      helper.make_node("Identity", ["x_in"], ["scan"])],
                     [("x", ft)], [("scan", ft)], [init("one", np.ones(1, np.float32))])
    node = helper.make_node("Loop", ["M", "", "x0"], ["x", "s"], name="forever", body=body)
    m = model([node], [vi("x0", TensorProto.FLOAT, [1])],
              [vi("x", TensorProto.FLOAT, [1]), vi("s", TensorProto.FLOAT, [None, 1])],
              [init("M", np.array(2**62, np.int64))])
    line = ("node 'forever' (Loop, ai.onnx v13): stopped at the limit of 1000 iterations (trip "
            "count 4611686018427387904): raise max_loop_iterations for a longer loop")
    expect_error(m, "loop_2_62", line, "--max-loop-iterations", "1000")
    # The limit is where it says: 1000 iterations run, the scan output has them all.
    m.graph.initializer[0].CopyFrom(init("M", np.array(1000, np.int64)))
    got = run_outputs(m, "loop_1000", {"x0": np.zeros(1, np.float32)})
    s = got.get("s")
    check(s is not None and np.array_equal(s.ravel(), np.arange(1000, dtype=np.float32)),
          "a Loop of exactly the limit runs (scan output %s)" % (None if s is None else str(s.shape)))
    # fold-constants: the scan output is held to max_bytes as it grows.
    m.graph.initializer[0].CopyFrom(init("M", np.array(2**62, np.int64)))
    mc = model([node], [], [vi("x", TensorProto.FLOAT, [1]), vi("s", TensorProto.FLOAT, [None, 1])],
               [init("M", np.array(2**62, np.int64)), init("x0", np.zeros(1, np.float32))])
    pc = save(mc, "loop_scan_fold")
    rc, out, err = run("optimize", pc, "-o", os.path.join(WORK, "folded.onnx"), "--pass",
                       "fold-constants:max_bytes=4096,max_loop_iterations=0", "-v")
    check(rc == 0 and "scan output 1 of 1025 items of float32[1] grows over the limit of 4096 "
          "bytes at iteration 1024" in out + err,
          "fold-constants stops a growing scan output at max_bytes (exit %d: %s)" %
          (rc, (out + err).strip()[-400:]))


def empty_argmax():
    m = model([helper.make_node("ArgMax", ["x"], ["y"], name="am", axis=1)],
              [vi("x", TensorProto.FLOAT, [3, 0])], [vi("y", TensorProto.INT64, None)])
    expect_error(m, "argmax_empty", "node 'am' (ArgMax, ai.onnx v13): axis 1 of float32[3,0] is "
                 "empty: there is no maximum to index")


def main():
    global SURGEON, WORK
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    SURGEON, WORK = os.path.abspath(sys.argv[1]), sys.argv[2]
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    for part in (missing_inputs, memory_errors, overflow, loops, empty_argmax):
        print("--", part.__name__)
        part()
    print("%d failures" % len(FAILS))
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
