"""Generated-corpus cases for the operator changes of opsets 18 to 23 that
are not new element types (issue 16 part 2): the Reduce family with axes
as an input (18) and on bool (20), Pad with axes (18) and wrap (19), the
Bitwise ops, CenterCropPad, Col2Im, GroupNormalization (18, 21), Mish,
LpPool (18), DFT (17, 20), Gelu, IsInf/IsNaN (20), ConstantOfShape
(20+), Split with num_outputs, Resize (18, 19), ScatterND and
ScatterElements with max/min, and the ops whose newest version only
widened their types (19, 21, 22, 23), each at that opset.

Interface: see cases_dtypes.py (tests/modern/make_corpus.py calls
cases()). ONNX Runtime 1.30 is the oracle (expected None) unless a case
gives its own values: numpy formulas where ONNX Runtime does not run an op
or a form, written from the ONNX reference implementation
(onnx/reference/ops) and the operator docs.
"""

import math

import numpy as np
from onnx import TensorProto, helper

F, F16, D = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE
I8, U8, I16, U16 = TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT16
I32, I64, U32, U64 = TensorProto.INT32, TensorProto.INT64, TensorProto.UINT32, TensorProto.UINT64
B, S = TensorProto.BOOL, TensorProto.STRING
NP = {F: np.float32, F16: np.float16, D: np.float64, I8: np.int8, U8: np.uint8, I16: np.int16,
      U16: np.uint16, I32: np.int32, I64: np.int64, U32: np.uint32, U64: np.uint64, B: np.bool_}

rng = np.random.default_rng(18)


def model(name, nodes, inputs, outputs, opset, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="cases_ops18")
    m.ir_version = 8 if opset <= 18 else 9 if opset <= 20 else 10
    return m


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def i64(name, vals):
    return helper.make_tensor(name, I64, [len(vals)], list(vals))


def rand(shape, dt=F, lo=-3.0, hi=3.0):
    if NP[dt] == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.dtype(NP[dt]).kind in "iu":
        info = np.iinfo(NP[dt])
        return rng.integers(max(info.min, -100), min(info.max, 100), size=shape).astype(NP[dt])
    return rng.uniform(lo, hi, size=shape).astype(NP[dt])


def one_op(name, op, x_list, out_dt, opset, inits=(), n_out=1, **attrs):
    """A model of one node whose graph inputs are x_list [(name, dtype,
    value)] (value None: an initializer of the same name is in inits or the
    input is omitted ''), outputs y0..y{n_out-1} of out_dt with unknown
    shape; returns (name, model, inputs, None)."""
    ins = [n for n, _, _ in x_list]
    outs = ["y%d" % i for i in range(n_out)]
    node = helper.make_node(op, ins, outs, **attrs)
    gin = [vi(n, dt, list(v.shape)) for n, dt, v in x_list if v is not None]
    gout = [vi(o, out_dt, None) for o in outs]
    feeds = {n: v for n, _, v in x_list if v is not None}
    return name, model(name, [node], gin, gout, opset, inits), feeds, None


# ------------------------------------------------------------ reductions

REDUCE18 = ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
            "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ReduceSum"]


def reduce_cases():
    x = rand((2, 3, 4), F, 0.2, 2.0)  # positive: ReduceLogSum stays finite
    for op in REDUCE18:
        lo = op.lower()
        for opset in (18, 20) if op in ("ReduceMax", "ReduceMin") else (18,):
            yield one_op("%s_axes_init_op%d" % (lo, opset), op, [("x", F, x), ("axes", I64, None)],
                         F, opset, [i64("axes", [1])])
            yield one_op("%s_axes_input_keep0_op%d" % (lo, opset), op,
                         [("x", F, x), ("axes", I64, np.array([-1, 0], np.int64))], F, opset,
                         keepdims=0)
        yield one_op("%s_no_axes_op18" % lo, op, [("x", F, x)], F, 18)
        yield one_op("%s_no_axes_noop_op18" % lo, op, [("x", F, x)], F, 18,
                     noop_with_empty_axes=1)
        yield one_op("%s_empty_axes_noop_op18" % lo, op,
                     [("x", F, x), ("axes", I64, np.zeros(0, np.int64))], F, 18,
                     noop_with_empty_axes=1)
        yield one_op("%s_empty_axes_op18" % lo, op,
                     [("x", F, x), ("axes", I64, np.zeros(0, np.int64))], F, 18, keepdims=0)
        if op not in ("ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMean"):
            xi = rng.integers(-5, 6, size=(3, 4)).astype(np.int32)
            yield one_op("%s_int32_op18" % lo, op, [("x", I32, xi), ("axes", I64, None)], I32, 18,
                         [i64("axes", [0])])
        xd = rand((3, 2, 2), D, 0.5, 1.5)
        yield one_op("%s_double_op18" % lo, op, [("x", D, xd), ("axes", I64, None)], D, 18,
                     [i64("axes", [0, 2])])
    # float16 (computed in float64 here, once rounded), 8-bit integers
    xh = rand((3, 4, 2), F16, 0.2, 2.0)
    for op in ("ReduceMean", "ReduceSum", "ReduceL2", "ReduceMax", "ReduceLogSumExp"):
        yield one_op("%s_float16_op18" % op.lower(), op, [("x", F16, xh), ("axes", I64, None)],
                     F16, 18, [i64("axes", [1])])
    for dt in (I8, U8):
        for op in ("ReduceMax", "ReduceMin"):
            yield one_op("%s_%s_op18" % (op.lower(), np.dtype(NP[dt]).name), op,
                         [("x", dt, rand((3, 5), dt)), ("axes", I64, None)], dt, 18,
                         [i64("axes", [-1])], keepdims=0)
    # bool, opset 20: ONNX Runtime 1.30 has no bool ReduceMax/ReduceMin
    # kernel, so the reference's any/all along the axes is the oracle.
    xb = rng.integers(0, 2, size=(3, 4)).astype(np.bool_)
    xb[1] = True
    xb[2] = False
    for op, f in (("ReduceMax", np.any), ("ReduceMin", np.all)):
        for axes, keep in (([1], 1), ([0], 0), ([], 1)):
            inits = [i64("axes", axes)] if axes else []
            ins = [("x", B, xb)] + ([("axes", I64, None)] if axes else [])
            name = "%s_bool_axes%s_keep%d_op20" % (op.lower(), "".join(map(str, axes)), keep)
            n, m, feeds, _ = one_op(name, op, ins, B, 20, inits, keepdims=keep)
            want = f(xb, axis=tuple(axes) if axes else None, keepdims=bool(keep))
            yield n, m, feeds, {"y0": np.asarray(want, np.bool_)}


# ------------------------------------------------------------------- Pad

def pad_cases():
    x = rand((2, 3, 4))
    for opset in (18, 19):
        for mode in ("constant", "reflect", "edge") + (("wrap",) if opset >= 19 else ()):
            ins = [("x", F, x), ("pads", I64, None), ("value", F, None), ("axes", I64, None)]
            inits = [i64("pads", [1, 2, 0, 1]), i64("axes", [1, -1]),
                     helper.make_tensor("value", F, [], [1.5])]
            if mode != "constant":
                ins[2] = ("", F, None)
                inits = inits[:2]
            yield one_op("pad_axes_%s_op%d" % (mode, opset), "Pad", ins, F, opset, inits,
                         mode=mode)
        yield one_op("pad_axes_input_op%d" % opset, "Pad",
                     [("x", F, x), ("pads", I64, np.array([1, 0, 1, 2], np.int64)), ("", F, None),
                      ("axes", I64, np.array([0, 2], np.int64))], F, opset)
        yield one_op("pad_negative_pads_axes_op%d" % opset, "Pad",
                     [("x", F, x), ("pads", I64, None), ("", F, None), ("axes", I64, None)], F,
                     opset, [i64("pads", [-1, 1]), i64("axes", [2])])
    # wrap with pads past the axis length, all axes (no axes input)
    # (the reference's np.pad(mode="wrap"): ONNX Runtime 1.30 writes wrong
    # values when a pad is longer than the axis)
    x2 = rand((2, 3))
    n, m, feeds, _ = one_op("pad_wrap_wide_op19", "Pad", [("x", F, x2), ("pads", I64, None)], F,
                            19, [i64("pads", [1, 4, 2, 5])], mode="wrap")
    yield n, m, feeds, {"y0": np.pad(x2, ((1, 2), (4, 5)), mode="wrap")}
    x3 = np.arange(12, dtype=np.int64).reshape(3, 4)
    n, m, feeds, _ = one_op("pad_wrap_int64_op19", "Pad", [("x", I64, x3), ("pads", I64, None)],
                            I64, 19, [i64("pads", [0, 3, 2, 1])], mode="wrap")
    yield n, m, feeds, {"y0": np.pad(x3, ((0, 2), (3, 1)), mode="wrap")}


# --------------------------------------------------------------- Bitwise

def bitwise_cases():
    for dt in (I8, U8, I16, U16, I32, U32, I64, U64):
        n = np.dtype(NP[dt]).name
        info = np.iinfo(NP[dt])
        a = rng.integers(info.min, info.max, size=(3, 4), dtype=NP[dt], endpoint=True)
        b = rng.integers(info.min, info.max, size=(4,), dtype=NP[dt], endpoint=True)
        for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
            yield one_op("%s_%s" % (op.lower(), n), op, [("a", dt, a), ("b", dt, b)], dt, 18)
        yield one_op("bitwisenot_%s" % n, "BitwiseNot", [("a", dt, a)], dt, 18)


# --------------------------------------------------------- CenterCropPad

def center_crop_pad_cases():
    x = rand((5, 6, 3))
    for shape, axes, tag in (([3, 8, 3], None, "crop_pad"), ([4, 5, 3], None, "crop_odd"),
                             ([7, 9, 3], None, "pad_odd"), ([2, 9], [0, 1], "axes"),
                             ([4, 4], [-1, 0], "neg_axes"), ([6], [1], "same")):
        attrs = {"axes": axes} if axes else {}
        yield one_op("centercroppad_%s" % tag, "CenterCropPad",
                     [("x", F, x), ("shape", I64, None)], F, 18, [i64("shape", shape)], **attrs)
    xi = np.arange(20, dtype=np.int32).reshape(4, 5)
    yield one_op("centercroppad_int32", "CenterCropPad", [("x", I32, xi), ("shape", I64, None)],
                 I32, 18, [i64("shape", [3, 8])])


# ---------------------------------------------------------------- Col2Im

def col2im_cases():
    cols = rand((1, 5 * 2 * 2, 4 * 4))
    yield one_op("col2im_basic", "Col2Im", [("x", F, cols), ("image_shape", I64, None),
                                            ("block_shape", I64, None)], F, 18,
                 [i64("image_shape", [5, 5]), i64("block_shape", [2, 2])])
    cols = rand((2, 3 * 2 * 3, 8))
    yield one_op("col2im_strides_pads_dilations", "Col2Im",
                 [("x", F, cols), ("image_shape", I64, None), ("block_shape", I64, None)], F, 18,
                 [i64("image_shape", [6, 7]), i64("block_shape", [2, 3])], strides=[2, 2],
                 pads=[1, 0, 1, 1], dilations=[1, 2])


# ---------------------------------------------------- GroupNormalization

def group_norm_cases():
    x = rand((2, 6, 3, 2))
    g = 3
    for opset in (18, 21):
        c = 6 if opset >= 21 else g
        sc = rand((c,), F, 0.5, 1.5)
        bi = rand((c,), F, -1, 1)
        for eps in (1e-5, 0.5):
            yield one_op("groupnorm_eps%g_op%d" % (eps, opset), "GroupNormalization",
                         [("x", F, x), ("scale", F, sc), ("bias", F, bi)], F, opset,
                         num_groups=g, epsilon=eps)
        x1 = rand((1, 4, 5))
        c = 4 if opset >= 21 else 2
        yield one_op("groupnorm_rank3_op%d" % opset, "GroupNormalization",
                     [("x", F, x1), ("scale", F, rand((c,), F, 0.5, 1.5)),
                      ("bias", F, rand((c,), F))], F, opset, num_groups=2)
    yield one_op("groupnorm_one_group_op21", "GroupNormalization",
                 [("x", F, x), ("scale", F, rand((6,), F)), ("bias", F, rand((6,), F))], F, 21,
                 num_groups=1)
    yield one_op("groupnorm_stash_float16_op21", "GroupNormalization",
                 [("x", F16, x.astype(np.float16)), ("scale", F16, rand((6,), F16)),
                  ("bias", F16, rand((6,), F16))], F16, 21, num_groups=2, stash_type=1)


# -------------------------------------------------- elementwise: 18, 20

def elementwise_cases():
    x = rand((3, 5), F, -6, 6)
    x[0, :3] = [-30.0, 0.0, 30.0]
    xd = x.astype(np.float64)
    for opset in (18, 22):
        yield one_op("mish_op%d" % opset, "Mish", [("x", F, x)], F, opset)
    # float64: ONNX Runtime 1.30 has no float64 Mish (its Softplus) or Gelu
    # (its Erf), so the formulas in float64
    n, m, feeds, _ = one_op("mish_double_op22", "Mish", [("x", D, xd)], D, 22)
    yield n, m, feeds, {"y0": xd * np.tanh(np.logaddexp(0, xd))}
    yield one_op("mish_float16_op18", "Mish", [("x", F16, x.astype(np.float16))], F16, 18)
    xd = x.astype(np.float64)
    for approx in ("none", "tanh"):
        if approx == "none":
            yield one_op("gelu_%s" % approx, "Gelu", [("x", F, x)], F, 20, approximate=approx)
        else:
            # the formula in float64: ONNX Runtime 1.30's float32 tanh form is
            # 2% off where 1 + tanh(u) cancels (x = -4.49: -5.48e-6, not -5.59e-6)
            n, m, feeds, _ = one_op("gelu_tanh", "Gelu", [("x", F, x)], F, 20, approximate="tanh")
            u = math.sqrt(2 / math.pi) * (xd + 0.044715 * xd ** 3)
            yield n, m, feeds, {"y0": (0.5 * xd * (1 + np.tanh(u))).astype(np.float32)}
        n, m, feeds, _ = one_op("gelu_%s_double" % approx, "Gelu", [("x", D, xd)], D, 20,
                                approximate=approx)
        if approx == "none":
            erf = np.vectorize(math.erf)
            want = 0.5 * xd * (1 + erf(xd / math.sqrt(2)))
        else:
            want = 0.5 * xd * (1 + np.tanh(math.sqrt(2 / math.pi) * (xd + 0.044715 * xd ** 3)))
        yield n, m, feeds, {"y0": want}
    yield one_op("gelu_default", "Gelu", [("x", F, x)], F, 20)
    yield one_op("gelu_float16", "Gelu", [("x", F16, x.astype(np.float16))], F16, 20)
    sp = np.array([np.inf, -np.inf, np.nan, 0.0, -1.5, 3.0e38], np.float32)
    for dt in (F, D, F16):
        n = np.dtype(NP[dt]).name
        v = sp.astype(NP[dt])
        yield one_op("isnan_%s_op20" % n, "IsNaN", [("x", dt, v)], B, 20)
        for pos, neg in ((1, 1), (0, 1), (1, 0)):
            yield one_op("isinf_%s_pos%d_neg%d_op20" % (n, pos, neg), "IsInf", [("x", dt, v)], B,
                         20, detect_positive=pos, detect_negative=neg)
    # bfloat16 and float8 (20): made inside the graph by a Cast
    for dt, name in ((TensorProto.BFLOAT16, "bfloat16"), (17, "f8e4m3fn"), (19, "f8e5m2")):
        for op in ("IsNaN", "IsInf"):
            sat = {"saturate": 0} if dt == 19 else {}
            nodes = [helper.make_node("Cast", ["x"], ["c"], to=dt, **sat),
                     helper.make_node(op, ["c"], ["y"])]
            m = model(op, nodes, [vi("x", F, [6])], [vi("y", B, [6])], 20)
            want = np.isnan(sp) if op == "IsNaN" else np.isinf(sp)
            if dt == 17:  # float8e4m3fn has no Inf: Cast saturates +-Inf to +-448
                want = np.isnan(sp) if op == "IsNaN" else np.zeros(6, np.bool_)
            if dt == 19:  # saturate=0: +-Inf stay, 3e38 is past the range: Inf
                want = np.isnan(sp) if op == "IsNaN" else np.isinf(sp) | (sp == np.float32(3e38))
            yield "%s_%s_op20" % (op.lower(), name), m, {"x": sp}, {"y": want}


# ------------------------------------------------------------------ LpPool

def lppool_cases():
    x = rand((1, 2, 7, 6))
    for tag, attrs in (("p2", dict(kernel_shape=[3, 2], p=2)),
                       ("p3_strides", dict(kernel_shape=[2, 2], p=3, strides=[2, 2])),
                       ("ceil", dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)),
                       ("dilations", dict(kernel_shape=[2, 2], dilations=[2, 2])),
                       ("pads", dict(kernel_shape=[3, 3], pads=[1, 1, 1, 0])),
                       ("same_upper", dict(kernel_shape=[3, 2], auto_pad="SAME_UPPER",
                                           strides=[2, 1])),
                       ("p1", dict(kernel_shape=[2, 3], p=1))):
        yield one_op("lppool_%s_op18" % tag, "LpPool", [("x", F, x)], F, 18, **attrs)
    yield one_op("lppool_1d_op22", "LpPool", [("x", F, rand((1, 3, 9)))], F, 22,
                 kernel_shape=[3], strides=[2], dilations=[2], ceil_mode=1)


# --------------------------------------------------------------------- DFT

def dft_formula(x, axis, length, attrs):
    """numpy's FFT in float64, as the reference computes DFT: ONNX Runtime's
    float32 sums leave ~1e-7 where the transform is exactly 0 (the
    imaginary part of a real signal's DC term), past the runner's atol."""
    c = x[..., 0].astype(np.float64)
    if x.shape[-1] == 2:
        c = c + 1j * x[..., 1]
    ax = axis if axis >= 0 else axis + x.ndim
    n = c.shape[ax] if length is None else length
    if attrs.get("inverse"):
        y = np.fft.ifft(c, n=n, axis=ax)
    else:
        y = np.fft.fft(c, n=n, axis=ax)
    if attrs.get("onesided"):
        y = np.take(y, range(n // 2 + 1), axis=ax)
    return np.stack([y.real, y.imag], axis=-1).astype(np.float32)


def dft_cases():
    xr = rand((2, 8, 1))
    xc = rand((2, 8, 2))
    xr3 = rand((1, 6, 5, 1))
    for opset in (17, 20):
        def dft(name, x, axis, length=None, **attrs):
            ins = [("x", F, x)]
            inits = []
            if length is not None:
                ins.append(("n", I64, None))
                inits.append(helper.make_tensor("n", I64, [], [length]))
            elif opset >= 20:
                ins.append(("", I64, None))
            if opset >= 20:
                ins.append(("axis", I64, None))
                inits.append(helper.make_tensor("axis", I64, [], [axis]))
            else:
                attrs["axis"] = axis
            n, m, feeds, _ = one_op("dft_%s_op%d" % (name, opset), "DFT", ins, F, opset, inits,
                                    **attrs)
            return n, m, feeds, {"y0": dft_formula(x, axis, length, attrs)}
        yield dft("real", xr, 1)
        yield dft("complex", xc, 1)
        yield dft("onesided", xr, 1, onesided=1)
        yield dft("inverse", xc, 1, inverse=1)
        yield dft("length_pad", xr, 1, 11)
        yield dft("length_cut", xc, 1, 5)
        yield dft("axis2", xr3, 2)
        if opset >= 20:
            yield dft("neg_axis", xr3, -2)
            yield dft("axis1_onesided_odd", xr3, 1, 5, onesided=1)


# -------------------------------------------------------- ConstantOfShape

def constant_of_shape_cases():
    for opset, dt, val in ((20, TensorProto.BFLOAT16, None), (20, 17, None), (20, 20, None),
                           (21, 22, None), (21, 21, None), (21, I8, -3), (21, U16, 7),
                           (23, F16, 1.5), (23, B, True), (20, D, 2.25)):
        name = "constantofshape_%d_op%d" % (dt, opset)
        if val is None:
            # the narrow types: value is a one-element tensor of that type
            raw = {TensorProto.BFLOAT16: b"\xc0\x3f", 17: b"\x44", 20: b"\x44", 22: b"\x0d",
                   21: b"\x0d"}[dt]
            t = TensorProto()
            t.name = "value"
            t.data_type = dt
            t.dims.append(1)
            t.raw_data = raw
            nodes = [helper.make_node("ConstantOfShape", ["s"], ["c"], value=t),
                     helper.make_node("Cast", ["c"], ["y"], to=F)]
            m = model(name, nodes, [], [vi("y", F, [2, 3])], opset, [i64("s", [2, 3])])
            # the value decoded by float8.md / int4.md (ONNX Runtime 1.30
            # takes no float8 or 4-bit value here)
            want = {TensorProto.BFLOAT16: None, 17: 3.0, 20: 2.0, 22: -3.0, 21: 13.0}[dt]
            yield name, m, {}, (None if want is None else
                                {"y": np.full((2, 3), want, np.float32)})
        else:
            t = helper.make_tensor("value", dt, [1], [val])
            yield one_op(name, "ConstantOfShape", [("s", I64, np.array([3, 1, 2], np.int64))],
                         dt, opset, value=t)
    yield one_op("constantofshape_default_op21", "ConstantOfShape",
                 [("s", I64, np.array([2, 2], np.int64))], F, 21)


# ------------------------------------------------------------------ Split

def split_cases():
    x = rand((2, 7, 3))
    for n, axis in ((3, 1), (2, 1), (7, 1), (2, -1), (4, 1)):
        yield one_op("split_num_outputs%d_axis%d" % (n, axis), "Split", [("x", F, x)], F, 18,
                     n_out=n, axis=axis, num_outputs=n)
    yield one_op("split_sizes_input_op18", "Split", [("x", F, x), ("s", I64, None)], F, 18,
                 [i64("s", [2, 0, 5])], n_out=3, axis=1)
    yield one_op("split_int64_num_outputs", "Split", [("x", I64, np.arange(10, dtype=np.int64))],
                 I64, 18, n_out=3, num_outputs=3)


# ----------------------------------------------------------------- Resize

def resize_cases():
    x = rand((1, 2, 8, 6))
    for opset in (18, 19):
        def rs(name, sizes=None, scales=None, **attrs):
            ins = [("x", F, x), ("", F, None)]
            inits = []
            if scales is not None:
                ins.append(("scales", F, None))
                inits.append(helper.make_tensor("scales", F, [len(scales)], scales))
            else:
                ins.append(("", F, None))
            if sizes is not None:
                ins.append(("sizes", I64, None))
                inits.append(i64("sizes", sizes))
            return one_op("resize_%s_op%d" % (name, opset), "Resize", ins, F, opset, inits,
                          **attrs)
        for mode in ("linear", "cubic"):
            yield rs("antialias_%s_down" % mode, scales=[1, 1, 0.5, 0.6], mode=mode, antialias=1)
            yield rs("antialias_%s_sizes" % mode, sizes=[1, 2, 3, 5], mode=mode, antialias=1)
            yield rs("antialias_%s_up" % mode, scales=[1, 1, 1.5, 2], mode=mode, antialias=1)
        yield rs("axes_scales", scales=[0.5, 1.5], mode="linear", axes=[2, 3])
        yield rs("axes_sizes_nearest", sizes=[5], mode="nearest", axes=[-1])
        for pol in ("stretch", "not_larger", "not_smaller"):
            yield rs("keep_aspect_%s" % pol, sizes=[4, 4], mode="linear", axes=[2, 3],
                     keep_aspect_ratio_policy=pol)
            yield rs("keep_aspect_%s_nearest" % pol, sizes=[1, 2, 5, 9], mode="nearest",
                     keep_aspect_ratio_policy=pol)
        yield rs("cubic_exclude_outside", scales=[1, 1, 0.7, 1.3], mode="cubic",
                 exclude_outside=1, cubic_coeff_a=-0.5)
        yield rs("linear_align_corners", scales=[1, 1, 1.5, 0.5], mode="linear",
                 coordinate_transformation_mode="align_corners")
        if opset >= 19:
            for mode in ("linear", "nearest", "cubic"):
                yield rs("half_pixel_symmetric_%s" % mode, scales=[1, 1, 1.7, 0.6], mode=mode,
                         coordinate_transformation_mode="half_pixel_symmetric")
            yield rs("half_pixel_symmetric_sizes", sizes=[1, 2, 3, 11], mode="linear",
                     coordinate_transformation_mode="half_pixel_symmetric")


# ------------------------------------------------------------- Scatter*

def scatter_cases():
    data = rand((4, 3))
    idx = np.array([[1, 0, 2], [1, 3, 2], [0, 0, 2]], np.int64)
    upd = rand((3, 3))
    for red in ("max", "min", "add", "mul"):
        yield one_op("scatterelements_%s_op18" % red, "ScatterElements",
                     [("x", F, data), ("i", I64, idx), ("u", F, upd)], F, 18, axis=0,
                     reduction=red)
        yield one_op("scatterelements_%s_int32_op18" % red, "ScatterElements",
                     [("x", I32, (data * 10).astype(np.int32)), ("i", I64, idx),
                      ("u", I32, (upd * 10).astype(np.int32))], I32, 18, axis=0, reduction=red)
    d3 = rand((4, 2, 3))
    ind = np.array([[1], [3], [1], [0]], np.int64)
    u3 = rand((4, 2, 3))
    for red in ("max", "min", "add", "mul", "none"):
        ii = ind if red != "none" else np.array([[1], [3]], np.int64)
        uu = u3 if red != "none" else u3[:2]
        yield one_op("scatternd_%s_op18" % red, "ScatterND",
                     [("x", F, d3), ("i", I64, ii), ("u", F, uu)], F, 18, reduction=red)
    ind2 = np.array([[0, 1], [2, 0], [0, 1]], np.int64)
    yield one_op("scatternd_max_pairs_op18", "ScatterND",
                 [("x", F, d3), ("i", I64, ind2), ("u", F, rand((3, 3)))], F, 18, reduction="max")


# ------------------------------------- ops re-registered at 19, 21, 22, 23

def bumped_cases():
    """The ops whose newest version (19..23) only widened their types or
    kept their semantics, run at that opset on a type both versions take."""
    x = rand((1, 2, 5, 5))
    w = rand((3, 2, 3, 3))
    u = rand((2, 6))
    pos = rand((2, 6), F, 0.1, 0.9)
    for op, ins, attrs in (
            ("Acos", [("x", F, pos)], {}), ("Acosh", [("x", F, pos + 1)], {}),
            ("Asin", [("x", F, pos)], {}), ("Asinh", [("x", F, u)], {}),
            ("Atan", [("x", F, u)], {}), ("Atanh", [("x", F, pos)], {}),
            ("Cos", [("x", F, u)], {}), ("Cosh", [("x", F, u)], {}), ("Sin", [("x", F, u)], {}),
            ("Sinh", [("x", F, u)], {}), ("Tan", [("x", F, pos)], {}),
            ("Elu", [("x", F, u)], {"alpha": 0.7}), ("Selu", [("x", F, u)], {}),
            ("HardSigmoid", [("x", F, u)], {"alpha": 0.3}), ("HardSwish", [("x", F, u)], {}),
            ("Softplus", [("x", F, u)], {}), ("Softsign", [("x", F, u)], {}),
            ("ThresholdedRelu", [("x", F, u)], {"alpha": 0.5}), ("Round", [("x", F, u * 2)], {}),
            ("Conv", [("x", F, x), ("w", F, w)], {"pads": [1, 1, 1, 1]}),
            ("ConvTranspose", [("x", F, x), ("w", F, rand((2, 3, 3, 3)))], {"strides": [2, 2]}),
            ("AveragePool", [("x", F, x)], {"kernel_shape": [3, 3], "dilations": [1, 2]}),
            ("MaxPool", [("x", F, x)], {"kernel_shape": [2, 2], "strides": [2, 2]}),
            ("GlobalAveragePool", [("x", F, x)], {}), ("GlobalMaxPool", [("x", F, x)], {}),
            ("InstanceNormalization", [("x", F, x), ("s", F, rand((2,))), ("b", F, rand((2,)))], {}),
            ("LpNormalization", [("x", F, u)], {"axis": 1}),
            ("EyeLike", [("x", F, rand((3, 4)))], {"k": 1}),
            ("Det", [("x", F, rand((2, 3, 3)))], {}),
            ("Dropout", [("x", F, u)], {}),
    ):
        yield one_op("%s_op22" % op.lower(), op, ins, F, 22, **attrs)
    # (ONNX Runtime 1.30 has no GlobalLpPool 22: the formula)
    n, m, feeds, _ = one_op("globallppool_op22", "GlobalLpPool", [("x", F, x)], F, 22, p=3)
    yield n, m, feeds, {"y0": (np.sum(np.abs(x.astype(np.float64)) ** 3, axis=(2, 3),
                                      keepdims=True) ** (1 / 3)).astype(np.float32)}
    # recurrent ops at 22
    X = rand((3, 2, 4))
    for op, gates in (("RNN", 1), ("GRU", 3), ("LSTM", 4)):
        H = 3
        yield one_op("%s_op22" % op.lower(), op,
                     [("x", F, X), ("w", F, rand((1, gates * H, 4))),
                      ("r", F, rand((1, gates * H, H)))], F, 22, hidden_size=H)
    yield one_op("roialign_op22", "RoiAlign",
                 [("x", F, x), ("rois", F, np.array([[0, 0, 3, 3], [1, 1, 4, 4]], np.float32)),
                  ("bi", I64, np.array([0, 0], np.int64))], F, 22, output_height=2,
                 output_width=2, sampling_ratio=2)
    yield one_op("maxroipool_op22", "MaxRoiPool",
                 [("x", F, x), ("rois", F, np.array([[0, 0, 0, 3, 3]], np.float32))], F, 22,
                 pooled_shape=[2, 2])
    yield one_op("nllloss_op22", "NegativeLogLikelihoodLoss",
                 [("x", F, rand((3, 4))), ("t", I64, np.array([1, 0, 3], np.int64))], F, 22)
    yield one_op("averagepool_dilations_op19", "AveragePool", [("x", F, x)], F, 19,
                 kernel_shape=[2, 2], dilations=[2, 2], pads=[1, 1, 0, 0])
    # Equal on strings (19)
    a = np.array(["a", "bc", "", "x"], dtype=object)
    b = np.array(["a", "b", "", "y"], dtype=object)
    yield one_op("equal_string_op19", "Equal", [("a", S, a), ("b", S, b)], B, 19)
    # ops of 19 / 21 / 23 on the classic types, at those opsets
    xs = rand((2, 3, 4))
    for opset in (19, 21, 23):
        yield one_op("identity_op%d" % opset, "Identity", [("x", F, xs)], F, opset)
        yield one_op("reshape_op%d" % opset, "Reshape", [("x", F, xs), ("s", I64, None)], F,
                     opset, [i64("s", [4, -1])])
        yield one_op("shape_start_end_op%d" % opset, "Shape", [("x", F, xs)], I64, opset,
                     start=1, end=-1)
        yield one_op("size_op%d" % opset, "Size", [("x", I32, rand((3, 5), I32))], I64, opset)
        yield one_op("cast_int32_op%d" % opset, "Cast", [("x", F, xs * 10)], I32, opset, to=I32)
        yield one_op("castlike_op%d" % opset, "CastLike",
                     [("x", F, xs), ("t", D, np.zeros(1, np.float64))], D, opset)
        if opset >= 21:
            yield one_op("flatten_op%d" % opset, "Flatten", [("x", F, xs)], F, opset, axis=-1)
            yield one_op("squeeze_op%d" % opset, "Squeeze",
                         [("x", F, rand((1, 3, 1))), ("a", I64, None)], F, opset, [i64("a", [0])])
            yield one_op("unsqueeze_op%d" % opset, "Unsqueeze", [("x", F, xs), ("a", I64, None)],
                         F, opset, [i64("a", [0, -1])])
            yield one_op("transpose_op%d" % opset, "Transpose", [("x", U8, rand((2, 3, 4), U8))],
                         U8, opset, perm=[2, 0, 1])
            yield one_op("pad_op%d" % opset, "Pad", [("x", F, xs), ("p", I64, None)], F, opset,
                         [i64("p", [0, 1, 0, 0, 2, 0])], mode="reflect")
        c = helper.make_node("Constant", [], ["y0"], value=helper.make_tensor(
            "v", F, [2, 2], [1.0, 2.0, 3.0, 4.0]))
        m = model("c", [c], [], [vi("y0", F, [2, 2])], opset)
        yield "constant_op%d" % opset, m, {}, None
        # control flow: If, Loop, Scan at each opset
        then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "then", [],
                                   [vi("t", F, None)])
        else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["e"])], "else", [],
                                   [vi("e", F, None)])
        n = helper.make_node("If", ["c"], ["y0"], then_branch=then_g, else_branch=else_g)
        m = model("if", [n], [vi("c", B, []), vi("x", F, [2, 3, 4])], [vi("y0", F, None)], opset)
        yield "if_op%d" % opset, m, {"c": np.array(False), "x": xs}, None
        body = helper.make_graph(
            [helper.make_node("Add", ["v", "x"], ["v2"]),
             helper.make_node("Identity", ["cond"], ["cond2"])], "body",
            [vi("i", I64, []), vi("cond", B, []), vi("v", F, None)],
            [vi("cond2", B, []), vi("v2", F, None)])
        n = helper.make_node("Loop", ["n", "", "v0"], ["y0"], body=body)
        m = model("loop", [n], [vi("x", F, [2, 3, 4]), vi("v0", F, [2, 3, 4])],
                  [vi("y0", F, None)], opset, [helper.make_tensor("n", I64, [], [3])])
        yield "loop_op%d" % opset, m, {"x": xs, "v0": xs * 0}, None
        sbody = helper.make_graph(
            [helper.make_node("Add", ["s", "e"], ["s2"]), helper.make_node("Identity", ["s2"], ["o"])],
            "sbody", [vi("s", F, [4]), vi("e", F, [4])], [vi("s2", F, [4]), vi("o", F, [4])])
        n = helper.make_node("Scan", ["s0", "seq"], ["y0", "y1"], body=sbody, num_scan_inputs=1)
        m = model("scan", [n], [vi("s0", F, [4]), vi("seq", F, [3, 4])],
                  [vi("y0", F, None), vi("y1", F, None)], opset)
        yield "scan_op%d" % opset, m, {"s0": rand((4,)), "seq": rand((3, 4))}, None
    # Optional*Element on a plain tensor (18)
    for op, out in (("OptionalHasElement", B), ("OptionalGetElement", F)):
        yield one_op("%s_tensor_op18" % op.lower(), op, [("x", F, xs)], out, 18)
    # and with the input omitted (18): no element
    n, m, feeds, _ = one_op("optionalhaselement_omitted_op18", "OptionalHasElement", [], B, 18)
    yield n, m, feeds, {"y0": np.array(False)}


def bf16_cases():
    """The elementwise ops bumped at 22 for bfloat16, on bfloat16 graph
    inputs (ONNX Runtime 1.30 has few bfloat16 kernels and its JavaScript
    API no bfloat16 tensors): the formula in float64 on the bfloat16 input,
    rounded to bfloat16 (ties to even)."""
    from cases_dtypes import bf16, bf16_tensor
    u = bf16(rand((2, 6), F, -2.5, 2.5))
    pos = bf16(rand((2, 6), F, 0.1, 0.9))
    sp = lambda v: np.logaddexp(0, v)  # noqa: E731
    selu_a, selu_g = 1.67326319217681884765625, 1.05070102214813232421875
    for op, x, f, attrs in (
            ("Cos", u, np.cos, {}), ("Sin", u, np.sin, {}), ("Tan", pos, np.tan, {}),
            ("Acos", pos, np.arccos, {}), ("Asin", pos, np.arcsin, {}), ("Atan", u, np.arctan, {}),
            ("Sinh", u, np.sinh, {}), ("Cosh", u, np.cosh, {}), ("Asinh", u, np.arcsinh, {}),
            ("Acosh", bf16(pos + 1), np.arccosh, {}), ("Atanh", pos, np.arctanh, {}),
            ("Elu", u, lambda v: np.where(v < 0, 0.7 * np.expm1(v), v), {"alpha": 0.7}),
            ("Selu", u, lambda v: np.where(v <= 0, selu_g * selu_a * np.expm1(v), selu_g * v), {}),
            ("HardSigmoid", u, lambda v: np.clip(0.2 * v + 0.5, 0, 1), {}),
            ("HardSwish", u, lambda v: v * np.clip(v / 6 + 0.5, 0, 1), {}),
            ("Softplus", u, sp, {}), ("Softsign", u, lambda v: v / (1 + np.abs(v)), {}),
            ("ThresholdedRelu", u, lambda v: np.where(v > 0.5, v, 0), {"alpha": 0.5}),
            ("Round", bf16(u * 3), np.round, {}),
            ("Mish", u, lambda v: v * np.tanh(sp(v)), {})):
        want = bf16(f(x.astype(np.float64)).astype(np.float32))
        m = model(op, [helper.make_node(op, ["x"], ["y"], **attrs)],
                  [vi("x", TensorProto.BFLOAT16, [2, 6])], [vi("y", TensorProto.BFLOAT16, [2, 6])],
                  22)
        yield ("%s_bfloat16_op22" % op.lower(), m, {"x": bf16_tensor("x", x)},
               {"y": bf16_tensor("y", want)})


def cases():
    yield from reduce_cases()
    yield from pad_cases()
    yield from bitwise_cases()
    yield from center_crop_pad_cases()
    yield from col2im_cases()
    yield from group_norm_cases()
    yield from elementwise_cases()
    yield from lppool_cases()
    yield from dft_cases()
    yield from constant_of_shape_cases()
    yield from split_cases()
    yield from resize_cases()
    yield from scatter_cases()
    yield from bumped_cases()
    yield from bf16_cases()
