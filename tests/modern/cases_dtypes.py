"""Generated-corpus cases for the element types of opsets 19 to 23: the four
float8 types, uint4/int4 and float4e2m1, through Cast, CastLike, Constant,
Identity, Reshape, Shape, Size, Transpose, Squeeze, Unsqueeze, Flatten, Pad,
QuantizeLinear and DequantizeLinear.

tests/modern/make_corpus.py imports this module and calls cases(), which
yields (case_name, model, inputs, expected): inputs maps each graph input to
its value, expected maps each graph output to its value, or is None to take
ONNX Runtime's outputs. A value is a numpy array or, for the types numpy has
no dtype for, an onnx.TensorProto already holding the data (data_type and
raw_data written by number: Debian's python3-onnx 1.12 knows none of these
types, so nothing here runs onnx.checker or numpy_helper on them).

Where ONNX Runtime 1.30 runs a case and agrees with the spec, it is the
oracle: such cases keep the new types inside the graph (Cast in and out,
initializers, Constant nodes), since its JavaScript API carries no float8
tensors. Everything else is checked against values computed here from the
spec alone: the formulas and tables of ONNX's float8.md, float4.md and
int4.md and Cast's tables, with rounding done by searching every code of the
type (no shared code with surgeon's C conversions). The known differences
from ONNX Runtime are cases of that kind (+-Inf under saturate becomes
+-max at every opset, as in ONNX Runtime and the ONNX reference, not NaN as
the tables of Cast 19..23 say for the FNUZ types):
  - float to int4/uint4 rounds ties to even (int4.md); ONNX Runtime rounds
    them away from zero;
  - float4e2m1 (ONNX Runtime has no Cast or QuantizeLinear to it).
"""

import math

import numpy as np
import onnx
from onnx import TensorProto, helper

F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, UINT4, INT4, FLOAT4E2M1 = range(17, 24)
FLOAT8 = (F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ)
NAMES = {17: "f8e4m3fn", 18: "f8e4m3fnuz", 19: "f8e5m2", 20: "f8e5m2fnuz",
         21: "uint4", 22: "int4", 23: "f4e2m1"}

# ------------------------------------------------------------ the formats

# (exponent bits, mantissa bits, bias, special codes) per float8.md and
# float4.md: "fn" all-ones magnitude is NaN, "ieee" exponent all ones is
# Inf (mantissa 0) or NaN, "fnuz" the negative zero's code is the only NaN.
FORMATS = {
    F8E4M3FN: (4, 3, 7, "fn"),
    F8E4M3FNUZ: (4, 3, 8, "fnuz"),
    F8E5M2: (5, 2, 15, "ieee"),
    F8E5M2FNUZ: (5, 2, 16, "fnuz"),
    FLOAT4E2M1: (2, 1, 1, ""),
}


def decode(dt, code):
    """The value of one code, from the spec's formula (NaN for NaN codes)."""
    eb, mb, bias, kind = FORMATS[dt]
    nbits = 1 + eb + mb
    sign = (code >> (nbits - 1)) & 1
    e = (code >> mb) & ((1 << eb) - 1)
    m = code & ((1 << mb) - 1)
    if kind == "fnuz" and code == 1 << (nbits - 1):
        return math.nan
    if kind == "fn" and e == (1 << eb) - 1 and m == (1 << mb) - 1:
        return math.nan
    if kind == "ieee" and e == (1 << eb) - 1:
        return math.nan if m else (-math.inf if sign else math.inf)
    if e:
        v = 2.0 ** (e - bias) * (1 + m / 2.0 ** mb)
    else:
        v = 2.0 ** (1 - bias) * (m / 2.0 ** mb)
    return -v if sign else v


def n_codes(dt):
    return 16 if dt == FLOAT4E2M1 else 256


def finite_magnitudes(dt):
    """(value, code) of every finite non-negative code, ascending."""
    half = n_codes(dt) // 2
    out = []
    for c in range(half):
        v = decode(dt, c)
        if math.isfinite(v):
            out.append((v, c))
    return sorted(out)


def nan_code(dt, negative):
    if FORMATS[dt][3] == "fnuz":
        return 0x80
    if dt == F8E5M2:
        return (0x80 if negative else 0) | 0x7e  # the quiet NaN ml_dtypes writes
    return (0x80 if negative else 0) | 0x7f


def encode(dt, x, saturate=True):
    """x rounded to the nearest code of dt, ties to the even code, then
    Cast's tables (saturate, or not), +-Inf saturating at every opset as the
    ONNX reference does. float4e2m1 per float4.md's table but for NaN, which
    the reference (and its backend tests) make -0."""
    x = float(x)
    sb = 0x8 if dt == FLOAT4E2M1 else 0x80
    neg = math.copysign(1.0, x) < 0
    kind = FORMATS[dt][3]
    if dt == FLOAT4E2M1:
        if math.isnan(x):
            return 0x8
        saturate = True
    elif math.isnan(x):
        return nan_code(dt, neg)
    mags = finite_magnitudes(dt)
    vmax, cmax = mags[-1]
    if math.isinf(x):
        if saturate:
            return (sb if neg else 0) | cmax
        return (sb if neg else 0) | 0x7c if kind == "ieee" else nan_code(dt, neg)
    a = abs(x)
    # the next value past the largest one, as an unbounded exponent makes it
    virtual = (vmax + (vmax - mags[-2][0]), cmax + 1)
    best = None
    for v, c in mags + [virtual]:
        d = abs(v - a)
        if best is None or d < best[0] or (d == best[0] and c % 2 == 0):
            best = (d, v, c)
    _, v, c = best
    if c == cmax + 1 or (a > virtual[0]):  # [x] > max
        if saturate:
            return (sb if neg else 0) | cmax
        if kind == "ieee":
            return (sb if neg else 0) | 0x7c
        return nan_code(dt, neg)
    if c == 0 and kind == "fnuz":
        return 0
    return (sb if neg else 0) | c


def int4_from_float(dt, x):
    """int4.md: round to nearest, ties to even, then keep the low 4 bits."""
    v = int(np.rint(x)) & 0xF
    return v - 16 if dt == INT4 and v >= 8 else v


# -------------------------------------------------------------- tensors

def narrow_tensor(name, dt, dims, elems, form="raw"):
    """A TensorProto of dt holding `elems`: float8 / float4 codes, or
    uint4 / int4 values. raw_data packs 4-bit elements two per byte, low
    nibble first, an odd count padded; form="int32" uses int32_data (one
    entry per element, a packed pair per entry for 4-bit types)."""
    t = TensorProto()
    t.name = name
    t.data_type = dt
    t.dims.extend(dims)
    b = [int(e) & (0xF if dt in (UINT4, INT4, FLOAT4E2M1) else 0xFF) for e in elems]
    if dt in (UINT4, INT4, FLOAT4E2M1):
        if len(b) % 2:
            b.append(0)
        b = [b[i] | (b[i + 1] << 4) for i in range(0, len(b), 2)]
    if form == "int32":
        t.int32_data.extend(b)
    else:
        t.raw_data = bytes(b)
    return t


def model(name, nodes, inputs, outputs, opset, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="cases_dtypes")
    m.ir_version = 9 if opset < 21 else 10
    return m


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def f32(*v):
    return np.array(v, dtype=np.float32)


def bf16(a):
    """float32 values rounded to the nearest bfloat16 (ties to even)."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)


def bf16_tensor(name, a):
    a = np.asarray(a, np.float32)
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.BFLOAT16
    t.dims.extend(a.shape)
    t.raw_data = (a.view(np.uint32) >> 16).astype("<u2").tobytes()
    return t


# Values that exercise rounding (ties, subnormals), range and specials.
def probe_values(dt):
    mags = finite_magnitudes(dt)
    vmax = mags[-1][0]
    vals = [0.0, -0.0, 0.3, -1.1, 2.6, 1000.0, -1e6, 1e-7, -1e-7, vmax, -vmax,
            vmax * 1.04, vmax * 1.2]
    for (a, _), (b, _) in zip(mags[:12], mags[1:13]):
        vals.append((a + b) / 2)  # ties between small neighbours
    (a, _), (b, _) = mags[-2], mags[-1]
    vals += [(a + b) / 2, -(a + b) / 2]
    return [float(np.float32(v)) for v in vals]


# ----------------------------------------------------------------- Cast

def cast_cases():
    for dt in FLOAT8:
        n = NAMES[dt]
        # every code to float32: ONNX Runtime decodes them
        codes = list(range(256))
        init = narrow_tensor("codes", dt, [256], codes)
        m = model("decode_" + n, [helper.make_node("Cast", ["codes"], ["y"], to=TensorProto.FLOAT)],
                  [], [vi("y", TensorProto.FLOAT, [256])], 19, [init])
        yield "cast_%s_every_code_to_float32" % n, m, {}, None
        # and against the spec's formula, straight from a graph input
        want = np.array([decode(dt, c) for c in codes], dtype=np.float32)
        m = model("decode_in_" + n, [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)],
                  [vi("x", dt, [256])], [vi("y", TensorProto.FLOAT, [256])], 21)
        yield ("cast_%s_input_every_code_to_float32" % n, m,
               {"x": narrow_tensor("x", dt, [256], codes)}, {"y": want})
        for opset in (19, 21, 23):
            for sat in (1, 0):
                xs = f32(*probe_values(dt), math.nan)
                m = model("c", [helper.make_node("Cast", ["x"], ["q"], to=dt, saturate=sat),
                                helper.make_node("Cast", ["q"], ["y"], to=TensorProto.FLOAT)],
                          [vi("x", TensorProto.FLOAT, [len(xs)])],
                          [vi("y", TensorProto.FLOAT, [len(xs)])], opset)
                yield "cast_float32_to_%s_sat%d_op%d" % (n, sat, opset), m, {"x": xs}, None
            # Every row of the tables, bit for bit, Inf included.
            xs = f32(*probe_values(dt), math.nan, -math.nan, math.inf, -math.inf)
            for sat in (1, 0):
                want = [encode(dt, v, bool(sat)) for v in xs]
                m = model("t", [helper.make_node("Cast", ["x"], ["y"], to=dt, saturate=sat)],
                          [vi("x", TensorProto.FLOAT, [len(xs)])], [vi("y", dt, [len(xs)])], opset)
                yield ("cast_float32_to_%s_table_sat%d_op%d" % (n, sat, opset), m, {"x": xs},
                       {"y": narrow_tensor("y", dt, [len(xs)], want)})
        # float16 and float64 sources; float64 rounds once, not through float32
        xs16 = np.array([v for v in probe_values(dt) if abs(v) < 6e4][:12], dtype=np.float16)
        m = model("h", [helper.make_node("Cast", ["x"], ["q"], to=dt),
                        helper.make_node("Cast", ["q"], ["y"], to=TensorProto.FLOAT)],
                  [vi("x", TensorProto.FLOAT16, [12])], [vi("y", TensorProto.FLOAT, [12])], 19)
        yield "cast_float16_to_%s" % n, m, {"x": xs16}, None
        mags = finite_magnitudes(dt)
        ties = [(a + b) / 2 for (a, _), (b, _) in zip(mags[8:20], mags[9:21])]
        xs64 = np.array([t + t * 2.0 ** -40 for t in ties], dtype=np.float64)
        m = model("d", [helper.make_node("Cast", ["x"], ["y"], to=dt)],
                  [vi("x", TensorProto.DOUBLE, [12])], [vi("y", dt, [12])], 21)
        yield ("cast_float64_to_%s_rounds_once" % n, m, {"x": xs64},
               {"y": narrow_tensor("y", dt, [12], [encode(dt, v) for v in xs64])})
        # float8 to integers and bool, bool and int64 to float8 (ONNX
        # Runtime; but -0, which it makes True where the spec says False)
        fin = [c for c in range(256) if math.isfinite(decode(dt, c)) and
               abs(decode(dt, c)) < 1e4 and c != 0x80]
        init = narrow_tensor("codes", dt, [len(fin)], fin)
        for to, tn in ((TensorProto.INT32, "int32"), (TensorProto.BOOL, "bool"),
                       (TensorProto.FLOAT16, "float16")):
            m = model("i", [helper.make_node("Cast", ["codes"], ["y"], to=to)], [],
                      [vi("y", to, [len(fin)])], 21, [init])
            yield "cast_%s_to_%s" % (n, tn), m, {}, None
        zeros = [0, 0x80, 0x01, 0x81] if FORMATS[dt][3] != "fnuz" else [0, 0x01, 0x81]
        m = model("z", [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BOOL)],
                  [vi("x", dt, [len(zeros)])], [vi("y", TensorProto.BOOL, [len(zeros)])], 19)
        yield ("cast_%s_zeros_to_bool" % n, m, {"x": narrow_tensor("x", dt, [len(zeros)], zeros)},
               {"y": np.array([decode(dt, c) != 0 for c in zeros])})
        for src, arr in ((TensorProto.BOOL, np.array([True, False, True])),
                         (TensorProto.INT64, np.array([-3, 0, 7, 500, -500, 100000], np.int64))):
            m = model("b", [helper.make_node("Cast", ["x"], ["q"], to=dt),
                            helper.make_node("Cast", ["q"], ["y"], to=TensorProto.FLOAT)],
                      [vi("x", src, [len(arr)])], [vi("y", TensorProto.FLOAT, [len(arr)])], 21)
            yield "cast_%s_to_%s" % ("bool" if src == TensorProto.BOOL else "int64", n), m, \
                {"x": arr}, None
    # between float8 types: E5M2's finite codes and NaN into the others
    src = [c for c in range(256) if not math.isinf(decode(F8E5M2, c))]
    for dt in (F8E4M3FN, F8E4M3FNUZ, F8E5M2FNUZ):
        init = narrow_tensor("codes", F8E5M2, [len(src)], src)
        m = model("ff", [helper.make_node("Cast", ["codes"], ["q"], to=dt),
                         helper.make_node("Cast", ["q"], ["y"], to=TensorProto.FLOAT)],
                  [], [vi("y", TensorProto.FLOAT, [len(src)])], 19, [init])
        yield "cast_f8e5m2_to_%s" % NAMES[dt], m, {}, None
    # CastLike: the target's type from a float8 initializer
    like = narrow_tensor("like", F8E4M3FNUZ, [1], [0])
    xs = f32(0.3, -1.1, 2.6, 1000.0, -0.0, 1e-7)
    m = model("cl", [helper.make_node("CastLike", ["x", "like"], ["q"]),
                     helper.make_node("Cast", ["q"], ["y"], to=TensorProto.FLOAT)],
              [vi("x", TensorProto.FLOAT, [6])], [vi("y", TensorProto.FLOAT, [6])], 19, [like])
    yield "castlike_float32_to_f8e4m3fnuz", m, {"x": xs}, None
    like = narrow_tensor("like", F8E5M2, [1], [0])
    m = model("cl", [helper.make_node("CastLike", ["x", "like"], ["y"], saturate=0)],
              [vi("x", TensorProto.FLOAT, [6])], [vi("y", F8E5M2, [6])], 21, [like])
    yield ("castlike_float32_to_f8e5m2_nosat", m, {"x": xs},
           {"y": narrow_tensor("y", F8E5M2, [6], [encode(F8E5M2, v, False) for v in xs])})


def int4_cases():
    for dt in (UINT4, INT4):
        n = NAMES[dt]
        # no ties: ONNX Runtime agrees (wrap past the range)
        xs = f32(-9, -8.4, -7.6, -2.2, -0.4, 0.3, 1.7, 6.9, 7.2, 8.1, 15.4, 16, 31.3)
        m = model("q", [helper.make_node("Cast", ["x"], ["q"], to=dt),
                        helper.make_node("Cast", ["q"], ["y"], to=TensorProto.FLOAT)],
                  [vi("x", TensorProto.FLOAT, [13])], [vi("y", TensorProto.FLOAT, [13])], 21)
        yield "cast_float32_to_%s" % n, m, {"x": xs}, None
        # ties to even, odd count, packed output
        xs = f32(-8.5, -7.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 6.5, 7.5, 14.5)
        want = [int4_from_float(dt, v) for v in xs]
        m = model("t", [helper.make_node("Cast", ["x"], ["y"], to=dt)],
                  [vi("x", TensorProto.FLOAT, [11])], [vi("y", dt, [11])], 21)
        yield ("cast_float32_to_%s_ties" % n, m, {"x": xs},
               {"y": narrow_tensor("y", dt, [11], want)})
        # every value (odd count: 15 of 16), both payload forms, into wider types
        vals = list(range(0, 15)) if dt == UINT4 else list(range(-8, 7))
        for form in ("raw", "int32"):
            init = narrow_tensor("v", dt, [3, 5], vals, form)
            for to, tn in ((TensorProto.FLOAT, "float32"), (TensorProto.INT8, "int8"),
                           (TensorProto.UINT8, "uint8"), (TensorProto.INT64, "int64")):
                m = model("w", [helper.make_node("Cast", ["v"], ["y"], to=to)], [],
                          [vi("y", to, [3, 5])], 21, [init])
                yield "cast_%s_%s_to_%s" % (n, form, tn), m, {}, None
        # integers wrap
        arr = np.array([-17, -9, -8, -1, 0, 7, 8, 15, 16, 255], np.int64)
        m = model("z", [helper.make_node("Cast", ["x"], ["q"], to=dt),
                        helper.make_node("Cast", ["q"], ["y"], to=TensorProto.INT64)],
                  [vi("x", TensorProto.INT64, [10])], [vi("y", TensorProto.INT64, [10])], 21)
        yield "cast_int64_to_%s" % n, m, {"x": arr}, None
        # a graph input and output of the type, odd count
        x = narrow_tensor("x", dt, [7], vals[:7])
        m = model("io", [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT32)],
                  [vi("x", dt, [7])], [vi("y", TensorProto.INT32, [7])], 21)
        yield "cast_%s_input_to_int32" % n, m, {"x": x}, {"y": np.array(vals[:7], np.int32)}


def float4_cases():
    dt = FLOAT4E2M1
    codes = list(range(16))
    for form in ("raw", "int32"):
        init = narrow_tensor("c", dt, [16], codes, form)
        m = model("d", [helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)], [],
                  [vi("y", TensorProto.FLOAT, [16])], 23, [init])
        yield ("cast_f4e2m1_%s_every_code_to_float32" % form, m, {},
               {"y": np.array([decode(dt, c) for c in codes], np.float32)})
    xs = f32(*probe_values(dt), math.nan, -math.nan, math.inf, -math.inf, 5.0, -5.0, 0.25,
             0.75, 2.5, 3.5)
    m = model("e", [helper.make_node("Cast", ["x"], ["y"], to=dt)],
              [vi("x", TensorProto.FLOAT, [len(xs)])], [vi("y", dt, [len(xs)])], 23)
    yield ("cast_float32_to_f4e2m1_table", m, {"x": xs},
           {"y": narrow_tensor("y", dt, [len(xs)], [encode(dt, v) for v in xs])})
    # float4 <-> float8, through their exact values
    f8 = [c for c in range(256) if math.isfinite(decode(F8E4M3FN, c))][::7]
    init = narrow_tensor("c", F8E4M3FN, [len(f8)], f8)
    m = model("ff", [helper.make_node("Cast", ["c"], ["y"], to=dt)], [],
              [vi("y", dt, [len(f8)])], 23, [init])
    yield ("cast_f8e4m3fn_to_f4e2m1", m, {},
           {"y": narrow_tensor("y", dt, [len(f8)], [encode(dt, decode(F8E4M3FN, c)) for c in f8])})


# ------------------------------------------------- ops that move elements

def move_cases():
    """Identity, Reshape, Transpose, Squeeze, Unsqueeze, Flatten, Pad,
    Shape, Size on graph inputs of each type: the expected outputs are the
    input's codes rearranged by numpy."""
    rng = np.random.default_rng(20)
    i64 = TensorProto.INT64
    for dt in FLOAT8 + (UINT4, INT4, FLOAT4E2M1):
        n = NAMES[dt]
        opset = 23 if dt == FLOAT4E2M1 else 21
        if dt in FLOAT8:
            pool = [c for c in range(256)]
        elif dt == FLOAT4E2M1:
            pool = list(range(16))
        else:
            pool = list(range(16)) if dt == UINT4 else list(range(-8, 8))
        a = np.array(rng.choice(pool, size=(1, 3, 5)), np.int64)  # odd count: 15
        x = narrow_tensor("x", dt, a.shape, a.ravel())

        def t(arr, name="y"):
            return narrow_tensor(name, dt, arr.shape, np.asarray(arr).ravel())

        def const(name, vals):
            return helper.make_tensor(name, i64, [len(vals)], vals)

        ops = [
            ("identity", [helper.make_node("Identity", ["x"], ["y"])], [], a),
            ("reshape", [helper.make_node("Reshape", ["x", "s"], ["y"])],
             [const("s", [5, -1])], a.reshape(5, 3)),
            ("transpose", [helper.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1])], [],
             a.transpose(2, 0, 1)),
            ("squeeze", [helper.make_node("Squeeze", ["x", "ax"], ["y"])], [const("ax", [0])],
             a.reshape(3, 5)),
            ("unsqueeze", [helper.make_node("Unsqueeze", ["x", "ax"], ["y"])],
             [const("ax", [1, -1])], a.reshape(1, 1, 3, 5, 1)),
            ("flatten", [helper.make_node("Flatten", ["x"], ["y"], axis=2)], [], a.reshape(3, 5)),
        ]
        # Pad: constant (value from a same-typed scalar, or 0), edge, reflect, wrap
        fill = pool[3]
        pads = [0, 1, 2, 0, 0, 1]
        width = ((0, 0), (1, 0), (2, 1))
        ops.append(("pad_constant", [helper.make_node("Pad", ["x", "p", "v"], ["y"])],
                    [const("p", pads), narrow_tensor("v", dt, [], [fill])],
                    np.pad(a, width, constant_values=fill)))
        ops.append(("pad_zero", [helper.make_node("Pad", ["x", "p"], ["y"])], [const("p", pads)],
                    np.pad(a, width, constant_values=0)))  # code 0 is zero in every type
        for mode in ("edge", "reflect", "wrap"):
            ops.append(("pad_" + mode, [helper.make_node("Pad", ["x", "p"], ["y"], mode=mode)],
                        [const("p", pads)], np.pad(a, width, mode=mode)))
        for op, nodes, inits, want in ops:
            m = model(op, nodes, [vi("x", dt, list(a.shape))], [vi("y", dt, list(want.shape))],
                      opset, inits)
            yield "%s_%s" % (op, n), m, {"x": x}, {"y": t(want)}
        for op, want in (("Shape", np.array(a.shape, np.int64)),
                         ("Size", np.array(a.size, np.int64))):
            m = model(op, [helper.make_node(op, ["x"], ["y"])], [vi("x", dt, list(a.shape))],
                      [vi("y", i64, list(want.shape))], opset)
            yield "%s_%s" % (op.lower(), n), m, {"x": x}, {"y": want}
        # inside a graph, where ONNX Runtime runs them too (float8 only)
        if dt in FLOAT8:
            xs = rng.uniform(-9, 9, size=(2, 3, 4)).astype(np.float32)
            for op, nodes, inits in (
                    ("reshape", [helper.make_node("Reshape", ["q", "s"], ["r"])],
                     [const("s", [4, 6])]),
                    ("transpose", [helper.make_node("Transpose", ["q"], ["r"], perm=[1, 2, 0])],
                     []),
                    ("shape", [helper.make_node("Shape", ["q"], ["r"])], [])):
                out_t = i64 if op == "shape" else TensorProto.FLOAT
                tail = [] if op == "shape" else [helper.make_node("Cast", ["r"], ["y"],
                                                                  to=TensorProto.FLOAT)]
                if op == "shape":
                    nodes = [helper.make_node("Shape", ["q"], ["y"])]
                m = model(op, [helper.make_node("Cast", ["x"], ["q"], to=dt)] + nodes + tail,
                          [vi("x", TensorProto.FLOAT, [2, 3, 4])], [vi("y", out_t, None)], 21,
                          inits)
                yield "%s_%s_in_graph" % (op, n), m, {"x": xs}, None
    # Constant nodes holding the new types
    for dt, opset in ((F8E4M3FN, 19), (F8E5M2FNUZ, 19), (INT4, 21), (UINT4, 21)):
        vals = [0x38, 0x41, 0xc0, 0x7f, 0x01] if dt in FLOAT8 else [1, 2, 3, 4, 5]
        c = helper.make_node("Constant", [], ["c"], value=narrow_tensor("", dt, [5], vals))
        m = model("k", [c, helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)], [],
                  [vi("y", TensorProto.FLOAT, [5])], opset)
        yield "constant_%s" % NAMES[dt], m, {}, None
    c = helper.make_node("Constant", [], ["y"],
                         value=narrow_tensor("", FLOAT4E2M1, [3], [1, 9, 7]))
    m = model("k", [c], [], [vi("y", FLOAT4E2M1, [3])], 23)
    yield "constant_f4e2m1", m, {}, {"y": narrow_tensor("y", FLOAT4E2M1, [3], [1, 9, 7])}


# ------------------------------------------------- Quantize / Dequantize

def qdq_cases():
    """Quantized round trips ONNX Runtime runs (float8 from 19, int4/uint4
    and blocks from 21), and the float4 and precision cases it does not,
    against the reference's formula: q = saturate(rint(x / s) + zp)."""
    f32t, f16t, bf16t = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16
    xs = f32(0.3, -1.1, 2.6, 1000.0, -0.75, 7.0, 1.25, -3.5)
    s = helper.make_tensor("s", f32t, [], [0.5])
    for opset in (19, 21, 23):
        for dt in FLOAT8 + ((UINT4, INT4) if opset >= 21 else ()):
            zp = narrow_tensor("zp", dt, [], [0 if dt in FLOAT8 else 3])
            for sat in ((1, 0) if dt in FLOAT8 else (1,)):
                attrs = {} if dt not in FLOAT8 else {"saturate": sat}
                m = model("q", [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], **attrs),
                                helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"])],
                          [vi("x", f32t, [8])], [vi("y", f32t, [8])], opset, [s, zp])
                yield "qdq_%s_sat%d_op%d" % (NAMES[dt], sat, opset), m, {"x": xs}, None
    # a zero point of shape [1] with a scalar scale (ONNX's own backend tests
    # write them so): one value either way
    for dt, opset in ((F8E4M3FN, 19), (INT4, 21)):
        zp = narrow_tensor("zp", dt, [1], [0 if dt in FLOAT8 else -2])
        m = model("z1", [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
                         helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"])],
                  [vi("x", f32t, [8])], [vi("y", f32t, [8])], opset, [s, zp])
        yield "qdq_%s_zero_point_shape1" % NAMES[dt], m, {"x": xs}, None
    # per axis and blocks (sizes that do not divide the axis), int4 and uint4
    rng = np.random.default_rng(21)
    x = rng.uniform(-6, 6, size=(3, 5, 2)).astype(np.float32)
    for dt in (INT4, UINT4):
        for axis, block in ((1, 0), (1, 2), (0, 2), (-1, 1), (1, 5)):
            D = x.shape[axis]
            if block:
                sshape = list(x.shape)
                sshape[axis] = -(-D // block)
            else:
                sshape = [D]
            scale = rng.uniform(0.3, 1.5, size=sshape).astype(np.float32)
            zvals = rng.integers(0, 4, size=sshape)
            st = helper.make_tensor("sc", f32t, sshape, scale.ravel())
            zt = narrow_tensor("z", dt, sshape, zvals.ravel())
            kw = {"axis": axis}
            if block:
                kw["block_size"] = block
            m = model("b", [helper.make_node("QuantizeLinear", ["x", "sc", "z"], ["q"], **kw),
                            helper.make_node("DequantizeLinear", ["q", "sc", "z"], ["y"], **kw)],
                      [vi("x", f32t, list(x.shape))], [vi("y", f32t, list(x.shape))], 21, [st, zt])
            yield "qdq_%s_axis%d_block%d" % (NAMES[dt], axis, block), m, {"x": x}, None
        # output_dtype instead of a zero point, float16 and bfloat16 scales
        sb = rng.uniform(0.3, 1.5, size=(3, 3, 2)).astype(np.float32)
        m = model("o", [helper.make_node("QuantizeLinear", ["x", "sc"], ["q"], axis=1,
                                         block_size=2, output_dtype=dt),
                        helper.make_node("DequantizeLinear", ["q", "sc"], ["y"], axis=1,
                                         block_size=2)],
                  [vi("x", f32t, list(x.shape))], [vi("y", f32t, list(x.shape))], 21,
                  [helper.make_tensor("sc", f32t, [3, 3, 2], sb.ravel())])
        yield "qdq_%s_output_dtype_block2" % NAMES[dt], m, {"x": x}, None
        # float16 x and scales (ONNX Runtime)
        sv = np.array([0.5, 0.75, 1.25, 0.375, 1.0], np.float16)
        sct = helper.make_tensor("sc", f16t, [5], sv.view(np.uint16).tolist())
        zt = narrow_tensor("z", dt, [5], [1, 0, 2, 1, 0])
        m = model("h", [helper.make_node("QuantizeLinear", ["x", "sc", "z"], ["q"], axis=1),
                        helper.make_node("DequantizeLinear", ["q", "sc", "z"], ["y"], axis=1),
                        helper.make_node("Cast", ["y"], ["yf"], to=f32t)],
                  [vi("x", f16t, list(x.shape))], [vi("yf", f32t, list(x.shape))], 21, [sct, zt])
        yield "qdq_%s_float16_scale" % NAMES[dt], m, {"x": x.astype(np.float16)}, None
        # bfloat16 x and scales (formula: the division rounded to bfloat16,
        # then rint, the zero point and the range; back in float32, rounded
        # to bfloat16)
        lo, hi = (-8, 7) if dt == INT4 else (0, 15)
        xb = bf16(x)
        sb16 = bf16(np.array([0.5, 0.75, 1.25, 0.375, 1.0], np.float32))
        zv = np.array([1, 0, 2, 1, 0])
        q = np.clip(np.rint(bf16(xb / sb16[None, :, None])) + zv[None, :, None], lo, hi)
        y = bf16((q - zv[None, :, None]) * sb16[None, :, None])
        m = model("b16", [helper.make_node("QuantizeLinear", ["x", "sc", "z"], ["q"], axis=1),
                          helper.make_node("DequantizeLinear", ["q", "sc", "z"], ["y"], axis=1)],
                  [vi("x", bf16t, list(x.shape))], [vi("y", bf16t, list(x.shape)),
                                                    vi("q", dt, list(x.shape))], 21,
                  [bf16_tensor("sc", sb16), narrow_tensor("z", dt, [5], zv)])
        yield ("qdq_%s_bfloat16_scale" % NAMES[dt], m, {"x": bf16_tensor("x", xb)},
               {"y": bf16_tensor("y", y), "q": narrow_tensor("q", dt, list(x.shape), q.ravel())})
    # int16 / uint16 (21)
    for dt, zpv in ((TensorProto.INT16, -300), (TensorProto.UINT16, 300)):
        zt = helper.make_tensor("zp", dt, [], [zpv])
        m = model("w", [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
                        helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"])],
                  [vi("x", f32t, [8])], [vi("y", f32t, [8])], 21, [s, zt])
        yield "qdq_%s_op21" % ("int16" if dt == TensorProto.INT16 else "uint16"), m, \
            {"x": xs * 40}, None
    # Formulas, for what ONNX Runtime does not run: float4 (23), the
    # precision attribute (23), float8 and int4 graph inputs and outputs.
    xq = f32(0.3, -1.1, 2.6, 1000.0, -0.75, 7.0, 1.25, -3.5, 0.125, -0.0, 5.5)
    scale = 0.5
    # float4: q = float4(x / s + zp), zp 0 (which makes -0 +0)
    want = [encode(FLOAT4E2M1, np.float32(v / np.float32(scale)) + np.float32(0)) for v in xq]
    m = model("f4", [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"])],
              [vi("x", f32t, [11])], [vi("y", FLOAT4E2M1, [11])], 23,
              [s, narrow_tensor("zp", FLOAT4E2M1, [], [0])])
    yield ("quantize_f4e2m1_op23", m, {"x": xq},
           {"y": narrow_tensor("y", FLOAT4E2M1, [11], want)})
    codes = list(range(16))
    m = model("f4d", [helper.make_node("DequantizeLinear", ["x", "s"], ["y"])],
              [vi("x", FLOAT4E2M1, [16])], [vi("y", f32t, [16])], 23, [s])
    yield ("dequantize_f4e2m1_op23", m, {"x": narrow_tensor("x", FLOAT4E2M1, [16], codes)},
           {"y": np.array([decode(FLOAT4E2M1, c) * scale for c in codes], np.float32)})
    # precision: float16 division of float32 operands (rounded to float16 first)
    xp = f32(0.1001, 1.7777, -2.3337, 100.03, 33.3333, -7.77)
    sp = np.float32(0.3)
    x16 = xp.astype(np.float16)
    q16 = (x16 / np.float16(sp)).astype(np.float16)
    want = np.clip(np.rint(q16.astype(np.float64)), -128, 127).astype(np.int8)
    m = model("p", [helper.make_node("QuantizeLinear", ["x", "sp", "zp"], ["y"],
                                     precision=TensorProto.FLOAT16)],
              [vi("x", f32t, [6])], [vi("y", TensorProto.INT8, [6])], 23,
              [helper.make_tensor("sp", f32t, [], [float(sp)]),
               helper.make_tensor("zp", TensorProto.INT8, [], [0])])
    yield "quantize_precision_float16_op23", m, {"x": xp}, {"y": want}
    # DequantizeLinear's output_dtype (23)
    m = model("od", [helper.make_node("DequantizeLinear", ["x", "s"], ["y"],
                                      output_dtype=f16t)],
              [vi("x", INT4, [5])], [vi("y", f16t, [5])], 23, [s])
    yield ("dequantize_int4_output_dtype_float16_op23", m,
           {"x": narrow_tensor("x", INT4, [5], [-8, -1, 0, 3, 7])},
           {"y": np.array([-4, -0.5, 0, 1.5, 3.5], np.float16)})
    # float8 graph input into DequantizeLinear, float8 output of QuantizeLinear
    for dt in FLOAT8:
        codes = [c for c in range(256) if not math.isnan(decode(dt, c))][::9]
        m = model("fd", [helper.make_node("DequantizeLinear", ["x", "s"], ["y"])],
                  [vi("x", dt, [len(codes)])], [vi("y", f32t, [len(codes)])], 19, [s])
        yield ("dequantize_%s_input" % NAMES[dt], m,
               {"x": narrow_tensor("x", dt, [len(codes)], codes)},
               {"y": np.array([decode(dt, c) * scale for c in codes], np.float32)})
        for sat in (1, 0):
            xv = f32(*probe_values(dt), math.inf, -math.inf, math.nan)
            want = [encode(dt, np.float32(v / np.float32(scale)), bool(sat))
                    for v in xv]
            m = model("fq", [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"],
                                              saturate=sat)],
                      [vi("x", f32t, [len(xv)])], [vi("y", dt, [len(xv)])], 21,
                      [s, narrow_tensor("zp", dt, [], [0])])
            yield ("quantize_%s_output_sat%d" % (NAMES[dt], sat), m, {"x": xv},
                   {"y": narrow_tensor("y", dt, [len(xv)], want)})


def cases():
    yield from cast_cases()
    yield from int4_cases()
    yield from float4_cases()
    yield from move_cases()
    yield from qdq_cases()
