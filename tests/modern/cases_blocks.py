"""Blocks of a modern network, built by script (issue 16 part 6's real
opset-18+ model: Debian's torch 1.13 exports at opset 17 at most): the
forms exporters write at opsets 18 to 21 chained as a network chains
them, with ONNX Runtime 1.30 as the oracle.

  block18: Conv, ReduceMean with axes as an input, Split with
           num_outputs, a gate (Sigmoid, Mul), Resize (linear, scales),
           Transpose, LayerNormalization, ReduceMax and ReduceL2 with
           axes inputs, Pad with axes;
  block21: GroupNormalization 21 (per-channel scale), Gelu, Pad wrap with
           axes, Split num_outputs into three, Mish, CenterCropPad,
           Resize with antialias (cubic, downscale), ReduceSum.

Interface: see cases_dtypes.py. tests/modern_block_test.py runs the same
models through the command line (inspect, run --check, run, optimize).
"""

import numpy as np
from onnx import TensorProto, helper

F, I64 = TensorProto.FLOAT, TensorProto.INT64
rng = np.random.default_rng(1821)


def _t(name, a):
    a = np.asarray(a)
    dt = F if a.dtype == np.float32 else I64
    return helper.make_tensor(name, dt, list(a.shape), a.ravel().tolist())


def _f(*shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def _model(name, nodes, inputs, outputs, opset, inits):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="cases_blocks")
    m.ir_version = 8 if opset <= 18 else 10
    return m


def block18():
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        n("ReduceMean", ["c", "hw"], ["m"], name="mean", keepdims=1),
        n("Sub", ["c", "m"], ["d"], name="center"),
        n("Split", ["d"], ["a", "g"], name="split", axis=1, num_outputs=2),
        n("Sigmoid", ["g"], ["sg"], name="sigmoid"),
        n("Mul", ["a", "sg"], ["gated"], name="gate"),
        n("Resize", ["gated", "", "scales"], ["up"], name="resize", mode="linear"),
        n("Transpose", ["up"], ["nhwc"], name="to_nhwc", perm=[0, 2, 3, 1]),
        n("LayerNormalization", ["nhwc", "ln_s", "ln_b"], ["ln"], name="ln", axis=-1),
        n("ReduceMax", ["ln", "last"], ["peak"], name="peak", keepdims=0),
        n("Pad", ["peak", "pads", "", "pad_axes"], ["y"], name="pad"),
        n("ReduceL2", ["ln", "hw2"], ["energy"], name="energy", keepdims=0),
    ]
    inits = [_t("w", _f(8, 4, 3, 3)), _t("b", _f(8)), _t("hw", np.array([2, 3])),
             _t("scales", np.array([1, 1, 2, 2], np.float32)), _t("ln_s", _f(4, lo=0.5, hi=1.5)),
             _t("ln_b", _f(4)), _t("last", np.array([-1])), _t("pads", np.array([1, 1])),
             _t("pad_axes", np.array([2])), _t("hw2", np.array([1, 2]))]
    m = _model("block18", nodes, [helper.make_tensor_value_info("x", F, [1, 4, 8, 8])],
               [helper.make_tensor_value_info("y", F, [1, 16, 18]),
                helper.make_tensor_value_info("energy", F, [1, 4])], 18, inits)
    return m, {"x": _f(1, 4, 8, 8, lo=-2, hi=2)}


def block21():
    n = helper.make_node
    nodes = [
        n("GroupNormalization", ["x", "gn_s", "gn_b"], ["gn"], name="gn", num_groups=3),
        n("Gelu", ["gn"], ["act"], name="gelu"),
        n("Pad", ["act", "pads", "", "axes"], ["wrapped"], name="pad", mode="wrap"),
        n("Split", ["wrapped"], ["p0", "p1", "p2"], name="split", axis=1, num_outputs=3),
        n("Mish", ["p1"], ["m1"], name="mish"),
        n("Add", ["p0", "m1"], ["s01"], name="add0"),
        n("Add", ["s01", "p2"], ["s"], name="add1"),
        n("CenterCropPad", ["s", "crop"], ["cc"], name="crop", axes=[2, 3]),
        n("Resize", ["cc", "", "down"], ["small"], name="resize", mode="cubic", antialias=1),
        n("ReduceSum", ["small", "ch"], ["y"], name="sum", keepdims=1),
    ]
    inits = [_t("gn_s", _f(6, lo=0.5, hi=1.5)), _t("gn_b", _f(6)),
             _t("pads", np.array([1, 2, 1, 2])), _t("axes", np.array([2, 3])),
             _t("crop", np.array([8, 6])), _t("down", np.array([1, 1, 0.5, 0.5], np.float32)),
             _t("ch", np.array([1]))]
    m = _model("block21", nodes, [helper.make_tensor_value_info("x", F, [2, 6, 7, 7])],
               [helper.make_tensor_value_info("y", F, [2, 1, 4, 3])], 21, inits)
    return m, {"x": _f(2, 6, 7, 7, lo=-3, hi=3)}


BLOCKS = {"block18": block18, "block21": block21}


def cases():
    for name, make in BLOCKS.items():
        m, inputs = make()
        yield name, m, inputs, None
