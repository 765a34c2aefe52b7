#!/usr/bin/python3
"""Make the small ONNX models of models/ (run: models/make_models.py [OUTDIR]).

Each model is built with python3-onnx from fixed values, so running this
again gives the same files. The demo and the tests use them.
`models/make_models.py --tests OUTDIR` writes the pass test models
(TEST_MODELS) instead; ctest makes them in the build tree.
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
    m = (t < 5). In float32 the unselected exp(t) is large but finite and
    multiplies by 0; in float16 it overflows to inf and inf*0 = NaN reaches
    the output. Clipping Exp's input to ln(65504) fixes it without changing
    any selected value. Inputs in [0, 1) are safe; inputs up to 5 overflow.
    The selected values stay below e^5 ~ 148, where float16 rounding keeps
    the output within msit's default thresholds once the overflow is gone
    (with a limit of 10 they reach 22026, where float16's spacing of 16
    alone puts the RMSE past 1.0 and no fix could pass).
    """
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16])
    inits = [
        numpy_helper.from_array(np.array(4.0, dtype=np.float32), "scale"),
        numpy_helper.from_array(np.array(0.5, dtype=np.float32), "bias1"),
        numpy_helper.from_array(np.array(0.25, dtype=np.float32), "bias2"),
        numpy_helper.from_array(np.array(5.0, dtype=np.float32), "limit"),
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


def _model(nodes, name, inputs, outputs, inits=(), opset=13, value_info=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits),
                              value_info=list(value_info))
    model = helper.make_model(graph, producer_name="surgeon-tests",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def exp_chain(opset, dtype):
    """x -> Mul -> Exp -> y, to clip before (or after) Exp."""
    raw = {TensorProto.FLOAT: np.array(2.0, dtype=np.float32).tobytes(),
           TensorProto.DOUBLE: np.array(2.0, dtype=np.float64).tobytes(),
           TensorProto.FLOAT16: np.array(2.0, dtype=np.float16).tobytes(),
           TensorProto.BFLOAT16: bytes([0x00, 0x40])}[dtype]
    scale = helper.make_tensor("scale", dtype, [], raw, raw=True)
    nodes = [helper.make_node("Mul", ["x", "scale"], ["t"], name="Mul_0"),
             helper.make_node("Exp", ["t"], ["y"], name="Exp_1")]
    return _model(nodes, "exp_chain", [_vi("x", dtype, [2, 3])], [_vi("y", dtype, [2, 3])],
                  [scale], opset)


def exp_clipped():
    """Exp already behind a tighter Clip (opset 13), and one that is not."""
    lo = numpy_helper.from_array(np.array(-1.0, dtype=np.float32), "lo")
    hi = numpy_helper.from_array(np.array(5.0, dtype=np.float32), "hi")
    nodes = [helper.make_node("Clip", ["x", "lo", "hi"], ["c"], name="Clip_0"),
             helper.make_node("Exp", ["c"], ["y"], name="Exp_1"),
             helper.make_node("Exp", ["x"], ["z"], name="Exp_2")]
    return _model(nodes, "exp_clipped", [_vi("x", TensorProto.FLOAT, [4])],
                  [_vi("y", TensorProto.FLOAT, [4]), _vi("z", TensorProto.FLOAT, [4])],
                  [lo, hi])


def if_exp():
    """If whose branches compute Exp of an outer value (captures), plus an
    Identity inside a branch."""
    then_g = helper.make_graph(
        [helper.make_node("Exp", ["x"], ["t_e"], name="Exp_then"),
         helper.make_node("Identity", ["t_e"], ["then_out"], name="Id_then")],
        "then", [], [_vi("then_out", TensorProto.FLOAT, [3])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["na"], name="Neg_else"),
         helper.make_node("Exp", ["na"], ["else_out"], name="Exp_else")],
        "else", [], [_vi("else_out", TensorProto.FLOAT, [3])])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], name="Sum_0", keepdims=0),
             helper.make_node("Greater", ["s", "zero"], ["cond"], name="Greater_1"),
             helper.make_node("Neg", ["x"], ["a"], name="Neg_outer"),
             helper.make_node("If", ["cond"], ["y"], name="If_2",
                              then_branch=then_g, else_branch=else_g),
             helper.make_node("Add", ["y", "a"], ["z"], name="Add_3")]
    zero = numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")
    return _model(nodes, "if_exp", [_vi("x", TensorProto.FLOAT, [3])],
                  [_vi("z", TensorProto.FLOAT, [3])], [zero])


def expand_bool():
    """Expand on a bool mask (wrapped by cast-around) and on floats (left)."""
    shape = numpy_helper.from_array(np.array([3, 4], dtype=np.int64), "shape")
    nodes = [helper.make_node("Less", ["x", "limit"], ["mask"], name="Less_0"),
             helper.make_node("Expand", ["mask", "shape"], ["big_mask"], name="Expand_1"),
             helper.make_node("Expand", ["x", "shape"], ["big_x"], name="Expand_2"),
             helper.make_node("Where", ["big_mask", "big_x", "zero"], ["y"], name="Where_3")]
    limit = numpy_helper.from_array(np.array(0.5, dtype=np.float32), "limit")
    zero = numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")
    return _model(nodes, "expand_bool", [_vi("x", TensorProto.FLOAT, [1, 4])],
                  [_vi("y", TensorProto.FLOAT, [3, 4])], [shape, limit, zero])


def identities():
    """Identities in the middle, before a graph output, and input -> output."""
    nodes = [helper.make_node("Identity", ["x"], ["a"], name="Id_0"),
             helper.make_node("Relu", ["a"], ["b"], name="Relu_1"),
             helper.make_node("Identity", ["b"], ["y"], name="Id_2"),
             helper.make_node("Identity", ["x"], ["z"], name="Id_3"),
             helper.make_node("Dropout", ["b"], ["d", "dmask"], name="Drop_4"),
             helper.make_node("Neg", ["d"], ["w"], name="Neg_5")]
    return _model(nodes, "identities", [_vi("x", TensorProto.FLOAT, [2])],
                  [_vi("y", TensorProto.FLOAT, [2]), _vi("z", TensorProto.FLOAT, [2]),
                   _vi("w", TensorProto.FLOAT, [2])],
                  value_info=[_vi("a", TensorProto.FLOAT, [2])])


def dead():
    """Dead nodes, an unused initializer, a stale value_info, an unused input."""
    w = numpy_helper.from_array(np.ones([2], dtype=np.float32), "unused_w")
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="Relu_0"),
             helper.make_node("Neg", ["x"], ["n1"], name="Neg_1"),
             helper.make_node("Abs", ["n1"], ["n2"], name="Abs_2")]
    return _model(nodes, "dead", [_vi("x", TensorProto.FLOAT, [2]),
                                  _vi("spare", TensorProto.FLOAT, [2])],
                  [_vi("y", TensorProto.FLOAT, [2])], [w],
                  value_info=[_vi("gone", TensorProto.FLOAT, [2])])


def casts():
    """A no-op Cast, an exact round trip, a chain to shorten, a lossy pair kept."""
    nodes = [helper.make_node("Cast", ["x"], ["x2"], name="Cast_noop", to=TensorProto.FLOAT),
             helper.make_node("Cast", ["i"], ["i64"], name="Cast_up", to=TensorProto.INT64),
             helper.make_node("Cast", ["i64"], ["i32"], name="Cast_down", to=TensorProto.INT32),
             helper.make_node("Cast", ["b"], ["bi"], name="Cast_b1", to=TensorProto.INT32),
             helper.make_node("Cast", ["bi"], ["bf"], name="Cast_b2", to=TensorProto.FLOAT),
             helper.make_node("Cast", ["x2"], ["h"], name="Cast_h", to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["h"], ["xf"], name="Cast_f", to=TensorProto.FLOAT),
             helper.make_node("Add", ["xf", "bf"], ["y"], name="Add_0")]
    return _model(nodes, "casts", [_vi("x", TensorProto.FLOAT, [2]),
                                   _vi("i", TensorProto.INT32, [2]),
                                   _vi("b", TensorProto.BOOL, [2])],
                  [_vi("y", TensorProto.FLOAT, [2]), _vi("i32", TensorProto.INT32, [2])])


def names():
    """Repeated and missing node names, a Loop body that reuses an outer name."""
    body = helper.make_graph(
        [helper.make_node("Add", ["v_in", "x"], ["t"], name="Add"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["t"], ["v_out"], name="Add")],
        "body", [_vi("iter", TensorProto.INT64, []), _vi("cond_in", TensorProto.BOOL, []),
                 _vi("v_in", TensorProto.FLOAT, [2])],
        [_vi("cond_out", TensorProto.BOOL, []), _vi("v_out", TensorProto.FLOAT, [2])])
    trip = numpy_helper.from_array(np.array(3, dtype=np.int64), "trip")
    cond = numpy_helper.from_array(np.array(True), "cond")
    nodes = [helper.make_node("Neg", ["x"], ["t"], name="Add"),
             helper.make_node("Loop", ["trip", "cond", "t"], ["y"], name="Loop", body=body),
             helper.make_node("Relu", ["y"], ["z"])]
    return _model(nodes, "names", [_vi("x", TensorProto.FLOAT, [2])],
                  [_vi("z", TensorProto.FLOAT, [2])], [trip, cond])


def unsorted():
    """Nodes listed consumers first."""
    nodes = [helper.make_node("Add", ["b", "a"], ["y"], name="Add_2"),
             helper.make_node("Neg", ["a"], ["b"], name="Neg_1"),
             helper.make_node("Relu", ["x"], ["a"], name="Relu_0")]
    m = _model(nodes, "unsorted", [_vi("x", TensorProto.FLOAT, [2])],
               [_vi("y", TensorProto.FLOAT, [2])])
    return m


def rebatch():
    """Batch 4 with hard-coded shapes: a leading batch to rewrite, a weight
    Reshape that must not change, a [B*T, C] reshape, ConstantOfShape, Tile."""
    def i64(name, v):
        return numpy_helper.from_array(np.array(v, dtype=np.int64), name)
    w = numpy_helper.from_array(np.arange(8, dtype=np.float32), "w")
    nodes = [helper.make_node("Reshape", ["x", "s_flat"], ["flat"], name="Reshape_flat"),
             helper.make_node("Reshape", ["x", "s_bt"], ["bt"], name="Reshape_bt"),
             helper.make_node("Reshape", ["w", "s_w"], ["w2"], name="Reshape_w"),
             helper.make_node("ConstantOfShape", ["s_cos"], ["zeros"], name="COS_0",
                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.0])),
             helper.make_node("Tile", ["w2", "reps"], ["wt"], name="Tile_0"),
             helper.make_node("Add", ["flat", "zeros"], ["y"], name="Add_0")]
    return _model(nodes, "rebatch", [_vi("x", TensorProto.FLOAT, [4, 3, 2])],
                  [_vi("y", TensorProto.FLOAT, [4, 6]), _vi("bt", TensorProto.FLOAT, [12, 2]),
                   _vi("wt", TensorProto.FLOAT, [16, 2])],
                  [i64("s_flat", [4, 6]), i64("s_bt", [12, 2]), i64("s_w", [4, 2]),
                   i64("s_cos", [4, 6]), i64("reps", [4, 1]), w],
                  value_info=[_vi("flat", TensorProto.FLOAT, [4, 6]),
                              _vi("w2", TensorProto.FLOAT, [4, 2])])


def shaped():
    """Inputs and recorded shapes for set-input-shape."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="Relu_0"),
             helper.make_node("Mul", ["r", "mask"], ["y"], name="Mul_1")]
    return _model(nodes, "shaped", [_vi("x", TensorProto.FLOAT, [1, 4, 16]),
                                    _vi("mask", TensorProto.FLOAT, [1, 4, 16])],
                  [_vi("y", TensorProto.FLOAT, [1, 4, 16])],
                  value_info=[_vi("r", TensorProto.FLOAT, [1, 4, 16])])


def no_exp():
    """Nothing for insert-clip or cast-around to do."""
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="Relu_0")]
    return _model(nodes, "no_exp", [_vi("x", TensorProto.FLOAT, [2])],
                  [_vi("y", TensorProto.FLOAT, [2])])


def fold_consts():
    """Constant subgraphs for fold-constants: a shape computation on a
    static input (with shapes=true), a chain through a Constant node, a
    constant graph output, an expansion over the size limit, a seeded
    random op, an initializer that is also an input (may be fed), and a
    constant shared with a node that stays."""
    def f32(name, v):
        return numpy_helper.from_array(np.array(v, dtype=np.float32), name)

    def i64(name, v):
        return numpy_helper.from_array(np.array(v, dtype=np.int64), name)
    c = helper.make_tensor("c_val", TensorProto.FLOAT, [3], [0.5, 1.0, 1.5])
    nodes = [
        helper.make_node("Shape", ["x"], ["xs"], name="Shape_0"),
        helper.make_node("Gather", ["xs", "zero_i"], ["b"], name="Gather_1", axis=0),
        helper.make_node("Unsqueeze", ["b", "axes0"], ["b1"], name="Unsqueeze_2"),
        helper.make_node("Concat", ["b1", "minus1"], ["new_shape"], name="Concat_3", axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["flat"], name="Reshape_4"),
        helper.make_node("Constant", [], ["c"], name="Const_5", value=c),
        helper.make_node("Add", ["w", "c"], ["wc"], name="Add_6"),
        helper.make_node("Mul", ["wc", "two"], ["wc2"], name="Mul_7"),
        helper.make_node("Mul", ["flat", "wc2"], ["y"], name="Mul_8"),
        helper.make_node("Neg", ["w"], ["wneg"], name="Neg_9"),
        helper.make_node("ConstantOfShape", ["big_shape"], ["big"], name="COS_10",
                         value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.5])),
        helper.make_node("ReduceSum", ["big"], ["bigsum"], name="Sum_11", keepdims=0),
        helper.make_node("Add", ["x", "bigsum"], ["z"], name="Add_12"),
        helper.make_node("RandomUniform", [], ["r"], name="Rand_13", shape=[3], seed=7.0),
        helper.make_node("Add", ["r", "bias_in"], ["r1"], name="Add_14"),
        helper.make_node("Mul", ["x", "r1"], ["rz"], name="Mul_15"),
        helper.make_node("Mul", ["x", "w"], ["xw"], name="Mul_16"),
    ]
    inits = [i64("zero_i", 0), i64("axes0", [0]), i64("minus1", [-1]),
             f32("w", [1.0, 2.0, 3.0]), f32("two", 2.0), i64("big_shape", [512, 1024]),
             f32("bias_in", [0.0, 0.0, 0.0])]
    return _model(nodes, "fold_consts",
                  [_vi("x", TensorProto.FLOAT, [2, 3]), _vi("bias_in", TensorProto.FLOAT, [3])],
                  [_vi("y", TensorProto.FLOAT, [2, 3]), _vi("wneg", TensorProto.FLOAT, [3]),
                   _vi("z", TensorProto.FLOAT, [2, 3]), _vi("rz", TensorProto.FLOAT, [2, 3]),
                   _vi("xw", TensorProto.FLOAT, [2, 3])],
                  inits, value_info=[_vi("wc", TensorProto.FLOAT, [3])])


def fold_if():
    """Folding across scopes: an outer folded value read by If branches, a
    branch Mul of it and a branch Constant that folds inside the branch,
    and an If on a constant condition whose branches read only constants
    (folds whole)."""
    def f32(name, v):
        return numpy_helper.from_array(np.array(v, dtype=np.float32), name)
    two = helper.make_tensor("two_val", TensorProto.FLOAT, [], [2.0])
    then1 = helper.make_graph(
        [helper.make_node("Constant", [], ["two_t"], name="Const_t", value=two),
         helper.make_node("Mul", ["ab", "two_t"], ["t1"], name="Mul_t"),
         helper.make_node("Add", ["x", "t1"], ["then_out"], name="Add_t")],
        "then1", [], [_vi("then_out", TensorProto.FLOAT, [2, 3])])
    else1 = helper.make_graph(
        [helper.make_node("Sub", ["x", "ab"], ["else_out"], name="Sub_e")],
        "else1", [], [_vi("else_out", TensorProto.FLOAT, [2, 3])])
    then2 = helper.make_graph(
        [helper.make_node("Neg", ["ab"], ["o1"], name="Neg_t2")],
        "then2", [], [_vi("o1", TensorProto.FLOAT, [3])])
    else2 = helper.make_graph(
        [helper.make_node("Abs", ["ab"], ["o2"], name="Abs_e2")],
        "else2", [], [_vi("o2", TensorProto.FLOAT, [3])])
    nodes = [
        helper.make_node("Add", ["a", "b"], ["ab"], name="Add_o"),
        helper.make_node("ReduceSum", ["x"], ["s"], name="Sum_0", keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["cond"], name="Greater_1"),
        helper.make_node("If", ["cond"], ["y"], name="If_2", then_branch=then1,
                         else_branch=else1),
        helper.make_node("If", ["yes"], ["k"], name="If_3", then_branch=then2,
                         else_branch=else2),
        helper.make_node("Add", ["x", "k"], ["z"], name="Add_4"),
    ]
    inits = [f32("a", [1.0, -2.0, 3.0]), f32("b", [0.5, 0.5, 0.5]), f32("zero", 0.0),
             numpy_helper.from_array(np.array(True), "yes")]
    return _model(nodes, "fold_if", [_vi("x", TensorProto.FLOAT, [2, 3])],
                  [_vi("y", TensorProto.FLOAT, [2, 3]), _vi("z", TensorProto.FLOAT, [2, 3])],
                  inits)


def _rand(shape, seed, lo=-1.0, hi=1.0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return rng.uniform(lo, hi, shape).astype(dtype)


def _bn_inits(prefix, ch, seed, dtype=np.float32):
    return [numpy_helper.from_array(_rand([ch], seed, 0.5, 1.5, dtype), prefix + "_scale"),
            numpy_helper.from_array(_rand([ch], seed + 1, -0.5, 0.5, dtype), prefix + "_b"),
            numpy_helper.from_array(_rand([ch], seed + 2, -0.5, 0.5, dtype), prefix + "_mean"),
            numpy_helper.from_array(_rand([ch], seed + 3, 0.5, 2.0, dtype), prefix + "_var")]


def _bn(prefix, x, y):
    return helper.make_node("BatchNormalization", [x, prefix + "_scale", prefix + "_b",
                                                   prefix + "_mean", prefix + "_var"],
                            [y], name=prefix, epsilon=1e-3)


def fold_bn():
    """BatchNormalization after Conv (with bias), Conv without bias (its
    weight shared with a Conv that stays), grouped ConvTranspose, Gemm
    (transB, C, beta; and plain B with a C of shape [N, 1]) and rank-2
    MatMul; and ones that must stay: after a Relu, after a Conv read twice,
    after a rank-3 MatMul."""
    def w(name, shape, seed):
        return numpy_helper.from_array(_rand(shape, seed), name)
    nodes = [
        helper.make_node("Conv", ["x", "W0", "B0"], ["c0"], name="Conv_0", pads=[1, 1, 1, 1]),
        _bn("BN_0", "c0", "b0"),
        helper.make_node("Relu", ["b0"], ["r0"], name="Relu_0"),
        helper.make_node("Conv", ["r0", "W1"], ["c1"], name="Conv_1"),
        _bn("BN_1", "c1", "b1"),
        helper.make_node("ConvTranspose", ["b1", "W2"], ["ct"], name="ConvT_2", group=2,
                         strides=[2, 2]),
        _bn("BN_2", "ct", "y1"),
        helper.make_node("Relu", ["y1"], ["r3"], name="Relu_3"),
        _bn("BN_3", "r3", "y2"),
        helper.make_node("Conv", ["r0", "W1"], ["c4"], name="Conv_4"),
        _bn("BN_4", "c4", "b4"),
        helper.make_node("Add", ["b4", "c4"], ["y3"], name="Add_4"),
        helper.make_node("Gemm", ["x2", "W5", "C5"], ["g"], name="Gemm_5", transB=1, beta=0.5,
                         alpha=2.0),
        _bn("BN_5", "g", "y4"),
        helper.make_node("MatMul", ["x2", "W6"], ["mm"], name="MatMul_6"),
        _bn("BN_6", "mm", "y5"),
        helper.make_node("MatMul", ["x3", "W6"], ["mm3"], name="MatMul_7"),
        _bn("BN_7", "mm3", "y6"),
        helper.make_node("Gemm", ["x2", "W8", "C8"], ["g8"], name="Gemm_8"),
        _bn("BN_8", "g8", "y7"),
    ]
    inits = ([w("W0", [3, 2, 3, 3], 1), w("B0", [3], 2), w("W1", [4, 3, 1, 1], 3),
              w("W2", [4, 1, 2, 2], 4), w("W5", [4, 5], 5), w("C5", [4], 6),
              w("W6", [5, 3], 7), w("W8", [5, 4], 8), w("C8", [2, 1], 9)] +
             _bn_inits("BN_0", 3, 10) + _bn_inits("BN_1", 4, 20) + _bn_inits("BN_2", 2, 30) +
             _bn_inits("BN_3", 2, 40) + _bn_inits("BN_4", 4, 50) + _bn_inits("BN_5", 4, 60) +
             _bn_inits("BN_6", 3, 70) + _bn_inits("BN_7", 2, 80) + _bn_inits("BN_8", 4, 90))
    return _model(nodes, "fold_bn",
                  [_vi("x", TensorProto.FLOAT, [1, 2, 4, 4]), _vi("x2", TensorProto.FLOAT, [2, 5]),
                   _vi("x3", TensorProto.FLOAT, [2, 2, 5])],
                  [_vi("y1", TensorProto.FLOAT, [1, 2, 8, 8]),
                   _vi("y2", TensorProto.FLOAT, [1, 2, 8, 8]),
                   _vi("y3", TensorProto.FLOAT, [1, 4, 4, 4]),
                   _vi("y4", TensorProto.FLOAT, [2, 4]), _vi("y5", TensorProto.FLOAT, [2, 3]),
                   _vi("y6", TensorProto.FLOAT, [2, 2, 3]), _vi("y7", TensorProto.FLOAT, [2, 4])],
                  inits)


def fold_bn_shared():
    """Two Conv + BatchNormalization pairs whose BatchNormalizations share
    their statistics: both fold, and each shared constant is removed once."""
    nodes = [
        helper.make_node("Conv", ["x", "W0"], ["c0"], name="Conv_0"),
        _bn("BN", "c0", "b0"),
        helper.make_node("Conv", ["b0", "W1"], ["c1"], name="Conv_1"),
        helper.make_node("BatchNormalization", ["c1", "BN_scale", "BN_b", "BN_mean", "BN_var"],
                         ["y"], name="BN_again", epsilon=1e-3),
    ]
    inits = [numpy_helper.from_array(_rand([3, 3, 1, 1], 70), "W0"),
             numpy_helper.from_array(_rand([3, 3, 1, 1], 71), "W1")] + _bn_inits("BN", 3, 72)
    return _model(nodes, "fold_bn_shared", [_vi("x", TensorProto.FLOAT, [1, 3, 2, 2])],
                  [_vi("y", TensorProto.FLOAT, [1, 3, 2, 2])], inits)


def fold_bn_fp16():
    """Conv + BatchNormalization in float16 (folded in double, stored fp16)."""
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="Conv_0"),
             _bn("BN_0", "c", "y")]
    inits = ([numpy_helper.from_array(_rand([3, 2, 1, 1], 1, dtype=np.float16), "W")] +
             _bn_inits("BN_0", 3, 10, np.float16))
    return _model(nodes, "fold_bn_fp16", [_vi("x", TensorProto.FLOAT16, [1, 2, 3, 3])],
                  [_vi("y", TensorProto.FLOAT16, [1, 3, 3, 3])], inits)


def fold_bn_if(ir3=False):
    """Conv + BatchNormalization inside an If branch, reading the weights
    and statistics from the main graph (captures). With ir3, an IR 3 model
    (opset 8) whose initializers are graph inputs too."""
    then_g = helper.make_graph(
        [helper.make_node("Conv", ["x", "W"], ["c"], name="Conv_t"),
         _bn("BN_t", "c", "then_out")],
        "then", [], [_vi("then_out", TensorProto.FLOAT, [1, 2, 3, 3])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["else_out"], name="Neg_e")],
        "else", [], [_vi("else_out", TensorProto.FLOAT, [1, 2, 3, 3])])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], name="Sum_0", keepdims=0),
             helper.make_node("Greater", ["s", "zero"], ["cond"], name="Greater_1"),
             helper.make_node("If", ["cond"], ["y"], name="If_2", then_branch=then_g,
                              else_branch=else_g)]
    inits = ([numpy_helper.from_array(_rand([2, 2, 1, 1], 1), "W"),
              numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")] +
             _bn_inits("BN_t", 2, 10))
    ins = [_vi("x", TensorProto.FLOAT, [1, 2, 3, 3])]
    if not ir3:
        return _model(nodes, "fold_bn_if", ins, [_vi("y", TensorProto.FLOAT, [1, 2, 3, 3])],
                      inits)
    ins += [_vi(t.name, TensorProto.FLOAT, list(t.dims)) for t in inits]
    graph = helper.make_graph(nodes, "fold_bn_if_ir3", ins,
                              [_vi("y", TensorProto.FLOAT, [1, 2, 3, 3])], inits)
    model = helper.make_model(graph, producer_name="surgeon-tests",
                              opset_imports=[helper.make_opsetid("", 8)])
    model.ir_version = 3
    return model


def fold_ir3():
    """IR version 3: initializers are listed as inputs too (and constant)."""
    w = numpy_helper.from_array(np.array([1.0, 2.0, 3.0], dtype=np.float32), "w")
    nodes = [helper.make_node("Add", ["w", "w"], ["ww"], name="Add_0"),
             helper.make_node("Mul", ["x", "ww"], ["y"], name="Mul_1")]
    graph = helper.make_graph(nodes, "fold_ir3", [_vi("x", TensorProto.FLOAT, [3]),
                                                  _vi("w", TensorProto.FLOAT, [3])],
                              [_vi("y", TensorProto.FLOAT, [3])], [w])
    model = helper.make_model(graph, producer_name="surgeon-tests",
                              opset_imports=[helper.make_opsetid("", 8)])
    model.ir_version = 3
    return model


def fold_bn_ir3():
    """Conv + BatchNormalization (opset 8) in an IR 3 model, whose
    initializers are all graph inputs too."""
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="Conv_0"),
             _bn("BN_0", "c", "y")]
    inits = ([numpy_helper.from_array(_rand([3, 2, 1, 1], 1), "W")] + _bn_inits("BN_0", 3, 10))
    ins = [_vi("x", TensorProto.FLOAT, [1, 2, 3, 3])] + [
        _vi(t.name, TensorProto.FLOAT, list(t.dims)) for t in inits]
    graph = helper.make_graph(nodes, "fold_bn_ir3", ins,
                              [_vi("y", TensorProto.FLOAT, [1, 3, 3, 3])], inits)
    model = helper.make_model(graph, producer_name="surgeon-tests",
                              opset_imports=[helper.make_opsetid("", 8)])
    model.ir_version = 3
    return model


def free_batch():
    """A symbolic batch N: Reshape to [N*4, 2] with a hard-coded -1 and a
    leading batch in a ConstantOfShape-free graph, for set-batch."""
    shape = numpy_helper.from_array(np.array([-1, 2], dtype=np.int64), "s_flat")
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="Relu_0"),
             helper.make_node("Reshape", ["r", "s_flat"], ["y"], name="Reshape_1")]
    return _model(nodes, "free_batch", [_vi("x", TensorProto.FLOAT, ["N", 4, 2])],
                  [_vi("y", TensorProto.FLOAT, [None, 2])], [shape])


def _const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def conv_bn_act():
    """Conv -> BatchNormalization -> Relu -> Conv -> Clip(0, 6), for the mock
    compiler's ConvBatchnormFusionPass, TbeCommonRules0FusionPass (Conv +
    Relu) and ConvClipByValueFusionPass (Conv + Clip)."""
    rng = np.random.default_rng(5)
    f32 = np.float32
    inits = [
        _const("w0", rng.normal(0, 0.5, [4, 3, 3, 3]).astype(f32)),
        _const("b0", rng.normal(0, 0.1, [4]).astype(f32)),
        _const("bn_scale", rng.uniform(0.5, 1.5, [4]).astype(f32)),
        _const("bn_bias", rng.normal(0, 0.2, [4]).astype(f32)),
        _const("bn_mean", rng.normal(0, 0.3, [4]).astype(f32)),
        _const("bn_var", rng.uniform(0.2, 2.0, [4]).astype(f32)),
        _const("w1", rng.normal(0, 0.3, [2, 4, 1, 1]).astype(f32)),
        _const("lo", np.array(0.0, f32)),
        _const("hi", np.array(6.0, f32)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="Conv_0", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c0", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
                         ["n0"], name="BatchNormalization_1", epsilon=1e-3),
        helper.make_node("Relu", ["n0"], ["r0"], name="Relu_2"),
        helper.make_node("Conv", ["r0", "w1"], ["c1"], name="Conv_3"),
        helper.make_node("Clip", ["c1", "lo", "hi"], ["y"], name="Clip_4"),
    ]
    return _model(nodes, "conv_bn_act", [_vi("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                  [_vi("y", TensorProto.FLOAT, [1, 2, 8, 8])], inits)


def matmul_bias():
    """MatMul + Add(bias), Gemm(transB) + Add(bias), and Gemm with C, for
    MatMulBiasAddFusionPass; the bias sits first in one Add."""
    rng = np.random.default_rng(6)
    f32 = np.float32
    inits = [
        _const("w0", rng.normal(0, 0.5, [8, 6]).astype(f32)),
        _const("bias0", rng.normal(0, 0.5, [6]).astype(f32)),
        _const("w1", rng.normal(0, 0.5, [6, 8]).astype(f32)),
        _const("bias1", rng.normal(0, 0.5, [1, 6]).astype(f32)),
        _const("w2", rng.normal(0, 0.5, [8, 5]).astype(f32)),
        _const("c2", rng.normal(0, 0.5, [5]).astype(f32)),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w0"], ["mm"], name="MatMul_0"),
        helper.make_node("Add", ["mm", "bias0"], ["y"], name="Add_1"),
        helper.make_node("Gemm", ["x2", "w1"], ["g"], name="Gemm_2", transB=1, alpha=0.5),
        helper.make_node("Add", ["bias1", "g"], ["y2"], name="Add_3"),
        helper.make_node("Gemm", ["x2", "w2", "c2"], ["y3"], name="Gemm_4", beta=2.0),
    ]
    return _model(nodes, "matmul_bias",
                  [_vi("x", TensorProto.FLOAT, [2, 5, 8]), _vi("x2", TensorProto.FLOAT, [3, 8])],
                  [_vi("y", TensorProto.FLOAT, [2, 5, 6]), _vi("y2", TensorProto.FLOAT, [3, 6]),
                   _vi("y3", TensorProto.FLOAT, [3, 5])], inits)


def softmax_pattern(opset=13):
    """A softmax written out (ReduceMax, Sub, Exp, ReduceSum, Div) over the
    last axis, for SoftmaxFusionPass (opset 13: ReduceSum takes its axes as
    an input, ReduceMax as an attribute; opset 18: both as inputs)."""
    rmax = (helper.make_node("ReduceMax", ["x", "axes"], ["m"], name="ReduceMax_0", keepdims=1)
            if opset >= 18 else
            helper.make_node("ReduceMax", ["x"], ["m"], name="ReduceMax_0", axes=[-1], keepdims=1))
    nodes = [
        rmax,
        helper.make_node("Sub", ["x", "m"], ["d"], name="Sub_1"),
        helper.make_node("Exp", ["d"], ["e"], name="Exp_2"),
        helper.make_node("ReduceSum", ["e", "axes"], ["s"], name="ReduceSum_3", keepdims=1),
        helper.make_node("Div", ["e", "s"], ["y"], name="Div_4"),
    ]
    return _model(nodes, "softmax_pattern", [_vi("x", TensorProto.FLOAT, [2, 3, 10])],
                  [_vi("y", TensorProto.FLOAT, [2, 3, 10])],
                  [_const("axes", np.array([-1], np.int64))], opset=opset)


def conformer_attn():
    """A conformer's self-attention in miniature, its softmax written out
    (ReduceMax, Sub, Exp, ReduceSum, Div, as SoftmaxFusionPass fuses it),
    beside Exps that insert-clip must treat each its own way: one on an
    unbounded value (clipped), one behind a Clip (already tighter), one
    behind Min - 1 (at most 9: skipped) and a scaled max subtraction
    ((x - max) * 0.5: at most 0, skipped)."""
    rng = np.random.default_rng(11)
    f32 = np.float32
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"], name="q_proj"),
        helper.make_node("MatMul", ["x", "wk"], ["k"], name="k_proj"),
        helper.make_node("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
        helper.make_node("Mul", ["s", "scale"], ["ss"], name="scale_mul"),
        helper.make_node("ReduceMax", ["ss"], ["mx"], name="softmax_max", axes=[-1], keepdims=1),
        helper.make_node("Sub", ["ss", "mx"], ["d"], name="softmax_sub"),
        helper.make_node("Exp", ["d"], ["e"], name="softmax_exp"),
        helper.make_node("ReduceSum", ["e", "axes"], ["se"], name="softmax_sum", keepdims=1),
        helper.make_node("Div", ["e", "se"], ["p"], name="softmax_div"),
        helper.make_node("MatMul", ["p", "x"], ["o"], name="attn_out"),
        helper.make_node("Exp", ["o"], ["eo"], name="exp_free"),
        helper.make_node("Clip", ["o", "lo", "hi"], ["oc"], name="clip_o"),
        helper.make_node("Exp", ["oc"], ["eoc"], name="exp_clipped"),
        helper.make_node("Min", ["o", "cap"], ["om"], name="min_o"),
        helper.make_node("Sub", ["om", "one"], ["om1"], name="min_sub"),
        helper.make_node("Exp", ["om1"], ["eom"], name="exp_min"),
        helper.make_node("ReduceMax", ["o"], ["omx"], name="o_max", axes=[1], keepdims=1),
        helper.make_node("Sub", ["o", "omx"], ["od"], name="o_sub"),
        helper.make_node("Mul", ["od", "half"], ["odh"], name="o_half"),
        helper.make_node("Exp", ["odh"], ["eod"], name="exp_scaled"),
        helper.make_node("Add", ["eo", "eoc"], ["y0"], name="add_0"),
        helper.make_node("Add", ["y0", "eom"], ["y1"], name="add_1"),
        helper.make_node("Add", ["y1", "eod"], ["y"], name="add_2"),
    ]
    inits = [_const("wq", rng.normal(0, 0.5, [8, 8]).astype(f32)),
             _const("wk", rng.normal(0, 0.5, [8, 8]).astype(f32)),
             _const("scale", np.array(8 ** -0.5, f32)), _const("axes", np.array([-1], np.int64)),
             _const("lo", np.array(-5, f32)), _const("hi", np.array(9, f32)),
             _const("cap", np.array(10, f32)), _const("one", np.array(1, f32)),
             _const("half", np.array(0.5, f32))]
    return _model(nodes, "conformer_attn", [_vi("x", TensorProto.FLOAT, [1, 6, 8])],
                  [_vi("y", TensorProto.FLOAT, [1, 6, 8])], inits)


def layernorm_pattern(opset=13):
    """A layer norm as exporters write it (ReduceMean, Sub, Pow, ReduceMean,
    Add, Sqrt, Div, Mul, Add), with the exponent and epsilon as Constant
    nodes, for LayerNormONNXFusionPass (opset 18: the axes as an input)."""
    rng = np.random.default_rng(7)
    f32 = np.float32
    two = helper.make_tensor("two_v", TensorProto.FLOAT, [], [2.0])
    eps = helper.make_tensor("eps_v", TensorProto.FLOAT, [], [1e-5])
    nodes = [
        helper.make_node("Constant", [], ["two"], name="Constant_0", value=two),
        helper.make_node("Constant", [], ["eps"], name="Constant_1", value=eps),
        helper.make_node("ReduceMean", ["x", "axes"], ["mean"], name="ReduceMean_2")
        if opset >= 18 else
        helper.make_node("ReduceMean", ["x"], ["mean"], name="ReduceMean_2", axes=[-1]),
        helper.make_node("Sub", ["x", "mean"], ["d"], name="Sub_3"),
        helper.make_node("Pow", ["d", "two"], ["p"], name="Pow_4"),
        helper.make_node("ReduceMean", ["p", "axes"], ["var"], name="ReduceMean_5")
        if opset >= 18 else
        helper.make_node("ReduceMean", ["p"], ["var"], name="ReduceMean_5", axes=[-1]),
        helper.make_node("Add", ["var", "eps"], ["ve"], name="Add_6"),
        helper.make_node("Sqrt", ["ve"], ["sd"], name="Sqrt_7"),
        helper.make_node("Div", ["d", "sd"], ["n"], name="Div_8"),
        helper.make_node("Mul", ["n", "gamma"], ["g"], name="Mul_9"),
        helper.make_node("Add", ["g", "beta"], ["y"], name="Add_10"),
    ]
    inits = [_const("gamma", rng.uniform(0.5, 1.5, [16]).astype(f32)),
             _const("beta", rng.normal(0, 0.2, [16]).astype(f32))]
    if opset >= 18:
        inits.append(_const("axes", np.array([-1], np.int64)))
    return _model(nodes, "layernorm_pattern", [_vi("x", TensorProto.FLOAT, [2, 4, 16])],
                  [_vi("y", TensorProto.FLOAT, [2, 4, 16])], inits, opset=opset)


def op18_blocks():
    """Opset-18 forms for the passes, batch 4: Resize with an `axes`
    attribute whose sizes [4, 8] hold no batch (the 4 is a height),
    ReduceMean with axes as an input, Split by num_outputs, Pad with axes,
    a Reshape of the batch, and a constant branch (ReduceMax with an axes
    input, Split num_outputs) for fold-constants."""
    f32 = np.float32
    nodes = [
        helper.make_node("Resize", ["x", "", "", "hw"], ["r"], name="Resize_hw", mode="nearest",
                         axes=[2, 3]),
        helper.make_node("ReduceMean", ["r", "ax23"], ["m"], name="ReduceMean_hw", keepdims=1),
        helper.make_node("Split", ["x"], ["s1", "s2"], name="Split_w", axis=3, num_outputs=2),
        helper.make_node("Pad", ["s1", "pads", "", "ax3"], ["p"], name="Pad_w"),
        helper.make_node("Reshape", ["x", "flat_shape"], ["flat"], name="Reshape_flat"),
        helper.make_node("ReduceMax", ["c", "ax1"], ["cm"], name="ReduceMax_c", keepdims=0),
        helper.make_node("Split", ["c"], ["c1", "c2"], name="Split_c", axis=1, num_outputs=2),
        helper.make_node("Add", ["c1", "c2"], ["c12"], name="Add_c"),
        helper.make_node("Mul", ["m", "cm"], ["mc"], name="Mul_mc"),
    ]
    inits = [_const("hw", np.array([4, 8], np.int64)), _const("ax23", np.array([2, 3], np.int64)),
             _const("pads", np.array([1, 2], np.int64)), _const("ax3", np.array([3], np.int64)),
             _const("flat_shape", np.array([4, -1], np.int64)),
             _const("c", np.arange(8, dtype=f32).reshape(2, 4)),
             _const("ax1", np.array([1], np.int64))]
    return _model(nodes, "op18_blocks", [_vi("x", TensorProto.FLOAT, [4, 3, 4, 6])],
                  [_vi("r", TensorProto.FLOAT, [4, 3, 4, 8]),
                   _vi("mc", TensorProto.FLOAT, [4, 3, 1, 2]),
                   _vi("s2", TensorProto.FLOAT, [4, 3, 4, 3]),
                   _vi("p", TensorProto.FLOAT, [4, 3, 4, 6]),
                   _vi("flat", TensorProto.FLOAT, [4, 72]),
                   _vi("c12", TensorProto.FLOAT, [2, 2])], inits, opset=18)


def mixed_ops():
    """A cube op, ops allow_mix_precision keeps in float32 and one it does
    not, for the precision modes: MatMul -> Exp -> ReduceSum -> Relu."""
    w = _const("w", (np.arange(24, dtype=np.float32).reshape(8, 3) - 12) / 16)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["mm"], name="MatMul_0"),
        helper.make_node("Exp", ["mm"], ["e"], name="Exp_1"),
        helper.make_node("ReduceSum", ["e", "axes"], ["s"], name="ReduceSum_2", keepdims=1),
        helper.make_node("Relu", ["s"], ["y"], name="Relu_3"),
    ]
    return _model(nodes, "mixed_ops", [_vi("x", TensorProto.FLOAT, [2, 8])],
                  [_vi("y", TensorProto.FLOAT, [2, 1])],
                  [w, _const("axes", np.array([1], np.int64))])


def matmul_acc():
    """One MatMul with symbolic sizes, to see how a cube unit accumulates."""
    nodes = [helper.make_node("MatMul", ["a", "b"], ["y"], name="MatMul_0")]
    return _model(nodes, "matmul_acc", [_vi("a", TensorProto.FLOAT, ["M", "K"]),
                                        _vi("b", TensorProto.FLOAT, ["K", "N"])],
                  [_vi("y", TensorProto.FLOAT, ["M", "N"])])

def fold_new_dtypes():
    """Constants of the opset-21 element types for fold-constants: an int4
    weight dequantized (packed two per byte, -8..7), a float32 constant cast
    to float8e4m3fn and back (rounded to 3 mantissa bits), beside a
    non-constant input."""
    w = TensorProto()
    w.name, w.data_type = "w4", 22  # INT4, unknown to python3-onnx 1.12
    w.dims.extend([4])
    nib = [v & 15 for v in (-8, -1, 3, 7)]
    w.raw_data = bytes([nib[0] | nib[1] << 4, nib[2] | nib[3] << 4])
    nodes = [
        helper.make_node("DequantizeLinear", ["w4", "scale"], ["wf"], name="Dq_w"),
        helper.make_node("Cast", ["c"], ["c8"], name="Cast_f8", to=17),
        helper.make_node("Cast", ["c8"], ["cf"], name="Cast_back", to=TensorProto.FLOAT),
        helper.make_node("Add", ["wf", "cf"], ["k"], name="Add_k"),
        helper.make_node("Mul", ["x", "k"], ["y"], name="Mul_y"),
    ]
    inits = [w, _const("scale", np.array(0.5, np.float32)),
             _const("c", np.array([0.3, 1.1, -2.7, 300.0], np.float32))]
    return _model(nodes, "fold_new_dtypes", [_vi("x", TensorProto.FLOAT, [4])],
                  [_vi("y", TensorProto.FLOAT, [4])], inits, opset=21)

def casts_new_dtypes():
    """Cast round trips through the opset-21 types for merge-casts: float8
    -> float16 -> float8 and int4 -> int8 -> int4 (exact: removed), float32
    -> float8 -> float32 (lossy: kept)."""
    nodes = [
        helper.make_node("Cast", ["x"], ["a"], name="to_f8", to=17),
        helper.make_node("Cast", ["a"], ["b"], name="f8_to_f16", to=TensorProto.FLOAT16),
        helper.make_node("Cast", ["b"], ["c"], name="f16_to_f8", to=17),
        helper.make_node("Cast", ["c"], ["y"], name="f8_to_f32", to=TensorProto.FLOAT),
        helper.make_node("Cast", ["x4"], ["i8"], name="i4_to_i8", to=TensorProto.INT8),
        helper.make_node("Cast", ["i8"], ["i4"], name="i8_to_i4", to=22),
        helper.make_node("Cast", ["i4"], ["y4"], name="i4_to_f32", to=TensorProto.FLOAT),
    ]
    x4 = helper.make_tensor_value_info("x4", TensorProto.FLOAT, [4])
    x4.type.tensor_type.elem_type = 22  # INT4
    return _model(nodes, "casts_new_dtypes", [_vi("x", TensorProto.FLOAT, [4]), x4],
                  [_vi("y", TensorProto.FLOAT, [4]), _vi("y4", TensorProto.FLOAT, [4])], opset=21)


TEST_MODELS = {
    "exp_opset6.onnx": lambda: exp_chain(6, TensorProto.FLOAT),
    "exp_opset11.onnx": lambda: exp_chain(11, TensorProto.FLOAT),
    "exp_opset13.onnx": lambda: exp_chain(13, TensorProto.FLOAT),
    "exp_fp16.onnx": lambda: exp_chain(13, TensorProto.FLOAT16),
    "exp_bf16.onnx": lambda: exp_chain(13, TensorProto.BFLOAT16),
    "exp_fp64.onnx": lambda: exp_chain(13, TensorProto.DOUBLE),
    "exp_clipped.onnx": exp_clipped,
    "if_exp.onnx": if_exp,
    "expand_bool.onnx": expand_bool,
    "identities.onnx": identities,
    "dead.onnx": dead,
    "casts.onnx": casts,
    "names.onnx": names,
    "unsorted.onnx": unsorted,
    "rebatch.onnx": rebatch,
    "shaped.onnx": shaped,
    "no_exp.onnx": no_exp,
    "exp_overflow.onnx": exp_overflow,
    "fold_consts.onnx": fold_consts,
    "fold_if.onnx": fold_if,
    "fold_bn.onnx": fold_bn,
    "fold_bn_fp16.onnx": fold_bn_fp16,
    "fold_bn_shared.onnx": fold_bn_shared,
    "fold_bn_if.onnx": fold_bn_if,
    "free_batch.onnx": free_batch,
    "fold_ir3.onnx": fold_ir3,
    "fold_bn_ir3.onnx": fold_bn_ir3,
    "fold_bn_if_ir3.onnx": lambda: fold_bn_if(ir3=True),
    "conv_bn_act.onnx": conv_bn_act,
    "matmul_bias.onnx": matmul_bias,
    "softmax_pattern.onnx": softmax_pattern,
    "conformer_attn.onnx": conformer_attn,
    "layernorm_pattern.onnx": layernorm_pattern,
    "softmax_pattern_op18.onnx": lambda: softmax_pattern(18),
    "layernorm_pattern_op18.onnx": lambda: layernorm_pattern(18),
    "op18_blocks.onnx": op18_blocks,
    "fold_new_dtypes.onnx": fold_new_dtypes,
    "casts_new_dtypes.onnx": casts_new_dtypes,
    "mixed_ops.onnx": mixed_ops,
    "matmul_acc.onnx": matmul_acc,
}


MODELS = {
    "exp_overflow.onnx": exp_overflow,
}


def main():
    args = sys.argv[1:]
    models = MODELS
    if args and args[0] == "--tests":
        models = TEST_MODELS
        args = args[1:]
    out = args[0] if args else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    for name, make in models.items():
        model = make()
        # These break SSA form or order on purpose (the passes fix them).
        # Opsets newer than python3-onnx knows (Debian's 1.12 stops at 17)
        # cannot be checked by it.
        newest = onnx.defs.onnx_opset_version()
        if name not in ("names.onnx", "unsorted.onnx") and \
                all(o.version <= newest for o in model.opset_import):
            onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, name))


if __name__ == "__main__":
    main()
